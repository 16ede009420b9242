// K8 extend_attention_fwd_unified on the CPU (spec §3.8):
//   (a) UnifiedCpu: accuracy against the fp64 reference (reference_unified: error at most
//       2x that of the naive same-precision reference + 1e-5, every element within one ulp
//       + 1e-6; 0 where a row sees nothing), rows outside
//       [qo_indptr[0], qo_indptr[B]) (lead and tail rows added to every case) still
//       poisoned, for the bounded and the full-width variant;
//   (b) the same call bounded == full-width bit for bit;
//   (c) UnifiedVsTwoStage: K8 on the unified form of a K7 problem (unified_from_extend:
//       k_scale = v_scale = 1, no mask, no xai, 16-bit caches) == K7 within 1e-2 (SGLang
//       compares the two at 0.15; both are fp32-accumulated here, in a different key order);
//   (d) UnifiedMetamorphic.IndependentOfBatchMates: a request's bits alone, in its batch
//       and in the batch reversed (another max_len_extend) are the same;
//       UnifiedMetamorphic.Fp8CacheEqualsSixteenBitCacheOfItsValues: an fp8 cache gives the
//       bits of a 16-bit cache holding the same (exactly representable) values;
//   (e) UnifiedEdge: rows that see nothing are 0 with and without sinks (SGLang's kernel
//       returns NaN without a sink: 0/0; a deliberate difference); no rows at all writes
//       nothing;
//   (f) UnifiedErrors: a broken argument is rejected with LB_ERROR_INVALID_ARGUMENT (a
//       missing variant with LB_ERROR_UNSUPPORTED), the message names it, o is untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"
#include "reference/extend_attention_reference.h"
#include "unified_cases.h"

