// K2 / K3 on CUDA: two launches per call, a lengths kernel and a gather kernel (one launch,
// knob riding_grid: slower at small batches, the tuned batch alternates' form from 64
// requests, schedules/dsa_metadata/tuned/).
// Decisions, each with its reason:
#pragma once

#include "common/riding_grid.h"
#include "common/scan_cuda.h"
#include "stages.h"

namespace livebound::dsa_metadata {

void schedule_cuda_riding_grid(Stages &s, const Knobs &k);

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
    if (k.riding_grid && (s.page_table_1.defined() || s.real_page_table.defined())) {
        schedule_cuda_riding_grid(s, k);
        return;
    }
    Var io{"io"}, ii{"ii"}, chunk{"chunk"}, ci{"ci"}, co{"co"}, group{"group"};

    // 1. One lengths kernel: one thread per entry of cu_seqlens_k, and every other 1-D
    //    output fused into the same loop (compute_with; their extents differ, bs / bs + 1 /
    //    E / E + 1, so Halide guards each store). SGLang does the same work in its program 0;
    //    a launch per output would cost ~2 us each in a graph replay (K1, H200).
    s.cu_seqlens_k.gpu_tile(s.i, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
    s.dsa_cu_seqlens_k.gpu_tile(s.i, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
    s.dsa_cu_seqlens_k.compute_with(s.cu_seqlens_k, ii);
    for (Func f : s.elementwise) {
        f.gpu_tile(s.i, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
        f.compute_with(s.cu_seqlens_k, ii);
    }
    // 2. Both prefix sums are blocked scans (scan_block > 0 in the manifest): no thread walks
    //    the batch (SGLang's program 0 does, serially per lane block).
    // Both scans' block totals (and staged terms) at cu_seqlens_k's block level; staging:
    // schedules/common/scan_cuda.h.
    const schedules::ScanStaging staging{k.stage_head, k.stage_totals};
    if (k.scan_in_registers) {
        schedules::place_blocked_scan_in_registers(s.cu_scan, LoopLevel(s.cu_seqlens_k, ii), s.i);
        schedules::place_blocked_scan_in_registers(s.dsa_scan, LoopLevel(s.dsa_cu_seqlens_k, ii), s.i);
    } else {
        schedules::place_blocked_scan(s.cu_scan, s.cu_seqlens_k, io, s.cu_seqlens_k, ii, s.i, k.scan_threads,
                                      staging);
        schedules::place_blocked_scan(s.dsa_scan, s.cu_seqlens_k, io, s.dsa_cu_seqlens_k, ii, s.i, k.scan_threads,
                                      staging);
    }
    // 3. paged_mqa_ctx_lens_2d (K3, optional): one thread per request, each writing its
    //    next_n entries in a serial loop, in the lengths kernel too.
    if (s.ctx_lens_2d.defined()) {
        Var d = s.ctx_lens_2d.args()[0];
        s.ctx_lens_2d.reorder(d, s.i)
            .split(s.i, io, ii, k.scan_threads, TailStrategy::GuardWithIf)
            .reorder(d, ii, io)
            .gpu_blocks(io)
            .gpu_threads(ii);
        s.ctx_lens_2d.compute_with(s.cu_seqlens_k, ii);
    }

    // 4. The gather kernel: compact grid, col_groups blocks per table row; block `group`
    //    owns column chunks group, group + col_groups, ...; each thread loops over its chunks
    //    serially, so Halide trims that loop to the live prefix (the early exit, per thread).
    //    Table rows go on the grid's x dimension: K3 has E = bs * next_n rows, which can pass
    //    the 65535 blocks a y dimension allows. The block loops are not partitioned: with the
    //    row loop on x, Halide 21 splits the fused (compute_with) row loop into prologue /
    //    steady / epilogue copies and then rejects the result ("Unexpected construct inside
    //    if statement", PartitionLoops); the guards it would peel are uniform per block.
    auto place = [&](Func f) {
        f.split(s.column, chunk, ci, k.col_threads, TailStrategy::GuardWithIf)
            .split(chunk, co, group, k.col_groups, TailStrategy::GuardWithIf)
            .reorder(co, ci, s.row, group)
            .gpu_blocks(s.row, group)
            .gpu_threads(ci)
            .partition(s.row, Partition::Never)
            .partition(group, Partition::Never);
    };
    Func first = s.page_table_1.defined() ? s.page_table_1 : s.real_page_table;
    place(first);
    // 5. The table row's req_to_token row is loaded once per thread, before its column loops.
    s.request_row.compute_at(first, ci);
    if (s.page_table_1.defined() && s.real_page_table.defined()) {
        // 6. The real table shares page_table_1's kernel (one launch less); each keeps its own
        //    trimmed chunk loop inside the thread (rps x fewer columns).
        place(s.real_page_table);
        s.real_page_table.compute_with(s.page_table_1, ci);
    }
}

}  // namespace livebound::dsa_metadata

namespace livebound::dsa_metadata {

// One launch per call (knob riding_grid; off in the hand schedule, which it loses to at small
// batches; on in the tuned batch alternates from 64 requests, schedules/dsa_metadata/tuned/,
// bench/results/2026-12-03-nvidia-h200-autotune.md): K1's riding grid
// (schedules/decode_metadata/cuda.h, schedule_cuda_riding_grid) on the gather grid above.
// Decisions, each with its reason:
// 1. The gather grid as in schedule_cuda (table rows on x, col_groups on y, a trimmed serial
//    column loop per thread), with its row dim renamed to the 1-D outputs' `i` and both block
//    dims made from it, so that the 1-D outputs' loops carry the same names
//    (compute_with matches fused loops by name).
// 2. Every 1-D output (and K3's ctx_lens_2d) rides on the grid's last column group
//    (LoopAlignStrategy::AlignEnd), one thread per entry: those blocks hold the columns
//    only long rows reach.
// 3. Each scan's block totals (and staged terms) in shared memory at an extent-1 serial loop
//    of its own output (`unit`): only riding blocks compute them, all of them (a shared size
//    the same for every block).
inline void schedule_cuda_riding_grid(Stages &s, const Knobs &k) {
    using namespace Halide;
    const Var &i = s.i;
    const schedules::RidingGrid grid{i, s.column, k.col_threads, k.col_groups, /*rows_on_x=*/true};
    Func first = s.page_table_1.defined() ? s.page_table_1 : s.real_page_table;
    Func second = s.page_table_1.defined() ? s.real_page_table : Func();
    first.rename(s.row, i);
    if (second.defined()) second.rename(s.row, i);
    grid.tables(first, second, s.request_row, Func(), false);
    std::vector<Func> riders{s.cu_seqlens_k, s.dsa_cu_seqlens_k};
    riders.insert(riders.end(), s.elementwise.begin(), s.elementwise.end());
    if (s.ctx_lens_2d.defined()) riders.push_back(s.ctx_lens_2d);  // (d, i): d a serial loop
    for (Func f : riders) {
        grid.ride(f);
        f.compute_with(first, grid.fused_level(), grid.on_last_group());
    }
    if (k.scan_in_registers) {
        schedules::place_blocked_scan_in_registers(s.cu_scan, LoopLevel(s.cu_seqlens_k, grid.ii), i);
        schedules::place_blocked_scan_in_registers(s.dsa_scan, LoopLevel(s.dsa_cu_seqlens_k, grid.ii), i);
        return;
    }
    const schedules::ScanStaging staging{k.stage_head, k.stage_totals};
    schedules::place_blocked_scan(s.cu_scan, s.cu_seqlens_k, grid.unit, s.cu_seqlens_k, grid.ii, i, k.col_threads,
                                  staging, true);
    schedules::place_blocked_scan(s.dsa_scan, s.dsa_cu_seqlens_k, grid.unit, s.dsa_cu_seqlens_k, grid.ii, i,
                                  k.col_threads, staging, true);
}

}  // namespace livebound::dsa_metadata
