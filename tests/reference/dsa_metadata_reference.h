// Plain C++ reference of K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata
// (spec §3.2, §3.3), written from the spec's formulas and nothing else (no Halide, no
// livebound code):
//
//   dsa_len(x)  = min(x, topk)                                   (index_kpool P <= 1)
//               = min(full, topk) + (x - full), full = (x / P) * P  (P > 1, `/` truncates)
//   K2, per request b, s = int32(seq_lens[b]):
//     cache_seqlens[b] = s ; dsa_cache_seqlens[b] = dsa_len(s) ; cu / dsa_cu exclusive prefix sums
//     live_b = min(s, max_len), and 0 when that is < 0
//     page_table_1[b, c]    = req_to_token[rpi[b], c]              c < live_b
//     real_page_table[b, j] = req_to_token[rpi[b], j*rps] / rps    j*rps < live_b  (rps > 1)
//   K3, E = bs * next_n, row e of request r = e / next_n, d = e % next_n, s = int32(seq_lens[r]):
//     cache_seqlens[r] = s + next_n ; cu exclusive prefix sums ([bs + 1])
//     seqlens_expanded[e] = s + d + 1 ; dsa_cache_seqlens[e] = dsa_len(seqlens_expanded[e])
//     dsa_cu exclusive prefix sums ([E + 1]) ; paged_mqa_ctx_lens_2d[r, d] = s + next_n
//     tables of row e: request r's row with live = min(s + next_n, max_seqlen_k)
//
// int32 arithmetic wraps (two's complement), as torch / Triton int32 does. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace livebound::reference {

namespace dsa_detail {

inline int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }
inline int32_t add32(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }

}  // namespace dsa_detail

// min(x, topk) with the index_kpool rule (C++ `/` truncates toward zero, as Triton's `//` on ints).
inline int32_t dsa_length(int32_t x, int32_t topk, int32_t index_kpool) {
    const int32_t p = index_kpool < 1 ? 1 : index_kpool;
    const int32_t full = (x / p) * p;
    return dsa_detail::add32(std::min(full, topk), dsa_detail::wrap32(int64_t{x} - full));
}

// Exclusive prefix sums in int32 (wrapping): out[0] = 0, out[i + 1] = out[i] + v[i].
inline std::vector<int32_t> exclusive_prefix_sums(const std::vector<int32_t> &v) {
    std::vector<int32_t> out(v.size() + 1, 0);
    for (size_t i = 0; i < v.size(); ++i) out[i + 1] = dsa_detail::add32(out[i], v[i]);
    return out;
}

// The inputs of one K2 or K3 call, as host values.
struct DsaMetadataInputs {
    std::vector<int64_t> seq_lens;          // [bs] raw values
    std::vector<int64_t> req_pool_indices;  // [bs]
    // [pool_rows, ctx] int32, element (r, c) at req_to_token[r * row_stride + c].
    const int32_t *req_to_token = nullptr;
    int64_t pool_rows = 0, ctx = 0, row_stride = 0;
    int64_t width = 0;        // max_len (K2) or max_seqlen_k (K3)
    int32_t topk = 0;
    int32_t real_page_size = 1;  // a power of two
    int32_t index_kpool = 1;
    int32_t next_n = 0;          // 0: K2; >= 1: K3
};

struct DsaMetadataExpected {
    std::vector<int32_t> cache_seqlens;      // [bs]
    std::vector<int32_t> cu_seqlens_k;       // [bs + 1]
    std::vector<int32_t> seqlens_expanded;   // [E] (K3 only)
    std::vector<int32_t> dsa_cache_seqlens;  // [bs] (K2) or [E] (K3)
    std::vector<int32_t> dsa_cu_seqlens_k;   // [bs + 1] or [E + 1]
    std::vector<std::vector<int32_t>> ctx_lens_2d;  // [bs][next_n] (K3 only)
    int64_t rows = 0;                         // table rows: bs (K2) or E (K3)
    int64_t real_columns = 0;                 // cdiv(width, rps)
    std::vector<int64_t> live_tokens;         // [rows]: page_table_1 live prefix, in [0, width]
    std::vector<int64_t> live_pages;          // [rows]: real table live prefix, cdiv(live_tokens, rps)
    // [rows][width] / [rows][real_columns]: what the full-width twin writes (the gather of
    // every column); the live prefix of each row is the bounded form's.
    std::vector<std::vector<int32_t>> page_table_1;
    std::vector<std::vector<int32_t>> real_page_table;
};

