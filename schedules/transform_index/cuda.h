// K6 on CUDA. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::transform_index {

// The row form (generator `row_grid`, the bounded CUDA variants). Decisions:
// R1. One kernel: the fill of rows >= num_tokens and the gather are one definition over the
//     output rows (two launches before: the fill, then the grid over (q tile, topk chunk,
//     request)).
// R2. Blocks of q_tile rows x j_threads topk columns, rows on grid x (no 65535 limit on the
//     token count), topk chunks on y; threads along topk (coalesced index loads and result
//     stores). A thread's q_tile rows are unrolled, so their loads issue together.
// R3. The rows' requests (binary search over cu_seqlens_q) are computed once per block,
//     one thread per row, into shared memory.
inline void schedule_cuda_rows(Stages &s, const Knobs &k) {
    using namespace Halide;
    Var tb{"tb"}, ti{"ti"}, jo{"jo"}, ji{"ji"};
    s.result.split(s.t, tb, ti, k.q_tile, TailStrategy::GuardWithIf)
        .split(s.j, jo, ji, k.j_threads, TailStrategy::GuardWithIf)
        .reorder(ti, ji, tb, jo)  // ti inside the thread: each thread's own rows
        .gpu_blocks(tb, jo)
        .gpu_threads(ji)
        .unroll(ti);
    if (s.request.defined()) {
        // R3: the block's q_tile requests, one thread each, into shared memory; then every
        // thread reads them. (Per thread and row, the searches' dependent loads cost the
        // ragged case 91 -> 110 µs on the H200.)
        Var rt = s.request.args()[0];
        // (bound_extent: a constant q_tile threads and entries. Inferred, the thread count
        // was a bound Halide took over every block on the host, which at T = 8k rows passed
        // 1024 and failed the launch.)
        s.request.compute_at(s.result, tb)
            .store_in(MemoryType::GPUShared)
            .bound_extent(rt, k.q_tile)
            .gpu_threads(rt);
        s.request.update().gpu_threads(rt);
    }
}

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
    if (s.row_grid) {
        schedule_cuda_rows(s, k);
        return;
    }
    Var to{"to"}, group{"group"}, jo{"jo"}, ji{"ji"};
    // 1. The fill (pure definition, its own launch): a fixed grid of fill_groups blocks x
    //    j_threads threads. Block `group` owns rows group, group + fill_groups, ...; each
    //    thread walks them serially (loop `to`) over its topk lanes (loop `jo`). Halide
    //    trims `to` to start at num_tokens (bounded), and the grid never depends on a
    //    length: no empty launch when num_tokens == output_num_tokens.
    s.result.split(s.t, to, group, k.fill_groups, TailStrategy::GuardWithIf)
        .split(s.j, jo, ji, k.j_threads, TailStrategy::GuardWithIf)
        .reorder(jo, to, ji, group)
        .gpu_blocks(group)
        .gpu_threads(ji);
    if (!s.gather) return;
    if (s.pad_mask.defined()) {
        // Full-width twin: the fill mask is recomputed for every visited row, in a register.
        s.pad_mask.compute_at(s.result, to).store_in(MemoryType::Register);
    }

    // 2. The gather (update 0): SGLang's grid, one block per (q tile, topk chunk,
    //    request): q tiles on grid x (cdiv(max_extend_len, q_tile) may pass 65535),
    //    topk chunks on y, requests on z (both <= 65535; the runtime checks bs).
    //    j_threads threads along topk (coalesced index loads and result stores); each
    //    thread walks the tile's q_tile rows in a serial loop `qi`, which Halide trims to
    //    the request's live rows from the predicate `cu[i] + q < cu[i + 1]`: in a dead
    //    tile the loop is empty (the PR #32109 early exit, derived), in the request's last
    //    tile it stops at the last token. Distinct (q, i) write distinct rows when
    //    cu_seqlens_q is valid; with garbage on the device, clamped indices keep every
    //    access in bounds (races then only scramble garbage). Halide 21 lets the j
    //    RVars move (they index the store directly) but never swaps q and i: hence q
    //    tiles on x inside requests on z.
    RVar jj = s.r.x, q = s.r.y, i = s.r.z;
    RVar qo{"qo"}, qi{"qi"}, rjo{"rjo"}, rji{"rji"};
    Stage gather = s.result.update(0);
    gather.allow_race_conditions()
        .split(q, qo, qi, k.q_tile, TailStrategy::GuardWithIf)
        .split(jj, rjo, rji, k.j_threads, TailStrategy::GuardWithIf)
        .reorder(qi, rji, qo, rjo, i)
        .gpu_blocks(qo, rjo, i)
        .gpu_threads(rji);
    if (s.row_mask.defined()) {
        // Full-width twin: the live mask is computed for every (q, i) of the grid, in a register.
        s.row_mask.compute_at(s.result, qi).store_in(MemoryType::Register);
    }
}

}  // namespace livebound::transform_index
