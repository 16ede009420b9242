// K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata on CUDA, at the
// shapes of PR #32109's microbenchmark (spec §5.1): width (max_len) 16384 tokens, kv length
// 1024 for every request, bs 1 / 8 / 64, real_page_size 64, top-k 2048, page_table_1 and
// real_page_table both written. SGLang (GPU not stated): 5.87 / 6.29 / 10.71 us full width,
// 5.73 / 6.04 / 10.10 us with its per-block exit. Also its "half live" row (bs 8, seq 8192)
// and a NOSKIP row (every column live: the cost of the bound itself).
//
// K3 at the same width and kv length with next_n = 4 (an MTP / EAGLE verify of 3 draft
// tokens + 1: E = 4 x bs expanded rows, each receiving its request's row) and
// paged_mqa_ctx_lens_2d: the rows isolate what the expanded rows cost over K2 at equal
// live work per request. SGLang's PR text has no K3 row.
//
// Google Benchmark with manual timing: each iteration is one CUDA-graph replay of 20 calls
// timed with CUDA events, reported per call; bounded and full-width in the same run; the
// eager (back-to-back) time per call as a counter. Exits 0 with a message without a device.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "livebound/livebound.hpp"

namespace {

namespace cuda = livebound::cuda;
using livebound::tools::DeviceBuffer;

constexpr int64_t kWidth = 16384;
constexpr int64_t kPoolRows = 128;
constexpr int32_t kRps = 64, kTopk = 2048;
constexpr int kCallsPerGraph = 20;

struct SharedInputs {
    std::unique_ptr<cuda::ScopedContext> scope;
    std::unique_ptr<DeviceBuffer> req_to_token;  // [128, 16384] int32 slots
    bool ok = false;
};

SharedInputs &shared() {
    static SharedInputs s = [] {
        SharedInputs in;
        if (lb_cuda_device_count() == 0) return in;
        in.scope = std::make_unique<cuda::ScopedContext>(0);
        std::vector<int32_t> r2t(kPoolRows * kWidth);
        std::mt19937 rng(11);
        std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1);
        for (auto &t : r2t) t = slot(rng);
        in.req_to_token = std::make_unique<DeviceBuffer>(r2t.size() * 4);
        in.ok = in.scope->ok() && in.req_to_token->upload(r2t.data(), r2t.size() * 4);
        return in;
    }();
    return s;
}

