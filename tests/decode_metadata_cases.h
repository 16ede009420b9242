// K1 (normal_decode_set_metadata) test cases and the helpers the CPU and CUDA tests
// share: the case list of spec §4.1 plus awkward cases, the host buffers of one
// problem (inputs, poisoned outputs), the lb_decode_metadata_args that point at them
// (host memory or device copies), and the checks of the outputs against the reference.
//
// Checking rules (spec §4.5 rule 1): every output is poisoned before the call;
// cache_seqlens[0, bs) and cu_seqlens_k[0, bs] are compared in full; the live prefix of
// every page-table row is compared exactly; everything else must still hold the poison:
// LB_BOUNDED columns >= live_pages(b), columns >= max_seq_pages, rows >= bs, the trailing
// entries of cache_seqlens / cu_seqlens_k, padding between rows and a guard past the end.
// LB_FULL_WIDTH must in addition write every column below max_seq_pages, with SGLang's
// pre-#32109 values (the same gather for dead columns).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "livebound/livebound.h"
#include "reference/decode_metadata_reference.h"

namespace livebound::testing {

// Written into every output element before a call; no K1 output can equal it
// (page ids are < 10000, kv lengths are small).
constexpr int32_t kPoison = static_cast<int32_t>(0xDEADBEEFu);
// Extra storage elements past the end of every tensor's view; they must stay poisoned.
constexpr int64_t kGuardElements = 8;
// Slot values of req_to_token are U[0, kFullPoolSlots); full_to_swa has kFullPoolSlots entries.
constexpr int64_t kFullPoolSlots = 10000;
// Value of the seq_lens elements that a strided seq_lens view skips: a valid length, so
// a runtime that ignores the stride produces wrong numbers rather than a crash.
constexpr int64_t kSkippedSeqLenValue = 3;

inline const char *dtype_name(lb_dtype dtype) {
    switch (dtype) {
    case LB_INT32: return "int32";
    case LB_INT64: return "int64";
    default: return "none";
    }
}
inline const char *variant_name(lb_variant variant) {
    return variant == LB_BOUNDED ? "LB_BOUNDED" : "LB_FULL_WIDTH";
}
inline const char *variant_tag(lb_variant variant) { return variant == LB_BOUNDED ? "bounded" : "full_width"; }

// How req_pool_indices maps batch entries to request-pool rows.
enum class PoolLayout {
    kIdentity,            // pool_rows = bs, req_pool_indices = arange(bs) (SGLang's test)
    kShuffledLargerPool,  // pool_rows = bs + max(3, bs / 2), a non-identity choice of distinct rows
};

// How many token columns req_to_token has.
enum class ContextWidth {
    kTwiceMaxSeqLen,       // ctx = 2 * max_seq_len (SGLang's test)
    kMaxSeqPagesWide,      // ctx = max_seq_pages * page_size (a static-width pool)
    kMinimalForLivePages,  // ctx = (max_b live_pages_b - 1) * page_size + 1: the last live read is the last column
};

// One K1 configuration. The name is a valid gtest name fragment and says what the case is.
struct DecodeMetadataCase {
    std::string name;
    int64_t batch_size = 1;
    int64_t max_seq_len = 128;
    int32_t page_size = 1;
    bool with_swa = false;
    int32_t seq_len_delta = 0;
    uint32_t seed = 0;  // assigned by decode_metadata_cases() from the case's position
    // Explicit lengths; empty: seq_lens ~ U[max_seq_len / 2, max_seq_len].
    std::vector<int64_t> seq_lens;
    PoolLayout pool = PoolLayout::kIdentity;
    ContextWidth context = ContextWidth::kTwiceMaxSeqLen;
    // -1: cdiv(max(seq_lens) + delta, page_size) (0 when that is <= 0), as SGLang's test.
    int64_t max_seq_pages = -1;
    int64_t page_table_extra_columns = 10;  // width = max_seq_pages + this
    int64_t page_table_extra_rows = 2;      // rows = bs + this
    int64_t page_table_row_padding = 0;     // row stride = width + this
    int64_t seq_lens_stride = 1;            // elements between consecutive seq_lens entries
    // int64 seq_lens only: add this multiple of 2^32 to every length; K1 casts seq_lens to
    // int32 first, so the result must not change.
    int64_t seq_lens_high_words = 0;
};

inline std::ostream &operator<<(std::ostream &os, const DecodeMetadataCase &c) {
    return os << c.name << " (seed " << c.seed << ")";
}

// The case list: spec §4.1's cases, then awkward ones.
inline std::vector<DecodeMetadataCase> decode_metadata_cases() {
    std::vector<DecodeMetadataCase> cases;
    auto add = [&](DecodeMetadataCase c) { cases.push_back(std::move(c)); };
    auto spec_case = [&](int64_t b, int64_t len, int32_t ps, bool swa, int32_t delta, PoolLayout pool) {
        DecodeMetadataCase c;
        c.name = "B" + std::to_string(b) + "_len" + std::to_string(len) + "_ps" + std::to_string(ps) +
                 (swa ? "_swa" : "") + (delta != 0 ? "_delta" + std::to_string(delta) : "") +
                 (pool == PoolLayout::kShuffledLargerPool ? "_shuffled_pool" : "");
        c.batch_size = b;
        c.max_seq_len = len;
        c.page_size = ps;
        c.with_swa = swa;
        c.seq_len_delta = delta;
        c.pool = pool;
        return c;
    };
    const auto kId = PoolLayout::kIdentity;
    const auto kShuf = PoolLayout::kShuffledLargerPool;

    // ---- spec §4.1: (B, max_seq_len, ps, swa, delta) ----
    add(spec_case(2, 128, 1, false, 0, kId));
    add(spec_case(16, 256, 1, false, 0, kShuf));
    add(spec_case(64, 512, 1, false, 0, kId));
    add(spec_case(8, 200, 1, false, 5, kShuf));
    add(spec_case(4, 256, 16, false, 0, kId));
    add(spec_case(16, 512, 16, false, 0, kShuf));
    add(spec_case(4, 512, 64, false, 0, kId));
    add(spec_case(32, 1024, 64, false, 0, kShuf));
    add(spec_case(8, 512, 64, false, 3, kId));
    add(spec_case(8, 256, 16, true, 0, kShuf));
    add(spec_case(16, 512, 64, true, 0, kId));
    add(spec_case(8, 400, 64, true, 2, kShuf));
    add(spec_case(1, 128, 1, false, 0, kId));
    add(spec_case(1, 256, 64, false, 0, kShuf));
    // page sizes 1, 2, 4, ..., 128 at (4, 256)
    for (int32_t ps = 1; ps <= 128; ps *= 2) {
        DecodeMetadataCase c = spec_case(4, 256, ps, false, 0, ps % 4 == 0 ? kShuf : kId);
        c.name = "page_size_sweep_" + c.name;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(8, 512, 64, false, 0, kShuf);
        c.name = "varied_lengths_ps64";
        c.seq_lens = {10, 50, 100, 200, 300, 450, 500, 512};
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(2, 10, 64, false, 0, kId);
        c.name = "tiny_B2_len10_ps64";
        add(c);
    }
    // ---- SWA with page sizes the spec list does not pair with it ----
    add(spec_case(8, 256, 1, true, 0, kShuf));
    add(spec_case(4, 512, 128, true, 1, kId));

    // ---- awkward cases ----
    {
        DecodeMetadataCase c = spec_case(6, 64, 16, true, 0, kShuf);
        c.name = "seq_len_zero_ps16_swa";
        c.seq_lens = {0, 37, 0, 64, 1, 0};
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(3, 8, 1, false, 0, kId);
        c.name = "seq_len_zero_ps1";
        c.seq_lens = {0, 5, 0};
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 8, 1, false, 0, kShuf);
        c.name = "seq_len_one_ps1";
        c.seq_lens = {1, 1, 1, 1};
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(3, 8, 64, true, 0, kId);
        c.name = "seq_len_one_ps64_swa";
        c.seq_lens = {1, 1, 1};
        add(c);
    }
    {
        // Every length exceeds max_seq_pages * ps = 80 tokens: the live prefix is clamped.
        DecodeMetadataCase c = spec_case(8, 256, 16, true, 0, kShuf);
        c.name = "lengths_exceed_max_seq_pages_ps16_swa";
        c.max_seq_pages = 5;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 128, 1, false, 2, kId);
        c.name = "lengths_exceed_max_seq_pages_ps1";
        c.max_seq_pages = 17;
        add(c);
    }
    {
        // Clamped, and req_to_token only as wide as the clamped reads need (192 columns).
        DecodeMetadataCase c = spec_case(8, 512, 64, false, 0, kShuf);
        c.name = "lengths_exceed_max_seq_pages_narrow_context_ps64";
        c.max_seq_pages = 3;
        c.context = ContextWidth::kMaxSeqPagesWide;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 100, 16, true, 0, kShuf);
        c.name = "minimal_context_ps16_swa";
        c.context = ContextWidth::kMinimalForLivePages;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 100, 1, false, 1, kId);
        c.name = "minimal_context_ps1_delta1";
        c.context = ContextWidth::kMinimalForLivePages;
        add(c);
    }
    {
        // L = -100, -50, -1, 0, 1, 200: rows with L <= 0 get no column; cu goes negative.
        DecodeMetadataCase c = spec_case(6, 300, 16, true, -100, kShuf);
        c.name = "negative_delta_ps16_swa";
        c.seq_lens = {0, 50, 99, 100, 101, 300};
        add(c);
    }
    {
        // L = -7, 0, -10: max_seq_pages defaults to 0.
        DecodeMetadataCase c = spec_case(3, 10, 1, false, -10, kId);
        c.name = "negative_delta_nothing_live_ps1";
        c.seq_lens = {3, 10, 0};
        add(c);
    }
    {
        // Same, but with a 4-column grid that has no live column in any row.
        DecodeMetadataCase c = spec_case(3, 100, 64, true, -64, kShuf);
        c.name = "negative_delta_nothing_live_ps64_swa";
        c.seq_lens = {64, 10, 0};
        c.max_seq_pages = 4;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 128, 16, true, 0, kShuf);
        c.name = "max_seq_pages_zero_ps16_swa";
        c.max_seq_pages = 0;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 128, 1, false, 0, kId);
        c.name = "max_seq_pages_zero_ps1";
        c.max_seq_pages = 0;
        add(c);
    }
    {
        // Production shape: the static graph width (2048 columns) far past the live lengths.
        DecodeMetadataCase c = spec_case(8, 256, 1, false, 0, kShuf);
        c.name = "static_width_2048_ps1";
        c.max_seq_pages = 2048;
        c.context = ContextWidth::kMaxSeqPagesWide;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(8, 300, 64, true, 1, kId);
        c.name = "static_width_64_ps64_swa_delta1";
        c.max_seq_pages = 64;
        c.context = ContextWidth::kMaxSeqPagesWide;
        add(c);
    }
    {
        // The small-batch scan placement's last batch (schedules/decode_metadata/tuned/).
        DecodeMetadataCase c = spec_case(31, 128, 1, true, 1, kShuf);
        c.name = "batch_31_ps1_swa_delta1";
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(33, 128, 16, false, 0, kShuf);
        c.name = "batch_33_ps16";
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(257, 64, 1, true, 0, kShuf);
        c.name = "batch_257_ps1_swa";
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(2, 64, 1 << 20, true, 0, kId);
        c.name = "page_size_2pow20_swa";
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(8, 256, 16, true, 0, kShuf);
        c.name = "page_table_row_stride_plus37_ps16_swa";
        c.page_table_row_padding = 37;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(16, 256, 1, false, 2, kShuf);
        c.name = "seq_lens_stride2_ps1_delta2";
        c.seq_lens_stride = 2;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(8, 400, 64, true, 0, kId);
        c.name = "seq_lens_stride2_row_stride_plus37_ps64_swa";
        c.seq_lens_stride = 2;
        c.page_table_row_padding = 37;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(4, 256, 16, false, 0, kShuf);
        c.name = "page_table_no_extra_rows_or_columns_ps16";
        c.page_table_extra_columns = 0;
        c.page_table_extra_rows = 0;
        add(c);
    }
    {
        // int64 seq_lens of 2^32 + L: int32(seq_lens[b]) is L.
        DecodeMetadataCase c = spec_case(4, 128, 16, false, 0, kId);
        c.name = "int64_seq_lens_above_2pow32_cast_to_int32_ps16";
        c.seq_lens_high_words = 1;
        add(c);
    }
    {
        DecodeMetadataCase c = spec_case(0, 64, 16, true, 0, kShuf);
        c.name = "empty_batch_ps16_swa";
        c.max_seq_pages = 4;
        add(c);
    }

    for (size_t i = 0; i < cases.size(); ++i) cases[i].seed = 0x1B0Du + 7919u * static_cast<uint32_t>(i);
    return cases;
}

