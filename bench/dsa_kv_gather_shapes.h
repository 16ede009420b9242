// K5's table-E shapes (spec §3.5: D = index_head_dim = 128, page_size = 64, the DSA indexer
// in prefill), shared by bench/bench_dsa_kv_gather.cpp and the autotune runner
// (autotune/runner/workloads_dsa_kv_gather.cpp) so that both time the same batches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace livebound::bench::k5 {

constexpr int32_t kD = 128, kPageSize = 64;
constexpr int64_t kPageBytes = int64_t{kPageSize} * (kD + 4);

struct Shape {
    std::string name;
    std::vector<int64_t> seq_lens;
    int64_t max_seq_len;
    double sglang_us;  // table E, graph replay (0: not measured)
};

// Ragged lengths summing to `total`, each in [1, max_len], one request at max_len.
inline std::vector<int64_t> ragged(uint32_t seed, int64_t bs, int64_t total, int64_t max_len) {
    std::mt19937 rng(seed);
    std::vector<double> w(bs);
    for (auto &x : w) x = std::uniform_real_distribution<double>(0.2, 1.0)(rng);
    std::vector<int64_t> out(bs, 1);
    out[0] = max_len;
    int64_t left = total - max_len - (bs - 1);
    const double sw = std::accumulate(w.begin() + 1, w.end(), 0.0);
    for (int64_t b = 1; b < bs; b++) {
        const int64_t add = std::min<int64_t>(max_len - 1, static_cast<int64_t>(left * w[b] / sw));
        out[b] += add;
    }
    int64_t sum = std::accumulate(out.begin(), out.end(), int64_t{0});
    for (int64_t b = 1; sum < total; b = b % (bs - 1) + 1) {  // top up to the exact total
        const int64_t add = std::min<int64_t>(total - sum, max_len - out[b]);
        out[b] += add;
        sum += add;
    }
    return out;
}

// sglang_us: SGLang's kernel on the same shape, graph replay on the H200
// (../shared/spec/targets.md table E), printed beside livebound's time.
inline std::vector<Shape> shapes() {
    return {
        {"prefill_bs8_32k/max_seq_len:8192", ragged(11, 8, 32768, 8192), 8192, 3.58},
        {"prefill_bs8_32k/max_seq_len:16384", ragged(11, 8, 32768, 8192), 16384, 4.01},
        {"prefill_bs1_16k/max_seq_len:16384", {16384}, 16384, 2.71},
        {"prefill_bs32_32k/max_seq_len:16384", ragged(12, 32, 32768, 2048), 16384, 4.12},
    };
}

}  // namespace livebound::bench::k5
