// K2 / K3 on CUDA: two launches per call, a lengths kernel and a gather kernel.
// Decisions, each with its reason:
#pragma once

#include "common/scan_cuda.h"
#include "stages.h"

namespace livebound::dsa_metadata {

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
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
    schedules::place_blocked_scan(s.cu_scan, s.cu_seqlens_k, io, s.cu_seqlens_k, ii, s.i, k.scan_threads, staging);
    schedules::place_blocked_scan(s.dsa_scan, s.cu_seqlens_k, io, s.dsa_cu_seqlens_k, ii, s.i, k.scan_threads,
                                  staging);
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