namespace livebound::testing {
namespace {

using reference::ExtendProblem;
using reference::UnifiedProblem;

constexpr int64_t kLeadRows = 3, kTailRows = 5;

std::vector<uint16_t> run_unified(const UnifiedProblem &p, const UnifiedCase &c, lb_variant variant) {
    UnifiedBuffers buf;
    make_unified_args(p, c, variant, &buf);
    const lb_status s = lb_extend_attention_fwd_unified(&buf.args, cpu_device());
    EXPECT_EQ(s, LB_OK) << lb_last_error() << "\n" << c;
    return buf.o;
}

// ---- (a), (b) ----

class UnifiedCpu : public ::testing::TestWithParam<UnifiedCase> {};

TEST_P(UnifiedCpu, AccurateAndTwinBitIdentical) {
    const UnifiedCase &c = GetParam();
    const UnifiedProblem p = with_padding(make_unified_problem(c), kLeadRows, kTailRows, c.seed + 3000);
    const std::vector<uint16_t> ob = run_unified(p, c, LB_BOUNDED);
    const std::vector<uint16_t> of = run_unified(p, c, LB_FULL_WIDTH);
    const auto r64 = reference::reference_unified_fp64(p);
    const auto r32 = reference::reference_unified_naive_fp32(p);
    expect_unified_accurate(p, r64, r32, ob, c.name + " bounded");
    expect_unified_accurate(p, r64, r32, of, c.name + " full-width");
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < ob.size(); i++) {
        if (ob[i] != of[i] && differ++ == 0) first = i;
    }
    EXPECT_EQ(differ, 0u) << differ << " o elements differ between bounded and full-width; first: element " << first
                          << "\n" << c;
}

INSTANTIATE_TEST_SUITE_P(Cases, UnifiedCpu, ::testing::ValuesIn(unified_cases()),
                         [](const ::testing::TestParamInfo<UnifiedCase> &i) { return i.param.name; });

// ---- (c) K8 == K7 on the same problem ----

// The K7 CPU cases whose shape has a K8 CPU variant (not 576/512), without the K7-only
// features (skip flags; xai and k/v scales differ between K7 and K8) and with a 16-bit
// cache (unified_from_extend moves the 16-bit extend K/V into the cache). Custom masks
// included: in both kernels the mask replaces the causal rule (the span cases open keys
// above the diagonal).
std::vector<ExtendCase> two_stage_cases() {
    std::vector<ExtendCase> out;
    for (ExtendCase c : extend_cases()) {
        if (c.Lq == 576 || c.skip_prefix || c.skip_extend || c.xai_temperature_len > 0 || c.fp8_cache) {
            continue;
        }
        c.k_scale = c.v_scale = 1.0f;
        out.push_back(c);
    }
    return out;
}

class UnifiedVsTwoStage : public ::testing::TestWithParam<ExtendCase> {};

TEST_P(UnifiedVsTwoStage, MatchesK7Within1em2) {
    const ExtendCase &c = GetParam();
    const ExtendProblem e = make_problem(c);
    ExtendBuffers k7;
    make_args(e, c, LB_BOUNDED, &k7, false);
    ASSERT_EQ(lb_extend_attention_fwd(&k7.args, cpu_device()), LB_OK) << lb_last_error() << "\n" << c;
    const UnifiedProblem u = reference::unified_from_extend(e, c.seed + 7000);
    UnifiedCase uc{c.name, c.seed, c.bf16, c.Hq, c.Hkv, c.Lq, c.Lv, c.E, c.P};
    uc.index64 = c.index64;
    uc.indptr64 = c.indptr64;
    uc.extra_max_len = c.extra_max_len;
    uc.mask_indptr32 = c.mask_indptr32;
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        const std::vector<uint16_t> k8 = run_unified(u, uc, v);
        ASSERT_EQ(k8.size(), k7.o.size());
        double err = 0;
        size_t worst = 0;
        for (size_t i = 0; i < k8.size(); i++) {
            const double d = std::fabs(double(e.to_f(k8[i])) - double(e.to_f(k7.o[i])));
            if (!(d <= err)) {  // NaN counts as worst
                err = std::isnan(d) ? INFINITY : d;
                worst = i;
            }
        }
        std::printf("%s %s: max |K8 - K7| = %.3g\n", c.name.c_str(), v == LB_BOUNDED ? "bounded" : "full-width", err);
        EXPECT_LE(err, 1e-2) << "element " << worst << ": K8 " << e.to_f(k8[worst]) << " vs K7 " << e.to_f(k7.o[worst])
                             << (v == LB_BOUNDED ? " (bounded)\n" : " (full-width)\n") << c;
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, UnifiedVsTwoStage, ::testing::ValuesIn(two_stage_cases()),
                         [](const ::testing::TestParamInfo<ExtendCase> &i) { return i.param.name; });

// ---- (d) a request's output does not depend on its batch mates ----

TEST(UnifiedMetamorphic, IndependentOfBatchMates) {
    std::vector<UnifiedCase> cs;
    UnifiedCase w{"batch_window_sinks", 181, true, 8, 2, 128, 128, {100, 1, 37, 0, 64}, {30, 90, 0, 12, 5}};
    w.window = 25;
    w.sinks = true;
    cs.push_back(w);
    UnifiedCase m{"batch_mask_fp16_d64", 182, false, 8, 4, 64, 64, {70, 1, 33, 40}, {25, 60, 0, 80}};
    m.custom_mask = true;
    m.causal = false;
    cs.push_back(m);
    for (const UnifiedCase &c : cs) {
        const UnifiedProblem p = make_unified_problem(c);
        const std::vector<uint16_t> all = run_unified(p, c, LB_BOUNDED);
        auto compare = [&](const UnifiedProblem &batch, const std::vector<int64_t> &order, const std::vector<uint16_t> &got,
                           const std::string &what) {
            int64_t first = -1;
            EXPECT_EQ(rows_differing_from_batch(p, all, batch, order, got, &first), 0u)
                << "first at request " << first << ", " << what << "\n" << c;
        };
        for (int64_t b = 0; b < p.B; b++) {
            const UnifiedProblem one = subset(p, {b});
            compare(one, {b}, run_unified(one, c, LB_BOUNDED), "alone");
        }
        std::vector<int64_t> reversed;
        for (int64_t b = p.B - 1; b >= 0; b--) reversed.push_back(b);
        UnifiedCase cr = c;
        cr.extra_max_len = 77;
        const UnifiedProblem rev = subset(p, reversed);
        compare(rev, reversed, run_unified(rev, cr, LB_BOUNDED), "batch reversed, max_len_extend + 77");
    }
}

// An fp8 cache and a 16-bit cache holding the same values (every e4m3 value is exact in
// bf16 and fp16): the kernel decodes each element exactly, so the same fp32 values enter
// the same operations in the same order -- identical bits, bounded and full-width, with
// k/v scales, a window, sinks and a mask.
TEST(UnifiedMetamorphic, Fp8CacheEqualsSixteenBitCacheOfItsValues) {
    std::vector<UnifiedCase> cs;
    UnifiedCase b{"fp8_vs_16bit_bf16_d128", 186, true, 8, 2, 128, 128, {70, 1, 33, 0}, {40, 0, 90, 17}};
    b.window = 30;
    b.sinks = true;
    b.k_scale = 0.5f;
    b.v_scale = 1.7f;
    cs.push_back(b);
    UnifiedCase f{"fp8_vs_16bit_fp16_d64_mask", 187, false, 8, 4, 64, 64, {45, 20, 9}, {30, 5, 0}};
    f.custom_mask = true;
    f.logit_cap = 6.0f;
    f.k_scale = 0.5f;
    f.v_scale = 1.7f;
    cs.push_back(f);
    for (UnifiedCase c : cs) {
        c.fp8_cache = true;
        const UnifiedProblem p8 = make_unified_problem(c);
        const UnifiedProblem p16 = reference::with_16bit_cache(p8);
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            const std::vector<uint16_t> o8 = run_unified(p8, c, v), o16 = run_unified(p16, c, v);
            size_t differ = 0, first = 0;
            for (size_t i = 0; i < o8.size(); i++) {
                if (o8[i] != o16[i] && differ++ == 0) first = i;
            }
            EXPECT_EQ(differ, 0u) << differ << " o elements differ between the fp8 and the 16-bit cache; first: element "
                                  << first << " (" << p8.to_f(o8[first]) << " vs " << p8.to_f(o16[first]) << ")"
                                  << (v == LB_BOUNDED ? " bounded\n" : " full-width\n") << c;
        }
    }
}

