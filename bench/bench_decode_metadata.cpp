// K1 normal_decode_set_metadata on CUDA, as ../shared/spec/targets.md §D measures
// SGLang: CUDA-graph replay of 20 calls, time per call; page-table width 131072 tokens;
// seq_lens uniform in [1024, 8192]; req_to_token 512 rows x 131072; delta 0; bs 1, 8,
// 64, 256; page sizes 1 and 64; bounded and full-width in the same run.
//
// Google Benchmark with manual timing: each iteration is one graph replay timed with
// CUDA events, reported per call. Run with --benchmark_format=json (bench/run_k1.sh
// does, and stores the result under bench/results/).
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
constexpr int64_t kPoolRows = 512;

using livebound::bench::SharedInputs;

// Device-resident inputs shared by every case (req_to_token [512, 131072] is 256 MiB).
SharedInputs &shared() {
    static SharedInputs s = livebound::bench::make_shared_inputs(kPoolRows, kWidthTokens, 7);
    return s;
}

// all_live: every request's kv length is the full width (SGLang's NOSKIP case): no column
// is dead, so bounded vs full-width measures the cost of the bound itself.
void BM_K1(benchmark::State &state, int64_t bs, int32_t page_size, lb_variant variant, bool skip_page_table,
           bool all_live) {
    SharedInputs &in = shared();
    if (!in.ok) {
        state.SkipWithError("no CUDA device");
        return;
    }
    const int64_t max_seq_pages = kWidthTokens / page_size;
    std::mt19937 rng(1000 + static_cast<uint32_t>(bs));
    std::uniform_int_distribution<int64_t> len(1024, 8192);
    std::vector<int64_t> seq_lens(bs), rpi(bs);
    int64_t live_columns = 0;
    for (int64_t b = 0; b < bs; b++) {
        seq_lens[b] = all_live ? kWidthTokens : len(rng);
        rpi[b] = (b * 7) % kPoolRows;
        live_columns += (seq_lens[b] + page_size - 1) / page_size;
    }
    DeviceBuffer d_seq(bs * 8), d_rpi(bs * 8), d_cache(bs * 4), d_cu((bs + 1) * 4), d_pt(bs * max_seq_pages * 4);
    if (!d_seq.upload(seq_lens.data(), bs * 8) || !d_rpi.upload(rpi.data(), bs * 8)) {
        state.SkipWithError("device copy failed");
        return;
    }
    lb_decode_metadata_args a{};
    a.seq_lens = livebound::tensor_1d(d_seq.get(), LB_INT64, bs);
    a.req_pool_indices = livebound::tensor_1d(d_rpi.get(), LB_INT64, bs);
    a.req_to_token = livebound::tensor_2d(in.req_to_token->get(), LB_INT32, kPoolRows, kWidthTokens);
    a.cache_seqlens = livebound::tensor_1d(d_cache.get(), LB_INT32, bs);
    a.cu_seqlens_k = livebound::tensor_1d(d_cu.get(), LB_INT32, bs + 1);
    a.page_table = livebound::tensor_2d(d_pt.get(), LB_INT32, bs, max_seq_pages);
    a.max_seq_pages = max_seq_pages;
    a.page_size = page_size;
    a.variant = variant;
    a.skip_page_table = skip_page_table;

    const livebound::bench::ReplayResult r = livebound::bench::measure_graph_replay(
        state, [&](cuda::CUstream s) { return lb_normal_decode_set_metadata(&a, livebound::cuda_device(0, s)); });
    if (!r.ok) return;
    state.counters["bs"] = static_cast<double>(bs);
    state.counters["page_size"] = page_size;
    state.counters["live_columns"] = static_cast<double>(live_columns);
    state.counters["width_columns"] = static_cast<double>(bs * max_seq_pages);
    state.counters["eager_us"] = r.eager_us;
}

void register_all() {
    // The seqlen scan alone (skip_page_table): the part of the time that is not the gather.
    for (int64_t bs : {1, 64, 256}) {
        std::string name = "K1/skip_page_table/bs:" + std::to_string(bs);
        livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K1, bs, 1, LB_BOUNDED, true, false), false);
    }
    // NOSKIP: guard overhead with every column live.
    for (int32_t ps : {1, 64}) {
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            std::string name = std::string("K1/noskip/") + (v == LB_BOUNDED ? "bounded" : "full_width") +
                               "/ps:" + std::to_string(ps) + "/bs:64";
            livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K1, 64, ps, v, false, true), false);
        }
    }
    for (int32_t ps : {1, 64}) {
        for (int64_t bs : {1, 8, 64, 256}) {
            for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
                std::string name = std::string("K1/") + (v == LB_BOUNDED ? "bounded" : "full_width") +
                                   "/ps:" + std::to_string(ps) + "/bs:" + std::to_string(bs);
                livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K1, bs, ps, v, false, false),
                                                  true);
            }
        }
    }
    // Batches between table E's 8 and 64: where the small-batch scan placement (the prefix
    // sums in each entry's registers) stops winning (schedules/decode_metadata/tuned/).
    for (int32_t ps : {1, 64}) {
        for (int64_t bs : {16, 32}) {
            std::string name = "K1/bounded/ps:" + std::to_string(ps) + "/bs:" + std::to_string(bs);
            livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K1, bs, ps, LB_BOUNDED, false, false),
                                              false);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    register_all();
    return livebound::bench::run_benchmarks(argc, argv, "bench_decode_metadata");
}
