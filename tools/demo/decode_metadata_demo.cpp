// `livebound demo`, K1 (normal_decode_set_metadata): an embedded decode batch (64
// requests, kv lengths 1024-8192, a 131072-token page-table width), page sizes 1 and 64
// with an SWA table, bounded and full-width, on the CPU and on CUDA device 0 when
// present; every result checked against the plain C++ reference (live prefix exact,
// bounded runs: every dead column still poisoned).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "demo.h"
#include "livebound/livebound.hpp"
#include "picture.h"
#include "reference/decode_metadata_reference.h"

namespace {

using livebound::tools::DeviceBuffer;

constexpr int32_t kPoison = -0x5a5a5a5b;

// One embedded decode batch (host memory).
struct DecodeBatch {
    std::string name;
    int64_t bs = 64;
    int32_t page_size = 1;
    int64_t width_tokens = 131072;  // the captured graph's width
    bool swa = false;
    std::vector<int64_t> seq_lens;          // [bs] kv lengths
    std::vector<int64_t> req_pool_indices;  // [bs] rows of req_to_token
    int64_t pool_rows = 64, ctx = 131072;
    std::vector<int32_t> req_to_token;  // [pool_rows, ctx] slots
    std::vector<int64_t> full_to_swa;   // [full_slots] SWA slots (swa only)
    int64_t max_seq_pages() const { return width_tokens / page_size; }
};

DecodeBatch make_batch(const std::string &name, int32_t page_size, bool swa, uint32_t seed) {
    DecodeBatch b;
    b.name = name;
    b.page_size = page_size;
    b.swa = swa;
    std::mt19937 rng(seed);
    const int32_t full_slots = 1 << 22;
    std::uniform_int_distribution<int64_t> len(1024, 8192);
    std::uniform_int_distribution<int32_t> slot(0, full_slots - 1);
    std::vector<int64_t> rows(b.pool_rows);
    for (int64_t r = 0; r < b.pool_rows; r++) rows[r] = r;
    std::shuffle(rows.begin(), rows.end(), rng);
    for (int64_t i = 0; i < b.bs; i++) {
        b.seq_lens.push_back(len(rng));
        b.req_pool_indices.push_back(rows[i]);
    }
    b.req_to_token.resize(b.pool_rows * b.ctx);
    for (auto &t : b.req_to_token) t = slot(rng);
    if (swa) {
        std::uniform_int_distribution<int64_t> shift(0, 99);
        b.full_to_swa.resize(full_slots);
        for (int64_t i = 0; i < full_slots; i++) b.full_to_swa[i] = (i + shift(rng)) % full_slots;
    }
    return b;
}

struct Outputs {
    std::vector<int32_t> cache_seqlens, cu_seqlens_k, page_table, swa_page_table;
    explicit Outputs(const DecodeBatch &b)
        : cache_seqlens(b.bs, kPoison), cu_seqlens_k(b.bs + 1, kPoison),
          page_table(b.bs * b.max_seq_pages(), kPoison),
          swa_page_table(b.swa ? b.bs * b.max_seq_pages() : 0, kPoison) {}
};

// Argument block over the given pointers (host or device).
lb_decode_metadata_args make_args(const DecodeBatch &b, void *seq_lens, void *rpi, void *r2t, void *f2s, void *cache,
                                  void *cu, void *pt, void *swa_pt, lb_variant variant) {
    lb_decode_metadata_args a{};
    a.seq_lens = livebound::tensor_1d(seq_lens, LB_INT64, b.bs);
    a.req_pool_indices = livebound::tensor_1d(rpi, LB_INT64, b.bs);
    a.req_to_token = livebound::tensor_2d(r2t, LB_INT32, b.pool_rows, b.ctx);
    if (b.swa) {
        a.full_to_swa = livebound::tensor_1d(f2s, LB_INT64, static_cast<int64_t>(b.full_to_swa.size()));
        a.swa_page_table = livebound::tensor_2d(swa_pt, LB_INT32, b.bs, b.max_seq_pages());
    }
    a.cache_seqlens = livebound::tensor_1d(cache, LB_INT32, b.bs);
    a.cu_seqlens_k = livebound::tensor_1d(cu, LB_INT32, b.bs + 1);
    a.page_table = livebound::tensor_2d(pt, LB_INT32, b.bs, b.max_seq_pages());
    a.max_seq_pages = b.max_seq_pages();
    a.page_size = b.page_size;
    a.variant = variant;
    return a;
}

// Exact check against the reference: scalars in full, the live prefix, and (bounded)
// every column past it still poisoned. Returns "" or the first mismatch.
std::string check(const DecodeBatch &b, const livebound::reference::DecodeMetadataExpected &want, const Outputs &got,
                  bool bounded) {
    for (int64_t i = 0; i < b.bs; i++) {
        if (got.cache_seqlens[i] != want.cache_seqlens[i]) return "cache_seqlens[" + std::to_string(i) + "]";
    }
    for (int64_t i = 0; i <= b.bs; i++) {
        if (got.cu_seqlens_k[i] != want.cu_seqlens_k[i]) return "cu_seqlens_k[" + std::to_string(i) + "]";
    }
    const int64_t width = b.max_seq_pages();
    for (int64_t r = 0; r < b.bs; r++) {
        for (int64_t k = 0; k < width; k++) {
            const bool live = k < want.live_pages[r];
            int32_t pt = got.page_table[r * width + k];
            if (live && pt != want.page_rows[r][k]) return "page_table[" + std::to_string(r) + ", " + std::to_string(k) + "]";
            if (!live && bounded && pt != kPoison) return "page_table tail written at [" + std::to_string(r) + ", " + std::to_string(k) + "]";
            if (b.swa) {
                int32_t s = got.swa_page_table[r * width + k];
                if (live && s != want.swa_page_rows[r][k]) return "swa_page_table[" + std::to_string(r) + ", " + std::to_string(k) + "]";
                if (!live && bounded && s != kPoison) return "swa_page_table tail written";
            }
        }
    }
    return "";
}



using livebound::demo::Row;

// The argument block over the batch and `out`, all in host memory.
lb_decode_metadata_args host_args(const DecodeBatch &b, Outputs &out, lb_variant variant) {
    return make_args(b, const_cast<int64_t *>(b.seq_lens.data()), const_cast<int64_t *>(b.req_pool_indices.data()),
                     const_cast<int32_t *>(b.req_to_token.data()), const_cast<int64_t *>(b.full_to_swa.data()),
                     out.cache_seqlens.data(), out.cu_seqlens_k.data(), out.page_table.data(), out.swa_page_table.data(),
                     variant);
}

Row run_cpu(const DecodeBatch &b, const livebound::reference::DecodeMetadataExpected &want, lb_variant variant) {
    Row res;
    res.kernel = "K1";
    res.batch = b.name;
    res.device = "cpu";
    res.variant = variant == LB_BOUNDED ? "bounded" : "full-width";
    Outputs out(b);
    auto args = host_args(b, out, variant);
    livebound::normal_decode_set_metadata(args, livebound::cpu());
    res.mismatch = check(b, want, out, variant == LB_BOUNDED);
    res.time_us = livebound::demo::cpu_median_us(
        [](void *p) { livebound::normal_decode_set_metadata(*static_cast<lb_decode_metadata_args *>(p), livebound::cpu()); },
        &args);
    return res;
}

bool run_cuda(const DecodeBatch &b, const livebound::reference::DecodeMetadataExpected &want, lb_variant variant,
              Row *res, std::string *error) {
    namespace cuda = livebound::cuda;
    res->kernel = "K1";
    res->batch = b.name;
    res->device = "cuda:0";
    res->variant = variant == LB_BOUNDED ? "bounded" : "full-width";
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        *error = scope.error();
        return false;
    }
    Outputs out(b);
    DeviceBuffer seq(b.bs * 8), rpi(b.bs * 8), r2t(b.req_to_token.size() * 4), f2s(b.full_to_swa.size() * 8),
        cache(out.cache_seqlens.size() * 4), cu(out.cu_seqlens_k.size() * 4), pt(out.page_table.size() * 4),
        swa_pt(out.swa_page_table.size() * 4);
    bool ok = seq.upload(b.seq_lens.data(), b.bs * 8) && rpi.upload(b.req_pool_indices.data(), b.bs * 8) &&
              r2t.upload(b.req_to_token.data(), b.req_to_token.size() * 4) &&
              (!b.swa || f2s.upload(b.full_to_swa.data(), b.full_to_swa.size() * 8)) &&
              cache.upload(out.cache_seqlens.data(), out.cache_seqlens.size() * 4) &&
              cu.upload(out.cu_seqlens_k.data(), out.cu_seqlens_k.size() * 4) &&
              pt.upload(out.page_table.data(), out.page_table.size() * 4) &&
              (!b.swa || swa_pt.upload(out.swa_page_table.data(), out.swa_page_table.size() * 4));
    if (!ok) {
        *error = "device allocation or copy failed";
        return false;
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto args = make_args(b, seq.get(), rpi.get(), r2t.get(), b.swa ? f2s.get() : nullptr, cache.get(), cu.get(),
                          pt.get(), b.swa ? swa_pt.get() : nullptr, variant);
    auto enqueue = [&](cuda::CUstream s) {
        if (lb_normal_decode_set_metadata(&args, livebound::cuda_device(0, s)) == LB_OK) return true;
        *error = lb_last_error();
        return false;
    };
    ok = enqueue(stream) && cuda::driver()->cuStreamSynchronize(stream) == 0 &&
         cache.download(out.cache_seqlens.data(), out.cache_seqlens.size() * 4) &&
         cu.download(out.cu_seqlens_k.data(), out.cu_seqlens_k.size() * 4) &&
         pt.download(out.page_table.data(), out.page_table.size() * 4) &&
         (!b.swa || swa_pt.download(out.swa_page_table.data(), out.swa_page_table.size() * 4));
    if (ok) {
        res->mismatch = check(b, want, out, variant == LB_BOUNDED);
        livebound::tools::GraphTiming graph;
        ok = livebound::tools::time_graph_replay(enqueue, stream, 20, 50, &graph, error) &&
             livebound::tools::time_eager(enqueue, stream, 20, 20, &res->eager_us, error);
        res->time_us = graph.median_us_per_call;
    }
    cuda::driver()->cuStreamDestroy(stream);
    return ok;
}

void k1_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    std::vector<DecodeBatch> batches = {make_batch("decode bs=64 ps=1", 1, false, 2026),
                                        make_batch("decode bs=64 ps=64 swa", 64, true, 2027)};
    for (const auto &b : batches) {
        livebound::reference::DecodeMetadataInputs in;
        in.seq_lens = b.seq_lens;
        in.req_pool_indices = b.req_pool_indices;
        in.req_to_token = b.req_to_token.data();
        in.pool_rows = b.pool_rows;
        in.ctx = b.ctx;
        in.req_to_token_row_stride = b.ctx;
        in.full_to_swa = b.swa ? b.full_to_swa.data() : nullptr;
        in.full_slots = static_cast<int64_t>(b.full_to_swa.size());
        in.max_seq_pages = b.max_seq_pages();
        in.page_size = b.page_size;
        auto want = livebound::reference::decode_metadata(in);
        int64_t live_columns = 0;
        for (auto l : want.live_pages) live_columns += l;
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            auto rs = livebound::demo::cpu_and_cuda_rows(
                ctx, "K1", [&] { return run_cpu(b, want, v); },
                [&](Row *r, std::string *error) { return run_cuda(b, want, v, r, error); }, note);
            for (auto &r : rs) {
                r.full_width = b.bs * b.max_seq_pages() * (b.swa ? 2 : 1);
                r.written = v == LB_BOUNDED ? live_columns * (b.swa ? 2 : 1) : r.full_width;
                rows->push_back(r);
            }
        }
    }
}

// `livebound picture k1`: the page-table columns a CPU run of each form wrote, per request.
bool k1_picture(livebound::picture::Picture *p, std::string *error) {
    const DecodeBatch b = make_batch("decode bs=64 ps=1", 1, false, 2026);
    p->kernel = "K1";
    p->title = "normal_decode_set_metadata, decode bs 64, page size 1: page_table after a CPU call";
    p->rows_are = "rows: the 64 requests (kv lengths 1024-8192)";
    p->cols_are = "columns: page_table columns 0-131071 (the captured graph's width; a pixel shades by the share written)";
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        Outputs out(b);
        auto args = host_args(b, out, v);
        if (lb_normal_decode_set_metadata(&args, livebound::cpu()) != LB_OK) {
            *error = lb_last_error();
            return false;
        }
        p->panels.push_back(livebound::picture::written_panel(v == LB_BOUNDED ? "bounded" : "full width", out.page_table,
                                                              b.bs, b.max_seq_pages(), b.max_seq_pages(), kPoison));
    }
    return true;
}

const bool registered = livebound::demo::register_demo("K1", k1_demo);
const bool registered_picture = livebound::picture::register_picture("K1", k1_picture);

}  // namespace
