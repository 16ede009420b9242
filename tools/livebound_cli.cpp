// `livebound`: the main job, and a window onto what the compiler derived.
//
//   livebound demo [--json]
//   livebound explain [cpu|cuda] [bounded|full]
//
// Runs K1 (normal_decode_set_metadata) on an embedded decode batch (64 requests,
// kv lengths 1024-8192, a 131072-token page-table width, page sizes 1 and 64 with an
// SWA table), bounded and full-width, on the CPU and, when a device is present, on
// CUDA; checks every result against the plain C++ reference; prints how many
// page-table columns each form wrote against the full width, and the times.
//
// `explain` prints K1's page-table loop nest as Halide lowered it (from the statement
// files the build writes next to each variant), marking the loop bounds Halide derived
// from the live-length predicate.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "livebound/livebound.hpp"
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

struct Result {
    std::string batch, device, variant, check;
    int64_t columns_written = 0, full_width_columns = 0;
    double time_us = 0;        // CPU: median wall time; CUDA: median graph-replay time per call
    double eager_us = 0;       // CUDA only: eager back-to-back calls
};

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

Result run_cpu(const DecodeBatch &b, const livebound::reference::DecodeMetadataExpected &want, lb_variant variant) {
    Result res{b.name, "cpu", variant == LB_BOUNDED ? "bounded" : "full-width"};
    Outputs out(b);
    auto args = make_args(b, const_cast<int64_t *>(b.seq_lens.data()), const_cast<int64_t *>(b.req_pool_indices.data()),
                          const_cast<int32_t *>(b.req_to_token.data()), const_cast<int64_t *>(b.full_to_swa.data()),
                          out.cache_seqlens.data(), out.cu_seqlens_k.data(), out.page_table.data(),
                          out.swa_page_table.data(), variant);
    livebound::normal_decode_set_metadata(args, livebound::cpu());
    res.check = check(b, want, out, variant == LB_BOUNDED);
    std::vector<double> times;
    for (int i = 0; i < 15; i++) {
        auto t0 = std::chrono::steady_clock::now();
        livebound::normal_decode_set_metadata(args, livebound::cpu());
        times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    res.time_us = median_of(times);
    return res;
}

bool run_cuda(const DecodeBatch &b, const livebound::reference::DecodeMetadataExpected &want, lb_variant variant,
              Result *res, std::string *error) {
    namespace cuda = livebound::cuda;
    *res = Result{b.name, "cuda:0", variant == LB_BOUNDED ? "bounded" : "full-width"};
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
        res->check = check(b, want, out, variant == LB_BOUNDED);
        livebound::tools::GraphTiming graph;
        ok = livebound::tools::time_graph_replay(enqueue, stream, 20, 50, &graph, error) &&
             livebound::tools::time_eager(enqueue, stream, 20, 20, &res->eager_us, error);
        res->time_us = graph.median_us_per_call;
    }
    cuda::driver()->cuStreamDestroy(stream);
    return ok;
}

