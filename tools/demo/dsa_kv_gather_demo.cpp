// `livebound demo`, K5 (_get_k_and_s_triton, the DSA indexer K + scale gather): an embedded
// DSA prefill batch (8 ragged requests, 8,192 tokens in all, max_seq_len 4096, D = 128,
// page_size 64, shuffled pages), bounded and full-width, on the CPU and on CUDA device 0
// when present; every result checked byte for byte against the plain C++ reference (all
// seq_len_sum rows exact, the spare rows past them still poisoned).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "demo.h"
#include "livebound/livebound.hpp"
#include "picture.h"
#include "reference/dsa_kv_gather_reference.h"

namespace {

using livebound::demo::Row;
using livebound::tools::DeviceBuffer;

constexpr int32_t kD = 128, kPageSize = 64;
constexpr int64_t kPageBytes = int64_t{kPageSize} * (kD + 4);
constexpr uint8_t kPoison = 0xA5;
constexpr int64_t kSpareRows = 16;

struct Batch {
    std::string name = "prefill bs=8 ps=64 8k tok";
    std::vector<int64_t> seq_lens = {4096, 17, 1200, 0, 640, 1500, 63, 676};
    int64_t max_seq_len = 4096, max_pages = 64, num_pages = 0, sum = 0;
    std::vector<uint32_t> buf;       // [num_pages, kPageBytes] bytes, as words
    std::vector<int32_t> page_indices;  // [B, max_pages]
};

Batch make_batch() {
    Batch b;
    std::mt19937 rng(2028);
    b.sum = std::accumulate(b.seq_lens.begin(), b.seq_lens.end(), int64_t{0});
    b.num_pages = 0;
    for (int64_t len : b.seq_lens) b.num_pages += (len + kPageSize - 1) / kPageSize;
    b.num_pages += 7;
    b.buf.resize(b.num_pages * kPageBytes / 4);
    for (auto &w : b.buf) w = static_cast<uint32_t>(rng());
    std::vector<int32_t> ids(b.num_pages);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    b.page_indices.assign(b.seq_lens.size() * b.max_pages, 0);
    size_t next = 0;
    for (size_t r = 0; r < b.seq_lens.size(); r++) {
        for (int64_t k = 0; k < (b.seq_lens[r] + kPageSize - 1) / kPageSize; k++) b.page_indices[r * b.max_pages + k] = ids[next++];
    }
    return b;
}

lb_dsa_kv_gather_args make_args(const Batch &b, void *buf, void *pi, void *seq, void *k, void *s, lb_variant v) {
    lb_dsa_kv_gather_args a{};
    const int64_t bs = static_cast<int64_t>(b.seq_lens.size());
    a.buf = livebound::tensor_2d(buf, LB_UINT8, b.num_pages, kPageBytes);
    a.page_indices = livebound::tensor_2d(pi, LB_INT32, bs, b.max_pages);
    a.seq_lens = livebound::tensor_1d(seq, LB_INT64, bs);
    a.k_out = livebound::tensor_2d(k, LB_UINT8, b.sum + kSpareRows, kD);
    a.s_out = livebound::tensor_2d(s, LB_UINT8, b.sum + kSpareRows, 4);
    a.seq_len_sum = b.sum;
    a.max_seq_len = b.max_seq_len;
    a.page_size = kPageSize;
    a.index_head_dim = kD;
    a.variant = v;
    return a;
}

std::string check(const livebound::reference::KvGatherExpected &want, const std::vector<uint8_t> &k,
                  const std::vector<uint8_t> &s) {
    if (std::memcmp(k.data(), want.k_rows.data(), want.k_rows.size()) != 0) return "k_out rows differ";
    if (std::memcmp(s.data(), want.s_rows.data(), want.s_rows.size()) != 0) return "s_out rows differ";
    for (size_t i = want.k_rows.size(); i < k.size(); i++) {
        if (k[i] != kPoison) return "k_out written past seq_len_sum";
    }
    for (size_t i = want.s_rows.size(); i < s.size(); i++) {
        if (s[i] != kPoison) return "s_out written past seq_len_sum";
    }
    return "";
}

Row base_row(const Batch &b, const char *device, lb_variant v) {
    Row r;
    r.kernel = "K5";
    r.batch = b.name;
    r.device = device;
    r.variant = v == LB_BOUNDED ? "bounded" : "full-width";
    r.unit = "tokens";
    r.written = b.sum;
    r.full_width = static_cast<int64_t>(b.seq_lens.size()) * b.max_seq_len;
    return r;
}

Row run_cpu(const Batch &b, const livebound::reference::KvGatherExpected &want, lb_variant v) {
    Row r = base_row(b, "cpu", v);
    std::vector<uint8_t> k((b.sum + kSpareRows) * kD, kPoison), s((b.sum + kSpareRows) * 4, kPoison);
    std::vector<int64_t> seq = b.seq_lens;
    std::vector<int32_t> pi = b.page_indices;
    std::vector<uint32_t> buf = b.buf;
    auto args = make_args(b, buf.data(), pi.data(), seq.data(), k.data(), s.data(), v);
    livebound::check(lb_get_k_and_s(&args, livebound::cpu()));
    r.mismatch = check(want, k, s);
    r.time_us = livebound::demo::cpu_median_us(
        [](void *p) { livebound::check(lb_get_k_and_s(static_cast<lb_dsa_kv_gather_args *>(p), livebound::cpu())); }, &args);
    return r;
}

bool run_cuda(const Batch &b, const livebound::reference::KvGatherExpected &want, lb_variant v, Row *r,
              std::string *error) {
    namespace cuda = livebound::cuda;
    *r = base_row(b, "cuda:0", v);
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        *error = scope.error();
        return false;
    }
    std::vector<uint8_t> k((b.sum + kSpareRows) * kD, kPoison), s((b.sum + kSpareRows) * 4, kPoison);
    DeviceBuffer d_buf(b.buf.size() * 4), d_pi(b.page_indices.size() * 4), d_seq(b.seq_lens.size() * 8), d_k(k.size()),
        d_s(s.size());
    bool ok = d_buf.upload(b.buf.data(), b.buf.size() * 4) && d_pi.upload(b.page_indices.data(), b.page_indices.size() * 4) &&
              d_seq.upload(b.seq_lens.data(), b.seq_lens.size() * 8) && d_k.upload(k.data(), k.size()) &&
              d_s.upload(s.data(), s.size());
    if (!ok) {
        *error = "device allocation or copy failed";
        return false;
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto args = make_args(b, d_buf.get(), d_pi.get(), d_seq.get(), d_k.get(), d_s.get(), v);
    auto enqueue = [&](cuda::CUstream st) {
        if (lb_get_k_and_s(&args, livebound::cuda_device(0, st)) == LB_OK) return true;
        *error = lb_last_error();
        return false;
    };
    ok = enqueue(stream) && cuda::driver()->cuStreamSynchronize(stream) == 0 && d_k.download(k.data(), k.size()) &&
         d_s.download(s.data(), s.size());
    if (ok) {
        r->mismatch = check(want, k, s);
        livebound::tools::GraphTiming graph;
        ok = livebound::tools::time_graph_replay(enqueue, stream, 20, 50, &graph, error) &&
             livebound::tools::time_eager(enqueue, stream, 20, 20, &r->eager_us, error);
        r->time_us = graph.median_us_per_call;
    }
    cuda::driver()->cuStreamDestroy(stream);
    return ok;
}

void k5_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    const Batch b = make_batch();
    livebound::reference::KvGatherInputs in;
    in.buf = reinterpret_cast<const uint8_t *>(b.buf.data());
    in.num_pages = b.num_pages;
    in.buf_row_stride = kPageBytes;
    in.seq_lens = b.seq_lens;
    for (size_t r = 0; r < b.seq_lens.size(); r++) {
        in.page_indices.emplace_back(b.page_indices.begin() + r * b.max_pages, b.page_indices.begin() + (r + 1) * b.max_pages);
    }
    in.page_size = kPageSize;
    in.head_dim = kD;
    const auto want = livebound::reference::get_k_and_s(in);
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        for (const Row &r : livebound::demo::cpu_and_cuda_rows(
                 ctx, "K5", [&] { return run_cpu(b, want, v); },
                 [&](Row *row, std::string *error) { return run_cuda(b, want, v, row, error); }, note)) {
            rows->push_back(r);
        }
    }
}

