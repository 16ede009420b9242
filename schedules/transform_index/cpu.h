// K6 on the CPU. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::transform_index {

inline void schedule_cpu(Stages &s, const Knobs &k) {
    using namespace Halide;
    Var to{"to"}, ti{"ti"}, jo{"jo"}, ji{"ji"};
    // 1. The fill (pure definition): blocks of cpu_fill_rows rows in parallel, topk lanes
    //    vectorized (a dense store). Bounded: Halide trims the row loops to start at
    //    num_tokens. GuardWithIf: topk may be smaller than a vector.
    s.result.split(s.t, to, ti, k.cpu_fill_rows, TailStrategy::GuardWithIf)
        .vectorize(s.j, k.cpu_vector, TailStrategy::GuardWithIf)
        .parallel(to);
    if (!s.gather) return;
    if (s.pad_mask.defined()) {
        // Full-width twin: the fill mask is recomputed for every visited row.
        s.pad_mask.compute_at(s.result, ti);
    }

    // 2. The gather (update 0): one parallel task per (q tile, request) pair. A task's
    //    query rows are a scalar loop `qi` that Halide trims to the request's live rows
    //    (`cu[i] + q < cu[i + 1]`); a dead tile's loop is empty. Tiles over q, not only
    //    requests, because a prefill batch is ragged: one long request must not be one task.
    //    The topk lanes are vectorized (index load dense, page-table read a gather,
    //    store dense); the lane loop is not the trimmed one, so vectors cost no bound.
    //    Rows of different (q, i) are disjoint when cu_seqlens_q is valid (the runtime
    //    checks it on the CPU): the races Halide cannot rule out cannot happen.
    //    (Loop order rji, rjo, qi, qo, i is the RDom's own: Halide 21 refuses to swap the
    //    q and i RVars of this scatter, allow_race_conditions or not.)
    RVar jj = s.r.x, q = s.r.y, i = s.r.z;
    RVar qo{"qo"}, qi{"qi"}, rjo{"rjo"}, rji{"rji"}, task{"task"};
    Stage gather = s.result.update(0);
    gather.allow_race_conditions()
        .split(q, qo, qi, k.cpu_q_tile, TailStrategy::GuardWithIf)
        .split(jj, rjo, rji, k.cpu_vector, TailStrategy::GuardWithIf)
        .vectorize(rji)
        .fuse(qo, i, task)
        .parallel(task);
    if (s.row_mask.defined()) {
        // Full-width twin: the live mask is computed for every (q, i) of the grid.
        s.row_mask.compute_at(s.result, qi);
    }
}

}  // namespace livebound::transform_index
