// K6 (transform_index_page_table_prefill) test cases and the helpers the CPU, error and
// CUDA tests share: the case list, the host buffers of one problem (inputs, poisoned
// result with padding and a guard), the lb_transform_index_args that point at them (host
// memory or device copies), and the check of the result against the reference.
//
// Checking rules (spec §4.5 rule 2, compute kernel): the result is poisoned before the
// call; every element of result[0:output_num_tokens, 0:topk] is compared exactly with the
// reference (rows < N: the gather; rows >= N: -1); everything livebound promises not to
// write (extra columns, extra rows, row padding, a guard past the end) must still hold
// the poison. LB_FULL_WIDTH must write the same bits as LB_BOUNDED.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "reference/transform_index_reference.h"

namespace livebound::testing::k6 {

// Written into every result element before a call; no K6 output can equal it (results are
// -1 or page-table slots in [0, 2^24)).
constexpr int32_t kPoison = static_cast<int32_t>(0xDEADBEEFu);
// Extra storage elements past the end of every tensor's view; they must stay poisoned.
constexpr int64_t kGuard = 8;
// Page-table slots are U[0, kSlots).
constexpr int32_t kSlots = 1 << 24;

inline const char *variant_tag(lb_variant v) { return v == LB_BOUNDED ? "bounded" : "full_width"; }

// One K6 configuration. The name is a valid gtest name fragment and says what the case is.
struct TransformIndexCase {
    std::string name;
    std::vector<int64_t> extend_lens;  // query tokens per request (bs = size)
    int64_t topk = 64;
    int64_t max_seqlen_k = 300;
    bool expanded = false;
    int64_t extra_topk_rows = 0;     // T = N + this
    int64_t extra_output_rows = 3;   // output_num_tokens = T + this
    int64_t max_extend_slack = 0;    // max_extend_len = max(extend_lens) + this (a graph bucket)
    double empty_fraction = 0.1;     // share of topk entries that are negative
    int64_t result_extra_rows = 0;   // result tensor rows = output_num_tokens + this (never written)
    int64_t result_extra_cols = 0;   // result tensor cols = topk + this (never written)
    int64_t result_row_padding = 0;  // result row stride = cols + this
    int64_t topk_row_padding = 0;    // topk_indices row stride = topk + this
    int64_t page_table_row_padding = 0;
    int64_t page_table_extra_rows = 0;
    int64_t cu_stride = 1;
    uint32_t seed = 0;  // assigned by transform_index_cases() from the case's position

