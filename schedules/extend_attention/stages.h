// What the K7 schedules act on: the generator's Funcs, Vars and RDoms, and the named knobs.
#pragma once

#include "Halide.h"

namespace livebound::extend_attention {

// Schedule knobs. BM and BN are also facts of the algorithm (the query tile qt is a Var of
// the algorithm, the key chunk an RVar), so they are GeneratorParams `block_m`/`block_n`
// of the generator; the CPU-only knobs follow.
struct Knobs {
    // Query rows per tile (BLOCK_M). SGLang on sm_90: 128 for Lq <= 128, 64 above. The CPU
    // build uses 32: a tile's state is Lv x BM x 3 floats (48 KiB at Lv = 128), and short
    // requests waste less on the partially live last tile.
    int block_m = 32;
    // Keys per chunk (BLOCK_N). SGLang on sm_90: 64.
    int block_n = 32;
    // CPU: fp32 lanes of the head-dim vectors (8 = one AVX2 register).
    int cpu_vector = 8;
};

// G = head-dim elements per online-softmax state (GeneratorParam acc_group = 0 asks the
// target): every head-dim element goes through the same operations whatever G (each
// group repeats the max/denominator recurrence); only the state's layout changes.
// CPU: G = 1, one state per head-dim element, so the head-dim loop vectorises over states
// (the max/denominator are recomputed per element: 8 lanes of one vector, no extra
// instructions).
inline int cpu_acc_group(int /*head_dim_v*/) { return 1; }
// CUDA: one state per row (G = Lv), so a thread computes each exp once per key and keeps
// the whole row in registers (Lv + 2 of them: the CUDA variants stop at Lv = 256).
inline int cuda_acc_group(int head_dim_v) { return head_dim_v; }

struct Stages {
    Halide::Func state;        // (g, qi, qt, h, b) Tuple{running max, denominator, acc[g*G + i], i < G}
    Halide::Func score_p;      // (j, qi, qt, h, b) prefix logit (after scale and cap)
    Halide::Func score_e;      // (n, qi, qt, h, b) extend logit (K7 only)
    Halide::Func dot_p, dot_e; // (lane, key, qi, qt, h, b): per-lane partial q.k dots
    Halide::Func q_tile;       // (dq, qi, qt, h, b) the query tile in fp32
    Halide::Func lens;         // (b) Tuple{q0, E, k0, P[, pos0 (K8)]}: the request's ranges
    Halide::Func finish;       // (d, qi, qt, h, b) Tuple{o value, lse value}, inlined
    Halide::Func out;          // o_extend (d, h, t): undef + scatter update
    Halide::Func lse;          // lse (h, t): undef + scatter update
    Halide::RDom rp, re;       // prefix (K8: unified list) / extend keys: x = key within chunk, y = chunk
    int num_stages;            // state updates: 2 (K7: prefix, extend chunk), 1 (K8: unified list)
    Halide::RDom ro;           // output rows: x = qi, y = qt, z = b, w = head
    Halide::RDom rd;           // the q.k steps (Lq / V of them, V lanes each)
    Halide::Expr cap_on, xai_on;  // logit cap / xai temperature in use (runtime conditions)
    Halide::Var d, dq, g, qi, qt, h, b, lane, key, t;
    int acc_group;             // G: head-dim elements per softmax state
    int head_dim_v;            // Lv
    bool bounded;
};

// What the tensor-core schedule (cuda_tensor_core.h) acts on: the generator's
// define_tensor_core() Funcs in mma fragment coordinates (lane = 4g + t).
struct TensorCoreStages {
    // Fragment Funcs are indexed by the lane (0..31; t = lane % 4, g = lane / 4).
    Halide::Func q{"q_frag"};         // (w, rr, lane, c, qt, h, b) b32: Q pairs 16c + 4t + w of the lane's row rr
    Halide::Func slot{"kv_slot"};     // (nt, lane, kt, b) int32: cache slot of list key 8nt + g of key tile kt
    Halide::Func k[2] = {Halide::Func("k_frag_list"), Halide::Func("k_frag_extend")};  // (w, lane, nt, c, kt, h, b) b32
    Halide::Func v[2] = {Halide::Func("v_frag_list"), Halide::Func("v_frag_extend")};  // (w, lane, hf, ku, dq, os, kt, h, b) b32
    // The key-tile Funcs below take the warp os after the lane in the shared-S form (share_s):
    // (nt, lane, [os,] qt, h, b, kt); so do q (w < 2, c = the warp's mma step) and k there.
    Halide::Func s[2] = {Halide::Func("s_list"), Halide::Func("s_extend")};  // (nt, lane, qt, h, b, kt) Tuple of 4 fp32: S tile
    Halide::Func s_part[2] = {Halide::Func("s_part_list"), Halide::Func("s_part_extend")};  // shared S: the warp's part of the S tile
    Halide::Func share_token[2] = {Halide::Func("share_token_list"), Halide::Func("share_token_extend")};  // shared S: (lane, os, qt, h, b, kt) int, the barrier's result
    Halide::Func sum_token[2] = {Halide::Func("sum_token_list"), Halide::Func("sum_token_extend")};  // tc_share_scatter: (lane, os, qt, h, b, kt) int, the second barrier's result
    Halide::Func logit[2] = {Halide::Func("logit_list"), Halide::Func("logit_extend")};  // (nt, lane, qt, h, b, kt) Tuple of 4 fp32: masked logits, log2 units
    Halide::Func tile_max[2] = {Halide::Func("tile_max_list"), Halide::Func("tile_max_extend")};  // (lane, qt, h, b, kt) Tuple: row g, g + 8 maxima
    Halide::Func q_stage_token{"q_stage_token"};  // tc_q_stage: (lane, os, qt, h, b) int, 0 once the lane's Q words are stored
    Halide::Func state{"state_tc"};   // (lane, os, qt, h, b) Tuple: Lv/(2 o_split) O fragment floats, m[2], l[2]
    Halide::Func row_sum{"row_sum"};  // (lane, os, qt, h, b) Tuple{l row g, l row g + 8}, quad-reduced
    Halide::Func lens;                // (b) the request's ranges
    Halide::Func out, lse;            // o_extend, lse (undef + scatter)
    Halide::RDom rk[2];               // key tiles of stage 0 (list) / 1 (extend)
    Halide::RDom rs[2];               // S tile: x = mma step in a chunk, y = chunk
    Halide::RDom ro;                  // o and lse scatters: (jj, wq, dq, hr, lane, [os,] qt, h, b)
    int o_split = 1;                  // warps per q tile (generator tc_o_split); os in ro when > 1
    bool share_s = false;             // the warps of a q tile compute S together (generator tc_share_s)
    bool q_staged = false;            // Q reloaded from lb_q_stage per key tile (generator tc_q_stage)
    bool k_chunks = false;            // shared S: K loaded a 32-element chunk (16 bytes) per lane at a time (generator tc_share_k_chunks)
    bool share_scatter = false;       // each warp adds its own n-tiles' parts, then shares the sums (generator tc_share_scatter)
    bool values_in_keys[2] = {};      // per stage: V fragments are K's (generator values_in_keys): no V loads
    int num_stages = 2;
    Halide::Expr plain_logits;        // no custom mask, cap or xai (a runtime condition)
    Halide::Var w, rr, c, nt, lane, hf, ku, dq, kt, qt, h, b, os;
};

// Tensor-core schedule knobs (values: ../shared/reference/tensorize-halide21.md, H200).
struct TensorCoreKnobs {
    // Warps (16-row q tiles of one head) per block: they read the same K/V lines (L1 reuse).
    int warps = 4;
    // Q fragments held in registers across the key loop (64 registers at head dim 256:
    // re-reading them from L1 every key tile was 15-60 % faster there).
    bool q_in_registers = true;
    // With S shared (share_s) a warp holds only its 1 / o_split of Q (36 registers at 576 over
    // four warps), yet re-reading it is faster: K7 bounded bf16 576/512 (H100, 2026-12-05,
    // autotune/records/k7-mla-share-h200.jsonl) 18,946 / 15,496 us re-read against 19,539 /
    // 16,296 us held (ragged paged bs 8 / causal 8192), ptxas 0 spill bytes against 56.
    static bool q_in_registers_for(int head_dim, int s_parts = 1) {
        return s_parts == 1 && head_dim <= 128;
    }
    // The masked logits and tile maxima computed per key tile into registers (true) or
    // inlined into the state update (false), where its expressions repeat them per use.
    // Head dim 128 (autotune/records/extend_attention.jsonl): inlined, 126 s to generate and
    // 8.4 SASS instructions per HMMA in the extend key loop, no spill; staged, 194 s, 9.3
    // and 36 bytes spilled. Head dim 256: inlined, TrimNoOps ran over 30 minutes; staged,
    // it takes a second (the whole variant about 3 minutes with o_split 2).
    bool staged_logits = false;
    static bool staged_logits_for(int head_dim) { return head_dim > 128; }
};

}  // namespace livebound::extend_attention
