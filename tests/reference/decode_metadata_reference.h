// Plain C++ reference of K1, SGLang's normal_decode_set_metadata (spec §3.1), written
// from the spec's formulas and nothing else (no Halide, no livebound code):
//
//   L_b          = int32(seq_lens[b]) + seq_len_delta          (int32 wrap on the cast)
//   cu[0] = 0,   cu[b + 1] = cu[b] + L_b                        (int32 prefix sums)
//   live_pages_b = min((L_b + ps - 1) >> log2(ps), max_seq_pages), and 0 when that is < 0
//   for k < live_pages_b:
//       t                    = req_to_token[req_pool_indices[b], k * ps]
//       page_table[b, k]     = t >> log2(ps)
//       swa_page_table[b, k] = int32(full_to_swa[t] >> log2(ps))    (SWA only)
//
// Header-only; the tests compare livebound's outputs with what this returns.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace livebound::reference {

// The inputs of one K1 call, as host values.
struct DecodeMetadataInputs {
    // [bs]: the raw seq_lens values (an int32 tensor's values widened to int64).
    std::vector<int64_t> seq_lens;
    // [bs]: request-pool row of each batch entry (raw values, int32 or int64 tensor).
    std::vector<int64_t> req_pool_indices;
    // [pool_rows, ctx] int32, element (r, c) at req_to_token[r * req_to_token_row_stride + c].
    const int32_t *req_to_token = nullptr;
    int64_t pool_rows = 0;
    int64_t ctx = 0;
    int64_t req_to_token_row_stride = 0;
    // [full_slots] int64, contiguous: full-pool slot -> SWA-pool slot; nullptr without SWA.
    const int64_t *full_to_swa = nullptr;
    int64_t full_slots = 0;

    int64_t max_seq_pages = 0;
    int32_t seq_len_delta = 0;
    int32_t page_size = 1;  // a power of two
};

// Everything K1 defines for those inputs.
struct DecodeMetadataExpected {
    // [bs] int32: L_b.
    std::vector<int32_t> cache_seqlens;
    // [bs + 1] int32: exclusive prefix sums of L_b.
    std::vector<int32_t> cu_seqlens_k;
    // [bs]: live page count of row b, in [0, max_seq_pages].
    std::vector<int64_t> live_pages;
    // [bs][live_pages[b]] int32: the live prefix of each page-table row.
    std::vector<std::vector<int32_t>> page_rows;
    // [bs][live_pages[b]] int32: the live prefix of each SWA page-table row (empty without SWA).
    std::vector<std::vector<int32_t>> swa_page_rows;
    // [bs][max_seq_pages] int32: what the full-width twin (SGLang before PR #32109) writes:
    // the same gather for every column below max_seq_pages, live or not. Only filled when
    // every such read stays inside req_to_token (and full_to_swa): full_width_defined.
    bool full_width_defined = false;
    std::vector<std::vector<int32_t>> full_width_page_rows;
    std::vector<std::vector<int32_t>> full_width_swa_page_rows;
};

// log2 of a power of two; throws for anything else (a test-construction error).
inline int32_t page_shift(int32_t page_size) {
    if (page_size <= 0 || (page_size & (page_size - 1)) != 0) {
        throw std::invalid_argument("reference: page_size " + std::to_string(page_size) +
                                    " is not a power of two");
    }
    int32_t shift = 0;
    while ((int32_t{1} << shift) != page_size) ++shift;
    return shift;
}

// int32(value) as torch's .to(int32) / Triton's cast: keep the low 32 bits.
inline int32_t wrap_to_int32(int64_t value) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(value)));
}

