// Tensor-core building blocks for the CUDA generators (design: ../shared/reference/
// tensorize-halide21.md). Halide 21 emits no tensor-core instruction, so a kernel written in
// mma fragment coordinates (lane = 4 g + t, the PTX ISA's m16n8k16 layouts) calls
//   * extern __device__ helpers (generators/common/mma_helpers.cu) for mma.sync, the fp32 ->
//     bf16/fp16 pair packing and movmatrix; tools/ptx_link.py inlines their PTX into the
//     kernel's PTX at build time (cmake/LiveboundKernel.cmake, TENSOR_CORE);
//   * LLVM's own NVVM intrinsics, by name, for the warp shuffle and ex2 (native and
//     `convergent` in LLVM; no helper needed).
// Every call is a PureExtern: helpers are straight-line and a PureExtern call is never
// duplicated per Tuple component (an impure one is, by SplitTuples).
#pragma once

#include <limits>
#include <stdexcept>
#include <vector>

#include "Halide.h"

namespace livebound::mma {

inline Halide::Expr pure_call(const Halide::Type &t, const std::string &name, const std::vector<Halide::Expr> &args) {
    return Halide::Internal::Call::make(t, name, args, Halide::Internal::Call::PureExtern);
}

// D = A B + C for one 16x8x16 tile, fp32 accumulate; `a` 4 b32 (2 elements each), `b` 2 b32,
// `c` 4 fp32. `element_type` bfloat16 or float16 picks the instruction. The helper returns
// one D element per call ("elem" encoding); ptxas merges the 4 identical mma into one HMMA.
inline std::vector<Halide::Expr> mma_16816(const Halide::Type &element_type, const std::vector<Halide::Expr> &a,
                                           const std::vector<Halide::Expr> &b, const std::vector<Halide::Expr> &c) {
    const char *name = element_type.is_bfloat() ? "lb_mma_bf16_elem" : "lb_mma_f16_elem";
    std::vector<Halide::Expr> d;
    for (int i = 0; i < 4; i++) {
        d.push_back(pure_call(Halide::Float(32), name, {a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], c[2], c[3], i}));
    }
    return d;
}

// Two fp32 -> one b32 of two 16-bit floats (lo in bits 0..15), round to nearest even.
inline Halide::Expr pack_pair(const Halide::Type &element_type, const Halide::Expr &lo, const Halide::Expr &hi) {
    return pure_call(Halide::UInt(32), element_type.is_bfloat() ? "lb_pack_bf16x2" : "lb_pack_f16x2", {lo, hi});
}

// The warp's 8x8 matrix of 16-bit elements (lane 4g + t holds row g, columns 2t, 2t + 1)
// transposed: the lane then holds row g of the transpose.
inline Halide::Expr movmatrix_trans(const Halide::Expr &x) {
    return pure_call(Halide::UInt(32), "lb_movmatrix_trans", {x});
}

// The value of lane (lane ^ lane_mask), all 32 lanes taking part.
inline Halide::Expr shfl_xor(const Halide::Expr &v, int lane_mask) {
    return pure_call(Halide::Float(32), "llvm.nvvm.shfl.sync.bfly.f32", {Halide::Expr(int(0xffffffff)), v, Halide::Expr(lane_mask), Halide::Expr(31)});
}

// 2^x on the SFU (MUFU.EX2, flushes denormals); 2^(huge negative) is exactly 0.
inline Halide::Expr exp2_approx(const Halide::Expr &x) {
    return pure_call(Halide::Float(32), "llvm.nvvm.ex2.approx.ftz.f", {x});
}

// log2(x) on the SFU (MUFU.LG2), through the helper lb_log2_approx (no NVVM intrinsic for
// it is selectable in Halide 21's LLVM; libdevice's logf branches on its argument).
inline Halide::Expr log2_approx(const Halide::Expr &x) { return pure_call(Halide::Float(32), "lb_log2_approx", {x}); }

// The shared-S exchange (generator tc_share_s; helpers in mma_helpers.cu): a block-wide
// array of kShareExchangeFloats floats. Ordering is by data, as these are PureExtern like
// the other helpers: a put takes the result of the barrier it must follow, a barrier the
// sum of the puts' results (0) it must follow, a get the barrier's result. (No result is
// unused, so LLVM drops none.)
constexpr int kShareExchangeFloats = 6144;  // lb_s_exchange[6144] in mma_helpers.cu

// Puts v at exchange element `index` after the barrier whose result is `after`; returns 0.
inline Halide::Expr share_put(const Halide::Expr &v, const Halide::Expr &index, const Halide::Expr &after) {
    return pure_call(Halide::Int(32), "lb_share_put", {v, index, after});
}

// The block's barrier (every thread must reach it); returns `token`.
inline Halide::Expr share_barrier(const Halide::Expr &token) { return pure_call(Halide::Int(32), "lb_share_barrier", {token}); }

// `first`, once `after` is computed: an order token only (the helper is a move), which makes
// the Func that computes `after` a producer of the caller, realized before it.
inline Halide::Expr order_after(const Halide::Expr &first, const Halide::Expr &after) {
    return pure_call(Halide::Int(32), "lb_order_after", {first, after});
}

