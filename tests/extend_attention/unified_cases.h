// K8 extend_attention_fwd_unified test cases and helpers, shared by the CPU and CUDA suites
// (test_extend_attention_unified_{cpu,cuda}.cpp). A K8 problem is built from the K7 one of
// the same shape (cases.h: values normal(0.1, 0.5), shuffled prefix slots, fixed seeds)
// through reference::unified_from_extend (the extend tokens' K/V become cache slots, the
// whole cache is shuffled), then gets the K8-only settings: k_scale / v_scale on every key,
// K8's xai temperature, a random E x N custom mask, an fp8 (e4m3fn) cache: the unified
// cache's 16-bit values rounded to e4m3 (unified_from_extend itself needs a 16-bit cache).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"
#include "reference/extend_attention_reference.h"

namespace livebound::testing {

using reference::UnifiedProblem;

// MLA's absorbed layout for K8 (cases.h's absorb_values): the cache's V is the first Lv dims
// of its K, materialised.
inline void absorb_values(UnifiedProblem *p) {
    copy_key_prefixes(p->k_buf, &p->v_buf, p->num_slots * p->Hkv, p->Lq, p->Lv);
}

struct UnifiedCase {
    std::string name;
    uint32_t seed = 1;
    bool bf16 = true;
    int64_t Hq = 8, Hkv = 2, Lq = 128, Lv = 128;
    std::vector<int64_t> E, P;  // per request; N = P + E
    bool causal = true;
    int32_t window = -1;
    float sm_scale = 0, logit_cap = 0, k_scale = 1, v_scale = 1;
    bool sinks = false;
    bool index64 = true;        // kv_indices int64 (else int32)
    int64_t extra_max_len = 0;  // max_len_extend = max(E) + this
    // A random E x N custom mask per request (keep probability mask_density). Under
    // is_causal it is 0 for keys n > P + m (tree masks) unless mask_future: then the mask
    // alone decides (spec §3.8: the mask replaces the causal rule).
    bool custom_mask = false;
    float mask_density = 0.7f;
    bool mask_future = false;
    bool mask_indptr32 = false;  // mask_indptr passed as int32 (else int64)
    // Rows of the mask that are all zero (every `empty_row_every`-th row of each request;
    // 0: none): rows that see nothing.
    int64_t empty_row_every = 0;
    int32_t xai_temperature_len = -1;
    bool indptr64 = false;   // qo_indptr, kv_indptr, prefix_lens passed as int64 (else int32)
    bool fp8_cache = false;  // k_buffer / v_buffer in float8 e4m3fn (LB_FLOAT8_E4M3FN)
};

inline std::ostream &operator<<(std::ostream &os, const UnifiedCase &c) {
    os << c.name << " seed=" << c.seed << (c.bf16 ? " bf16" : " fp16") << " Hq=" << c.Hq << " Hkv=" << c.Hkv << " Lq=" << c.Lq
       << " Lv=" << c.Lv << " causal=" << c.causal << " W=" << c.window << " cap=" << c.logit_cap << " sinks=" << c.sinks
       << " sm=" << c.sm_scale << " ks=" << c.k_scale << " vs=" << c.v_scale << " E={";
    for (auto e : c.E) os << e << ",";
    os << "} P={";
    for (auto p : c.P) os << p << ",";
    return os << "} kv_indices i" << (c.index64 ? 64 : 32) << " indptr i" << (c.indptr64 ? 64 : 32)
              << (c.fp8_cache ? " cache e4m3" : " cache 16-bit") << " mask=" << c.custom_mask << "/" << c.mask_density
              << (c.mask_future ? " future" : "") << (c.mask_indptr32 ? " mask_indptr i32" : "") << " empty_every=" << c.empty_row_every << " xai=" << c.xai_temperature_len
              << " extra_max_len=" << c.extra_max_len;
}
inline void PrintTo(const UnifiedCase &c, std::ostream *os) { *os << c; }

// The K7 case of the same shape (data, slots, window, causality, cap, sinks, sm_scale,
// index dtypes), with a 16-bit cache (see make_unified_problem).
inline ExtendCase extend_case_of(const UnifiedCase &c) {
    ExtendCase e{c.name, c.seed, c.bf16, c.Hq, c.Hkv, c.Lq, c.Lv, c.E, c.P};
    e.causal = c.causal;
    e.window = c.window;
    e.sm_scale = c.sm_scale;
    e.logit_cap = c.logit_cap;
    e.sinks = c.sinks;
    e.index64 = c.index64;
    e.indptr64 = c.indptr64;
    e.extra_max_len = c.extra_max_len;
    return e;
}

inline UnifiedProblem make_unified_problem(const UnifiedCase &c) {
    UnifiedProblem p = reference::unified_from_extend(make_problem(extend_case_of(c)), c.seed + 1000);
    if (c.fp8_cache) {
        // Every cache element (prefix and extend slots alike) rounded to e4m3.
        for (auto *cache : {&p.k_buf, &p.v_buf}) {
            for (uint16_t &x : *cache) x = uint16_t(reference::float_to_e4m3(p.to_f(x)));
        }
        p.fp8_cache = true;
    }
    p.k_scale = c.k_scale;
    p.v_scale = c.v_scale;
    p.xai_temperature_len = c.xai_temperature_len;
    if (c.custom_mask) {
        std::mt19937 rng(c.seed + 2000);
        std::bernoulli_distribution keep(c.mask_density);
        p.custom_mask.assign(2, 1);  // unused leading bytes
        for (int64_t b = 0; b < p.B; b++) {
            const int64_t E = p.E(b), N = p.N(b), P = p.P(b);
            p.mask_indptr.push_back(int64_t(p.custom_mask.size()));
            for (int64_t m = 0; m < E; m++) {
                const bool empty = c.empty_row_every > 0 && m % c.empty_row_every == c.empty_row_every - 1;
                for (int64_t n = 0; n < N; n++) {
                    const bool future = c.causal && !c.mask_future && n > P + m;
                    p.custom_mask.push_back(empty || future ? 0 : uint8_t(keep(rng)));
                }
            }
            p.custom_mask.push_back(1);  // an unused byte between blocks
        }
        p.mask_indptr.push_back(int64_t(p.custom_mask.size()) - 1);
    }
    return p;
}

// `lead` rows before and `tail` rows after the batch's rows of q (random, never read):
// qo_indptr[0] = lead. Only rows [lead, lead + sum E) of o may be written.
inline UnifiedProblem with_padding(const UnifiedProblem &p, int64_t lead, int64_t tail, uint32_t seed) {
    UnifiedProblem out = p;
    std::mt19937 rng(seed);
    std::normal_distribution<float> val(0.1f, 0.5f);
    const int64_t row = p.Hq * p.Lq;
    out.q.clear();
    for (int64_t i = 0; i < lead * row; i++) out.q.push_back(p.from_f(val(rng)));
    out.q.insert(out.q.end(), p.q.begin(), p.q.end());
    for (int64_t i = 0; i < tail * row; i++) out.q.push_back(p.from_f(val(rng)));
    for (auto &x : out.qo_indptr) x += int32_t(lead);
    out.T = p.T + lead + tail;
    return out;
}

// The batch of requests `reqs` of p, in that order: same cache, each request's q rows,
// list, prefix length and mask block.
inline UnifiedProblem subset(const UnifiedProblem &p, const std::vector<int64_t> &reqs) {
    UnifiedProblem s = p;
    s.B = int64_t(reqs.size());
    s.q.clear();
    s.kv_indices.clear();
    s.prefix_lens.clear();
    s.qo_indptr.assign(1, 0);
    s.kv_indptr.assign(1, 0);
    s.custom_mask.clear();
    s.mask_indptr.clear();
    const int64_t ql = p.Hq * p.Lq;
    for (int64_t b : reqs) {
        const int64_t q0 = p.qo_indptr[size_t(b)], E = p.E(b), k0 = p.kv_indptr[size_t(b)], N = p.N(b);
        s.q.insert(s.q.end(), p.q.begin() + q0 * ql, p.q.begin() + (q0 + E) * ql);
        s.kv_indices.insert(s.kv_indices.end(), p.kv_indices.begin() + k0, p.kv_indices.begin() + k0 + N);
        s.qo_indptr.push_back(s.qo_indptr.back() + int32_t(E));
        s.kv_indptr.push_back(s.kv_indptr.back() + int32_t(N));
        s.prefix_lens.push_back(p.prefix_lens[size_t(b)]);
        if (p.has_mask()) {
            const int64_t start = p.mask_indptr[size_t(b)];
            s.mask_indptr.push_back(int64_t(s.custom_mask.size()));
            s.custom_mask.insert(s.custom_mask.end(), p.custom_mask.begin() + start, p.custom_mask.begin() + start + E * N);
        }
    }
    if (p.has_mask()) {
        s.mask_indptr.push_back(int64_t(s.custom_mask.size()));
        if (s.custom_mask.empty()) s.custom_mask.assign(1, 0);  // keep "has a mask"
    }
    s.T = s.qo_indptr.back();
    return s;
}

// The number of o elements of request `order[i]` (rows of `batch`, the subset in that order)
// that differ from its rows in `all` (the whole batch p's o): 0 when its bits do not depend
// on its batch mates. `first` gets the first differing request.
inline size_t rows_differing_from_batch(const UnifiedProblem &p, const std::vector<uint16_t> &all,
                                        const UnifiedProblem &batch, const std::vector<int64_t> &order,
                                        const std::vector<uint16_t> &got, int64_t *first) {
    const size_t ro = size_t(p.Hq * p.Lv);
    size_t differ = 0;
    for (size_t i = 0; i < order.size(); i++) {
        const int64_t b = order[i], E = p.E(b);
        const size_t at = size_t(batch.qo_indptr[i]) * ro, want = size_t(p.qo_indptr[size_t(b)]) * ro;
        for (size_t e = 0; e < size_t(E) * ro; e++) {
            if (got[at + e] != all[want + e] && differ++ == 0) *first = b;
        }
    }
    return differ;
}

inline int64_t max_extend(const UnifiedProblem &p) {
    int64_t m = 0;
    for (int64_t b = 0; b < p.B; b++) m = std::max(m, p.E(b));
    return m;
}

// The caller-side buffers of one call (o poisoned with kPoison16), and the copies of the
// problem's inputs in the dtypes the case asks for (args points into them: not copyable).
struct UnifiedBuffers {
    std::vector<uint16_t> o;
    std::vector<int32_t> idx32;                                    // kv_indices as int32
    std::vector<int64_t> qo_indptr64, kv_indptr64, prefix_lens64;  // indptr64 copies
    std::vector<int32_t> mask_indptr32;                            // mask_indptr32 copy
    std::vector<uint8_t> k_buffer8, v_buffer8;                     // the fp8 cache's e4m3 bytes
    lb_extend_attention_unified_args args{};

