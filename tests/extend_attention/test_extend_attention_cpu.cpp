// K7 on the CPU: accuracy against an fp64 reference (error at most 2x that of the naive
// same-precision reference, FlashAttention's rule, plus a small absolute floor), and the
// metamorphic identities of design §5: bounded == full-width twin bit for bit, window ==
// full attention over the sliced KV, paged (shuffled slots) == contiguous, a request's
// output independent of its batch mates; LSE on or off gives the same o; an fp8 (e4m3fn)
// cache == a 16-bit cache holding the same values, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"

namespace livebound::testing {
namespace {

using reference::ExtendProblem;

std::vector<uint16_t> run(const ExtendProblem &p, const ExtendCase &c, lb_variant variant, std::vector<float> *lse,
                          bool with_lse = true) {
    ExtendBuffers buf;
    make_args(p, c, variant, &buf, with_lse);
    const lb_status s = lb_extend_attention_fwd(&buf.args, cpu_device());
    EXPECT_EQ(s, LB_OK) << lb_last_error() << "\n" << c;
    if (lse) *lse = buf.lse;
    return buf.o;
}

template <typename A, typename B>
double max_abs_diff(const std::vector<A> &a, const std::vector<B> &b) {
    double e = 0;
    for (size_t i = 0; i < a.size(); i++) {
        const double x = double(a[i]), y = double(b[i]);
        if (std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0)) continue;
        const double d = std::fabs(x - y);
        if (std::isnan(d)) return INFINITY;
        e = std::max(e, d);
    }
    return e;
}

class ExtendCpu : public ::testing::TestWithParam<ExtendCase> {};

TEST_P(ExtendCpu, AccurateAndTwinBitIdentical) {
    const ExtendCase &c = GetParam();
    const ExtendProblem p = make_problem(c);
    std::vector<float> lse_b, lse_f;
    const std::vector<uint16_t> ob = run(p, c, LB_BOUNDED, &lse_b);
    const std::vector<uint16_t> of = run(p, c, LB_FULL_WIDTH, &lse_f);

    const auto r64 = reference::reference_fp64(p);
    const auto r32 = reference::reference_naive_fp32(p);
    std::vector<float> o_kernel(ob.size());
    for (size_t i = 0; i < ob.size(); i++) o_kernel[i] = p.to_f(ob[i]);
    const double err = max_abs_diff(o_kernel, r64.o), err_naive = max_abs_diff(r32.o, r64.o);
    EXPECT_LE(err, 2 * err_naive + 1e-5) << "o: kernel error " << err << " vs naive " << err_naive << "\n" << c;
    // Stronger than the 2x rule where the output rounding dominates: every element is within
    // one unit in the last place (of the input dtype) of the exact value, plus 1e-6 for the
    // fp32 accumulation's cancellation in outputs near zero.
    for (size_t i = 0; i < o_kernel.size(); i++) {
        const double exact = r64.o[i];
        const uint16_t bits = p.from_f(float(std::fabs(exact)));
        const double ulp = std::fabs(double(p.to_f(uint16_t(bits + 1))) - double(p.to_f(bits)));
        ASSERT_LE(std::fabs(o_kernel[i] - exact), ulp + 1e-6) << "element " << i << ": " << o_kernel[i] << " vs exact " << exact
                                                        << "\n" << c;
    }
    const double lerr = max_abs_diff(lse_b, r64.lse), lerr_naive = max_abs_diff(r32.lse, r64.lse);
    std::printf("%s: o error %.3g (naive %.3g), lse error %.3g (naive %.3g)\n", c.name.c_str(), err, err_naive, lerr,
                lerr_naive);
    EXPECT_LE(lerr, 2 * lerr_naive + 1e-5) << "lse: kernel error " << lerr << " vs naive " << lerr_naive << "\n" << c;

    // Bounded and full-width twin: identical bits (masked keys leave the state as it was).
    EXPECT_EQ(0, std::memcmp(ob.data(), of.data(), ob.size() * 2)) << "o differs between bounded and full-width\n" << c;
    EXPECT_EQ(0, std::memcmp(lse_b.data(), lse_f.data(), lse_b.size() * 4)) << "lse differs by up to " << max_abs_diff(lse_b, lse_f) << "\n" << c;

    // No LSE requested: same o.
    const std::vector<uint16_t> o_nolse = run(p, c, LB_BOUNDED, nullptr, false);
    EXPECT_EQ(0, std::memcmp(ob.data(), o_nolse.data(), ob.size() * 2)) << "o differs without lse\n" << c;
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtendCpu, ::testing::ValuesIn(extend_cases()),
                         [](const ::testing::TestParamInfo<ExtendCase> &i) { return i.param.name; });

// Paged prefix through shuffled slots == the same keys at contiguous slots, bit for bit.
TEST(ExtendMetamorphic, PagedEqualsContiguous) {
    ExtendCase c{"paged", 71, true, 8, 2, 128, 128, {80, 21, 3}, {120, 40, 0}};
    c.window = 45;
    const ExtendProblem paged = make_problem(c);
    // Same values, slots renumbered so that request b's prefix is contiguous.
    ExtendProblem contig = paged;
    const int64_t kl = paged.Hkv * paged.Lq, vl = paged.Hkv * paged.Lv;
    for (size_t i = 0; i < paged.kv_indices.size(); i++) {
        const int64_t s = paged.kv_indices[i];
        std::copy_n(&paged.k_buf[size_t(s * kl)], kl, &contig.k_buf[i * size_t(kl)]);
        std::copy_n(&paged.v_buf[size_t(s * vl)], vl, &contig.v_buf[i * size_t(vl)]);
        contig.kv_indices[i] = int64_t(i);
    }
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        std::vector<float> l1, l2;
        const auto o1 = run(paged, c, v, &l1), o2 = run(contig, c, v, &l2);
        EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), o1.size() * 2)) << c;
        EXPECT_EQ(0, std::memcmp(l1.data(), l2.data(), l1.size() * 4)) << c;
    }
}

