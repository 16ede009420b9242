// K4 on CUDA. Decisions, each with its reason:
#pragma once

#include "common/riding_grid.h"
#include "common/scan_cuda.h"
#include "stages.h"

namespace livebound::trtllm_metadata {

void schedule_cuda_fused(Stages &s, const Knobs &k);

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
    if (s.cu_seqlens_k.defined() && s.page_table.defined()) {
        schedule_cuda_fused(s, k);
        return;
    }
    Var io{"io"}, ii{"ii"}, chunk{"chunk"}, ci{"ci"}, co{"co"}, group{"group"};

    if (s.cu_seqlens_k.defined()) {
        // 1. seqlens part, one launch: one thread per request writes cache_seqlens[b],
        //    cu_seqlens_k[b + 1] and cu_seqlens_q[b + 1] (compute_with fuses the three
        //    loops: each launch costs ~2 us of a graph replay, K1's H200 measurement).
        s.cu_seqlens_k.gpu_tile(s.b, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
        s.cache_seqlens.gpu_tile(s.b, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
        s.cache_seqlens.compute_with(s.cu_seqlens_k, ii);
        // 2. The prefix sums are blocked scans (scan_block > 0 in the manifest): no thread
        //    walks the batch (SGLang's program `bs` does, ~55 ns per request).
        // The prefix sums (schedules/common/scan_cuda.h): block totals in shared memory at the
        // kernel's block loop, computed by every block; the per-entry partial sums in the
        // entry's own thread, in registers (never a global scratch buffer). cu_seqlens_q's
        // totals also live at cu_seqlens_k's block loop: at the fused Func's own level Halide
        // 21 moves them to global memory.
        if (s.scan_k.block_total.defined()) {
            schedules::place_blocked_scan(s.scan_k, LoopLevel(s.cu_seqlens_k, io), LoopLevel(s.cu_seqlens_k, ii), s.b,
                                          k.scan_threads);
        }
        if (s.cu_seqlens_q.defined()) {
            s.cu_seqlens_q.gpu_tile(s.b, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
            s.cu_seqlens_q.compute_with(s.cu_seqlens_k, ii);
            if (s.scan_q.block_total.defined()) {
                schedules::place_blocked_scan(s.scan_q, LoopLevel(s.cu_seqlens_k, io), LoopLevel(s.cu_seqlens_q, ii),
                                              s.b, k.scan_threads);
            }
        }
    }

    if (s.page_table.defined()) {
        // 3. pages part, compact grid: col_groups blocks per request; block `group` owns
        //    column chunks group, group + col_groups, ...; each thread loops over its
        //    chunks serially, so Halide trims that loop to the live page count (derived
        //    from `column < live_pages(b)`). The same loop shape as SGLang's row program,
        //    with the bound derived instead of typed in.
        auto place = [&](Func f) {
            f.split(s.column, chunk, ci, k.col_threads, TailStrategy::GuardWithIf)
                .split(chunk, co, group, k.col_groups, TailStrategy::GuardWithIf)
                .reorder(co, ci, group, s.b)
                .gpu_blocks(group, s.b)
                .gpu_threads(ci);
        };
        place(s.page_table);
        // 4. The request's req_to_token row is loaded once per thread, before its column
        //    loop, so that its load overlaps the seq_lens load that sizes the loop.
        s.request_row.compute_at(s.page_table, ci);
        if (s.swa_page_table.defined()) {
            // 5. The SWA table shares the page table's kernel and loop (one launch less).
            place(s.swa_page_table);
            s.swa_page_table.compute_with(s.page_table, ci);
        }
    }

    if (s.swa_out_cache_loc.defined()) {
        // 6. swa_out part: one thread per entry (SGLang: 512-entry programs).
        s.swa_out_cache_loc.gpu_tile(s.b, io, ii, k.out_threads, TailStrategy::GuardWithIf);
    }
}

}  // namespace livebound::trtllm_metadata

namespace livebound::trtllm_metadata {

// The fused part (seqlens + pages in one pipeline, the CUDA build's): one launch per call,
// K1's riding grid (schedules/decode_metadata/cuda.h, schedule_cuda_riding_grid) on the
// page-table grid of step 3 above. Decisions, each with its reason:
// 1. The page tables as in steps 3-5, with both block dims made from `b` (the table splits
//    b by 1 and fuses the extent-1 part with its column group), so that the 1-D outputs'
//    loops carry the same names (compute_with matches fused loops by name).
// 2. cache_seqlens, cu_seqlens_k, cu_seqlens_q and (with SWA) swa_out_cache_loc ride on the
//    grid's last column group (LoopAlignStrategy::AlignEnd), one thread per entry,
//    col_threads per block (a fused kernel's block is the largest of its stages'); swa_out
//    has as many entries as the step writes tokens, and its blocks past the table's rows run
//    only its loop. With swa_out in the fused kernel a SWA call is one launch instead of two.
// 3. Each scan's block totals in shared memory at an extent-1 serial loop of its own output
//    (`unit`): only riding blocks compute them, all of them (one shared size per launch).
// 4. No register cap (the K4 manifest's MAX_REGISTERS stays 0): with one block of
//    col_threads = 128 per request the gather is not short of resident threads, and the
//    capped riding scans spill. H200, graph replay, µs (two launches / fused uncapped /
//    fused capped at 32): noswa bs 64 3.84 / 3.12 / 4.00, bs 256 4.28 / 3.35 / 4.17; swa
//    bs 64 5.54 / 4.99 / 5.86 (three launches / two with swa_out).
// 5. riders_first (knob, off in the hand schedule): the riders' loops run before the gather's
//    in the fused block, so the riding block's scan loads issue first. On in the tuned form
//    from 32 requests: 6-10 % faster there (noswa bs 64 2.53 -> 2.39 µs, swa bs 256 3.30 ->
//    2.98; schedules/trtllm_metadata/tuned/k4-h200-small-batch.cmake).
// 6. scan_in_registers (knob, off in the hand schedule; on below 32 requests in the tuned
//    form, with col_groups=2): the prefix sums in each entry's thread, no shared memory.
inline void schedule_cuda_fused(Stages &s, const Knobs &k) {
    using namespace Halide;
    const schedules::RidingGrid grid{s.b, s.column, k.col_threads, k.col_groups};
    const Var &gx = grid.gx;
    std::vector<Func> riders{s.cu_seqlens_k, s.cache_seqlens};
    if (s.cu_seqlens_q.defined()) riders.push_back(s.cu_seqlens_q);
    if (s.swa_out_cache_loc.defined()) riders.push_back(s.swa_out_cache_loc);
    for (Func f : riders) grid.ride(f);
    grid.tables(s.page_table, s.swa_page_table, s.request_row, s.cu_seqlens_k, k.riders_first);
    if (k.riders_first) {
        for (size_t r = 1; r < riders.size(); r++) riders[r].compute_with(s.cu_seqlens_k, gx);
        s.page_table.compute_with(s.cu_seqlens_k, gx, grid.on_last_group());
    } else {
        for (Func f : riders) f.compute_with(s.page_table, gx, grid.on_last_group());
    }
    if (k.scan_in_registers) {
        schedules::place_blocked_scan_in_registers(s.scan_k, LoopLevel(s.cu_seqlens_k, grid.ii), s.b);
        if (s.scan_q.block_total.defined()) {
            schedules::place_blocked_scan_in_registers(s.scan_q, LoopLevel(s.cu_seqlens_q, grid.ii), s.b);
        }
        return;
    }
    schedules::place_blocked_scan(s.scan_k, s.cu_seqlens_k, grid.unit, s.cu_seqlens_k, grid.ii, s.b, k.col_threads,
                                  {}, true);
    if (s.scan_q.block_total.defined()) {
        schedules::place_blocked_scan(s.scan_q, s.cu_seqlens_q, grid.unit, s.cu_seqlens_q, grid.ii, s.b,
                                      k.col_threads, {}, true);
    }
}

}  // namespace livebound::trtllm_metadata
