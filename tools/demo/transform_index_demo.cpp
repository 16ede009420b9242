// `livebound demo`, K6 (transform_index_page_table_prefill): an embedded DSA sparse-prefill
// batch (8 ragged requests, one long: 1024 query tokens in all, extend lengths up to
// 600; topk 2048, a 32768-position page table, 16 padding rows), bounded and full-width,
// on the CPU and on CUDA device 0 when present; every result checked against the plain
// C++ reference (every element of the result, the -1 fill rows included).
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "demo.h"
#include "livebound/livebound.hpp"
#include "picture.h"
#include "reference/transform_index_reference.h"

namespace {

using livebound::demo::Row;
using livebound::tools::DeviceBuffer;

constexpr int32_t kPoison = -0x5a5a5a5b;

struct PrefillBatch {
    std::string name = "dsa prefill bs=8 N=1024 topk=2048";
    std::vector<int64_t> extend_lens = {600, 37, 1, 150, 0, 64, 150, 22};  // sum 1024
    int64_t topk = 2048, max_seqlen_k = 32768, padding_rows = 16;
    int64_t n = 0, max_extend = 0, output_rows = 0;
    std::vector<int32_t> cu, page_table, topk_indices;
};

PrefillBatch make_batch() {
    PrefillBatch b;
    b.cu.push_back(0);
    for (int64_t e : b.extend_lens) {
        b.cu.push_back(b.cu.back() + static_cast<int32_t>(e));
        b.max_extend = std::max(b.max_extend, e);
    }
    b.n = b.cu.back();
    b.output_rows = b.n + b.padding_rows;
    std::mt19937 rng(2026);
    std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1);
    const int64_t bs = static_cast<int64_t>(b.extend_lens.size());
    b.page_table.resize(bs * b.max_seqlen_k);
    for (auto &s : b.page_table) s = slot(rng);
    // Each token's top-k are positions before it in its request's kv (prefix 4096 + its
    // offset), -1 where the request has fewer than topk visible positions.
    b.topk_indices.assign(b.n * b.topk, -1);
    for (int64_t i = 0; i < bs; i++) {
        for (int64_t t = b.cu[i]; t < b.cu[i + 1]; t++) {
            const int64_t visible = std::min<int64_t>(4096 + (t - b.cu[i]) * 8, b.max_seqlen_k);
            std::uniform_int_distribution<int32_t> pos(0, static_cast<int32_t>(visible - 1));
            for (int64_t j = 0; j < std::min(b.topk, visible); j++) b.topk_indices[t * b.topk + j] = pos(rng);
        }
    }
    return b;
}

lb_transform_index_args make_args(const PrefillBatch &b, void *pt, void *idx, void *cu, void *out, lb_variant v) {
    lb_transform_index_args a{};
    a.page_table = livebound::tensor_2d(pt, LB_INT32, static_cast<int64_t>(b.extend_lens.size()), b.max_seqlen_k);
    a.topk_indices = livebound::tensor_2d(idx, LB_INT32, b.n, b.topk);
    a.cu_seqlens_q = livebound::tensor_1d(cu, LB_INT32, static_cast<int64_t>(b.cu.size()));
    a.result = livebound::tensor_2d(out, LB_INT32, b.output_rows, b.topk);
    a.num_tokens = b.n;
    a.max_extend_len = b.max_extend;
    a.output_num_tokens = b.output_rows;
    a.page_size = 1;
    a.variant = v;
    return a;
}

std::string check(const PrefillBatch &b, const std::vector<std::vector<int32_t>> &want, const std::vector<int32_t> &got) {
    for (int64_t t = 0; t < b.output_rows; t++) {
        for (int64_t j = 0; j < b.topk; j++) {
            if (got[t * b.topk + j] != want[t][j]) return "result[" + std::to_string(t) + ", " + std::to_string(j) + "]";
        }
    }
    return "";
}

Row base_row(const PrefillBatch &b, const char *device, lb_variant v) {
    Row r;
    r.kernel = "K6";
    r.batch = b.name;
    r.device = device;
    r.variant = v == LB_BOUNDED ? "bounded" : "full-width";
    r.unit = "query rows";
    r.full_width = static_cast<int64_t>(b.extend_lens.size()) * b.max_extend;  // the grid's (q, i) pairs
    r.written = v == LB_BOUNDED ? b.n : r.full_width;                           // the pairs visited
    return r;
}

Row run_cpu(const PrefillBatch &b, const std::vector<std::vector<int32_t>> &want, lb_variant v) {
    Row r = base_row(b, "cpu", v);
    std::vector<int32_t> out(b.output_rows * b.topk, kPoison);
    auto args = make_args(b, const_cast<int32_t *>(b.page_table.data()), const_cast<int32_t *>(b.topk_indices.data()),
                          const_cast<int32_t *>(b.cu.data()), out.data(), v);
    livebound::check(lb_transform_index_page_table_prefill(&args, livebound::cpu()));
    r.mismatch = check(b, want, out);
    r.time_us = livebound::demo::cpu_median_us(
        [](void *p) {
            livebound::check(lb_transform_index_page_table_prefill(static_cast<lb_transform_index_args *>(p), livebound::cpu()));
        },
        &args, 7);
    return r;
}

