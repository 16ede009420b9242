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
// 3. off_b: the blocked scan (scan_block = 32 in the manifest), computed by each block for
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

#include "stages.h"

namespace livebound::dsa_kv_gather {

// Places off_b (and the blocked scan it reads) at the block loop `block` of the update:
// computed once per block, for the block's one request.
inline void place_offsets(Gather &g, const Halide::VarOrRVar &block, const Halide::Var &b) {
    using namespace Halide;
    Var bo{"bo"}, bi{"bi"}, ko{"ko"}, ki{"ki"};
    LoopLevel at(g.out, block);  // the last stage: the update (the gather)
    g.off.compute_at(at).split(b, bo, bi, 1, TailStrategy::GuardWithIf).gpu_threads(bi);
    scan::Blocked &scan = g.scan;
    Var k = scan.block_total.args()[0];
    // One lane per block total (at most 32 lanes: the key kernel's blocks are 32 wide).
    scan.block_total.compute_at(at).split(k, ko, ki, 32, TailStrategy::GuardWithIf).gpu_threads(ki);
    scan.block_total.update().split(k, ko, ki, 32, TailStrategy::GuardWithIf).gpu_threads(ki).unroll(scan.in_block.x);
    // Partial sums of the one off_b thread live in registers (left to Halide they would be
    // a device allocation per call).
    scan.before_block.compute_at(g.off, bi).bound_storage(b, 1).store_in(MemoryType::Register);
    scan.block_head.compute_at(g.off, bi).bound_storage(b, 1).store_in(MemoryType::Register);
    scan.block_head.update().unroll(scan.head.x);
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

}  // namespace livebound::dsa_kv_gather
