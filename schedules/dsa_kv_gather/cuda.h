// K5 on CUDA. Decisions, each with its reason:
//
// Data moved per token: D = 128 key bytes + 4 scale bytes read, the same written, plus one
// page-id read shared by page_size tokens. The DSA prefill shape (B = 8, ~32k tokens) moves
// ~8.7 MB: ~2 us of H200 bandwidth, so latency and launch structure decide the time.
//
// 1. Words, not bytes. The runtime hands the kernel uint32 views of the caller's bytes, so
//    a key row is 32 words: one warp instruction loads (and stores) a whole 128-byte row,
//    fully coalesced. A byte gather needs 4x the instructions for the same transactions.
//    16-byte vectors would need 16-byte alignment of every row, which Halide cannot prove
//    (row strides are runtime values): the PTX backend would split them back into words.
// 2. SGLang's grid: one block per (token tile, request), tiles covering max_seq_len. In a
//    key block, warp y copies the tile's rows ((y * chunks + co) * unrolled + u): u
//    unrolled (the loads of a thread issue together; each copy is a dependent
//    page_indices -> buf -> store chain), co a serial loop that Halide trims to the
//    request's live length: the bound derived from `t < seq_lens[b]`. In a dead tile the
//    loop runs zero times: no load of page_indices or buf, no store. A tile of 8 warps x 2
//    chunks x 4 rows = 64 tokens is one page at page_size = 64.
//    (A "compact" grid of a fixed number of blocks per request, each striding over the
//    tiles, would need the token loop's pieces in another order than their split order:
//    Halide refuses to reorder the RVars of an update whose store row is data-dependent.)
// 3. off_b: the blocked scan (scan_block = 16 in the manifest), computed by each block for
//    its own request, before the token loop (the derived bound reads it, through
//    `seq_len_sum - off_b`): the block totals one lane each, off_b by one thread, partial
//    sums in registers. No thread walks the batch, nothing is allocated in device memory.
//    Dead tiles pay this preamble (one seq_lens pass through L1) and nothing else.
// 4. k_out and s_out are two kernels: the scale is one word per token, so its kernel maps
//    32 tokens to a warp (lane-interleaved, scale_chunks tokens per lane in a trimmed serial
//    loop), which the key kernel's one-row-per-warp layout cannot.
// 5. The pure definitions (`k_out(w, i) = undef`, `s_out(i) = undef`) go on the device too,
//    although they store nothing. Halide checks the buffers (AddImageChecks) BEFORE it
//    deletes undef stores (RemoveUndef): left unscheduled, each pure definition is still a
//    plain host loop `for (k_out.s0.i) for (k_out.s0.w) k_out(w, i) = undef` at that point,
//    so Halide decides the pipeline touches k_out / s_out on the host and emits
//    `assert(k_out != nullptr, halide_error_host_is_null("Output buffer k_out"))`: every call
//    with a wrapped device pointer (host == nullptr, runtime/src/pipeline_call.cpp) fails
//    with status -34 before any kernel runs. On a one-thread GPU loop the undef stores are
//    device accesses; RemoveUndef then deletes the loop nest, so no kernel is launched for it
//    (tests/dsa_kv_gather/k5_cuda_device_only.check).
#pragma once

#include <stdexcept>

#include "common/scan_cuda.h"
#include "stages.h"

