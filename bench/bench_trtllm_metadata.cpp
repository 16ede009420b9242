// K4 update_trtllm_mha_graph_metadata on CUDA: CUDA-graph replay of 20 calls, time per
// call; page size 128, page-table width 131072 tokens (max_seq_pages = 1024); seq_lens
// uniform in [1024, 8192]; req_to_token 512 rows x 131072 (unused tails -1); bs 64 and
// 256; q_mode 0 (decode); with and without SWA (SWA page table + swa_out_cache_loc of
// bs entries through a 2^22-slot mapping); bounded and full-width in the same run.
// A NOSKIP row (every request at the full width) measures the bound's own cost.
//
// Google Benchmark with manual timing: each iteration is one graph replay timed with
// CUDA events, reported per call. Exits 0 with a message when no device is present.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "cuda_timing.h"
#include "livebound/livebound.hpp"

namespace {

namespace cuda = livebound::cuda;
using livebound::tools::DeviceBuffer;

constexpr int64_t kWidthTokens = 131072;
constexpr int32_t kPageSize = 128;
constexpr int64_t kMaxSeqPages = kWidthTokens / kPageSize;  // 1024
constexpr int64_t kPoolRows = 512;
constexpr int64_t kFullSlots = int64_t{1} << 26;
constexpr int64_t kSwaSlots = int64_t{1} << 22;

// req_to_token [512, 131072] int32 slots (256 MiB) and swa_mapping [kFullSlots + 129] int64
// (512 MiB), shared by every case.
struct SharedInputs : livebound::bench::SharedInputs {
    std::unique_ptr<DeviceBuffer> swa_mapping;
};

SharedInputs &shared() {
    static SharedInputs s = [] {
        SharedInputs in;
        static_cast<livebound::bench::SharedInputs &>(in) = livebound::bench::make_shared_inputs(kPoolRows, kWidthTokens, 7);
        if (!in.ok) return in;
        std::vector<int64_t> map(kFullSlots + kPageSize + 1);
        for (int64_t i = 0; i < static_cast<int64_t>(map.size()); i++) map[i] = (i * 2654435761LL) % kSwaSlots;
        map.back() = -1;
        in.swa_mapping = std::make_unique<DeviceBuffer>(map.size() * 8);
        in.ok = in.swa_mapping->upload(map.data(), map.size() * 8);
        return in;
    }();
    return s;
}

void BM_K4(benchmark::State &state, int64_t bs, bool swa, lb_variant variant, bool all_live) {
    SharedInputs &in = shared();
    if (!in.ok) {
        state.SkipWithError("no CUDA device");
        return;
    }
    std::mt19937 rng(4000 + static_cast<uint32_t>(bs));
    std::uniform_int_distribution<int32_t> len(1024, 8192);
    std::uniform_int_distribution<int64_t> slot(0, kFullSlots - 1);
    std::vector<int32_t> seq_lens(bs);
    std::vector<int64_t> rpi(bs), out_loc(bs);
    int64_t live_pages = 0;
    for (int64_t b = 0; b < bs; b++) {
        seq_lens[b] = all_live ? static_cast<int32_t>(kWidthTokens) : len(rng);
        rpi[b] = (b * 7) % kPoolRows;
        out_loc[b] = b == 0 ? -1 : slot(rng);
        live_pages += (seq_lens[b] + kPageSize - 1) / kPageSize;
    }
    DeviceBuffer d_seq(bs * 4), d_rpi(bs * 8), d_loc(bs * 8), d_cache(bs * 4), d_cu((bs + 1) * 4),
        d_pt(bs * kMaxSeqPages * 4), d_spt(bs * kMaxSeqPages * 4), d_so((bs + 5) * 8);
    if (!d_seq.upload(seq_lens.data(), bs * 4) || !d_rpi.upload(rpi.data(), bs * 8) ||
        !d_loc.upload(out_loc.data(), bs * 8)) {
        state.SkipWithError("device copy failed");
        return;
    }
    lb_trtllm_mha_graph_metadata_args a{};
    a.seq_lens = livebound::tensor_1d(d_seq.get(), LB_INT32, bs);
    a.req_pool_indices = livebound::tensor_1d(d_rpi.get(), LB_INT64, bs);
    a.req_to_token = livebound::tensor_2d(in.req_to_token->get(), LB_INT32, kPoolRows, kWidthTokens);
    a.cache_seqlens = livebound::tensor_1d(d_cache.get(), LB_INT32, bs);
    a.cu_seqlens_k = livebound::tensor_1d(d_cu.get(), LB_INT32, bs + 1);
    a.page_table = livebound::tensor_2d(d_pt.get(), LB_INT32, bs, kMaxSeqPages);
    if (swa) {
        a.swa_mapping = livebound::tensor_1d(in.swa_mapping->get(), LB_INT64, kFullSlots + kPageSize + 1);
        a.swa_page_table = livebound::tensor_2d(d_spt.get(), LB_INT32, bs, kMaxSeqPages);
        a.out_cache_loc = livebound::tensor_1d(d_loc.get(), LB_INT64, bs);
        a.swa_out_cache_loc = livebound::tensor_1d(d_so.get(), LB_INT64, bs + 5);
    }
    a.bs = bs;
    a.max_seq_pages = kMaxSeqPages;
    a.seqlen_offset = 0;
    a.page_size = kPageSize;
    a.q_mode = LB_Q_MODE_NONE;
    a.variant = variant;

    const livebound::bench::ReplayResult r = livebound::bench::measure_graph_replay(
        state, [&](cuda::CUstream s) { return lb_update_trtllm_mha_graph_metadata(&a, livebound::cuda_device(0, s)); });
    if (!r.ok) return;
    state.counters["bs"] = static_cast<double>(bs);
    state.counters["page_size"] = kPageSize;
    state.counters["live_pages"] = static_cast<double>(live_pages);
    state.counters["width_pages"] = static_cast<double>(bs * kMaxSeqPages);
    state.counters["eager_us"] = r.eager_us;
}

void register_all() {
    for (bool swa : {false, true}) {
        for (int64_t bs : {64, 256}) {
            for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
                std::string name = std::string("K4/") + (v == LB_BOUNDED ? "bounded" : "full_width") +
                                   (swa ? "/swa" : "/noswa") + "/bs:" + std::to_string(bs);
                livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K4, bs, swa, v, false), true);
            }
        }
    }
    // Small batches (not in table E): where the small-batch scan placement stops winning
    // (schedules/trtllm_metadata/tuned/).
    for (bool swa : {false, true}) {
        for (int64_t bs : {1, 8, 16, 32}) {
            std::string name = std::string("K4/bounded") + (swa ? "/swa" : "/noswa") + "/bs:" + std::to_string(bs);
            livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K4, bs, swa, LB_BOUNDED, false),
                                              false);
        }
    }
    // NOSKIP: every page live, so bounded vs full-width is the cost of the bound itself.
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        std::string name = std::string("K4/noskip/") + (v == LB_BOUNDED ? "bounded" : "full_width") + "/swa/bs:64";
        livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K4, 64, true, v, true), false);
    }
}

}  // namespace

int main(int argc, char **argv) {
    register_all();
    return livebound::bench::run_benchmarks(argc, argv, "bench_trtllm_metadata");
}
