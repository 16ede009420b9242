// K7 on the CPU. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::extend_attention {

inline void schedule_cpu(Stages &s, const Knobs &k) {
    using namespace Halide;
    const int V = k.cpu_vector;
    Var tile{"tile"}, work{"work"};

    // 1. The request ranges (q0, E, k0, P, pos0) once per call: B values. The query tile
    //    inline: each q element is read where the dot needs it (vectorised over lanes).
    s.lens.compute_root();
    s.q_tile.compute_inline();

    // 2. The softmax state of every (tile, head, request) at root: the two stage updates
    //    run over (qt, h, b) fused into one parallel loop (pure Vars: no race), the
    //    outputs then scatter rows from it. Cost: Lv x BM x tiles x Hq x B x 3 floats of
    //    scratch (the CUDA schedule keeps it per block instead). The whole head-dim bucket
    //    (Lv / G states), not the call's lv: the vector loop stays whole and tail-free;
    //    columns past lv are never written out.
    s.state.compute_root().bound(s.g, 0, s.head_dim_v / s.acc_group);
    s.state.fuse(s.qt, s.h, tile).fuse(tile, s.b, work).parallel(work).vectorize(s.g, V);
    //    Per stage: chunk (r.y) outside the tile's rows (qi) outside the keys of the chunk
    //    (r.x) outside the head dim (g: G = 1, one state per element). The chunk-level predicates mention only r.y and
    //    the tile, so they sit at the chunk loop and TrimNoOps solves them for r.y (the
    //    window lower bound, the causal upper bound, the stage length); the element
    //    predicates sit at the key loop (trimmed per row). g is vectorised: it is below
    //    every predicate, so no predicate becomes a vector mask and trimming survives.
    const RDom *rdoms[2] = {&s.rp, &s.re};
    const Func *scores[2] = {&s.score_p, &s.score_e};
    const Func *dots[2] = {&s.dot_p, &s.dot_e};
    for (int u = 0; u < s.num_stages; u++) {
        const RDom &r = *rdoms[u];
        s.state.update(u)
            .reorder(s.g, r.x, s.qi, r.y, s.qt, s.h, s.b)
            .fuse(s.qt, s.h, tile)
            .fuse(tile, s.b, work)
            .parallel(work)
            .vectorize(s.g, V);
        // 3. One logit per (key, row), computed inside the key loop (under the element
        //    predicate, so masked keys cost nothing), not once per d.
        LoopLevel at_key(s.state, r.x);
        Func score = *scores[u], dot = *dots[u];
        score.compute_at(at_key);
        // 4. q.k as V partial sums over Lq/V vectors (one vector FMA per step), then the
        //    lanes summed in a fixed order.
        dot.compute_at(at_key).bound(s.lane, 0, V).vectorize(s.lane);
        dot.update().vectorize(s.lane);
    }

    // 5. Outputs: undef + a scatter of rows m < E_b of live tiles to q0_b + m; requests in
    //    parallel. Rows of different requests are disjoint for valid qo_indptr (the
    //    runtime checks it on the CPU); Halide cannot prove that of a data-dependent row,
    //    hence allow_race_conditions.
    s.out.update().reorder(s.d, s.ro.w, s.ro.x, s.ro.y, s.ro.z).allow_race_conditions().parallel(s.ro.z).vectorize(s.d, V);
    if (s.lse.defined()) {
        s.lse.update().reorder(s.ro.w, s.ro.x, s.ro.y, s.ro.z).allow_race_conditions().parallel(s.ro.z);
    }
}

}  // namespace livebound::extend_attention
