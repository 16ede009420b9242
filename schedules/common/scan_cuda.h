// CUDA placement of the blocked prefix sum of generators/common/scan.h, shared by every
// schedule that computes one (K1, K2/K3, ...).
#pragma once

#include <string>

#include "Halide.h"
#include "common/scan.h"

namespace livebound::schedules {

// Which reads of the scan's terms go through a per-block copy in shared memory, computed
// once per block, one term per thread. Each term is otherwise computed by every thread that
// reads it: the unrolled sums (scan_block terms each) put all of them on every thread's
// path. For K2's dsa() terms (two loads and a division each) staging the heads took K2
// from 7.96 to 4.37 µs at bs = 1 on the H200 (autotune/records/dsa_metadata.jsonl).
// Staging the block totals too needs shared memory that grows with the batch (4 bytes per
// entry), > 48 KiB past ~12k.
struct ScanStaging {
    bool heads = false;
    bool totals = false;
};

// `block`: the GPU block loop where all block totals (and staged terms) are computed into
// shared memory, one per thread on `threads` threads. `entry`: the thread loop of one
// scanned entry; `dim` is the scan's dimension.
//   - Block totals: fixed scan_block-term sums, unrolled so that their loads issue together
//     (K1 scan alone at bs = 64 on the H200, 32-entry blocks: 3.46 us rolled, 2.45 us
//     unrolled + masked head). The unrolled code is the kernel's length, and at small
//     batches fetching it is most of the riding block's time: the manifests choose
//     scan_block = 8 (K1, K4) or 16 (K2/K3, K5): cmake/families/*.cmake have the numbers.
//   - The per-entry partial sums live in the entry's thread, in registers: left to Halide,
//     a fused kernel puts them in a global scratch buffer allocated on every call, and no
//     allocation may happen inside a call.
// `all_totals`: every block computes all block totals (a block-uniform shared-memory size; a
// size that depends on the block makes the host take its maximum over the grid on every call).
inline void place_blocked_scan(scan::Blocked &scan, const Halide::LoopLevel &block, const Halide::LoopLevel &entry,
                               const Halide::Var &dim, int threads, ScanStaging staging = {},
                               bool all_totals = false, int threads_x = 0) {
    using namespace Halide;
    if (!scan.block_total.defined()) return;
    // `threads` threads, laid out 1-D, or 2-D as (threads_x, threads / threads_x) for a kernel
    // whose other stages have 2-D blocks (a fused kernel's block is the per-dimension
    // maximum over its stages).
    auto on_threads = [&](auto &&stage, const Var &v, const char *outer, const char *inner) {
        Var vo{outer}, vi{inner}, vy{std::string(inner) + "y"}, vx{std::string(inner) + "x"};
        stage.split(v, vo, vi, threads, TailStrategy::GuardWithIf);
        if (threads_x > 0) {
            stage.split(vi, vy, vx, threads_x, TailStrategy::GuardWithIf).gpu_threads(vx, vy);
        } else {
            stage.gpu_threads(vi);
        }
    };
    if (all_totals) scan.block_total.bound(scan.block_total.args()[0], 0, scan.earlier.x.extent());
    if (staging.heads || staging.totals) {
        Func staged = staging.heads && staging.totals ? scan.terms.in({scan.block_total, scan.block_head})
                      : staging.heads                 ? scan.terms.in(scan.block_head)
                                                      : scan.terms.in(scan.block_total);
        staged.compute_at(block).store_in(MemoryType::GPUShared);
        on_threads(staged, staged.args()[0], "vo", "vi");
    }
    Var k = scan.block_total.args()[0];
    scan.block_total.compute_at(block);
    on_threads(scan.block_total, k, "ko", "ki");
    Stage totals = scan.block_total.update();
    on_threads(totals, k, "ko", "ki");
    totals.unroll(scan.in_block.x);
    scan.before_block.compute_at(entry).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.compute_at(entry).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
}

// The blocked prefix sum with no shared memory and no barrier: everything at `entry`, in the
// entry's thread and its registers. The thread walks the block totals before its own block
// (a loop that runs entry / scan_block times, each total's scan_block terms unrolled so that
// their loads issue together), then its head. For the few entries of a small batch this is
// the whole scan: no block-wide staging, no thread waits for another. Each thread recomputes
// the totals it needs, so the work grows with the batch (entry / scan_block totals per
// entry); the shared-memory placement above is the one for large batches.
inline void place_blocked_scan_in_registers(scan::Blocked &scan, const Halide::LoopLevel &entry,
                                            const Halide::Var &dim) {
    using namespace Halide;
    if (!scan.block_total.defined()) return;
    scan.before_block.compute_at(entry).bound_storage(dim, 1).store_in(MemoryType::Register);
    Var k = scan.block_total.args()[0];
    scan.block_total.compute_at(scan.before_block, scan.earlier.x)
        .bound_storage(k, 1)
        .store_in(MemoryType::Register);
    scan.block_total.update().unroll(scan.in_block.x);
    scan.block_head.compute_at(entry).bound_storage(dim, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
}

// The same with the two levels named by (Func, Var) pairs.
inline void place_blocked_scan(scan::Blocked &scan, const Halide::Func &block_owner, const Halide::Var &block_level,
                               const Halide::Func &entry_owner, const Halide::Var &entry_level,
                               const Halide::Var &dim, int threads, ScanStaging staging = {},
                               bool all_totals = false) {
    place_blocked_scan(scan, Halide::LoopLevel(block_owner, block_level), Halide::LoopLevel(entry_owner, entry_level),
                       dim, threads, staging, all_totals);
}

}  // namespace livebound::schedules
