// `livebound demo`, K2 (fused_dsa_decode_metadata) and K3 (fused_dsa_target_verify_metadata):
// embedded DSA batches with a 16384-token graph width, real_page_size 64, top-k 2048:
//   K2: decode, 64 requests, kv lengths 512-4096, page_table_1 and real_page_table;
//   K3: target verify, 16 requests x next_n 4 (64 expanded rows), paged_mqa_ctx_lens_2d too.
// Bounded and full-width, on the CPU and on CUDA device 0 when present; every result checked
// against the plain C++ reference (lengths and prefix sums in full, the live prefix exact,
// bounded runs: every element past the live prefix still poisoned).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "demo.h"
#include "livebound/livebound.hpp"
#include "picture.h"
#include "reference/dsa_metadata_reference.h"

namespace {

using livebound::demo::Row;
using livebound::tools::DeviceBuffer;

constexpr int32_t kPoison = -0x5a5a5a5b;
constexpr int64_t kWidth = 16384;
constexpr int32_t kRps = 64, kTopk = 2048;

struct Batch {
    std::string kernel, name;
    int32_t next_n = 0;  // 0: K2
    std::vector<int64_t> seq_lens, rpi;
    int64_t pool_rows = 0;
    std::vector<int32_t> req_to_token;  // [pool_rows, kWidth]
    int64_t bs() const { return static_cast<int64_t>(seq_lens.size()); }
    int64_t rows() const { return bs() * (next_n > 0 ? next_n : 1); }
    static int64_t real_cols() { return (kWidth + kRps - 1) / kRps; }
};

Batch make_batch(const std::string &kernel, const std::string &name, int64_t bs, int32_t next_n, uint32_t seed) {
    Batch b;
    b.kernel = kernel;
    b.name = name;
    b.next_n = next_n;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> len(512, 4096);
    b.pool_rows = bs + 3;
    for (int64_t i = 0; i < bs; i++) {
        b.seq_lens.push_back(len(rng));
        b.rpi.push_back((i * 5 + 1) % b.pool_rows);
    }
    b.req_to_token.resize(b.pool_rows * kWidth);
    std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1);
    for (auto &t : b.req_to_token) t = slot(rng);
    return b;
}

struct Outputs {
    std::vector<int32_t> cache, cu, expanded, dsa, dsa_cu, ctx, pt1, real;
    explicit Outputs(const Batch &b)
        : cache(b.bs(), kPoison), cu(b.bs() + 1, kPoison), expanded(b.next_n ? b.rows() : 0, kPoison),
          dsa(b.rows(), kPoison), dsa_cu(b.rows() + 1, kPoison), ctx(b.next_n ? b.bs() * b.next_n : 0, kPoison),
          pt1(b.rows() * kWidth, kPoison), real(b.rows() * Batch::real_cols(), kPoison) {}
    std::vector<std::vector<int32_t> *> all() { return {&cache, &cu, &expanded, &dsa, &dsa_cu, &ctx, &pt1, &real}; }
};

// Pointers (host or device) for each output, in Outputs::all() order, and the inputs.
struct Pointers {
    void *seq, *rpi, *r2t;
    std::vector<void *> out;
};

lb_status call(const Batch &b, const Pointers &p, lb_variant variant, lb_device device) {
    using livebound::tensor_1d;
    using livebound::tensor_2d;
    const int64_t bs = b.bs(), rows = b.rows();
    if (b.next_n == 0) {
        lb_dsa_decode_metadata_args a{};
        a.seq_lens = tensor_1d(p.seq, LB_INT64, bs);
        a.req_pool_indices = tensor_1d(p.rpi, LB_INT64, bs);
        a.req_to_token = tensor_2d(p.r2t, LB_INT32, b.pool_rows, kWidth);
        a.cache_seqlens = tensor_1d(p.out[0], LB_INT32, bs);
        a.cu_seqlens_k = tensor_1d(p.out[1], LB_INT32, bs + 1);
        a.dsa_cache_seqlens = tensor_1d(p.out[3], LB_INT32, bs);
        a.dsa_cu_seqlens_k = tensor_1d(p.out[4], LB_INT32, bs + 1);
        a.page_table_1 = tensor_2d(p.out[6], LB_INT32, bs, kWidth);
        a.real_page_table = tensor_2d(p.out[7], LB_INT32, bs, Batch::real_cols());
        a.max_len = kWidth;
        a.dsa_index_topk = kTopk;
        a.real_page_size = kRps;
        a.variant = variant;
        return lb_fused_dsa_decode_metadata(&a, device);
    }
    lb_dsa_target_verify_metadata_args a{};
    a.seq_lens = tensor_1d(p.seq, LB_INT64, bs);
    a.req_pool_indices = tensor_1d(p.rpi, LB_INT64, bs);
    a.req_to_token = tensor_2d(p.r2t, LB_INT32, b.pool_rows, kWidth);
    a.cache_seqlens = tensor_1d(p.out[0], LB_INT32, bs);
    a.cu_seqlens_k = tensor_1d(p.out[1], LB_INT32, bs + 1);
    a.seqlens_expanded = tensor_1d(p.out[2], LB_INT32, rows);
    a.dsa_cache_seqlens = tensor_1d(p.out[3], LB_INT32, rows);
    a.dsa_cu_seqlens_k = tensor_1d(p.out[4], LB_INT32, rows + 1);
    a.paged_mqa_ctx_lens_2d = tensor_2d(p.out[5], LB_INT32, bs, b.next_n);
    a.page_table_1 = tensor_2d(p.out[6], LB_INT32, rows, kWidth);
    a.real_page_table = tensor_2d(p.out[7], LB_INT32, rows, Batch::real_cols());
    a.max_seqlen_k = kWidth;
    a.dsa_index_topk = kTopk;
    a.real_page_size = kRps;
    a.next_n = b.next_n;
    a.variant = variant;
    return lb_fused_dsa_target_verify_metadata(&a, device);
}

