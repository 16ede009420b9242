// K2 / K3 on CUDA: two launches per call, a lengths kernel and a gather kernel.
// Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::dsa_metadata {

// A blocked scan's intermediates inside the lengths kernel (as K1, schedules/decode_metadata):
// block totals one thread each into shared memory at the block level, per-entry partial sums
// in the entry's thread registers (left to Halide, a fused kernel would put them in global
// scratch allocated per call: no allocation may happen inside a call).
//
// Staging (knobs stage_head / stage_totals): the scan's terms are computed at the block level
// into shared memory, one per thread (a GuardWithIf loop of scan_threads), and the block
// heads (and the block totals) read them there. Each term is then computed once per block
// instead of once per reading thread: a dsa() term is two loads' worth of latency plus a
// division by the runtime index_kpool, and the unrolled 32-term head sums put 32 of them
// on every thread's path.
inline void stage_terms(const Halide::Func &terms, const Halide::Func &wrapper, const Halide::Func &block_level,
                        const Halide::Var &io, const Knobs &k) {
    using namespace Halide;
    Func w = wrapper;
    Var v = w.args()[0], vo{"vo"}, vi{"vi"};
    w.compute_at(block_level, io)
        .store_in(MemoryType::GPUShared)
        .split(v, vo, vi, k.scan_threads, TailStrategy::GuardWithIf)
        .gpu_threads(vi);
}

inline void place_blocked_scan(scan::Blocked &scan, Halide::Func terms, const Halide::Func &block_level,
                               const Halide::Var &io, const Halide::Func &entry_level, const Halide::Var &ii,
                               const Halide::Var &i, const Knobs &k) {
    using namespace Halide;
    if (!scan.block_total.defined()) return;
    if (terms.defined() && k.stage_totals && k.stage_head) {
        stage_terms(terms, terms.in({scan.block_total, scan.block_head}), block_level, io, k);
    } else if (terms.defined() && k.stage_totals) {
        stage_terms(terms, terms.in(scan.block_total), block_level, io, k);
    } else if (terms.defined() && k.stage_head) {
        stage_terms(terms, terms.in(scan.block_head), block_level, io, k);
    }
    Var ko{"ko"}, ki{"ki"};
    Var kk = scan.block_total.args()[0];
    scan.block_total.compute_at(block_level, io)
        .split(kk, ko, ki, k.scan_threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki);
    // Fixed-length inner sums unrolled: their loads issue together (K1, H200).
    scan.block_total.update().split(kk, ko, ki, k.scan_threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki).unroll(scan.in_block.x);
    scan.before_block.compute_at(entry_level, ii).bound_storage(i, 1).store_in(MemoryType::Register);
    scan.block_head.compute_at(entry_level, ii).bound_storage(i, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
}

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
    place_blocked_scan(s.cu_scan, s.cu_terms, s.cu_seqlens_k, io, s.cu_seqlens_k, ii, s.i, k);
    place_blocked_scan(s.dsa_scan, s.dsa_terms, s.cu_seqlens_k, io, s.dsa_cu_seqlens_k, ii, s.i, k);
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
