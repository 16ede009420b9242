// K5 (_get_k_and_s_triton) test cases and the helpers the CPU, error and CUDA tests share:
// the case list, the host buffers of one problem (inputs, poisoned outputs with padding and
// guards), the lb_dsa_kv_gather_args that point at them (host memory or device copies), and
// the checks against the reference.
//
// Checking rules (spec §4.5 rule 2, a compute kernel): every output byte is poisoned before
// the call; rows [0, seq_len_sum) of k_out and s_out are compared in full, byte for byte;
// everything else (rows past seq_len_sum, padding between rows, a guard past the end) must
// still hold the poison. The full-width twin must give identical bytes everywhere.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "livebound/livebound.h"
#include "reference/dsa_kv_gather_reference.h"

namespace livebound::testing::k5 {

constexpr uint8_t kPoisonByte = 0xA5;
constexpr int64_t kGuardBytes = 64;  // past the end of every output's view
constexpr int32_t kHeadDim = 128;  // SGLang's index_head_dim, the default of every case

inline const char *dtype_name(lb_dtype dtype) {
    switch (dtype) {
    case LB_INT32: return "int32";
    case LB_INT64: return "int64";
    case LB_UINT8: return "uint8";
    default: return "none";
    }
}
inline const char *variant_tag(lb_variant v) { return v == LB_BOUNDED ? "bounded" : "full_width"; }

// One K5 configuration. The name is a valid gtest name fragment.
struct KvGatherCase {
    std::string name;
    std::vector<int64_t> seq_lens;    // explicit lengths (B = size)
    int32_t page_size = 64;
    int64_t max_seq_len = -1;         // -1: max(seq_lens) (0 for B = 0)
    int64_t extra_pages = 5;          // num_pages = pages needed + this
    bool shuffled_pages = true;       // page ids a random permutation (else 0, 1, 2, ... in order)
    int64_t extra_page_columns = 2;   // max_pages = max_b cdiv(seq_lens[b], ps) + this
    int64_t page_indices_row_padding = 0;
    int64_t seq_lens_stride = 1;
    int64_t buf_row_padding = 0;      // bytes, a multiple of 4
    int64_t k_out_extra_rows = 3;
    int64_t k_out_row_padding = 0;    // bytes, a multiple of 4
    int64_t s_out_row_padding = 0;    // bytes, a multiple of 4
    int32_t head_dim = kHeadDim;      // index_head_dim D: key bytes per token (64, 128, 256 built)
    uint32_t seed = 0;
};

inline std::ostream &operator<<(std::ostream &os, const KvGatherCase &c) {
    return os << c.name << " (seed " << c.seed << ")";
}

inline std::vector<int64_t> random_lengths(uint32_t seed, int64_t bs, int64_t lo, int64_t hi) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> len(lo, hi);
    std::vector<int64_t> out;
    for (int64_t b = 0; b < bs; ++b) out.push_back(len(rng));
    return out;
}

