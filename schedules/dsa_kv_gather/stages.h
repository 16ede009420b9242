// What the K5 schedules act on: the generator's Funcs and Vars, and the named knobs.
#pragma once

#include "Halide.h"
#include "common/scan.h"

namespace livebound::dsa_kv_gather {

// Schedule knobs. Defaults are the reviewed values (reasoned, not yet measured: see
// cuda.h); the CMake manifest and autotune/ may override them per variant through
// GeneratorParams of the same names.
struct Knobs {
    // CUDA: warps per block; one warp copies one token's key row (32 lanes x 4 bytes = 128
    // bytes = D: a fully coalesced 128-byte load and store per warp instruction).
    int token_threads = 8;
    // CUDA: consecutive key rows per thread per chunk, unrolled, so that their loads issue
    // together (each copy is a dependent page_indices -> buf -> store chain).
    int tokens_per_thread = 4;
    // CUDA: chunks per thread in the serial loop Halide trims to the live length. The key
    // tile is token_threads x chunks_per_thread x tokens_per_thread = 64 tokens (one page
    // at page_size = 64): at max_seq_len = 16384 that is 256 blocks per request.
    int chunks_per_thread = 2;
    // CUDA: scale tokens per lane in the scale kernel's trimmed serial loop (tile: 8 warps
    // x 32 lanes x 2 = 512 tokens).
    int scale_chunks = 2;
    // CPU: words per vector of the key-row copy (8 x 4 bytes = one AVX2 register).
    int cpu_vector_words = 8;
};

// One output's copies of the per-request and per-token values (the generator defines one
// for k_out and one for s_out, so that each output schedules on its own).
struct Gather {
    Halide::Func out;          // the output, k_out(w, row) or s_out(row)
    Halide::Func off;          // (b): off_b, exclusive prefix sum of the clamped lengths
    scan::Blocked scan;        // blocked scan of off (GPU); undefined Funcs for the serial scan
    Halide::Func live_len;     // (b): min(seq_lens[b], seq_len_sum - off_b), clamped to [0, max_seq_len]
    Halide::Func is_live;      // (t, b): the predicate t < live_len(b) (inlined into the bounded variant)
    Halide::Func live_mask;    // (t, b): the twin's materialised mask; undefined when bounded
    Halide::Func page;         // (t, b): clamped page id of token t of request b
    Halide::Expr live;         // the predicate as the update uses it
    Halide::Expr out_row;      // the clamped store row off_b + t
};

struct Stages {
    Gather key;             // k_out
    Gather scale;           // s_out
    Halide::RDom token;     // token.x = t in [0, max_seq_len), token.y = b in [0, B)
    Halide::Var w, b;       // w: word of a key row; b: request (pure Funcs)
    bool bounded;
};

}  // namespace livebound::dsa_kv_gather
