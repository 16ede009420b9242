// Smoke-test kernels for the tensor-core build-and-load machinery (not a product kernel):
// one GEMM C[M x N] = A[M x K] . B^T, with B given as [N x K] (B^T rows), per 16-row tile of
// C one warp (one block), fp32 accumulation in registers, every 16x8x16 step one
// mma.sync.m16n8k16 through the extern helpers of generators/common/mma_helpers.cu.
// It exercises what the attention kernels rely on: the helpers called as PureExtern,
// fragment-space indexing (lane = 4g + t), a per-lane Tuple state updated over a serial
// reduction loop inside the lane loop, tools/ptx_link.py (inlining, lint, ptxas) and the
// runtime's cubin loader. tests/tensor_core/test_mma_tile_cuda.cpp checks it on a GPU.
//
// Layouts (Halide dimension order is innermost first; torch-style row-major in brackets):
//   a     pack_a = false: (K/2, M) uint32 = A [M, K] bf16 (or fp16) as pairs along k, the
//                         lower column in bits 0..15;
//         pack_a = true:  (K, M) float = A [M, K] fp32, rounded to bf16/fp16 in the kernel by
//                         lb_pack_*x2 (the way attention packs P into an A operand).
//   b     b_kn = false:   (K/2, N) uint32 = B [N, K] as pairs along k: fragments load directly;
//         b_kn = true:    (N/2, K) uint32 = B^T [K, N] as pairs along n (the layout of V in
//                         P.V): fragments come from lb_movmatrix_trans of 8x8 blocks.
//   c     (col 8, j N/8, g 8, hm M/8) float over a dense C [M, N]: C[8 hm + g][8 j + col];
//         strides (1, 8, N, 8 N). The dimensions are those of the mma fragments (lane 4g + t
//         holds col = 2t + q of rows g and g + 8 of its tile), so that every lane writes only
//         its own accumulators and no index needs a `% 8` that bounds inference could not
//         narrow to the lane's own row.
// K must be a multiple of 16 (the k loop runs K/16 steps); M a multiple of 16 (checked by
// Halide: the rows are split into tiles with a RoundUp tail); N = 8 * n_tiles is a compile-time fact (the state lives in registers).
#include "Halide.h"
#include "common/convergence_check.h"
#include "common/mma.h"

#include <vector>

namespace livebound {
namespace {

using namespace Halide;

class MmaTile : public Generator<MmaTile> {
public:
    GeneratorParam<bool> fp16{"fp16", false};      // fp16 inputs (lb_mma_f16_elem) instead of bf16
    GeneratorParam<bool> pack_a{"pack_a", false};  // A as fp32, packed in the kernel
    GeneratorParam<bool> b_kn{"b_kn", false};      // B^T rows [K, N], transposed by movmatrix
    GeneratorParam<int> n_tiles{"n_tiles", 4};     // N = 8 * n_tiles columns of C
    // Wrong on purpose (the ConvergenceCheck test): a k-loop predicate that depends on the
    // lane's row group g, so that TrimNoOps gives every lane its own trip count and the mma
    // would run under lane-dependent control flow. The generator must refuse it.
    GeneratorParam<bool> lane_dependent_bound{"lane_dependent_bound", false};

    // Added by configure() (their types depend on the params), in argument order a, b.
    Input<Buffer<uint32_t, 2>> *a_pairs = nullptr;
    Input<Buffer<float, 2>> *a_floats = nullptr;
    Input<Buffer<uint32_t, 2>> *b_pairs = nullptr;
    Output<Buffer<float, 4>> c{"c"};

    void configure() {
        if (pack_a) {
            a_floats = add_input<Buffer<float, 2>>("a");
        } else {
            a_pairs = add_input<Buffer<uint32_t, 2>>("a");
        }
        b_pairs = add_input<Buffer<uint32_t, 2>>("b");
    }

