/* livebound C ABI: K7 extend_attention_fwd and K8 extend_attention_fwd_unified (spec §3.7, §3.8).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_EXTEND_ATTENTION_H
#define LIVEBOUND_EXTEND_ATTENTION_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floating-point element types of the attention tensors (lb_dtype covers the index types;
 * these codes do not overlap with it). */
typedef enum lb_float_dtype { LB_FLOAT16 = 16, LB_BFLOAT16 = 17, LB_FLOAT32 = 18 } lb_float_dtype;

/* A strided view of up to 3 dimensions of floating-point caller memory: shape/strides
 * row-major (torch order), strides in elements; the last dimension must be contiguous
 * (stride 1). An absent optional tensor is all zeros (data NULL, ndim 0). */
typedef struct lb_attn_tensor {
    void *data;
    lb_float_dtype dtype;
    int32_t ndim;
    int64_t shape[3];
    int64_t strides[3];
} lb_attn_tensor;

/* K7, SGLang's extend_attention_fwd / _fwd_kernel (spec §3.7, with the #32109 dead-tile
 * exit and the #34462 window lower bound, derived by Halide and applied to both stages).
 * Request b: query rows q0 = qo_indptr[b] .. q0 + E - 1 (E = qo_indptr[b+1] - q0), prefix
 * keys kv_indices[kv_indptr[b] + j], j < P (P = kv_indptr[b+1] - kv_indptr[b]). Query m
 * (position P + m) sees prefix key j iff W <= 0 or (P + m) - j <= W, and extend key n < E
 * iff (not causal or n <= m) and (W <= 0 or (m - n <= W and (causal or n - m <= W))).
 *   s = capped(q . k * sm_scale [* k_scale for the prefix]), capped(x) = cap*tanh(x/cap)
 *   o[q0+m, h] = sum_visible e^(s-M) v [* v_scale for the prefix] / (sum_visible e^(s-M) + [sinks] e^(sink[h]-M))
 *   lse[q0+m, h] = ln(denominator) + M
 * fp32 accumulation; a row that sees nothing and has no sink gets o = 0, lse = -inf.
 * Not yet supported (LB_ERROR_UNSUPPORTED / absent fields): custom_mask + mask_indptr,
 * skip_prefix_custom_mask, window_kv_offsets, xai temperature, skip_prefix/skip_extend,
 * FP8 caches, CUDA devices (no CUDA variant yet). Rows of o_extend/lse_extend outside
 * [qo_indptr[0], qo_indptr[B]) are not written. */
typedef struct lb_extend_attention_args {
    lb_attn_tensor q_extend;   /* [T, Hq, Lq] float16 | bfloat16: queries of all extend tokens */
    lb_attn_tensor k_extend;   /* [T, Hkv, Lq] same dtype: keys of the extend tokens (Hq % Hkv == 0) */
    lb_attn_tensor v_extend;   /* [T, Hkv, Lv] same dtype: values of the extend tokens */
    lb_attn_tensor o_extend;   /* out, [T, Hq, Lv] same dtype: rows [qo_indptr[0], qo_indptr[B]) written */
    lb_attn_tensor k_buffer;   /* [num_slots, Hkv, Lq] same dtype: KV cache keys (prefix) */
    lb_attn_tensor v_buffer;   /* [num_slots, Hkv, Lv] same dtype: KV cache values (prefix) */
    lb_tensor qo_indptr;       /* [B + 1] int32: non-decreasing, qo_indptr[0] >= 0, qo_indptr[B] <= T */
    lb_tensor kv_indptr;       /* [B + 1] int32: non-decreasing, kv_indptr[0] >= 0, kv_indptr[B] <= len(kv_indices) */
    lb_tensor kv_indices;      /* [>= kv_indptr[B]] int32 | int64: cache slot of each prefix key, in [0, num_slots) */
    lb_attn_tensor sinks;      /* optional, [Hq] float32: per-head sink logit (not scaled by sm_scale) */
    lb_attn_tensor lse_extend; /* optional out, [T, Hq] float32: natural-log LSE, same rows as o_extend */
    int64_t max_len_extend;    /* >= every E_b (sizes the query-tile axis, as SGLang's grid) */
    int32_t is_causal;         /* non-zero: causal masking inside the extend chunk */
    int32_t sliding_window_size; /* W; <= 0 (SGLang: -1) is off */
    float sm_scale;            /* 0 -> 1/sqrt(Lq) */
    float logit_cap;           /* > 0: tanh soft cap; 0 off */
    float k_scale;             /* dequant scale of the cache keys (prefix only); 1 = none */
    float v_scale;             /* dequant scale of the cache values (prefix only); 1 = none */
    lb_variant variant;        /* LB_BOUNDED (derived bounds) or LB_FULL_WIDTH (every tile, every chunk) */
} lb_extend_attention_args;

LB_API lb_status lb_extend_attention_fwd(const lb_extend_attention_args *args, lb_device device);

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_EXTEND_ATTENTION_H */