    UnifiedBuffers() = default;
    UnifiedBuffers(const UnifiedBuffers &) = delete;
    UnifiedBuffers &operator=(const UnifiedBuffers &) = delete;
};

// The cache dtype is the problem's (p.fp8_cache), the index dtypes the case's (c.index64,
// c.indptr64).
inline void make_unified_args(const UnifiedProblem &p, const UnifiedCase &c, lb_variant variant, UnifiedBuffers *out) {
    const lb_dtype dt = p.bf16 ? LB_BFLOAT16 : LB_FLOAT16;
    out->o.assign(size_t(p.T * p.Hq * p.Lv), kPoison16);
    lb_extend_attention_unified_args &a = out->args;
    a = lb_extend_attention_unified_args{};
    a.q = attn3(p.q.data(), dt, p.T, p.Hq, p.Lq);
    a.o = attn3(out->o.data(), dt, p.T, p.Hq, p.Lv);
    a.k_buffer = cache3(p.k_buf, p.fp8_cache, dt, p.num_slots, p.Hkv, p.Lq, &out->k_buffer8);
    a.v_buffer = cache3(p.v_buf, p.fp8_cache, dt, p.num_slots, p.Hkv, p.Lv, &out->v_buffer8);
    a.qo_indptr = index1_as(p.qo_indptr, c.indptr64, &out->qo_indptr64);
    a.kv_indptr = index1_as(p.kv_indptr, c.indptr64, &out->kv_indptr64);
    if (c.index64) {
        a.kv_indices = index1(p.kv_indices);
    } else {
        out->idx32.assign(p.kv_indices.begin(), p.kv_indices.end());
        a.kv_indices = index1(out->idx32);
    }
    a.prefix_lens = index1_as(p.prefix_lens, c.indptr64, &out->prefix_lens64);
    if (!p.sinks.empty()) a.sinks = lb_tensor{const_cast<float *>(p.sinks.data()), LB_FLOAT32, 1, {p.Hq}, {1}};
    if (p.has_mask()) {
        a.custom_mask = lb_tensor{const_cast<uint8_t *>(p.custom_mask.data()), LB_UINT8, 1, {int64_t(p.custom_mask.size())}, {1}};
        a.mask_indptr = index1_narrowed(p.mask_indptr, c.mask_indptr32, &out->mask_indptr32);
    }
    a.max_len_extend = max_extend(p) + c.extra_max_len;
    a.is_causal = p.causal;
    a.sliding_window_size = p.window;
    a.sm_scale = p.sm_scale;
    a.logit_cap = p.logit_cap;
    a.k_scale = p.k_scale;
    a.v_scale = p.v_scale;
    a.xai_temperature_len = p.xai_temperature_len;
    a.variant = variant;
}

// max |a - b| over [begin, end): same-signed infinities and NaN pairs equal, one NaN -> inf.
template <typename A, typename B>
double max_abs_diff_nan(const std::vector<A> &a, const std::vector<B> &b, size_t begin, size_t end) {
    double e = 0;
    for (size_t i = begin; i < end; i++) {
        const double x = double(a[i]), y = double(b[i]);
        if (std::isnan(x) && std::isnan(y)) continue;
        if (std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0)) continue;
        const double d = std::fabs(x - y);
        if (std::isnan(d)) return INFINITY;
        e = std::max(e, d);
    }
    return e;
}

