// What the K1 schedules act on: the generator's Funcs and Vars, and the named knobs.
#pragma once

#include "Halide.h"
#include "common/scan.h"

namespace livebound::decode_metadata {

// Schedule knobs. Defaults are the reviewed values; the CMake manifest and autotune/
// may override them per variant through GeneratorParams of the same names.
struct Knobs {
    // col_groups x col_threads: 16 x 256 measured best at bs = 64, ps = 1 (5.35 us vs 5.82
    // for 8 x 128; 8 x 128 wins at bs = 256: 7.10 vs 8.67). autotune/records/k1.jsonl, round 3.
    int col_threads = 256;  // CUDA: threads per block along the page-table columns
    int col_groups = 16;    // CUDA (compact grid): blocks per request, columns interleaved
    bool full_grid = false; // CUDA: one block per column chunk over the whole width
    int scan_threads = 256; // CUDA: threads per block of the seqlen / prefix-sum kernel
    bool one_kernel = false; // CUDA: scan and gather in one launch, one block per request (off)
    // CUDA: scan and gather in one launch, the prefix sums riding on the page-table grid's
    // first blocks (schedule_cuda_riding_scan). Off: measured slower at bs 256 and on full
    // columns (autotune/records/k1.jsonl, 2026-12-01).
    bool riding_scan = false;
    // CUDA: scan and gather in one launch, the prefix sums riding on the page-table grid's
    // last column group (schedule_cuda_riding_grid): one launch per call, the default.
    bool riding_grid = true;
    // CUDA (riding_grid): the riders' loop runs before the gather's in the fused block.
    bool riders_first = false;  // on below 32 requests in the tuned form (cuda.h, decision 6)
    bool stage_scan_heads = false; // CUDA: block heads of the scan read terms staged in shared memory
    // CUDA: the prefix sum entirely in each entry's thread, in registers (schedules/common/
    // scan_cuda.h, place_blocked_scan_in_registers): no shared memory, no barrier. Faster
    // below 32 requests (ps 1 bs 1: 2.19 -> 1.82 µs), slower from 64 (bs 256: 7.78 -> 9.52),
    // where each entry sums up to bs / 8 block totals itself: the tuned build runs it below
    // 32 requests and this hand form from 32 (schedules/decode_metadata/tuned/).
    bool scan_in_registers = false;
};

struct Stages {
    Halide::Func kv_len;          // (b): L_b
    Halide::Func cache_seqlens;   // output (b)
    Halide::Func cu_seqlens_k;    // output (i), i in [0, bs]
    scan::Blocked blocked_scan;   // blocked scan only; undefined Funcs for the serial scan
    Halide::Func page_table;      // output (column, b), undefined without page gather
    Halide::Func swa_page_table;  // output (column, b), undefined without SWA
    Halide::Func page_slot;       // (column, b): req_to_token slot of the page's first token
    Halide::Func request_row;     // (b): req_to_token row of request b (clamped)
    Halide::Var b, column;
};

}  // namespace livebound::decode_metadata
