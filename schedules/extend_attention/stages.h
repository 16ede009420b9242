// What the K7 schedules act on: the generator's Funcs, Vars and RDoms, and the named knobs.
#pragma once

#include "Halide.h"

namespace livebound::extend_attention {

// Schedule knobs. BM and BN are also facts of the algorithm (the query tile qt is a Var of
// the algorithm, the key chunk an RVar), so they are GeneratorParams `block_m`/`block_n`
// of the generator; the CPU-only knobs follow.
struct Knobs {
    // Query rows per tile (BLOCK_M). SGLang on sm_90: 128 for Lq <= 128, 64 above. The CPU
    // build uses 32: a tile's state is Lv x BM x 3 floats (48 KiB at Lv = 128), and short
    // requests waste less on the partially live last tile.
    int block_m = 32;
    // Keys per chunk (BLOCK_N). SGLang on sm_90: 64.
    int block_n = 32;
    // CPU: fp32 lanes of the head-dim vectors (8 = one AVX2 register).
    int cpu_vector = 8;
};

struct Stages {
    Halide::Func state;        // (d, qi, qt, h, b) Tuple{running max, denominator, acc[d]}
    Halide::Func score_p;      // (j, qi, qt, h, b) prefix logit (after scale and cap)
    Halide::Func score_e;      // (n, qi, qt, h, b) extend logit
    Halide::Func dot_p, dot_e; // (lane, key, qi, qt, h, b): per-lane partial q.k dots
    Halide::Func lens;         // (b) Tuple{q0, E, k0, P}: the request's ranges, clamped
    Halide::Func finish;       // (d, qi, qt, h, b) Tuple{o value, lse value}, inlined
    Halide::Func out;          // o_extend (d, h, t): undef + scatter update (undefined in count_tiles)
    Halide::Func lse;          // lse (h, t): undef + scatter update (undefined in count_tiles)
    Halide::Func counts;       // count_tiles only: (stage, qt, h, b) visited chunks
    Halide::RDom rp, re;       // prefix / extend keys: x = key within chunk, y = chunk
    Halide::RDom ro;           // output rows: x = qi, y = qt, z = b
    Halide::RDom cp, ce;       // count_tiles only: chunk loops of the two stages
    Halide::Var d, qi, qt, h, b, lane, key, t, stage;
    bool bounded;
    bool count_tiles;
};

}  // namespace livebound::extend_attention
