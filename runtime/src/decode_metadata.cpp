// K1 normal_decode_set_metadata: validate every argument, pick the AOT variant
// (target x bounded/full-width x SWA x dtypes, from cmake/families/decode_metadata.cmake), and call it
// on the caller's memory with the caller's device and stream.
#include <algorithm>
#include <string>
#include <vector>

#include "errors.h"
#include "pipeline_call.h"
#include "livebound/livebound.h"
#include "validate.h"

#include "livebound/k1_headers.inc"  // generated: every K1 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };

// One row per AOT library of K1; generated from the manifest.
struct GatherVariant {
    Target target;
    lb_variant form;
    bool swa;
    lb_dtype seq_lens_dtype, index_dtype;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};
struct ScanVariant {
    Target target;
    lb_dtype seq_lens_dtype;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;
constexpr bool k_swa = true, k_noswa = false;
constexpr lb_dtype k_int32 = LB_INT32, k_int64 = LB_INT64;

const GatherVariant kGatherVariants[] = {
#define LB_K1_SCAN(target, seq, name)
#define LB_K1_GATHER(target, form, swa, seq, idx, name) \
    {Target::target, k_##form, k_##swa, k_##seq, k_##idx, LB_PIPELINE(name)},
#include "livebound/k1_variants.inc"
#undef LB_K1_GATHER
#undef LB_K1_SCAN
};
const ScanVariant kScanVariants[] = {
#define LB_K1_GATHER(target, form, swa, seq, idx, name)
#define LB_K1_SCAN(target, seq, name) {Target::target, k_##seq, LB_PIPELINE(name)},
#include "livebound/k1_variants.inc"
#undef LB_K1_GATHER
#undef LB_K1_SCAN
};

// Host-visible values (CPU calls only): the indices a kernel would follow must stay
// inside their tables. On CUDA the same indices are clamped inside the kernel
// (memory safety) but not checked: reading them here would need a device sync.
void check_index_values(const lb_decode_metadata_args &a, int64_t bs, int page_shift) {
    const int64_t pool_rows = a.req_to_token.shape[0], ctx = a.req_to_token.shape[1];
    const bool swa = !validate::is_absent(a.full_to_swa);
    for (int64_t b = 0; b < bs; b++) {
        // L_b = int32(seq_lens[b]) + seq_len_delta in int32 with wrap-around, as the kernels
        // compute it (a signed overflow here was undefined behaviour: found by tests/fuzz/).
        const int32_t kv_len = static_cast<int32_t>(static_cast<uint32_t>(validate::host_element(a.seq_lens, b)) +
                                                    static_cast<uint32_t>(a.seq_len_delta));
        int64_t live = std::min<int64_t>((int64_t{kv_len} + (int64_t{1} << page_shift) - 1) >> page_shift, a.max_seq_pages);
        // A request with no live page has its row never read by the bounded kernels (spec
        // §3.1: its req_pool_indices entry may be garbage; the full-width twin reads a clamped
        // row, as on CUDA): not checked, so that CPU and CUDA accept the same calls.
        if (live <= 0) continue;
        int64_t row = validate::host_element(a.req_pool_indices, b);
        if (row < 0 || row >= pool_rows) {
            bad_argument("req_pool_indices", "req_pool_indices[" + std::to_string(b) + "] = " + std::to_string(row) +
                                                 " is outside [0, " + std::to_string(pool_rows) + ") (req_to_token rows)");
        }
        int64_t last_token = (live - 1) << page_shift;
        if (last_token >= ctx) {
            bad_argument("seq_lens", "seq_lens[" + std::to_string(b) + "] + seq_len_delta = " + std::to_string(kv_len) +
                                         " needs req_to_token column " + std::to_string(last_token) + ", but req_to_token has " +
                                         std::to_string(ctx) + " columns");
        }
        if (!swa) continue;
        const auto *r2t = static_cast<const int32_t *>(a.req_to_token.data);
        for (int64_t k = 0; k < live; k++) {
            int64_t slot = r2t[row * a.req_to_token.strides[0] + (k << page_shift) * a.req_to_token.strides[1]];
            if (slot < 0 || slot >= a.full_to_swa.shape[0]) {
                bad_argument("req_to_token", "slot " + std::to_string(slot) + " at [" + std::to_string(row) + ", " +
                                                 std::to_string(k << page_shift) + "] is outside full_to_swa's [0, " +
                                                 std::to_string(a.full_to_swa.shape[0]) + ")");
            }
        }
    }
}

void run_decode_metadata(const lb_decode_metadata_args &a, const lb_device &device) {
    // ---- arguments ----
    validate::device(device);
    const bool on_cuda = device.type == LB_DEVICE_CUDA;
    validate::variant(a.variant);
    validate::tensor(a.seq_lens, "seq_lens", {LB_INT32, LB_INT64}, 1);
    const int64_t bs = a.seq_lens.shape[0];
    validate::tensor(a.cache_seqlens, "cache_seqlens", {LB_INT32}, 1);
    validate::extent_at_least(a.cache_seqlens, "cache_seqlens", 0, bs, "bs");
    validate::tensor(a.cu_seqlens_k, "cu_seqlens_k", {LB_INT32}, 1);
    validate::extent_at_least(a.cu_seqlens_k, "cu_seqlens_k", 0, bs + 1, "bs + 1");
    std::vector<std::pair<const lb_tensor *, const char *>> used = {
        {&a.seq_lens, "seq_lens"}, {&a.cache_seqlens, "cache_seqlens"}, {&a.cu_seqlens_k, "cu_seqlens_k"}};

    const bool gather = !a.skip_page_table;
    const bool swa = gather && !validate::is_absent(a.full_to_swa);
    int page_shift = 0;
    if (gather) {
        page_shift = validate::page_shift(a.page_size, "page_size");
        validate::int32_range(a.max_seq_pages, "max_seq_pages");
        validate::tensor(a.req_pool_indices, "req_pool_indices", {LB_INT32, LB_INT64}, 1);
        validate::extent_equals(a.req_pool_indices, "req_pool_indices", 0, bs, "bs (seq_lens length)");
        validate::req_to_token(a.req_to_token, bs);
        validate::page_table(a.page_table, "page_table", bs, a.max_seq_pages);
        used.insert(used.end(), {{&a.req_pool_indices, "req_pool_indices"},
                                 {&a.req_to_token, "req_to_token"},
                                 {&a.page_table, "page_table"}});
        if (swa) {
            validate::tensor(a.full_to_swa, "full_to_swa", {LB_INT64}, 1);
            if (bs > 0 && a.full_to_swa.shape[0] < 1) bad_argument("full_to_swa", "must not be empty");
            if (validate::is_absent(a.swa_page_table)) {
                bad_argument("swa_page_table", "is required when full_to_swa is given");
            }
            validate::page_table(a.swa_page_table, "swa_page_table", bs, a.max_seq_pages);
            used.insert(used.end(), {{&a.full_to_swa, "full_to_swa"}, {&a.swa_page_table, "swa_page_table"}});
        } else if (!validate::is_absent(a.swa_page_table)) {
            bad_argument("swa_page_table", "is given but full_to_swa is not (both or neither)");
        }
    }
    if (on_cuda) {
        for (auto &[t, name] : used) validate::on_cuda_device(*t, name, device.index);
    } else if (gather) {
        check_index_values(a, bs, page_shift);
    }

    // ---- call ----
    PipelineCall call(device);
    const Target target = on_cuda ? Target::cuda : Target::cpu;
    if (bs == 0) {
        // Only cu_seqlens_k[0] = 0 to write; Halide pipelines need at least one request.
        call.write_int32(a.cu_seqlens_k, 0);
        return;
    }
    halide_buffer_t *seq_lens = call.wrap_1d(a.seq_lens, "seq_lens", bs);
    halide_buffer_t *cache_seqlens = call.wrap_1d(a.cache_seqlens, "cache_seqlens", bs);
    halide_buffer_t *cu_seqlens_k = call.wrap_1d(a.cu_seqlens_k, "cu_seqlens_k", bs + 1);
    int32_t delta = a.seq_len_delta;

    if (!gather || a.max_seq_pages == 0) {
        // No column to write: the scan-only variant is the whole job.
        const ScanVariant *v = nullptr;
        for (const auto &s : kScanVariants) {
            if (s.target == target && s.seq_lens_dtype == a.seq_lens.dtype) v = &s;
        }
        if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K1 scan variant for this target and seq_lens dtype");
        call.run(v->pipeline, {in("seq_lens", seq_lens), scalar("seq_len_delta", &delta),
                               out("cache_seqlens", cache_seqlens), out("cu_seqlens_k", cu_seqlens_k)});
        return;
    }
    const GatherVariant *v = nullptr;
    for (const auto &g : kGatherVariants) {
        if (g.target == target && g.form == a.variant && g.swa == swa && g.seq_lens_dtype == a.seq_lens.dtype &&
            g.index_dtype == a.req_pool_indices.dtype) {
            v = &g;
        }
    }
    if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K1 variant for this target, variant, SWA and dtypes");
    halide_buffer_t *req_pool_indices = call.wrap_1d(a.req_pool_indices, "req_pool_indices", bs);
    halide_buffer_t *req_to_token =
        call.wrap_2d(a.req_to_token, "req_to_token", a.req_to_token.shape[0], a.req_to_token.shape[1]);
    halide_buffer_t *page_table = call.wrap_2d(a.page_table, "page_table", bs, a.max_seq_pages);
    int32_t max_seq_pages = static_cast<int32_t>(a.max_seq_pages);
    std::vector<PipelineArg> args = {in("seq_lens", seq_lens),
                                     scalar("seq_len_delta", &delta),
                                     in("req_pool_indices", req_pool_indices),
                                     in("req_to_token", req_to_token),
                                     scalar("max_seq_pages", &max_seq_pages),
                                     scalar("page_shift", &page_shift)};
    if (swa) args.push_back(in("full_to_swa", call.wrap_1d(a.full_to_swa, "full_to_swa", a.full_to_swa.shape[0])));
    args.insert(args.end(), {out("cache_seqlens", cache_seqlens), out("cu_seqlens_k", cu_seqlens_k),
                             out("page_table", page_table)});
    if (swa) {
        args.push_back(out("swa_page_table", call.wrap_2d(a.swa_page_table, "swa_page_table", bs, a.max_seq_pages)));
    }
    call.run(for_batch(v->pipeline, bs), args);
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_normal_decode_set_metadata(const lb_decode_metadata_args *args, lb_device device) {
    struct Call {
        const lb_decode_metadata_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_normal_decode_set_metadata",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_decode_metadata(*c->args, c->device);
        },
        &call);
}
