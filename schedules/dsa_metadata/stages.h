// What the K2 / K3 schedules act on: the generators' Funcs and Vars, and the named knobs.
#pragma once

#include <vector>

#include "Halide.h"
#include "common/scan.h"

namespace livebound::dsa_metadata {

// Schedule knobs. Defaults are the reviewed values; the CMake manifest and autotune/
// may override them per variant through GeneratorParams of the same names.
struct Knobs {
    // col_groups x col_threads: K1's measured best at bs = 64 (autotune/records/k1.jsonl,
    // round 3: 16 x 256). K3's CUDA variants take col_groups=4 (cmake/families/
    // dsa_metadata.cmake): its skip cases at bs 64 took 16.3 µs with 16, 10.1 with 4 on the
    // H200 (bs 1 / 8 equal). K2 keeps 16: 4 won its skip bs 64 case (7.48 -> 6.61) but lost
    // half_live (4.90 -> 5.82) and noskip (8.49 -> 9.47) (autotune/records/dsa_metadata.jsonl,
    // 2026-12-02).
    int col_threads = 256;   // CUDA: threads per block along the table columns
    int col_groups = 16;     // CUDA: blocks per table row, column chunks interleaved
    int scan_threads = 256;  // CUDA: threads per block of the lengths / prefix-sum kernel
    // CUDA: each scan's terms for the block's own entries (kv_len(j), dsa(j)) are computed
    // once, one per thread, into shared memory (a fixed (scan_threads + block) entries), and
    // the per-entry block heads read them there. Without it every entry's thread recomputes
    // its block's 32 terms (loads + dsa's division by index_kpool): in the one-block case
    // (bs <= 255) warp 0 ran ~64 dsa() evaluations per scan serially, the bulk of the
    // lengths kernel's latency (docs/dsa_metadata.md, "CUDA performance").
    bool stage_head = true;
    // CUDA: the block totals read their terms from shared memory too (all n terms staged,
    // one per thread in a loop over the batch: shared memory grows with bs / E, ~4 bytes per
    // entry per scan, so E beyond ~10k would exceed the 48 KiB a launch gets). Off: a
    // block-total thread loads / computes its 32 terms itself (unrolled).
    bool stage_totals = false;
    // CUDA: one launch per call, the 1-D outputs and their scans riding on the gather grid's
    // last column group (schedule_cuda_riding_grid). Off: two launches (schedule_cuda), which
    // measured faster on every table-E case (H200, µs, two launches / one launch uncapped /
    // capped at 32 registers: K2 skip bs 1 4.48 / 5.39 / 6.18, bs 64 7.47 / 10.03 / 8.52;
    // K3 skip bs 1 5.37 / 7.60 / 9.87, bs 64 10.09 / 18.28 / 13.19; autotune/records/
    // dsa_metadata.jsonl). Each of the five 1-D outputs rides as a loop of its own, one
    // after another in the riding block with barriers between them (in the lengths kernel
    // they share one loop), and the two scans run there after that block's gather. With
    // 128-thread blocks and staged totals it wins from 64 requests: the tuned batch
    // alternates (schedules/dsa_metadata/tuned/, bench/results/2026-12-03-nvidia-h200-autotune.md).
    // With the scans in registers (scan_in_registers, below) it wins below 64 too (K2 skip
    // bs 1: 3.82 -> 2.28 µs, K3 bs 1: 4.72 -> 3.37; k2-h200-round4, k3-h200-round2), so
    // every tuned K2/K3 variant is one launch at every batch size. The hand schedule keeps
    // the two launches it was measured as.
    bool riding_grid = false;
    // CUDA: each scan entirely in its entry's thread (schedules/common/scan_cuda.h,
    // place_blocked_scan_in_registers): no shared memory, no barrier; stage_head and
    // stage_totals then do not apply. Each entry sums entry / scan_block block totals itself,
    // so it pays below 64 requests and loses from 64 (K2 skip bs 64 with the riding grid:
    // 5.76 against 4.77 with staged totals in shared memory; K3 bs 64 18.4 against 6.2).
    bool scan_in_registers = false;
};

struct Stages {
    Halide::Var i, column, row;
    // The lengths kernel: cu_seqlens_k is the anchor; everything else 1-D is fused into it.
    Halide::Func cu_seqlens_k;                // output (i), i in [0, bs]
    scan::Blocked cu_scan;                    // blocked scan only; undefined Funcs for serial
    Halide::Func dsa_cu_seqlens_k;            // output (i), i in [0, bs] (K2) or [0, E] (K3)
    scan::Blocked dsa_scan;
    std::vector<Halide::Func> elementwise;    // outputs (i): cache_seqlens, dsa_cache_seqlens, seqlens_expanded
    Halide::Func ctx_lens_2d;                 // K3 paged_mqa_ctx_lens_2d (d, i), undefined when absent
    // The gather kernel.
    Halide::Func page_table_1;                // output (column, row), undefined when absent
    Halide::Func real_page_table;             // output (column, row), undefined when absent
    Halide::Func request_row;                 // (row): clamped req_to_token row of the table row
};

}  // namespace livebound::dsa_metadata
