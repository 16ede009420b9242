// K1 on CUDA. Decisions, each with its reason:
#pragma once

#include "common/riding_grid.h"
#include "common/scan_cuda.h"
#include "stages.h"

namespace livebound::decode_metadata {

void schedule_cuda_one_kernel(Stages &s, const Knobs &k);
void schedule_cuda_riding_scan(Stages &s, const Knobs &k);
void schedule_cuda_riding_grid(Stages &s, const Knobs &k);

// Without a page table (skip_page_table): the prefix-sum kernel below, one launch. With
// one: schedule_cuda_riding_grid (one launch), unless a knob asks for another form; the
// two-kernel form below (riding_grid=false) is what it was measured against.
inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
    if (k.riding_grid && !k.full_grid && s.page_table.defined()) {
        schedule_cuda_riding_grid(s, k);
        return;
    }
    if (k.riding_scan && s.page_table.defined()) {
        schedule_cuda_riding_scan(s, k);
        return;
    }
    if (k.one_kernel && s.page_table.defined()) {
        schedule_cuda_one_kernel(s, k);
        return;
    }
    Var bo{"bo"}, bi{"bi"}, io{"io"}, ii{"ii"};
    Var chunk{"chunk"}, ci{"ci"}, co{"co"}, group{"group"};

    // 1. cache_seqlens: one thread per request, fused into the prefix-sum kernel (one
    //    launch less: each launch costs ~2 us of a ~6 us graph replay, measured on the H200).
    s.cache_seqlens.gpu_tile(s.b, io, ii, k.scan_threads, TailStrategy::GuardWithIf);

    // 2. cu_seqlens_k: the blocked scan (scan_block > 0 in the manifest), one thread per
    //    entry; every block first computes all block totals into shared memory, one
    //    thread per total. No thread walks the batch.
    s.cu_seqlens_k.gpu_tile(s.b, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
    s.cache_seqlens.compute_with(s.cu_seqlens_k, ii);
    if (k.scan_in_registers) {
        schedules::place_blocked_scan_in_registers(s.blocked_scan, LoopLevel(s.cu_seqlens_k, ii), s.b);
    } else if (s.blocked_scan.block_total.defined()) {
        schedules::place_blocked_scan(s.blocked_scan, s.cu_seqlens_k, io, s.cu_seqlens_k, ii, s.b, k.scan_threads,
                                      {k.stage_scan_heads, false});
    }

    if (!s.page_table.defined()) return;
    auto place = [&](Func f) {
        if (k.full_grid) {
            // 3a. Full grid: one block per (column chunk, request) over the whole width;
            //     dead blocks exit through the (block-uniform) live predicate.
            f.gpu_tile(s.column, s.b, chunk, bo, ci, bi, k.col_threads, 1, TailStrategy::GuardWithIf);
        } else {
            // 3b. Compact grid: col_groups blocks per request; block `group` owns chunks
            //     group, group + col_groups, ...; each thread loops over its chunks
            //     serially, so Halide trims that loop to the live page count.
            f.split(s.column, chunk, ci, k.col_threads, TailStrategy::GuardWithIf)
                .split(chunk, co, group, k.col_groups, TailStrategy::GuardWithIf)
                .reorder(co, ci, group, s.b)
                .gpu_blocks(group, s.b)
                .gpu_threads(ci);
        }
    };
    place(s.page_table);
    // 5. The request's req_to_token row is loaded once per thread, before its column loop,
    //    so that its load overlaps the seq_lens load that sizes the loop.
    if (!k.full_grid) s.request_row.compute_at(s.page_table, ci);
    if (s.swa_page_table.defined()) {
        place(s.swa_page_table);
        // 4. The SWA table shares the page table's kernel (one launch less). Halide 21
        //    rejects this fusion under the full grid ("Unexpected construct inside if
        //    statement", PartitionLoops), so there it stays a kernel of its own.
        if (!k.full_grid) s.swa_page_table.compute_with(s.page_table, ci);
    }
}

}  // namespace livebound::decode_metadata

