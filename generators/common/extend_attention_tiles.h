// Extend attention (K7, K8): the request ranges, the window / causal limits and the
// tile-by-chunk overlap predicates, shared by the attention generator (every formulation:
// CPU/SIMT and tensor cores) and the chunk instruments (counter, map)
// (tools/instruments/chunk_instruments_generator.cpp), so that their chunk loops are
// derived from exactly the predicates the kernels' are.
#pragma once

#include <functional>
#include <vector>

#include "Halide.h"

namespace livebound::extend_attention {

// One int32 element of a 1-D index input (qo_indptr, kv_indptr, prefix_lens).
using IndexRead = std::function<Halide::Expr(const Halide::Expr &)>;

// Request b's ranges, clamped for memory safety (bounds inference ignores predicates; for
// valid inputs no clamp binds):
//   q0, E: its query rows q0 .. q0 + E - 1 of the ragged extend tensors (T rows);
//   k0, P: its key list kv_indices[k0 .. k0 + P - 1] (num_indices entries);
//   pos0:  the position of query row 0 among the list keys. K7's list is the prefix, so
//          pos0 = P; K8's list holds prefix and extend keys and prefix_lens[b] says where
//          the queries start (pass prefix_lens only then).
struct RequestRanges {
    Halide::Expr q0, E, k0, P, pos0;
    bool separate_pos0;  // pos0 came from prefix_lens (K8), not P
    // The values a `lens(b)` Func stores: q0, E, k0, P, and pos0 when it is not P.
    std::vector<Halide::Expr> stored() const {
        std::vector<Halide::Expr> v{q0, E, k0, P};
        if (separate_pos0) v.push_back(pos0);
        return v;
    }
};

inline RequestRanges request_ranges(const Halide::Expr &b, const IndexRead &qo_indptr, const IndexRead &kv_indptr,
                                    const IndexRead *prefix_lens, const Halide::Expr &num_prefix_lens, const Halide::Expr &T,
                                    const Halide::Expr &num_indices, const Halide::Expr &max_ext) {
    using Halide::clamp;
    using Halide::min;
    RequestRanges r;
    r.q0 = clamp(qo_indptr(b), 0, T);
    r.E = clamp(qo_indptr(b + 1) - r.q0, 0, min(T - r.q0, max_ext));
    r.k0 = clamp(kv_indptr(b), 0, num_indices);
    r.P = clamp(kv_indptr(b + 1) - r.k0, 0, num_indices - r.k0);
    r.separate_pos0 = prefix_lens != nullptr;
    r.pos0 = r.separate_pos0 ? clamp((*prefix_lens)(clamp(b, 0, num_prefix_lens - 1)), 0, r.P) : r.P;
    return r;
}

// A `lens(b)` Func's fields back as RequestRanges (the inverse of stored()).
inline RequestRanges stored_ranges(const Halide::FuncRef &lens_b, bool separate_pos0) {
    RequestRanges r;
    r.q0 = lens_b[0], r.E = lens_b[1], r.k0 = lens_b[2], r.P = lens_b[3];
    r.separate_pos0 = separate_pos0;
    r.pos0 = separate_pos0 ? Halide::Expr(lens_b[4]) : r.P;
    return r;
}

// Window and causal limits as runtime values. W_eff >= any position difference when the
// window is off (W <= 0); U = the upper limit of key - query position: 0 when causal, else
// the window's upper side. `big` must exceed every position difference of the call.
struct Limits {
    Halide::Expr W_eff, U;
};

// `has_mask`: a custom mask is given. It replaces the causal rule (spec §3.7.2, §3.8; K7 and
// K8 alike): with is_causal the keys after the query are limited by the mask alone, so U is
// `big` (the window limits keys before the query only); without is_causal the window keeps
// both sides.
inline Limits window_limits(const Halide::Expr &sliding_window, const Halide::Expr &is_causal, const Halide::Expr &big,
                            const Halide::Expr &has_mask) {
    using Halide::select;
    Limits l;
    l.W_eff = select(sliding_window > 0, sliding_window, big);
    l.U = select(is_causal && has_mask, big, select(is_causal, 0, l.W_eff));
    return l;
}

// The tiles: BM query rows per tile (tile `qt`), BN keys per chunk.
struct TileShape {
    int block_m, block_n;
    // false: the full-width twin, whose chunk loops span the stage's length only.
    bool bounded;
    // true when the list stage also holds keys after the query (K8's unified list): it then
    // has the causal / two-sided window upper bound too.
    bool list_has_upper;
};

// The chunk-level (tile-by-chunk overlap) predicates of stage 0 (the key list: K7's paged
// prefix, K8's unified list) or 1 (K7's extend keys) for chunk `c` of tile `qt` of request
// (P, pos0, E). Stage 0 keys sit at positions j, queries at pos0 + m; extend keys and
// queries share their origin. They mention only the chunk and the tile, so TrimNoOps
// solves them for the chunk loop: the dead-tile exit, the window lower bound and the
// causal upper bound are derived from these.
inline std::vector<Halide::Expr> chunk_predicates(int stage, const Halide::Expr &c, const Halide::Expr &qt, const TileShape &s,
                                                  const RequestRanges &r, const Limits &l) {
    using Halide::select;
    const int BM = s.block_m, BN = s.block_n;
    Halide::Expr chunk_start = c * BN, chunk_end = c * BN + (BN - 1);
    Halide::Expr tile_start = qt * BM, tile_end = qt * BM + (BM - 1);
    std::vector<Halide::Expr> preds;
    if (!s.bounded) {
        preds.push_back(chunk_start < (stage == 0 ? r.P : r.E));
        return preds;
    }
    if (stage == 0) {
        // The stage's length, zero for a dead tile (qt*BM >= E). Written as one comparison
        // of the chunk so that TrimNoOps empties the chunk loop of a dead tile; a separate
        // `qt*BM < E` conjunct gets folded into the row predicate `qt*BM + qi < E` by the
        // simplifier and only empties the row loop.
        preds.push_back(chunk_start < select(tile_start < r.E, r.P, 0));
        preds.push_back((r.pos0 + tile_start) - chunk_end <= l.W_eff);          // window vs chunk end
        if (s.list_has_upper) {
            preds.push_back((r.pos0 + tile_start) - (r.P - 1) <= l.W_eff);      // window vs the last key
            preds.push_back(chunk_start - (r.pos0 + tile_end) <= l.U);          // causal / window upper
        } else {
            preds.push_back(tile_start + 1 <= l.W_eff);                         // window vs key P - 1
        }
    } else {
        preds.push_back(chunk_start < select(tile_start < r.E, r.E, 0));        // live tile, length
        preds.push_back(tile_start - chunk_end <= l.W_eff);                     // window lower bound
        preds.push_back(chunk_start - tile_end <= l.U);                         // causal / window upper
    }
    return preds;
}

}  // namespace livebound::extend_attention
