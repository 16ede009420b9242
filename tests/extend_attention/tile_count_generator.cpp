// Test-only: the chunk counter of extend attention (K7, K8), built for the CPU and linked
// into test_tile_counts only (never into liblivebound).
//
// counts(stage, qt, h, b) = the number of key chunks of stage `stage` (0: the key list, 1:
// K7's extend keys) whose chunk-level predicates hold for query tile qt of request b. The
// chunk RDoms take their predicates, the request ranges and the window/causal limits from
// common/extend_attention_tiles.h, the code the attention generator builds its key loops
// from; so Halide derives the same chunk loop bounds here (FileCheck k7_count_*.check) and
// the counts are the kernels' derived trip counts, which test_tile_counts compares with
// the ideal (chunks holding a visible element).
#include "Halide.h"
#include "common/extend_attention_tiles.h"

namespace livebound {
namespace {

using namespace Halide;

class ExtendAttentionTileCount : public Generator<ExtendAttentionTileCount> {
public:
    // K8 (one stage over the unified list, queries at prefix_lens[b]) instead of K7.
    GeneratorParam<bool> unified{"unified", false};
    // true: the derived bounds; false: the full-width twin's chunk loops.
    GeneratorParam<bool> bounded{"bounded", true};
    // BLOCK_M / BLOCK_N: query rows per tile, keys per chunk.
    GeneratorParam<int> block_m{"block_m", 32};
    GeneratorParam<int> block_n{"block_n", 32};

    // [B + 1] int32: the requests' query rows (qo_indptr) and key lists (kv_indptr).
    Input<Buffer<int32_t, 1>> qo_indptr{"qo_indptr"};
    Input<Buffer<int32_t, 1>> kv_indptr{"kv_indptr"};
    // K8 only (read when unified), [>= 1] int32: where each request's queries start.
    Input<Buffer<int32_t, 1>> prefix_lens{"prefix_lens"};
    // The attention call's scalars these predicates read.
    Input<bool> is_causal{"is_causal"};
    Input<int32_t> sliding_window{"sliding_window"};
    Input<int32_t> max_len_extend{"max_len_extend"};
    // K8 only: a custom mask replaces the causal rule.
    Input<bool> has_mask{"has_mask"};
    // T (rows of the extend tensors) and the length of kv_indices.
    Input<int32_t> num_tokens{"num_tokens"};
    Input<int32_t> num_indices{"num_indices"};
    // (2, num_q_tiles, Hq, B) int32: chunks visited per stage and query tile.
    Output<Buffer<int32_t, 4>> counts{"counts"};

    void generate() {
        using namespace extend_attention;
        const int BM = block_m, BN = block_n;
        qo_indptr.dim(0).set_min(0).set_stride(Expr());
        kv_indptr.dim(0).set_min(0).set_stride(Expr());
        prefix_lens.dim(0).set_min(0).set_stride(Expr());
        Expr max_ext = max(max_len_extend, 0);
        Expr num_q_tiles = (max_ext + (BM - 1)) / BM;
        IndexRead read_qo = [this](const Expr &i) { return qo_indptr(i); };
        IndexRead read_kv = [this](const Expr &i) { return kv_indptr(i); };
        IndexRead read_prefix = [this](const Expr &i) { return prefix_lens(i); };
        const RequestRanges req = request_ranges(b, read_qo, read_kv, unified ? &read_prefix : nullptr,
                                                 prefix_lens.dim(0).extent(), num_tokens, num_indices, max_ext);
        Expr big = min(num_indices + num_q_tiles * BM + BN, Expr(1 << 29));
        const Limits limits = window_limits(sliding_window, is_causal, big, unified ? Expr(has_mask) : Expr());
        const TileShape tiles{BM, BN, bounded, unified};

        list_chunks = RDom(0, (num_indices + (BN - 1)) / BN, "cp");
        extend_chunks = RDom(0, (num_q_tiles * BM + (BN - 1)) / BN, "ce");
        for (const Expr &p : chunk_predicates(0, list_chunks.x, qt, tiles, req, limits)) list_chunks.where(p);
        for (const Expr &p : chunk_predicates(1, extend_chunks.x, qt, tiles, req, limits)) extend_chunks.where(p);
        counts(stage, qt, h, b) = 0;
        // +1 per chunk whose chunk predicates hold (the `* 0` only names the RDom); K8 has
        // the list stage only.
        counts(0, qt, h, b) += 1 + list_chunks.x * 0;
        if (!unified) counts(1, qt, h, b) += 1 + extend_chunks.x * 0;
    }

    void schedule() {
        // The chunk loops alone, one scalar loop per (qt, h, b) like the kernels' (the chunk
        // RVar innermost, the tile outside it), requests in parallel.
        counts.compute_root().parallel(b);
        counts.update(0).reorder(list_chunks.x, qt, h, b).parallel(b);
        if (!unified) counts.update(1).reorder(extend_chunks.x, qt, h, b).parallel(b);
    }

private:
    Var stage{"stage"}, qt{"qt"}, h{"h"}, b{"b"};
    RDom list_chunks, extend_chunks;
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::ExtendAttentionTileCount, extend_attention_tile_count)