// ---- (e) empty rows, no rows ----

// Every third row of each request sees nothing (an all-zero mask row): exactly 0 in every
// head, without sinks (no key: 0, not SGLang's 0/0 = NaN) and with them (acc = 0,
// denominator e^0); the other rows finite; the lead / tail rows poisoned; bounded ==
// full-width.
TEST(UnifiedEdge, EmptyRowsAreZeroWithAndWithoutSinks) {
    for (bool sinks : {false, true}) {
        UnifiedCase c{"empty_rows", 191, true, 8, 2, 64, 64, {20, 7, 33}, {15, 0, 40}};
        c.custom_mask = true;
        c.mask_density = 1.0f;  // every other row sees its whole causal range
        c.empty_row_every = 3;
        c.sinks = sinks;
        const UnifiedProblem p = with_padding(make_unified_problem(c), kLeadRows, kTailRows, 4191);
        const std::vector<uint16_t> ob = run_unified(p, c, LB_BOUNDED), of = run_unified(p, c, LB_FULL_WIDTH);
        EXPECT_EQ(0, std::memcmp(ob.data(), of.data(), ob.size() * 2)) << "bounded != full-width, sinks=" << sinks;
        const size_t ro = size_t(p.Hq * p.Lv);
        for (int64_t b = 0; b < p.B; b++) {
            for (int64_t m = 0; m < p.E(b); m++) {
                const bool empty = m % 3 == 2;
                const size_t row = size_t(p.qo_indptr[size_t(b)] + m);
                for (size_t i = row * ro; i < (row + 1) * ro; i++) {
                    const float x = p.to_f(ob[i]);
                    if (empty) {
                        ASSERT_EQ(x, 0.0f) << "row " << row << " (b " << b << ", m " << m << ") element " << i
                                           << ": an empty row must be 0, sinks=" << sinks;
                    } else {
                        ASSERT_TRUE(std::isfinite(x)) << "row " << row << " (b " << b << ", m " << m << ") element " << i
                                                      << " = " << x << ", sinks=" << sinks;
                    }
                }
            }
        }
        for (size_t i = 0; i < ob.size(); i++) {
            if (i < size_t(p.qo_indptr.front()) * ro || i >= size_t(p.qo_indptr.back()) * ro) {
                ASSERT_EQ(ob[i], kPoison16) << "element " << i << " outside the batch's rows written, sinks=" << sinks;
            }
        }
    }
}