inline std::vector<KvGatherCase> kv_gather_cases() {
    std::vector<KvGatherCase> cases;
    auto add = [&](KvGatherCase c) {
        c.seed = 5000 + static_cast<uint32_t>(cases.size());
        cases.push_back(std::move(c));
    };
    {
        // A DSA prefill batch, scaled down: 8 ragged requests, one long.
        KvGatherCase c;
        c.name = "prefill_B8_ragged_ps64";
        c.seq_lens = {1500, 37, 640, 0, 129, 64, 2048, 300};
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "zeros_and_page_edges_ps64";
        c.seq_lens = {0, 1, 63, 64, 65, 0, 127, 128, 129, 0};
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "single_token";
        c.seq_lens = {1};
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "all_empty_B4";  // seq_len_sum = 0: nothing written
        c.seq_lens = {0, 0, 0, 0};
        c.max_seq_len = 64;
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "empty_batch";  // B = 0
        c.max_seq_len = 0;
        add(c);
    }
    {
        // The grid is far wider than any request (a CUDA-graph-style static max_seq_len).
        KvGatherCase c;
        c.name = "wide_grid_max8192";
        c.seq_lens = {300, 5, 0, 190};
        c.max_seq_len = 8192;
        add(c);
    }
    for (int32_t ps : {1, 3, 16, 128}) {
        KvGatherCase c;
        c.name = "page_size_" + std::to_string(ps);
        c.page_size = ps;
        c.seq_lens = {0, 7, ps + 1, 3 * ps - 1, 200};
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "in_order_pages";
        c.seq_lens = {100, 200, 50};
        c.shuffled_pages = false;
        add(c);
    }
    {
        // Every tensor strided / padded: page_indices row padding, a strided seq_lens,
        // padded buf pages and padded output rows, extra output rows.
        KvGatherCase c;
        c.name = "strided_everything";
        c.seq_lens = {70, 0, 129, 3};
        c.page_indices_row_padding = 5;
        c.seq_lens_stride = 3;
        c.buf_row_padding = 36;
        c.k_out_row_padding = 12;
        c.s_out_row_padding = 8;
        c.k_out_extra_rows = 9;
        add(c);
    }
    {
        // Padded rows that stay 16-byte multiples (the CUDA row grid serves it; the
        // padding of strided_everything sends that case to the scatter form).
        KvGatherCase c;
        c.name = "strided_aligned16";
        c.seq_lens = {65, 0, 300, 1, 64};
        c.page_indices_row_padding = 3;
        c.seq_lens_stride = 2;
        c.buf_row_padding = 48;
        c.k_out_row_padding = 16;
        c.s_out_row_padding = 4;
        c.k_out_extra_rows = 5;
        add(c);
    }
    {
        // B past one 32-entry scan block (the blocked prefix sum of the CUDA variants).
        KvGatherCase c;
        c.name = "batch_100";
        c.seq_lens = random_lengths(77, 100, 0, 90);
        c.max_seq_len = 128;
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "batch_257_ps16";
        c.page_size = 16;
        c.seq_lens = random_lengths(78, 257, 0, 40);
        add(c);
    }
    {
        KvGatherCase c;
        c.name = "one_long_many_short";
        c.seq_lens = random_lengths(79, 40, 0, 9);
        c.seq_lens[17] = 5000;
        add(c);
    }
    // Other index head dims (DSA indexers with D = 64 or 256): 16-byte rows (the CUDA row
    // grid, 4 or 16 threads a row) and padded ones (the scatter form).
    for (int32_t d : {64, 256}) {
        KvGatherCase c;
        c.name = "head_dim_" + std::to_string(d) + "_ragged";
        c.head_dim = d;
        c.seq_lens = {130, 0, 64, 1, 700};
        add(c);
        c.name = "head_dim_" + std::to_string(d) + "_strided";
        c.seq_lens = {70, 0, 129, 3, 65};
        c.page_indices_row_padding = 2;
        c.buf_row_padding = 36;
        c.k_out_row_padding = 12;
        c.s_out_row_padding = 8;
        add(c);
    }
    return cases;
}

inline std::vector<KvGatherCase> kv_gather_cases_named(const std::vector<std::string> &names) {
    std::vector<KvGatherCase> out;
    for (const auto &c : kv_gather_cases()) {
        if (std::find(names.begin(), names.end(), c.name) != names.end()) out.push_back(c);
    }
    return out;
}

// A byte buffer with 4-byte-aligned storage (uint32 words).
struct Bytes {
    std::vector<uint32_t> words;
    int64_t size = 0;
    void resize(int64_t bytes, uint8_t fill) {
        size = bytes;
        words.assign(static_cast<size_t>((bytes + 3) / 4), 0);
        std::memset(words.data(), fill, words.size() * 4);
    }
    uint8_t *data() { return reinterpret_cast<uint8_t *>(words.data()); }
    const uint8_t *data() const { return reinterpret_cast<const uint8_t *>(words.data()); }
    size_t storage_bytes() const { return words.size() * 4; }
};