// The cases whose names contain any of `fragments` (exact case names work too).
inline std::vector<DecodeMetadataCase> decode_metadata_cases_named(const std::vector<std::string> &fragments) {
    std::vector<DecodeMetadataCase> picked;
    for (const DecodeMetadataCase &c : decode_metadata_cases()) {
        for (const std::string &f : fragments) {
            if (c.name == f) {
                picked.push_back(c);
                break;
            }
        }
    }
    return picked;
}

// A strided view of host storage, with room past the view that must stay untouched.
// Storage always holds 8 bytes per element, whatever the dtype: a runtime that misreads
// an int32 tensor as int64 (the error tests declare wrong dtypes) stays inside it.
struct HostTensor {
    bool present = false;
    lb_dtype dtype = LB_DTYPE_NONE;
    int32_t ndim = 0;
    int64_t shape[2] = {0, 0};
    int64_t strides[2] = {0, 0};
    int64_t storage_elements = 0;  // elements of `dtype` the storage holds (view span + guard)
    std::vector<int64_t> words;

    static HostTensor make(lb_dtype dtype, std::vector<int64_t> shape, std::vector<int64_t> strides) {
        HostTensor t;
        t.present = true;
        t.dtype = dtype;
        t.ndim = static_cast<int32_t>(shape.size());
        int64_t span = 1;  // 1 + the largest element offset of the view
        bool empty = false;
        for (int32_t d = 0; d < t.ndim; ++d) {
            t.shape[d] = shape[d];
            t.strides[d] = strides[d];
            if (shape[d] == 0) empty = true;
            span += (shape[d] - 1) * strides[d];
        }
        if (empty) span = 0;
        t.storage_elements = span + kGuardElements;
        t.words.assign(static_cast<size_t>(t.storage_elements), 0);
        return t;
    }
    static HostTensor contiguous_1d(lb_dtype dtype, int64_t n, int64_t stride = 1) {
        return make(dtype, {n}, {stride});
    }
    static HostTensor contiguous_2d(lb_dtype dtype, int64_t rows, int64_t cols, int64_t row_stride) {
        return make(dtype, {rows, cols}, {row_stride, 1});
    }

