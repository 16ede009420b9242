// Plain C++ reference of K5, SGLang's _get_k_and_s_triton (spec §3.5), written from the
// spec's formulas and nothing else (no Halide, no livebound code):
//
//   off_b = seq_lens[0] + ... + seq_lens[b-1]
//   for every b, t < seq_lens[b]:
//       pg = page_indices[b, t / page_size],  j = t % page_size
//       k_out[off_b + t, 0:D] = buf[pg, j*D : j*D + D]
//       s_out[off_b + t, 0:4] = buf[pg, page_size*D + 4*j : page_size*D + 4*j + 4]
//
// Every byte offset is computed in 64 bits (pg * page bytes passes 2^31 for pg >= 254,201
// at D = 128, page_size = 64). Header-only; the tests compare livebound's outputs with what
// this returns.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace livebound::reference {

// The inputs of one K5 call, as host values.
struct KvGatherInputs {
    // [num_pages, page_size * (head_dim + 4)] uint8; page p starts at buf + p * buf_row_stride.
    const uint8_t *buf = nullptr;
    int64_t num_pages = 0;
    int64_t buf_row_stride = 0;  // bytes
    // [B]: raw seq_lens values (an int32 tensor's values widened to int64).
    std::vector<int64_t> seq_lens;
    // [B][max_pages]: raw page ids (int32 or int64 tensor values widened to int64).
    std::vector<std::vector<int64_t>> page_indices;
    int32_t page_size = 64;
    int32_t head_dim = 128;
};

// Everything K5 defines for those inputs.
struct KvGatherExpected {
    int64_t seq_len_sum = 0;
    std::vector<int64_t> offsets;   // [B]: off_b
    std::vector<uint8_t> k_rows;    // [seq_len_sum * head_dim]: k_out's rows, contiguous
    std::vector<uint8_t> s_rows;    // [seq_len_sum * 4]: s_out's rows, contiguous
};

inline KvGatherExpected get_k_and_s(const KvGatherInputs &in) {
    const int64_t bs = static_cast<int64_t>(in.seq_lens.size());
    if (static_cast<int64_t>(in.page_indices.size()) != bs) {
        throw std::invalid_argument("reference: page_indices and seq_lens differ in length");
    }
    if (in.page_size <= 0 || in.head_dim <= 0) throw std::invalid_argument("reference: bad page_size/head_dim");
    KvGatherExpected out;
    for (int64_t b = 0; b < bs; ++b) {
        if (in.seq_lens[b] < 0) throw std::invalid_argument("reference: negative seq_lens");
        out.offsets.push_back(out.seq_len_sum);
        out.seq_len_sum += in.seq_lens[b];
    }
    const int64_t d = in.head_dim;
    out.k_rows.assign(static_cast<size_t>(out.seq_len_sum * d), 0);
    out.s_rows.assign(static_cast<size_t>(out.seq_len_sum * 4), 0);
    for (int64_t b = 0; b < bs; ++b) {
        for (int64_t t = 0; t < in.seq_lens[b]; ++t) {
            const int64_t k = t / in.page_size, j = t % in.page_size;
            if (k >= static_cast<int64_t>(in.page_indices[b].size())) {
                throw std::out_of_range("reference: page_indices[" + std::to_string(b) + "] has no column " +
                                        std::to_string(k));
            }
            const int64_t pg = in.page_indices[b][k];
            if (pg < 0 || pg >= in.num_pages) {
                throw std::out_of_range("reference: page id " + std::to_string(pg) + " outside [0, " +
                                        std::to_string(in.num_pages) + ")");
            }
            const uint8_t *page = in.buf + pg * in.buf_row_stride;  // 64-bit offset
            const int64_t row = out.offsets[b] + t;
            std::memcpy(&out.k_rows[row * d], page + j * d, d);
            std::memcpy(&out.s_rows[row * 4], page + int64_t{in.page_size} * d + 4 * j, 4);
        }
    }
    return out;
}

}  // namespace livebound::reference