// An int32/int64 tensor's storage (int64 words; int32 views use the first half).
struct IntTensor {
    lb_dtype dtype = LB_INT64;
    std::vector<int64_t> words;
    void resize(int64_t elements) { words.assign(static_cast<size_t>(elements) + 4, 0); }
    void store(int64_t e, int64_t v) {
        if (dtype == LB_INT64) {
            words[e] = v;
        } else {
            reinterpret_cast<int32_t *>(words.data())[e] = static_cast<int32_t>(v);
        }
    }
    int64_t load(int64_t e) const {
        return dtype == LB_INT64 ? words[e] : reinterpret_cast<const int32_t *>(words.data())[e];
    }
    void *data() { return words.data(); }
    size_t storage_bytes() const { return words.size() * 8; }
};

// The host buffers of one K5 call.
struct KvGatherProblem {
    KvGatherCase spec;
    int64_t bs = 0, num_pages = 0, max_pages = 0, max_seq_len = 0, seq_len_sum = 0;
    int64_t page_bytes = 0, buf_row_stride = 0, pi_row_stride = 0;
    int64_t k_rows = 0, k_row_stride = 0, s_rows = 0, s_row_stride = 0;
    std::vector<int64_t> lengths;
    Bytes buf, k_out, s_out;
    IntTensor page_indices, seq_lens;

    std::string describe(lb_variant variant, const std::string &where = "cpu") const {
        std::ostringstream os;
        os << "case " << spec.name << " seed " << spec.seed << " on " << where << ", " << variant_tag(variant)
           << ", seq_lens " << dtype_name(seq_lens.dtype) << ", page_indices " << dtype_name(page_indices.dtype)
           << ", B " << bs << ", page_size " << spec.page_size << ", index_head_dim " << spec.head_dim
           << ", max_seq_len " << max_seq_len
           << ", seq_len_sum " << seq_len_sum << ", num_pages " << num_pages << ", lengths [";
        for (size_t i = 0; i < lengths.size() && i < 12; ++i) os << (i ? ", " : "") << lengths[i];
        if (lengths.size() > 12) os << ", ...";
        return os.str() + "]";
    }

    void set_seq_lens(const std::vector<int64_t> &values) {
        lengths = values;
        seq_len_sum = 0;
        for (int64_t b = 0; b < bs; ++b) {
            seq_lens.store(b * spec.seq_lens_stride, values[b]);
            seq_len_sum += values[b];
        }
    }

    void poison_outputs() {
        std::memset(k_out.data(), kPoisonByte, k_out.storage_bytes());
        std::memset(s_out.data(), kPoisonByte, s_out.storage_bytes());
    }

    reference::KvGatherInputs reference_inputs() const {
        reference::KvGatherInputs in;
        in.buf = buf.data();
        in.num_pages = num_pages;
        in.buf_row_stride = buf_row_stride;
        in.seq_lens = lengths;
        for (int64_t b = 0; b < bs; ++b) {
            std::vector<int64_t> row;
            for (int64_t k = 0; k < max_pages; ++k) row.push_back(page_indices.load(b * pi_row_stride + k));
            in.page_indices.push_back(row);
        }
        in.page_size = spec.page_size;
        in.head_dim = spec.head_dim;
        return in;
    }

