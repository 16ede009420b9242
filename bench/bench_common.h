// What every bench/bench_<family>.cpp driver shares: the device-resident req_to_token
// uploaded once, the CUDA-graph replay measurement (tools/cuda_timing.h) of one
// benchmark case, the registration settings and main(). Included only by the bench
// drivers (it needs Google Benchmark, which bench/CMakeLists.txt links).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "livebound/livebound.hpp"

namespace livebound::bench {

using livebound::tools::DeviceBuffer;

// CUDA-graph replay of this many calls per iteration, timed with CUDA events.
constexpr int kCallsPerGraph = 20;

// Device-resident inputs shared by every case of a driver.
struct SharedInputs {
    std::unique_ptr<cuda::ScopedContext> scope;   // device 0's primary context, current for the run
    std::unique_ptr<DeviceBuffer> req_to_token;  // [rows, width] int32 slots
    bool ok = false;                             // false without a device or when a step failed
};

// Makes device 0's primary context current and uploads a req_to_token of `rows` x `width`
// int32 slots drawn uniformly from [0, 2^26) by std::mt19937(seed), in row-major order.
inline SharedInputs make_shared_inputs(int64_t rows, int64_t width, uint32_t seed) {
    SharedInputs in;
    if (lb_cuda_device_count() == 0) return in;
    in.scope = std::make_unique<cuda::ScopedContext>(0);
    if (!in.scope->ok()) return in;
    std::vector<int32_t> r2t(rows * width);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1);
    for (auto &t : r2t) t = slot(rng);
    in.req_to_token = std::make_unique<DeviceBuffer>(r2t.size() * 4);
    in.ok = in.req_to_token->upload(r2t.data(), r2t.size() * 4);
    return in;
}

struct ReplayResult {
    bool ok = false;         // false: the eager run failed and the state is skipped (set no counters)
    double eager_us = 0;     // eager (back-to-back) device time per call, median of 10
    double total_us = 0;     // sum over the timed iterations of the graph-replay time per call
    int timed = 0;           // iterations timed
    double mean_us() const { return timed > 0 ? total_us / timed : 0; }
};

// One benchmark case: on a new non-blocking stream, eager timing of kCallsPerGraph calls,
// then one graph replay of kCallsPerGraph calls per `state` iteration, its median time
// per call as the iteration's manual time. `call` issues one livebound call on the given
// stream; a failure skips the state with lb_last_error().
inline ReplayResult measure_graph_replay(benchmark::State &state, const std::function<lb_status(cuda::CUstream)> &call) {
    ReplayResult r;
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    std::string error;
    auto enqueue = [&](cuda::CUstream s) {
        if (call(s) == LB_OK) return true;
        error = lb_last_error();
        return false;
    };
    if (!livebound::tools::time_eager(enqueue, stream, kCallsPerGraph, 10, &r.eager_us, &error)) {
        state.SkipWithError(error.c_str());
        cuda::driver()->cuStreamDestroy(stream);
        return r;
    }
    r.ok = true;
    for (auto _ : state) {
        livebound::tools::GraphTiming t;
        if (!livebound::tools::time_graph_replay(enqueue, stream, kCallsPerGraph, 1, &t, &error)) {
            state.SkipWithError(error.c_str());
            break;
        }
        r.total_us += t.median_us_per_call;
        r.timed++;
        state.SetIterationTime(t.median_us_per_call * 1e-6);
    }
    cuda::driver()->cuStreamDestroy(stream);
    return r;
}

// The settings of every registered case: manual time in microseconds, 30 iterations x 5
// repetitions, aggregates only; `with_min` adds a "min" statistic over the repetitions.
inline benchmark::internal::Benchmark *replay_settings(benchmark::internal::Benchmark *b, bool with_min) {
    b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(30)->Repetitions(5);
    if (with_min) {
        b->ComputeStatistics("min", [](const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); });
    }
    return b->ReportAggregatesOnly(true);
}

// main() after registration: exits 0 with a message when there is no CUDA device;
// `before_run` (if any) runs once, with a device, before the benchmarks.
inline int run_benchmarks(int argc, char **argv, const char *driver, const std::function<void()> &before_run = {}) {
    benchmark::Initialize(&argc, argv);
    if (lb_cuda_device_count() == 0) {
        std::fprintf(stderr, "%s: no CUDA device; nothing to measure\n", driver);
        return 0;
    }
    if (before_run) before_run();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

}  // namespace livebound::bench