namespace livebound::decode_metadata {

// One launch per call: block `b` computes cu_seqlens_k[b] (one thread, from block totals
// its threads sum first) and cache_seqlens[b], then all its threads gather request b's
// live page columns (col_threads x col_groups threads, a serial trimmed loop over chunks).
// Saves the second launch and the scan kernel's latency chain in front of the gather.
inline void schedule_cuda_one_kernel(Stages &s, const Knobs &k) {
    using namespace Halide;
    Var bo{"bo"}, bi{"bi"}, chunk{"chunk"}, ci{"ci"}, co{"co"}, group{"group"};
    auto place = [&](Func f) {
        f.split(s.b, bo, bi, 1, TailStrategy::GuardWithIf)
            .split(s.column, chunk, ci, k.col_threads, TailStrategy::GuardWithIf)
            .split(chunk, co, group, k.col_groups, TailStrategy::GuardWithIf)
            .reorder(ci, group, co, bi, bo)
            .gpu_blocks(bo)
            .gpu_threads(ci, group);
    };
    place(s.page_table);
    if (s.swa_page_table.defined()) {
        place(s.swa_page_table);
        s.swa_page_table.compute_with(s.page_table, co);
    }
    s.cu_seqlens_k.split(s.b, bo, bi, 1, TailStrategy::GuardWithIf).gpu_blocks(bo).gpu_threads(bi);
    s.cache_seqlens.split(s.b, bo, bi, 1, TailStrategy::GuardWithIf).gpu_blocks(bo).gpu_threads(bi);
    s.cache_seqlens.compute_with(s.cu_seqlens_k, bi);
    s.cu_seqlens_k.compute_with(s.page_table, bo);
    // Block totals on the block's first row of col_threads threads (the block already has
    // col_threads x col_groups <= 1024 threads).
    schedules::place_blocked_scan(s.blocked_scan, s.cu_seqlens_k, bo, s.cu_seqlens_k, bi, s.b, k.col_threads);
}

// One launch per call (knob riding_scan): the page-table grid of schedule_cuda (col_groups
// blocks per request), its two block dims fused into one, and the 1-D outputs riding on its
// first blocks: block i < cdiv(bs + 1, col_threads) also computes entries [i col_threads,
// (i + 1) col_threads) of cu_seqlens_k and cache_seqlens (compute_with at the block loop;
// their block totals in shared memory at an extent-1 serial loop of their own, so the blocks
// that only gather never wait for them; every riding block computes all totals, so the
// shared size is the same for every block). SGLang's kernel does the same: its program (0, 0)
// writes the prefix sums. (The fused block dims are both named "b.b": compute_with matches
// loops by name.) Measured on the H200 against the two kernels: 2.87 vs 3.34 us at ps 1 bs 1,
// 5.13 vs 5.29 at bs 64, but 15.75 vs 8.70 at bs 256 and 62.4 vs 28.5 with every column live
// (the fused 1-D grid and the column loop's guard); hence off by default.
inline void schedule_cuda_riding_scan(Stages &s, const Knobs &k) {
    using namespace Halide;
    Var chunk{"chunk"}, ci{"ci"}, co{"co"}, group{"group"}, ii{"ii"}, unit{"unit"};
    auto gather = [&](Func f) {
        f.split(s.column, chunk, ci, k.col_threads, TailStrategy::GuardWithIf)
            .split(chunk, co, group, k.col_groups, TailStrategy::GuardWithIf)
            .reorder(co, ci, s.b, group)
            .fuse(s.b, group, s.b)
            .gpu_blocks(s.b)
            .gpu_threads(ci)
            .partition(s.b, Partition::Never);
    };
    auto ride = [&](Func f) {
        f.split(s.b, s.b, ii, k.col_threads, TailStrategy::GuardWithIf)
            .split(ii, unit, ii, k.col_threads)
            .reorder(ii, unit, s.b)
            .gpu_blocks(s.b)
            .gpu_threads(ii)
            .partition(s.b, Partition::Never);
    };
    gather(s.page_table);
    if (s.swa_page_table.defined()) {
        gather(s.swa_page_table);
        s.swa_page_table.compute_with(s.page_table, ci);
        // The request's row stays inline here: computed at the fused loop for both tables,
        // its bounds over the fused block index span every request, and Halide allocates
        // them in global memory on every call.
    } else {
        s.request_row.compute_at(s.page_table, ci);
    }
    ride(s.cu_seqlens_k);
    ride(s.cache_seqlens);
    s.cu_seqlens_k.compute_with(s.page_table, s.b);
    s.cache_seqlens.compute_with(s.page_table, s.b);
    schedules::place_blocked_scan(s.blocked_scan, s.cu_seqlens_k, unit, s.cu_seqlens_k, ii, s.b, k.col_threads,
                                  {k.stage_scan_heads, false}, true);
}

}  // namespace livebound::decode_metadata

