// Plain C++ reference of K4, SGLang's update_trtllm_mha_graph_metadata (spec §3.4),
// written from the spec's formulas and nothing else (no Halide, no livebound code):
//
//   L_i = int32(seq_lens[i] + seqlen_offset)                      -> cache_seqlens[i]
//   cu_seqlens_k[i + 1] = L_0 + ... + L_i        (int32 wrap; cu_seqlens_k[0] NOT written)
//   q_mode 1: cu_seqlens_q[i + 1] = qlens[0] + ... + qlens[i]
//   q_mode 2: cu_seqlens_q[i + 1] = (i + 1) * q_stride
//   live_i = min(cdiv(L_i, PS), max_seq_pages)   (0 when that is < 0)
//   for p < live_i:
//       t = req_to_token[req_pool_indices[i], p * PS]
//       page_table[i, p] = t / PS                (C division: truncates toward zero)
//       m = t >= 0 ? swa_mapping[t] : -1;  swa_page_table[i, p] = m < 0 ? -1 : int32(m / PS)
//   num_real = min(swa_out_len, len(out_cache_loc))   (0 without out_cache_loc)
//   swa_out_cache_loc[k] = k < num_real ? (loc < 0 ? -1 : swa_mapping[loc]) : 0,  loc = out_cache_loc[k]
//
// Header-only; the tests compare livebound's outputs with what this returns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace livebound::reference {

struct TrtllmMetadataInputs {
    std::vector<int64_t> seq_lens;          // [bs] raw values (int32 tensors widened)
    std::vector<int64_t> req_pool_indices;  // [bs]
    std::vector<int64_t> qlens;             // [bs], q_mode 1 only
    // [pool_rows, ctx] int32 row-major, element (r, c) at req_to_token[r * ctx + c].
    const int32_t *req_to_token = nullptr;
    int64_t pool_rows = 0;
    int64_t ctx = 0;
    std::vector<int64_t> swa_mapping;    // empty: no SWA
    bool has_out_cache_loc = false;
    std::vector<int64_t> out_cache_loc;  // [num_out]
    int64_t swa_out_len = 0;             // 0: no swa_out_cache_loc
    int64_t max_seq_pages = 0;
    int32_t seqlen_offset = 0;
    int32_t page_size = 128;  // a power of two
    int32_t q_mode = 0;
    int32_t q_stride = 0;
    bool with_swa_pages = false;
};

struct TrtllmMetadataExpected {
    std::vector<int32_t> cache_seqlens;  // [bs]
    std::vector<int32_t> cu_seqlens_k;   // [bs]: entries 1..bs (element 0 is not written)
    std::vector<int32_t> cu_seqlens_q;   // [bs]: entries 1..bs (q modes 1 and 2), empty for mode 0
    std::vector<int64_t> live_pages;     // [bs] in [0, max_seq_pages]
    // [bs][max_seq_pages]: the gather for every column below max_seq_pages (what the
    // full-width twin writes); the bounded form must match columns < live_pages[i].
    std::vector<std::vector<int32_t>> page_rows;
    std::vector<std::vector<int32_t>> swa_page_rows;  // empty without SWA pages
    std::vector<int64_t> swa_out_cache_loc;           // [swa_out_len]
};

// a + b in int32 with two's-complement wrap-around.
inline int32_t wrap_add_i32(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrap_i32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

inline int64_t trtllm_live_pages(int32_t kv_len, int32_t page_size, int64_t max_seq_pages) {
    // cdiv(L, PS) for L >= 0; any L <= 0 has no live page.
    const int64_t pages = kv_len <= 0 ? 0 : (static_cast<int64_t>(kv_len) + page_size - 1) / page_size;
    return std::min(pages, max_seq_pages);
}

inline TrtllmMetadataExpected trtllm_metadata(const TrtllmMetadataInputs &in) {
    const int64_t bs = static_cast<int64_t>(in.seq_lens.size());
    TrtllmMetadataExpected out;
    int32_t sum_k = 0, sum_q = 0;
    for (int64_t i = 0; i < bs; ++i) {
        const int32_t L = wrap_i32(in.seq_lens[i] + in.seqlen_offset);
        out.cache_seqlens.push_back(L);
        sum_k = wrap_add_i32(sum_k, L);
        out.cu_seqlens_k.push_back(sum_k);
        if (in.q_mode == 1) {
            sum_q = wrap_add_i32(sum_q, wrap_i32(in.qlens.at(i)));
            out.cu_seqlens_q.push_back(sum_q);
        } else if (in.q_mode == 2) {
            out.cu_seqlens_q.push_back(wrap_i32((i + 1) * static_cast<int64_t>(in.q_stride)));
        }
        out.live_pages.push_back(trtllm_live_pages(L, in.page_size, in.max_seq_pages));

        std::vector<int32_t> row, swa_row;
        const int64_t r = in.req_pool_indices.at(i);
        for (int64_t p = 0; p < in.max_seq_pages; ++p) {
            const int64_t c = p * in.page_size;
            if (r < 0 || r >= in.pool_rows || c >= in.ctx) {
                throw std::out_of_range("reference: req_to_token[" + std::to_string(r) + ", " + std::to_string(c) +
                                        "] is outside the table");
            }
            const int32_t t = in.req_to_token[r * in.ctx + c];
            row.push_back(t / in.page_size);  // C++ `/` truncates toward zero, as C and Triton
            if (in.with_swa_pages) {
                const int64_t m = t >= 0 ? in.swa_mapping.at(static_cast<size_t>(t)) : -1;
                swa_row.push_back(m < 0 ? -1 : static_cast<int32_t>(m / in.page_size));
            }
        }
        out.page_rows.push_back(row);
        if (in.with_swa_pages) out.swa_page_rows.push_back(swa_row);
    }
    const int64_t num_out = static_cast<int64_t>(in.out_cache_loc.size());
    const int64_t num_real = in.has_out_cache_loc ? std::min(in.swa_out_len, num_out) : 0;
    for (int64_t k = 0; k < in.swa_out_len; ++k) {
        if (k < num_real) {
            const int64_t loc = in.out_cache_loc[k];
            out.swa_out_cache_loc.push_back(loc < 0 ? -1 : in.swa_mapping.at(static_cast<size_t>(loc)));
        } else {
            out.swa_out_cache_loc.push_back(0);
        }
    }
    return out;
}

}  // namespace livebound::reference