    int64_t bs() const { return static_cast<int64_t>(extend_lens.size()); }
    int64_t num_tokens() const {
        int64_t n = 0;
        for (int64_t e : extend_lens) n += e;
        return n;
    }
    int64_t max_extend() const {
        int64_t m = 0;
        for (int64_t e : extend_lens) m = std::max(m, e);
        return m;
    }
};

inline std::ostream &operator<<(std::ostream &os, const TransformIndexCase &c) {
    return os << c.name << " (seed " << c.seed << ")";
}

inline std::string lens_text(const std::vector<int64_t> &lens) {
    std::string s = "[";
    for (size_t i = 0; i < lens.size(); ++i) s += (i ? "," : "") + std::to_string(lens[i]);
    return s + "]";
}

// The case list: hand-written awkward cases, then a seeded random sweep over bs 1..17.
inline std::vector<TransformIndexCase> transform_index_cases() {
    std::vector<TransformIndexCase> cases;
    auto add = [&](TransformIndexCase c) { cases.push_back(std::move(c)); };
    {
        TransformIndexCase c;
        c.name = "single_request_len1";
        c.extend_lens = {1};
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "zeros_and_ones";
        c.extend_lens = {0, 1, 0, 1, 1, 0};
        add(c);
    }
    {
        // Extend lengths around the CUDA q tile (4) and the CPU q tile (16).
        TransformIndexCase c;
        c.name = "tile_edges";
        c.extend_lens = {3, 4, 5, 15, 16, 17, 33};
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "tile_edges_expanded";
        c.extend_lens = {3, 4, 5, 15, 16, 17, 33};
        c.expanded = true;
        add(c);
    }
    {
        // One long request among short ones (a ragged prefill batch), topk 2048.
        TransformIndexCase c;
        c.name = "one_long_topk2048";
        c.extend_lens = {2, 150, 0, 7, 1};
        c.topk = 2048;
        c.max_seqlen_k = 4096;
        c.extra_output_rows = 5;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "one_long_topk2048_expanded";
        c.extend_lens = {5, 0, 120, 1};
        c.topk = 2048;
        c.max_seqlen_k = 3000;
        c.expanded = true;
        c.extra_topk_rows = 4;
        add(c);
    }
    {
        // max_extend_len far above every length (a CUDA graph's bucket).
        TransformIndexCase c;
        c.name = "max_extend_len_slack";
        c.extend_lens = {6, 2, 9};
        c.max_extend_slack = 57;
        add(c);
    }
    {
        // topk not a multiple of the vector (8) or of the CUDA column block (256).
        TransformIndexCase c;
        c.name = "topk_300_odd";
        c.extend_lens = {4, 11, 1};
        c.topk = 300;
        c.max_seqlen_k = 513;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "topk_7";
        c.extend_lens = {3, 2};
        c.topk = 7;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "topk_1";
        c.extend_lens = {2, 5};
        c.topk = 1;
        c.expanded = true;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "all_empty_indices";
        c.extend_lens = {3, 5};
        c.empty_fraction = 1.0;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "no_empty_indices_max_seqlen_k_1";
        c.extend_lens = {3, 5};
        c.empty_fraction = 0.0;
        c.max_seqlen_k = 1;
        add(c);
    }
    {
        // N == T == output_num_tokens: no row to fill.
        TransformIndexCase c;
        c.name = "no_fill_rows";
        c.extend_lens = {4, 9, 2};
        c.extra_output_rows = 0;
        add(c);
    }
    {
        // Many trailing rows to fill (T < output_num_tokens and N < T).
        TransformIndexCase c;
        c.name = "many_fill_rows";
        c.extend_lens = {2, 1};
        c.extra_topk_rows = 9;
        c.extra_output_rows = 300;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "strided_everything";
        c.extend_lens = {7, 0, 18, 3};
        c.topk = 96;
        c.result_extra_rows = 2;
        c.result_extra_cols = 5;
        c.result_row_padding = 3;
        c.topk_row_padding = 11;
        c.page_table_row_padding = 13;
        c.page_table_extra_rows = 2;
        c.cu_stride = 3;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "strided_everything_expanded";
        c.extend_lens = {7, 0, 18, 3};
        c.topk = 96;
        c.expanded = true;
        c.extra_topk_rows = 2;
        c.result_extra_cols = 5;
        c.result_row_padding = 3;
        c.topk_row_padding = 11;
        c.page_table_row_padding = 13;
        c.cu_stride = 2;
        add(c);
    }
    // ---- N == 0 ----
    {
        TransformIndexCase c;
        c.name = "empty_requests";
        c.extend_lens = {0, 0, 0};
        c.extra_topk_rows = 2;
        c.extra_output_rows = 4;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "empty_batch";
        c.extend_lens = {};
        c.extra_output_rows = 5;
        add(c);
    }
    {
        TransformIndexCase c;
        c.name = "empty_requests_no_rows";
        c.extend_lens = {0, 0};
        c.extra_output_rows = 0;
        add(c);
    }
    // ---- seeded random sweep: bs 1..17, lengths with zeros and ones, topk 64 / 2048 ----
    {
        std::mt19937 rng(0x6B6u);
        for (int k = 0; k < 24; ++k) {
            TransformIndexCase c;
            const int64_t bs = 1 + static_cast<int64_t>(rng() % 17);
            const int64_t cap = (k % 3 == 0) ? 40 : 12;
            for (int64_t i = 0; i < bs; ++i) {
                const uint32_t kind = rng() % 6;
                c.extend_lens.push_back(kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int64_t>(rng() % (cap + 1)));
            }
            if (k % 4 == 1) c.extend_lens[rng() % bs] = 60 + rng() % 40;  // one long request
            c.topk = (k % 6 == 5) ? 2048 : 64;
            c.max_seqlen_k = c.topk == 2048 ? 2500 + rng() % 2000 : 64 + rng() % 1000;
            c.expanded = (k % 2) == 1;
            c.extra_topk_rows = rng() % 4;
            c.extra_output_rows = 1 + rng() % 6;
            c.max_extend_slack = (k % 5 == 0) ? rng() % 9 : 0;
            c.empty_fraction = 0.05 + 0.1 * (rng() % 4);
            c.name = "random_" + std::to_string(k) + "_bs" + std::to_string(bs) + "_topk" + std::to_string(c.topk) +
                     (c.expanded ? "_expanded" : "");
            add(c);
        }
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        if (cases[i].seed == 0) cases[i].seed = 0x6B60u + 7919u * static_cast<uint32_t>(i);
    }
    return cases;
}

// The cases named in `names` (exact names; a name ending in '_' picks every case that
// starts with it, e.g. "random_1_").
inline std::vector<TransformIndexCase> transform_index_cases_named(const std::vector<std::string> &names) {
    std::vector<TransformIndexCase> picked;
    for (const TransformIndexCase &c : transform_index_cases()) {
        for (const std::string &n : names) {
            const bool prefix = !n.empty() && n.back() == '_' && c.name.compare(0, n.size(), n) == 0;
            if (c.name == n || prefix) {
                picked.push_back(c);
                break;
            }
        }
    }
    return picked;
}

// A row-major int32 table (or a strided 1-D vector: cols = 1, row stride = stride) in
// host storage, with a guard past the end of the view.
struct HostTable {
    int64_t rows = 0, cols = 0, row_stride = 0;
    std::vector<int32_t> storage;

