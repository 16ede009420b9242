// Paging arithmetic shared by the page-table generators (K1, and later K2-K4).
//
// Every page-table kernel states its live length as a predicate of the algorithm
// (`column < live_pages(b)`); Halide derives the loop bound from it. Nothing here
// is a loop bound: these are the values the predicates compare against.
#pragma once

#include "Halide.h"

namespace livebound::paging {

// Number of pages holding `kv_len` tokens, `page_shift = log2(page_size)`:
// cdiv(kv_len, page_size), computed as SGLang's FA3 kernels do,
// (kv_len + page_size - 1) >> page_shift. A kv_len <= 0 gives <= 0 pages.
inline Halide::Expr pages_for_tokens(const Halide::Expr &kv_len, const Halide::Expr &page_shift) {
    Halide::Expr page_size = Halide::Expr(1) << page_shift;
    return (kv_len + (page_size - 1)) >> page_shift;
}

// The live page count of one request: the columns of its page-table row that a
// consumer reads, clamped to the width the launch covers (`max_seq_pages`).
inline Halide::Expr live_pages(const Halide::Expr &kv_len, const Halide::Expr &page_shift,
                               const Halide::Expr &max_seq_pages) {
    return Halide::min(pages_for_tokens(kv_len, page_shift), max_seq_pages);
}

// Index in [0, extent): bounds inference ignores predicates, so every
// data-dependent index is clamped to keep all reads inside the buffer (design §3).
inline Halide::Expr clamp_index(const Halide::Expr &index, const Halide::Expr &extent) {
    return Halide::clamp(index, 0, extent - 1);
}

}  // namespace livebound::paging