    void generate() {
        const int N = 8 * n_tiles;
        const Type element_type = fp16 ? Float(16) : BFloat(16);  // picks lb_mma_{f16,bf16}_elem, lb_pack_*x2
        Var col("col"), hm("hm"), t("t"), j("j"), g("g"), tile("tile"), r("r"), kstep("kstep");
        Expr K = pack_a ? a_floats->dim(0).extent() : 2 * a_pairs->dim(0).extent();

        // A fragment register r (0..3) of the lane (t, g) for k step kk of row tile `tile`:
        // row g + 8 (r % 2), k pair 8 kk + t + 4 (r / 2).
        Func a_frag("a_frag");
        {
            Expr row = 16 * tile + g + 8 * (r % 2), pair = 8 * kstep + t + 4 * (r / 2);
            a_frag(r, t, g, tile, kstep) =
                pack_a ? mma::pack_pair(element_type, (*a_floats)(2 * pair, row), (*a_floats)(2 * pair + 1, row))
                       : (*a_pairs)(pair, row);
        }
        // B fragment register r (0..1) for column tile j: B[n = 8j + g][k = 16 kk + 8r + 2t ..+1].
        Func b_frag("b_frag");
        if (b_kn) {
            // Lane 4g + t loads B^T row k = 16 kk + 8r + g, columns n = 8j + 2t ..+1; the 8x8
            // transpose hands it B^T rows 16 kk + 8r + 2t ..+1 of column 8j + g.
            b_frag(r, t, g, j, kstep) =
                mma::movmatrix_trans((*b_pairs)(4 * j + t, 16 * kstep + 8 * r + g));
        } else {
            b_frag(r, t, g, j, kstep) = (*b_pairs)(8 * kstep + t + 4 * r, 8 * j + g);
        }

        // The lane's accumulators of column tile j: C[16 tile + g][8j + 2t ..+1] and
        // C[16 tile + g + 8][8j + 2t ..+1].
        Func acc("acc");
        acc(j, t, g, tile) = Tuple(0.0f, 0.0f, 0.0f, 0.0f);
        RDom kk(0, K / 16, "kk");
        if (lane_dependent_bound) kk.where(kk <= g);
        std::vector<Expr> old, a, b;
        for (int e = 0; e < 4; e++) old.push_back(acc(j, t, g, tile)[e]);
        for (int i = 0; i < 4; i++) a.push_back(a_frag(i, t, g, tile, kk));
        for (int i = 0; i < 2; i++) b.push_back(b_frag(i, t, g, j, kk));
        std::vector<Expr> next = mma::mma_16816(element_type, a, b, old);
        // (common/mma.h: Halide 21's SplitTuples misses reads inside call arguments.)
        acc(j, t, g, tile) = Tuple(mma::order_tuple_update(next, old));

        // C[8 hm + g][8 j + col]: tile = hm / 2, h = hm % 2 (upper rows), t = col / 2, q = col % 2;
        // element 2h + q of the lane's fragment.
        Tuple fragment = acc(j, col / 2, g, hm / 2);
        Expr upper = hm % 2 == 1, odd = col % 2 == 1;
        c(col, j, g, hm) = select(upper, select(odd, fragment[3], fragment[2]), select(odd, fragment[1], fragment[0]));

        // ---- interface: dense rows, pairs packed along k (or n) ----
        if (pack_a) {
            a_floats->dim(0).set_min(0).set_stride(1);
            a_floats->dim(1).set_min(0);
        } else {
            a_pairs->dim(0).set_min(0).set_stride(1);
            a_pairs->dim(1).set_min(0);
        }
        b_pairs->dim(0).set_min(0).set_stride(1);
        b_pairs->dim(1).set_min(0);
        const int extents[3] = {8, n_tiles, 8}, strides[4] = {1, 8, N, 8 * N};
        for (int d = 0; d < 4; d++) {
            c.dim(d).set_min(0).set_stride(strides[d]);
            if (d < 3) c.dim(d).set_extent(extents[d]);
        }

        // ---- schedule: a block of one warp per 16-row tile; lane = 4g + t ----
        Var tv("tv"), qv("qv"), hv("hv"), lane("lane");
        c.split(col, tv, qv, 2)
            .split(hm, tile, hv, 2, TailStrategy::RoundUp)
            .reorder(qv, hv, j, tv, g, tile)
            .fuse(tv, g, lane)
            .gpu_blocks(tile)
            .gpu_threads(lane)
            .unroll(qv)
            .unroll(hv)
            .unroll(j);
        c.never_partition_all();
        // The state: 4 floats per column tile and lane, in registers for the whole k loop,
        // which runs serially inside the lane loop. Only the lane's own (t, g) is ever read.
        acc.compute_at(c, lane).store_in(MemoryType::Register).bound_extent(t, 1).bound_extent(g, 1).unroll(j);
        acc.update().reorder(j, t, g, tile, kk).unroll(j).never_partition_all();
        // Fragments per k step: A once for all column tiles, B per column tile.
        // (One k step each: said explicitly, so that a predicated k loop keeps constant sizes.)
        a_frag.compute_at(acc, kk).store_in(MemoryType::Register).bound(r, 0, 4).bound_extent(kstep, 1).unroll(r);
        b_frag.compute_at(acc, kk).store_in(MemoryType::Register).bound(r, 0, 2).bound_extent(kstep, 1).unroll(r).unroll(j);
        // The verifier the attention generator runs too: no mma under lane-dependent control flow.
        get_pipeline().add_custom_lowering_pass(new ConvergenceCheck("lb_test_mma_tile"));
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::MmaTile, lb_test_mma_tile)
