// K4 on the CPU. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::trtllm_metadata {

inline void schedule_cpu(Stages &s, const Knobs &) {
    using namespace Halide;
    // 1. Prefix sums stay serial recurrences (scan_block = 0 in the manifest): bs is at
    //    most a few thousand, one pass is cheapest on a CPU. L_b and q_len are inlined.
    // 2. Page tables: requests in parallel; one request's row is one scalar column loop.
    //    A scalar loop is what Halide trims to `live_pages(b)` exactly (a vectorized
    //    loop keeps a masked tail running to max_seq_pages; K1's measurement).
    if (s.page_table.defined()) {
        s.page_table.compute_root().parallel(s.b);
        // 3. The SWA table gets its own trimmed loop (as K1: fusing both loops wraps the
        //    stores in union-of-bounds guards).
        if (s.swa_page_table.defined()) s.swa_page_table.compute_root().parallel(s.b);
    }
    // 4. swa_out_cache_loc: a short (num_out + tail) loop; vectorized, the selects need no branch.
    if (s.swa_out_cache_loc.defined()) {
        s.swa_out_cache_loc.vectorize(s.b, 4, TailStrategy::GuardWithIf);
    }
}

}  // namespace livebound::trtllm_metadata
