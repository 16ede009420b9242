// K1 on the CPU. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::decode_metadata {

inline void schedule_cpu(Stages &s, const Knobs &) {
    using namespace Halide;
    // 1. The prefix sum stays the serial recurrence (scan_block = 0 in the manifest):
    //    bs is at most a few thousand, one pass is cheapest on a CPU.
    // 2. L_b is recomputed where used (inline): one load and one add.
    // 3. Requests in parallel; one request's row is one scalar column loop. A scalar
    //    loop is what Halide trims to `live_pages(b)` exactly: a vectorized column loop
    //    keeps a masked tail loop running to max_seq_pages (../shared/reference, exp1).
    if (s.page_table.defined()) {
        s.page_table.compute_root().parallel(s.b);
        // 4. The SWA table gets its own trimmed loop (compute_with fuses the two loops but
        //    wraps both stores in the union-of-bounds guards: more code, no gain).
        if (s.swa_page_table.defined()) {
            s.swa_page_table.compute_root().parallel(s.b);
        }
    }
}

}  // namespace livebound::decode_metadata
