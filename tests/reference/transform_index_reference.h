// Plain C++ reference of K6, SGLang's transform_index_page_table_prefill (spec §3.6),
// written from the spec's formulas and nothing else (no Halide, no livebound code):
//
//   N = cu[bs];  for request i and query token t in [cu[i], cu[i+1]):
//       row          = page_table_is_expanded ? t : i
//       result[t, j] = topk_indices[t, j] >= 0 ? page_table[row, topk_indices[t, j]] : -1
//   result[t, j] = -1 for every t in [N, output_num_tokens)
//
// (SGLang's own reference: a torch.gather with the indices clamped to >= 0, then -1 where
// the index was negative.) Header-only; the tests compare livebound's outputs with it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace livebound::reference {

// The inputs of one K6 call, as host values.
struct TransformIndexInputs {
    // [rows, max_seqlen_k] int32, element (r, k) at page_table[r * page_table_row_stride + k].
    const int32_t *page_table = nullptr;
    int64_t page_table_rows = 0;
    int64_t max_seqlen_k = 0;
    int64_t page_table_row_stride = 0;
    // [T, topk] int32, element (t, j) at topk_indices[t * topk_row_stride + j].
    const int32_t *topk_indices = nullptr;
    int64_t num_rows = 0;  // T
    int64_t topk = 0;
    int64_t topk_row_stride = 0;
    // [bs + 1]: query-token offsets (cu[0] = 0, non-decreasing).
    std::vector<int64_t> cu_seqlens_q;
    bool page_table_is_expanded = false;
    int64_t output_num_tokens = 0;
};

// [output_num_tokens][topk] int32: every element of the result.
inline std::vector<std::vector<int32_t>> transform_index(const TransformIndexInputs &in) {
    if (in.cu_seqlens_q.empty()) throw std::invalid_argument("reference: cu_seqlens_q is empty");
    const int64_t bs = static_cast<int64_t>(in.cu_seqlens_q.size()) - 1;
    const int64_t n = in.cu_seqlens_q[bs];
    if (n > in.num_rows || in.num_rows > in.output_num_tokens) {
        throw std::invalid_argument("reference: needs N <= T <= output_num_tokens");
    }
    std::vector<std::vector<int32_t>> out(in.output_num_tokens, std::vector<int32_t>(in.topk, -1));
    for (int64_t i = 0; i < bs; ++i) {
        for (int64_t t = in.cu_seqlens_q[i]; t < in.cu_seqlens_q[i + 1]; ++t) {
            const int64_t row = in.page_table_is_expanded ? t : i;
            for (int64_t j = 0; j < in.topk; ++j) {
                const int32_t index = in.topk_indices[t * in.topk_row_stride + j];
                if (index < 0) continue;  // stays -1
                if (row >= in.page_table_rows || index >= in.max_seqlen_k) {
                    throw std::out_of_range("reference: page_table[" + std::to_string(row) + ", " +
                                            std::to_string(index) + "] is outside [" +
                                            std::to_string(in.page_table_rows) + ", " +
                                            std::to_string(in.max_seqlen_k) + "]");
                }
                out[t][j] = in.page_table[row * in.page_table_row_stride + index];
            }
        }
    }
    return out;
}

}  // namespace livebound::reference
