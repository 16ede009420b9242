// Test cases and checks of K2 fused_dsa_decode_metadata and K3
// fused_dsa_target_verify_metadata, shared by the CPU, error and CUDA suites.
//
// Data as SGLang's test_dsa_metadata.py (spec §4.2): req_to_token[r, c] = r * (max_len + 17) + c,
// req_pool_indices = 2 * arange(bs) (decode) / arange(bs) + 1 (verify); outputs poisoned
// (SGLang allocates them with torch.empty). Every output gets guard storage: 1-D outputs three
// entries past what is written, tables one row more, three columns more and a padded row
// stride; the checks read every storage element.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "reference/dsa_metadata_reference.h"

namespace livebound::dsa_testing {

constexpr int32_t kPoison = -0x5a5a5a5b;

// One host buffer (int32 or int64 elements) with its tensor view.
struct Buf {
    bool present = false;
    lb_dtype dtype = LB_INT32;
    int ndim = 1;
    int64_t shape[2] = {0, 0};
    int64_t stride0 = 1;  // row stride (2-D) or element stride (1-D)
    int64_t stride1 = 1;  // column stride (2-D; 1 but in a transposed view, whose stride0 is 1)
    std::vector<int32_t> v32;
    std::vector<int64_t> v64;

    static Buf make_1d(lb_dtype dtype, int64_t n, int64_t storage, int64_t fill) {
        Buf b;
        b.present = true;
        b.dtype = dtype;
        b.ndim = 1;
        b.shape[0] = n;
        b.resize(std::max<int64_t>(storage, 1), fill);
        return b;
    }
    static Buf make_2d(int64_t rows, int64_t cols, int64_t row_stride, int64_t storage_rows, int64_t fill) {
        Buf b;
        b.present = true;
        b.ndim = 2;
        b.shape[0] = rows;
        b.shape[1] = cols;
        b.stride0 = row_stride;
        b.resize(std::max<int64_t>(storage_rows * row_stride, 1), fill);
        return b;
    }
    // A [rows, cols] view of column-major storage (torch's .t() of a [cols, ld] tensor).
    static Buf make_2d_transposed(int64_t rows, int64_t cols, int64_t ld, int64_t storage_cols, int64_t fill) {
        Buf b = make_2d(rows, cols, 1, 1, fill);
        b.stride1 = ld;
        b.resize(std::max<int64_t>(storage_cols * ld, 1), fill);
        return b;
    }
    void resize(int64_t n, int64_t fill) {
        if (dtype == LB_INT64) v64.assign(n, fill);
        else v32.assign(n, static_cast<int32_t>(fill));
    }
    int64_t elements() const { return dtype == LB_INT64 ? static_cast<int64_t>(v64.size()) : static_cast<int64_t>(v32.size()); }
    size_t bytes() const { return static_cast<size_t>(elements()) * (dtype == LB_INT64 ? 8 : 4); }
    void *data() { return dtype == LB_INT64 ? static_cast<void *>(v64.data()) : static_cast<void *>(v32.data()); }
    int64_t load(int64_t e) const { return dtype == LB_INT64 ? v64[e] : v32[e]; }
    void store(int64_t e, int64_t v) {
        if (dtype == LB_INT64) v64[e] = v;
        else v32[e] = static_cast<int32_t>(v);
    }
    void poison() {
        for (int64_t e = 0; e < elements(); ++e) store(e, kPoison);
    }
    lb_tensor tensor(void *ptr) const {
        if (!present) return lb_tensor{};
        lb_tensor t{};
        t.data = ptr;
        t.dtype = dtype;
        t.ndim = ndim;
        t.shape[0] = shape[0];
        t.strides[0] = stride0;
        if (ndim == 2) {
            t.shape[1] = shape[1];
            t.strides[1] = stride1;
        }
        return t;
    }
};

// One K2 (next_n == 0) or K3 (next_n >= 1) call.
struct DsaCase {
    std::string name;
    int32_t next_n = 0;              // 0: K2 decode; >= 1: K3 target verify
    std::vector<int64_t> seq_lens;   // [bs]
    int64_t width = 0;               // max_len / max_seqlen_k
    int32_t topk = 64;
    int32_t rps = 1;                 // real_page_size
    int32_t kpool = 1;
    bool page_table_1 = true;        // absent only with rps > 1
    bool alias_real = false;         // rps == 1: pass real_page_table = page_table_1
    bool ctx_lens = false;           // K3: paged_mqa_ctx_lens_2d
    bool ctx_lens_transposed = false;  // ... as a transposed view (strides {1, bs + 2})
    int64_t extra_ctx = 0;           // req_to_token columns past the width
    int64_t extra_columns = 3, row_padding = 2, extra_rows = 1;  // table guards
    std::vector<int64_t> rpi;        // empty: SGLang's 2*arange(bs) / arange(bs)+1
    uint32_t seed = 0;
};

// gtest prints a case by its name (a failure message carries the full description).
inline void PrintTo(const DsaCase &c, std::ostream *os) { *os << c.name; }

inline std::string dtype_tag(lb_dtype d) { return d == LB_INT32 ? "i32" : "i64"; }
inline std::string variant_tag(lb_variant v) { return v == LB_BOUNDED ? "bounded" : "full_width"; }

struct DsaProblem {
    DsaCase c;
    lb_dtype dtype = LB_INT64;
    int64_t bs = 0, rows = 0, pool_rows = 0, ctx = 0, real_columns = 0;
    Buf seq_lens, req_pool_indices, req_to_token;
    Buf cache_seqlens, cu_seqlens_k, seqlens_expanded, dsa_cache_seqlens, dsa_cu_seqlens_k, ctx_lens_2d, page_table_1,
        real_page_table;

