// K4 on CUDA. Decisions, each with its reason:
#pragma once

#include "common/scan_cuda.h"
#include "stages.h"

namespace livebound::trtllm_metadata {

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
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
