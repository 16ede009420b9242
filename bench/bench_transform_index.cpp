// K6 transform_index_page_table_prefill on CUDA: DSA sparse prefill maps each query
// token's top-k kv positions to KV slots (spec §3.6). Shapes from the spec: DSA's indexer
// keeps topk = 2048 positions per query token; the page table is page_size 1 with a
// 65536-position context (max_seqlen_k); a prefill chunk holds ~8k query tokens.
//   ragged  : bs 8, extend lengths 4096/1024/512/512/1024/256/512/256 (N = 8192, one long
//             request): the grid spans bs x max_extend_len = 32768 query rows, 25% live
//             (the case PR #32109's guard is for);
//   ragged16: bs 16, one 4096-token request and 15 of 256 (N = 7936): 12% live;
//   uniform : bs 8 x 1024 (N = 8192): every q tile live (SGLang's NOSKIP: the guard's cost);
//   single  : bs 1 x 8192: every tile live, one request.
// Every case has 256 padding rows (output_num_tokens = N + 256: a CUDA-graph bucket) that
// get -1. Bounded and full-width in the same run; CUDA-graph replay of 20 calls per
// graph, time per call (CUDA events), Google Benchmark manual timing; eager back-to-back
// time as a counter. Run with --benchmark_format=json to store results under bench/results/.
#include <benchmark/benchmark.h>

#include <algorithm>
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

constexpr int64_t kTopk = 2048;
constexpr int64_t kMaxSeqlenK = 65536;
constexpr int64_t kPaddingRows = 256;

std::unique_ptr<cuda::ScopedContext> &scope() {
    static std::unique_ptr<cuda::ScopedContext> s;
    return s;
}

void BM_K6(benchmark::State &state, std::vector<int64_t> lens, lb_variant variant) {
    if (!scope() || !scope()->ok()) {
        state.SkipWithError("no CUDA device");
        return;
    }
    const int64_t bs = static_cast<int64_t>(lens.size());
    std::vector<int32_t> cu(1, 0);
    int64_t max_extend = 0;
    for (int64_t e : lens) {
        cu.push_back(cu.back() + static_cast<int32_t>(e));
        max_extend = std::max(max_extend, e);
    }
    const int64_t n = cu.back(), out_rows = n + kPaddingRows;
    std::mt19937 rng(static_cast<uint32_t>(1000 + bs + n));
    std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1), pos(0, kMaxSeqlenK - 1);
    std::vector<int32_t> page_table(bs * kMaxSeqlenK), topk(n * kTopk);
    for (auto &s : page_table) s = slot(rng);
    for (auto &p : topk) p = (rng() % 16 == 0) ? -1 : pos(rng);
    DeviceBuffer d_pt(page_table.size() * 4), d_idx(topk.size() * 4), d_cu(cu.size() * 4), d_out(out_rows * kTopk * 4);
    if (!d_pt.upload(page_table.data(), page_table.size() * 4) || !d_idx.upload(topk.data(), topk.size() * 4) ||
        !d_cu.upload(cu.data(), cu.size() * 4)) {
        state.SkipWithError("device copy failed");
        return;
    }
    lb_transform_index_args a{};
    a.page_table = livebound::tensor_2d(d_pt.get(), LB_INT32, bs, kMaxSeqlenK);
    a.topk_indices = livebound::tensor_2d(d_idx.get(), LB_INT32, n, kTopk);
    a.cu_seqlens_q = livebound::tensor_1d(d_cu.get(), LB_INT32, bs + 1);
    a.result = livebound::tensor_2d(d_out.get(), LB_INT32, out_rows, kTopk);
    a.num_tokens = n;
    a.max_extend_len = max_extend;
    a.output_num_tokens = out_rows;
    a.page_size = 1;
    a.variant = variant;

    const livebound::bench::ReplayResult r = livebound::bench::measure_graph_replay(
        state, [&](cuda::CUstream s) { return lb_transform_index_page_table_prefill(&a, livebound::cuda_device(0, s)); });
    if (!r.ok) return;
    state.counters["bs"] = static_cast<double>(bs);
    state.counters["num_tokens"] = static_cast<double>(n);
    state.counters["grid_rows"] = static_cast<double>(bs * max_extend);  // (q, i) pairs of the grid
    state.counters["topk"] = static_cast<double>(kTopk);
    state.counters["eager_us"] = r.eager_us;
    // Bytes a perfect kernel moves: index reads + page-table reads + result writes (live
    // rows), and the -1 fill.
    state.counters["min_bytes"] = static_cast<double>(n * kTopk * 12 + kPaddingRows * kTopk * 4);
}

void register_all() {
    struct Shape {
        const char *name;
        std::vector<int64_t> lens;
    };
    std::vector<int64_t> ragged16(16, 256);
    ragged16[3] = 4096;
    const std::vector<Shape> shapes = {
        {"ragged", {4096, 1024, 512, 512, 1024, 256, 512, 256}},
        {"ragged16", ragged16},
        {"uniform", std::vector<int64_t>(8, 1024)},
        {"single", {8192}},
    };
    for (const Shape &s : shapes) {
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            const std::string name = std::string("K6/") + s.name + "/" + (v == LB_BOUNDED ? "bounded" : "full_width");
            livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_K6, s.lens, v), true);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    register_all();
    return livebound::bench::run_benchmarks(argc, argv, "bench_transform_index",
                                            [] { scope() = std::make_unique<cuda::ScopedContext>(0); });
}
