// K4 on CUDA. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::trtllm_metadata {

// One prefix sum (blocked scan of common/scan.h) placed like K1's: block totals in
// shared memory, one thread each, computed by every block of `out`; the per-entry partial
// sums in the entry's own thread, in registers (never a global scratch buffer: nothing
// may be allocated inside a call).
// `kernel` is the Func whose block loop (`io`) holds the kernel: `out` itself, or the Func
// `out` is fused into with compute_with (the block totals of both scans must then live at
// that Func's level: at the fused Func's own level Halide 21 moves them to global memory).
inline void place_blocked_scan(Halide::Func out, Halide::Func kernel, scan::Blocked &scan, const Halide::Var &b,
                               const Halide::Var &io, const Halide::Var &ii, const Knobs &k) {
    using namespace Halide;
    Var ko{"ko"}, ki{"ki"};
    Var kk = scan.block_total.args()[0];
    scan.block_total.compute_at(kernel, io).split(kk, ko, ki, k.scan_threads, TailStrategy::GuardWithIf).gpu_threads(ki);
    // Fixed-length inner sums are unrolled: their loads issue together.
    scan.block_total.update()
        .split(kk, ko, ki, k.scan_threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki)
        .unroll(scan.in_block.x);
    scan.before_block.compute_at(out, ii).bound_storage(b, 1).store_in(MemoryType::Register);
    scan.block_head.compute_at(out, ii).bound_storage(b, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
}

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
        if (s.scan_k.block_total.defined()) place_blocked_scan(s.cu_seqlens_k, s.cu_seqlens_k, s.scan_k, s.b, io, ii, k);
        if (s.cu_seqlens_q.defined()) {
            s.cu_seqlens_q.gpu_tile(s.b, io, ii, k.scan_threads, TailStrategy::GuardWithIf);
            s.cu_seqlens_q.compute_with(s.cu_seqlens_k, ii);
            if (s.scan_q.block_total.defined()) place_blocked_scan(s.cu_seqlens_q, s.cu_seqlens_k, s.scan_q, s.b, io, ii, k);
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
