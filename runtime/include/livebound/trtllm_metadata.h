/* livebound C ABI: K4 update_trtllm_mha_graph_metadata (spec §3.4).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_TRTLLM_METADATA_H
#define LIVEBOUND_TRTLLM_METADATA_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

/* q_mode values (SGLang's Q_MODE_* constants). */
#define LB_Q_MODE_NONE 0    /* decode / target-verify: cu_seqlens_q is preset and left alone */
#define LB_Q_MODE_CUMSUM 1  /* draft-extend: cu_seqlens_q[i+1] = qlens[0] + ... + qlens[i] */
#define LB_Q_MODE_STRIDED 2 /* draft-extend v2: cu_seqlens_q[i+1] = (i+1) * q_stride */

/* K4, SGLang's update_trtllm_mha_graph_metadata (spec §3.4). For i in [0, bs):
 *   L_i = int32(seq_lens[i] + seqlen_offset)                      -> cache_seqlens[i]
 *   cu_seqlens_k[i+1] = L_0 + ... + L_i          (cu_seqlens_k[0] is NOT written)
 *   q_mode 1: cu_seqlens_q[i+1] = qlens[0] + ... + qlens[i];  q_mode 2: (i+1) * q_stride
 *   live_i = min(cdiv(L_i, page_size), max_seq_pages)
 *   for p < live_i:  t = req_to_token[req_pool_indices[i], p * page_size]
 *       page_table[i, p] = t / page_size                (C division: truncates, -1 -> 0)
 *       m = t >= 0 ? swa_mapping[t] : -1                                     (SWA only)
 *       swa_page_table[i, p] = m < 0 ? -1 : int32(m / page_size)
 *   pages p >= live_i are not written (LB_BOUNDED; LB_FULL_WIDTH writes every p < max_seq_pages)
 *   num_real = min(swa_out_len, len(out_cache_loc)), 0 without out_cache_loc
 *   swa_out_cache_loc[k] = k < num_real ? (out_cache_loc[k] < 0 ? -1 : swa_mapping[out_cache_loc[k]]) : 0
 * bs == 0: nothing is written. skip_page_table: page tables neither read nor written. */
typedef struct lb_trtllm_mha_graph_metadata_args {
    lb_tensor req_pool_indices;  /* [>= bs] int32 | int64: request-pool row of entry i (entries [0, bs) read) */
    lb_tensor seq_lens;          /* [>= bs] int32 | int64: kv lengths (entries [0, bs) read) */
    lb_tensor req_to_token;      /* [pool_rows, ctx] int32: KV slot of each token position, -1 allowed */
    lb_tensor swa_mapping;       /* optional, [n] int64: full slot -> SWA slot, -1 = none; required by
                                    swa_page_table and swa_out_cache_loc */
    lb_tensor out_cache_loc;     /* optional, [num_out] int64: full slots written this step, -1 = none */
    lb_tensor qlens;             /* q_mode 1 only, [>= bs] int32 | int64: query lengths */
    lb_tensor cache_seqlens;     /* out, [>= bs] int32: entries [0, bs) written */
    lb_tensor cu_seqlens_k;      /* out, [>= bs + 1] int32: entries [1, bs] written, entry 0 untouched */
    lb_tensor cu_seqlens_q;      /* out, q_mode 1/2 only, [>= bs + 1] int32: entries [1, bs] written */
    lb_tensor page_table;        /* out, [>= bs, >= max_seq_pages] int32, any row stride; absent ok
                                    with skip_page_table */
    lb_tensor swa_page_table;    /* out, optional, same shape rules as page_table (needs swa_mapping) */
    lb_tensor swa_out_cache_loc; /* out, optional, [swa_out_len] int64: every entry written (needs swa_mapping) */
    int64_t bs;                  /* batch size: requests [0, bs) */
    int64_t max_seq_pages;       /* page-table columns the launch covers (the full width), [0, 2^31) */
    int32_t seqlen_offset;       /* added to every seq_lens[i] */
    int32_t page_size;           /* tokens per page, a power of two in [1, 2^20] */
    int32_t q_stride;            /* tokens per request (q_mode 2) */
    int32_t q_mode;              /* LB_Q_MODE_NONE | LB_Q_MODE_CUMSUM | LB_Q_MODE_STRIDED */
    int32_t skip_page_table;     /* non-zero: page tables are filled elsewhere (unified pool) */
    lb_variant variant;          /* LB_BOUNDED or LB_FULL_WIDTH (the page tables' form) */
} lb_trtllm_mha_graph_metadata_args;

LB_API lb_status lb_update_trtllm_mha_graph_metadata(const lb_trtllm_mha_graph_metadata_args *args, lb_device device);

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_TRTLLM_METADATA_H */