// a + b in int32 with two's-complement wrap-around (no signed-overflow UB).
inline int32_t wrapping_add_int32(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// (L + ps - 1) >> log2(ps), clamped to [0, max_seq_pages]. Computed in int64: the
// kernels compute it in int32, which agrees whenever L + ps - 1 does not overflow
// (the tests never come near INT32_MAX).
inline int64_t live_page_count(int32_t kv_len, int32_t page_size, int64_t max_seq_pages) {
    const int64_t pages = (static_cast<int64_t>(kv_len) + page_size - 1) >> page_shift(page_size);
    int64_t live = pages < max_seq_pages ? pages : max_seq_pages;
    return live < 0 ? 0 : live;
}

namespace detail {

// Slot t = req_to_token[row, column], or throws when a test built inputs that read out of range.
inline int32_t token_slot(const DecodeMetadataInputs &in, int64_t row, int64_t column) {
    if (row < 0 || row >= in.pool_rows || column < 0 || column >= in.ctx) {
        throw std::out_of_range("reference: req_to_token[" + std::to_string(row) + ", " +
                                std::to_string(column) + "] is outside [" +
                                std::to_string(in.pool_rows) + ", " + std::to_string(in.ctx) + "]");
    }
    return in.req_to_token[row * in.req_to_token_row_stride + column];
}

inline int32_t swa_page(const DecodeMetadataInputs &in, int32_t slot, int32_t shift) {
    if (slot < 0 || slot >= in.full_slots) {
        throw std::out_of_range("reference: full_to_swa[" + std::to_string(slot) + "] is outside [0, " +
                                std::to_string(in.full_slots) + ")");
    }
    return static_cast<int32_t>(in.full_to_swa[slot] >> shift);
}

// Whether every read of the full-width gather (all columns < max_seq_pages) is in range.
inline bool full_width_reads_in_range(const DecodeMetadataInputs &in) {
    if (in.max_seq_pages == 0) return true;
    const int64_t last_column = (in.max_seq_pages - 1) * in.page_size;
    if (last_column >= in.ctx) return false;
    for (int64_t row : in.req_pool_indices) {
        if (row < 0 || row >= in.pool_rows) return false;
        if (in.full_to_swa != nullptr) {
            for (int64_t k = 0; k < in.max_seq_pages; ++k) {
                const int32_t slot = in.req_to_token[row * in.req_to_token_row_stride + k * in.page_size];
                if (slot < 0 || slot >= in.full_slots) return false;
            }
        }
    }
    return true;
}

}  // namespace detail

inline DecodeMetadataExpected decode_metadata(const DecodeMetadataInputs &in) {
    const int64_t bs = static_cast<int64_t>(in.seq_lens.size());
    if (static_cast<int64_t>(in.req_pool_indices.size()) != bs) {
        throw std::invalid_argument("reference: req_pool_indices and seq_lens differ in length");
    }
    if (in.max_seq_pages < 0) throw std::invalid_argument("reference: max_seq_pages < 0");
    const int32_t shift = page_shift(in.page_size);
    const bool with_swa = in.full_to_swa != nullptr;

    DecodeMetadataExpected out;
    out.cache_seqlens.resize(bs);
    out.cu_seqlens_k.assign(bs + 1, 0);
    out.live_pages.resize(bs);
    out.page_rows.resize(bs);
    if (with_swa) out.swa_page_rows.resize(bs);

    for (int64_t b = 0; b < bs; ++b) {
        const int32_t kv_len = wrapping_add_int32(wrap_to_int32(in.seq_lens[b]), in.seq_len_delta);
        out.cache_seqlens[b] = kv_len;
        out.cu_seqlens_k[b + 1] = wrapping_add_int32(out.cu_seqlens_k[b], kv_len);
        out.live_pages[b] = live_page_count(kv_len, in.page_size, in.max_seq_pages);
        for (int64_t k = 0; k < out.live_pages[b]; ++k) {
            const int32_t slot = detail::token_slot(in, in.req_pool_indices[b], k * in.page_size);
            out.page_rows[b].push_back(slot >> shift);
            if (with_swa) out.swa_page_rows[b].push_back(detail::swa_page(in, slot, shift));
        }
    }

    out.full_width_defined = detail::full_width_reads_in_range(in);
    if (out.full_width_defined) {
        out.full_width_page_rows.resize(bs);
        if (with_swa) out.full_width_swa_page_rows.resize(bs);
        for (int64_t b = 0; b < bs; ++b) {
            for (int64_t k = 0; k < in.max_seq_pages; ++k) {
                const int32_t slot = detail::token_slot(in, in.req_pool_indices[b], k * in.page_size);
                out.full_width_page_rows[b].push_back(slot >> shift);
                if (with_swa) out.full_width_swa_page_rows[b].push_back(detail::swa_page(in, slot, shift));
            }
        }
    }
    return out;
}

}  // namespace livebound::reference
