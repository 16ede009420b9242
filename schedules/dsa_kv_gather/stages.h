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
    // CUDA row grid: output rows per thread (a block copies block_threads / row_lanes x
    // rows_per_thread rows). H200, bs 8 / 32k tokens, µs: 1: 4.66, 2: 4.15, 4: 4.61, 8: 5.74
    // (autotune/records/k5.jsonl): two rows' loads in flight per thread, and twice the
    // blocks of 4, whose every block repeats the batch scan.
    int rows_per_thread = 2;
    // CUDA row grid: the scan's terms (the clamped lengths) loaded once per block into
    // shared memory, the unrolled sums read from there (ScanStaging::heads). Unstaged, 32
    // unrolled int64 loads per thread held 113 registers (2 blocks per SM): 4.90 against
    // 4.59 µs at bs 8 (measured with 32-entry scan blocks).
    bool stage_scan_heads = true;
    // CUDA row grid: the block totals summed from that shared copy too (no second pass
    // over seq_lens in global memory); shared memory grows 4 bytes per request. bs 32:
    // 5.73 against 5.84 µs unstaged; equal below 32 requests (no block total).
    bool stage_scan_totals = true;
    // CUDA row grid: threads per output row (8: 16 bytes each; 4: 32 bytes, 2: 64 bytes).
    // Fewer lanes per row share each row's search, division and page-id load among fewer
    // threads, but serialise more loads per thread: 8 lanes 4.61, 4 lanes 5.45, 2 lanes
    // 8.02 µs (bs 8, 4 rows per thread).
    int row_lanes = 8;
    // CUDA row grid: threads per block. 128: 4.18, 256: 4.15, 512: 4.29 µs (bs 8).
    int block_threads = 256;
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

// The row-grid form (generator `row_grid`, CUDA bounded): both outputs over the output rows.
struct RowGrid {
    Halide::Func k_out;             // (w, i): key words of output row i
    Halide::Func s_out;             // (w, i): scale word of output row i (w: extent 1)
    Halide::Func off;               // (b): off_b, exclusive prefix sum of the clamped lengths
    scan::Blocked scan;             // its blocked scan
    Halide::Func request;           // (i): request of output row i, by binary search
    Halide::RDom search;            // its ceil(log2 B) halvings
    Halide::Func page;              // (i): clamped page id of output row i
    Halide::Func slot;              // (i): its slot in the page
    Halide::Func key_value;         // (w, i): key word w of output row i (clamped reads)
    Halide::Func scale_value;       // (i): scale word of output row i
    Halide::RDom row;               // output rows [0, seq_len_sum) where row < off_B
    Halide::Var w;                  // word of a key row
    Halide::Expr batch;             // B, requests
    int words = 32;                 // words of a key row: index_head_dim / 4
};

struct Stages {
    Gather key;             // k_out
    Gather scale;           // s_out
    Halide::RDom token;     // token.x = t in [0, max_seq_len), token.y = b in [0, B)
    Halide::Var w, b;       // w: word of a key row; b: request (pure Funcs)
    bool bounded;
};

}  // namespace livebound::dsa_kv_gather