int demo(bool json) {
    std::vector<DecodeBatch> batches = {make_batch("decode bs=64 ps=1", 1, false, 2026),
                                        make_batch("decode bs=64 ps=64 swa", 64, true, 2027)};
    const bool cuda_present = lb_cuda_device_count() > 0;
    std::vector<Result> results;
    std::string cuda_note;
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
            std::vector<Result> rs = {run_cpu(b, want, v)};
            if (cuda_present) {
                Result r;
                if (run_cuda(b, want, v, &r, &cuda_note)) rs.push_back(r);
            }
            for (auto &r : rs) {
                r.full_width_columns = b.bs * b.max_seq_pages() * (b.swa ? 2 : 1);
                r.columns_written = v == LB_BOUNDED ? live_columns * (b.swa ? 2 : 1) : r.full_width_columns;
                results.push_back(r);
            }
        }
    }
    bool all_ok = true;
    for (auto &r : results) all_ok &= r.check.empty();
    if (json) {
        std::printf("{\n  \"kernel\": \"K1 normal_decode_set_metadata\",\n  \"cuda\": %s,\n  \"ok\": %s,\n  \"runs\": [\n",
                    cuda_present ? "true" : "false", all_ok ? "true" : "false");
        for (size_t i = 0; i < results.size(); i++) {
            const auto &r = results[i];
            std::printf("    {\"batch\": \"%s\", \"device\": \"%s\", \"variant\": \"%s\", \"matches_reference\": %s, "
                        "\"columns_written\": %lld, \"full_width_columns\": %lld, \"time_us\": %.2f%s}%s\n",
                        r.batch.c_str(), r.device.c_str(), r.variant.c_str(), r.check.empty() ? "true" : "false",
                        (long long)r.columns_written, (long long)r.full_width_columns, r.time_us,
                        r.device == "cpu" ? "" : (", \"eager_us\": " + std::to_string(r.eager_us)).c_str(),
                        i + 1 < results.size() ? "," : "");
        }
        std::printf("  ]\n}\n");
        return all_ok ? 0 : 1;
    }
    std::printf("livebound demo: K1 normal_decode_set_metadata on an embedded decode batch\n");
    std::printf("  64 requests, kv lengths uniform in [1024, 8192], page-table width 131072 tokens\n");
    std::printf("  bounded = loop bounds Halide derived from `column < live_pages(b)`; "
                "full-width = same algorithm, bound off\n");
    std::printf("  CUDA: %s\n\n", cuda_present ? "device 0 present (times: CUDA-graph replay, median per call)"
                                               : "no device: CPU only");
    std::printf("%-24s %-7s %-11s %-10s %22s %12s %12s\n", "batch", "device", "variant", "reference", "columns written",
                "time (us)", "eager (us)");
    for (const auto &r : results) {
        char cols[64];
        std::snprintf(cols, sizeof cols, "%lld / %lld", (long long)r.columns_written, (long long)r.full_width_columns);
        std::printf("%-24s %-7s %-11s %-10s %22s %12.2f %12s\n", r.batch.c_str(), r.device.c_str(), r.variant.c_str(),
                    r.check.empty() ? "match" : ("MISMATCH " + r.check).c_str(), cols, r.time_us,
                    r.device == "cpu" ? "-" : std::to_string(r.eager_us).substr(0, 6).c_str());
    }
    if (!cuda_note.empty()) std::printf("\nCUDA: %s\n", cuda_note.c_str());
    std::printf("\n%s\n", all_ok ? "all results match the reference; bounded runs left every dead column untouched"
                                 : "SOME RESULTS DIFFER FROM THE REFERENCE");
    return all_ok ? 0 : 1;
}

// Prints the lines of K1's page-table loop nest from the variant's lowered statement.
int explain(const std::string &target, const std::string &form) {
    const std::string variant = "lb_k1_" + target + "_" + form + "_noswa_s64_i64";
    const std::string path = std::string(LIVEBOUND_STMT_DIR) + "/" + variant +
                             (target == "cuda" ? ".conceptual.stmt" : ".stmt");
    FILE *f = std::fopen(path.c_str(), "r");
    if (!f) {
        std::fprintf(stderr, "livebound explain: cannot read %s (run from the build that made it)\n", path.c_str());
        return 1;
    }
    std::printf("K1 page-table loop nest of %s (%s)\n", variant.c_str(), path.c_str());
    std::printf("lines marked >> hold a loop bound Halide derived from `column < live_pages(b)`\n\n");
    // CPU: the parallel task body; CUDA: the kernel of the page table.
    const std::string start = target == "cuda" ? "gpu_block<CUDA> (page_table" : "par_for_page_table_s0_b_rebased (";
    char line[1 << 16];
    bool inside = false;
    int depth = 0, printed = 0;
    while (std::fgets(line, sizeof line, f) && printed < 200) {
        std::string text(line);
        if (!inside && text.find(start) != std::string::npos) inside = true;
        if (!inside) continue;
        if (text.find("load_typed_struct_member") != std::string::npos || text.find("closure_prototype") != std::string::npos) continue;
        for (char c : text) depth += (c == '{') - (c == '}');
        bool derived = text.find("new_max") != std::string::npos && text.find("seq_lens") != std::string::npos;
        std::printf("%s %s", derived ? ">>" : "  ", text.size() > 240 ? (text.substr(0, 237) + "...\n").c_str() : text.c_str());
        printed++;
        if (depth <= 0) break;
    }
    std::fclose(f);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    std::string cmd = argc > 1 ? argv[1] : "";
    bool json = false;
    for (int i = 2; i < argc; i++) json |= std::strcmp(argv[i], "--json") == 0;
    try {
        if (cmd == "demo") return demo(json);
        if (cmd == "explain") {
            std::string target = "cpu", form = "bounded";
            for (int i = 2; i < argc; i++) {
                std::string a = argv[i];
                if (a == "cpu" || a == "cuda") target = a;
                if (a == "bounded" || a == "full") form = a;
            }
            return explain(target, form);
        }
    } catch (const livebound::Error &e) {
        std::fprintf(stderr, "livebound: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: livebound demo [--json] | livebound explain [cpu|cuda] [bounded|full]\n");
    return 2;
}