TEST(UnifiedEdge, NoRowsWritesNothing) {
    UnifiedCase c{"no_rows", 5, true, 8, 2, 128, 128, {0, 0}, {10, 3}};
    const UnifiedProblem p = with_padding(make_unified_problem(c), kLeadRows, kTailRows, 4005);
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        const std::vector<uint16_t> o = run_unified(p, c, v);
        for (uint16_t x : o) ASSERT_EQ(x, kPoison16);
    }
    UnifiedProblem b0 = p;
    b0.B = 0;
    b0.qo_indptr = {int32_t(kLeadRows)};
    b0.kv_indptr = {0};
    b0.prefix_lens.clear();
    const std::vector<uint16_t> o = run_unified(b0, c, LB_BOUNDED);
    for (uint16_t x : o) ASSERT_EQ(x, kPoison16);
}

// ---- (f) argument errors ----

struct BadUnified {
    std::string test_name;
    std::string name;  // lb_last_error() must name this argument
    lb_status status;
    std::function<void(lb_extend_attention_unified_args &, UnifiedProblem &)> apply;
};
void PrintTo(const BadUnified &bad, std::ostream *os) { *os << bad.test_name; }

UnifiedCase error_case() {
    UnifiedCase c{"errors", 4343, true, 8, 2, 64, 64, {40, 3, 17}, {20, 0, 9}};
    c.window = 10;
    c.sinks = true;
    c.custom_mask = true;
    return c;
}

using Args = lb_extend_attention_unified_args;