// `livebound picture k5`: the grid's (request, token position) pairs and the k_out / s_out rows
// a CPU run of each form wrote for them.
bool k5_picture(livebound::picture::Picture *p, std::string *error) {
    const Batch b = make_batch();
    p->kernel = "K5";
    p->title = "_get_k_and_s_triton, DSA prefill bs 8, page size 64: k_out / s_out rows after a CPU call";
    p->rows_are = "rows: the 8 requests (lengths 4096, 17, 1200, 0, 640, 1500, 63, 676)";
    p->cols_are = "columns: token positions 0-4095 of the grid (bs x max_seq_len); both forms write the same rows: "
                  "the bound removes the grid's visits past each length (livebound explain k5)";
    p->left_is = "no token";
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        std::vector<uint8_t> k((b.sum + kSpareRows) * kD, kPoison), s((b.sum + kSpareRows) * 4, kPoison);
        std::vector<int64_t> seq = b.seq_lens;
        std::vector<int32_t> pi = b.page_indices;
        std::vector<uint32_t> buf = b.buf;
        auto args = make_args(b, buf.data(), pi.data(), seq.data(), k.data(), s.data(), v);
        if (lb_get_k_and_s(&args, livebound::cpu()) != LB_OK) {
            *error = lb_last_error();
            return false;
        }
        auto row_written = [&](int64_t row) {
            for (int64_t i = 0; i < kD; i++) {
                if (k[row * kD + i] != kPoison) return true;
            }
            for (int64_t i = 0; i < 4; i++) {
                if (s[row * 4 + i] != kPoison) return true;
            }
            return false;
        };
        p->panels.push_back(livebound::picture::token_panel(v == LB_BOUNDED ? "bounded" : "full width", b.seq_lens,
                                                            b.max_seq_len, row_written));
    }
    return true;
}

const bool registered = livebound::demo::register_demo("K5", k5_demo);
const bool registered_picture = livebound::picture::register_picture("K5", k5_picture);

}  // namespace
