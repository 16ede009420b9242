// K2 / K3 on the CPU. Decisions, each with its reason:
#pragma once

#include "stages.h"

namespace livebound::dsa_metadata {

inline void schedule_cpu(Stages &s, const Knobs &) {
    // 1. Both prefix sums stay serial recurrences (scan_block = 0 in the manifest): bs is at
    //    most a few thousand (16384 in the large-batch test), one pass is cheapest on a CPU.
    // 2. Lengths (s_b, dsa(s_b), s_r + d + 1) are recomputed where used (inline): a load and a
    //    few integer ops.
    // 3. Table rows in parallel; one row is one scalar column loop, which Halide trims to the
    //    live prefix exactly (a vectorized loop keeps a masked tail running to the width,
    //    ../shared/reference, exp1). Each table gets its own trimmed loop (as K1's SWA table).
    if (s.page_table_1.defined()) s.page_table_1.compute_root().parallel(s.row);
    if (s.real_page_table.defined()) s.real_page_table.compute_root().parallel(s.row);
}

}  // namespace livebound::dsa_metadata