bool run_cuda(const PrefillBatch &b, const std::vector<std::vector<int32_t>> &want, lb_variant v, Row *r,
              std::string *error) {
    namespace cuda = livebound::cuda;
    *r = base_row(b, "cuda:0", v);
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        *error = scope.error();
        return false;
    }
    std::vector<int32_t> out(b.output_rows * b.topk, kPoison);
    DeviceBuffer pt(b.page_table.size() * 4), idx(b.topk_indices.size() * 4), cu(b.cu.size() * 4), res(out.size() * 4);
    bool ok = pt.upload(b.page_table.data(), b.page_table.size() * 4) &&
              idx.upload(b.topk_indices.data(), b.topk_indices.size() * 4) && cu.upload(b.cu.data(), b.cu.size() * 4) &&
              res.upload(out.data(), out.size() * 4);
    if (!ok) {
        *error = "device allocation or copy failed";
        return false;
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto args = make_args(b, pt.get(), idx.get(), cu.get(), res.get(), v);
    auto enqueue = [&](cuda::CUstream s) {
        if (lb_transform_index_page_table_prefill(&args, livebound::cuda_device(0, s)) == LB_OK) return true;
        *error = lb_last_error();
        return false;
    };
    ok = enqueue(stream) && cuda::driver()->cuStreamSynchronize(stream) == 0 && res.download(out.data(), out.size() * 4);
    if (ok) {
        r->mismatch = check(b, want, out);
        livebound::tools::GraphTiming graph;
        ok = livebound::tools::time_graph_replay(enqueue, stream, 20, 50, &graph, error) &&
             livebound::tools::time_eager(enqueue, stream, 20, 20, &r->eager_us, error);
        r->time_us = graph.median_us_per_call;
    }
    cuda::driver()->cuStreamDestroy(stream);
    return ok;
}

void k6_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    const PrefillBatch b = make_batch();
    livebound::reference::TransformIndexInputs in;
    in.page_table = b.page_table.data();
    in.page_table_rows = static_cast<int64_t>(b.extend_lens.size());
    in.max_seqlen_k = b.max_seqlen_k;
    in.page_table_row_stride = b.max_seqlen_k;
    in.topk_indices = b.topk_indices.data();
    in.num_rows = b.n;
    in.topk = b.topk;
    in.topk_row_stride = b.topk;
    in.cu_seqlens_q.assign(b.cu.begin(), b.cu.end());
    in.output_num_tokens = b.output_rows;
    const auto want = livebound::reference::transform_index(in);
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        for (const Row &r : livebound::demo::cpu_and_cuda_rows(
                 ctx, "K6", [&] { return run_cpu(b, want, v); },
                 [&](Row *row, std::string *error) { return run_cuda(b, want, v, row, error); }, note)) {
            rows->push_back(r);
        }
    }
}

// `livebound picture k6`: the grid's (request, query position) pairs and the result rows a CPU
// run of each form wrote for them.
bool k6_picture(livebound::picture::Picture *p, std::string *error) {
    const PrefillBatch b = make_batch();
    p->kernel = "K6";
    p->title = "transform_index_page_table_prefill, DSA sparse prefill bs 8, top-k 2048: result rows after a CPU call";
    p->rows_are = "rows: the 8 requests (extend lengths 600, 37, 1, 150, 0, 64, 150, 22)";
    p->cols_are = "columns: query positions 0-599 of the grid (bs x max_extend_len); both forms write the same rows: "
                  "the bound removes the grid's visits past each length (livebound explain k6)";
    p->left_is = "no token";
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        std::vector<int32_t> out(b.output_rows * b.topk, kPoison);
        auto args = make_args(b, const_cast<int32_t *>(b.page_table.data()), const_cast<int32_t *>(b.topk_indices.data()),
                              const_cast<int32_t *>(b.cu.data()), out.data(), v);
        if (lb_transform_index_page_table_prefill(&args, livebound::cpu()) != LB_OK) {
            *error = lb_last_error();
            return false;
        }
        auto row_written = [&](int64_t row) {
            for (int64_t j = 0; j < b.topk; j++) {
                if (out[row * b.topk + j] != kPoison) return true;
            }
            return false;
        };
        p->panels.push_back(livebound::picture::token_panel(v == LB_BOUNDED ? "bounded" : "full width", b.extend_lens,
                                                            b.max_extend, row_written));
    }
    return true;
}

const bool registered = livebound::demo::register_demo("K6", k6_demo);
const bool registered_picture = livebound::picture::register_picture("K6", k6_picture);

}  // namespace
