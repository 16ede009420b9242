/* livebound C ABI: K6 transform_index_page_table_prefill (spec §3.6).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_TRANSFORM_INDEX_H
#define LIVEBOUND_TRANSFORM_INDEX_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* K6, SGLang's transform_index_page_table_prefill (spec §3.6): DSA sparse prefill maps
 * each query token's top-k kv positions to KV slots through the page_size = 1 page table.
 * With cu = cu_seqlens_q, N = num_tokens = cu[bs], for request i and query token
 * t in [cu[i], cu[i+1]), row = page_table_is_expanded ? t : i, and every j < topk:
 *     result[t, j] = topk_indices[t, j] >= 0 ? page_table[row, topk_indices[t, j]] : -1
 * and result[t, j] = -1 for every row t in [N, output_num_tokens). Every element of
 * result[0:output_num_tokens, 0:topk] is written (a compute kernel: nothing is left
 * undefined); LB_BOUNDED and LB_FULL_WIDTH write identical values. N == 0: every row -1.
 *
 * Differences from SGLang's Python entry point, which takes extend_lens_cpu (a host list)
 * and builds cu_seqlens_q on the host when it is not given: livebound never allocates
 * device memory inside a call, so the CALLER builds cu_seqlens_q ([0] + cumsum of the
 * extend lengths, int32) on the call's device and passes it with the host values
 * num_tokens = sum(extend lengths) and max_extend_len = max(extend lengths). The rows
 * >= N are filled by the kernel, on the caller's stream (SGLang fills them on the host).
 *
 * Checks: on the CPU, cu_seqlens_q (cu[0] == 0, non-decreasing, cu[bs] == num_tokens,
 * every extend length <= max_extend_len) and every followed index value
 * (topk_indices[t, j] < max_seqlen_k for t < N) are validated before anything is
 * written. On CUDA they cannot be read without a sync: the kernel clamps every
 * data-dependent index (memory safety), and invalid contents give unspecified values.
 * CUDA-graph capture: num_tokens, max_extend_len and output_num_tokens are baked into
 * the launch; cu_seqlens_q's contents may change between replays as long as they stay
 * valid for them. */
typedef struct lb_transform_index_args {
    lb_tensor page_table;   /* [bs, max_seqlen_k] int32 (or [>= N rows, max_seqlen_k] when
                               page_table_is_expanded: one row per query token), any row
                               stride: KV slot of each kv position of the row */
    lb_tensor topk_indices; /* [T, topk] int32, any row stride, N <= T <= output_num_tokens:
                               per query token, kv positions into its page-table row; any
                               negative value (SGLang: -1) = empty; rows >= N are not read */
    lb_tensor cu_seqlens_q; /* [bs + 1] int32, any stride, on the call's device: query-token
                               offsets of the requests (cu[0] = 0, cu[i+1] - cu[i] = extend
                               length of request i, cu[bs] = num_tokens); bs = shape[0] - 1,
                               <= 65535 on CUDA (grid z) */
    lb_tensor result;       /* out, [>= output_num_tokens, >= topk] int32, any row stride:
                               rows [0, output_num_tokens) x columns [0, topk) written,
                               nothing else */
    int64_t num_tokens;        /* N = cu_seqlens_q[bs] (host value) */
    int64_t max_extend_len;    /* >= every extend length (host value; sizes the q axis of the
                                  grid; a CUDA graph's bucket may exceed the batch maximum) */
    int64_t output_num_tokens; /* result rows written; N <= T <= output_num_tokens */
    int32_t page_size;         /* must be 1 (SGLang's transform supports only page_size 1) */
    int32_t page_table_is_expanded; /* non-zero: page_table row = query token t, else request i */
    lb_variant variant;
} lb_transform_index_args;

LB_API lb_status lb_transform_index_page_table_prefill(const lb_transform_index_args *args, lb_device device);

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_TRANSFORM_INDEX_H */