// A request's rows do not depend on its batch mates: run each request alone.
TEST(ExtendMetamorphic, IndependentOfBatchMates) {
    ExtendCase c{"batch", 81, true, 8, 2, 128, 128, {100, 1, 37, 64}, {30, 90, 0, 5}};
    c.window = 25;
    const ExtendProblem p = make_problem(c);
    std::vector<float> lse_all;
    const auto o_all = run(p, c, LB_BOUNDED, &lse_all);
    for (int64_t b = 0; b < p.B; b++) {
        ExtendProblem one = p;
        one.B = 1;
        one.qo_indptr = {0, int32_t(p.E(b))};
        one.kv_indptr = {0, int32_t(p.P(b))};
        one.T = p.E(b);
        const int64_t q0 = p.qo_indptr[size_t(b)];
        one.q.assign(p.q.begin() + q0 * p.Hq * p.Lq, p.q.begin() + (q0 + one.T) * p.Hq * p.Lq);
        one.k_ext.assign(p.k_ext.begin() + q0 * p.Hkv * p.Lq, p.k_ext.begin() + (q0 + one.T) * p.Hkv * p.Lq);
        one.v_ext.assign(p.v_ext.begin() + q0 * p.Hkv * p.Lv, p.v_ext.begin() + (q0 + one.T) * p.Hkv * p.Lv);
        one.kv_indices.assign(p.kv_indices.begin() + p.kv_indptr[size_t(b)], p.kv_indices.begin() + p.kv_indptr[size_t(b + 1)]);
        ExtendCase c1 = c;
        c1.E = {p.E(b)};
        std::vector<float> lse_one;
        const auto o_one = run(one, c1, LB_BOUNDED, &lse_one);
        const size_t row = size_t(p.Hq * p.Lv);
        EXPECT_EQ(0, std::memcmp(o_one.data(), &o_all[size_t(q0) * row], size_t(one.T) * row * 2)) << "request " << b << "\n" << c;
        EXPECT_EQ(0, std::memcmp(lse_one.data(), &lse_all[size_t(q0 * p.Hq)], size_t(one.T * p.Hq) * 4)) << "request " << b;
    }
}