// "" or the first mismatch.
std::string check(const Batch &b, const livebound::reference::DsaMetadataExpected &w, Outputs &o, bool bounded) {
    auto same = [](const std::vector<int32_t> &got, const std::vector<int32_t> &want, const char *name) -> std::string {
        for (size_t i = 0; i < want.size(); i++) {
            if (got[i] != want[i]) return std::string(name) + "[" + std::to_string(i) + "]";
        }
        return "";
    };
    std::string e = same(o.cache, w.cache_seqlens, "cache_seqlens");
    if (e.empty()) e = same(o.cu, w.cu_seqlens_k, "cu_seqlens_k");
    if (e.empty()) e = same(o.dsa, w.dsa_cache_seqlens, "dsa_cache_seqlens");
    if (e.empty()) e = same(o.dsa_cu, w.dsa_cu_seqlens_k, "dsa_cu_seqlens_k");
    if (e.empty() && b.next_n) e = same(o.expanded, w.seqlens_expanded, "seqlens_expanded");
    if (e.empty() && b.next_n) {
        for (int64_t r = 0; r < b.bs() && e.empty(); r++) {
            for (int32_t d = 0; d < b.next_n; d++) {
                if (o.ctx[r * b.next_n + d] != w.ctx_lens_2d[r][d]) e = "paged_mqa_ctx_lens_2d";
            }
        }
    }
    if (!e.empty()) return e;
    auto table = [&](const std::vector<int32_t> &got, int64_t cols, const std::vector<int64_t> &live,
                     const std::vector<std::vector<int32_t>> &want, const char *name) -> std::string {
        for (int64_t r = 0; r < b.rows(); r++) {
            for (int64_t k = 0; k < cols; k++) {
                const int32_t v = got[r * cols + k];
                const bool defined = !bounded || k < live[r];
                if (defined && v != want[r][k]) return std::string(name) + "[" + std::to_string(r) + ", " + std::to_string(k) + "]";
                if (!defined && v != kPoison) return std::string(name) + " written past the live prefix at [" + std::to_string(r) + ", " + std::to_string(k) + "]";
            }
        }
        return "";
    };
    e = table(o.pt1, kWidth, w.live_tokens, w.page_table_1, "page_table_1");
    if (e.empty()) e = table(o.real, Batch::real_cols(), w.live_pages, w.real_page_table, "real_page_table");
    return e;
}

Row base_row(const Batch &b, const char *device, lb_variant v) {
    Row r;
    r.kernel = b.kernel;
    r.batch = b.name;
    r.device = device;
    r.variant = v == LB_BOUNDED ? "bounded" : "full-width";
    return r;
}

Row run_cpu(const Batch &b, const livebound::reference::DsaMetadataExpected &want, lb_variant v) {
    Row res = base_row(b, "cpu", v);
    Outputs out(b);
    Pointers p{const_cast<int64_t *>(b.seq_lens.data()), const_cast<int64_t *>(b.rpi.data()),
               const_cast<int32_t *>(b.req_to_token.data()), {}};
    for (auto *o : out.all()) p.out.push_back(o->data());
    struct Arg {
        const Batch *b;
        Pointers *p;
        lb_variant v;
    } arg{&b, &p, v};
    livebound::check(call(b, p, v, livebound::cpu()));
    res.mismatch = check(b, want, out, v == LB_BOUNDED);
    res.time_us = livebound::demo::cpu_median_us(
        [](void *x) {
            auto *a = static_cast<Arg *>(x);
            livebound::check(call(*a->b, *a->p, a->v, livebound::cpu()));
        },
        &arg);
    return res;
}