// next_n == 0: K2; else K3.
void BM_DSA(benchmark::State &state, int64_t bs, int64_t seq_len, int32_t next_n, lb_variant variant) {
    SharedInputs &in = shared();
    if (!in.ok) {
        state.SkipWithError("no CUDA device");
        return;
    }
    const int64_t rows = bs * (next_n > 0 ? next_n : 1);
    const int64_t real_cols = kWidth / kRps;
    std::vector<int64_t> seq_lens(bs, seq_len), rpi(bs);
    for (int64_t b = 0; b < bs; b++) rpi[b] = (b * 7 + 1) % kPoolRows;
    DeviceBuffer d_seq(bs * 8), d_rpi(bs * 8), d_cache(bs * 4), d_cu((bs + 1) * 4), d_exp(rows * 4), d_dsa(rows * 4),
        d_dsa_cu((rows + 1) * 4), d_ctx(bs * std::max(next_n, 1) * 4), d_pt1(rows * kWidth * 4),
        d_real(rows * real_cols * 4);
    if (!d_seq.upload(seq_lens.data(), bs * 8) || !d_rpi.upload(rpi.data(), bs * 8)) {
        state.SkipWithError("device copy failed");
        return;
    }
    using livebound::tensor_1d;
    using livebound::tensor_2d;
    lb_dsa_decode_metadata_args k2{};
    lb_dsa_target_verify_metadata_args k3{};
    if (next_n == 0) {
        k2.seq_lens = tensor_1d(d_seq.get(), LB_INT64, bs);
        k2.req_pool_indices = tensor_1d(d_rpi.get(), LB_INT64, bs);
        k2.req_to_token = tensor_2d(in.req_to_token->get(), LB_INT32, kPoolRows, kWidth);
        k2.cache_seqlens = tensor_1d(d_cache.get(), LB_INT32, bs);
        k2.cu_seqlens_k = tensor_1d(d_cu.get(), LB_INT32, bs + 1);
        k2.dsa_cache_seqlens = tensor_1d(d_dsa.get(), LB_INT32, bs);
        k2.dsa_cu_seqlens_k = tensor_1d(d_dsa_cu.get(), LB_INT32, bs + 1);
        k2.page_table_1 = tensor_2d(d_pt1.get(), LB_INT32, bs, kWidth);
        k2.real_page_table = tensor_2d(d_real.get(), LB_INT32, bs, real_cols);
        k2.max_len = kWidth;
        k2.dsa_index_topk = kTopk;
        k2.real_page_size = kRps;
        k2.variant = variant;
    } else {
        k3.seq_lens = tensor_1d(d_seq.get(), LB_INT64, bs);
        k3.req_pool_indices = tensor_1d(d_rpi.get(), LB_INT64, bs);
        k3.req_to_token = tensor_2d(in.req_to_token->get(), LB_INT32, kPoolRows, kWidth);
        k3.cache_seqlens = tensor_1d(d_cache.get(), LB_INT32, bs);
        k3.cu_seqlens_k = tensor_1d(d_cu.get(), LB_INT32, bs + 1);
        k3.seqlens_expanded = tensor_1d(d_exp.get(), LB_INT32, rows);
        k3.dsa_cache_seqlens = tensor_1d(d_dsa.get(), LB_INT32, rows);
        k3.dsa_cu_seqlens_k = tensor_1d(d_dsa_cu.get(), LB_INT32, rows + 1);
        k3.paged_mqa_ctx_lens_2d = tensor_2d(d_ctx.get(), LB_INT32, bs, next_n);
        k3.page_table_1 = tensor_2d(d_pt1.get(), LB_INT32, rows, kWidth);
        k3.real_page_table = tensor_2d(d_real.get(), LB_INT32, rows, real_cols);
        k3.max_seqlen_k = kWidth;
        k3.dsa_index_topk = kTopk;
        k3.real_page_size = kRps;
        k3.next_n = next_n;
        k3.variant = variant;
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    std::string error;
    auto enqueue = [&](cuda::CUstream s) {
        const lb_device dev = livebound::cuda_device(0, s);
        const lb_status st = next_n == 0 ? lb_fused_dsa_decode_metadata(&k2, dev) : lb_fused_dsa_target_verify_metadata(&k3, dev);
        if (st == LB_OK) return true;
        error = lb_last_error();
        return false;
    };
    double eager_us = 0;
    if (!livebound::tools::time_eager(enqueue, stream, kCallsPerGraph, 10, &eager_us, &error)) {
        state.SkipWithError(error.c_str());
        cuda::driver()->cuStreamDestroy(stream);
        return;
    }
    for (auto _ : state) {
        livebound::tools::GraphTiming t;
        if (!livebound::tools::time_graph_replay(enqueue, stream, kCallsPerGraph, 1, &t, &error)) {
            state.SkipWithError(error.c_str());
            break;
        }
        state.SetIterationTime(t.median_us_per_call * 1e-6);
    }
    cuda::driver()->cuStreamDestroy(stream);
    const int64_t live = std::min(seq_len + (next_n > 0 ? next_n : 0), kWidth);
    state.counters["bs"] = static_cast<double>(bs);
    state.counters["rows"] = static_cast<double>(rows);
    state.counters["live_columns"] = static_cast<double>(rows * (live + (live + kRps - 1) / kRps));
    state.counters["width_columns"] = static_cast<double>(rows * (kWidth + real_cols));
    state.counters["eager_us"] = eager_us;
}

void add(const std::string &name, int64_t bs, int64_t seq, int32_t next_n, lb_variant v) {
    benchmark::RegisterBenchmark(name.c_str(), BM_DSA, bs, seq, next_n, v)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(30)
        ->Repetitions(5)
        ->ComputeStatistics("min", [](const std::vector<double> &v) {
            double m = v[0];
            for (double x : v) m = x < m ? x : m;
            return m;
        })
        ->ReportAggregatesOnly(true);
}

void register_all() {
    for (const char *kernel : {"K2", "K3"}) {
        const int32_t next_n = std::string(kernel) == "K2" ? 0 : 4;
        for (int64_t bs : {1, 8, 64}) {
            for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
                add(std::string(kernel) + "/skip/" + (v == LB_BOUNDED ? "bounded" : "full_width") +
                        "/width:16384/seq:1024/bs:" + std::to_string(bs),
                    bs, 1024, next_n, v);
            }
        }
    }
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        const std::string form = v == LB_BOUNDED ? "bounded" : "full_width";
        add("K2/half_live/" + form + "/width:16384/seq:8192/bs:8", 8, 8192, 0, v);
        add("K2/noskip/" + form + "/width:16384/seq:16384/bs:64", 64, kWidth, 0, v);
    }
}

}  // namespace

int main(int argc, char **argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (lb_cuda_device_count() == 0) {
        std::fprintf(stderr, "bench_dsa_metadata: no CUDA device; nothing to measure\n");
        return 0;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
