// K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata: validate every
// argument, pick the AOT variant (target x bounded/full-width x tables x [K3: ctx lens] x
// dtype, from cmake/families/dsa_metadata.cmake), and call it on the caller's memory with
// the caller's device and stream.
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "livebound/livebound.h"
#include "pipeline_call.h"
#include "validate.h"

#include "livebound/dsa_metadata_headers.inc"  // generated: every K2 / K3 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };
// Which tables a variant writes: page_table_1 only (real_page_size == 1), both, or the
// real table only (page_table_1 absent).
enum class Tables { pt1, both, real };

struct K2Variant {
    Target target;
    lb_variant form;
    Tables tables;
    lb_dtype dtype;  // seq_lens and req_pool_indices
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};
struct K3Variant {
    Target target;
    lb_variant form;
    Tables tables;
    bool ctx_lens;
    lb_dtype dtype;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;
constexpr lb_dtype k_int32 = LB_INT32, k_int64 = LB_INT64;
constexpr Tables k_pt1 = Tables::pt1, k_both = Tables::both, k_real = Tables::real;
constexpr bool k_ctx = true, k_noctx = false;

const K2Variant kK2Variants[] = {
#define LB_K3(target, form, tables, ctx, dtype, name)
#define LB_K2(target, form, tables, dtype, name) {Target::target, k_##form, k_##tables, k_##dtype, LB_PIPELINE(name)},
#include "livebound/dsa_metadata_variants.inc"
#undef LB_K2
#undef LB_K3
};
const K3Variant kK3Variants[] = {
#define LB_K2(target, form, tables, dtype, name)
#define LB_K3(target, form, tables, ctx, dtype, name) \
    {Target::target, k_##form, k_##tables, k_##ctx, k_##dtype, LB_PIPELINE(name)},
#include "livebound/dsa_metadata_variants.inc"
#undef LB_K2
#undef LB_K3
};

bool same_tensor(const lb_tensor &a, const lb_tensor &b) {
    if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
    for (int d = 0; d < a.ndim && d < LB_MAX_DIMS; d++) {
        if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
    }
    return true;
}

// What K2 and K3 validate alike. Fills `used` with the tensors the call touches.
struct Common {
    bool on_cuda = false;
    int64_t bs = 0;
    int real_page_shift = 0;
    Tables tables = Tables::both;
    int32_t index_kpool = 1;
    // The variants' dtype: seq_lens' and req_pool_indices' when they agree; int32 when they
    // differ (the int64 one passed as its low-word view: int32(seq_lens[b]) is the spec's
    // s_b, and valid pool rows are below 2^31), so every mix SGLang passes is accepted.
    lb_dtype dtype = LB_INT32;
    std::vector<std::pair<const lb_tensor *, const char *>> used;
    // `t` as the chosen variant reads it.
    lb_tensor view(const lb_tensor &t) const { return t.dtype == dtype ? t : validate::index_view(t); }
};

// The inputs, variant, real_page_size / table presence rules, index_kpool, top-k and the width.
// `width_name` names the width argument (max_len / max_seqlen_k); `rows` is the table row
// count (bs for K2, E for K3), known once bs is.
Common validate_common(const lb_device &device, lb_variant variant, const lb_tensor &seq_lens,
                       const lb_tensor &req_pool_indices, const lb_tensor &req_to_token, const lb_tensor &page_table_1,
                       const lb_tensor &real_page_table, int64_t width, const char *width_name, int32_t topk,
                       int32_t real_page_size, int32_t index_kpool) {
    Common c;
    validate::device(device);
    c.on_cuda = device.type == LB_DEVICE_CUDA;
    validate::variant(variant);
    validate::tensor(seq_lens, "seq_lens", {LB_INT32, LB_INT64}, 1);
    c.bs = seq_lens.shape[0];
    validate::tensor(req_pool_indices, "req_pool_indices", {LB_INT32, LB_INT64}, 1);
    validate::extent_equals(req_pool_indices, "req_pool_indices", 0, c.bs, "bs (seq_lens length)");
    c.dtype = req_pool_indices.dtype == seq_lens.dtype ? seq_lens.dtype : LB_INT32;
    if (width < 1 || width > (int64_t{1} << 30)) {
        bad_argument(width_name, "must be in [1, 2^30], got " + std::to_string(width));
    }
    validate::tensor(req_to_token, "req_to_token", {LB_INT32}, 2);
    validate::extent_at_least(req_to_token, "req_to_token", 1, width, width_name);
    if (c.bs > 0 && req_to_token.shape[0] < 1) bad_argument("req_to_token", "must have at least one row");
    if (topk < 0) bad_argument("dsa_index_topk", "must be >= 0, got " + std::to_string(topk));
    if (index_kpool < 0) bad_argument("index_kpool", "must be >= 0 (0 or 1: no kpool rounding), got " + std::to_string(index_kpool));
    c.index_kpool = index_kpool < 1 ? 1 : index_kpool;
    c.real_page_shift = validate::page_shift(real_page_size, "real_page_size");
    const bool pt1 = !validate::is_absent(page_table_1);
    const bool real = !validate::is_absent(real_page_table);
    if (real_page_size == 1) {
        // The real table IS page_table_1: written once, as page_table_1.
        if (!pt1) bad_argument("page_table_1", "is required when real_page_size == 1 (the real table is page_table_1)");
        if (real && !same_tensor(real_page_table, page_table_1)) {
            bad_argument("real_page_table", "real_page_size == 1: must be absent or describe exactly page_table_1 "
                                            "(same data, dtype, shape and strides)");
        }
        c.tables = Tables::pt1;
    } else {
        if (!real) bad_argument("real_page_table", "is required when real_page_size > 1");
        c.tables = pt1 ? Tables::both : Tables::real;
    }
    c.used = {{&seq_lens, "seq_lens"}, {&req_pool_indices, "req_pool_indices"}, {&req_to_token, "req_to_token"}};
    return c;
}

// The tables' shapes, once the row count is known.
void validate_tables(Common &c, const lb_tensor &page_table_1, const lb_tensor &real_page_table, int64_t rows,
                     const char *rows_name, int64_t width, const char *width_name) {
    if (c.tables != Tables::real) {
        validate::tensor(page_table_1, "page_table_1", {LB_INT32}, 2);
        validate::extent_at_least(page_table_1, "page_table_1", 0, rows, rows_name);
        validate::extent_at_least(page_table_1, "page_table_1", 1, width, width_name);
        c.used.push_back({&page_table_1, "page_table_1"});
    }
    if (c.tables != Tables::pt1) {
        const int64_t real_cols = (width + (int64_t{1} << c.real_page_shift) - 1) >> c.real_page_shift;
        const std::string what = std::string("cdiv(") + width_name + ", real_page_size)";
        validate::tensor(real_page_table, "real_page_table", {LB_INT32}, 2);
        validate::extent_at_least(real_page_table, "real_page_table", 0, rows, rows_name);
        validate::extent_at_least(real_page_table, "real_page_table", 1, real_cols, what.c_str());
        c.used.push_back({&real_page_table, "real_page_table"});
    }
}

void validate_1d_output(Common &c, const lb_tensor &t, const char *name, int64_t n, const char *what_n) {
    validate::tensor(t, name, {LB_INT32}, 1);
    validate::extent_at_least(t, name, 0, n, what_n);
    c.used.push_back({&t, name});
}

// Device residency (CUDA) or the index values the kernel follows (CPU: req_pool_indices
// rows; the columns are in range by req_to_token's shape check). On CUDA the rows are
// clamped inside the kernel but not checked: that would need a device sync. A request
// whose table rows have no live column (`live_tokens(b) <= 0`) has its row never read by
// the bounded kernels (its entry may be garbage; the full-width twin reads a clamped row,
// as on CUDA): not checked, so that CPU and CUDA accept the same calls.
void validate_memory(const Common &c, const lb_device &device, const lb_tensor &req_pool_indices,
                     const lb_tensor &req_to_token, const std::function<int64_t(int64_t)> &live_tokens) {
    if (c.on_cuda) {
        for (auto &[t, name] : c.used) validate::on_cuda_device(*t, name, device.index);
        return;
    }
    const int64_t pool_rows = req_to_token.shape[0];
    for (int64_t b = 0; b < c.bs; b++) {
        if (live_tokens(b) <= 0) continue;
        const int64_t row = validate::host_element(req_pool_indices, b);
        if (row < 0 || row >= pool_rows) {
            bad_argument("req_pool_indices", "req_pool_indices[" + std::to_string(b) + "] = " + std::to_string(row) +
                                                 " is outside [0, " + std::to_string(pool_rows) + ") (req_to_token rows)");
        }
    }
}

void run_k2(const lb_dsa_decode_metadata_args &a, const lb_device &device) {
    Common c = validate_common(device, a.variant, a.seq_lens, a.req_pool_indices, a.req_to_token, a.page_table_1,
                               a.real_page_table, a.max_len, "max_len", a.dsa_index_topk, a.real_page_size,
                               a.index_kpool);
    const int64_t bs = c.bs;
    validate_1d_output(c, a.cache_seqlens, "cache_seqlens", bs, "bs");
    validate_1d_output(c, a.cu_seqlens_k, "cu_seqlens_k", bs + 1, "bs + 1");
    validate_1d_output(c, a.dsa_cache_seqlens, "dsa_cache_seqlens", bs, "bs");
    validate_1d_output(c, a.dsa_cu_seqlens_k, "dsa_cu_seqlens_k", bs + 1, "bs + 1");
    validate_tables(c, a.page_table_1, a.real_page_table, bs, "bs", a.max_len, "max_len");
    // Row b's live tokens: min(s_b, max_len) (the generator's `live`).
    validate_memory(c, device, a.req_pool_indices, a.req_to_token, [&](int64_t b) {
        return std::min<int64_t>(static_cast<int32_t>(validate::host_element(a.seq_lens, b)), a.max_len);
    });

    // ---- call ----
    PipelineCall call(device);
    if (bs == 0) {
        // Only the two prefix sums' first entries to write; no launch.
        call.write_int32(a.cu_seqlens_k, 0);
        call.write_int32(a.dsa_cu_seqlens_k, 0);
        return;
    }
    const Target target = c.on_cuda ? Target::cuda : Target::cpu;
    const K2Variant *v = nullptr;
    for (const auto &k : kK2Variants) {
        if (k.target == target && k.form == a.variant && k.tables == c.tables && k.dtype == c.dtype) v = &k;
    }
    if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K2 variant for this target, variant, tables and dtype");
    const int64_t real_cols = (a.max_len + (int64_t{1} << c.real_page_shift) - 1) >> c.real_page_shift;
    int32_t max_len = static_cast<int32_t>(a.max_len), topk = a.dsa_index_topk, shift = c.real_page_shift,
            kpool = c.index_kpool;
    std::vector<PipelineArg> args = {
        in("seq_lens", call.wrap_1d(c.view(a.seq_lens), "seq_lens", bs)),
        in("req_pool_indices", call.wrap_1d(c.view(a.req_pool_indices), "req_pool_indices", bs)),
        in("req_to_token", call.wrap_2d(a.req_to_token, "req_to_token", a.req_to_token.shape[0], a.req_to_token.shape[1])),
        scalar("max_len", &max_len),
        scalar("dsa_index_topk", &topk),
        scalar("real_page_shift", &shift),
        scalar("index_kpool", &kpool),
        out("cache_seqlens", call.wrap_1d(a.cache_seqlens, "cache_seqlens", bs)),
        out("cu_seqlens_k", call.wrap_1d(a.cu_seqlens_k, "cu_seqlens_k", bs + 1)),
        out("dsa_cache_seqlens", call.wrap_1d(a.dsa_cache_seqlens, "dsa_cache_seqlens", bs)),
        out("dsa_cu_seqlens_k", call.wrap_1d(a.dsa_cu_seqlens_k, "dsa_cu_seqlens_k", bs + 1))};
    if (c.tables != Tables::real) {
        args.push_back(out("page_table_1", call.wrap_2d(a.page_table_1, "page_table_1", bs, a.max_len)));
    }
    if (c.tables != Tables::pt1) {
        args.push_back(out("real_page_table", call.wrap_2d(a.real_page_table, "real_page_table", bs, real_cols)));
    }
    // The tuned forms by batch (schedules/dsa_metadata/tuned/), the hand form past the
    // tuned forms' shared-memory limit (cmake/families/dsa_metadata.cmake).
    call.run(for_batch(v->pipeline, bs, bs + 1), args);
}

void run_k3(const lb_dsa_target_verify_metadata_args &a, const lb_device &device) {
    Common c = validate_common(device, a.variant, a.seq_lens, a.req_pool_indices, a.req_to_token, a.page_table_1,
                               a.real_page_table, a.max_seqlen_k, "max_seqlen_k", a.dsa_index_topk, a.real_page_size,
                               a.index_kpool);
    if (a.next_n < 1 || a.next_n > 1024) bad_argument("next_n", "must be in [1, 1024], got " + std::to_string(a.next_n));
    const int64_t bs = c.bs;
    const int64_t e = bs * a.next_n;
    if (e + 1 > INT32_MAX) {
        bad_argument("next_n", "bs * next_n + 1 = " + std::to_string(e + 1) + " must be below 2^31");
    }
    validate_1d_output(c, a.cache_seqlens, "cache_seqlens", bs, "bs");
    validate_1d_output(c, a.cu_seqlens_k, "cu_seqlens_k", bs + 1, "bs + 1");
    validate_1d_output(c, a.seqlens_expanded, "seqlens_expanded", e, "bs * next_n");
    validate_1d_output(c, a.dsa_cache_seqlens, "dsa_cache_seqlens", e, "bs * next_n");
    validate_1d_output(c, a.dsa_cu_seqlens_k, "dsa_cu_seqlens_k", e + 1, "bs * next_n + 1");
    const bool ctx_lens = !validate::is_absent(a.paged_mqa_ctx_lens_2d);
    if (ctx_lens) {
        validate::tensor(a.paged_mqa_ctx_lens_2d, "paged_mqa_ctx_lens_2d", {LB_INT32}, 2,
                         validate::Layout::any_strides);  // a transposed view too
        validate::extent_at_least(a.paged_mqa_ctx_lens_2d, "paged_mqa_ctx_lens_2d", 0, bs, "bs");
        validate::extent_at_least(a.paged_mqa_ctx_lens_2d, "paged_mqa_ctx_lens_2d", 1, a.next_n, "next_n");
        c.used.push_back({&a.paged_mqa_ctx_lens_2d, "paged_mqa_ctx_lens_2d"});
    }
    validate_tables(c, a.page_table_1, a.real_page_table, e, "bs * next_n", a.max_seqlen_k, "max_seqlen_k");
    // Request r's rows' live tokens: min(s_r + next_n, max_seqlen_k) (the generator's `live`).
    validate_memory(c, device, a.req_pool_indices, a.req_to_token, [&](int64_t r) {
        return std::min<int64_t>(
            int64_t{static_cast<int32_t>(validate::host_element(a.seq_lens, r))} + a.next_n, a.max_seqlen_k);
    });

    // ---- call ----
    PipelineCall call(device);
    if (bs == 0) {
        call.write_int32(a.cu_seqlens_k, 0);
        call.write_int32(a.dsa_cu_seqlens_k, 0);
        return;
    }
    const Target target = c.on_cuda ? Target::cuda : Target::cpu;
    const K3Variant *v = nullptr;
    for (const auto &k : kK3Variants) {
        if (k.target == target && k.form == a.variant && k.tables == c.tables && k.ctx_lens == ctx_lens &&
            k.dtype == c.dtype) {
            v = &k;
        }
    }
    if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K3 variant for this target, variant, tables, ctx lens and dtype");
    const int64_t real_cols = (a.max_seqlen_k + (int64_t{1} << c.real_page_shift) - 1) >> c.real_page_shift;
    int32_t width = static_cast<int32_t>(a.max_seqlen_k), topk = a.dsa_index_topk, shift = c.real_page_shift,
            next_n = a.next_n, kpool = c.index_kpool;
    std::vector<PipelineArg> args = {
        in("seq_lens", call.wrap_1d(c.view(a.seq_lens), "seq_lens", bs)),
        in("req_pool_indices", call.wrap_1d(c.view(a.req_pool_indices), "req_pool_indices", bs)),
        in("req_to_token", call.wrap_2d(a.req_to_token, "req_to_token", a.req_to_token.shape[0], a.req_to_token.shape[1])),
        scalar("max_seqlen_k", &width),
        scalar("dsa_index_topk", &topk),
        scalar("real_page_shift", &shift),
        scalar("next_n", &next_n),
        scalar("index_kpool", &kpool),
        out("cache_seqlens", call.wrap_1d(a.cache_seqlens, "cache_seqlens", bs)),
        out("cu_seqlens_k", call.wrap_1d(a.cu_seqlens_k, "cu_seqlens_k", bs + 1)),
        out("seqlens_expanded", call.wrap_1d(a.seqlens_expanded, "seqlens_expanded", e)),
        out("dsa_cache_seqlens", call.wrap_1d(a.dsa_cache_seqlens, "dsa_cache_seqlens", e)),
        out("dsa_cu_seqlens_k", call.wrap_1d(a.dsa_cu_seqlens_k, "dsa_cu_seqlens_k", e + 1))};
    if (ctx_lens) {
        args.push_back(out("paged_mqa_ctx_lens_2d",
                           call.wrap_2d(a.paged_mqa_ctx_lens_2d, "paged_mqa_ctx_lens_2d", bs, a.next_n)));
    }
    if (c.tables != Tables::real) {
        args.push_back(out("page_table_1", call.wrap_2d(a.page_table_1, "page_table_1", e, a.max_seqlen_k)));
    }
    if (c.tables != Tables::pt1) {
        args.push_back(out("real_page_table", call.wrap_2d(a.real_page_table, "real_page_table", e, real_cols)));
    }
    // As K2's; the longest prefix sum is dsa_cu_seqlens_k over the e expanded rows.
    call.run(for_batch(v->pipeline, bs, e + 1), args);
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_fused_dsa_decode_metadata(const lb_dsa_decode_metadata_args *args, lb_device device) {
    struct Call {
        const lb_dsa_decode_metadata_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_fused_dsa_decode_metadata",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_k2(*c->args, c->device);
        },
        &call);
}

extern "C" lb_status lb_fused_dsa_target_verify_metadata(const lb_dsa_target_verify_metadata_args *args,
                                                         lb_device device) {
    struct Call {
        const lb_dsa_target_verify_metadata_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_fused_dsa_target_verify_metadata",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_k3(*c->args, c->device);
        },
        &call);
}
