// Instruments of extend attention's chunk loops (K7, K8), built for the CPU and never
// linked into liblivebound:
//   extend_attention_tile_count: counts(stage, qt, h, b), the key chunks of stage `stage`
//     (0: the key list, 1: K7's extend keys) that query tile qt of request b visits;
//     test_tile_counts compares them with the ideal (chunks holding a visible element).
//   extend_attention_chunk_map: visited(chunk, stage, qt, b) = 1 for each chunk that tile
//     visits, 0 for the rest; `livebound picture k7|k8` draws it.
// Their chunk RDoms take their predicates, the request ranges and the window/causal limits
// from common/extend_attention_tiles.h, the code the attention generator builds its key
// loops from; so Halide derives the same chunk loop bounds here (FileCheck k7_count_*.check)
// and what they record is the kernels' derived trip counts.
#include "Halide.h"
#include "common/extend_attention_tiles.h"

namespace livebound {
namespace {

using namespace Halide;

// The inputs and the chunk RDoms both instruments share.
template <typename T>
class ChunkInstrument : public Generator<T> {
public:
    // K8 (one stage over the unified list, queries at prefix_lens[b]) instead of K7.
    GeneratorParam<bool> unified{"unified", false};
    // true: the derived bounds; false: the full-width twin's chunk loops.
    GeneratorParam<bool> bounded{"bounded", true};
    // BLOCK_M / BLOCK_N: query rows per tile, keys per chunk.
    GeneratorParam<int> block_m{"block_m", 32};
    GeneratorParam<int> block_n{"block_n", 32};

    // [B + 1] int32: the requests' query rows (qo_indptr) and key lists (kv_indptr).
    GeneratorInput<Buffer<int32_t, 1>> qo_indptr{"qo_indptr"};
    GeneratorInput<Buffer<int32_t, 1>> kv_indptr{"kv_indptr"};
    // K8 only (read when unified), [>= 1] int32: where each request's queries start.
    GeneratorInput<Buffer<int32_t, 1>> prefix_lens{"prefix_lens"};
    // The attention call's scalars these predicates read.
    GeneratorInput<bool> is_causal{"is_causal"};
    GeneratorInput<int32_t> sliding_window{"sliding_window"};
    GeneratorInput<int32_t> max_len_extend{"max_len_extend"};
    // A custom mask is given: it replaces the causal rule (K7 and K8).
    GeneratorInput<bool> has_mask{"has_mask"};
    // T (rows of the extend tensors) and the length of kv_indices.
    GeneratorInput<int32_t> num_tokens{"num_tokens"};
    GeneratorInput<int32_t> num_indices{"num_indices"};

protected:
    Var chunk{"chunk"}, stage{"stage"}, qt{"qt"}, h{"h"}, b{"b"};
    // The chunk loops of the list stage and of K7's extend stage, with the kernels' predicates.
    RDom list_chunks, extend_chunks;

    void define_chunk_loops() {
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
        const Limits limits = window_limits(sliding_window, is_causal, big, has_mask);
        const TileShape tiles{BM, BN, bounded, unified};
        list_chunks = RDom(0, (num_indices + (BN - 1)) / BN, "cp");
        extend_chunks = RDom(0, (num_q_tiles * BM + (BN - 1)) / BN, "ce");
        for (const Expr &p : chunk_predicates(0, list_chunks.x, qt, tiles, req, limits)) list_chunks.where(p);
        for (const Expr &p : chunk_predicates(1, extend_chunks.x, qt, tiles, req, limits)) extend_chunks.where(p);
    }
};

class ExtendAttentionTileCount : public ChunkInstrument<ExtendAttentionTileCount> {
public:
    // (2, num_q_tiles, Hq, B) int32: chunks visited per stage and query tile.
    Output<Buffer<int32_t, 4>> counts{"counts"};

    void generate() {
        define_chunk_loops();
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
};

class ExtendAttentionChunkMap : public ChunkInstrument<ExtendAttentionChunkMap> {
public:
    // (>= max chunks of either stage, 2, num_q_tiles, B) uint8: 1 where tile qt of request b
    // visits chunk `chunk` of stage `stage`, else 0.
    Output<Buffer<uint8_t, 4>> visited{"visited"};

    void generate() {
        define_chunk_loops();
        visited(chunk, stage, qt, b) = cast<uint8_t>(0);
        visited(list_chunks.x, 0, qt, b) = cast<uint8_t>(1);
        if (!unified) visited(extend_chunks.x, 1, qt, b) = cast<uint8_t>(1);
    }

    void schedule() {
        // As the counter: the chunk RVar innermost, one loop per (qt, b).
        visited.compute_root();
        visited.update(0).reorder(list_chunks.x, qt, b);
        if (!unified) visited.update(1).reorder(extend_chunks.x, qt, b);
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::ExtendAttentionTileCount, extend_attention_tile_count)
HALIDE_REGISTER_GENERATOR(livebound::ExtendAttentionChunkMap, extend_attention_chunk_map)
