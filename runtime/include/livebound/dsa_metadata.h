/* livebound C ABI: K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata (spec §3.2, §3.3).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status.
 *
 * Both rebuild DeepSeek Sparse Attention's metadata once per decode (K2) or target-verify
 * (K3) step: kv lengths and their prefix sums, the lengths clamped to the indexer top-k
 * and their prefix sums, the token-slot table page_table_1 (page size 1) and the compact
 * real_page_table (page size real_page_size).
 *
 * Shared rules:
 *   - bs is seq_lens' length (slice padded graph buffers to the live batch). Every other
 *     tensor may be longer / wider than what is written; nothing past it is touched.
 *   - seq_lens and req_pool_indices are both int64 or both int32.
 *   - real_page_size is a power of two in [1, 2^20]; page ids are slot / real_page_size
 *     rounded toward zero (Triton's `//`).
 *   - real_page_size == 1 means "real_page_table IS page_table_1" (SGLang passes the same
 *     tensor): livebound then writes page_table_1 only. real_page_table must be absent or
 *     describe exactly page_table_1 (same data, shape and strides); anything else is an
 *     argument error. real_page_size > 1: page_table_1 is optional (absent: only the real
 *     table is written), real_page_table is required.
 *   - index_kpool P: 0 or 1 = no kpool rounding (SGLang's default index_kpool = 1); P > 1:
 *       full = (len / P) * P ;  dsa_len = min(full, dsa_index_topk) + (len - full)
 *     (P = 1 gives the PR-era min(len, dsa_index_topk)).
 *   - bs == 0: cu_seqlens_k[0] = 0 and dsa_cu_seqlens_k[0] = 0 are written, nothing else,
 *     and no kernel is launched.
 *
 * Live-prefix contract (LB_BOUNDED), STRICTER than SGLang's: SGLang skips whole 128-column
 * blocks past the kv length but writes every lane of the last, partially live block (spec
 * §1.3), so its defined region is the live prefix and its written set is up to
 * cdiv(kv, 128) * 128 columns. livebound writes ONLY the live prefix:
 *   page_table_1[row, c]      for c < min(kv, width)
 *   real_page_table[row, j]   for j * real_page_size < min(kv, width)
 * and never any element past it (nor any row >= the output row count, nor any column >=
 * the width). kv = seq_lens[b] (K2) or seq_lens[r] + next_n (K3); width = max_len (K2)
 * or max_seqlen_k (K3). LB_FULL_WIDTH writes every column below the width (SGLang before
 * PR #32109) and the real table's first cdiv(width, real_page_size) columns.
 */
#ifndef LIVEBOUND_DSA_METADATA_H
#define LIVEBOUND_DSA_METADATA_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* K2, SGLang's fused_dsa_decode_metadata (spec §3.2). Per request b, s_b = int32(seq_lens[b]):
 *   cache_seqlens[b] = s_b ;                 cu_seqlens_k = [0, s_0, s_0 + s_1, ...]
 *   dsa_cache_seqlens[b] = dsa_len(s_b) ;    dsa_cu_seqlens_k likewise
 *   for c < min(s_b, max_len):        v = req_to_token[req_pool_indices[b], c]
 *       page_table_1[b, c] = v
 *       if c % rps == 0:  real_page_table[b, c / rps] = v / rps          (rps > 1) */