    // The argument block over host storage, or over device copies (`ptr` maps each host
    // storage pointer to the pointer to use).
    lb_dsa_kv_gather_args args(lb_variant variant, const std::function<void *(void *)> &ptr = nullptr) {
        auto p = [&](void *host) { return ptr ? ptr(host) : host; };
        lb_dsa_kv_gather_args a{};
        auto t2 = [](void *data, lb_dtype dt, int64_t rows, int64_t cols, int64_t rs) {
            lb_tensor t{};
            t.data = data;
            t.dtype = dt;
            t.ndim = 2;
            t.shape[0] = rows;
            t.shape[1] = cols;
            t.strides[0] = rs;
            t.strides[1] = 1;
            return t;
        };
        a.buf = t2(p(buf.data()), LB_UINT8, num_pages, page_bytes, buf_row_stride);
        a.page_indices = t2(p(page_indices.data()), page_indices.dtype, bs, max_pages, pi_row_stride);
        a.seq_lens.data = p(seq_lens.data());
        a.seq_lens.dtype = seq_lens.dtype;
        a.seq_lens.ndim = 1;
        a.seq_lens.shape[0] = bs;
        a.seq_lens.strides[0] = spec.seq_lens_stride;
        a.k_out = t2(p(k_out.data()), LB_UINT8, k_rows, spec.head_dim, k_row_stride);
        a.s_out = t2(p(s_out.data()), LB_UINT8, s_rows, 4, s_row_stride);
        a.seq_len_sum = seq_len_sum;
        a.max_seq_len = max_seq_len;
        a.page_size = spec.page_size;
        a.index_head_dim = spec.head_dim;
        a.variant = variant;
        return a;
    }
};

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Builds a problem: random buf bytes, page ids (a shuffled or in-order assignment of
// distinct pages to every request's page columns; unused columns hold -1), poisoned outputs.
inline KvGatherProblem make_problem(const KvGatherCase &spec, lb_dtype seq_dtype, lb_dtype index_dtype) {
    KvGatherProblem p;
    p.spec = spec;
    p.bs = static_cast<int64_t>(spec.seq_lens.size());
    std::mt19937 rng(spec.seed);
    int64_t pages_needed = 0, widest = 0, longest = 0;
    for (int64_t len : spec.seq_lens) {
        pages_needed += cdiv(len, spec.page_size);
        widest = std::max(widest, cdiv(len, spec.page_size));
        longest = std::max(longest, len);
    }
    p.max_seq_len = spec.max_seq_len >= 0 ? spec.max_seq_len : longest;
    p.num_pages = pages_needed + spec.extra_pages;
    p.max_pages = widest + spec.extra_page_columns;
    p.page_bytes = int64_t{spec.page_size} * (spec.head_dim + 4);
    p.buf_row_stride = p.page_bytes + spec.buf_row_padding;
    p.buf.resize(p.num_pages * p.buf_row_stride, 0);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int64_t i = 0; i < p.buf.size; ++i) p.buf.data()[i] = static_cast<uint8_t>(byte(rng));

    std::vector<int64_t> ids(static_cast<size_t>(p.num_pages));
    std::iota(ids.begin(), ids.end(), 0);
    if (spec.shuffled_pages) std::shuffle(ids.begin(), ids.end(), rng);
    p.page_indices.dtype = index_dtype;
    p.pi_row_stride = p.max_pages + spec.page_indices_row_padding;
    p.page_indices.resize(std::max<int64_t>(p.bs * p.pi_row_stride, 1));
    for (int64_t e = 0; e < p.bs * p.pi_row_stride; ++e) p.page_indices.store(e, -1);
    size_t next = 0;
    for (int64_t b = 0; b < p.bs; ++b) {
        for (int64_t k = 0; k < cdiv(spec.seq_lens[b], spec.page_size); ++k) {
            p.page_indices.store(b * p.pi_row_stride + k, ids[next++]);
        }
    }
    p.seq_lens.dtype = seq_dtype;
    p.seq_lens.resize(std::max<int64_t>(p.bs * spec.seq_lens_stride, 1));
    // Elements a strided seq_lens skips hold a valid-looking length, so that a runtime that
    // ignores the stride gives wrong rows rather than a crash.
    for (int64_t e = 0; e < p.bs * spec.seq_lens_stride; ++e) p.seq_lens.store(e, 2);
    p.set_seq_lens(spec.seq_lens);

    p.k_rows = p.seq_len_sum + spec.k_out_extra_rows;
    p.k_row_stride = spec.head_dim + spec.k_out_row_padding;
    p.k_out.resize(p.k_rows * p.k_row_stride + kGuardBytes, kPoisonByte);
    p.s_rows = p.seq_len_sum + spec.k_out_extra_rows;
    p.s_row_stride = 4 + spec.s_out_row_padding;
    p.s_out.resize(p.s_rows * p.s_row_stride + kGuardBytes, kPoisonByte);
    return p;
}

// Collects mismatches, reports the first few and the count.
class MismatchLog {
public:
    explicit MismatchLog(std::string context) : context_(std::move(context)) {}
    void add(const std::string &where, int want, int got) {
        if (count_++ < 8) lines_ += "\n  " + where + ": want " + std::to_string(want) + ", got " + std::to_string(got);
    }
    ::testing::AssertionResult result() const {
        if (count_ == 0) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << context_ << ": " << count_ << " mismatching bytes" << lines_;
    }

private:
    std::string context_;
    std::string lines_;
    int64_t count_ = 0;
};