    std::vector<Buf *> inputs() { return {&seq_lens, &req_pool_indices, &req_to_token}; }
    std::vector<Buf *> outputs() {
        return {&cache_seqlens, &cu_seqlens_k, &seqlens_expanded, &dsa_cache_seqlens, &dsa_cu_seqlens_k,
                &ctx_lens_2d, &page_table_1, &real_page_table};
    }
    void poison_outputs() {
        for (Buf *b : outputs()) {
            if (b->present) b->poison();
        }
    }
    void set_seq_lens(const std::vector<int64_t> &v) {
        c.seq_lens = v;
        for (int64_t b = 0; b < bs; ++b) seq_lens.store(b, v[b]);
    }
    bool verify() const { return c.next_n > 0; }

    std::string describe(lb_variant variant, const std::string &device) const {
        std::ostringstream s;
        s << "case " << c.name << " (" << (verify() ? "K3" : "K2") << " bs=" << bs << " width=" << c.width
          << " topk=" << c.topk << " rps=" << c.rps << " kpool=" << c.kpool;
        if (verify()) s << " next_n=" << c.next_n << " ctx_lens=" << c.ctx_lens << (c.ctx_lens_transposed ? " (transposed)" : "");
        s << " page_table_1=" << c.page_table_1 << " alias_real=" << c.alias_real << " seed=" << c.seed << ") "
          << dtype_tag(dtype) << " " << variant_tag(variant) << " on " << device << "; seq_lens[0..8) =";
        for (int64_t b = 0; b < std::min<int64_t>(bs, 8); ++b) s << " " << c.seq_lens[b];
        return s.str();
    }

    reference::DsaMetadataInputs reference_inputs() const {
        reference::DsaMetadataInputs in;
        in.seq_lens = c.seq_lens;
        for (int64_t b = 0; b < bs; ++b) in.req_pool_indices.push_back(req_pool_indices.load(b));
        in.req_to_token = req_to_token.v32.data();
        in.pool_rows = pool_rows;
        in.ctx = ctx;
        in.row_stride = ctx;
        in.width = c.width;
        in.topk = c.topk;
        in.real_page_size = c.rps;
        in.index_kpool = c.kpool;
        in.next_n = c.next_n;
        return in;
    }