// The barrier of one q tile's warps when a block holds several: named barrier `id` (>= 1)
// of `count` threads; returns `token`.
inline Halide::Expr share_barrier_group(const Halide::Expr &token, const Halide::Expr &id, int count) {
    return pure_call(Halide::Int(32), "lb_share_barrier_group", {token, id, Halide::Expr(count)});
}

// Exchange element `index`, read after the barrier whose result is `token`.
inline Halide::Expr share_get(const Halide::Expr &index, const Halide::Expr &token) {
    return pure_call(Halide::Float(32), "lb_share_get", {index, token});
}

// The wide exchange (generator tc_share_wide): elements index and index + 1 (index even)
// in one 8-byte access.
inline Halide::Expr share_put2(const Halide::Expr &a, const Halide::Expr &b, const Halide::Expr &index,
                               const Halide::Expr &after) {
    return pure_call(Halide::Int(32), "lb_share_put2", {a, b, index, after});
}
// {element index, element index + 1}, read after the barrier whose result is `token`.
inline std::vector<Halide::Expr> share_get2(const Halide::Expr &index, const Halide::Expr &token) {
    Halide::Expr pair = pure_call(Halide::UInt(64), "lb_share_get2", {index, token});
    return {Halide::reinterpret(Halide::Float(32), Halide::cast(Halide::UInt(32), pair)),
            Halide::reinterpret(Halide::Float(32), Halide::cast(Halide::UInt(32), pair >> 32))};
}

// Q staged per thread (generator tc_q_stage): lb_q_stage[kQStageWords] in mma_helpers.cu.
constexpr int kQStageWords = 4608;
// Stores the four words at index..index + 3 (index % 4 == 0); returns 0 (an order token).
inline Halide::Expr q_put4(const std::vector<Halide::Expr> &words, const Halide::Expr &index) {
    return pure_call(Halide::Int(32), "lb_q_put4", {words[0], words[1], words[2], words[3], index});
}
// {word index, word index + 1} (index even), read after the puts whose token is `token`.
inline std::vector<Halide::Expr> q_get2(const Halide::Expr &index, const Halide::Expr &token) {
    Halide::Expr pair = pure_call(Halide::UInt(64), "lb_q_get2", {index, token});
    return {Halide::cast(Halide::UInt(32), pair), Halide::cast(Halide::UInt(32), pair >> 32)};
}

// Halide 21's SplitTuples does not look inside a call's arguments for reads of the Tuple
// being updated, so an update could store component 0 before an mma of component 1 reads
// its old value. Component i's new value gets a never-true test on the old component
// i + 1 (mod n), read outside any call: the chain puts every component into one cluster,
// so SplitTuples computes all new values before the first store. LLVM folds the tests away
// (nothing is below -inf; the PTX target has no infs). One small test per component: an
// or-tree over all components in every value made bounds inference quadratic in the
// Tuple's size (135 s of a head-dim-128 variant's generator; 50 s with the chain).
inline std::vector<Halide::Expr> order_tuple_update(const std::vector<Halide::Expr> &next,
                                                    const std::vector<Halide::Expr> &old) {
    const Halide::Expr minus_inf = Halide::Expr(-std::numeric_limits<float>::infinity());
    std::vector<Halide::Expr> out;
    for (size_t i = 0; i < next.size(); i++) {
        out.push_back(Halide::select(old[(i + 1) % old.size()] < minus_inf, old[i], next[i]));
    }
    return out;
}

// max / + over a list as a balanced tree (short dependence chains).
inline Halide::Expr tree_max(std::vector<Halide::Expr> v) {
    while (v.size() > 1) {
        std::vector<Halide::Expr> level;
        for (size_t i = 0; i + 1 < v.size(); i += 2) level.push_back(Halide::max(v[i], v[i + 1]));
        if (v.size() % 2) level.push_back(v.back());
        v.swap(level);
    }
    return v[0];
}
// values[index] for an index that is a constant once unrolled, as a balanced tree of
// selects: a select chain (Halide's mux) makes bounds inference merge its branches' boxes
// one by one under ever longer conditions (minutes per variant at 128 values).
inline Halide::Expr tree_mux(const Halide::Expr &index, const std::vector<Halide::Expr> &values, size_t lo = 0,
                             size_t hi = 0) {
    if (hi == 0) hi = values.size();
    if (hi - lo == 1) return values[lo];
    const size_t mid = (lo + hi) / 2;
    return Halide::select(index < int(mid), tree_mux(index, values, lo, mid), tree_mux(index, values, mid, hi));
}
inline Halide::Expr tree_sum(std::vector<Halide::Expr> v) {
    while (v.size() > 1) {
        std::vector<Halide::Expr> level;
        for (size_t i = 0; i + 1 < v.size(); i += 2) level.push_back(v[i] + v[i + 1]);
        if (v.size() % 2) level.push_back(v.back());
        v.swap(level);
    }
    return v[0];
}

}  // namespace livebound::mma
