// K6 transform_index_page_table_prefill: validate every argument, pick the AOT variant
// (target x bounded/full-width x page-table layout, or the fill-only pipeline, from
// cmake/families/transform_index.cmake), and call it on the caller's memory with the
// caller's device and stream.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "livebound/livebound.h"
#include "pipeline_call.h"
#include "validate.h"

#include "livebound/k6_headers.inc"  // generated: every K6 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };
enum class Layout { req, expanded };

struct GatherVariant {
    Target target;
    lb_variant form;
    Layout layout;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};
struct FillVariant {
    Target target;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;

const GatherVariant kGatherVariants[] = {
#define LB_K6_FILL(target, name)
#define LB_K6_GATHER(target, form, layout, name) {Target::target, k_##form, Layout::layout, LB_PIPELINE(name)},
#include "livebound/k6_variants.inc"
#undef LB_K6_GATHER
#undef LB_K6_FILL
};
const FillVariant kFillVariants[] = {
#define LB_K6_GATHER(target, form, layout, name)
#define LB_K6_FILL(target, name) {Target::target, LB_PIPELINE(name)},
#include "livebound/k6_variants.inc"
#undef LB_K6_GATHER
#undef LB_K6_FILL
};

// CUDA grid limit of the gather's y (topk chunks) and z (requests) axes.
constexpr int64_t kMaxGridYZ = 65535;
// topk columns per block of the CUDA gather (schedules/transform_index: j_threads).
constexpr int64_t kCudaTopkChunk = 256;

std::string str(int64_t v) { return std::to_string(v); }

int32_t cu_at(const lb_tensor &cu, int64_t i) {
    return static_cast<const int32_t *>(cu.data)[i * cu.strides[0]];
}

// Host-visible values (CPU calls only): cu_seqlens_q must describe the rows the kernel
// writes, and every index it follows must stay inside its page-table row. On CUDA the
// same indices are clamped inside the kernel (memory safety) but not checked: reading
// them here would need a device sync.
void check_values(const lb_transform_index_args &a, int64_t bs, int64_t n) {
    const lb_tensor &cu = a.cu_seqlens_q;
    if (cu_at(cu, 0) != 0) bad_argument("cu_seqlens_q", "cu_seqlens_q[0] must be 0, got " + str(cu_at(cu, 0)));
    for (int64_t i = 0; i < bs; i++) {
        const int64_t start = cu_at(cu, i), end = cu_at(cu, i + 1);
        if (end < start) {
            bad_argument("cu_seqlens_q", "must be non-decreasing: cu_seqlens_q[" + str(i + 1) + "] = " + str(end) +
                                             " < cu_seqlens_q[" + str(i) + "] = " + str(start));
        }
        if (end - start > a.max_extend_len) {
            bad_argument("cu_seqlens_q", "request " + str(i) + " has " + str(end - start) +
                                             " query tokens, more than max_extend_len = " + str(a.max_extend_len));
        }
    }
    if (cu_at(cu, bs) != n) {
        bad_argument("cu_seqlens_q", "cu_seqlens_q[bs = " + str(bs) + "] = " + str(cu_at(cu, bs)) +
                                         " must equal num_tokens = " + str(n));
    }
    const int64_t width = a.page_table.shape[1], topk = a.topk_indices.shape[1];
    const auto *idx = static_cast<const int32_t *>(a.topk_indices.data);
    for (int64_t t = 0; t < n; t++) {
        const int32_t *row = idx + t * a.topk_indices.strides[0];
        for (int64_t j = 0; j < topk; j++) {
            if (row[j] >= width) {
                bad_argument("topk_indices", "topk_indices[" + str(t) + ", " + str(j) + "] = " + str(row[j]) +
                                                 " is outside the page-table row (max_seqlen_k = " + str(width) + ")");
            }
        }
    }
}

void run_transform_index(const lb_transform_index_args &a, const lb_device &device) {
    // ---- arguments ----
    validate::device(device);
    const bool on_cuda = device.type == LB_DEVICE_CUDA;
    validate::variant(a.variant);
    if (a.page_size != 1) bad_argument("page_size", "must be 1 (the only page size of this kernel), got " + str(a.page_size));
    const bool expanded = a.page_table_is_expanded != 0;

    validate::tensor(a.cu_seqlens_q, "cu_seqlens_q", {LB_INT32}, 1);
    if (a.cu_seqlens_q.shape[0] < 1) bad_argument("cu_seqlens_q", "must have bs + 1 >= 1 entries, got 0");
    const int64_t bs = a.cu_seqlens_q.shape[0] - 1;
    if (on_cuda && bs > kMaxGridYZ) {
        bad_argument("cu_seqlens_q", "bs = " + str(bs) + " requests: at most " + str(kMaxGridYZ) + " on CUDA");
    }
    validate::tensor(a.topk_indices, "topk_indices", {LB_INT32}, 2);
    const int64_t num_rows = a.topk_indices.shape[0], topk = a.topk_indices.shape[1];
    if (on_cuda && (topk + kCudaTopkChunk - 1) / kCudaTopkChunk > kMaxGridYZ) {
        bad_argument("topk_indices", "topk = " + str(topk) + " is too wide for the CUDA grid");
    }
    if (a.num_tokens < 0 || a.num_tokens > num_rows) {
        bad_argument("num_tokens", "must be in [0, T = " + str(num_rows) + "] (topk_indices rows), got " +
                                       str(a.num_tokens));
    }
    const int64_t n = a.num_tokens;
    if (a.output_num_tokens < num_rows || a.output_num_tokens > INT32_MAX) {
        bad_argument("output_num_tokens", "must be in [T = " + str(num_rows) + " (topk_indices rows), 2^31), got " +
                                              str(a.output_num_tokens));
    }
    validate::int32_range(a.max_extend_len, "max_extend_len");
    if (n > 0 && a.max_extend_len < 1) {
        bad_argument("max_extend_len", "must be >= 1 when num_tokens = " + str(n) + " > 0");
    }
    if (n > 0 && bs < 1) bad_argument("cu_seqlens_q", "has no request (bs = 0) but num_tokens = " + str(n));
    validate::tensor(a.page_table, "page_table", {LB_INT32}, 2);
    if (n > 0) {
        if (a.page_table.shape[1] < 1) bad_argument("page_table", "must have at least one column (max_seqlen_k >= 1)");
        if (expanded) {
            validate::extent_at_least(a.page_table, "page_table", 0, n, "num_tokens (page_table_is_expanded)");
        } else {
            validate::extent_at_least(a.page_table, "page_table", 0, bs, "bs");
        }
    }
    validate::tensor(a.result, "result", {LB_INT32}, 2);
    validate::extent_at_least(a.result, "result", 0, a.output_num_tokens, "output_num_tokens");
    validate::extent_at_least(a.result, "result", 1, topk, "topk (topk_indices columns)");
    if (on_cuda) {
        const std::pair<const lb_tensor *, const char *> used[] = {{&a.page_table, "page_table"},
                                                                   {&a.topk_indices, "topk_indices"},
                                                                   {&a.cu_seqlens_q, "cu_seqlens_q"},
                                                                   {&a.result, "result"}};
        for (const auto &[t, name] : used) validate::on_cuda_device(*t, name, device.index);
    } else {
        check_values(a, bs, n);
    }

    // ---- call ----
    const int64_t out_rows = a.output_num_tokens;
    if (out_rows == 0 || topk == 0) return;  // nothing to write: no launch
    PipelineCall call(device);
    const Target target = on_cuda ? Target::cuda : Target::cpu;
    halide_buffer_t *result = call.wrap_2d(a.result, "result", out_rows, topk);
    if (n == 0) {
        // No query token: every row is -1 (SGLang returns right after its fill).
        const FillVariant *v = nullptr;
        for (const auto &f : kFillVariants) {
            if (f.target == target) v = &f;
        }
        if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K6 fill variant for this target");
        call.run(v->pipeline, {out("result", result)});
        return;
    }
    const Layout layout = expanded ? Layout::expanded : Layout::req;
    const GatherVariant *v = nullptr;
    for (const auto &g : kGatherVariants) {
        if (g.target == target && g.form == a.variant && g.layout == layout) v = &g;
    }
    if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K6 variant for this target, variant and page-table layout");
    halide_buffer_t *page_table =
        call.wrap_2d(a.page_table, "page_table", a.page_table.shape[0], a.page_table.shape[1]);
    halide_buffer_t *topk_indices = call.wrap_2d(a.topk_indices, "topk_indices", num_rows, topk);
    halide_buffer_t *cu_seqlens_q = call.wrap_1d(a.cu_seqlens_q, "cu_seqlens_q", bs + 1);
    int32_t num_tokens = static_cast<int32_t>(n);
    int32_t max_extend_len = static_cast<int32_t>(a.max_extend_len);
    call.run(v->pipeline, {in("page_table", page_table), in("topk_indices", topk_indices), in("cu_seqlens_q", cu_seqlens_q),
                           scalar("num_tokens", &num_tokens), scalar("max_extend_len", &max_extend_len),
                           out("result", result)});
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_transform_index_page_table_prefill(const lb_transform_index_args *args, lb_device device) {
    struct Call {
        const lb_transform_index_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_transform_index_page_table_prefill",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_transform_index(*c->args, c->device);
        },
        &call);
}