    size_t element_size() const { return dtype == LB_INT64 ? 8 : 4; }
    size_t bytes() const { return static_cast<size_t>(storage_elements) * element_size(); }
    void *data() { return present ? words.data() : nullptr; }
    const void *data() const { return present ? words.data() : nullptr; }

    int64_t offset(int64_t i, int64_t j = 0) const { return i * strides[0] + (ndim == 2 ? j * strides[1] : 0); }
    int64_t load(int64_t element) const {
        if (dtype == LB_INT64) return words[element];
        return reinterpret_cast<const int32_t *>(words.data())[element];
    }
    void store(int64_t element, int64_t value) {
        if (dtype == LB_INT64) {
            words[element] = value;
        } else {
            reinterpret_cast<int32_t *>(words.data())[element] = static_cast<int32_t>(value);
        }
    }
    void fill(int64_t value) {
        for (int64_t e = 0; e < storage_elements; ++e) store(e, value);
    }

    // The descriptor of this view at `base` (this storage, or a device copy of it).
    lb_tensor descriptor(void *base) const {
        lb_tensor t{};
        if (!present) return t;
        t.data = base;
        t.dtype = dtype;
        t.ndim = ndim;
        for (int32_t d = 0; d < ndim; ++d) {
            t.shape[d] = shape[d];
            t.strides[d] = strides[d];
        }
        return t;
    }
};