namespace livebound::decode_metadata {

// The default with a page table (knob riding_grid): one launch per call. Decisions, each
// with its reason (H200, graph replay, µs per call; bench/results/2026-12-02-nvidia-h200-
// issue10-6af718a.md, records in autotune/records/k1.jsonl):
// 1. The page table keeps schedule_cuda's compact 2-D grid (col_groups blocks per request,
//    a serial column loop per thread that Halide trims to the live page count). The
//    flattened 1-D grid of riding_scan was slower (bs 256: 15.75 vs 8.70).
// 2. cache_seqlens and cu_seqlens_k ride on that grid (compute_with at the block loops):
//    both of its block dims are made from `b` in every Func (the table splits b by 1 and
//    fuses the extent-1 part with its column group; the riders split b by col_threads,
//    then by 1), because compute_with matches fused loops by their full names.
// 3. They ride on the LAST column group (LoopAlignStrategy::AlignEnd), whose blocks hold the
//    columns only long requests reach, rather than group 0 which every live request uses.
// 4. Block totals in shared memory at an extent-1 serial loop of the riders (`unit`), so
//    only riding blocks compute them; every riding block computes all of them (a shared
//    size that does not depend on the block).
// 5. 32 registers a thread (MAX_REGISTERS, cmake/families/decode_metadata.cmake): ptxas
//    gives the fused kernel 56 for the scan's unrolled loads, which halves the resident
//    threads of the latency-bound gather. Every column live, ps 1, bs 64: 63.3 uncapped,
//    26.2 capped, 28.1 as two kernels; ps 64 bs 64 (table E): 3.96 vs 4.49 two kernels.
//    Small batches stay at ~3.35 (bs 1: the riding block's scan is the critical path).
// 6. Below 32 requests (the tuned form, schedules/decode_metadata/tuned/): the prefix sum in
//    each entry's thread (scan_in_registers, no shared memory or barrier) and the riders'
//    loop before the gather's (riders_first): ps 1 bs 1 2.19 -> 1.84 µs, bs 8 2.79 -> 2.21.
//    From 32 requests this hand form runs (riders_first costs it 2-13 % from 64).
// (With SWA the request's row stays inline, see below.)
inline void schedule_cuda_riding_grid(Stages &s, const Knobs &k) {
    using namespace Halide;
    const schedules::RidingGrid grid{s.b, s.column, k.col_threads, k.col_groups};
    const Var &gx = grid.gx;
    grid.tables(s.page_table, s.swa_page_table, s.request_row, s.cu_seqlens_k, k.riders_first);
    grid.ride(s.cu_seqlens_k);
    grid.ride(s.cache_seqlens);
    if (k.riders_first) {
        s.cache_seqlens.compute_with(s.cu_seqlens_k, gx);
        s.page_table.compute_with(s.cu_seqlens_k, gx, grid.on_last_group());
    } else {
        s.cu_seqlens_k.compute_with(s.page_table, gx, grid.on_last_group());
        s.cache_seqlens.compute_with(s.page_table, gx, grid.on_last_group());
    }
    if (k.scan_in_registers) {
        schedules::place_blocked_scan_in_registers(s.blocked_scan, LoopLevel(s.cu_seqlens_k, grid.ii), s.b);
        return;
    }
    schedules::place_blocked_scan(s.blocked_scan, s.cu_seqlens_k, grid.unit, s.cu_seqlens_k, grid.ii, s.b,
                                  k.col_threads, {k.stage_scan_heads, false}, true);
}

}  // namespace livebound::decode_metadata
