// K7 and K8 on CUDA. Decisions, each with its reason (measurements: H200, commit 2eac889,
// bench/results/2026-11-30-nvidia-h200-extend_attention-2eac889.md):
//
// Structure: SGLang's grid (one block per query tile, head and request), and inside the
// block a thread owns one query row: its online-softmax
// state {max, denominator, acc[G]} lives in registers and the key loops of both stages run
// inside the thread. K and V rows are read through L1/L2: every thread of a warp reads the
// same key row at the same time (one broadcast transaction). No shared-memory staging, so
// no barrier inside the key loop: Halide keeps the accumulators in registers, and TrimNoOps
// trims the thread's serial chunk loops (a barrier-separated block loop would stop both,
// design §3). The bounds Halide derives are therefore the CPU's: window lower bound and
// causal upper bound per query tile, in both stages, and a dead tile's loops run zero times.
// Cost of the structure: Lv + 2 state registers per thread (255 registers at Lv = 128, so 8
// warps per SM, with the JIT register cap the runtime raises to 255; Lv = 256 spills 908
// bytes), 1.8-5.0 useful TFLOP/s (docs/extend_attention.md).
#pragma once

#include <stdexcept>

#include "stages.h"

namespace livebound::extend_attention {

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
    const int V = k.cpu_vector;
    const int G = s.acc_group;
    if (G != s.head_dim_v) throw std::invalid_argument("extend_attention CUDA schedule: one state per row (acc_group = Lv)");

    // 1. The request ranges (q0, E, k0, P) inline: each use is one load of qo_indptr /
    //    kv_indptr through L1, the same address for the whole block.
    s.lens.compute_inline();

    // 2. Outputs: one block per (query tile, head, request) -- gpu_blocks over the RVars of
    //    the scatter (rows of different requests are disjoint for valid qo_indptr, hence
    //    allow_race_conditions, as on the CPU) -- one thread per row. In a dead tile no
    //    thread computes its state (`state.used`, from the row predicates). Each thread writes its
    //    row's head-dim elements, unrolled (mux(d % G) folds to one register each): the
    //    call's lv columns of the bucket's Lv, each store guarded by d < lv.
    Stage out = s.out.update();
    Var d_part{"d_part"}, d_col{"d_col"};
    out.reorder(s.d, s.ro.x, s.ro.w, s.ro.y, s.ro.z).allow_race_conditions();
    out.split(s.d, d_part, d_col, s.head_dim_v, TailStrategy::GuardWithIf);
    out.gpu_blocks(s.ro.y, s.ro.w, s.ro.z).gpu_threads(s.ro.x).unroll(d_col);
    //    No loop partitioning anywhere in the kernel: Halide would otherwise split the tile
    //    and chunk loops into prologue / steady-state / epilogue copies of the whole body
    //    (the `likely` of the dead-tile predicate asks for it): 4x the code and compile
    //    time, for bounds checks the trimmed loops do not need.
    out.never_partition_all();
    //    The undef pure definitions go on the device so that Halide does not treat the
    //    outputs as host buffers (see schedules/dsa_kv_gather/cuda.h, decision 5).
    s.out.gpu_single_thread();
    // 3. The LSE (variants with_lse) is written by the same threads, right after o: its
    //    loops fused with o's (compute_with at the row level), so both outputs read the
    //    one state. The scatter's head is an RVar (generator) so the two loop nests have
    //    the same bounds; with a pure head Var, compute_with adds prologue/epilogue loops
    //    for mismatched output extents, which PartitionLoops rejects on the GPU.
    if (s.lse.defined()) {
        s.lse.gpu_single_thread();
        s.lse.update()
            .reorder(s.ro.x, s.ro.w, s.ro.y, s.ro.z)
            .allow_race_conditions()
            .gpu_blocks(s.ro.y, s.ro.w, s.ro.z)
            .gpu_threads(s.ro.x)
            .never_partition_all()
            .compute_with(out, s.ro.x);
    }

    // 4. The query tile, staged once per block in shared memory as fp32 (BM x Lq x 4 bytes:
    //    16 KiB at Lq = 128, 32 KiB at 256), each thread loading its own row. Read in
    //    place, every thread would fetch its own q row from global memory for every key:
    //    32 cache lines per warp load instruction, the whole kernel at ~0.8 TFLOP/s
    //    (measured on the H200, case B). Stored qi-innermost so that the warp's reads of one
    //    head-dim element across its 32 rows hit 32 different banks.
    s.q_tile.compute_at(s.out, s.ro.w)
        .store_in(MemoryType::GPUShared)
        .reorder_storage(s.qi, s.dq)
        .gpu_threads(s.qi);

    // 5. The softmax state: per thread, in registers (G + 2 = Lv + 2 scalars), both stage
    //    updates inside the thread.
    s.state.compute_at(s.out, s.ro.x)
        .store_in(MemoryType::Register)
        .bound_extent(s.g, s.head_dim_v / G)
        .bound_extent(s.qi, 1)
        .bound_extent(s.qt, 1)
        .bound_extent(s.h, 1)
        .bound_extent(s.b, 1);
    const RDom *rdoms[2] = {&s.rp, &s.re};
    const Func *scores[2] = {&s.score_p, &s.score_e};
    const Func *dots[2] = {&s.dot_p, &s.dot_e};
    for (int u = 0; u < s.num_stages; u++) {
        const RDom &r = *rdoms[u];
        // Chunk outside key: the chunk predicates sit at the chunk loop (trimmed per tile),
        // the element predicates at the key loop (trimmed per row).
        s.state.update(u).reorder(r.x, r.y).never_partition_all();
        // 6. One logit per (key, row) in a register; q.k as V independent partial sums
        //    (ILP for the FMA latency) over Lq/V steps.
        LoopLevel at_key(s.state, r.x);
        Func score = *scores[u], dot = *dots[u];
        score.compute_at(at_key).store_in(MemoryType::Register);
        //    The lanes are unrolled inside the step loop (V independent FMA chains). As a
        //    vector instead, LLVM split the 8-wide float vector into pairs and packed every
        //    bf16 pair into 64-bit registers: ~6 instructions per FMA in the PTX.
        dot.compute_at(at_key).bound(s.lane, 0, V).store_in(MemoryType::Register).unroll(s.lane);
        dot.update().reorder(s.lane, s.rd.x).unroll(s.lane);
        // 7. The logit cap (tanh and a division) and the xai temperature (two logs) are
        //    select()s: Halide evaluates both sides, so every key paid for them even when
        //    they are off. Specialised, the common path (both off) computes neither; the
        //    branch is uniform across the block (runtime scalars). Measured: no change on
        //    case B (they were not what limits the kernel); kept, it costs nothing.
        score.specialize(s.cap_on);
        score.specialize(s.xai_on);
    }
}

}  // namespace livebound::extend_attention
