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

constexpr int64_t kWidth = 16384;
constexpr int64_t kPoolRows = 128;
constexpr int32_t kRps = 64, kTopk = 2048;

using livebound::bench::SharedInputs;

// req_to_token [128, 16384] int32 slots, shared by every case.
SharedInputs &shared() {
    static SharedInputs s = livebound::bench::make_shared_inputs(kPoolRows, kWidth, 11);
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
    const livebound::bench::ReplayResult r = livebound::bench::measure_graph_replay(state, [&](cuda::CUstream s) {
        const lb_device dev = livebound::cuda_device(0, s);
        return next_n == 0 ? lb_fused_dsa_decode_metadata(&k2, dev) : lb_fused_dsa_target_verify_metadata(&k3, dev);
    });
    if (!r.ok) return;
    const int64_t live = std::min(seq_len + (next_n > 0 ? next_n : 0), kWidth);
    state.counters["bs"] = static_cast<double>(bs);
    state.counters["rows"] = static_cast<double>(rows);
    state.counters["live_columns"] = static_cast<double>(rows * (live + (live + kRps - 1) / kRps));
    state.counters["width_columns"] = static_cast<double>(rows * (kWidth + real_cols));
    state.counters["eager_us"] = r.eager_us;
}

void add(const std::string &name, int64_t bs, int64_t seq, int32_t next_n, lb_variant v) {
    livebound::bench::replay_settings(benchmark::RegisterBenchmark(name.c_str(), BM_DSA, bs, seq, next_n, v), true);
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
    return livebound::bench::run_benchmarks(argc, argv, "bench_dsa_metadata");
}
