/* livebound C ABI: K5, the DSA indexer K + scale gather (spec §3.5).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_DSA_KV_GATHER_H
#define LIVEBOUND_DSA_KV_GATHER_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* K5, SGLang's _get_k_and_s_triton / GetKAndS.triton (spec §3.5). D = index_head_dim.
 * A page of buf holds page_size * D FP8 key bytes (token-major, D bytes per token), then
 * page_size * 4 scale bytes (one raw FP32 per token). With off_b = seq_lens[0] + ... +
 * seq_lens[b-1], for every request b and token t < seq_lens[b]:
 *   pg = page_indices[b, t / page_size],  j = t % page_size
 *   k_out[off_b + t, 0:D] = buf[pg, j*D : j*D + D]
 *   s_out[off_b + t, 0:4] = buf[pg, page_size*D + 4*j : page_size*D + 4*j + 4]
 * Rows [0, seq_len_sum) of k_out and s_out are all written; nothing else is (rows past
 * seq_len_sum and bytes past a row's D or 4 keep their contents). Both variants write the
 * same bytes: LB_BOUNDED visits only live tokens (t < seq_lens[b]), LB_FULL_WIDTH visits
 * every t < max_seq_len of every request and masks (SGLang before PR #32109).
 *
 * Preconditions: seq_len_sum == sum(seq_lens), max_seq_len >= every seq_lens[b] >= 0,
 * cdiv(seq_lens[b], page_size) <= max_pages, every page id a live token uses in
 * [0, num_pages). On the CPU they are checked (LB_ERROR_INVALID_ARGUMENT naming the
 * argument). On CUDA seq_lens and page_indices live on the device and are not read by the
 * host (that would need a sync): the caller guarantees them. If they are broken the result
 * is undefined but memory-safe: page columns and page ids are clamped into their tables,
 * lengths into [0, max_seq_len], and no byte outside rows [0, seq_len_sum) of k_out and
 * s_out is ever written.
 *
 * Every byte offset into buf is 64-bit (SGLang's int32 page_id * page_bytes wraps for page
 * ids >= 254,201 at D = 128, page_size = 64).
 *
 * buf, k_out and s_out are read and written as 4-byte words: their data pointers must be
 * 4-byte aligned and their row strides multiples of 4 (torch allocations are).
 * The caller allocates k_out and s_out; livebound never allocates. */
typedef struct lb_dsa_kv_gather_args {
    lb_tensor buf;           /* [num_pages, page_size * (index_head_dim + 4)] uint8, any row stride
                                (a multiple of 4): the paged index-key buffer */
    lb_tensor page_indices;  /* [B, max_pages] int32 | int64, any row stride: page id of each
                                request's k-th page */
    lb_tensor seq_lens;      /* [B] int64 | int32, any stride: tokens per request */
    lb_tensor k_out;         /* out, [>= seq_len_sum, index_head_dim] uint8, any row stride (a
                                multiple of 4): key rows [0, seq_len_sum) written */
    lb_tensor s_out;         /* out, [>= seq_len_sum, 4] uint8, any row stride (a multiple of 4):
                                scale bytes of rows [0, seq_len_sum) written */
    int64_t seq_len_sum;     /* == sum(seq_lens), in [0, 2^31): rows written */
    int64_t max_seq_len;     /* >= every seq_lens[b], in [0, 2^31): tokens per request the grid covers */
    int32_t page_size;       /* tokens per page, in [1, 2^20] (SGLang: 64) */
    int32_t index_head_dim;  /* D, key bytes per token; this build: 128 */
    lb_variant variant;
} lb_dsa_kv_gather_args;

LB_API lb_status lb_get_k_and_s(const lb_dsa_kv_gather_args *args, lb_device device);

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_DSA_KV_GATHER_H */
