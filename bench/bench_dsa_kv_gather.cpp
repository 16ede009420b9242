// K5 _get_k_and_s_triton (DSA indexer K + scale gather) on CUDA, bounded and full-width in
// the same run, CUDA-graph replay of 20 calls, time per call, and the bytes moved per call
// as GB/s (key + scale bytes read and written: 2 x 132 x seq_len_sum, plus page ids).
//
// Shapes (spec §3.5: D = index_head_dim = 128, page_size = 64, the DSA indexer in prefill):
//   prefill_bs8_32k   B = 8 ragged requests, 32,768 tokens in all, max_seq_len 8192 and
//                     16384 (the grid width SGLang sizes from the batch's longest request,
//                     or from a static bucket): the PR's case, most tiles of short requests dead.
//   prefill_bs1_16k   one 16,384-token request, max_seq_len 16384: every tile live (NOSKIP,
//                     the bound's own overhead).
//   prefill_bs32_32k  B = 32 requests of ~1k tokens, max_seq_len 16384 (chunked prefill
//                     with a static width): ~94% of the grid dead.
// The key buffer holds 2x the pages the batch needs (a pool with other requests in it);
// page ids are shuffled.
//
// Google Benchmark with manual timing: each iteration is one graph replay timed with CUDA
// events, reported per call. Exits 0 with a message when there is no CUDA device.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "dsa_kv_gather_shapes.h"
#include "cuda_timing.h"
#include "livebound/livebound.hpp"

namespace {

namespace cuda = livebound::cuda;
using livebound::tools::DeviceBuffer;

using livebound::bench::k5::kD;
using livebound::bench::k5::kPageBytes;
using livebound::bench::k5::kPageSize;

using livebound::bench::k5::Shape;
using livebound::bench::k5::shapes;

void BM_K5(benchmark::State &state, Shape shape, lb_variant variant) {
    if (lb_cuda_device_count() == 0) {
        state.SkipWithError("no CUDA device");
        return;
    }
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        state.SkipWithError(scope.error().c_str());
        return;
    }
    const int64_t bs = static_cast<int64_t>(shape.seq_lens.size());
    const int64_t sum = std::accumulate(shape.seq_lens.begin(), shape.seq_lens.end(), int64_t{0});
    const int64_t max_pages = (shape.max_seq_len + kPageSize - 1) / kPageSize;
    int64_t pages_needed = 0;
    for (int64_t len : shape.seq_lens) pages_needed += (len + kPageSize - 1) / kPageSize;
    const int64_t num_pages = 2 * pages_needed;
    std::mt19937 rng(7);
    std::vector<uint32_t> buf(num_pages * kPageBytes / 4);
    for (auto &w : buf) w = static_cast<uint32_t>(rng());
    std::vector<int32_t> ids(num_pages);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<int32_t> pi(bs * max_pages, 0);
    size_t next = 0;
    for (int64_t b = 0; b < bs; b++) {
        for (int64_t k = 0; k < (shape.seq_lens[b] + kPageSize - 1) / kPageSize; k++) pi[b * max_pages + k] = ids[next++];
    }
    DeviceBuffer d_buf(buf.size() * 4), d_pi(pi.size() * 4), d_seq(bs * 8), d_k(sum * kD), d_s(sum * 4);
    if (!d_buf.upload(buf.data(), buf.size() * 4) || !d_pi.upload(pi.data(), pi.size() * 4) ||
        !d_seq.upload(shape.seq_lens.data(), bs * 8)) {
        state.SkipWithError("device copy failed");
        return;
    }
    lb_dsa_kv_gather_args a{};
    a.buf = livebound::tensor_2d(d_buf.get(), LB_UINT8, num_pages, kPageBytes);
    a.page_indices = livebound::tensor_2d(d_pi.get(), LB_INT32, bs, max_pages);
    a.seq_lens = livebound::tensor_1d(d_seq.get(), LB_INT64, bs);
    a.k_out = livebound::tensor_2d(d_k.get(), LB_UINT8, sum, kD);
    a.s_out = livebound::tensor_2d(d_s.get(), LB_UINT8, sum, 4);
    a.seq_len_sum = sum;
    a.max_seq_len = shape.max_seq_len;
    a.page_size = kPageSize;
    a.index_head_dim = kD;
    a.variant = variant;

    const livebound::bench::ReplayResult r = livebound::bench::measure_graph_replay(
        state, [&](cuda::CUstream s) { return lb_get_k_and_s(&a, livebound::cuda_device(0, s)); });
    if (!r.ok) return;
    // Bytes a call must move: key + scale bytes read and written, plus the page ids read.
    const double bytes = 2.0 * sum * (kD + 4) + 4.0 * pages_needed;
    state.counters["bs"] = static_cast<double>(bs);
    state.counters["tokens"] = static_cast<double>(sum);
    state.counters["grid_tokens"] = static_cast<double>(bs * shape.max_seq_len);
    state.counters["bytes_moved"] = bytes;
    // GB/s over the mean graph-replay time per call of this run (bytes / ns = GB/s). Not a
    // Google Benchmark rate counter: those divide by CPU time, not by the manual time.
    state.counters["GB_per_s"] = r.timed > 0 ? bytes / (r.total_us / r.timed * 1e3) : 0;
    state.counters["eager_us"] = r.eager_us;
    state.counters["sglang_us"] = shape.sglang_us;
}

void register_all() {
    for (const Shape &s : shapes()) {
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            const std::string name = std::string("K5/") + (v == LB_BOUNDED ? "bounded/" : "full_width/") + s.name;
            livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K5, s, v), false);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    register_all();
    return livebound::bench::run_benchmarks(argc, argv, "bench_dsa_kv_gather");
}