// The K7 CPU suite's rule over the rows [qo_indptr[0], qo_indptr[B]): kernel error <= 2x
// that of the naive same-precision reference + 1e-5, every element within one ulp (of the
// dtype, at the exact value) + 1e-6 of the fp64 value (a row that sees nothing is 0 in both);
// every element of the other rows still the poison.
// tensor_core: the kernel rounds P to the input dtype (an mma operand); r32 must then be the
// naive reference that rounds P the same way, and elements may be more than one ulp off
// (NaN must still match NaN).
inline void expect_unified_accurate(const UnifiedProblem &p, const reference::Result<double> &r64,
                                    const reference::Result<float> &r32, const std::vector<uint16_t> &out,
                                    const std::string &context, bool tensor_core = false) {
    const size_t ro = size_t(p.Hq * p.Lv);
    const size_t r0 = size_t(p.qo_indptr.front()) * ro, r1 = size_t(p.qo_indptr.back()) * ro;
    ASSERT_EQ(out.size(), size_t(p.T) * ro) << context;
    std::vector<float> o(out.size());
    for (size_t i = 0; i < o.size(); i++) o[i] = p.to_f(out[i]);
    const double err = max_abs_diff_nan(o, r64.o, r0, r1), err_naive = max_abs_diff_nan(r32.o, r64.o, r0, r1);
    EXPECT_LE(err, 2 * err_naive + 1e-5) << "o: kernel error " << err << " vs naive " << err_naive << "\n" << context;
    size_t bad = 0, first_bad = 0;
    for (size_t i = r0; i < r1; i++) {
        const double exact = r64.o[i];
        bool ok;
        if (std::isnan(exact)) {
            ok = std::isnan(o[i]);
        } else {
            const uint16_t bits = p.from_f(float(std::fabs(exact)));
            const double ulp = std::fabs(double(p.to_f(uint16_t(bits + 1))) - double(p.to_f(bits)));
            ok = tensor_core ? !std::isnan(o[i]) : std::fabs(o[i] - exact) <= ulp + 1e-6;
        }
        if (!ok && bad++ == 0) first_bad = i;
    }
    EXPECT_EQ(bad, 0u) << bad << " o elements off by more than one ulp + 1e-6 (or NaN mismatch); first: element "
                       << first_bad << " (row " << first_bad / ro << ", head " << (first_bad % ro) / size_t(p.Lv) << ") = "
                       << (bad ? o[first_bad] : 0.0f) << " vs exact " << (bad ? r64.o[first_bad] : 0.0) << "\n" << context;
    size_t touched = 0, first_touched = 0;
    for (size_t i = 0; i < out.size(); i++) {
        if ((i < r0 || i >= r1) && out[i] != kPoison16 && touched++ == 0) first_touched = i;
    }
    EXPECT_EQ(touched, 0u) << touched << " o elements outside rows [" << r0 / ro << ", " << r1 / ro
                           << ") were written; first: element " << first_touched << "\n" << context;
    std::printf("%s: o error %.3g (naive %.3g)\n", context.c_str(), err, err_naive);
}