// Window == full attention over the sliced KV: every query row m of the windowed batch
// becomes its own request with no window, whose prefix is exactly the keys the window
// keeps (the prefix keys j >= P + m - W, then the extend keys m - W <= n < m, copied into
// the cache) and whose one extend token is the row itself. Same keys in the same order
// (prefix first): identical bits (k_scale = v_scale = 1).
TEST(ExtendMetamorphic, WindowEqualsSlicedFullAttention) {
    for (int32_t W : {1, 9, 40}) {
        ExtendCase c{"window_slice", uint32_t(90 + W), true, 4, 2, 64, 64, {70, 9, 33}, {50, 0, 100}};
        c.window = W;
        const ExtendProblem p = make_problem(c);
        std::vector<float> lse_w;
        const auto o_w = run(p, c, LB_BOUNDED, &lse_w);

        ExtendProblem s = p;
        s.window = -1;
        s.B = p.T;
        s.qo_indptr.assign(1, 0);
        s.kv_indptr.assign(1, 0);
        s.kv_indices.clear();
        const int64_t kl = p.Hkv * p.Lq, vl = p.Hkv * p.Lv;
        int64_t slots = p.num_slots;
        for (int64_t b = 0; b < p.B; b++) {
            const int64_t q0 = p.qo_indptr[size_t(b)], P = p.P(b), k0 = p.kv_indptr[size_t(b)];
            for (int64_t m = 0; m < p.E(b); m++) {
                for (int64_t j = std::max<int64_t>(0, P + m - W); j < P; j++) s.kv_indices.push_back(p.kv_indices[size_t(k0 + j)]);
                for (int64_t n = std::max<int64_t>(0, m - W); n < m; n++) {  // extend keys become cache slots
                    s.k_buf.insert(s.k_buf.end(), &p.k_ext[size_t((q0 + n) * kl)], &p.k_ext[size_t((q0 + n + 1) * kl)]);
                    s.v_buf.insert(s.v_buf.end(), &p.v_ext[size_t((q0 + n) * vl)], &p.v_ext[size_t((q0 + n + 1) * vl)]);
                    s.kv_indices.push_back(slots++);
                }
                s.qo_indptr.push_back(s.qo_indptr.back() + 1);
                s.kv_indptr.push_back(int32_t(s.kv_indices.size()));
            }
        }
        s.num_slots = slots;
        ExtendCase cs = c;
        cs.E.assign(size_t(p.T), 1);
        std::vector<float> lse_s;
        const auto o_s = run(s, cs, LB_BOUNDED, &lse_s);
        EXPECT_EQ(0, std::memcmp(o_w.data(), o_s.data(), o_w.size() * 2)) << "W=" << W << "\n" << c;
        EXPECT_EQ(0, std::memcmp(lse_w.data(), lse_s.data(), lse_w.size() * 4)) << "W=" << W << "\n" << c;
    }
}

// A custom mask that is all ones over the prefix and lower-triangular over the extend chunk
// (SGLang's test) == no mask with is_causal, bit for bit; with a window, and with
// window_kv_offsets (the skipped leading columns hold zeros: never read).
TEST(ExtendMetamorphic, CausalMaskEqualsNoMask) {
    for (int32_t W : {-1, 17}) {
        ExtendCase c{"causal_mask", uint32_t(110 + W), true, 8, 2, 64, 64, {60, 1, 35}, {20, 40, 0}};
        c.window = W;
        const ExtendProblem plain = make_problem(c);
        ExtendProblem masked = plain;
        masked.custom_mask.assign(1, 0);
        if (W > 0) masked.window_kv_offsets = {3, 0, 5};
        for (int64_t b = 0; b < plain.B; b++) {
            masked.mask_indptr.push_back(int64_t(masked.custom_mask.size()));
            const int64_t P = plain.P(b), E = plain.E(b), w = masked.wko(b);
            for (int64_t m = 0; m < E; m++) {
                masked.custom_mask.insert(masked.custom_mask.end(), size_t(w), 0);
                for (int64_t col = 0; col < P + E; col++) masked.custom_mask.push_back(col < P || col - P <= m);
            }
        }
        masked.mask_indptr.push_back(int64_t(masked.custom_mask.size()));
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            std::vector<float> l1, l2;
            const auto o1 = run(plain, c, v, &l1), o2 = run(masked, c, v, &l2);
            EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), o1.size() * 2)) << "W=" << W << "\n" << c;
            EXPECT_EQ(0, std::memcmp(l1.data(), l2.data(), l1.size() * 4)) << "W=" << W << "\n" << c;
        }
    }
}

