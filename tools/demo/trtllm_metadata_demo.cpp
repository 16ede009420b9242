// `livebound demo`, K4 (update_trtllm_mha_graph_metadata): an embedded decode batch (64
// requests, kv lengths 1024-8192, page size 128, a 131072-token = 1024-page page-table
// width), with and without SWA (SWA page table + swa_out_cache_loc), q_mode 1, bounded
// and full-width, on the CPU and on CUDA device 0 when present; every result checked
// against the plain C++ reference (live prefix exact, bounded runs: every dead page still
// poisoned; scalars, prefix sums and swa_out_cache_loc in full).
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "demo.h"
#include "livebound/livebound.hpp"
#include "picture.h"
#include "reference/trtllm_metadata_reference.h"

namespace {

using livebound::tools::DeviceBuffer;

constexpr int32_t kPoison = -0x5a5a5a5b;

struct Batch {
    std::string name;
    int64_t bs = 64;
    int32_t page_size = 128;
    int64_t width_tokens = 131072;
    bool swa = false;
    int64_t pool_rows = 64, ctx = 131072, full_slots = 1 << 22;
    std::vector<int32_t> seq_lens;          // [bs] int32 (as SGLang's test)
    std::vector<int64_t> req_pool_indices;  // [bs]
    std::vector<int32_t> qlens;             // [bs]
    std::vector<int32_t> req_to_token;      // [pool_rows, ctx]
    std::vector<int64_t> swa_mapping, out_cache_loc;
    int64_t swa_out_len = 0;
    int64_t max_seq_pages() const { return width_tokens / page_size; }
};

Batch make_batch(const std::string &name, bool swa, uint32_t seed) {
    Batch b;
    b.name = name;
    b.swa = swa;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> len(1024, 8192), q(1, 4);
    std::uniform_int_distribution<int32_t> slot(0, static_cast<int32_t>(b.full_slots) - 1);
    std::vector<int64_t> rows(b.pool_rows);
    for (int64_t r = 0; r < b.pool_rows; r++) rows[r] = r;
    std::shuffle(rows.begin(), rows.end(), rng);
    for (int64_t i = 0; i < b.bs; i++) {
        b.seq_lens.push_back(len(rng));
        b.req_pool_indices.push_back(rows[i]);
        b.qlens.push_back(q(rng));
    }
    b.req_to_token.resize(b.pool_rows * b.ctx);
    for (auto &t : b.req_to_token) t = slot(rng);
    for (int64_t i = 0; i < b.bs; i++) {  // unused tails are -1
        for (int64_t p = b.seq_lens[i]; p < b.ctx; p++) b.req_to_token[b.req_pool_indices[i] * b.ctx + p] = -1;
    }
    if (swa) {
        std::uniform_int_distribution<int64_t> swa_slot(0, b.full_slots / 4 - 1);
        b.swa_mapping.resize(b.full_slots + b.page_size + 1);
        for (auto &m : b.swa_mapping) m = swa_slot(rng);
        b.swa_mapping.back() = -1;
        for (int64_t k = 0; k < b.bs; k++) b.out_cache_loc.push_back(slot(rng));
        b.out_cache_loc[0] = -1;
        b.swa_out_len = b.bs + 5;
    }
    return b;
}

struct Outputs {
    std::vector<int32_t> cache_seqlens, cu_seqlens_k, cu_seqlens_q, page_table, swa_page_table;
    std::vector<int64_t> swa_out;
    explicit Outputs(const Batch &b)
        : cache_seqlens(b.bs, kPoison), cu_seqlens_k(b.bs + 1, 0), cu_seqlens_q(b.bs + 1, 0),
          page_table(b.bs * b.max_seq_pages(), kPoison), swa_page_table(b.swa ? b.bs * b.max_seq_pages() : 0, kPoison),
          swa_out(b.swa_out_len, 123) {}
};

lb_trtllm_mha_graph_metadata_args make_args(const Batch &b, void *seq, void *rpi, void *r2t, void *map, void *loc,
                                            void *ql, Outputs &o, void *cache, void *cuk, void *cuq, void *pt,
                                            void *spt, void *so, lb_variant variant) {
    lb_trtllm_mha_graph_metadata_args a{};
    a.seq_lens = livebound::tensor_1d(seq, LB_INT32, b.bs);
    a.req_pool_indices = livebound::tensor_1d(rpi, LB_INT64, b.bs);
    a.req_to_token = livebound::tensor_2d(r2t, LB_INT32, b.pool_rows, b.ctx);
    a.qlens = livebound::tensor_1d(ql, LB_INT32, b.bs);
    if (b.swa) {
        a.swa_mapping = livebound::tensor_1d(map, LB_INT64, static_cast<int64_t>(b.swa_mapping.size()));
        a.out_cache_loc = livebound::tensor_1d(loc, LB_INT64, static_cast<int64_t>(b.out_cache_loc.size()));
        a.swa_page_table = livebound::tensor_2d(spt, LB_INT32, b.bs, b.max_seq_pages());
        a.swa_out_cache_loc = livebound::tensor_1d(so, LB_INT64, b.swa_out_len);
    }
    a.cache_seqlens = livebound::tensor_1d(cache, LB_INT32, b.bs);
    a.cu_seqlens_k = livebound::tensor_1d(cuk, LB_INT32, b.bs + 1);
    a.cu_seqlens_q = livebound::tensor_1d(cuq, LB_INT32, b.bs + 1);
    a.page_table = livebound::tensor_2d(pt, LB_INT32, b.bs, b.max_seq_pages());
    a.bs = b.bs;
    a.max_seq_pages = b.max_seq_pages();
    a.seqlen_offset = 1;
    a.page_size = b.page_size;
    a.q_mode = LB_Q_MODE_CUMSUM;
    a.variant = variant;
    (void)o;
    return a;
}

std::string check(const Batch &b, const livebound::reference::TrtllmMetadataExpected &want, const Outputs &got,
                  bool bounded) {
    for (int64_t i = 0; i < b.bs; i++) {
        if (got.cache_seqlens[i] != want.cache_seqlens[i]) return "cache_seqlens[" + std::to_string(i) + "]";
        if (got.cu_seqlens_k[i + 1] != want.cu_seqlens_k[i]) return "cu_seqlens_k[" + std::to_string(i + 1) + "]";
        if (got.cu_seqlens_q[i + 1] != want.cu_seqlens_q[i]) return "cu_seqlens_q[" + std::to_string(i + 1) + "]";
    }
    if (got.cu_seqlens_k[0] != 0 || got.cu_seqlens_q[0] != 0) return "cu_seqlens[0] was written";
    for (int64_t k = 0; k < b.swa_out_len; k++) {
        if (got.swa_out[k] != want.swa_out_cache_loc[k]) return "swa_out_cache_loc[" + std::to_string(k) + "]";
    }
    const int64_t width = b.max_seq_pages();
    for (int64_t r = 0; r < b.bs; r++) {
        for (int64_t p = 0; p < width; p++) {
            const bool live = p < want.live_pages[r];
            const int32_t pt = got.page_table[r * width + p];
            if ((live || !bounded) && pt != want.page_rows[r][p]) {
                return "page_table[" + std::to_string(r) + ", " + std::to_string(p) + "]";
            }
            if (!live && bounded && pt != kPoison) return "page_table tail written at [" + std::to_string(r) + ", " + std::to_string(p) + "]";
            if (b.swa) {
                const int32_t s = got.swa_page_table[r * width + p];
                if ((live || !bounded) && s != want.swa_page_rows[r][p]) {
                    return "swa_page_table[" + std::to_string(r) + ", " + std::to_string(p) + "]";
                }
                if (!live && bounded && s != kPoison) return "swa_page_table tail written";
            }
        }
    }
    return "";
}

using livebound::demo::Row;

// The argument block over the batch and `out`, all in host memory.
lb_trtllm_mha_graph_metadata_args host_args(const Batch &b, Outputs &out, lb_variant variant) {
    auto cp = [](const auto &v) { return const_cast<void *>(static_cast<const void *>(v.data())); };
    return make_args(b, cp(b.seq_lens), cp(b.req_pool_indices), cp(b.req_to_token), cp(b.swa_mapping),
                     cp(b.out_cache_loc), cp(b.qlens), out, out.cache_seqlens.data(), out.cu_seqlens_k.data(),
                     out.cu_seqlens_q.data(), out.page_table.data(), out.swa_page_table.data(), out.swa_out.data(),
                     variant);
}

Row run_cpu(const Batch &b, const livebound::reference::TrtllmMetadataExpected &want, lb_variant variant) {
    Row res;
    res.kernel = "K4";
    res.batch = b.name;
    res.device = "cpu";
    res.variant = variant == LB_BOUNDED ? "bounded" : "full-width";
    res.unit = "pages";
    Outputs out(b);
    auto args = host_args(b, out, variant);
    livebound::check(lb_update_trtllm_mha_graph_metadata(&args, livebound::cpu()));
    res.mismatch = check(b, want, out, variant == LB_BOUNDED);
    res.time_us = livebound::demo::cpu_median_us(
        [](void *p) {
            livebound::check(lb_update_trtllm_mha_graph_metadata(static_cast<lb_trtllm_mha_graph_metadata_args *>(p),
                                                                 livebound::cpu()));
        },
        &args);
    return res;
}

bool run_cuda(const Batch &b, const livebound::reference::TrtllmMetadataExpected &want, lb_variant variant, Row *res,
              std::string *error) {
    namespace cuda = livebound::cuda;
    res->kernel = "K4";
    res->batch = b.name;
    res->device = "cuda:0";
    res->variant = variant == LB_BOUNDED ? "bounded" : "full-width";
    res->unit = "pages";
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        *error = scope.error();
        return false;
    }
    Outputs out(b);
    auto bytes = [](const auto &v) { return v.size() * sizeof(v[0]); };
    DeviceBuffer seq(bytes(b.seq_lens)), rpi(bytes(b.req_pool_indices)), r2t(bytes(b.req_to_token)),
        map(bytes(b.swa_mapping) + 8), loc(bytes(b.out_cache_loc) + 8), ql(bytes(b.qlens)),
        cache(bytes(out.cache_seqlens)), cuk(bytes(out.cu_seqlens_k)), cuq(bytes(out.cu_seqlens_q)),
        pt(bytes(out.page_table)), spt(bytes(out.swa_page_table) + 4), so(bytes(out.swa_out) + 8);
    bool ok = seq.upload(b.seq_lens.data(), bytes(b.seq_lens)) &&
              rpi.upload(b.req_pool_indices.data(), bytes(b.req_pool_indices)) &&
              r2t.upload(b.req_to_token.data(), bytes(b.req_to_token)) && ql.upload(b.qlens.data(), bytes(b.qlens)) &&
              (!b.swa || (map.upload(b.swa_mapping.data(), bytes(b.swa_mapping)) &&
                          loc.upload(b.out_cache_loc.data(), bytes(b.out_cache_loc)) &&
                          spt.upload(out.swa_page_table.data(), bytes(out.swa_page_table)) &&
                          so.upload(out.swa_out.data(), bytes(out.swa_out)))) &&
              cache.upload(out.cache_seqlens.data(), bytes(out.cache_seqlens)) &&
              cuk.upload(out.cu_seqlens_k.data(), bytes(out.cu_seqlens_k)) &&
              cuq.upload(out.cu_seqlens_q.data(), bytes(out.cu_seqlens_q)) &&
              pt.upload(out.page_table.data(), bytes(out.page_table));
    if (!ok) {
        *error = "device allocation or copy failed";
        return false;
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto args = make_args(b, seq.get(), rpi.get(), r2t.get(), map.get(), loc.get(), ql.get(), out, cache.get(),
                          cuk.get(), cuq.get(), pt.get(), spt.get(), so.get(), variant);
    auto enqueue = [&](cuda::CUstream s) {
        if (lb_update_trtllm_mha_graph_metadata(&args, livebound::cuda_device(0, s)) == LB_OK) return true;
        *error = lb_last_error();
        return false;
    };
    ok = enqueue(stream) && cuda::driver()->cuStreamSynchronize(stream) == 0 &&
         cache.download(out.cache_seqlens.data(), bytes(out.cache_seqlens)) &&
         cuk.download(out.cu_seqlens_k.data(), bytes(out.cu_seqlens_k)) &&
         cuq.download(out.cu_seqlens_q.data(), bytes(out.cu_seqlens_q)) &&
         pt.download(out.page_table.data(), bytes(out.page_table)) &&
         (!b.swa || (spt.download(out.swa_page_table.data(), bytes(out.swa_page_table)) &&
                     so.download(out.swa_out.data(), bytes(out.swa_out))));
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

void k4_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    std::vector<Batch> batches = {make_batch("trtllm decode bs=64 ps=128", false, 2040),
                                  make_batch("trtllm decode bs=64 ps=128 swa", true, 2041)};
    for (const auto &b : batches) {
        livebound::reference::TrtllmMetadataInputs in;
        in.seq_lens.assign(b.seq_lens.begin(), b.seq_lens.end());
        in.req_pool_indices = b.req_pool_indices;
        in.qlens.assign(b.qlens.begin(), b.qlens.end());
        in.req_to_token = b.req_to_token.data();
        in.pool_rows = b.pool_rows;
        in.ctx = b.ctx;
        in.swa_mapping = b.swa_mapping;
        in.has_out_cache_loc = b.swa;
        in.out_cache_loc = b.out_cache_loc;
        in.swa_out_len = b.swa_out_len;
        in.max_seq_pages = b.max_seq_pages();
        in.seqlen_offset = 1;
        in.page_size = b.page_size;
        in.q_mode = 1;
        in.with_swa_pages = b.swa;
        const auto want = livebound::reference::trtllm_metadata(in);
        int64_t live_pages = 0;
        for (auto l : want.live_pages) live_pages += l;
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            auto rs = livebound::demo::cpu_and_cuda_rows(
                ctx, "K4", [&] { return run_cpu(b, want, v); },
                [&](Row *r, std::string *error) { return run_cuda(b, want, v, r, error); }, note);
            for (auto &r : rs) {
                r.full_width = b.bs * b.max_seq_pages() * (b.swa ? 2 : 1);
                r.written = v == LB_BOUNDED ? live_pages * (b.swa ? 2 : 1) : r.full_width;
                rows->push_back(r);
            }
        }
    }
}

// `livebound picture k4`: the page_table columns (pages) a CPU run of each form wrote, per request.
bool k4_picture(livebound::picture::Picture *p, std::string *error) {
    const Batch b = make_batch("trtllm decode bs=64 ps=128", false, 2040);
    p->kernel = "K4";
    p->title = "update_trtllm_mha_graph_metadata, decode bs 64, page size 128: page_table after a CPU call";
    p->rows_are = "rows: the 64 requests (kv lengths 1024-8192, so 9-65 pages)";
    p->cols_are = "columns: page_table columns (pages) 0-1023 (the captured graph's width)";
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        Outputs out(b);
        auto args = host_args(b, out, v);
        if (lb_update_trtllm_mha_graph_metadata(&args, livebound::cpu()) != LB_OK) {
            *error = lb_last_error();
            return false;
        }
        p->panels.push_back(livebound::picture::written_panel(v == LB_BOUNDED ? "bounded" : "full width", out.page_table,
                                                              b.bs, b.max_seq_pages(), b.max_seq_pages(), kPoison));
    }
    return true;
}

const bool registered = livebound::demo::register_demo("K4", k4_demo);
const bool registered_picture = livebound::picture::register_picture("K4", k4_picture);

}  // namespace