namespace livebound::dsa_kv_gather {

// Places off_b (and the blocked scan it reads) at the block loop `block` of the update:
// computed once per block, for the block's one request.
inline void place_offsets(Gather &g, const Halide::VarOrRVar &block, const Halide::Var &b) {
    using namespace Halide;
    Var bo{"bo"}, bi{"bi"};
    LoopLevel at(g.out, block);  // the last stage: the update (the gather)
    g.off.compute_at(at).split(b, bo, bi, 1, TailStrategy::GuardWithIf).gpu_threads(bi);
    // The scan (schedules/common/scan_cuda.h): one lane per block total (at most 32 lanes:
    // the key kernel's blocks are 32 wide); the one off_b thread's partial sums in
    // registers (left to Halide they would be a device allocation per call).
    schedules::place_blocked_scan(g.scan, at, LoopLevel(g.off, bi), b, 32);
}

inline void schedule_cuda(Stages &s, const Knobs &k) {
    using namespace Halide;
    RVar t = s.token.x, rb = s.token.y;

    // ---- the pure (undef) definitions: device loops, deleted by Halide (decision 5) ----
    s.key.out.gpu_single_thread();
    s.scale.out.gpu_single_thread();

    // ---- k_out: one warp per token row; t = ((tile * warps + y) * chunks + co) * unrolled + u ----
    {
        RVar t1{"t1"}, u{"u"}, t2{"t2"}, co{"co"}, tile{"tile"}, y{"y"};
        Stage update = s.key.out.update();
        update.allow_race_conditions()  // disjoint rows per request for valid inputs (cpu.h)
            .split(t, t1, u, k.tokens_per_thread, TailStrategy::GuardWithIf)
            .split(t1, t2, co, k.chunks_per_thread, TailStrategy::GuardWithIf)
            .split(t2, tile, y, k.token_threads, TailStrategy::GuardWithIf)
            .reorder(u, co, s.w, y, tile, rb)
            .gpu_threads(s.w, y)
            .gpu_blocks(tile, rb)
            .unroll(u);
        place_offsets(s.key, tile, s.b);
        if (!s.bounded) s.key.live_mask.compute_at(s.key.out, u).store_in(MemoryType::Register);
    }

    // ---- s_out: 32 lanes per warp over tokens; t = ((tile * warps + y) * 32 + lane) * scale_chunks + c ----
    {
        RVar t1{"t1"}, c{"c"}, t2{"t2"}, lane{"lane"}, tile{"tile"}, y{"y"};
        Stage update = s.scale.out.update();
        update.allow_race_conditions()
            .split(t, t1, c, k.scale_chunks, TailStrategy::GuardWithIf)
            .split(t1, t2, lane, 32, TailStrategy::GuardWithIf)
            .split(t2, tile, y, k.token_threads, TailStrategy::GuardWithIf)
            .gpu_threads(lane, y)
            .gpu_blocks(tile, rb);
        place_offsets(s.scale, tile, s.b);
        if (!s.bounded) s.scale.live_mask.compute_at(s.scale.out, c).store_in(MemoryType::Register);
    }
}

// The row grid (generator `row_grid`, the bounded variant the runtime prefers). Decisions,
// measured on the H200 (graph replay, µs per call; bench/bench_dsa_kv_gather, table-E
// shapes; every knob sweep in autotune/records/k5.jsonl):
//
// R1. The grid is the output rows, seq_len_sum of them, in blocks of (block_threads /
//     row_lanes) x rows_per_thread = 64 rows: no block for a dead (t, b) position. The
//     scatter form's B x max_seq_len grid ran its scan preamble in every dead tile: 53.9 µs
//     at B = 32 / 32k tokens / max_seq_len 16k, now 5.2.
// R2. One kernel: s_out is (word, row) with one word, split like k_out and fused into
//     k_out's thread iteration (compute_with at the thread loop): its loads issue with the
//     keys', no barrier between the outputs. Two kernels cost a second graph node.
// R3. 16-byte accesses: a key row is 8 groups of 4 words, one group per thread, 8 threads
//     per row (a warp moves 4 whole rows; D = 64 / 256: 4 / 16 threads a row, the same
//     16 bytes each); the generator makes the rows' strides multiples
//     of 16 bytes, so Halide proves the alignment and the PTX has ld/st .v2.b64. (Vectors
//     wider than 4 words are split into 8-byte pieces: hence the 4-word inner split.)
// R4. Each block computes all of off_b in shared memory (the blocked scan on the block's
//     threads, its terms staged in shared memory: Knobs), then each row's request by a
//     binary search over it (ceil(log2 B) shared-memory reads per row), in a register.
//     4 bytes per request: the runtime sends this form batches up to 8192.
// R5. Loads before stores: a thread's rows get their requests, page ids and slots (one
//     division per row), then all their key and scale loads, into registers (one
//     unconditional box: every index in it is clamped), then the stores under each row's
//     guard. Stored row by row, each store waited for its own load before the next row's
//     loads issued (the GPU issues in order): 5.82 -> 5.05 µs at bs 8; sharing the
//     division between key and scale (4 divisions per thread instead of 16) and staging
//     the scan's terms (113 -> 32 registers) then 4.59; 2 rows per thread 4.15.
inline void schedule_cuda_rows(RowGrid &g, const Knobs &k) {
    using namespace Halide;
    // row_lanes is the knob's value at D = 128 (32 words): every D keeps its 4 words (16
    // bytes) per thread and row (D = 64: 4 threads a row; D = 256: 16).
    const int lane_words = 32 / k.row_lanes;
    if (g.words % lane_words != 0) throw std::invalid_argument("dsa_kv_gather rows: head_dim / 4 must be a multiple of 32 / row_lanes");
    const int threads = k.block_threads, lanes = g.words / lane_words, row_threads = threads / lanes;
    const int block_rows = row_threads * k.rows_per_thread;
    Var b = g.off.args()[0];
    RVar r = g.row.x;
    RVar rb{"rb"}, rt{"rt"}, ru{"ru"}, ry{"ry"};
    Var wo{"wo"}, wl{"wl"}, wv{"wv"}, w4{"w4"}, vwo{"vwo"}, vw4{"vw4"}, bo{"bo"}, bi{"bi"}, by{"by"}, bx{"bx"};

    // The pure (undef) definitions: device loops that Halide deletes (decision 5).
    g.k_out.gpu_single_thread();
    g.s_out.gpu_single_thread();

    // k_out: row = (rb * 32 + ry) * rows_per_thread + ru, words wo * 4 + wl; threads (wo, ry)
    // = (8, 32): thread x moves 16 bytes of a row, a warp 4 whole rows. A thread's rows are
    // consecutive so that their values are one box (R5).
    // Both outputs split their rows alike: compute_with (below) fuses loops of equal names.
    auto split_rows = [&](Stage stage) -> Stage {
        return stage.split(r, rb, rt, block_rows, TailStrategy::GuardWithIf)
            .split(rt, ry, ru, k.rows_per_thread, TailStrategy::GuardWithIf);
    };
    Stage keys = g.k_out.update();
    keys.allow_race_conditions()  // row r is written once; Halide cannot see it through the search
        .split(g.w, wo, wl, lane_words)
        .split(wl, wv, w4, 4);  // 16-byte vectors: wider ones are split into 8-byte pieces
    split_rows(keys)
        .reorder(w4, wv, ru, wo, ry, rb)
        .gpu_blocks(rb)
        .gpu_threads(wo, ry)
        .unroll(ru)
        .unroll(wv)
        .vectorize(w4);
    // s_out (word, row), one word per row: the same loops, its word on thread x = 0, fused
    // into k_out's thread iteration (R2: no barrier between the two outputs).
    Stage scales = g.s_out.update();
    scales.allow_race_conditions().split(g.w, wo, wl, 1);
    split_rows(scales)
        .reorder(wl, ru, wo, ry, rb)
        .gpu_blocks(rb)
        .gpu_threads(wo, ry)
        .unroll(ru);
    scales.compute_with(keys, wo);

    // A thread's rows: requests, then every key and scale load, before the first store (R5).
    Var vw = g.key_value.args()[0], vi = g.key_value.args()[1], si = g.scale_value.args()[0],
        qi = g.request.args()[0];
    g.request.compute_at(g.k_out, wo)
        .store_in(MemoryType::Register)
        .bound_extent(qi, k.rows_per_thread)
        .unroll(qi);
    g.request.update().unroll(qi);
    for (Func f : {g.page, g.slot}) {
        Var v = f.args()[0];
        f.compute_at(g.k_out, wo).store_in(MemoryType::Register).bound_extent(v, k.rows_per_thread).unroll(v);
    }
    g.key_value.compute_at(g.k_out, wo)
        .store_in(MemoryType::Register)
        .bound_extent(vw, lane_words)  // a whole box also in the tail block: every read is clamped
        .bound_extent(vi, k.rows_per_thread)
        .split(vw, vwo, vw4, 4)
        .vectorize(vw4)
        .unroll(vwo)
        .unroll(vi);
    g.scale_value.compute_at(g.k_out, wo)
        .store_in(MemoryType::Register)
        .bound_extent(si, k.rows_per_thread)
        .unroll(si);

    // off_b for the whole batch (entries [0, B], B the sum), per block, in shared memory
    // (R4), on the same (8, 32) threads. The explicit bound makes the shared size one
    // number; inferred, the host computed it by a loop over the grid on every call.
    g.off.compute_at(g.k_out, rb)
        .store_in(MemoryType::GPUShared)
        .bound(b, 0, g.batch + 1)
        .split(b, bo, bi, threads, TailStrategy::GuardWithIf)
        .split(bi, by, bx, lanes, TailStrategy::GuardWithIf)
        .gpu_threads(bx, by);
    schedules::place_blocked_scan(g.scan, LoopLevel(g.k_out, rb), LoopLevel(g.off, bx), b, threads,
                                  {k.stage_scan_heads, k.stage_scan_totals}, false, lanes);
}

}  // namespace livebound::dsa_kv_gather
