// CUDA placement of the blocked prefix sum of generators/common/scan.h, shared by every
// schedule that computes one (K1, and the other metadata families).
#pragma once

#include "Halide.h"
#include "common/scan.h"

namespace livebound::schedules {

// `out` is the scanned Func (one entry per thread at `entry_level`); `block_level` is the
// GPU block loop of `out` where all block totals are computed into shared memory, one
// thread each on `threads` threads. `dim` is out's (and the partial sums') dimension.
//   - Block totals: fixed 32-term sums, unrolled so that their loads issue together
//     (K1 scan alone at bs = 64 on the H200: 3.46 us rolled, 2.45 us unrolled + masked head).
//   - The per-entry partial sums live in the entry's thread, in registers: left to Halide,
//     a fused kernel puts them in a global scratch buffer allocated on every call, and no
//     allocation may happen inside a call.
inline void place_blocked_scan(scan::Blocked &scan, const Halide::Func &out, const Halide::Var &block_level,
                               const Halide::Var &entry_level, const Halide::Var &dim, int threads) {
    using namespace Halide;
    Var k = scan.block_total.args()[0], ko{"ko"}, ki{"ki"};
    scan.block_total.compute_at(out, block_level)
        .split(k, ko, ki, threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki);
    scan.block_total.update()
        .split(k, ko, ki, threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki)
        .unroll(scan.in_block.x);
    scan.before_block.compute_at(out, entry_level).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.compute_at(out, entry_level).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
}

}  // namespace livebound::schedules
