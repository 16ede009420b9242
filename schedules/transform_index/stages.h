// What the K6 schedules act on: the generator's Funcs, Vars and reduction domain, and
// the named knobs.
#pragma once

#include "Halide.h"

namespace livebound::transform_index {

// Schedule knobs. Defaults are the reviewed values; the CMake manifest and autotune/ may
// override them per variant through GeneratorParams of the same names.
struct Knobs {
    // CUDA gather: SGLang's grid (bs, cdiv(max_extend_len, BLOCK_Q), cdiv(topk, 256)).
    // One block per (request, q tile, column chunk); j_threads threads along the topk
    // columns, each walking the tile's q_tile query rows in a serial loop that Halide
    // trims to the request's live rows (an empty loop in a dead tile: the early exit).
    int j_threads = 256;  // CUDA: threads per block along topk (SGLang's 256-wide column block)
    int q_tile = 4;       // CUDA: query rows per block (SGLang's BLOCK_Q for max_extend_len > 2)
    // CUDA fill (rows >= num_tokens get -1): a fixed grid of fill_groups blocks x
    // j_threads threads; each thread walks its rows serially (block `g` owns rows g,
    // g + fill_groups, ...), a loop Halide trims to start at num_tokens. A fixed grid
    // is never empty, whatever num_tokens is.
    int fill_groups = 128;
    // CPU gather: query rows per parallel task (one task per (q tile, request) pair).
    int cpu_q_tile = 16;
    // CPU: topk lanes per vector (AVX2: 8 int32 lanes; the page-table read is a gather).
    int cpu_vector = 8;
    // CPU fill: rows per parallel task.
    int cpu_fill_rows = 64;
};

struct Stages {
    Halide::Func result;    // output (j, t): pure = the -1 fill, update 0 = the gather
    Halide::Func row_mask;  // full-width twin only: (q, i) the gather's live mask, kept opaque
    Halide::Func pad_mask;  // full-width twin only: (t) the fill's mask (t >= num_tokens), kept opaque
    Halide::RDom r;         // the gather's domain: r.x = j (topk), r.y = q (query row), r.z = i (request)
    Halide::Var j, t;
    bool bounded = true;
    bool gather = true;     // false: the fill-only variant (no update)
    bool row_grid = false;  // the row form: result(j, t) one pure definition (CUDA bounded)
    Halide::Func request;   // row form: (t) the token's request (undefined when expanded)
};

}  // namespace livebound::transform_index