typedef struct lb_dsa_decode_metadata_args {
    lb_tensor seq_lens;           /* [bs] int64 | int32: kv length s_b */
    lb_tensor req_pool_indices;   /* [bs] same dtype as seq_lens: request-pool row of request b */
    lb_tensor req_to_token;       /* [pool_rows, >= max_len] int32: token slot of each position */
    lb_tensor cache_seqlens;      /* out, [>= bs] int32: entries [0, bs) written */
    lb_tensor cu_seqlens_k;       /* out, [>= bs + 1] int32: entries [0, bs] written */
    lb_tensor page_table_1;       /* out, optional when real_page_size > 1: [>= bs, >= max_len] int32,
                                     any row stride; live prefix only (LB_BOUNDED) */
    lb_tensor dsa_cache_seqlens;  /* out, [>= bs] int32 */
    lb_tensor dsa_cu_seqlens_k;   /* out, [>= bs + 1] int32 */
    lb_tensor real_page_table;    /* out, required when real_page_size > 1:
                                     [>= bs, >= cdiv(max_len, real_page_size)] int32, any row stride;
                                     real_page_size == 1: absent or identical to page_table_1 */
    int64_t max_len;              /* width of page_table_1 (the static graph width), in [1, 2^30] */
    int32_t dsa_index_topk;       /* indexer top-k, >= 0 */
    int32_t real_page_size;       /* page size of real_page_table, a power of two in [1, 2^20] */
    int32_t index_kpool;          /* 0 or 1: none; P > 1: the kpool rounding above */
    lb_variant variant;
} lb_dsa_decode_metadata_args;

LB_API lb_status lb_fused_dsa_decode_metadata(const lb_dsa_decode_metadata_args *args, lb_device device);

/* K3, SGLang's fused_dsa_target_verify_metadata (spec §3.3). E = bs * next_n expanded rows;
 * row e belongs to request r = e / next_n, draft offset d = e % next_n; s_r = int32(seq_lens[r]):
 *   cache_seqlens[r] = s_r + next_n ;        cu_seqlens_k = exclusive prefix sums ([bs + 1])
 *   seqlens_expanded[e] = s_r + d + 1 ;      dsa_cache_seqlens[e] = dsa_len(seqlens_expanded[e])
 *   dsa_cu_seqlens_k = exclusive prefix sums of dsa_cache_seqlens ([E + 1])
 *   paged_mqa_ctx_lens_2d[r, d] = s_r + next_n                          (optional output)
 *   every row e of request r gets request r's identical table row, guarded on s_r + next_n:
 *   for c < min(s_r + next_n, max_seqlen_k):  v = req_to_token[req_pool_indices[r], c]
 *       page_table_1[e, c] = v ;  if c % rps == 0: real_page_table[e, c / rps] = v / rps */
typedef struct lb_dsa_target_verify_metadata_args {
    lb_tensor seq_lens;               /* [bs] int64 | int32: kv length s_r before the draft tokens */
    lb_tensor req_pool_indices;       /* [bs] same dtype as seq_lens: request-pool row of request r */
    lb_tensor req_to_token;           /* [pool_rows, >= max_seqlen_k] int32: token slots */
    lb_tensor cache_seqlens;          /* out, [>= bs] int32 */
    lb_tensor cu_seqlens_k;           /* out, [>= bs + 1] int32 */
    lb_tensor page_table_1;           /* out, optional when real_page_size > 1: [>= E, >= max_seqlen_k] int32 */
    lb_tensor seqlens_expanded;       /* out, [>= E] int32 */
    lb_tensor dsa_cache_seqlens;      /* out, [>= E] int32 */
    lb_tensor dsa_cu_seqlens_k;       /* out, [>= E + 1] int32 */
    lb_tensor real_page_table;        /* out, required when real_page_size > 1:
                                         [>= E, >= cdiv(max_seqlen_k, real_page_size)] int32;
                                         real_page_size == 1: absent or identical to page_table_1 */
    lb_tensor paged_mqa_ctx_lens_2d;  /* out, optional: [>= bs, >= next_n] int32, any strides (a transposed view too) */
    int64_t max_seqlen_k;             /* width of page_table_1 (the graph's max_seqlen_k), in [1, 2^30] */
    int32_t dsa_index_topk;           /* indexer top-k, >= 0 */
    int32_t real_page_size;           /* a power of two in [1, 2^20] */
    int32_t next_n;                   /* draft tokens per request, in [1, 1024] */
    int32_t index_kpool;              /* 0 or 1: none; P > 1: the kpool rounding */
    lb_variant variant;
} lb_dsa_target_verify_metadata_args;

LB_API lb_status lb_fused_dsa_target_verify_metadata(const lb_dsa_target_verify_metadata_args *args,
                                                     lb_device device);

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_DSA_METADATA_H */
