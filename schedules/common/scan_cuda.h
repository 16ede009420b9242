// CUDA placement of the blocked prefix sum of generators/common/scan.h, shared by every
// schedule that computes one (K1, K2/K3, ...).
#pragma once

#include "Halide.h"
#include "common/scan.h"

namespace livebound::schedules {

// Which reads of the scan's terms go through a per-block copy in shared memory, computed
// once per block, one term per thread. Each term is otherwise computed by every thread that
// reads it: the unrolled 32-term sums put 32 of them on every thread's path. For K2's dsa()
// terms (two loads and a division each) staging the heads took K2 from 7.96 to 4.37 µs at
// bs = 1 on the H200 (autotune/records/dsa_metadata.jsonl). Staging the block totals too
// needs shared memory that grows with the batch (4 bytes per entry), > 48 KiB past ~12k.
struct ScanStaging {
    bool heads = false;
    bool totals = false;
};

// `block_owner`/`block_level`: the GPU block loop where all block totals (and staged terms)
// are computed into shared memory, one per thread on `threads` threads. `entry_owner`/
// `entry_level`: the thread loop of one scanned entry; `dim` is the scan's dimension.
//   - Block totals: fixed 32-term sums, unrolled so that their loads issue together
//     (K1 scan alone at bs = 64 on the H200: 3.46 us rolled, 2.45 us unrolled + masked head).
//   - The per-entry partial sums live in the entry's thread, in registers: left to Halide,
//     a fused kernel puts them in a global scratch buffer allocated on every call, and no
//     allocation may happen inside a call.
// `all_totals`: every block computes all block totals (a block-uniform shared-memory size; a
// size that depends on the block makes the host take its maximum over the grid on every call).
inline void place_blocked_scan(scan::Blocked &scan, const Halide::Func &block_owner, const Halide::Var &block_level,
                               const Halide::Func &entry_owner, const Halide::Var &entry_level,
                               const Halide::Var &dim, int threads, ScanStaging staging = {},
                               bool all_totals = false) {
    using namespace Halide;
    if (!scan.block_total.defined()) return;
    if (all_totals) scan.block_total.bound(scan.block_total.args()[0], 0, scan.earlier.x.extent());
    if (staging.heads || staging.totals) {
        Func staged = staging.heads && staging.totals ? scan.terms.in({scan.block_total, scan.block_head})
                      : staging.heads                 ? scan.terms.in(scan.block_head)
                                                      : scan.terms.in(scan.block_total);
        Var v = staged.args()[0], vo{"vo"}, vi{"vi"};
        staged.compute_at(block_owner, block_level)
            .store_in(MemoryType::GPUShared)
            .split(v, vo, vi, threads, TailStrategy::GuardWithIf)
            .gpu_threads(vi);
    }
    Var k = scan.block_total.args()[0], ko{"ko"}, ki{"ki"};
    scan.block_total.compute_at(block_owner, block_level)
        .split(k, ko, ki, threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki);
    scan.block_total.update()
        .split(k, ko, ki, threads, TailStrategy::GuardWithIf)
        .gpu_threads(ki)
        .unroll(scan.in_block.x);
    scan.before_block.compute_at(entry_owner, entry_level).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.compute_at(entry_owner, entry_level).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
}

}  // namespace livebound::schedules