// A custom mask replaces the causal rule: with image spans (keys above the diagonal open)
// and no window, is_causal on and off give the same bits, bounded and full-width, with
// int32 and int64 mask_indptr; and the result is not the causal one (the spans are seen).
TEST(ExtendMetamorphic, SpanMaskDecidesAloneWhateverIsCausal) {
    for (ExtendCase c : span_mask_cases()) {
        if (c.window > 0) continue;
        const ExtendProblem causal = make_problem(c);
        ExtendProblem noncausal = causal;
        noncausal.causal = false;
        ExtendProblem unmasked = causal;
        unmasked.custom_mask.clear();
        unmasked.mask_indptr.clear();
        std::vector<float> l0;
        const auto o_unmasked = run(unmasked, c, LB_BOUNDED, &l0);
        for (bool indptr32 : {false, true}) {
            c.mask_indptr32 = indptr32;
            for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
                std::vector<float> l1, l2;
                const auto o1 = run(causal, c, v, &l1), o2 = run(noncausal, c, v, &l2);
                EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), o1.size() * 2)) << c;
                EXPECT_EQ(0, std::memcmp(l1.data(), l2.data(), l1.size() * 4)) << c;
                EXPECT_NE(0, std::memcmp(o1.data(), o_unmasked.data(), o1.size() * 2)) << "spans not seen\n" << c;
            }
        }
    }
}

// An fp8 cache == a 16-bit cache holding the same values. Every e4m3 value is exact in bf16
// and fp16, and the kernel decodes each cache element exactly (no rounding of q or p to
// fp8), so the same fp32 values enter the same operations: identical o and lse bits,
// bounded and full-width, for bf16 and fp16, with k/v scales (prefix only), a window,
// sinks, a logit cap and a custom mask with int64 window_kv_offsets.
TEST(ExtendMetamorphic, Fp8CacheEqualsSixteenBitCacheOfItsValues) {
    std::vector<ExtendCase> cs;
    ExtendCase b{"fp8_vs_16bit_bf16_d128", 126, true, 8, 2, 128, 128, {70, 1, 33, 0}, {40, 0, 90, 17}};
    b.window = 30;
    b.sinks = true;
    b.k_scale = 0.5f;
    b.v_scale = 1.7f;
    cs.push_back(b);
    ExtendCase f{"fp8_vs_16bit_fp16_d64_mask", 127, false, 8, 4, 64, 64, {45, 20, 9}, {30, 5, 0}};
    f.custom_mask = true;
    f.window = 20;
    f.window_kv_offsets = true;
    f.indptr64 = true;
    f.logit_cap = 6.0f;
    f.k_scale = 0.5f;
    f.v_scale = 1.7f;
    cs.push_back(f);
    ExtendCase d{"fp8_vs_16bit_bf16_d13", 128, true, 4, 2, 13, 13, {30, 3}, {20, 9}};
    d.index64 = false;
    cs.push_back(d);
    for (ExtendCase c : cs) {
        c.fp8_cache = true;
        const ExtendProblem p8 = make_problem(c);
        const ExtendProblem p16 = reference::with_16bit_cache(p8);
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            std::vector<float> l8, l16;
            const auto o8 = run(p8, c, v, &l8), o16 = run(p16, c, v, &l16);
            const char *form = v == LB_BOUNDED ? " bounded\n" : " full-width\n";
            EXPECT_EQ(0, std::memcmp(o8.data(), o16.data(), o8.size() * 2))
                << "o differs between the fp8 and the 16-bit cache" << form << c;
            EXPECT_EQ(0, std::memcmp(l8.data(), l16.data(), l8.size() * 4))
                << "lse differs by up to " << max_abs_diff(l8, l16) << form << c;
        }
    }
}