bool run_cuda(const Batch &b, const livebound::reference::DsaMetadataExpected &want, lb_variant v, Row *res,
              std::string *error) {
    namespace cuda = livebound::cuda;
    *res = base_row(b, "cuda:0", v);
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        *error = scope.error();
        return false;
    }
    Outputs out(b);
    DeviceBuffer seq(b.bs() * 8), rpi(b.bs() * 8), r2t(b.req_to_token.size() * 4);
    std::vector<std::unique_ptr<DeviceBuffer>> dev;
    bool ok = seq.upload(b.seq_lens.data(), b.bs() * 8) && rpi.upload(b.rpi.data(), b.bs() * 8) &&
              r2t.upload(b.req_to_token.data(), b.req_to_token.size() * 4);
    Pointers p{seq.get(), rpi.get(), r2t.get(), {}};
    for (auto *o : out.all()) {
        dev.push_back(std::make_unique<DeviceBuffer>(std::max<size_t>(o->size() * 4, 4)));
        ok = ok && (o->empty() || dev.back()->upload(o->data(), o->size() * 4));
        p.out.push_back(o->empty() ? nullptr : dev.back()->get());
    }
    if (!ok) {
        *error = "device allocation or copy failed";
        return false;
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto enqueue = [&](cuda::CUstream s) {
        if (call(b, p, v, livebound::cuda_device(0, s)) == LB_OK) return true;
        *error = lb_last_error();
        return false;
    };
    ok = enqueue(stream) && cuda::driver()->cuStreamSynchronize(stream) == 0;
    auto outs = out.all();
    for (size_t i = 0; ok && i < outs.size(); i++) {
        ok = outs[i]->empty() || dev[i]->download(outs[i]->data(), outs[i]->size() * 4);
    }
    if (ok) {
        res->mismatch = check(b, want, out, v == LB_BOUNDED);
        livebound::tools::GraphTiming graph;
        ok = livebound::tools::time_graph_replay(enqueue, stream, 20, 50, &graph, error) &&
             livebound::tools::time_eager(enqueue, stream, 20, 20, &res->eager_us, error);
        res->time_us = graph.median_us_per_call;
    }
    cuda::driver()->cuStreamDestroy(stream);
    return ok;
}

void dsa_demo(const Batch &b, const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    livebound::reference::DsaMetadataInputs in;
    in.seq_lens = b.seq_lens;
    in.req_pool_indices = b.rpi;
    in.req_to_token = b.req_to_token.data();
    in.pool_rows = b.pool_rows;
    in.ctx = kWidth;
    in.row_stride = kWidth;
    in.width = kWidth;
    in.topk = kTopk;
    in.real_page_size = kRps;
    in.next_n = b.next_n;
    const auto want = livebound::reference::dsa_metadata(in);
    int64_t live = 0;
    for (int64_t r = 0; r < b.rows(); r++) live += want.live_tokens[r] + want.live_pages[r];
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        auto rs = livebound::demo::cpu_and_cuda_rows(
            ctx, b.kernel, [&] { return run_cpu(b, want, v); },
            [&](Row *r, std::string *error) { return run_cuda(b, want, v, r, error); }, note);
        for (auto &r : rs) {
            r.full_width = b.rows() * (kWidth + Batch::real_cols());
            r.written = v == LB_BOUNDED ? live : r.full_width;
            rows->push_back(r);
        }
    }
}

void k2_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    dsa_demo(make_batch("K2", "dsa decode bs=64 rps=64", 64, 0, 2028), ctx, rows, note);
}
void k3_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    dsa_demo(make_batch("K3", "dsa verify bs=16 n=4", 16, 4, 2029), ctx, rows, note);
}

// `livebound picture k2|k3`: the page_table_1 columns a CPU run of each form wrote, per row.
bool dsa_picture(const Batch &b, const std::string &what, livebound::picture::Picture *p, std::string *error) {
    p->kernel = b.kernel;
    p->title = what + ": page_table_1 after a CPU call";
    p->rows_are = b.next_n ? "rows: the 64 expanded rows (16 requests x next_n 4, kv lengths 512-4096 + 1..4)"
                           : "rows: the 64 requests (kv lengths 512-4096)";
    p->cols_are = "columns: page_table_1 columns 0-16383 (the graph's width; a pixel shades by the share written)";
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        Outputs out(b);
        Pointers ptr{const_cast<int64_t *>(b.seq_lens.data()), const_cast<int64_t *>(b.rpi.data()),
                     const_cast<int32_t *>(b.req_to_token.data()), {}};
        for (auto *o : out.all()) ptr.out.push_back(o->data());
        if (call(b, ptr, v, livebound::cpu()) != LB_OK) {
            *error = lb_last_error();
            return false;
        }
        p->panels.push_back(livebound::picture::written_panel(v == LB_BOUNDED ? "bounded" : "full width", out.pt1,
                                                              b.rows(), kWidth, kWidth, kPoison));
    }
    return true;
}

bool k2_picture(livebound::picture::Picture *p, std::string *error) {
    return dsa_picture(make_batch("K2", "dsa decode bs=64 rps=64", 64, 0, 2028),
                       "fused_dsa_decode_metadata, DSA decode bs 64", p, error);
}
bool k3_picture(livebound::picture::Picture *p, std::string *error) {
    return dsa_picture(make_batch("K3", "dsa verify bs=16 n=4", 16, 4, 2029),
                       "fused_dsa_target_verify_metadata, bs 16, next_n 4", p, error);
}

const bool registered_k2 = livebound::demo::register_demo("K2", k2_demo);
const bool registered_k3 = livebound::demo::register_demo("K3", k3_demo);
const bool registered_k2_picture = livebound::picture::register_picture("K2", k2_picture);
const bool registered_k3_picture = livebound::picture::register_picture("K3", k3_picture);

}  // namespace