namespace dsa_detail {

inline int32_t slot(const DsaMetadataInputs &in, int64_t row, int64_t column) {
    if (row < 0 || row >= in.pool_rows || column < 0 || column >= in.ctx) {
        throw std::out_of_range("reference: req_to_token[" + std::to_string(row) + ", " + std::to_string(column) +
                                "] is outside [" + std::to_string(in.pool_rows) + ", " + std::to_string(in.ctx) + "]");
    }
    return in.req_to_token[row * in.row_stride + column];
}

// Table row of request `r` with kv length `kv`, into `out` (row index `e`).
inline void table_row(const DsaMetadataInputs &in, int64_t r, int32_t kv, DsaMetadataExpected *out, int64_t e) {
    const int64_t live = std::max<int64_t>(0, std::min<int64_t>(kv, in.width));
    out->live_tokens[e] = live;
    out->live_pages[e] = (live + in.real_page_size - 1) / in.real_page_size;
    const int64_t pool_row = in.req_pool_indices[r];
    auto &pt = out->page_table_1[e];
    pt.resize(in.width);
    for (int64_t c = 0; c < in.width; ++c) pt[c] = slot(in, pool_row, c);
    auto &real = out->real_page_table[e];
    real.resize(out->real_columns);
    for (int64_t j = 0; j < out->real_columns; ++j) real[j] = pt[j * in.real_page_size] / in.real_page_size;
}

}  // namespace dsa_detail

inline DsaMetadataExpected dsa_metadata(const DsaMetadataInputs &in) {
    const int64_t bs = static_cast<int64_t>(in.seq_lens.size());
    if (static_cast<int64_t>(in.req_pool_indices.size()) != bs) throw std::invalid_argument("reference: rpi size");
    if (in.width > in.ctx) throw std::invalid_argument("reference: width > ctx");
    DsaMetadataExpected out;
    const bool verify = in.next_n > 0;
    const int64_t n = verify ? in.next_n : 1;
    out.rows = bs * n;
    out.real_columns = (in.width + in.real_page_size - 1) / in.real_page_size;
    out.live_tokens.resize(out.rows);
    out.live_pages.resize(out.rows);
    out.page_table_1.resize(out.rows);
    out.real_page_table.resize(out.rows);
    for (int64_t r = 0; r < bs; ++r) {
        const int32_t s = dsa_detail::wrap32(in.seq_lens[r]);
        if (!verify) {
            out.cache_seqlens.push_back(s);
            out.dsa_cache_seqlens.push_back(dsa_length(s, in.topk, in.index_kpool));
            dsa_detail::table_row(in, r, s, &out, r);
            continue;
        }
        const int32_t kv = dsa_detail::add32(s, in.next_n);
        out.cache_seqlens.push_back(kv);
        out.ctx_lens_2d.emplace_back(in.next_n, kv);
        for (int32_t d = 0; d < in.next_n; ++d) {
            const int32_t expanded = dsa_detail::add32(dsa_detail::add32(s, d), 1);
            out.seqlens_expanded.push_back(expanded);
            out.dsa_cache_seqlens.push_back(dsa_length(expanded, in.topk, in.index_kpool));
            dsa_detail::table_row(in, r, kv, &out, r * n + d);
        }
    }
    out.cu_seqlens_k = exclusive_prefix_sums(out.cache_seqlens);
    out.dsa_cu_seqlens_k = exclusive_prefix_sums(out.dsa_cache_seqlens);
    return out;
}

}  // namespace livebound::reference