// `t` laid out again with every stride multiplied by `factor` (same view values); the
// storage elements between them hold `filler`.
inline HostTensor restrided(const HostTensor &t, int64_t factor, int64_t filler) {
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim), strides;
    for (int32_t d = 0; d < t.ndim; ++d) strides.push_back(t.strides[d] * factor);
    HostTensor out = HostTensor::make(t.dtype, shape, strides);
    out.fill(filler);
    const int64_t rows = t.shape[0], cols = t.ndim == 2 ? t.shape[1] : 1;
    for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) out.store(out.offset(i, j), t.load(t.offset(i, j)));
    }
    return out;
}

// One K1 problem: a case with concrete dtypes, its inputs, and its (poisonable) outputs.
struct DecodeMetadataProblem {
    DecodeMetadataCase spec;
    lb_dtype seq_lens_dtype = LB_INT64;
    lb_dtype index_dtype = LB_INT64;

    int64_t bs = 0;
    int64_t pool_rows = 0;
    int64_t ctx = 0;
    int64_t max_seq_pages = 0;
    std::vector<int64_t> seq_len_values;  // [bs] values as stored in seq_lens
    std::vector<int64_t> pool_row_of;     // [bs] req_pool_indices values
    // The input values, contiguous, whatever layout the tensors below give them:
    std::vector<int32_t> req_to_token_values;  // [pool_rows, ctx] row-major
    std::vector<int64_t> full_to_swa_values;   // [10000]; empty without SWA

    // The tensors (tests may lay one out again with restrided()):
    HostTensor seq_lens;          // [bs] seq_lens_dtype, stride spec.seq_lens_stride
    HostTensor req_pool_indices;  // [bs] index_dtype, contiguous
    HostTensor req_to_token;      // [pool_rows, ctx] int32, contiguous, U[0, 10000)
    HostTensor full_to_swa;       // [10000] int64, contiguous, (i + U[0, 100)) % 10000; absent without SWA
    HostTensor cache_seqlens;     // out, [bs + 2] int32: entries [bs, bs + 2) must stay poisoned
    HostTensor cu_seqlens_k;      // out, [bs + 3] int32: entries [bs + 1, bs + 3) must stay poisoned
    HostTensor page_table;        // out, [bs + extra_rows, max_seq_pages + extra_columns] int32,
                                  //      row stride = width + padding, column stride 1
    HostTensor swa_page_table;    // out, same layout as page_table; absent without SWA

    bool skip_page_table = false;