    static HostTable make(int64_t rows, int64_t cols, int64_t row_stride, int32_t fill) {
        HostTable t;
        t.rows = rows;
        t.cols = cols;
        t.row_stride = row_stride;
        const int64_t span = (rows == 0 || cols == 0) ? 0 : (rows - 1) * row_stride + cols;
        t.storage.assign(static_cast<size_t>(span + kGuard), fill);
        return t;
    }
    int32_t &at(int64_t r, int64_t c) { return storage[static_cast<size_t>(r * row_stride + c)]; }
    int32_t at(int64_t r, int64_t c) const { return storage[static_cast<size_t>(r * row_stride + c)]; }
    size_t bytes() const { return storage.size() * sizeof(int32_t); }
    int32_t *data() { return storage.data(); }
    lb_tensor tensor_2d(void *data) const {
        return livebound::tensor_2d(data, LB_INT32, rows, cols, row_stride);
    }
    lb_tensor tensor_1d(void *data) const { return livebound::tensor_1d(data, LB_INT32, rows, row_stride); }
};

// The host buffers of one case.
struct TransformIndexProblem {
    TransformIndexCase spec;
    int64_t bs = 0, n = 0, num_rows = 0, output_num_tokens = 0, max_extend_len = 0;
    std::vector<int64_t> cu;  // [bs + 1] values
    HostTable page_table, topk_indices, cu_seqlens_q, result;

    std::vector<HostTable *> inputs() { return {&page_table, &topk_indices, &cu_seqlens_q}; }

    void poison_result() { std::fill(result.storage.begin(), result.storage.end(), kPoison); }

    // Sets cu_seqlens_q from new extend lengths (the tests of changed lengths).
    void set_extend_lens(const std::vector<int64_t> &lens) {
        spec.extend_lens = lens;
        cu.assign(1, 0);
        for (int64_t e : lens) cu.push_back(cu.back() + e);
        for (size_t i = 0; i < cu.size(); ++i) cu_seqlens_q.at(static_cast<int64_t>(i), 0) = static_cast<int32_t>(cu[i]);
    }

    // Tensors over `pointer(table)` (host storage by default, or device copies).
    lb_transform_index_args args(lb_variant variant,
                                 const std::function<void *(HostTable &)> &pointer = nullptr) {
        auto ptr = [&](HostTable &t) -> void * { return pointer ? pointer(t) : t.data(); };
        lb_transform_index_args a{};
        a.page_table = page_table.tensor_2d(ptr(page_table));
        a.topk_indices = topk_indices.tensor_2d(ptr(topk_indices));
        a.cu_seqlens_q = cu_seqlens_q.tensor_1d(ptr(cu_seqlens_q));
        a.result = result.tensor_2d(ptr(result));
        a.num_tokens = n;
        a.max_extend_len = max_extend_len;
        a.output_num_tokens = output_num_tokens;
        a.page_size = 1;
        a.page_table_is_expanded = spec.expanded ? 1 : 0;
        a.variant = variant;
        return a;
    }

    reference::TransformIndexInputs reference_inputs() const {
        reference::TransformIndexInputs in;
        in.page_table = page_table.storage.data();
        in.page_table_rows = page_table.rows;
        in.max_seqlen_k = page_table.cols;
        in.page_table_row_stride = page_table.row_stride;
        in.topk_indices = topk_indices.storage.data();
        in.num_rows = topk_indices.rows;
        in.topk = topk_indices.cols;
        in.topk_row_stride = topk_indices.row_stride;
        in.cu_seqlens_q = cu;
        in.page_table_is_expanded = spec.expanded;
        in.output_num_tokens = output_num_tokens;
        return in;
    }

