/* livebound C ABI: K7 extend_attention_fwd and K8 extend_attention_fwd_unified (spec §3.7, §3.8).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_dtype (LB_FLOAT16,
 * LB_BFLOAT16, LB_FLOAT32 for the attention tensors), lb_device, lb_status. */
#ifndef LIVEBOUND_EXTEND_ATTENTION_H
#define LIVEBOUND_EXTEND_ATTENTION_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* K7, SGLang's extend_attention_fwd / _fwd_kernel (spec §3.7, with the #32109 dead-tile
 * exit and the #34462 window lower bound, derived by Halide and applied to both stages).
 * Request b: query rows q0 = qo_indptr[b] .. q0 + E - 1 (E = qo_indptr[b+1] - q0), prefix
 * keys kv_indices[kv_indptr[b] + j], j < P (P = kv_indptr[b+1] - kv_indptr[b]). Query m
 * (position P + m) sees prefix key j iff W <= 0 or (P + m) - j <= W, and extend key n < E
 * iff (not causal, or a custom mask, or n <= m) and (W <= 0 or (m - n <= W and (causal or
 * n - m <= W))).
 *   s = capped(q . k * sm_scale [* k_scale for the prefix]), capped(x) = cap*tanh(x/cap)
 *   o[q0+m, h] = sum_visible e^(s-M) v [* v_scale for the prefix] / (sum_visible e^(s-M) + [sinks] e^(sink[h]-M))
 *   lse[q0+m, h] = ln(denominator) + M
 * fp32 accumulation; a row that sees nothing and has no sink gets o = 0, lse = -inf.
 * Custom mask (spec §3.7.2): request b's mask is a row-major E x (P + E + wko) byte matrix at
 * custom_mask[mask_indptr[b]], wko = window_kv_offsets[b] when a custom mask, W > 0 and
 * window_kv_offsets are all given, else 0; prefix key j is column wko + j, extend key n
 * column wko + P + n; nonzero = visible. The mask replaces the causal rule: with is_causal
 * it alone decides which keys after the query are seen (image spans that attend both ways,
 * Gemma 4), and the result is the same as with is_causal = 0 when W <= 0. (SGLang's Triton
 * kernel also cuts its extend loop at a BLOCK_M-dependent point there; livebound has no
 * such cut-off.) The window still applies: m - n <= W, and without is_causal also
 * n - m <= W. With skip_prefix_custom_mask the prefix ignores the mask.
 *   xai_temperature_len = L > 0: s *= (P + m > L) ? log2(P + m) / log2(L) : 1, after the cap.
 *   skip_prefix / skip_extend: that stage contributes nothing (its keys are invisible).
 * KV caches: the model dtype or float8_e4m3fn (both caches alike, scaled by k_scale /
 * v_scale). Index tensors (qo_indptr, kv_indptr, kv_indices, window_kv_offsets, mask_indptr,
 * K8's prefix_lens) are int32 or int64, in any combination. Head dims and the variants each
 * device has: docs/extend_attention.md (CUDA: MLA's 576/512 on tensor cores only). Rows of
 * o_extend/lse_extend outside [qo_indptr[0], qo_indptr[B]) are not written.
 * CUDA: every tensor in device memory of device.index, the call runs on device.stream with
 * nothing allocated and no sync (graph-capturable after one warm-up call); index values are
 * not checked on CUDA (the kernel clamps every data-dependent index: memory-safe, but
 * garbage in, garbage out). */
typedef struct lb_extend_attention_args {
    lb_tensor q_extend;        /* [T, Hq, Lq] float16 | bfloat16: queries of all extend tokens */
    lb_tensor k_extend;        /* [T, Hkv, Lq] same dtype: keys of the extend tokens (Hq % Hkv == 0) */
    lb_tensor v_extend;        /* [T, Hkv, Lv] same dtype: values of the extend tokens */
    lb_tensor o_extend;        /* out, [T, Hq, Lv] same dtype: rows [qo_indptr[0], qo_indptr[B]) written */
    lb_tensor k_buffer;        /* [num_slots, Hkv, Lq] same dtype or float8_e4m3fn: KV cache keys (prefix) */
    lb_tensor v_buffer;        /* [num_slots, Hkv, Lv] k_buffer's dtype: KV cache values (prefix);
                                  MLA: may be a view of k_buffer's first Lv dims */
    lb_tensor qo_indptr;       /* [B + 1] int32 | int64: non-decreasing, qo_indptr[0] >= 0, qo_indptr[B] <= T */
    lb_tensor kv_indptr;       /* [B + 1] int32 | int64: non-decreasing, kv_indptr[0] >= 0,
                                  kv_indptr[B] <= len(kv_indices) */
    lb_tensor kv_indices;      /* [>= kv_indptr[B]] int32 | int64: cache slot of each prefix key, in [0, num_slots) */
    lb_tensor sinks;           /* optional, [Hq] float32: per-head sink logit (not scaled by sm_scale) */
    lb_tensor lse_extend;      /* optional out, [T, Hq] float32: natural-log LSE, same rows as o_extend */
    lb_tensor custom_mask;     /* optional, [n] uint8 (torch bool/uint8), flat: the requests' masks, see above */
    lb_tensor mask_indptr;     /* [B + 1] int32 | int64, required iff custom_mask: mask_indptr[b] >= 0
                                  and mask_indptr[b] + E_b * (P_b + E_b + wko_b) <= n */
    lb_tensor window_kv_offsets; /* optional, [B] int32 | int64 >= 0: read only with custom_mask and W > 0 */
    int64_t max_len_extend;    /* >= every E_b (sizes the query-tile axis, as SGLang's grid) */
    int32_t is_causal;         /* non-zero: causal masking inside the extend chunk */
    int32_t sliding_window_size; /* W; <= 0 (SGLang: -1) is off */
    float sm_scale;            /* 0 -> 1/sqrt(Lq) */
    float logit_cap;           /* > 0: tanh soft cap; 0 off */
    float k_scale;             /* dequant scale of the cache keys (prefix only); 1 = none */
    float v_scale;             /* dequant scale of the cache values (prefix only); 1 = none */
    int32_t skip_prefix_custom_mask; /* non-zero: the custom mask does not apply to prefix keys
                                        (SGLang's default is True; 0 here applies it) */
    int32_t xai_temperature_len; /* L; <= 0 (SGLang: -1) is off; 1 is invalid (log2(1) = 0) */
    int32_t skip_prefix;       /* non-zero: stage 1 (prefix keys) is not computed */
    int32_t skip_extend;       /* non-zero: stage 2 (extend keys) is not computed */
    lb_variant variant;        /* LB_BOUNDED (derived bounds) or LB_FULL_WIDTH (every tile, every chunk) */
} lb_extend_attention_args;

LB_API lb_status lb_extend_attention_fwd(const lb_extend_attention_args *args, lb_device device);

/* K8, SGLang's extend_attention_fwd_unified / _fwd_kernel_unified (spec §3.8): one stage
 * over request b's unified key list kv_indices[kv_indptr[b] .. kv_indptr[b+1]), N = P + E
 * cache slots (the P = prefix_lens[b] prefix slots, then the E extend slots, all already in
 * the cache). Query m (position P + m) sees list key n iff
 *   custom mask given: custom_mask[mask_indptr[b] + m*N + n] != 0 (no causal rule),
 *   else causal: n <= P + m;  and W > 0: (P + m) - n <= W, non-causal also n - (P + m) <= W.
 *   s = capped(q . k * (sm_scale * k_scale)) [* xai], xai = L / (P + m + 1) when P + m >= L
 *   o = (sum e^(s-M) v / (sum e^(s-M) + [sinks] e^(sink[h]-M))) * v_scale
 * No LSE; a row that sees nothing and has no sink gets 0 (as K7; SGLang divides 0 by 0 there and
 * returns NaN: a deliberate difference, docs/extend_attention.md). The dead-tile
 * exit and the window/causal chunk bounds are derived by Halide as in K7. */
typedef struct lb_extend_attention_unified_args {
    lb_tensor q;               /* [T, Hq, Lq] float16 | bfloat16 */
    lb_tensor o;               /* out, [T, Hq, Lv] same dtype: rows [qo_indptr[0], qo_indptr[B]) written */
    lb_tensor k_buffer;        /* [num_slots >= 1, Hkv, Lq] same dtype or float8_e4m3fn (Hq % Hkv == 0) */
    lb_tensor v_buffer;        /* [num_slots, Hkv, Lv] k_buffer's dtype */
    lb_tensor qo_indptr;       /* [B + 1] int32 | int64: non-decreasing, qo_indptr[0] >= 0, qo_indptr[B] <= T */
    lb_tensor kv_indptr;       /* [B + 1] int32 | int64: non-decreasing, kv_indptr[B] <= len(kv_indices);
                                  N_b = kv_indptr[b+1] - kv_indptr[b] must be P_b + E_b */
    lb_tensor kv_indices;      /* [>= kv_indptr[B]] int32 | int64: cache slots, in [0, num_slots) */
    lb_tensor prefix_lens;     /* [B] int32 | int64: P_b >= 0 */
    lb_tensor sinks;           /* optional, [Hq] float32 */
    lb_tensor custom_mask;     /* optional, [n] uint8 flat: request b's E x N matrix at mask_indptr[b] */
    lb_tensor mask_indptr;     /* [B + 1] int32 | int64, required iff custom_mask */
    int64_t max_len_extend;    /* >= every E_b */
    int32_t is_causal;
    int32_t sliding_window_size; /* W; <= 0 is off (window_start_pos cancels: not an argument) */
    float sm_scale;            /* 0 -> 1/sqrt(Lq) */
    float logit_cap;
    float k_scale, v_scale;    /* applied to every key / to the output */
    int32_t xai_temperature_len; /* L; <= 0 is off; 1 is invalid (log2(1) = 0) */
    lb_variant variant;
} lb_extend_attention_unified_args;

LB_API lb_status lb_extend_attention_fwd_unified(const lb_extend_attention_unified_args *args, lb_device device);

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_EXTEND_ATTENTION_H */
