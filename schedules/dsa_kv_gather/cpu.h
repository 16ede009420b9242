// K5 on the CPU. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::dsa_kv_gather {

inline void schedule_cpu(Stages &s, const Knobs &k) {
    using namespace Halide;
    RVar t = s.token.x, rb = s.token.y;
    for (Gather *g : {&s.key, &s.scale}) {
        // 1. off_b is the serial recurrence (scan_block = 0 in the manifest), computed once
        //    per call: B is at most a few thousand.
        g->off.compute_root();
        // 2. Requests in parallel; one request's tokens are one scalar loop, which Halide
        //    trims to the live length (the bound derived from `t < seq_lens[b]`). Writes of
        //    different requests go to disjoint rows (off_b .. off_b + seq_lens[b]) for valid
        //    inputs; Halide cannot prove that about a data-dependent store row, hence
        //    allow_race_conditions.
        Stage update = g->out.update();
        update.allow_race_conditions().parallel(rb);
        // 3. The page id stays inline: a Func computed per token would put a store inside
        //    the token loop, and Halide only trims a loop whose body is a no-op outside the
        //    bound. (The page id does not depend on the key word: one scalar load per
        //    vector, which LLVM shares between the unrolled vectors.)
        // 4. Full-width twin: the predicate is materialised per token (a one-element
        //    buffer), so every token of the grid is visited and tested.
        if (!s.bounded) g->live_mask.compute_at(g->out, t);
    }
    // 5. A key row is D/4 words: vector copies of cpu_vector_words words, fully unrolled,
    //    inside the token loop (an update's pure Vars default to outermost).
    Var wo{"wo"}, wi{"wi"};
    s.key.out.update()
        .split(s.w, wo, wi, k.cpu_vector_words, TailStrategy::GuardWithIf)
        .reorder(wi, wo, t, rb)
        .vectorize(wi)
        .unroll(wo);
}

}  // namespace livebound::dsa_kv_gather