// The K8 accuracy sweep (spec §4.5 rule 3 with K8's features), sized for CPU time.
inline std::vector<UnifiedCase> unified_cases() {
    std::vector<UnifiedCase> cs;
    auto add = [&](UnifiedCase c) { cs.push_back(std::move(c)); };
    // One long + several short requests, prefix 0 and non-zero, an empty request, causal.
    add({"uneven_causal", 11, true, 8, 2, 128, 128, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}});
    // Windows: small, tile-sized, >= E (a no-op), with dead tiles past every request.
    {
        UnifiedCase c{"window_small", 12, true, 8, 2, 128, 128, {130, 7, 65}, {90, 300, 0}};
        c.window = 9;
        add(c);
        c.name = "window_tile";
        c.seed = 13;
        c.window = 32;
        c.extra_max_len = 45;
        add(c);
        c.name = "window_ge_E";
        c.seed = 14;
        c.window = 400;
        c.extra_max_len = 0;
        add(c);
    }
    // Non-causal, with and without a (two-sided) window, no GQA.
    {
        UnifiedCase c{"noncausal", 21, true, 8, 8, 128, 128, {70, 33, 1}, {20, 0, 45}};
        c.causal = false;
        add(c);
        c.name = "noncausal_window";
        c.seed = 22;
        c.window = 13;
        add(c);
    }
    // fp16 64/64, GQA 8:1, logit cap, sinks, k/v scales, explicit sm_scale, window.
    {
        UnifiedCase c{"fp16_d64_gqa8_cap_sinks_scales", 31, false, 8, 1, 64, 64, {97, 12, 40}, {60, 5, 0}};
        c.logit_cap = 5.0f;
        c.sinks = true;
        c.k_scale = 0.75f;
        c.v_scale = 1.25f;
        c.sm_scale = 0.2f;
        c.window = 20;
        add(c);
    }
    // bf16 64/64 GQA 4:1, window, dead query tiles.
    {
        UnifiedCase c{"bf16_d64_gqa4", 41, true, 8, 2, 64, 64, {45, 90}, {100, 0}};
        c.window = 50;
        c.extra_max_len = 40;
        add(c);
    }
    // int32 kv_indices and indptrs (bf16 128/128), sinks, short requests around the tile size.
    {
        UnifiedCase c{"int32_sinks", 51, true, 8, 8, 128, 128, {1, 2, 31, 32, 33}, {0, 1, 64, 0, 2}};
        c.index64 = false;
        c.sinks = true;
        add(c);
    }
    // fp16 128/128 non-causal, empty requests at the ends, k/v scales.
    {
        UnifiedCase c{"fp16_d128_noncausal_scales_empty_ends", 61, false, 8, 2, 128, 128, {0, 50, 0}, {10, 30, 0}};
        c.causal = false;
        c.window = 7;
        c.k_scale = 1.5f;
        c.v_scale = 0.5f;
        add(c);
    }
    // Custom masks: 0 past the diagonal under is_causal (tree masks); non-causal + window +
    // sparse mask + sinks (rows that see nothing but the sink); a causal mask with empty
    // rows and no sink (NaN rows); fp16.
    {
        UnifiedCase c{"mask_causal", 81, true, 8, 2, 128, 128, {70, 1, 33, 0, 40}, {25, 60, 0, 9, 80}};
        c.custom_mask = true;
        add(c);
        UnifiedCase n{"mask_noncausal_window_sparse_sinks", 83, true, 8, 2, 64, 64, {50, 7, 33}, {40, 0, 12}};
        n.custom_mask = true;
        n.causal = false;
        n.window = 11;
        n.mask_density = 0.15f;
        n.sinks = true;
        add(n);
        UnifiedCase e{"mask_fp16_empty_rows_nan", 84, false, 8, 2, 64, 64, {40, 9, 21}, {10, 33, 0}};
        e.custom_mask = true;
        e.window = 24;
        e.empty_row_every = 5;
        add(e);
    }
    // The mask replaces the causal rule: under is_causal the mask lets rows see later keys
    // (spec §3.8); without and with a window (the window stays one-sided under is_causal).
    {
        UnifiedCase c{"mask_replaces_causal", 85, true, 8, 2, 64, 64, {40, 20}, {10, 30}};
        c.custom_mask = true;
        c.mask_future = true;
        add(c);
        c.name = "mask_replaces_causal_window";
        c.seed = 86;
        c.window = 5;
        add(c);
        c.name = "mask_replaces_causal_window_mask_indptr32";
        c.seed = 87;
        c.window = 17;
        c.mask_indptr32 = true;
        c.sinks = true;
        add(c);
    }
    // K8's xai temperature L / (P + m + 1) for P + m >= L, with a cap; bf16 128 and fp16 64.
    {
        UnifiedCase c{"xai_cap", 91, true, 8, 2, 128, 128, {60, 30, 9}, {10, 70, 0}};
        c.xai_temperature_len = 40;
        c.logit_cap = 8.0f;
        add(c);
        UnifiedCase f{"xai_fp16_d64_window_noncausal", 92, false, 8, 4, 64, 64, {33, 64}, {1, 20}};
        f.xai_temperature_len = 2;
        f.window = 17;
        f.causal = false;
        add(f);
    }
    // Head dims served by a larger bucket (as K7's): 13 (scalar bucket), 80 (96), 192/128.
    {
        UnifiedCase c{"head_dim_13", 111, true, 4, 2, 13, 13, {40, 3, 17}, {25, 0, 9}};
        c.window = 11;
        add(c);
        UnifiedCase e{"fp16_head_dim_80", 113, false, 8, 2, 80, 80, {70, 1, 33}, {20, 90, 0}};
        e.window = 24;
        add(e);
        UnifiedCase m{"head_dim_192_128_noncausal", 115, true, 8, 2, 192, 128, {50, 7, 33}, {40, 0, 12}};
        m.causal = false;
        m.window = 30;
        add(m);
    }
    // Index dtypes per argument (every variant takes int32 or int64 for qo_indptr, kv_indptr,
    // kv_indices and prefix_lens, each on its own): (indptr64, index64) = (1, 1), (1, 0).
    {
        UnifiedCase c{"indptr64_index64_window", 121, true, 8, 2, 128, 128, {70, 1, 33, 0}, {40, 0, 90, 17}};
        c.indptr64 = true;
        c.window = 20;
        add(c);
        UnifiedCase f{"fp16_d64_indptr64_index32_mask_sinks", 122, false, 8, 2, 64, 64, {45, 20, 3}, {30, 0, 70}};
        f.indptr64 = true;
        f.index64 = false;
        f.custom_mask = true;
        f.sinks = true;
        add(f);
    }
    // fp8 (e4m3fn) caches: every key's K and V decoded exactly (k_scale on every score,
    // v_scale on the output, as for 16-bit caches); bf16 and fp16; head dims 128, 64, 13,
    // 80, 192/128, 576/512 (few heads, short requests); windows, masks (the mask replacing
    // the causal rule too), sinks, cap, xai; the index dtypes (indptr64, index64) = (1, 1),
    // (1, 0), (0, 0), (0, 1).
    {
        UnifiedCase a{"fp8_bf16_d128_scales", 131, true, 8, 2, 128, 128, {70, 1, 33, 0, 40}, {40, 0, 90, 17, 5}};
        a.fp8_cache = true;
        a.k_scale = 0.5f;
        a.v_scale = 1.7f;
        a.indptr64 = true;
        add(a);
        UnifiedCase w{"fp8_fp16_d128_window_sinks", 132, false, 8, 2, 128, 128, {65, 9, 30}, {30, 70, 0}};
        w.fp8_cache = true;
        w.window = 20;
        w.sinks = true;
        w.indptr64 = true;
        w.index64 = false;
        add(w);
        UnifiedCase n{"fp8_bf16_d64_noncausal_xai_cap_scales", 133, true, 8, 1, 64, 64, {50, 7, 33}, {40, 0, 12}};
        n.fp8_cache = true;
        n.causal = false;
        n.window = 13;
        n.logit_cap = 5.0f;
        n.xai_temperature_len = 30;
        n.k_scale = 0.5f;
        n.v_scale = 1.7f;
        n.index64 = false;
        add(n);
        UnifiedCase m{"fp8_fp16_d64_mask_future_window", 134, false, 8, 2, 64, 64, {45, 20, 33}, {30, 5, 70}};
        m.fp8_cache = true;
        m.custom_mask = true;
        m.mask_future = true;
        m.window = 24;
        m.indptr64 = true;
        add(m);
        UnifiedCase d13{"fp8_bf16_head_dim_13_scales", 136, true, 4, 2, 13, 13, {40, 3, 17}, {25, 0, 9}};
        d13.fp8_cache = true;
        d13.window = 11;
        d13.k_scale = 0.5f;
        d13.v_scale = 1.7f;
        add(d13);
        UnifiedCase d80{"fp8_fp16_head_dim_80_sinks", 137, false, 8, 2, 80, 80, {33, 1, 20}, {20, 45, 0}};
        d80.fp8_cache = true;
        d80.sinks = true;
        d80.window = 24;
        d80.indptr64 = true;
        d80.index64 = false;
        add(d80);
        UnifiedCase d192{"fp8_bf16_head_dim_192_128_noncausal", 138, true, 8, 2, 192, 128, {30, 7, 20}, {40, 0, 12}};
        d192.fp8_cache = true;
        d192.causal = false;
        d192.window = 30;
        add(d192);
        UnifiedCase mla{"fp8_bf16_mla_576_512_scales", 139, true, 4, 1, 576, 512, {12, 20}, {30, 0}};
        mla.fp8_cache = true;
        mla.window = 16;
        mla.k_scale = 0.5f;
        mla.v_scale = 1.7f;
        mla.indptr64 = true;
        add(mla);
        UnifiedCase mlm{"fp8_fp16_mla_576_512_mask_sinks", 140, false, 4, 1, 576, 512, {9, 14}, {0, 20}};
        mlm.fp8_cache = true;
        mlm.custom_mask = true;
        mlm.sinks = true;
        mlm.index64 = false;
        add(mlm);
    }
    return cs;
}

}  // namespace livebound::testing