    // Argument blocks; `ptr` maps a host buffer to the pointer the call gets (host or device).
    using PtrFn = std::function<void *(Buf &)>;
    lb_dsa_decode_metadata_args k2_args(lb_variant variant, const PtrFn &ptr) {
        lb_dsa_decode_metadata_args a{};
        a.seq_lens = seq_lens.tensor(ptr(seq_lens));
        a.req_pool_indices = req_pool_indices.tensor(ptr(req_pool_indices));
        a.req_to_token = req_to_token.tensor(ptr(req_to_token));
        a.cache_seqlens = cache_seqlens.tensor(ptr(cache_seqlens));
        a.cu_seqlens_k = cu_seqlens_k.tensor(ptr(cu_seqlens_k));
        a.dsa_cache_seqlens = dsa_cache_seqlens.tensor(ptr(dsa_cache_seqlens));
        a.dsa_cu_seqlens_k = dsa_cu_seqlens_k.tensor(ptr(dsa_cu_seqlens_k));
        if (page_table_1.present) a.page_table_1 = page_table_1.tensor(ptr(page_table_1));
        if (real_page_table.present) a.real_page_table = real_page_table.tensor(ptr(real_page_table));
        if (c.alias_real) a.real_page_table = a.page_table_1;
        a.max_len = c.width;
        a.dsa_index_topk = c.topk;
        a.real_page_size = c.rps;
        a.index_kpool = c.kpool;
        a.variant = variant;
        return a;
    }
    lb_dsa_target_verify_metadata_args k3_args(lb_variant variant, const PtrFn &ptr) {
        lb_dsa_target_verify_metadata_args a{};
        a.seq_lens = seq_lens.tensor(ptr(seq_lens));
        a.req_pool_indices = req_pool_indices.tensor(ptr(req_pool_indices));
        a.req_to_token = req_to_token.tensor(ptr(req_to_token));
        a.cache_seqlens = cache_seqlens.tensor(ptr(cache_seqlens));
        a.cu_seqlens_k = cu_seqlens_k.tensor(ptr(cu_seqlens_k));
        a.seqlens_expanded = seqlens_expanded.tensor(ptr(seqlens_expanded));
        a.dsa_cache_seqlens = dsa_cache_seqlens.tensor(ptr(dsa_cache_seqlens));
        a.dsa_cu_seqlens_k = dsa_cu_seqlens_k.tensor(ptr(dsa_cu_seqlens_k));
        if (ctx_lens_2d.present) a.paged_mqa_ctx_lens_2d = ctx_lens_2d.tensor(ptr(ctx_lens_2d));
        if (page_table_1.present) a.page_table_1 = page_table_1.tensor(ptr(page_table_1));
        if (real_page_table.present) a.real_page_table = real_page_table.tensor(ptr(real_page_table));
        if (c.alias_real) a.real_page_table = a.page_table_1;
        a.max_seqlen_k = c.width;
        a.dsa_index_topk = c.topk;
        a.real_page_size = c.rps;
        a.next_n = c.next_n;
        a.index_kpool = c.kpool;
        a.variant = variant;
        return a;
    }
    // Runs the case's kernel (K2 or K3) on `device` with pointers from `ptr`.
    lb_status call(lb_variant variant, const PtrFn &ptr, lb_device device) {
        if (verify()) {
            const lb_dsa_target_verify_metadata_args a = k3_args(variant, ptr);
            return lb_fused_dsa_target_verify_metadata(&a, device);
        }
        const lb_dsa_decode_metadata_args a = k2_args(variant, ptr);
        return lb_fused_dsa_decode_metadata(&a, device);
    }
};

inline void *host_ptr(Buf &b) { return b.present ? b.data() : nullptr; }

inline DsaProblem make_problem(const DsaCase &c, lb_dtype dtype) {
    DsaProblem p;
    p.c = c;
    p.dtype = dtype;
    p.bs = static_cast<int64_t>(c.seq_lens.size());
    const int64_t n = c.next_n > 0 ? c.next_n : 1;
    p.rows = p.bs * n;
    std::vector<int64_t> rpi = c.rpi;
    if (rpi.empty()) {
        for (int64_t b = 0; b < p.bs; ++b) rpi.push_back(c.next_n > 0 ? b + 1 : 2 * b);
    }
    p.pool_rows = 1;
    for (int64_t r : rpi) p.pool_rows = std::max(p.pool_rows, r + 1);
    p.ctx = c.width + c.extra_ctx;
    p.real_columns = (c.width + c.rps - 1) / c.rps;

    p.seq_lens = Buf::make_1d(dtype, p.bs, p.bs, 0);
    p.set_seq_lens(c.seq_lens);
    p.req_pool_indices = Buf::make_1d(dtype, p.bs, p.bs, 0);
    for (int64_t b = 0; b < p.bs; ++b) p.req_pool_indices.store(b, rpi[b]);
    p.req_to_token = Buf::make_2d(p.pool_rows, p.ctx, p.ctx, p.pool_rows, 0);
    for (int64_t r = 0; r < p.pool_rows; ++r) {
        for (int64_t col = 0; col < p.ctx; ++col) p.req_to_token.v32[r * p.ctx + col] = static_cast<int32_t>(r * (c.width + 17) + col);
    }

    p.cache_seqlens = Buf::make_1d(LB_INT32, p.bs, p.bs + 3, kPoison);
    p.cu_seqlens_k = Buf::make_1d(LB_INT32, p.bs + 1, p.bs + 4, kPoison);
    p.dsa_cache_seqlens = Buf::make_1d(LB_INT32, p.rows, p.rows + 3, kPoison);
    p.dsa_cu_seqlens_k = Buf::make_1d(LB_INT32, p.rows + 1, p.rows + 4, kPoison);
    if (c.next_n > 0) {
        p.seqlens_expanded = Buf::make_1d(LB_INT32, p.rows, p.rows + 3, kPoison);
        if (c.ctx_lens) {
            p.ctx_lens_2d = c.ctx_lens_transposed ? Buf::make_2d_transposed(p.bs, c.next_n, p.bs + 2, c.next_n + 1, kPoison)
                                                  : Buf::make_2d(p.bs, c.next_n, c.next_n + 2, p.bs + 1, kPoison);
        }
    }
    const int64_t table_rows = p.rows + c.extra_rows;
    if (c.page_table_1) {
        const int64_t cols = c.width + c.extra_columns;
        p.page_table_1 = Buf::make_2d(p.rows, cols, cols + c.row_padding, table_rows, kPoison);
    }
    if (c.rps > 1) {
        const int64_t cols = p.real_columns + c.extra_columns;
        p.real_page_table = Buf::make_2d(p.rows, cols, cols + c.row_padding, table_rows, kPoison);
    }
    return p;
}

// ---------------------------------------------------------------------------------------
// Checks

class MismatchLog {
public:
    explicit MismatchLog(std::string what) : what_(std::move(what)) {}
    void add(const std::string &where, const std::string &expected, int64_t got) {
        if (count_ < 10) {
            lines_ << "\n  " << where << ": expected " << expected << ", got " << got
                   << (got == kPoison ? " (the poison)" : "");
        }
        ++count_;
    }
    ::testing::AssertionResult result() const {
        if (count_ == 0) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << what_ << ": " << count_ << " wrong element(s)" << lines_.str()
                                             << (count_ > 10 ? "\n  ..." : "");
    }

private:
    std::string what_;
    std::ostringstream lines_;
    int64_t count_ = 0;
};

inline const std::string kPoisonText = std::to_string(kPoison) + " (the poison, untouched)";

// A 1-D output: view entries [0, want.size()) equal `want` (contiguous storage), the rest poisoned.
inline void check_1d(MismatchLog &log, const Buf &b, const char *name, const std::vector<int32_t> &want) {
    if (!b.present) return;
    for (int64_t e = 0; e < b.elements(); ++e) {
        const int64_t got = b.load(e);
        if (e < static_cast<int64_t>(want.size())) {
            if (got != want[e]) log.add(std::string(name) + "[" + std::to_string(e) + "]", std::to_string(want[e]), got);
        } else if (got != kPoison) {
            log.add(std::string(name) + " storage element " + std::to_string(e) + " (past the written entries)",
                    kPoisonText, got);
        }
    }
}

// A table: every storage element. Bounded: columns < live[row] exact, every other element
// poisoned (livebound writes only the live prefix: stricter than spec §4.5 rule 1, which allows
// the rest of a partially live 128-column block). Full width: columns < width_cols exact (the
// gather of every column), the rest poisoned.
inline void check_table(MismatchLog &log, const Buf &t, const char *name, int64_t rows, int64_t width_cols,
                        const std::vector<int64_t> &live, const std::vector<std::vector<int32_t>> &want, bool bounded) {
    if (!t.present) return;
    for (int64_t e = 0; e < t.elements(); ++e) {
        const bool transposed = t.stride1 != 1;
        const int64_t r = transposed ? e % t.stride1 : e / t.stride0, k = transposed ? e / t.stride1 : e % t.stride0;
        const int64_t got = t.load(e);
        const bool in_view = r < rows && k < width_cols;
        const int64_t limit = in_view ? (bounded ? live[r] : width_cols) : 0;
        const std::string where = std::string(name) + "[" + std::to_string(r) + ", " + std::to_string(k) + "]";
        if (k < limit) {
            if (got != want[r][k]) log.add(where + " (live prefix " + std::to_string(in_view ? live[r] : 0) + ")", std::to_string(want[r][k]), got);
        } else if (got != kPoison) {
            log.add(where + (in_view ? " (past the live prefix " + std::to_string(live[r]) + ": must not be written)"
                                     : " (outside the rows x width written)"),
                    kPoisonText, got);
        }
    }
}

inline ::testing::AssertionResult check_outputs(const DsaProblem &p, const reference::DsaMetadataExpected &want,
                                                lb_variant variant, const std::string &context) {
    MismatchLog log(context);
    check_1d(log, p.cache_seqlens, "cache_seqlens", want.cache_seqlens);
    check_1d(log, p.cu_seqlens_k, "cu_seqlens_k", want.cu_seqlens_k);
    check_1d(log, p.dsa_cache_seqlens, "dsa_cache_seqlens", want.dsa_cache_seqlens);
    check_1d(log, p.dsa_cu_seqlens_k, "dsa_cu_seqlens_k", want.dsa_cu_seqlens_k);
    if (p.verify()) check_1d(log, p.seqlens_expanded, "seqlens_expanded", want.seqlens_expanded);
    if (p.ctx_lens_2d.present) {
        std::vector<int64_t> live(p.bs, p.c.next_n);
        check_table(log, p.ctx_lens_2d, "paged_mqa_ctx_lens_2d", p.bs, p.c.next_n, live, want.ctx_lens_2d, true);
    }
    const bool bounded = variant == LB_BOUNDED;
    check_table(log, p.page_table_1, "page_table_1", p.rows, p.c.width, want.live_tokens, want.page_table_1, bounded);
    check_table(log, p.real_page_table, "real_page_table", p.rows, p.real_columns, want.live_pages, want.real_page_table,
                bounded);
    return log.result();
}

// Every output storage element still holds the poison (a rejected call).
inline ::testing::AssertionResult outputs_untouched(DsaProblem &p, const std::string &context) {
    MismatchLog log(context + "\noutputs after a rejected call");
    const char *names[] = {"cache_seqlens", "cu_seqlens_k", "seqlens_expanded", "dsa_cache_seqlens",
                           "dsa_cu_seqlens_k", "paged_mqa_ctx_lens_2d", "page_table_1", "real_page_table"};
    int i = 0;
    for (Buf *b : p.outputs()) {
        const char *name = names[i++];
        if (!b->present) continue;
        for (int64_t e = 0; e < b->elements(); ++e) {
            if (b->load(e) != kPoison) log.add(std::string(name) + " storage element " + std::to_string(e), kPoisonText, b->load(e));
        }
    }
    return log.result();
}

// ---------------------------------------------------------------------------------------
// The cases (spec §4.2, plus index_kpool, page_table_1 absent, the rps == 1 alias)

// Lengths in [1, hi] (fixed seed), with the first request at `first` when >= 0.
inline std::vector<int64_t> random_lengths(int64_t bs, int64_t lo, int64_t hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> len(lo, hi);
    std::vector<int64_t> v(bs);
    for (auto &x : v) x = len(rng);
    return v;
}

inline std::vector<DsaCase> decode_cases() {
    std::vector<DsaCase> out;
    for (int64_t bs : {1, 7, 65, 513}) {
        for (int32_t rps : {1, 64}) {
            DsaCase c;
            c.name = "decode_bs" + std::to_string(bs) + "_rps" + std::to_string(rps);
            c.seed = static_cast<uint32_t>(1000 + bs * 3 + rps);
            // Lengths across the width, some past it (clamped to max_len), a 0 and a 1.
            c.seq_lens = random_lengths(bs, 1, 769 + 40, c.seed);
            if (bs > 2) {
                c.seq_lens[1] = 0;
                c.seq_lens[2] = 1;
            }
            c.width = 769;
            c.topk = 64;
            c.rps = rps;
            out.push_back(c);
        }
    }
    // page_table_1 absent (only the compact table), ctx wider than max_len.
    DsaCase absent;
    absent.name = "decode_bs65_rps64_no_page_table_1";
    absent.seed = 77;
    absent.seq_lens = random_lengths(65, 0, 800, absent.seed);
    absent.width = 769;
    absent.rps = 64;
    absent.page_table_1 = false;
    absent.extra_ctx = 31;
    out.push_back(absent);
    // rps == 1, real_page_table passed as page_table_1 itself.
    DsaCase alias;
    alias.name = "decode_bs7_rps1_real_is_page_table_1";
    alias.seed = 78;
    alias.seq_lens = random_lengths(7, 0, 800, alias.seed);
    alias.width = 769;
    alias.rps = 1;
    alias.alias_real = true;
    out.push_back(alias);
    // index_kpool P = 64 (the later rule), lengths around multiples of 64 and the top-k.
    for (int32_t rps : {1, 64}) {
        DsaCase k;
        k.name = "decode_kpool64_rps" + std::to_string(rps);
        k.seq_lens = {0, 1, 63, 64, 65, 127, 128, 129, 200, 255, 256, 257, 300, 511, 700, 769, 1000};
        k.width = 769;
        k.topk = 256;
        k.kpool = 64;
        k.rps = rps;
        k.seed = 79;
        out.push_back(k);
    }
    // Real page size 16 (another power of two), a shuffled pool.
    DsaCase rps16;
    rps16.name = "decode_bs9_rps16_shuffled_pool";
    rps16.seq_lens = {5, 16, 17, 0, 300, 257, 31, 32, 33};
    rps16.rpi = {8, 3, 0, 11, 1, 4, 7, 2, 5};
    rps16.width = 300;
    rps16.rps = 16;
    rps16.topk = 20;
    rps16.seed = 80;
    out.push_back(rps16);
    return out;
}

inline std::vector<DsaCase> verify_cases() {
    std::vector<DsaCase> out;
    for (int64_t bs : {5, 63, 128}) {
        for (auto [rps, fill_ctx] : {std::pair<int32_t, bool>{1, false}, {64, true}}) {
            DsaCase c;
            c.name = "verify_bs" + std::to_string(bs) + "_rps" + std::to_string(rps) + (fill_ctx ? "_ctx" : "");
            c.next_n = 4;
            c.seed = static_cast<uint32_t>(2000 + bs * 3 + rps);
            c.seq_lens = random_lengths(bs, 1, 257 + 10, c.seed);
            if (bs > 2) {
                c.seq_lens[1] = 0;
                c.seq_lens[2] = 254;  // s + next_n = 258: one past the width
            }
            c.width = 257;
            c.topk = 64;
            c.rps = rps;
            c.ctx_lens = fill_ctx;
            out.push_back(c);
        }
    }
    DsaCase absent;
    absent.name = "verify_bs5_rps64_no_page_table_1_ctx";
    absent.next_n = 3;
    absent.seed = 81;
    absent.seq_lens = random_lengths(5, 0, 300, absent.seed);
    absent.width = 257;
    absent.rps = 64;
    absent.page_table_1 = false;
    absent.ctx_lens = true;
    out.push_back(absent);
    DsaCase alias;
    alias.name = "verify_bs5_rps1_real_is_page_table_1";
    alias.next_n = 2;
    alias.seed = 82;
    alias.seq_lens = random_lengths(5, 0, 300, alias.seed);
    alias.width = 257;
    alias.alias_real = true;
    out.push_back(alias);
    for (int32_t rps : {1, 64}) {
        DsaCase k;
        k.name = "verify_kpool64_rps" + std::to_string(rps);
        k.next_n = 4;
        k.seq_lens = {0, 60, 61, 63, 64, 124, 126, 127, 200, 250, 253};
        k.width = 257;
        k.topk = 128;
        k.kpool = 64;
        k.rps = rps;
        k.ctx_lens = rps == 64;
        k.seed = 83;
        out.push_back(k);
    }
    DsaCase n1;
    n1.name = "verify_next_n1_rps16";
    n1.next_n = 1;
    n1.seq_lens = {3, 0, 100, 256, 257};
    n1.width = 257;
    n1.rps = 16;
    n1.ctx_lens = true;
    n1.seed = 84;
    out.push_back(n1);
    DsaCase t = n1;  // paged_mqa_ctx_lens_2d as torch's transposed view
    t.name = "verify_next_n3_rps16_ctx_transposed";
    t.next_n = 3;
    t.ctx_lens_transposed = true;
    out.push_back(t);
    return out;
}

// The empty batch (K2 and K3): only cu_seqlens_k[0] and dsa_cu_seqlens_k[0] are written.
inline std::vector<DsaCase> empty_cases() {
    DsaCase d;
    d.name = "decode_empty_rps64";
    d.width = 769;
    d.rps = 64;
    DsaCase v = d;
    v.name = "verify_empty_rps64_ctx";
    v.next_n = 4;
    v.ctx_lens = true;
    return {d, v};
}

// The large shape: max_len = 1,000,003, seq [1,000,000, 999,983], topk 4096, rps 64
// (decode; verify with next_n 2). Minimal pool rows (rows 0 and 2 / 1 and 2).
inline std::vector<DsaCase> large_shape_cases() {
    DsaCase d;
    d.name = "decode_large_shape_1M";
    d.seq_lens = {1000000, 999983};
    d.width = 1000003;
    d.topk = 4096;
    d.rps = 64;
    d.extra_columns = 1;
    d.row_padding = 0;
    DsaCase v = d;
    v.name = "verify_large_shape_1M_next_n2";
    v.next_n = 2;
    v.ctx_lens = true;
    return {d, v};
}

// The large batch: bs = 16384, seq = (i % 257) + 1, width 1 (rps 1). The prefix sums run over
// 16384 (K2) / 32768 (K3, next_n 2) entries.
inline std::vector<DsaCase> large_batch_cases() {
    DsaCase d;
    d.name = "decode_large_batch_16384";
    for (int64_t i = 0; i < 16384; ++i) d.seq_lens.push_back((i % 257) + 1);
    d.width = 1;
    d.topk = 64;
    d.rps = 1;
    DsaCase v = d;
    v.name = "verify_large_batch_16384_next_n2";
    v.next_n = 2;
    v.ctx_lens = true;
    return {d, v};
}

inline std::vector<DsaCase> all_cases() {
    std::vector<DsaCase> all;
    for (auto &list : {decode_cases(), verify_cases(), empty_cases(), large_batch_cases()}) {
        all.insert(all.end(), list.begin(), list.end());
    }
    return all;
}

inline std::string param_name(const DsaCase &c, lb_dtype dtype, lb_variant variant) {
    return c.name + "_" + dtype_tag(dtype) + "_" + variant_tag(variant);
}

}  // namespace livebound::dsa_testing
