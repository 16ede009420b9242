// K5 _get_k_and_s_triton (DSA indexer K + scale gather): validate every argument, pick the
// AOT variant (target x bounded/full-width x dtypes, from cmake/families/dsa_kv_gather.cmake),
// and call it on the caller's memory with the caller's device and stream. buf, k_out and
// s_out are handed to the kernel as uint32 views of the same bytes (the kernel copies words).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "pipeline_call.h"
#include "livebound/livebound.h"
#include "validate.h"

#include "livebound/k5_headers.inc"  // generated: every K5 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };

// scatter: the (token, request) grid of SGLang's kernel, trimmed to the live lengths (two
// kernels on CUDA: k_out, s_out). rows: the CUDA grid over the output rows, both outputs in
// one kernel, 16-byte accesses (schedules/dsa_kv_gather/cuda.h R1-R5); it needs 16-byte
// aligned rows of buf and k_out, at most kRowGridMaxBatch requests (off_b of the whole batch
// in each block's shared memory) and buffers below 2^31 words (32-bit indices).
enum class Grid { scatter, rows };
constexpr int64_t kRowGridMaxBatch = 8192;
constexpr int64_t kMaxWords32 = (int64_t{1} << 31) - 1;

// One row per AOT library of K5; generated from the manifest.
struct Variant {
    Target target;
    lb_variant form;
    Grid grid;
    lb_dtype seq_lens_dtype, index_dtype;
    int32_t head_dim;  // index_head_dim (D), compile time
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;
constexpr lb_dtype k_int32 = LB_INT32, k_int64 = LB_INT64;

const Variant kVariants[] = {
#define LB_K5_GATHER(target, form, grid, seq, idx, head_dim, name) \
    {Target::target, k_##form, Grid::grid, k_##seq, k_##idx, head_dim, LB_PIPELINE(name)},
#include "livebound/k5_variants.inc"
#undef LB_K5_GATHER
};

int64_t element_1d(const lb_tensor &t, int64_t i) {
    const auto *base = static_cast<const char *>(t.data);
    if (t.dtype == LB_INT64) return reinterpret_cast<const int64_t *>(base)[i * t.strides[0]];
    return reinterpret_cast<const int32_t *>(base)[i * t.strides[0]];
}

int64_t element_2d(const lb_tensor &t, int64_t r, int64_t c) {
    const int64_t offset = r * t.strides[0] + c;
    if (t.dtype == LB_INT64) return static_cast<const int64_t *>(t.data)[offset];
    return static_cast<const int32_t *>(t.data)[offset];
}

// Byte tensors read and written as 4-byte words: aligned data, rows a whole number of words.
void check_word_view(const lb_tensor &t, const char *name) {
    if (reinterpret_cast<uintptr_t>(t.data) % 4 != 0) {
        bad_argument(name, "data must be 4-byte aligned (the kernel copies 4-byte words)");
    }
    if (t.shape[0] > 1 && t.strides[0] % 4 != 0) {
        bad_argument(name, "row stride " + std::to_string(t.strides[0]) + " must be a multiple of 4 bytes");
    }
}

// Host-visible values (CPU calls only): lengths against max_seq_len and seq_len_sum, and the
// page ids a live token follows. On CUDA the kernel clamps the same indices (memory safety)
// but nothing is checked: reading device values here would need a sync.
void check_values(const lb_dsa_kv_gather_args &a, int64_t bs) {
    const int64_t max_pages = a.page_indices.shape[1], num_pages = a.buf.shape[0];
    int64_t sum = 0;
    for (int64_t b = 0; b < bs; b++) {
        const int64_t len = element_1d(a.seq_lens, b);
        const std::string at = "seq_lens[" + std::to_string(b) + "] = " + std::to_string(len);
        if (len < 0) bad_argument("seq_lens", at + " is negative");
        if (len > a.max_seq_len) {
            bad_argument("max_seq_len", std::to_string(a.max_seq_len) + " is smaller than " + at);
        }
        sum += len;
        const int64_t pages = (len + a.page_size - 1) / a.page_size;
        if (pages > max_pages) {
            bad_argument("page_indices", "has " + std::to_string(max_pages) + " columns, but " + at + " needs " +
                                             std::to_string(pages) + " pages of " + std::to_string(a.page_size));
        }
        for (int64_t k = 0; k < pages; k++) {
            const int64_t pg = element_2d(a.page_indices, b, k);
            if (pg < 0 || pg >= num_pages) {
                bad_argument("page_indices", "page_indices[" + std::to_string(b) + ", " + std::to_string(k) +
                                                 "] = " + std::to_string(pg) + " is outside [0, " +
                                                 std::to_string(num_pages) + ") (buf pages)");
            }
        }
    }
    if (sum != a.seq_len_sum) {
        bad_argument("seq_len_sum", std::to_string(a.seq_len_sum) + " differs from sum(seq_lens) = " + std::to_string(sum));
    }
}

void run_get_k_and_s(const lb_dsa_kv_gather_args &a, const lb_device &device) {
    // ---- arguments ----
    validate::device(device);
    const bool on_cuda = device.type == LB_DEVICE_CUDA;
    validate::variant(a.variant);
    if (a.index_head_dim <= 0 || a.index_head_dim % 4 != 0) {
        bad_argument("index_head_dim", "must be a positive multiple of 4, got " + std::to_string(a.index_head_dim));
    }
    std::set<int32_t> head_dims;  // built, ascending
    for (const auto &c : kVariants) head_dims.insert(c.head_dim);
    if (head_dims.count(a.index_head_dim) == 0) {
        std::string built;
        for (int32_t d : head_dims) built += (built.empty() ? "" : ", ") + std::to_string(d);
        throw Failure(LB_ERROR_UNSUPPORTED, "argument 'index_head_dim': this build has K5 variants for " + built +
                                                ", got " + std::to_string(a.index_head_dim));
    }
    if (a.page_size < 1 || a.page_size > (1 << 20)) {
        bad_argument("page_size", "must be in [1, 2^20], got " + std::to_string(a.page_size));
    }
    validate::int32_range(a.seq_len_sum, "seq_len_sum");
    validate::int32_range(a.max_seq_len, "max_seq_len");
    const int64_t page_bytes = int64_t{a.page_size} * (a.index_head_dim + 4);

    validate::tensor(a.seq_lens, "seq_lens", {LB_INT64, LB_INT32}, 1);
    const int64_t bs = a.seq_lens.shape[0];
    validate::tensor(a.page_indices, "page_indices", {LB_INT32, LB_INT64}, 2);
    validate::extent_equals(a.page_indices, "page_indices", 0, bs, "B (seq_lens length)");
    validate::tensor(a.buf, "buf", {LB_UINT8}, 2);
    validate::extent_equals(a.buf, "buf", 1, page_bytes, "page_size * (index_head_dim + 4)");
    check_word_view(a.buf, "buf");
    validate::tensor(a.k_out, "k_out", {LB_UINT8}, 2);
    validate::extent_at_least(a.k_out, "k_out", 0, a.seq_len_sum, "seq_len_sum");
    validate::extent_equals(a.k_out, "k_out", 1, a.index_head_dim, "index_head_dim");
    check_word_view(a.k_out, "k_out");
    validate::tensor(a.s_out, "s_out", {LB_UINT8}, 2);
    validate::extent_at_least(a.s_out, "s_out", 0, a.seq_len_sum, "seq_len_sum");
    validate::extent_equals(a.s_out, "s_out", 1, 4, "4 (one FP32 scale)");
    check_word_view(a.s_out, "s_out");

    const std::pair<const lb_tensor *, const char *> used[] = {{&a.buf, "buf"},
                                                               {&a.page_indices, "page_indices"},
                                                               {&a.seq_lens, "seq_lens"},
                                                               {&a.k_out, "k_out"},
                                                               {&a.s_out, "s_out"}};
    if (on_cuda) {
        for (const auto &[t, name] : used) validate::on_cuda_device(*t, name, device.index);
    } else {
        check_values(a, bs);  // names the exact culprit; the relations below then hold
    }
    // Relations the host can check without reading device values (what CUDA calls get).
    if (a.seq_len_sum > bs * a.max_seq_len) {
        bad_argument("seq_len_sum", std::to_string(a.seq_len_sum) + " exceeds B * max_seq_len = " +
                                        std::to_string(bs) + " * " + std::to_string(a.max_seq_len) +
                                        " (max_seq_len must be >= every seq_lens[b])");
    }
    if (a.seq_len_sum > 0 && a.page_indices.shape[1] < 1) {
        bad_argument("page_indices", "has no columns, but seq_len_sum = " + std::to_string(a.seq_len_sum) + " > 0");
    }
    if (a.seq_len_sum > 0 && a.buf.shape[0] < 1) {
        bad_argument("buf", "has no pages, but seq_len_sum = " + std::to_string(a.seq_len_sum) + " > 0");
    }

    // ---- call ----
    // No row to write (B = 0, or every request empty): nothing runs, nothing is launched.
    if (a.seq_len_sum == 0) return;

    // Row strides in words (a one-row tensor's stride is never used: any multiple of 16
    // bytes serves the row grid).
    const int64_t buf_stride = a.buf.shape[0] > 1 ? a.buf.strides[0] / 4 : (page_bytes + 15) / 16 * 4;
    const int64_t k_stride = a.k_out.shape[0] > 1 ? a.k_out.strides[0] / 4 : (a.index_head_dim + 15) / 16 * 4;
    const Target target = on_cuda ? Target::cuda : Target::cpu;
    const bool aligned16 = reinterpret_cast<uintptr_t>(a.buf.data) % 16 == 0 &&
                           reinterpret_cast<uintptr_t>(a.k_out.data) % 16 == 0 && buf_stride % 4 == 0 &&
                           k_stride % 4 == 0;
    const Grid grid = target == Target::cuda && a.variant == LB_BOUNDED && aligned16 && bs <= kRowGridMaxBatch &&
                              a.buf.shape[0] * buf_stride <= kMaxWords32 && a.seq_len_sum * k_stride <= kMaxWords32 &&
                              a.seq_len_sum * a.s_out.strides[0] / 4 <= kMaxWords32 &&
                              bs * a.page_indices.strides[0] <= kMaxWords32
                          ? Grid::rows
                          : Grid::scatter;
    const Variant *v = nullptr;
    for (const auto &c : kVariants) {
        if (c.target == target && c.form == a.variant && c.grid == grid && c.seq_lens_dtype == a.seq_lens.dtype &&
            c.index_dtype == a.page_indices.dtype && c.head_dim == a.index_head_dim) {
            v = &c;
        }
    }
    if (!v) throw Failure(LB_ERROR_UNSUPPORTED, "no K5 variant for this target, variant and dtypes");

    PipelineCall call(device);
    const halide_type_t word(halide_type_uint, 32);
    const int32_t rows = static_cast<int32_t>(a.seq_len_sum);
    halide_dimension_t buf_dims[2] = {
        halide_dimension_t(0, static_cast<int32_t>(page_bytes / 4), 1),
        halide_dimension_t(0, static_cast<int32_t>(a.buf.shape[0]), static_cast<int32_t>(buf_stride))};
    halide_dimension_t k_dims[2] = {halide_dimension_t(0, a.index_head_dim / 4, 1),
                                    halide_dimension_t(0, rows, static_cast<int32_t>(k_stride))};
    halide_dimension_t s_dims[1] = {
        halide_dimension_t(0, rows, static_cast<int32_t>(a.s_out.shape[0] > 1 ? a.s_out.strides[0] / 4 : 1))};
    halide_buffer_t *buf = call.wrap(a.buf, "buf", word, 2, buf_dims);
    halide_buffer_t *page_indices =
        call.wrap_2d(a.page_indices, "page_indices", bs, a.page_indices.shape[1]);
    halide_buffer_t *seq_lens = call.wrap_1d(a.seq_lens, "seq_lens", bs);
    halide_buffer_t *k_out = call.wrap(a.k_out, "k_out", word, 2, k_dims);
    // The row grid takes s_out as (word, row): one word per row (the generator's layout).
    halide_dimension_t s_rows_dims[2] = {halide_dimension_t(0, 1, 1), s_dims[0]};
    halide_buffer_t *s_out = v->grid == Grid::rows ? call.wrap(a.s_out, "s_out", word, 2, s_rows_dims)
                                                   : call.wrap(a.s_out, "s_out", word, 1, s_dims);
    int32_t max_seq_len = static_cast<int32_t>(a.max_seq_len);
    int32_t page_size = a.page_size;
    if (v->grid == Grid::rows) {
        int32_t buf_row_stride_16b = static_cast<int32_t>(buf_stride / 4);
        int32_t k_out_row_stride_16b = static_cast<int32_t>(k_stride / 4);
        call.run(v->pipeline, {in("buf", buf), in("page_indices", page_indices), in("seq_lens", seq_lens),
                               scalar("max_seq_len", &max_seq_len), scalar("page_size", &page_size),
                               scalar("buf_row_stride_16b", &buf_row_stride_16b),
                               scalar("k_out_row_stride_16b", &k_out_row_stride_16b), out("k_out", k_out),
                               out("s_out", s_out)});
    } else {
        call.run(v->pipeline, {in("buf", buf), in("page_indices", page_indices), in("seq_lens", seq_lens),
                               scalar("max_seq_len", &max_seq_len), scalar("page_size", &page_size),
                               out("k_out", k_out), out("s_out", s_out)});
    }
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_get_k_and_s(const lb_dsa_kv_gather_args *args, lb_device device) {
    struct Call {
        const lb_dsa_kv_gather_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_get_k_and_s",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_get_k_and_s(*c->args, c->device);
        },
        &call);
}