    std::string describe(lb_variant variant, const std::string &device = "cpu") const {
        std::ostringstream os;
        os << "case=" << spec.name << " seed=" << spec.seed << " seq_lens=" << dtype_name(seq_lens_dtype)
           << " req_pool_indices=" << dtype_name(index_dtype) << " variant=" << variant_name(variant)
           << " device=" << device << " bs=" << bs << " page_size=" << spec.page_size
           << " delta=" << spec.seq_len_delta << " max_seq_pages=" << max_seq_pages << " ctx=" << ctx
           << " pool_rows=" << pool_rows << (spec.with_swa ? " swa" : " no-swa")
           << (skip_page_table ? " skip_page_table" : "");
        return os.str();
    }

    // Every output element, the guards included, set to kPoison.
    void poison_outputs() {
        for (HostTensor *t : {&cache_seqlens, &cu_seqlens_k, &page_table, &swa_page_table}) {
            if (t->present) t->fill(kPoison);
        }
    }

    reference::DecodeMetadataInputs reference_inputs() const {
        reference::DecodeMetadataInputs in;
        in.seq_lens = seq_len_values;
        in.req_pool_indices = pool_row_of;
        in.req_to_token = req_to_token_values.data();
        in.pool_rows = pool_rows;
        in.ctx = ctx;
        in.req_to_token_row_stride = ctx;
        if (spec.with_swa) {
            in.full_to_swa = full_to_swa_values.data();
            in.full_slots = static_cast<int64_t>(full_to_swa_values.size());
        }
        in.max_seq_pages = max_seq_pages;
        in.seq_len_delta = spec.seq_len_delta;
        in.page_size = spec.page_size;
        return in;
    }

    // The call's arguments; `base_of` gives the data pointer of each tensor (the host
    // storage by default, or a device copy).
    lb_decode_metadata_args args(lb_variant variant,
                                 const std::function<void *(HostTensor &)> &base_of = {}) {
        auto view = [&](HostTensor &t) { return t.descriptor(base_of ? base_of(t) : t.data()); };
        lb_decode_metadata_args a{};
        a.seq_lens = view(seq_lens);
        a.req_pool_indices = view(req_pool_indices);
        a.req_to_token = view(req_to_token);
        a.full_to_swa = view(full_to_swa);
        a.cache_seqlens = view(cache_seqlens);
        a.cu_seqlens_k = view(cu_seqlens_k);
        a.page_table = view(page_table);
        a.swa_page_table = view(swa_page_table);
        a.max_seq_pages = max_seq_pages;
        a.seq_len_delta = spec.seq_len_delta;
        a.page_size = spec.page_size;
        a.skip_page_table = skip_page_table ? 1 : 0;
        a.variant = variant;
        return a;
    }

    // All tensors, for uploading to / downloading from a device.
    std::vector<HostTensor *> inputs() { return {&seq_lens, &req_pool_indices, &req_to_token, &full_to_swa}; }
    std::vector<HostTensor *> outputs() { return {&cache_seqlens, &cu_seqlens_k, &page_table, &swa_page_table}; }

    // Rewrites the seq_lens values (same dtype and stride), e.g. between graph replays.
    void set_seq_lens(const std::vector<int64_t> &values) {
        seq_len_values = values;
        for (int64_t b = 0; b < bs; ++b) seq_lens.store(seq_lens.offset(b), values[b]);
    }
};