// skip_prefix == the same batch without a prefix when nothing depends on P (no xai, no
// mask): every kv_indptr entry 0. skip_extend + skip_prefix: every row o = 0, lse = -inf.
TEST(ExtendMetamorphic, SkipPrefixEqualsNoPrefix) {
    ExtendCase c{"skip_prefix_meta", 121, true, 8, 2, 64, 64, {50, 9, 20}, {30, 70, 0}};
    c.window = 15;
    ExtendProblem skip = make_problem(c);
    skip.skip_prefix = true;
    ExtendProblem none = skip;
    none.skip_prefix = false;
    none.kv_indptr.assign(size_t(none.B + 1), 0);
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        std::vector<float> l1, l2;
        const auto o1 = run(skip, c, v, &l1), o2 = run(none, c, v, &l2);
        EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), o1.size() * 2)) << c;
        EXPECT_EQ(0, std::memcmp(l1.data(), l2.data(), l1.size() * 4)) << c;
    }
    skip.skip_extend = true;
    std::vector<float> l;
    const auto o = run(skip, c, LB_BOUNDED, &l);
    for (uint16_t x : o) ASSERT_EQ(skip.to_f(x), 0.0f);
    for (float x : l) ASSERT_TRUE(std::isinf(x) && x < 0);
}

// No query rows (B = 0, or all E_b = 0): OK, nothing written.
TEST(ExtendEdge, NoRows) {
    ExtendCase c{"no_rows", 5, true, 8, 2, 128, 128, {0, 0}, {10, 3}};
    const ExtendProblem p = make_problem(c);
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf);
    EXPECT_EQ(lb_extend_attention_fwd(&buf.args, cpu_device()), LB_OK) << lb_last_error();
    ExtendCase c0{"bs0", 5, true, 8, 2, 128, 128, {}, {}};
    const ExtendProblem p0 = make_problem(c0);
    ExtendBuffers buf0;
    make_args(p0, c0, LB_BOUNDED, &buf0);
    EXPECT_EQ(lb_extend_attention_fwd(&buf0.args, cpu_device()), LB_OK) << lb_last_error();
}

// lse_extend in any layout: a [T, Hq] view of [Hq, T] storage (torch's lse.t(), strides
// (1, T)) gets the same values as the contiguous one, and nothing outside its elements.
TEST(ExtendLayouts, TransposedLseEqualsContiguous) {
    ExtendCase c{"transposed_lse", 7, true, 8, 2, 64, 64, {40, 3, 17}, {25, 0, 9}};
    c.window = 20;
    const ExtendProblem p = make_problem(c);
    std::vector<float> lse_rows;
    const std::vector<uint16_t> o_rows = run(p, c, LB_BOUNDED, &lse_rows);

    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf);
    std::vector<float> by_head(size_t(p.Hq * p.T + 5), kPoisonLse);  // [Hq, T] storage, 5 spare
    buf.args.lse_extend = lb_tensor{by_head.data(), LB_FLOAT32, 2, {p.T, p.Hq}, {1, p.T}};
    ASSERT_EQ(lb_extend_attention_fwd(&buf.args, cpu_device()), LB_OK) << lb_last_error();
    EXPECT_EQ(0, std::memcmp(buf.o.data(), o_rows.data(), o_rows.size() * 2)) << "o differs with a transposed lse";
    for (int64_t t = 0; t < p.T; t++) {
        for (int64_t h = 0; h < p.Hq; h++) {
            ASSERT_EQ(by_head[size_t(h * p.T + t)], lse_rows[size_t(t * p.Hq + h)]) << "row " << t << " head " << h;
        }
    }
    for (size_t i = size_t(p.Hq * p.T); i < by_head.size(); i++) ASSERT_EQ(by_head[i], kPoisonLse) << "spare " << i;
}

// MLA's absorbed layout: v_buffer and v_extend are views of the first 512 dims of k_buffer
// and k_extend (row stride 576), bit-identical to the call on materialised copies.
TEST(ExtendLayouts, MlaValuesAsKeyViewsEqualCopies) {
    ExtendCase c{"mla_absorbed_views", 9, true, 8, 1, 576, 512, {20, 37, 5}, {30, 0, 12}};
    c.window = 16;
    ExtendProblem p = make_problem(c);
    absorb_values(&p);
    std::vector<float> lse_copied;
    const std::vector<uint16_t> o_copied = run(p, c, LB_BOUNDED, &lse_copied);
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf);
    values_as_key_views(p, &buf.args);
    ASSERT_EQ(lb_extend_attention_fwd(&buf.args, cpu_device()), LB_OK) << lb_last_error();
    // (lb_last_variant: the CPU form reads V through the views, whatever they alias.)
    EXPECT_STREQ(lb_last_variant(), "lb_k7_cpu_bounded_bf16_d576_512");
    // A refused call ran no variant.
    EXPECT_NE(lb_extend_attention_fwd(nullptr, cpu_device()), LB_OK);
    EXPECT_STREQ(lb_last_variant(), "");
    EXPECT_EQ(0, std::memcmp(buf.o.data(), o_copied.data(), o_copied.size() * 2)) << "o differs";
    EXPECT_EQ(0, std::memcmp(buf.lse.data(), lse_copied.data(), lse_copied.size() * 4)) << "lse differs";
}

