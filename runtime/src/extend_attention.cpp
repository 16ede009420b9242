// K7 extend_attention_fwd: validate every argument, pick the AOT variant (target x
// bounded/full-width x dtype x head dims x kv_indices dtype, from
// cmake/families/extend_attention.cmake) and call it on the caller's memory. CPU only so
// far: a CUDA device gets LB_ERROR_UNSUPPORTED (no CUDA variant yet).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "errors.h"
#include "pipeline_call.h"
#include "livebound/livebound.h"
#include "validate.h"

#include "livebound/k7_headers.inc"  // generated: every K7 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };
enum class Dt { bf16, fp16 };

struct Variant {
    Target target;
    lb_variant form;
    Dt dtype;
    int32_t head_dim_qk, head_dim_v;
    lb_dtype index_dtype;
    int (*run)(void **);
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;
constexpr lb_dtype k_int32 = LB_INT32, k_int64 = LB_INT64;

const Variant kVariants[] = {
#define LB_K7_ATTN(target, form, dt, dqk, dv, idx, name) {Target::target, k_##form, Dt::dt, dqk, dv, k_##idx, name##_argv},
#define LB_K7_COUNT(target, form, bm, bn, name)
#include "livebound/k7_variants.inc"
#undef LB_K7_ATTN
#undef LB_K7_COUNT
};

// Host values (CPU calls): the ranges and the slots the kernel follows.
void check_values(const lb_extend_attention_args &a, int64_t B, int64_t T, int64_t num_slots) {
    const int64_t num_indices = a.kv_indices.shape[0];
    for (const auto &[t, name, limit, what] :
         {std::tuple<const lb_tensor &, const char *, int64_t, const char *>{a.qo_indptr, "qo_indptr", T, "T (q_extend rows)"},
          std::tuple<const lb_tensor &, const char *, int64_t, const char *>{a.kv_indptr, "kv_indptr", num_indices,
                                                                             "len(kv_indices)"}}) {
        int64_t prev = validate::host_element(t, 0);
        if (prev < 0) bad_argument(name, std::string(name) + "[0] = " + std::to_string(prev) + " is negative");
        for (int64_t b = 1; b <= B; b++) {
            const int64_t v = validate::host_element(t, b);
            if (v < prev) {
                bad_argument(name, std::string(name) + "[" + std::to_string(b) + "] = " + std::to_string(v) +
                                       " is smaller than entry " + std::to_string(b - 1) + " = " + std::to_string(prev));
            }
            if (&t == &a.qo_indptr && v - prev > a.max_len_extend) {
                bad_argument("max_len_extend", std::to_string(a.max_len_extend) + " is smaller than E_" +
                                                   std::to_string(b - 1) + " = " + std::to_string(v - prev));
            }
            prev = v;
        }
        if (prev > limit) {
            bad_argument(name, std::string(name) + "[B] = " + std::to_string(prev) + " exceeds " + what + " = " +
                                   std::to_string(limit));
        }
    }
    const int64_t used = validate::host_element(a.kv_indptr, B);
    for (int64_t i = validate::host_element(a.kv_indptr, 0); i < used; i++) {
        const int64_t slot = validate::host_element(a.kv_indices, i);
        if (slot < 0 || slot >= num_slots) {
            bad_argument("kv_indices", "kv_indices[" + std::to_string(i) + "] = " + std::to_string(slot) +
                                           " is outside [0, " + std::to_string(num_slots) + ") (k_buffer slots)");
        }
    }
}

// Custom-mask addressing (CPU calls): every request's E x (S + wko) block inside custom_mask.
void check_mask_values(const lb_extend_attention_args &a, int64_t B, bool use_wko) {
    const int64_t n = a.custom_mask.shape[0];
    for (int64_t b = 0; b < B; b++) {
        const int64_t E = validate::host_element(a.qo_indptr, b + 1) - validate::host_element(a.qo_indptr, b);
        const int64_t P = validate::host_element(a.kv_indptr, b + 1) - validate::host_element(a.kv_indptr, b);
        int64_t wko = 0;
        if (use_wko) {
            wko = validate::host_element(a.window_kv_offsets, b);
            if (wko < 0 || wko > (int64_t{1} << 31)) {
                bad_argument("window_kv_offsets", "window_kv_offsets[" + std::to_string(b) + "] = " + std::to_string(wko) +
                                                      " is outside [0, 2^31]");
            }
        }
        const int64_t start = validate::host_element(a.mask_indptr, b);
        const int64_t size = E * (P + E + wko);
        if (start < 0 || (size > 0 && start > n - size)) {
            bad_argument("mask_indptr", "mask_indptr[" + std::to_string(b) + "] = " + std::to_string(start) +
                                            ": request " + std::to_string(b) + "'s mask of E x (P + E + wko) = " +
                                            std::to_string(E) + " x " + std::to_string(P + E + wko) +
                                            " bytes does not fit in custom_mask (" + std::to_string(n) + " bytes)");
        }
    }
}

void run_extend_attention(const lb_extend_attention_args &a, const lb_device &device) {
    // ---- arguments ----
    validate::device(device);
    validate::variant(a.variant);
    const lb_dtype dt = a.q_extend.dtype;
    if (dt != LB_FLOAT16 && dt != LB_BFLOAT16) {
        bad_argument("q_extend", std::string("expected dtype float16 or bfloat16, got ") + validate::dtype_name(dt));
    }
    validate::tensor(a.q_extend, "q_extend", {dt}, 3);
    const int64_t T = a.q_extend.shape[0], Hq = a.q_extend.shape[1], Lq = a.q_extend.shape[2];
    validate::tensor(a.k_extend, "k_extend", {dt}, 3);
    validate::extent_equals(a.k_extend, "k_extend", 0, T, "T (q_extend rows)");
    validate::extent_equals(a.k_extend, "k_extend", 2, Lq, "Lq (q_extend head dim)");
    const int64_t Hkv = a.k_extend.shape[1];
    if (Hkv < 1 || Hq % Hkv != 0) {
        bad_argument("k_extend", "shape " + validate::shape_text(a.k_extend) + ": Hkv = " + std::to_string(Hkv) +
                                     " must be >= 1 and divide Hq = " + std::to_string(Hq));
    }
    validate::tensor(a.v_extend, "v_extend", {dt}, 3);
    validate::extent_equals(a.v_extend, "v_extend", 0, T, "T (q_extend rows)");
    validate::extent_equals(a.v_extend, "v_extend", 1, Hkv, "Hkv (k_extend heads)");
    const int64_t Lv = a.v_extend.shape[2];
    validate::tensor(a.o_extend, "o_extend", {dt}, 3);
    validate::extent_equals(a.o_extend, "o_extend", 0, T, "T (q_extend rows)");
    validate::extent_equals(a.o_extend, "o_extend", 1, Hq, "Hq (q_extend heads)");
    validate::extent_equals(a.o_extend, "o_extend", 2, Lv, "Lv (v_extend head dim)");
    validate::tensor(a.k_buffer, "k_buffer", {dt}, 3);
    validate::extent_equals(a.k_buffer, "k_buffer", 1, Hkv, "Hkv (k_extend heads)");
    validate::extent_equals(a.k_buffer, "k_buffer", 2, Lq, "Lq (q_extend head dim)");
    const int64_t num_slots = a.k_buffer.shape[0];
    validate::tensor(a.v_buffer, "v_buffer", {dt}, 3);
    validate::extent_equals(a.v_buffer, "v_buffer", 0, num_slots, "num_slots (k_buffer slots)");
    validate::extent_equals(a.v_buffer, "v_buffer", 1, Hkv, "Hkv (k_extend heads)");
    validate::extent_equals(a.v_buffer, "v_buffer", 2, Lv, "Lv (v_extend head dim)");

    validate::tensor(a.qo_indptr, "qo_indptr", {LB_INT32}, 1);
    const int64_t B = a.qo_indptr.shape[0] - 1;
    if (B < 0) bad_argument("qo_indptr", "must have B + 1 >= 1 entries, got 0");
    validate::tensor(a.kv_indptr, "kv_indptr", {LB_INT32}, 1);
    if (a.kv_indptr.shape[0] != B + 1) {
        bad_argument("kv_indptr", "has " + std::to_string(a.kv_indptr.shape[0]) + " entries, must equal B + 1 = " +
                                      std::to_string(B + 1) + " (qo_indptr length)");
    }
    validate::tensor(a.kv_indices, "kv_indices", {LB_INT32, LB_INT64}, 1);
    if (!validate::is_absent(a.sinks)) {
        validate::tensor(a.sinks, "sinks", {LB_FLOAT32}, 1);
        validate::extent_equals(a.sinks, "sinks", 0, Hq, "Hq (q_extend heads)");
        // K7 keeps its float vectors contiguous (lb_tensor lets 1-D index tensors be strided).
        if (a.sinks.shape[0] > 1 && a.sinks.strides[0] != 1) {
            bad_argument("sinks", "must be contiguous (stride 1), got stride " + std::to_string(a.sinks.strides[0]));
        }
    }
    const bool with_lse = !validate::is_absent(a.lse_extend);
    if (with_lse) {
        validate::tensor(a.lse_extend, "lse_extend", {LB_FLOAT32}, 2);
        validate::extent_equals(a.lse_extend, "lse_extend", 0, T, "T (q_extend rows)");
        validate::extent_equals(a.lse_extend, "lse_extend", 1, Hq, "Hq (q_extend heads)");
    }
    const bool has_mask = !validate::is_absent(a.custom_mask);
    if (has_mask) {
        validate::tensor(a.custom_mask, "custom_mask", {LB_UINT8}, 1);
        validate::tensor(a.mask_indptr, "mask_indptr", {LB_INT64}, 1);
        validate::extent_equals(a.mask_indptr, "mask_indptr", 0, B + 1, "B + 1 (qo_indptr length)");
    } else if (!validate::is_absent(a.mask_indptr)) {
        bad_argument("mask_indptr", "is given but custom_mask is not");
    }
    // window_kv_offsets is read only with a custom mask and a window (SGLang ignores it otherwise).
    const bool use_wko = has_mask && a.sliding_window_size > 0 && !validate::is_absent(a.window_kv_offsets);
    if (use_wko) {
        validate::tensor(a.window_kv_offsets, "window_kv_offsets", {LB_INT32}, 1);
        validate::extent_equals(a.window_kv_offsets, "window_kv_offsets", 0, B, "B (qo_indptr length - 1)");
    }
    if (a.xai_temperature_len == 1) {
        bad_argument("xai_temperature_len", "must be <= 0 (off) or >= 2, got 1 (log2(1) = 0)");
    }
    if (a.max_len_extend < 0 || a.max_len_extend > (int64_t{1} << 28)) {
        bad_argument("max_len_extend", "must be in [0, 2^28], got " + std::to_string(a.max_len_extend));
    }
    if (!std::isfinite(a.sm_scale) || a.sm_scale < 0) bad_argument("sm_scale", "must be finite and >= 0 (0: 1/sqrt(Lq))");
    if (!std::isfinite(a.logit_cap) || a.logit_cap < 0) bad_argument("logit_cap", "must be finite and >= 0 (0: off)");
    if (!std::isfinite(a.k_scale)) bad_argument("k_scale", "must be finite");
    if (!std::isfinite(a.v_scale)) bad_argument("v_scale", "must be finite");

    if (device.type == LB_DEVICE_CUDA) {
        throw Failure(LB_ERROR_UNSUPPORTED, "argument 'device': no CUDA variant of K7 extend_attention_fwd yet");
    }
    const Variant *v = nullptr;
    const Dt want = dt == LB_BFLOAT16 ? Dt::bf16 : Dt::fp16;
    for (const auto &c : kVariants) {
        if (c.target == Target::cpu && c.form == a.variant && c.dtype == want && c.head_dim_qk == Lq &&
            c.head_dim_v == Lv && c.index_dtype == a.kv_indices.dtype) {
            v = &c;
        }
    }
    if (!v) {
        throw Failure(LB_ERROR_UNSUPPORTED, "argument 'q_extend': no K7 variant for dtype " + std::string(validate::dtype_name(dt)) +
                                                ", Lq = " + std::to_string(Lq) + ", Lv = " + std::to_string(Lv) +
                                                ", kv_indices " + validate::dtype_name(a.kv_indices.dtype) +
                                                " (built: bf16/fp16 x 128/128, 64/64, bf16 576/512; int32 indices for bf16 128/128)");
    }
    check_values(a, B, T, num_slots);
    if (has_mask) check_mask_values(a, B, use_wko);

    // ---- call ----
    // No query row: nothing to write, nothing runs.
    if (B == 0 || T == 0 || validate::host_element(a.qo_indptr, B) == validate::host_element(a.qo_indptr, 0)) return;

    PipelineCall call(device);
    // CPU-side stand-ins for absent or empty inputs (the kernel never reads them then):
    // one index and one cache slot when there is no prefix, zero sinks, an LSE scratch.
    std::vector<int64_t> dummy_index(1, 0);
    std::vector<uint16_t> dummy_k(static_cast<size_t>(Hkv * Lq), 0), dummy_v(static_cast<size_t>(Hkv * Lv), 0);
    std::vector<float> dummy_sinks(static_cast<size_t>(Hq), 0.0f);
    std::vector<float> lse_scratch;

    lb_tensor kv_indices = a.kv_indices;
    if (kv_indices.shape[0] == 0) {
        kv_indices = lb_tensor{};
        kv_indices.data = dummy_index.data();
        kv_indices.dtype = a.kv_indices.dtype;
        kv_indices.ndim = 1;
        kv_indices.shape[0] = 1;
        kv_indices.strides[0] = 1;
    }
    lb_tensor k_buffer = a.k_buffer, v_buffer = a.v_buffer;
    if (num_slots == 0) {
        k_buffer.data = dummy_k.data();
        v_buffer.data = dummy_v.data();
        k_buffer.shape[0] = v_buffer.shape[0] = 1;
        k_buffer.strides[0] = Hkv * Lq;
        v_buffer.strides[0] = Hkv * Lv;
        k_buffer.strides[1] = Lq;
        v_buffer.strides[1] = Lv;
        k_buffer.strides[2] = v_buffer.strides[2] = 1;
    }
    const bool has_sinks = !validate::is_absent(a.sinks);
    lb_tensor sinks = a.sinks;
    if (!has_sinks) sinks = lb_tensor{dummy_sinks.data(), LB_FLOAT32, 1, {Hq}, {1}};
    lb_tensor lse = a.lse_extend;
    if (!with_lse) {
        lse_scratch.assign(static_cast<size_t>(T * Hq), 0.0f);
        lse = lb_tensor{lse_scratch.data(), LB_FLOAT32, 2, {T, Hq}, {Hq, 1}};
    }

    halide_buffer_t *q = call.wrap_nd(a.q_extend, "q_extend");
    halide_buffer_t *k = call.wrap_nd(a.k_extend, "k_extend");
    halide_buffer_t *vv = call.wrap_nd(a.v_extend, "v_extend");
    halide_buffer_t *kb = call.wrap_nd(k_buffer, "k_buffer");
    halide_buffer_t *vb = call.wrap_nd(v_buffer, "v_buffer");
    halide_buffer_t *qo = call.wrap_1d(a.qo_indptr, "qo_indptr", B + 1);
    halide_buffer_t *kvp = call.wrap_1d(a.kv_indptr, "kv_indptr", B + 1);
    halide_buffer_t *kvi = call.wrap_1d(kv_indices, "kv_indices", kv_indices.shape[0]);
    halide_buffer_t *sk = call.wrap_nd(sinks, "sinks");
    uint8_t dummy_mask = 0;
    int64_t dummy_mask_indptr = 0;
    int32_t dummy_wko = 0;
    const lb_tensor mask = has_mask ? a.custom_mask : lb_tensor{&dummy_mask, LB_UINT8, 1, {1}, {1}};
    const lb_tensor mask_indptr = has_mask ? a.mask_indptr : lb_tensor{&dummy_mask_indptr, LB_INT64, 1, {1}, {1}};
    const lb_tensor wko = use_wko ? a.window_kv_offsets : lb_tensor{&dummy_wko, LB_INT32, 1, {1}, {1}};
    halide_buffer_t *cm = call.wrap_nd(mask.shape[0] > 0 ? mask : lb_tensor{&dummy_mask, LB_UINT8, 1, {1}, {1}}, "custom_mask");
    halide_buffer_t *mi = call.wrap_nd(mask_indptr, "mask_indptr");
    halide_buffer_t *wk = call.wrap_nd(wko.shape[0] > 0 ? wko : lb_tensor{&dummy_wko, LB_INT32, 1, {1}, {1}}, "window_kv_offsets");
    bool has_mask_arg = has_mask, skip_prefix_mask = a.skip_prefix_custom_mask != 0, use_wko_arg = use_wko;
    bool skip_prefix = a.skip_prefix != 0, skip_extend = a.skip_extend != 0;
    int32_t xai_len = a.xai_temperature_len;
    halide_buffer_t *o = call.wrap_nd(a.o_extend, "o_extend");
    halide_buffer_t *l = call.wrap_nd(lse, "lse_extend");
    bool has_sinks_arg = has_sinks, causal = a.is_causal != 0;
    int32_t window = a.sliding_window_size, max_len = static_cast<int32_t>(a.max_len_extend);
    float sm_scale = a.sm_scale, logit_cap = a.logit_cap, k_scale = a.k_scale, v_scale = a.v_scale;
    call.run(v->run, {call.user_context(), q, k, vv, kb, vb, qo, kvp, kvi, sk, &has_sinks_arg, &causal, &window,
                      &max_len, &sm_scale, &logit_cap, &k_scale, &v_scale, cm, mi, wk, &has_mask_arg, &skip_prefix_mask,
                      &use_wko_arg, &xai_len, &skip_prefix, &skip_extend, o, l});
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_extend_attention_fwd(const lb_extend_attention_args *args, lb_device device) {
    struct Call {
        const lb_extend_attention_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_extend_attention_fwd",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_extend_attention(*c->args, c->device);
        },
        &call);
}