inline int64_t cdiv_nonnegative(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Builds the inputs of `c` (from its seed: the same data for every dtype and variant)
// and poisoned outputs.
inline DecodeMetadataProblem make_problem(const DecodeMetadataCase &c, lb_dtype seq_lens_dtype, lb_dtype index_dtype) {
    DecodeMetadataProblem p;
    p.spec = c;
    p.seq_lens_dtype = seq_lens_dtype;
    p.index_dtype = index_dtype;
    p.bs = c.batch_size;
    std::mt19937 rng(c.seed);

    // Lengths before the int32 cast.
    std::vector<int64_t> lengths = c.seq_lens;
    if (lengths.empty()) {
        std::uniform_int_distribution<int64_t> length(c.max_seq_len / 2, c.max_seq_len);
        for (int64_t b = 0; b < p.bs; ++b) lengths.push_back(length(rng));
    }
    if (static_cast<int64_t>(lengths.size()) != p.bs) throw std::logic_error(c.name + ": seq_lens size != batch_size");

    const int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    p.max_seq_pages = c.max_seq_pages >= 0 ? c.max_seq_pages : cdiv_nonnegative(longest + c.seq_len_delta, c.page_size);

    // Request pool rows and req_pool_indices.
    if (c.pool == PoolLayout::kIdentity) {
        p.pool_rows = p.bs;
        for (int64_t b = 0; b < p.bs; ++b) p.pool_row_of.push_back(b);
    } else {
        p.pool_rows = p.bs + std::max<int64_t>(3, p.bs / 2);
        std::vector<int64_t> rows(p.pool_rows);
        std::iota(rows.begin(), rows.end(), 0);
        std::shuffle(rows.begin(), rows.end(), rng);
        rows.resize(p.bs);
        bool identity = true;
        for (int64_t b = 0; b < p.bs; ++b) identity = identity && rows[b] == b;
        if (identity && p.bs > 0) rows[0] = p.pool_rows - 1;  // never the identity
        p.pool_row_of = rows;
    }

    // req_to_token width.
    switch (c.context) {
    case ContextWidth::kTwiceMaxSeqLen: p.ctx = 2 * c.max_seq_len; break;
    case ContextWidth::kMaxSeqPagesWide: p.ctx = p.max_seq_pages * c.page_size; break;
    case ContextWidth::kMinimalForLivePages: {
        int64_t most_live = 0;
        for (int64_t len : lengths) {
            most_live = std::max(most_live, reference::live_page_count(reference::wrapping_add_int32(
                                                                          reference::wrap_to_int32(len), c.seq_len_delta),
                                                                      c.page_size, p.max_seq_pages));
        }
        p.ctx = std::max<int64_t>(1, (most_live - 1) * c.page_size + 1);
        break;
    }
    }
    p.ctx = std::max<int64_t>(p.ctx, 1);

    // seq_lens: [bs] with stride; the skipped elements hold another valid length.
    p.seq_lens = HostTensor::contiguous_1d(seq_lens_dtype, p.bs, c.seq_lens_stride);
    p.seq_lens.fill(kSkippedSeqLenValue);
    std::vector<int64_t> stored;
    for (int64_t len : lengths) {
        const int64_t high = seq_lens_dtype == LB_INT64 ? c.seq_lens_high_words * (int64_t{1} << 32) : 0;
        stored.push_back(len + high);
    }
    p.set_seq_lens(stored);

    // req_pool_indices: [bs] contiguous.
    p.req_pool_indices = HostTensor::contiguous_1d(index_dtype, p.bs);
    for (int64_t b = 0; b < p.bs; ++b) p.req_pool_indices.store(b, p.pool_row_of[b]);

    // req_to_token: [pool_rows, ctx] int32 contiguous, U[0, 10000).
    p.req_to_token = HostTensor::contiguous_2d(LB_INT32, p.pool_rows, p.ctx, p.ctx);
    std::uniform_int_distribution<int32_t> slot(0, kFullPoolSlots - 1);
    for (int64_t e = 0; e < p.pool_rows * p.ctx; ++e) p.req_to_token_values.push_back(slot(rng));
    for (int64_t e = 0; e < p.pool_rows * p.ctx; ++e) p.req_to_token.store(e, p.req_to_token_values[e]);

    // full_to_swa: [10000] int64, (arange(10000) + U[0, 100)) % 10000.
    if (c.with_swa) {
        p.full_to_swa = HostTensor::contiguous_1d(LB_INT64, kFullPoolSlots);
        std::uniform_int_distribution<int64_t> shift(0, 99);
        for (int64_t i = 0; i < kFullPoolSlots; ++i) p.full_to_swa_values.push_back((i + shift(rng)) % kFullPoolSlots);
        for (int64_t i = 0; i < kFullPoolSlots; ++i) p.full_to_swa.store(i, p.full_to_swa_values[i]);
    }

    // Outputs.
    p.cache_seqlens = HostTensor::contiguous_1d(LB_INT32, p.bs + 2);
    p.cu_seqlens_k = HostTensor::contiguous_1d(LB_INT32, p.bs + 3);
    const int64_t rows = p.bs + c.page_table_extra_rows;
    const int64_t width = p.max_seq_pages + c.page_table_extra_columns;
    p.page_table = HostTensor::contiguous_2d(LB_INT32, rows, width, width + c.page_table_row_padding);
    if (c.with_swa) p.swa_page_table = HostTensor::contiguous_2d(LB_INT32, rows, width, width + c.page_table_row_padding);
    p.poison_outputs();
    return p;
}

// A tensor of DecodeMetadataProblem that a test lays out again with restrided(), and
// what the storage elements between its view's elements hold.
struct StridedTensor {
    const char *name;
    HostTensor DecodeMetadataProblem::*member;
    int64_t filler;
};
inline const StridedTensor kStridedTensors[] = {
    {"req_pool_indices", &DecodeMetadataProblem::req_pool_indices, 0},  // a valid, wrong row
    {"req_to_token", &DecodeMetadataProblem::req_to_token, 1},          // a valid, wrong slot
    {"full_to_swa", &DecodeMetadataProblem::full_to_swa, 7},            // a valid, wrong SWA slot
    {"cache_seqlens", &DecodeMetadataProblem::cache_seqlens, kPoison},
    {"cu_seqlens_k", &DecodeMetadataProblem::cu_seqlens_k, kPoison},
    {"page_table", &DecodeMetadataProblem::page_table, kPoison},
    {"swa_page_table", &DecodeMetadataProblem::swa_page_table, kPoison},
};
inline void PrintTo(const StridedTensor &t, std::ostream *os) { *os << t.name; }

// ---------------------------------------------------------------------------------------
// Checks

// Collects mismatches; reports the first few and the total.
class MismatchLog {
public:
    explicit MismatchLog(std::string what) : what_(std::move(what)) {}
    void add(const std::string &where, const std::string &expected, int64_t got) {
        if (count_ < kShown) {
            lines_ << "\n  " << where << ": expected " << expected << ", got " << got
                   << (got == kPoison ? " (the poison)" : "");
        }
        ++count_;
    }
    ::testing::AssertionResult result() const {
        if (count_ == 0) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << what_ << ": " << count_ << " wrong element(s)" << lines_.str()
                                             << (count_ > kShown ? "\n  ..." : "");
    }

private:
    static constexpr int kShown = 10;
    std::string what_;
    std::ostringstream lines_;
    int64_t count_ = 0;
};

inline std::string poison_text() { return std::to_string(kPoison) + " (the poison, untouched)"; }

// cache_seqlens[0, bs) and cu_seqlens_k[0, bs] equal the reference; the rest of both
// storages (trailing entries, guard) still holds the poison.
inline ::testing::AssertionResult check_seqlens(const DecodeMetadataProblem &p,
                                                const reference::DecodeMetadataExpected &expected,
                                                const std::string &context) {
    MismatchLog log(context + "\ncache_seqlens / cu_seqlens_k");
    // One 1-D output: view entries [0, defined) equal `want`, every other storage element is poisoned.
    auto check_1d = [&](const HostTensor &t, const char *name, const std::vector<int32_t> &want) {
        const int64_t defined = static_cast<int64_t>(want.size());
        std::vector<int64_t> index(t.storage_elements, -1);  // storage element -> view index
        for (int64_t i = 0; i < t.shape[0]; ++i) index[t.offset(i)] = i;
        for (int64_t e = 0; e < t.storage_elements; ++e) {
            const int64_t got = t.load(e);
            const int64_t i = index[e];
            if (i >= 0 && i < defined) {
                if (got != want[i]) {
                    std::string where = std::string(name) + "[" + std::to_string(i) + "]";
                    if (&t == &p.cache_seqlens) {
                        where += " (seq_len " + std::to_string(p.seq_len_values[i]) + ")";
                    }
                    log.add(where, std::to_string(want[i]), got);
                }
            } else if (got != kPoison) {
                log.add(std::string(name) + " storage element " + std::to_string(e) +
                            (i >= 0 ? " (view index " + std::to_string(i) + ", past the written entries)" : " (outside the view)"),
                        poison_text(), got);
            }
        }
    };
    check_1d(p.cache_seqlens, "cache_seqlens", expected.cache_seqlens);
    check_1d(p.cu_seqlens_k, "cu_seqlens_k", expected.cu_seqlens_k);
    return log.result();
}

// What a page-table output must hold after the call.
enum class PageTableExpectation {
    kUntouched,  // skip_page_table: every element still poisoned
    kBounded,    // live prefix exact, everything else poisoned
    kFullWidth,  // every column below max_seq_pages written (pre-#32109 values), the rest poisoned
};

inline PageTableExpectation expectation_for(lb_variant variant, bool skip_page_table) {
    if (skip_page_table) return PageTableExpectation::kUntouched;
    return variant == LB_BOUNDED ? PageTableExpectation::kBounded : PageTableExpectation::kFullWidth;
}

// Checks every storage element of one page-table output (`name`: "page_table" or
// "swa_page_table"); `live_rows` / `full_rows` are the reference's rows for it.
inline ::testing::AssertionResult check_page_table(const DecodeMetadataProblem &p, const HostTensor &table,
                                                   const char *name, const reference::DecodeMetadataExpected &expected,
                                                   const std::vector<std::vector<int32_t>> &live_rows,
                                                   const std::vector<std::vector<int32_t>> &full_rows,
                                                   PageTableExpectation what, const std::string &context) {
    MismatchLog log(context + "\n" + name);
    if (!table.present) return log.result();
    // Per storage element: the (b, column) it is in the view as, or (-1, -1) if outside.
    std::vector<std::pair<int64_t, int64_t>> position(table.storage_elements, {-1, -1});
    for (int64_t r = 0; r < table.shape[0]; ++r) {
        for (int64_t k = 0; k < table.shape[1]; ++k) position[table.offset(r, k)] = {r, k};
    }
    for (int64_t e = 0; e < table.storage_elements; ++e) {
        const int64_t got = table.load(e);
        const auto [b, k] = position[e];
        const std::string where = b < 0 ? std::string(name) + " storage element " + std::to_string(e) + " (outside the view)"
                                        : std::string(name) + "[b=" + std::to_string(b) + ", column=" + std::to_string(k) + "]";
        const bool in_grid = b >= 0 && b < p.bs && k < p.max_seq_pages;
        if (what == PageTableExpectation::kUntouched || !in_grid) {
            if (got != kPoison) log.add(where + (in_grid || b < 0 ? "" : " (row >= bs or column >= max_seq_pages)"), poison_text(), got);
            continue;
        }
        const int64_t live = expected.live_pages[b];
        if (k < live) {
            const int32_t want = live_rows[b][k];
            if (got != want) log.add(where + " (live, live_pages=" + std::to_string(live) + ")", std::to_string(want), got);
        } else if (what == PageTableExpectation::kBounded) {
            if (got != kPoison) {
                log.add(where + " (dead column: live_pages=" + std::to_string(live) + ", LB_BOUNDED must not write it)",
                        poison_text(), got);
            }
        } else if (expected.full_width_defined) {
            const int32_t want = full_rows[b][k];
            if (got != want) {
                log.add(where + " (dead column below max_seq_pages, LB_FULL_WIDTH writes the same gather)",
                        std::to_string(want), got);
            }
        } else if (got == kPoison) {
            log.add(where + " (dead column below max_seq_pages, LB_FULL_WIDTH must write it)", "any written value", got);
        }
    }
    return log.result();
}

// Both page tables of `p`.
inline ::testing::AssertionResult check_page_tables(const DecodeMetadataProblem &p,
                                                    const reference::DecodeMetadataExpected &expected,
                                                    PageTableExpectation what, const std::string &context) {
    ::testing::AssertionResult main = check_page_table(p, p.page_table, "page_table", expected, expected.page_rows,
                                                       expected.full_width_page_rows, what, context);
    if (!main) return main;
    return check_page_table(p, p.swa_page_table, "swa_page_table", expected, expected.swa_page_rows,
                            expected.full_width_swa_page_rows, what, context);
}

// The live prefixes of two runs' page tables (LB_FULL_WIDTH and LB_BOUNDED) are identical.
inline ::testing::AssertionResult live_prefixes_identical(const DecodeMetadataProblem &full,
                                                          const DecodeMetadataProblem &bounded,
                                                          const reference::DecodeMetadataExpected &expected,
                                                          const std::string &context) {
    MismatchLog log(context + "\nLB_FULL_WIDTH live prefix vs LB_BOUNDED live prefix");
    auto compare = [&](const HostTensor &a, const HostTensor &b, const char *name) {
        if (!a.present) return;
        for (int64_t r = 0; r < full.bs; ++r) {
            for (int64_t k = 0; k < expected.live_pages[r]; ++k) {
                const int64_t want = b.load(b.offset(r, k));
                const int64_t got = a.load(a.offset(r, k));
                if (got != want) {
                    log.add(std::string(name) + "[b=" + std::to_string(r) + ", column=" + std::to_string(k) + "]",
                            std::to_string(want) + " (LB_BOUNDED)", got);
                }
            }
        }
    };
    compare(full.page_table, bounded.page_table, "page_table");
    compare(full.swa_page_table, bounded.swa_page_table, "swa_page_table");
    return log.result();
}

// Every output element (guards included) still holds the poison.
inline ::testing::AssertionResult outputs_untouched(const DecodeMetadataProblem &p, const std::string &context) {
    MismatchLog log(context + "\noutputs after a rejected call");
    const std::pair<const HostTensor *, const char *> outputs[] = {{&p.cache_seqlens, "cache_seqlens"},
                                                                   {&p.cu_seqlens_k, "cu_seqlens_k"},
                                                                   {&p.page_table, "page_table"},
                                                                   {&p.swa_page_table, "swa_page_table"}};
    for (const auto &[t, name] : outputs) {
        if (!t->present) continue;
        for (int64_t e = 0; e < t->storage_elements; ++e) {
            const int64_t got = t->load(e);
            if (got != kPoison) log.add(std::string(name) + " storage element " + std::to_string(e), poison_text(), got);
        }
    }
    return log.result();
}

// Whether `name` occurs in `message` as a whole identifier (so that "page_table" is not
// found inside "swa_page_table", nor "seq_lens" inside "cache_seqlens").
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

// gtest parameter names: "<case>_s32_i64_bounded".
inline std::string param_name(const DecodeMetadataCase &c, lb_dtype seq, lb_dtype idx, lb_variant variant) {
    return c.name + "_s" + (seq == LB_INT32 ? "32" : "64") + "_i" + (idx == LB_INT32 ? "32" : "64") + "_" +
           variant_tag(variant);
}

}  // namespace livebound::testing