// Inputs read through expanded views (stride 0 outside the head dim, torch's expand()): q
// with every head the same row ([T, 1, Lq] expanded to Hq heads) and a cache whose slots all
// hold one slot's K and V ([1, Hkv, L] expanded to num_slots slots) give the bits of the same
// call on the materialised tensors.
TEST(ExtendLayouts, BroadcastInputsEqualMaterialised) {
    ExtendCase c{"broadcast_inputs", 8, true, 8, 2, 64, 64, {40, 3, 17}, {25, 0, 9}};
    c.window = 20;
    ExtendProblem p = make_problem(c);
    // Materialise the broadcasts in the problem: q's heads copy head 0, every slot slot 0.
    for (int64_t t = 0; t < p.T; t++) {
        for (int64_t h = 1; h < p.Hq; h++) {
            for (int64_t d = 0; d < p.Lq; d++) p.q[size_t((t * p.Hq + h) * p.Lq + d)] = p.q[size_t(t * p.Hq * p.Lq + d)];
        }
    }
    const size_t k_slot = size_t(p.Hkv * p.Lq), v_slot = size_t(p.Hkv * p.Lv);
    for (int64_t slot = 1; slot < p.num_slots; slot++) {
        std::copy(p.k_buf.begin(), p.k_buf.begin() + long(k_slot), p.k_buf.begin() + long(size_t(slot) * k_slot));
        std::copy(p.v_buf.begin(), p.v_buf.begin() + long(v_slot), p.v_buf.begin() + long(size_t(slot) * v_slot));
    }
    std::vector<float> lse_materialised;
    const std::vector<uint16_t> o_materialised = run(p, c, LB_BOUNDED, &lse_materialised);

    std::vector<uint16_t> q_row(size_t(p.T * p.Lq));  // [T, 1, Lq]
    for (int64_t t = 0; t < p.T; t++) {
        std::copy_n(p.q.begin() + long(t * p.Hq * p.Lq), p.Lq, q_row.begin() + long(t * p.Lq));
    }
    const lb_dtype dt = p.bf16 ? LB_BFLOAT16 : LB_FLOAT16;
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf);
    buf.args.q_extend = lb_tensor{q_row.data(), dt, 3, {p.T, p.Hq, p.Lq}, {p.Lq, 0, 1}};
    buf.args.k_buffer = lb_tensor{p.k_buf.data(), dt, 3, {p.num_slots, p.Hkv, p.Lq}, {0, p.Lq, 1}};
    buf.args.v_buffer = lb_tensor{p.v_buf.data(), dt, 3, {p.num_slots, p.Hkv, p.Lv}, {0, p.Lv, 1}};
    ASSERT_EQ(lb_extend_attention_fwd(&buf.args, cpu_device()), LB_OK) << lb_last_error();
    EXPECT_EQ(0, std::memcmp(buf.o.data(), o_materialised.data(), o_materialised.size() * 2)) << "o differs";
    EXPECT_EQ(0, std::memcmp(buf.lse.data(), lse_materialised.data(), lse_materialised.size() * 4)) << "lse differs";

    // An output may not overlap itself: o_extend with a stride-0 head dimension is refused by name.
    ExtendBuffers bad;
    make_args(p, c, LB_BOUNDED, &bad);
    bad.args.o_extend.strides[1] = 0;
    EXPECT_EQ(lb_extend_attention_fwd(&bad.args, cpu_device()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lb_last_error()).find("o_extend"), std::string::npos) << lb_last_error();
    for (uint16_t x : bad.o) ASSERT_EQ(x, kPoison16) << "o written by a refused call";
}

}  // namespace
}  // namespace livebound::testing
