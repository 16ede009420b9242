// K4 update_trtllm_mha_graph_metadata: validate every argument, pick the AOT variants
// (cmake/families/trtllm_metadata.cmake: the parts seqlens / pages / swa_out, and on CUDA
// the fused seqlens + pages part) and call the ones this call needs on the caller's memory
// with the caller's device and stream. Every variant is looked up before the first runs:
// a refusal writes nothing.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "pipeline_call.h"
#include "livebound/livebound.h"
#include "validate.h"

#include "livebound/k4_headers.inc"  // generated: every K4 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };
enum class QMode { none, cumsum, strided };

// One row per AOT library of K4; generated from the manifest.
struct SeqlensVariant {
    Target target;
    lb_dtype seq_lens_dtype;
    QMode q_mode;
    lb_dtype qlens_dtype;  // LB_DTYPE_NONE unless q_mode == cumsum
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};
struct PagesVariant {
    Target target;
    lb_variant form;
    bool swa;
    lb_dtype seq_lens_dtype, index_dtype;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};
struct FusedVariant {
    Target target;
    lb_variant form;
    bool swa;
    lb_dtype seq_lens_dtype, index_dtype;
    QMode q_mode;
    lb_dtype qlens_dtype;  // LB_DTYPE_NONE unless q_mode == cumsum
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};
struct SwaOutVariant {
    Target target;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;
constexpr bool k_swa = true, k_noswa = false;
constexpr lb_dtype k_int32 = LB_INT32, k_int64 = LB_INT64, k_none = LB_DTYPE_NONE;
constexpr QMode kq_none = QMode::none, kq_cumsum = QMode::cumsum, kq_strided = QMode::strided;

const SeqlensVariant kSeqlensVariants[] = {
#define LB_K4_SEQLENS(target, seq, q, qlens, name) {Target::target, k_##seq, kq_##q, k_##qlens, LB_PIPELINE(name)},
#define LB_K4_PAGES(target, form, swa, seq, idx, name)
#define LB_K4_SWA_OUT(target, name)
#define LB_K4_FUSED(target, form, swa, seq, idx, q, qlens, name)
#include "livebound/k4_variants.inc"
#undef LB_K4_SEQLENS
#undef LB_K4_PAGES
#undef LB_K4_SWA_OUT
#undef LB_K4_FUSED
};
const PagesVariant kPagesVariants[] = {
#define LB_K4_SEQLENS(target, seq, q, qlens, name)
#define LB_K4_PAGES(target, form, swa, seq, idx, name) \
    {Target::target, k_##form, k_##swa, k_##seq, k_##idx, LB_PIPELINE(name)},
#define LB_K4_SWA_OUT(target, name)
#define LB_K4_FUSED(target, form, swa, seq, idx, q, qlens, name)
#include "livebound/k4_variants.inc"
#undef LB_K4_SEQLENS
#undef LB_K4_PAGES
#undef LB_K4_SWA_OUT
#undef LB_K4_FUSED
};
const SwaOutVariant kSwaOutVariants[] = {
#define LB_K4_SEQLENS(target, seq, q, qlens, name)
#define LB_K4_PAGES(target, form, swa, seq, idx, name)
#define LB_K4_SWA_OUT(target, name) {Target::target, LB_PIPELINE(name)},
#define LB_K4_FUSED(target, form, swa, seq, idx, q, qlens, name)
#include "livebound/k4_variants.inc"
#undef LB_K4_SEQLENS
#undef LB_K4_PAGES
#undef LB_K4_SWA_OUT
#undef LB_K4_FUSED
};

const FusedVariant kFusedVariants[] = {
#define LB_K4_SEQLENS(target, seq, q, qlens, name)
#define LB_K4_PAGES(target, form, swa, seq, idx, name)
#define LB_K4_SWA_OUT(target, name)
#define LB_K4_FUSED(target, form, swa, seq, idx, q, qlens, name) \
    {Target::target, k_##form, k_##swa, k_##seq, k_##idx, kq_##q, k_##qlens, LB_PIPELINE(name)},
#include "livebound/k4_variants.inc"
#undef LB_K4_SEQLENS
#undef LB_K4_PAGES
#undef LB_K4_SWA_OUT
#undef LB_K4_FUSED
    {Target::cpu, k_bounded, false, k_none, k_none, kq_none, k_none, {nullptr, nullptr}},  // (the CPU build has none)
};

// The view of a 1-D int32 output that starts at its element 1 (n elements): the kernels
// write cu_seqlens[1 .. bs] and cannot touch cu_seqlens[0].
lb_tensor from_element_1(const lb_tensor &t, int64_t n) {
    lb_tensor v = t;
    v.data = static_cast<char *>(t.data) + t.strides[0] * static_cast<int64_t>(sizeof(int32_t));
    v.shape[0] = n;
    return v;
}

std::string at(int64_t i) { return "[" + std::to_string(i) + "]"; }

// Host-visible values (CPU calls only): every index a kernel follows must stay inside its
// table. On CUDA the same indices are clamped inside the kernels (memory safety) but not
// checked: reading them here would need a device sync.
void check_index_values(const lb_trtllm_mha_graph_metadata_args &a, bool gather, bool swa_pages, int page_shift,
                        int64_t num_real) {
    const int64_t bs = a.bs;
    const int64_t swa_n = validate::is_absent(a.swa_mapping) ? 0 : a.swa_mapping.shape[0];
    if (gather) {
        const int64_t pool_rows = a.req_to_token.shape[0], ctx = a.req_to_token.shape[1];
        const auto *r2t = static_cast<const int32_t *>(a.req_to_token.data);
        for (int64_t i = 0; i < bs; i++) {
            const int32_t kv_len = static_cast<int32_t>(validate::host_element(a.seq_lens, i) + a.seqlen_offset);
            const int64_t live = std::min<int64_t>(
                (int64_t{kv_len} + (int64_t{1} << page_shift) - 1) >> page_shift, a.max_seq_pages);
            // A request with no live page: its row is never read by the bounded kernels (its
            // req_pool_indices entry may be garbage; the full-width twin reads a clamped row,
            // as on CUDA): not checked, so that CPU and CUDA accept the same calls.
            if (live <= 0) continue;
            const int64_t row = validate::host_element(a.req_pool_indices, i);
            if (row < 0 || row >= pool_rows) {
                bad_argument("req_pool_indices", "req_pool_indices" + at(i) + " = " + std::to_string(row) +
                                                     " is outside [0, " + std::to_string(pool_rows) +
                                                     ") (req_to_token rows)");
            }
            const int64_t last_token = (live - 1) << page_shift;
            if (last_token >= ctx) {
                bad_argument("seq_lens", "seq_lens" + at(i) + " + seqlen_offset = " + std::to_string(kv_len) +
                                             " needs req_to_token column " + std::to_string(last_token) +
                                             ", but req_to_token has " + std::to_string(ctx) + " columns");
            }
            if (!swa_pages) continue;
            for (int64_t p = 0; p < live; p++) {
                const int64_t slot =
                    r2t[row * a.req_to_token.strides[0] + (p << page_shift) * a.req_to_token.strides[1]];
                if (slot >= swa_n) {  // negative slots are allowed: they map to -1
                    bad_argument("req_to_token", "slot " + std::to_string(slot) + " at [" + std::to_string(row) + ", " +
                                                     std::to_string(p << page_shift) +
                                                     "] is past swa_mapping's " + std::to_string(swa_n) + " entries");
                }
            }
        }
    }
    for (int64_t k = 0; k < num_real; k++) {
        const int64_t loc = validate::host_element(a.out_cache_loc, k);
        if (loc >= swa_n) {  // -1 (none) and other negatives stay -1
            bad_argument("out_cache_loc", "out_cache_loc" + at(k) + " = " + std::to_string(loc) +
                                              " is past swa_mapping's " + std::to_string(swa_n) + " entries");
        }
    }
}

void run_trtllm_metadata(const lb_trtllm_mha_graph_metadata_args &a, const lb_device &device) {
    // ---- arguments ----
    validate::device(device);
    const bool on_cuda = device.type == LB_DEVICE_CUDA;
    validate::variant(a.variant);
    validate::int32_range(a.bs, "bs");
    const int64_t bs = a.bs;
    if (a.q_mode < LB_Q_MODE_NONE || a.q_mode > LB_Q_MODE_STRIDED) {
        bad_argument("q_mode", "must be 0 (none), 1 (cumsum) or 2 (strided), got " + std::to_string(a.q_mode));
    }
    const QMode q_mode = a.q_mode == LB_Q_MODE_CUMSUM    ? QMode::cumsum
                         : a.q_mode == LB_Q_MODE_STRIDED ? QMode::strided
                                                         : QMode::none;

    validate::tensor(a.seq_lens, "seq_lens", {LB_INT32, LB_INT64}, 1);
    validate::extent_at_least(a.seq_lens, "seq_lens", 0, bs, "bs");
    validate::tensor(a.cache_seqlens, "cache_seqlens", {LB_INT32}, 1);
    validate::extent_at_least(a.cache_seqlens, "cache_seqlens", 0, bs, "bs");
    validate::tensor(a.cu_seqlens_k, "cu_seqlens_k", {LB_INT32}, 1);
    validate::extent_at_least(a.cu_seqlens_k, "cu_seqlens_k", 0, bs + 1, "bs + 1");
    std::vector<std::pair<const lb_tensor *, const char *>> used = {
        {&a.seq_lens, "seq_lens"}, {&a.cache_seqlens, "cache_seqlens"}, {&a.cu_seqlens_k, "cu_seqlens_k"}};
    if (q_mode != QMode::none) {
        if (validate::is_absent(a.cu_seqlens_q)) bad_argument("cu_seqlens_q", "is required when q_mode is 1 or 2");
        validate::tensor(a.cu_seqlens_q, "cu_seqlens_q", {LB_INT32}, 1);
        validate::extent_at_least(a.cu_seqlens_q, "cu_seqlens_q", 0, bs + 1, "bs + 1");
        used.push_back({&a.cu_seqlens_q, "cu_seqlens_q"});
    }
    if (q_mode == QMode::cumsum) {
        if (validate::is_absent(a.qlens)) bad_argument("qlens", "is required when q_mode is 1 (cumsum)");
        validate::tensor(a.qlens, "qlens", {LB_INT32, LB_INT64}, 1);
        validate::extent_at_least(a.qlens, "qlens", 0, bs, "bs");
        used.push_back({&a.qlens, "qlens"});
    }

    const bool has_mapping = !validate::is_absent(a.swa_mapping);
    if (has_mapping) {
        validate::tensor(a.swa_mapping, "swa_mapping", {LB_INT64}, 1);
        if (a.swa_mapping.shape[0] < 1) bad_argument("swa_mapping", "must not be empty");
    }

    const bool gather = !a.skip_page_table;
    const bool swa_pages = gather && !validate::is_absent(a.swa_page_table);
    int page_shift = 0;
    if (gather) {
        page_shift = validate::page_shift(a.page_size, "page_size");
        validate::int32_range(a.max_seq_pages, "max_seq_pages");
        validate::tensor(a.req_pool_indices, "req_pool_indices", {LB_INT32, LB_INT64}, 1);
        validate::extent_at_least(a.req_pool_indices, "req_pool_indices", 0, bs, "bs");
        validate::req_to_token(a.req_to_token, bs);
        validate::page_table(a.page_table, "page_table", bs, a.max_seq_pages);
        used.insert(used.end(), {{&a.req_pool_indices, "req_pool_indices"},
                                 {&a.req_to_token, "req_to_token"},
                                 {&a.page_table, "page_table"}});
        if (swa_pages) {
            if (!has_mapping) bad_argument("swa_page_table", "is given but swa_mapping is not");
            validate::page_table(a.swa_page_table, "swa_page_table", bs, a.max_seq_pages);
            used.push_back({&a.swa_page_table, "swa_page_table"});
        }
    }

    const bool swa_out = !validate::is_absent(a.swa_out_cache_loc);
    const bool has_out_loc = swa_out && !validate::is_absent(a.out_cache_loc);
    int64_t num_real = 0;
    if (swa_out) {
        if (!has_mapping) bad_argument("swa_out_cache_loc", "is given but swa_mapping is not");
        validate::tensor(a.swa_out_cache_loc, "swa_out_cache_loc", {LB_INT64}, 1);
        used.push_back({&a.swa_out_cache_loc, "swa_out_cache_loc"});
        if (has_out_loc) {
            validate::tensor(a.out_cache_loc, "out_cache_loc", {LB_INT64}, 1);
            num_real = std::min(a.swa_out_cache_loc.shape[0], a.out_cache_loc.shape[0]);
            if (a.out_cache_loc.shape[0] > 0) used.push_back({&a.out_cache_loc, "out_cache_loc"});
        }
    }
    if (has_mapping && (swa_pages || swa_out)) used.push_back({&a.swa_mapping, "swa_mapping"});

    if (on_cuda) {
        for (auto &[t, name] : used) validate::on_cuda_device(*t, name, device.index);
    } else {
        check_index_values(a, gather, swa_pages, page_shift, num_real);
    }

    // ---- variants: all looked up before the first call, so that a refusal writes nothing ----
    // bs == 0: nothing to write (SGLang launches nothing either; cu_seqlens_k[0] is never ours).
    if (bs == 0) return;
    const Target target = on_cuda ? Target::cuda : Target::cpu;
    const lb_dtype qlens_dtype = q_mode == QMode::cumsum ? a.qlens.dtype : LB_DTYPE_NONE;
    const bool pages = gather && a.max_seq_pages > 0;
    // One launch (CUDA): the fused seqlens + pages part. Otherwise seqlens, then pages.
    const FusedVariant *fused = nullptr;
    if (pages) {
        for (const auto &f : kFusedVariants) {
            if (f.pipeline.argv != nullptr && f.target == target && f.form == a.variant && f.swa == swa_pages &&
                f.seq_lens_dtype == a.seq_lens.dtype && f.index_dtype == a.req_pool_indices.dtype &&
                f.q_mode == q_mode && f.qlens_dtype == qlens_dtype) {
                fused = &f;
            }
        }
    }
    const SeqlensVariant *seqlens_variant = nullptr;
    const PagesVariant *pages_variant = nullptr;
    if (fused == nullptr) {
        for (const auto &v : kSeqlensVariants) {
            if (v.target == target && v.seq_lens_dtype == a.seq_lens.dtype && v.q_mode == q_mode &&
                v.qlens_dtype == qlens_dtype) {
                seqlens_variant = &v;
            }
        }
        if (!seqlens_variant) {
            throw Failure(LB_ERROR_UNSUPPORTED, "no K4 seqlens variant for this target, q_mode and dtypes");
        }
        if (pages) {
            for (const auto &g : kPagesVariants) {
                if (g.target == target && g.form == a.variant && g.swa == swa_pages &&
                    g.seq_lens_dtype == a.seq_lens.dtype && g.index_dtype == a.req_pool_indices.dtype) {
                    pages_variant = &g;
                }
            }
            if (!pages_variant) {
                throw Failure(LB_ERROR_UNSUPPORTED, "no K4 page-table variant for this target, variant, SWA and dtypes");
            }
        }
    }
    const int64_t swa_out_len = swa_out ? a.swa_out_cache_loc.shape[0] : 0;
    // A fused SWA variant writes swa_out_cache_loc in the same launch (an empty one when the
    // call has none); without the SWA table (or without a fused variant) swa_out is a
    // launch of its own.
    const bool swa_out_fused = fused != nullptr && fused->swa;
    const SwaOutVariant *swa_out_variant = nullptr;
    if (swa_out_len > 0 && !swa_out_fused) {
        for (const auto &v : kSwaOutVariants) {
            if (v.target == target) swa_out_variant = &v;
        }
        if (!swa_out_variant) throw Failure(LB_ERROR_UNSUPPORTED, "no K4 swa_out variant for this target");
    }

    // ---- calls ----
    PipelineCall call(device);
    int32_t offset = a.seqlen_offset;
    int32_t q_stride = a.q_stride;
    int32_t max_seq_pages = static_cast<int32_t>(a.max_seq_pages);
    const lb_tensor cu_k = from_element_1(a.cu_seqlens_k, bs);
    const lb_tensor cu_q = q_mode != QMode::none ? from_element_1(a.cu_seqlens_q, bs) : lb_tensor{};
    // The arguments, in the generator's order (configure(): inputs, then outputs).
    using Args = std::vector<PipelineArg>;
    auto seqlens_inputs = [&](Args &args) {
        args.push_back(in("seq_lens", call.wrap_1d(a.seq_lens, "seq_lens", bs)));
        args.push_back(scalar("seqlen_offset", &offset));
        if (q_mode == QMode::cumsum) args.push_back(in("qlens", call.wrap_1d(a.qlens, "qlens", bs)));
        if (q_mode == QMode::strided) args.push_back(scalar("q_stride", &q_stride));
    };
    auto page_inputs = [&](Args &args) {
        args.push_back(in("req_pool_indices", call.wrap_1d(a.req_pool_indices, "req_pool_indices", bs)));
        args.push_back(in("req_to_token", call.wrap_2d(a.req_to_token, "req_to_token", a.req_to_token.shape[0],
                                                         a.req_to_token.shape[1])));
        args.push_back(scalar("max_seq_pages", &max_seq_pages));
        args.push_back(scalar("page_shift", &page_shift));
        if (swa_pages) args.push_back(in("swa_mapping", call.wrap_1d(a.swa_mapping, "swa_mapping", a.swa_mapping.shape[0])));
    };
    auto seqlens_outputs = [&](Args &args) {
        args.push_back(out("cache_seqlens", call.wrap_1d(a.cache_seqlens, "cache_seqlens", bs)));
        args.push_back(out("cu_seqlens_k", call.wrap_1d(cu_k, "cu_seqlens_k", bs)));
        if (q_mode != QMode::none) args.push_back(out("cu_seqlens_q", call.wrap_1d(cu_q, "cu_seqlens_q", bs)));
    };
    auto page_outputs = [&](Args &args) {
        args.push_back(out("page_table", call.wrap_2d(a.page_table, "page_table", bs, a.max_seq_pages)));
        if (swa_pages) {
            args.push_back(out("swa_page_table", call.wrap_2d(a.swa_page_table, "swa_page_table", bs, a.max_seq_pages)));
        }
    };

    // swa_out's arguments. Without out_cache_loc (or with an empty one) num_real is 0 and the
    // kernel reads no location; it still needs a readable buffer: one element of swa_mapping.
    // A call without swa_out_cache_loc gives the fused kernel an empty one (no entry written).
    int32_t real = static_cast<int32_t>(num_real);
    auto swa_out_args = [&](Args &inputs, Args &outputs) {
        halide_buffer_t *locations = num_real > 0 ? call.wrap_1d(a.out_cache_loc, "out_cache_loc", a.out_cache_loc.shape[0])
                                                  : call.wrap_1d(a.swa_mapping, "swa_mapping", 1);
        inputs.push_back(in("out_cache_loc", locations));
        inputs.push_back(scalar("num_real", &real));
        outputs.push_back(out("swa_out_cache_loc", swa_out_len > 0 ? call.wrap_1d(a.swa_out_cache_loc, "swa_out_cache_loc",
                                                                                  swa_out_len)
                                                                   : call.wrap_1d(a.swa_mapping, "swa_mapping", 0)));
    };

    if (fused != nullptr) {
        // seqlens + pages: cache_seqlens, cu_seqlens_k[1..bs], cu_seqlens_q[1..bs], page_table
        // and swa_page_table (live prefix only, LB_BOUNDED), and with SWA swa_out_cache_loc,
        // in one launch.
        Args args, outputs;
        seqlens_inputs(args);
        page_inputs(args);
        if (swa_out_fused) swa_out_args(args, outputs);
        seqlens_outputs(args);
        page_outputs(args);
        args.insert(args.end(), outputs.begin(), outputs.end());
        call.run(for_batch(fused->pipeline, bs), args);
    } else {
        // 1. seqlens: cache_seqlens, cu_seqlens_k[1..bs], cu_seqlens_q[1..bs].
        Args args;
        seqlens_inputs(args);
        seqlens_outputs(args);
        call.run(seqlens_variant->pipeline, args);
        // 2. pages: page_table and swa_page_table, live prefix only (LB_BOUNDED).
        if (pages_variant != nullptr) {
            Args pages_args = {in("seq_lens", call.wrap_1d(a.seq_lens, "seq_lens", bs)), scalar("seqlen_offset", &offset)};
            page_inputs(pages_args);
            page_outputs(pages_args);
            call.run(pages_variant->pipeline, pages_args);
        }
    }

    // 3. swa_out (unless fused above): swa_out_cache_loc, every entry.
    if (swa_out_variant != nullptr) {
        Args args, outputs;
        swa_out_args(args, outputs);
        args.push_back(in("swa_mapping", call.wrap_1d(a.swa_mapping, "swa_mapping", a.swa_mapping.shape[0])));
        args.insert(args.end(), outputs.begin(), outputs.end());
        call.run(swa_out_variant->pipeline, args);
    }
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_update_trtllm_mha_graph_metadata(const lb_trtllm_mha_graph_metadata_args *args,
                                                         lb_device device) {
    struct Call {
        const lb_trtllm_mha_graph_metadata_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_update_trtllm_mha_graph_metadata",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_trtllm_metadata(*c->args, c->device);
        },
        &call);
}