std::vector<BadUnified> bad_unified() {
    std::vector<BadUnified> list;
    const lb_status kInvalid = LB_ERROR_INVALID_ARGUMENT;
    auto add = [&](std::string test, std::string name, lb_status status,
                   std::function<void(Args &, UnifiedProblem &)> apply) {
        list.push_back({std::move(test), std::move(name), status, std::move(apply)});
    };
    // prefix_lens
    add("PrefixLensShorterThanB", "prefix_lens", kInvalid, [](Args &a, UnifiedProblem &) { a.prefix_lens.shape[0] -= 1; });
    add("PrefixLensLongerThanB", "prefix_lens", kInvalid, [](Args &a, UnifiedProblem &) { a.prefix_lens.shape[0] += 1; });
    add("PrefixLensAbsent", "prefix_lens", kInvalid, [](Args &a, UnifiedProblem &) { a.prefix_lens = lb_tensor{}; });
    add("PrefixLensWrongDtype", "prefix_lens", kInvalid, [](Args &a, UnifiedProblem &) { a.prefix_lens.dtype = LB_UINT8; });
    add("PrefixLensPlusENotN", "prefix_lens", kInvalid, [](Args &, UnifiedProblem &p) { p.prefix_lens[1] += 1; });
    add("PrefixLensTooSmall", "prefix_lens", kInvalid, [](Args &, UnifiedProblem &p) { p.prefix_lens[0] -= 1; });
    add("PrefixLensNegative", "prefix_lens", kInvalid, [](Args &, UnifiedProblem &p) { p.prefix_lens[1] = -1; });
    // kv_indices / ranges
    add("KvIndexOutOfRange", "kv_indices", kInvalid, [](Args &, UnifiedProblem &p) { p.kv_indices[5] = p.num_slots; });
    add("KvIndexNegative", "kv_indices", kInvalid, [](Args &, UnifiedProblem &p) { p.kv_indices.back() = -1; });
    add("KvIndicesWrongDtype", "kv_indices", kInvalid, [](Args &a, UnifiedProblem &) { a.kv_indices.dtype = LB_UINT8; });
    add("KvIndptrPastIndices", "kv_indptr", kInvalid, [](Args &, UnifiedProblem &p) { p.kv_indptr[3] += 1; });
    add("QoIndptrDecreasing", "qo_indptr", kInvalid, [](Args &, UnifiedProblem &p) { p.qo_indptr[2] = p.qo_indptr[0]; });
    // (The index tensors are int32 views of p's vectors: a value changed in p is what the call
    // reads. qo_indptr = {0, 40, 43, 60} = T, kv_indptr = {0, 60, 63, 89}; qo_indptr's values
    // are checked before kv_indptr's.)
    add("QoIndptrNegative", "qo_indptr", kInvalid, [](Args &, UnifiedProblem &p) { p.qo_indptr[0] = -1; });
    add("QoIndptrPastT", "qo_indptr", kInvalid, [](Args &, UnifiedProblem &p) { p.qo_indptr[3] += 1; });
    add("KvIndptrNegative", "kv_indptr", kInvalid, [](Args &, UnifiedProblem &p) { p.kv_indptr[0] = -1; });
    add("KvIndptrDecreasing", "kv_indptr", kInvalid,
        [](Args &, UnifiedProblem &p) { p.kv_indptr[2] = p.kv_indptr[1] - 1; });
    add("QoIndptrEmpty", "qo_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.qo_indptr.shape[0] = 0; });
    add("KvIndptrLengthNotB1", "kv_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.kv_indptr.shape[0] -= 1; });
    // (int32 and int64 are both valid for qo_indptr, kv_indptr, kv_indices, prefix_lens, mask_indptr.)
    add("QoIndptrWrongDtype", "qo_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.qo_indptr.dtype = LB_UINT8; });
    add("KvIndptrWrongDtype", "kv_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.kv_indptr.dtype = LB_UINT8; });
    // custom mask
    add("MaskIndptrMissing", "mask_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.mask_indptr = lb_tensor{}; });
    add("MaskIndptrWithoutMask", "mask_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.custom_mask = lb_tensor{}; });
    add("MaskIndptrWrongDtype", "mask_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.mask_indptr.dtype = LB_UINT8; });
    add("MaskTooShort", "mask_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.custom_mask.shape[0] -= 3; });
    add("MaskWrongDtype", "custom_mask", kInvalid, [](Args &a, UnifiedProblem &) { a.custom_mask.dtype = LB_INT32; });
    add("MaskIndptrLengthNotB1", "mask_indptr", kInvalid, [](Args &a, UnifiedProblem &) { a.mask_indptr.shape[0] -= 1; });
    // dtypes and shapes
    add("QWrongDtype", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.dtype = LB_FLOAT32; });
    add("KBufferDtypeNotQ", "k_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.k_buffer.dtype = LB_FLOAT16; });
    add("VBufferDtypeNotQ", "v_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.v_buffer.dtype = LB_FLOAT16; });
    add("ODtypeNotQ", "o", kInvalid, [](Args &a, UnifiedProblem &) { a.o.dtype = LB_FLOAT16; });
    // fp8 (e4m3fn): the caches only, both of them (the 16-bit buffers viewed as bytes: the
    // calls are refused before anything is read).
    add("QFp8", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.dtype = LB_FLOAT8_E4M3FN; });
    add("OFp8", "o", kInvalid, [](Args &a, UnifiedProblem &) { a.o.dtype = LB_FLOAT8_E4M3FN; });
    add("KBufferFp8VBuffer16Bit", "v_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.k_buffer.dtype = LB_FLOAT8_E4M3FN; });
    add("VBufferFp8KBuffer16Bit", "v_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.v_buffer.dtype = LB_FLOAT8_E4M3FN; });
    add("KBufferUint8", "k_buffer", kInvalid, [](Args &a, UnifiedProblem &) {
        a.k_buffer.dtype = LB_UINT8;
        a.v_buffer.dtype = LB_UINT8;
    });
    add("SinksWrongDtype", "sinks", kInvalid, [](Args &a, UnifiedProblem &) { a.sinks.dtype = LB_BFLOAT16; });
    add("ORowsNotT", "o", kInvalid, [](Args &a, UnifiedProblem &) { a.o.shape[0] -= 1; });
    add("KBufferHeadsNotDividingHq", "k_buffer", kInvalid, [](Args &a, UnifiedProblem &) {
        a.k_buffer.shape[1] = 3;
        a.k_buffer.strides[0] = 3 * 64;
    });
    // q: the rules of a tensor (q is the first tensor checked).
    add("QWrongNdim", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.ndim = 2; });
    add("QNullData", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.data = nullptr; });
    add("QNegativeExtent", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.shape[0] = -1; });
    add("QStrideNegative", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.strides[0] = -1; });
    add("QLastDimStrided", "q", kInvalid, [](Args &a, UnifiedProblem &) { a.q.strides[2] = 2; });
    // One extent each, of a tensor whose earlier checks all pass (a smaller extent keeps the
    // view inside its storage).
    add("KBufferHeadDimNotLq", "k_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.k_buffer.shape[2] = 32; });
    add("KBufferNoSlot", "k_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.k_buffer.shape[0] = 0; });
    add("VBufferSlotsNotKBuffer", "v_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.v_buffer.shape[0] -= 1; });
    add("VBufferHeadsNotHkv", "v_buffer", kInvalid, [](Args &a, UnifiedProblem &) { a.v_buffer.shape[1] = 1; });
    add("OHeadsNotHq", "o", kInvalid, [](Args &a, UnifiedProblem &) { a.o.shape[1] = 4; });
    add("ODimNotLv", "o", kInvalid, [](Args &a, UnifiedProblem &) { a.o.shape[2] = 32; });
    add("SinksNotHq", "sinks", kInvalid, [](Args &a, UnifiedProblem &) { a.sinks.shape[0] = 7; });
    // (Stride 2 over Hq = 8 floats: refused before anything is read.)
    add("SinksStride2", "sinks", kInvalid, [](Args &a, UnifiedProblem &) { a.sinks.strides[0] = 2; });
    // scalars
    add("MaxLenExtendNegative", "max_len_extend", kInvalid, [](Args &a, UnifiedProblem &) { a.max_len_extend = -1; });
    add("MaxLenExtendBelowLongest", "max_len_extend", kInvalid, [](Args &a, UnifiedProblem &) { a.max_len_extend = 39; });
    add("SmScaleNegative", "sm_scale", kInvalid, [](Args &a, UnifiedProblem &) { a.sm_scale = -1; });
    add("LogitCapNaN", "logit_cap", kInvalid,
        [](Args &a, UnifiedProblem &) { a.logit_cap = std::numeric_limits<float>::quiet_NaN(); });
    add("KScaleInf", "k_scale", kInvalid, [](Args &a, UnifiedProblem &) { a.k_scale = std::numeric_limits<float>::infinity(); });
    add("VScaleNaN", "v_scale", kInvalid,
        [](Args &a, UnifiedProblem &) { a.v_scale = std::numeric_limits<float>::quiet_NaN(); });
    add("XaiTemperatureLenOne", "xai_temperature_len", kInvalid, [](Args &a, UnifiedProblem &) { a.xai_temperature_len = 1; });
    add("UnknownVariant", "variant", kInvalid, [](Args &a, UnifiedProblem &) { a.variant = static_cast<lb_variant>(5); });
    // valid, but not built
    // (36: above the scalar bucket and not a multiple of 8, with a 16-bit and with an fp8
    // cache: refused before anything is read.)
    add("HeadDim36NotBuilt", "q", LB_ERROR_UNSUPPORTED, [](Args &a, UnifiedProblem &) {
        for (lb_tensor *t : {&a.q, &a.o, &a.k_buffer, &a.v_buffer}) t->shape[2] = 36;
    });
    add("Fp8CacheHeadDim36NotBuilt", "q", LB_ERROR_UNSUPPORTED, [](Args &a, UnifiedProblem &) {
        for (lb_tensor *t : {&a.q, &a.o, &a.k_buffer, &a.v_buffer}) t->shape[2] = 36;
        a.k_buffer.dtype = a.v_buffer.dtype = LB_FLOAT8_E4M3FN;
    });
    return list;
}

class UnifiedErrors : public ::testing::TestWithParam<BadUnified> {};

TEST_P(UnifiedErrors, RejectedByNameAndNothingWritten) {
    const BadUnified &bad = GetParam();
    const UnifiedCase c = error_case();
    UnifiedProblem p = make_unified_problem(c);
    UnifiedBuffers buf;
    make_unified_args(p, c, LB_BOUNDED, &buf);
    bad.apply(buf.args, p);
    const lb_status s = lb_extend_attention_fwd_unified(&buf.args, cpu_device());
    const std::string msg = lb_last_error();
    EXPECT_EQ(s, bad.status) << bad.test_name << ": " << msg;
    EXPECT_NE(msg.find("'" + bad.name + "'"), std::string::npos) << "message does not name '" << bad.name << "': " << msg;
    for (uint16_t x : buf.o) ASSERT_EQ(x, kPoison16) << "o written: " << bad.test_name;
}

INSTANTIATE_TEST_SUITE_P(Bad, UnifiedErrors, ::testing::ValuesIn(bad_unified()),
                         [](const ::testing::TestParamInfo<BadUnified> &i) { return i.param.test_name; });

TEST(UnifiedErrorsMisc, NullArgs) {
    EXPECT_EQ(lb_extend_attention_fwd_unified(nullptr, cpu_device()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lb_last_error()).find("'args'"), std::string::npos) << lb_last_error();
}

}  // namespace
}  // namespace livebound::testing
