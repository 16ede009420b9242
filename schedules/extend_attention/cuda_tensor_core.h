// K7 and K8 on CUDA tensor cores (the generator's define_tensor_core). Decisions, each with
// its reason (design and probe measurements: ../shared/reference/tensorize-halide21.md):
//
// Structure: one warp per 16-row q tile and part of O (o_split parts: the generator's
// tc_o_split, chosen per head dim by the variant manifest: 2 at head dim 256), `warps` warps
// of one head per block. A lane's state (its O fragments, row max and partial row sums) lives in registers for the whole
// key loop, whose tiles are the state updates' RDoms *inside* the lane loop: no shared
// memory, no barrier, so Halide keeps the accumulators in registers and TrimNoOps trims the
// key-tile loops from the warp-uniform tile predicates. K/V fragments come straight from
// global memory (L1/L2) in 16-byte loads.
//
// The shared-S form (share_s, generator tc_share_s): the block is one q tile's o_split
// warps; each computes its steps of S (s_part), the exchange adds the parts through shared
// memory between two block barriers per key tile (share_token), and every warp goes on with the
// whole tile as above. Its fragments are 8-byte loads (a warp's steps are every o_split-th
// 16 dims).
#pragma once

#include "stages.h"

namespace livebound::extend_attention {

// A fragment Func is only ever evaluated at the lane's own point: its lane (0..31) and its
// q tile / head / request / key tile have extent 1 where it is computed. Said
// explicitly: any cross-lane read becomes a compile error (instead of another lane's mma
// computed here), and the register allocation has a constant size (bounds inference would
// otherwise intersect the key tile with the tile loop's derived bounds: extent "<= 1").
inline void pin_to_lane(Halide::Func f, const std::vector<Halide::Var> &point) {
    for (const Halide::Var &v : point) f.bound_extent(v, 1);
}

inline void schedule_cuda_tensor_core(TensorCoreStages &s, const TensorCoreKnobs &k) {
    using namespace Halide;
    // 1. The request ranges inline (uniform loads of qo_indptr / kv_indptr through L1).
    s.lens.compute_inline();

    // 2. The o scatter: blocks over (q-tile group, head, request), threads (lane, warp):
    //    thread_id_x spans exactly the 32 lanes (t, g), thread_id_y the warps (q tiles; the
    //    O part, and thread_id_z the q tiles, when O is split), so every
    //    predicate on the q tile is warp-uniform. The output elements of a lane (its rows
    //    g, g + 8, its columns of each n-tile) unrolled: the state's components are then
    //    addressed by constants. Rows of different requests are disjoint and tail rows are
    //    written by lanes that computed identical bits, hence allow_race_conditions.
    //    ro = (jj, wq, dq, hr, lane, [os,] qt, h, b). With O split over o_split warps per q
    //    tile (head dim 256) the part os is the middle thread dimension, and a block holds
    //    warps / o_split q tiles (still `warps` warps).
    const RDom &ro = s.ro;
    const int X = s.o_split > 1 ? 1 : 0;
    RVar lane = ro[4], qto("qto"), qti("qti");
    auto scatter = [&](Stage st) {
        if (s.share_s && k.warps == s.o_split) {
            //  Shared S, one q tile per block (its o_split warps): no condition on a thread
            //  index sits around the block barrier (no q-tile split). With several q tiles
            //  (warps a multiple of o_split, below) thread_id_z is the q tile, each meets its
            //  warps at a named barrier, and only the q tile's conditions (thread_id_z) sit
            //  around it (ConvergenceCheck's group barrier).
            st.allow_race_conditions().gpu_blocks(ro[6], ro[7], ro[8]).gpu_threads(lane, ro[5]);
        } else {
            st.split(ro[5 + X], qto, qti, k.warps / s.o_split, TailStrategy::GuardWithIf)
                .allow_race_conditions()
                .gpu_blocks(qto, ro[6 + X], ro[7 + X]);
            if (X) {
                st.gpu_threads(lane, ro[5], qti);
            } else {
                st.gpu_threads(lane, qti);
            }
        }
        st.unroll(ro[0])
            .unroll(ro[1])
            .unroll(ro[2])
            .unroll(ro[3])
            //  No loop partitioning: prologue/epilogue copies of the whole kernel body for
            //  bounds checks the trimmed loops do not need.
            .never_partition_all();
    };
    Stage out = s.out.update();
    scatter(out);
    //    The undef pure definitions on the device, so that the outputs are not host buffers.
    s.out.gpu_single_thread();
    // 3. The LSE (with_lse) by the same threads right after o (loops fused at the lane):
    //    both read the one state. (The same RDom and loops as o: compute_with needs the
    //    same loops outside the lane.)
    if (s.lse.defined()) {
        s.lse.gpu_single_thread();
        scatter(s.lse.update());
        s.lse.update().compute_with(out, lane);
    }

    // 4. The lane's state and row sums in registers at the lane; both stage updates
    //    (the key-tile loops) inside it.
    s.state.compute_at(s.out, lane).store_in(MemoryType::Register);
    s.row_sum.compute_at(s.out, lane).store_in(MemoryType::Register);
    // The point of a key-tile Func (and of Q, K) in a lane: with S shared, the warp os too.
    auto with_os = [&](std::vector<Halide::Var> point) {
        if (s.share_s) point.push_back(s.os);
        return point;
    };
    const int pairs = s.share_s ? 2 : 4;  // b32 pairs per fragment load: 8 or 16 bytes
    for (int st = 0; st < s.num_stages; st++) {
        const RDom &rk = s.rk[st], &rs = s.rs[st];
        s.state.update(st).never_partition_all();
        //    The common case (no custom mask, cap or xai) specialised: its logit is q.k *
        //    scale, and the mask bytes are not loaded (the general form loads 4 * BN / 8
        //    of them per key tile and lane, and computes a tanh per element for the cap).
        //    The branch is uniform (a runtime scalar); the kernel holds both forms. Measured
        //    (SASS of the key loop, H200 benchmark): 18 -> 8.4-8.8 instructions per HMMA,
        //    35 -> 135 useful TFLOP/s on case B (autotune/records/extend_attention.jsonl).
        s.state.update(st).specialize(s.plain_logits);
        // 5. The S tile per key tile, in registers, pinned to the lane (pin_to_lane). With S
        //    shared: the warp's part (the mma), the exchange's token, then the whole tile.
        Func sf = s.share_s ? s.s_part[st] : s.s[st];
        sf.compute_at(s.state, rk.x).store_in(MemoryType::Register).unroll(s.nt);
        pin_to_lane(sf, with_os({s.lane, s.qt, s.h, s.b, s.kt}));
        sf.update().reorder(s.nt, rs.x, rs.y).unroll(s.nt).unroll(rs.x).unroll(rs.y);
        if (s.share_s) {
            s.share_token[st].compute_at(s.state, rk.x).store_in(MemoryType::Register);
            pin_to_lane(s.share_token[st], with_os({s.lane, s.qt, s.h, s.b, s.kt}));
            if (s.share_scatter) {
                s.sum_token[st].compute_at(s.state, rk.x).store_in(MemoryType::Register);
                pin_to_lane(s.sum_token[st], with_os({s.lane, s.qt, s.h, s.b, s.kt}));
            }
            s.s[st].compute_at(s.state, rk.x).store_in(MemoryType::Register).unroll(s.nt);
            pin_to_lane(s.s[st], with_os({s.lane, s.qt, s.h, s.b, s.kt}));
        }
        //    The masked logits and the rows' tile maxima (quad shuffles) per key tile:
        if (k.staged_logits) {
            //  in registers, read by the update as values (its expressions stay small; the
            //  logits specialised as the update is);
            Func logit = s.logit[st], tile_max = s.tile_max[st];
            logit.compute_at(s.state, rk.x).store_in(MemoryType::Register).unroll(s.nt).specialize(s.plain_logits);
            pin_to_lane(logit, with_os({s.lane, s.qt, s.h, s.b, s.kt}));
            tile_max.compute_at(s.state, rk.x).store_in(MemoryType::Register);
            pin_to_lane(tile_max, with_os({s.lane, s.qt, s.h, s.b, s.kt}));
        } else {
            //  or inlined into the update.
            s.logit[st].compute_inline();
            s.tile_max[st].compute_inline();
        }
        // 6. K fragments per 32-element chunk (4 pairs = one 16-byte load per n-tile), V
        //    fragments per key tile (all column blocks at once: D * BN / 64 registers, 64 at
        //    D = 128, BN = 32; BN = 64 spilled, see cmake/families/extend_attention.cmake).
        const int k_pairs = s.k_chunks ? 4 : pairs;  // tc_share_k_chunks: 16-byte K loads
        //    With values_in_keys V's fragments are K's: the whole tile's K fragments once per
        //    key tile, read by S's steps and, as V, by the state update (V inlined).
        if (s.values_in_keys[st]) {
            s.k[st].compute_at(s.state, rk.x).unroll(s.c);
        } else {
            s.k[st].compute_at(sf, rs.y);
        }
        s.k[st].store_in(MemoryType::Register).bound(s.w, 0, k_pairs).vectorize(s.w).unroll(s.nt);
        pin_to_lane(s.k[st], with_os({s.lane, s.h, s.b, s.kt}));
        if (s.values_in_keys[st]) {
            s.v[st].compute_inline();
        } else {
            s.v[st].compute_at(s.state, rk.x).store_in(MemoryType::Register).bound(s.w, 0, 4);
            if (s.values_in_keys[0] && !s.k_chunks) {
                //  values_in_keys_list_only's extend stage loads the V words K's layout
                //  gives the warp: words 0-1 and 2-3 are two steps apart (two 8-byte loads).
                Halide::Var half("half"), pair("pair");
                s.v[st].split(s.w, half, pair, 2).vectorize(pair).unroll(half);
            } else {
                s.v[st].vectorize(s.w);
            }
            s.v[st].unroll(s.hf).unroll(s.ku).unroll(s.dq);
            pin_to_lane(s.v[st], {s.lane, s.os, s.h, s.b, s.kt});
        }
        // 7. Q fragments re-read (16-byte loads, L1) per chunk of every key tile when they
        //    do not stay in registers.
        if (!k.q_in_registers && !s.q_staged) {
            Func qw = s.q.in(sf);
            qw.compute_at(sf, rs.y).store_in(MemoryType::Register).bound(s.w, 0, pairs).vectorize(s.w).unroll(s.rr);
            pin_to_lane(qw, with_os({s.lane, s.qt, s.h, s.b}));
        }
    }
    // 8. The list keys' cache slots once per key tile (one per n-tile and lane).
    s.slot.compute_at(s.state, s.rk[0].x).store_in(MemoryType::Register).unroll(s.nt);
    pin_to_lane(s.slot, {s.lane, s.b, s.kt});
    if (s.q_staged) {
        //    Q staged (tc_q_stage): the lane stores its fragments once per q tile, before
        //    the key loops; the loops reload them from shared memory.
        if (k.q_in_registers) throw std::invalid_argument("extend_attention tc_q_stage: needs tc_q_in_registers=0");
        s.q_stage_token.compute_at(s.out, lane).store_in(MemoryType::Register);
        pin_to_lane(s.q_stage_token, with_os({s.lane, s.qt, s.h, s.b}));
    }
    if (k.q_in_registers) {
        s.q.compute_at(s.out, lane).store_in(MemoryType::Register).bound(s.w, 0, pairs).vectorize(s.w).unroll(s.rr).unroll(s.c);
        pin_to_lane(s.q, with_os({s.lane, s.qt, s.h, s.b}));
    }
    pin_to_lane(s.state, {s.lane, s.os, s.qt, s.h, s.b});
    pin_to_lane(s.row_sum, {s.lane, s.os, s.qt, s.h, s.b});
}

}  // namespace livebound::extend_attention