    std::string describe(lb_variant variant, const std::string &device = "cpu") const {
        std::ostringstream os;
        os << "K6 case " << spec.name << " (seed " << spec.seed << ") on " << device << ", " << variant_tag(variant)
           << ": extend_lens " << lens_text(spec.extend_lens) << ", N " << n << ", T " << num_rows
           << ", output_num_tokens " << output_num_tokens << ", topk " << spec.topk << ", max_seqlen_k "
           << spec.max_seqlen_k << ", max_extend_len " << max_extend_len << (spec.expanded ? ", expanded" : "");
        return os.str();
    }
};

inline TransformIndexProblem make_problem(const TransformIndexCase &c) {
    TransformIndexProblem p;
    p.spec = c;
    std::mt19937 rng(c.seed);
    p.bs = c.bs();
    p.n = c.num_tokens();
    p.num_rows = p.n + c.extra_topk_rows;
    p.output_num_tokens = p.num_rows + c.extra_output_rows;
    p.max_extend_len = c.max_extend() + c.max_extend_slack;

    const int64_t pt_rows = (c.expanded ? p.num_rows : p.bs) + c.page_table_extra_rows;
    p.page_table = HostTable::make(pt_rows, c.max_seqlen_k, c.max_seqlen_k + c.page_table_row_padding, -7);
    std::uniform_int_distribution<int32_t> slot(0, kSlots - 1);
    for (int64_t r = 0; r < pt_rows; ++r) {
        for (int64_t k = 0; k < c.max_seqlen_k; ++k) p.page_table.at(r, k) = slot(rng);
    }

    p.topk_indices = HostTable::make(p.num_rows, c.topk, c.topk + c.topk_row_padding, 0);
    std::uniform_int_distribution<int32_t> position(0, static_cast<int32_t>(c.max_seqlen_k - 1));
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int64_t t = 0; t < p.num_rows; ++t) {
        for (int64_t j = 0; j < c.topk; ++j) {
            // Negative entries are mostly SGLang's -1, sometimes another negative value.
            const bool empty = unit(rng) < c.empty_fraction;
            p.topk_indices.at(t, j) = empty ? ((rng() % 5 == 0) ? -1000 : -1) : position(rng);
        }
    }
    // Rows >= N of topk_indices are never read: fill them with out-of-range garbage.
    for (int64_t t = p.n; t < p.num_rows; ++t) {
        for (int64_t j = 0; j < c.topk; ++j) p.topk_indices.at(t, j) = static_cast<int32_t>(c.max_seqlen_k + 12345);
    }

    p.cu_seqlens_q = HostTable::make(p.bs + 1, 1, c.cu_stride, -99);
    p.set_extend_lens(c.extend_lens);

    const int64_t result_cols = c.topk + c.result_extra_cols;
    p.result = HostTable::make(p.output_num_tokens + c.result_extra_rows, result_cols,
                               result_cols + c.result_row_padding, kPoison);
    return p;
}

// Exact check of everything: the written region against the reference, the rest poison.
inline ::testing::AssertionResult check_result(const TransformIndexProblem &p,
                                               const std::vector<std::vector<int32_t>> &expected,
                                               const std::string &context) {
    const int64_t topk = p.spec.topk;
    int failures = 0;
    std::ostringstream os;
    auto fail = [&](const std::string &what) {
        if (failures++ < 8) os << "\n  " << what;
    };
    for (int64_t s = 0; s < static_cast<int64_t>(p.result.storage.size()); ++s) {
        const int64_t r = s / p.result.row_stride, c = s % p.result.row_stride;
        const bool written = r < p.output_num_tokens && c < topk;
        const int32_t got = p.result.storage[static_cast<size_t>(s)];
        if (written) {
            const int32_t want = expected[static_cast<size_t>(r)][static_cast<size_t>(c)];
            if (got != want) {
                fail("result[" + std::to_string(r) + ", " + std::to_string(c) + "] = " + std::to_string(got) +
                     ", expected " + std::to_string(want) + (r >= p.n ? " (fill row >= N)" : ""));
            }
        } else if (got != kPoison) {
            fail("storage element " + std::to_string(s) + " (row " + std::to_string(r) + ", column " +
                 std::to_string(c) + ") is outside result[0:output_num_tokens, 0:topk] but was written: " +
                 std::to_string(got));
        }
    }
    if (failures == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << context << ": " << failures << " wrong element(s)" << os.str();
}

// The storage of `p.result` is entirely poison (nothing written).
inline ::testing::AssertionResult result_untouched(const TransformIndexProblem &p, const std::string &context) {
    for (size_t s = 0; s < p.result.storage.size(); ++s) {
        if (p.result.storage[s] != kPoison) {
            return ::testing::AssertionFailure() << context << ": result storage element " << s
                                                 << " was written (" << p.result.storage[s] << ")";
        }
    }
    return ::testing::AssertionSuccess();
}

inline std::string param_name(const TransformIndexCase &c, lb_variant v) { return c.name + "_" + variant_tag(v); }

}  // namespace livebound::testing::k6