// Rows [0, seq_len_sum) equal the reference; every other byte of the storage is poison.
inline ::testing::AssertionResult check_outputs(const KvGatherProblem &p, const reference::KvGatherExpected &want,
                                                const std::string &context) {
    if (want.seq_len_sum != p.seq_len_sum) {
        return ::testing::AssertionFailure() << context << ": test bug, reference sum " << want.seq_len_sum;
    }
    MismatchLog log(context);
    auto check = [&](const Bytes &out, const char *name, int64_t row_stride, int64_t width,
                     const std::vector<uint8_t> &rows) {
        for (int64_t e = 0; e < static_cast<int64_t>(out.storage_bytes()); ++e) {
            const int64_t row = e / row_stride, col = e % row_stride;
            const uint8_t got = out.data()[e];
            if (row < p.seq_len_sum && col < width) {
                const uint8_t expect = rows[row * width + col];
                if (got != expect) {
                    log.add(std::string(name) + "[" + std::to_string(row) + ", " + std::to_string(col) + "]", expect, got);
                }
            } else if (got != kPoisonByte) {
                log.add(std::string(name) + " storage byte " + std::to_string(e) + " (row " + std::to_string(row) +
                            ", col " + std::to_string(col) + ": must not be written)",
                        kPoisonByte, got);
            }
        }
    };
    check(p.k_out, "k_out", p.k_row_stride, p.spec.head_dim, want.k_rows);
    check(p.s_out, "s_out", p.s_row_stride, 4, want.s_rows);
    return log.result();
}

// The two problems' output storages are byte-identical.
inline ::testing::AssertionResult outputs_identical(const KvGatherProblem &a, const KvGatherProblem &b,
                                                    const std::string &context) {
    MismatchLog log(context + " (LB_FULL_WIDTH vs LB_BOUNDED)");
    for (size_t e = 0; e < a.k_out.storage_bytes(); ++e) {
        if (a.k_out.data()[e] != b.k_out.data()[e]) log.add("k_out byte " + std::to_string(e), b.k_out.data()[e], a.k_out.data()[e]);
    }
    for (size_t e = 0; e < a.s_out.storage_bytes(); ++e) {
        if (a.s_out.data()[e] != b.s_out.data()[e]) log.add("s_out byte " + std::to_string(e), b.s_out.data()[e], a.s_out.data()[e]);
    }
    return log.result();
}

// Every output byte (guards included) still holds the poison.
inline ::testing::AssertionResult outputs_untouched(const KvGatherProblem &p, const std::string &context) {
    MismatchLog log(context + " outputs after a rejected call");
    for (size_t e = 0; e < p.k_out.storage_bytes(); ++e) {
        if (p.k_out.data()[e] != kPoisonByte) log.add("k_out byte " + std::to_string(e), kPoisonByte, p.k_out.data()[e]);
    }
    for (size_t e = 0; e < p.s_out.storage_bytes(); ++e) {
        if (p.s_out.data()[e] != kPoisonByte) log.add("s_out byte " + std::to_string(e), kPoisonByte, p.s_out.data()[e]);
    }
    return log.result();
}

// Whether `name` occurs in `message` as a whole identifier.
inline bool names_argument(const std::string &message, const std::string &name) {
    auto is_ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    for (size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
        const bool starts = at == 0 || !is_ident(message[at - 1]);
        const size_t end = at + name.size();
        const bool ends = end == message.size() || !is_ident(message[end]);
        if (starts && ends) return true;
    }
    return false;
}

inline std::string param_name(const KvGatherCase &c, lb_dtype seq, lb_dtype idx, lb_variant v) {
    return c.name + "_s" + (seq == LB_INT32 ? "32" : "64") + "_i" + (idx == LB_INT32 ? "32" : "64") + "_" + variant_tag(v);
}

}  // namespace livebound::testing::k5
