// K8 extend_attention_fwd_unified on the test CUDA device (LIVEBOUND_TEST_DEVICE, default 0;
// cuda_test_util.h), on caller-owned device memory and a caller-created non-blocking stream (the K7 CUDA suite's setup: every host buffer gets a
// device copy of its whole storage, o poisoned, downloaded whole after the call, so the
// CPU suite's checks apply unchanged).
//   (a) CudaUnifiedAccuracy: a few cases per CUDA variant (bounded bf16 and fp16 32/32
//       (any dims), bf16 64/64, 128/128, fp16 128/128, bf16 and fp16 256/256; full-width
//       bf16 128/128; each for 16-bit and for fp8 (e4m3fn) caches; int32 and int64 index
//       tensors) against the fp64 reference with the CPU
//       suite's tolerance (unified_cases.h), empty (0) rows included, and the lead / tail
//       rows outside [qo_indptr[0], qo_indptr[B]) still poisoned;
//   (b) CudaUnifiedTwin: bounded == full-width bit for bit (bf16 128/128, 16-bit and fp8
//       caches), whole o;
//   (c) CudaUnifiedUnsupported: forms the CUDA build lacks are refused with
//       LB_ERROR_UNSUPPORTED naming 'q', writing nothing; CudaUnifiedErrors: host memory,
//       memory of another device (2 devices) and, at MLA's 576/512, a q/k_buffer/v_buffer
//       layout the tensor-core kernel cannot read, each refused by name, writing nothing.
//   (d) CudaUnifiedGarbage: garbage in the device-held index values (kv_indices,
//       kv_indptr, prefix_lens, mask_indptr, qo_indptr) is clamped: LB_OK, no fault, poison
//       kept outside the batch's rows and the clean requests' rows bit-identical to a
//       clean call's.
// A built variant that returns LB_ERROR_UNSUPPORTED is a failure. Every test skips, saying
// why, without a driver or a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "cuda_test_util.h"  // DeviceBuffer, CudaFixture, cuda_error
#include "device_args.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "unified_cases.h"

namespace livebound::testing {
namespace {

using reference::UnifiedProblem;

constexpr int64_t kLeadRows = 3, kTailRows = 5;

using K8DeviceArgs = AttentionDeviceArgs<lb_extend_attention_unified_args>;
using Member = K8DeviceArgs::Member;
using NamedMember = K8DeviceArgs::Named;
const auto &kTensors = kUnifiedTensors;  // (device_args.h)

// The K8 block's device copies, with its output o.
struct DeviceArgs : K8DeviceArgs {
    std::string mirror(const lb_extend_attention_unified_args &h) { return K8DeviceArgs::mirror(h, kTensors); }
    std::string download_o() const { return download(&lb_extend_attention_unified_args::o); }
};

std::string describe(const UnifiedCase &c, lb_variant v) {
    std::ostringstream os;
    os << c << (v == LB_BOUNDED ? " bounded" : " full-width") << " on " << cuda_label(test_device());
    return os.str();
}

class CudaUnifiedBase : public CudaFixture {
protected:
    // One call on stream_ with every tensor mirrored to the device (o poisoned); o
    // downloaded whole into *o. With `status`, the call's status and lb_last_error() go to
    // *status and *message (and any status is a success here); without, only LB_OK is.
    ::testing::AssertionResult call(const UnifiedProblem &p, const UnifiedCase &c, lb_variant variant, std::vector<uint16_t> *o,
                                    lb_status *status = nullptr, std::string *message_out = nullptr) {
        UnifiedBuffers buf;
        make_unified_args(p, c, variant, &buf);
        DeviceArgs d;
        std::string error = d.mirror(buf.args);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_status s = lb_extend_attention_fwd_unified(&d.args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        if (status) *status = s;
        if (message_out) *message_out = message;
        error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_));
        if (error.empty()) error = d.download_o();
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        *o = std::move(buf.o);
        if (s != LB_OK && status == nullptr) {
            return ::testing::AssertionFailure() << "status " << s << ": " << message
                                                 << (s == LB_ERROR_UNSUPPORTED ? " (a built CUDA variant is missing)" : "");
        }
        return ::testing::AssertionSuccess();
    }
};

// ---- (a) accuracy per variant ----

struct AccuracyParam {
    UnifiedCase c;
    lb_variant variant;
};
void PrintTo(const AccuracyParam &a, std::ostream *os) { *os << describe(a.c, a.variant); }

std::vector<AccuracyParam> accuracy_params() {
    std::vector<AccuracyParam> out;
    // bf16 128/128 (bounded and full-width): uneven causal, window with dead tiles, mask +
    // sinks + non-causal window, xai + cap + k/v scales.
    {
        UnifiedCase a{"bf16_d128_uneven_causal", 211, true, 8, 2, 128, 128, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}};
        UnifiedCase w{"bf16_d128_window_dead_tiles", 212, true, 8, 2, 128, 128, {130, 7, 65}, {90, 300, 0}};
        w.window = 32;
        w.extra_max_len = 45;
        UnifiedCase m{"bf16_d128_mask_noncausal_window_sinks", 213, true, 8, 2, 128, 128, {50, 7, 33}, {40, 0, 12}};
        m.custom_mask = true;
        m.causal = false;
        m.window = 11;
        m.mask_density = 0.3f;
        m.sinks = true;
        UnifiedCase x{"bf16_d128_xai_cap_scales", 214, true, 8, 2, 128, 128, {60, 30, 9}, {10, 70, 0}};
        x.xai_temperature_len = 40;
        x.logit_cap = 8.0f;
        x.k_scale = 0.75f;
        x.v_scale = 1.25f;
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            for (const UnifiedCase &c : {a, w, m, x}) out.push_back({c, v});
        }
    }
    // bf16 64/64 bounded: GQA 4:1 window; causal mask with empty rows (0) and no sink.
    {
        UnifiedCase g{"bf16_d64_gqa4_window", 221, true, 8, 2, 64, 64, {45, 90, 3}, {100, 0, 7}};
        g.window = 50;
        g.extra_max_len = 40;
        UnifiedCase e{"bf16_d64_mask_empty_rows", 222, true, 8, 4, 64, 64, {40, 9, 21}, {10, 33, 0}};
        e.custom_mask = true;
        e.empty_row_every = 5;
        e.window = 24;
        out.push_back({g, LB_BOUNDED});
        out.push_back({e, LB_BOUNDED});
    }
    // fp16 128/128 bounded: non-causal with scales and empty requests; GQA 8:1 cap + sinks.
    {
        UnifiedCase n{"fp16_d128_noncausal_scales", 231, false, 8, 2, 128, 128, {0, 50, 0, 70}, {10, 30, 0, 5}};
        n.causal = false;
        n.window = 7;
        n.k_scale = 1.5f;
        n.v_scale = 0.5f;
        UnifiedCase s{"fp16_d128_gqa8_cap_sinks", 232, false, 8, 1, 128, 128, {97, 12, 40}, {60, 5, 0}};
        s.logit_cap = 5.0f;
        s.sinks = true;
        s.sm_scale = 0.1f;
        s.window = 20;
        out.push_back({n, LB_BOUNDED});
        out.push_back({s, LB_BOUNDED});
    }
    // Head dims other than 64 / 128: bf16 96 with a window (bounded: its own tensor-core
    // variant; full-width: the 128/128 SIMT bucket, lanes past the dims masked), fp16 80
    // non-causal (the fp16 128/128 SIMT bucket), bf16 80 (the padded tensor-core p96).
    {
        UnifiedCase d{"bf16_d96_window", 261, true, 8, 2, 96, 96, {70, 9, 33}, {40, 0, 100}};
        d.window = 40;
        UnifiedCase e{"fp16_d80_noncausal", 262, false, 8, 4, 80, 80, {45, 20}, {30, 0}};
        e.causal = false;
        UnifiedCase p{"bf16_d80_padded_causal", 263, true, 8, 2, 80, 80, {50, 7, 33}, {40, 0, 12}};
        out.push_back({d, LB_BOUNDED});
        out.push_back({d, LB_FULL_WIDTH});
        out.push_back({e, LB_BOUNDED});
        out.push_back({p, LB_BOUNDED});
    }
    // The scalar 32/32 bucket (SGLang's test dim 13, and 20) and the 256/256 buckets, bf16
    // and fp16, 16-bit and fp8 caches.
    {
        UnifiedCase a{"bf16_d13_causal_window", 264, true, 8, 2, 13, 13, {40, 3, 17}, {25, 0, 9}};
        a.window = 11;
        UnifiedCase b{"fp16_d20_noncausal_sinks", 265, false, 4, 2, 20, 20, {33, 0, 8}, {5, 40, 0}};
        b.causal = false;
        b.sinks = true;
        UnifiedCase c{"fp8_fp16_d13_scales", 266, false, 8, 2, 13, 13, {40, 3}, {25, 9}};
        c.fp8_cache = true;
        c.k_scale = 0.5f;
        c.v_scale = 1.7f;
        UnifiedCase d{"bf16_d256_window", 267, true, 8, 4, 256, 256, {70, 1, 33}, {40, 90, 0}};
        d.window = 30;
        UnifiedCase e{"fp16_d256_mask", 268, false, 8, 2, 256, 256, {45, 20}, {30, 0}};
        e.custom_mask = true;
        UnifiedCase f{"fp8_bf16_d160_sinks", 269, true, 8, 2, 160, 160, {50, 7}, {40, 12}};
        f.fp8_cache = true;
        f.sinks = true;
        for (const UnifiedCase &u : {a, b, c, d, e, f}) out.push_back({u, LB_BOUNDED});
    }
    // Lq != Lv on tensor cores: 192/128 (its own variant) and MLA's 576/512 (one kv head, O
    // split over four warps): bf16 and fp16, each with a 16-bit and an fp8 cache.
    {
        UnifiedCase a{"bf16_d192_128_window", 291, true, 8, 2, 192, 128, {70, 9, 33}, {40, 0, 100}};
        a.window = 40;
        UnifiedCase m{"bf16_mla_576_512_causal", 292, true, 16, 1, 576, 512, {50, 7, 33}, {40, 0, 12}};
        UnifiedCase n{"bf16_mla_576_512_noncausal_sinks", 293, true, 8, 1, 576, 512, {20, 37}, {30, 0}};
        n.causal = false;
        n.sinks = true;
        n.window = 16;
        UnifiedCase f{"fp16_mla_576_512_causal_window", 294, false, 16, 1, 576, 512, {40, 9}, {25, 60}};
        f.window = 24;
        UnifiedCase b8{"fp8_bf16_mla_576_512_scales", 295, true, 8, 1, 576, 512, {33, 5}, {12, 40}};
        b8.fp8_cache = true;
        b8.k_scale = 0.5f;
        b8.v_scale = 1.7f;
        UnifiedCase f8{"fp8_fp16_mla_576_512_mask_sinks", 296, false, 8, 1, 576, 512, {17, 30}, {0, 21}};
        f8.fp8_cache = true;
        f8.custom_mask = true;
        f8.sinks = true;
        f8.index64 = false;
        for (const UnifiedCase &u : {a, m, n, f, b8, f8}) out.push_back({u, LB_BOUNDED});
    }
    // int32 and int64 index tensors on the same variants (each argument on its own).
    {
        UnifiedCase a{"bf16_d128_all_int32_sinks", 271, true, 8, 2, 128, 128, {130, 1, 33, 64}, {40, 0, 200, 17}};
        a.index64 = false;
        a.sinks = true;
        a.window = 60;
        UnifiedCase b{"fp16_d128_indptr64_index32_mask", 272, false, 8, 2, 128, 128, {70, 9, 40}, {25, 60, 0}};
        b.indptr64 = true;
        b.index64 = false;
        b.custom_mask = true;
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) out.push_back({a, v});
        out.push_back({b, LB_BOUNDED});
    }
    // fp8 (e4m3fn) caches (tensor cores at bf16 128/128, SIMT otherwise): bf16 128/128
    // bounded and full-width, bf16 64/64, fp16 128/128 and fp16 64/64 (the 128/128 bucket),
    // bf16 80/80 (the 128/128 bucket); k/v scales, windows, masks, sinks, cap, xai, index
    // dtypes.
    {
        UnifiedCase a{"fp8_bf16_d128_uneven_scales", 281, true, 8, 2, 128, 128, {300, 1, 65, 0, 130}, {200, 0, 500, 17, 64}};
        a.fp8_cache = true;
        a.k_scale = 0.5f;
        a.v_scale = 1.7f;
        a.indptr64 = true;
        UnifiedCase m{"fp8_bf16_d128_mask_noncausal_window_sinks", 282, true, 8, 2, 128, 128, {50, 7, 33}, {40, 0, 12}};
        m.fp8_cache = true;
        m.custom_mask = true;
        m.causal = false;
        m.window = 11;
        m.mask_density = 0.3f;
        m.sinks = true;
        m.index64 = false;
        UnifiedCase x{"fp8_bf16_d128_xai_cap_window", 283, true, 8, 2, 128, 128, {60, 30, 9}, {10, 70, 0}};
        x.fp8_cache = true;
        x.xai_temperature_len = 40;
        x.logit_cap = 8.0f;
        x.window = 32;
        x.extra_max_len = 45;
        for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
            for (const UnifiedCase &c : {a, m, x}) out.push_back({c, v});
        }
        UnifiedCase g{"fp8_bf16_d64_gqa4_window_scales", 284, true, 8, 2, 64, 64, {45, 90, 3}, {100, 0, 7}};
        g.fp8_cache = true;
        g.window = 50;
        g.k_scale = 0.5f;
        g.v_scale = 1.7f;
        g.indptr64 = true;
        g.index64 = false;
        UnifiedCase f{"fp8_fp16_d128_noncausal_scales", 285, false, 8, 2, 128, 128, {0, 50, 0, 70}, {10, 30, 0, 5}};
        f.fp8_cache = true;
        f.causal = false;
        f.window = 7;
        f.k_scale = 1.5f;
        f.v_scale = 0.5f;
        UnifiedCase e{"fp8_fp16_d64_mask_empty_rows", 286, false, 8, 4, 64, 64, {40, 9, 21}, {10, 33, 0}};
        e.fp8_cache = true;
        e.custom_mask = true;
        e.empty_row_every = 5;
        e.window = 24;
        UnifiedCase p{"fp8_bf16_d80_causal_sinks", 287, true, 8, 2, 80, 80, {50, 7, 33}, {40, 0, 12}};
        p.fp8_cache = true;
        p.sinks = true;
        for (const UnifiedCase &c : {g, f, e, p}) out.push_back({c, LB_BOUNDED});
    }
    return out;
}

// The tensor-core K8 variants of cmake/families/extend_attention.cmake, written out here (an
// oracle independent of the build's generated list): the runtime runs one of them for these
// facts (the suite's tensors are contiguous and cuMemAlloc-aligned); any index dtypes. A
// padded variant serves every Lq = Lv <= d that is a multiple of 8, the others exactly their
// Lq / Lv (which differ for 192/128 and MLA's 576/512).
bool unified_tensor_core_built(const UnifiedCase &c, lb_variant variant) {
    struct Built {
        lb_variant form;
        bool bf16;
        int64_t dqk, dv;
        bool padded;
        bool fp8_cache;
    };
    static const Built built[] = {
        {LB_BOUNDED, true, 64, 64, false, false},    {LB_BOUNDED, true, 96, 96, false, false},
        {LB_BOUNDED, true, 96, 96, true, false},     {LB_BOUNDED, true, 128, 128, false, false},
        {LB_BOUNDED, false, 128, 128, false, false}, {LB_FULL_WIDTH, true, 128, 128, false, false},
        {LB_BOUNDED, true, 128, 128, false, true},   {LB_FULL_WIDTH, true, 128, 128, false, true},
        {LB_BOUNDED, true, 192, 128, false, false},  {LB_BOUNDED, true, 576, 512, false, false},
        {LB_BOUNDED, false, 576, 512, false, false}, {LB_BOUNDED, true, 576, 512, false, true},
        {LB_BOUNDED, false, 576, 512, false, true},
    };
    for (const Built &b : built) {
        const bool serves = b.padded ? c.Lq == c.Lv && c.Lq <= b.dqk && c.Lq % 8 == 0 : c.Lq == b.dqk && c.Lv == b.dv;
        if (serves && b.form == variant && b.bf16 == c.bf16 && b.fp8_cache == c.fp8_cache) return true;
    }
    return false;
}

class CudaUnifiedAccuracy : public CudaUnifiedBase, public ::testing::WithParamInterface<AccuracyParam> {};

TEST_P(CudaUnifiedAccuracy, MatchesFp64ReferenceAndKeepsPoison) {
    const UnifiedCase &c = GetParam().c;
    const lb_variant v = GetParam().variant;
    const UnifiedProblem p = with_padding(make_unified_problem(c), kLeadRows, kTailRows, c.seed + 3000);
    std::vector<uint16_t> o;
    ASSERT_TRUE(call(p, c, v, &o)) << describe(c, v);
    const bool tc = unified_tensor_core_built(c, v);
    expect_unified_accurate(p, reference::reference_unified_fp64(p), reference::reference_unified_naive_fp32(p, tc), o,
                            describe(c, v) + (tc ? " [tensor cores]" : ""), tc);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaUnifiedAccuracy, ::testing::ValuesIn(accuracy_params()),
                         [](const ::testing::TestParamInfo<AccuracyParam> &i) {
                             return i.param.c.name + (i.param.variant == LB_BOUNDED ? "_bounded" : "_full");
                         });

// ---- (b) bounded == full-width, bf16 128/128 (16-bit and fp8 caches) ----

using CudaUnifiedTwin = CudaUnifiedBase;

// Two calls' o, element for element.
void expect_same_bits(const std::vector<uint16_t> &a, const std::vector<uint16_t> &b, const std::string &what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < a.size(); i++) {
        if (a[i] != b[i] && differ++ == 0) first = i;
    }
    EXPECT_EQ(differ, 0u) << differ << " o elements differ; first: element " << first << "\n" << what;
}

TEST_F(CudaUnifiedTwin, BoundedEqualsFullWidthBitForBit) {
    std::vector<UnifiedCase> cs;
    UnifiedCase a{"twin_uneven_window", 241, true, 8, 2, 128, 128, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}};
    a.window = 40;
    a.extra_max_len = 33;
    cs.push_back(a);
    UnifiedCase m{"twin_mask_sinks_empty_rows", 242, true, 8, 2, 128, 128, {70, 1, 33, 40}, {25, 60, 0, 80}};
    m.custom_mask = true;
    m.empty_row_every = 4;
    m.sinks = true;
    cs.push_back(m);
    UnifiedCase n{"twin_mask_empty_rows", 243, true, 8, 8, 128, 128, {33, 64}, {5, 0}};
    n.custom_mask = true;
    n.causal = false;
    n.empty_row_every = 3;
    cs.push_back(n);
    UnifiedCase x{"twin_noncausal_xai", 244, true, 8, 4, 128, 128, {97, 12}, {0, 50}};
    x.causal = false;
    x.window = 70;
    x.xai_temperature_len = 30;
    cs.push_back(x);
    UnifiedCase f{"twin_fp8_window_sinks_scales", 245, true, 8, 2, 128, 128, {150, 1, 33, 0, 64}, {40, 0, 200, 17, 0}};
    f.fp8_cache = true;
    f.window = 40;
    f.sinks = true;
    f.k_scale = 0.5f;
    f.v_scale = 1.7f;
    f.indptr64 = true;
    cs.push_back(f);
    UnifiedCase g{"twin_fp8_mask_empty_rows_int32", 246, true, 8, 2, 128, 128, {70, 1, 33, 40}, {25, 60, 0, 80}};
    g.fp8_cache = true;
    g.custom_mask = true;
    g.empty_row_every = 4;
    g.index64 = false;
    cs.push_back(g);
    for (const UnifiedCase &c : cs) {
        const UnifiedProblem p = with_padding(make_unified_problem(c), kLeadRows, kTailRows, c.seed + 3000);
        std::vector<uint16_t> ob, of;
        ASSERT_TRUE(call(p, c, LB_BOUNDED, &ob)) << describe(c, LB_BOUNDED);
        ASSERT_TRUE(call(p, c, LB_FULL_WIDTH, &of)) << describe(c, LB_FULL_WIDTH);
        expect_same_bits(ob, of, ::testing::PrintToString(c));
    }
}

// ---- (b') MLA's absorbed layout: v_buffer a view of k_buffer's first 512 dims ----

// The same device memory (the view of k_buffer's copy) runs the values_in_keys variant (V
// fragments taken from K's, its O columns in another order); it gives the bits of the call
// on a materialised copy, which runs the variant that loads V: bf16 and fp16, 16-bit and fp8
// caches.
TEST_F(CudaUnifiedTwin, MlaValuesAsKeyViewsEqualCopies) {
    for (const char *dt : kMlaDtypes) {
        UnifiedCase c{"mla_absorbed_views", 297, true, 8, 1, 576, 512, {40, 37, 5}, {70, 0, 12}};
        c.window = 16;
        set_mla_dtype(&c, dt);
        const std::string what = describe(c, LB_BOUNDED);
        const std::string name = std::string("lb_k8_cuda_tc_bounded_") + dt + "_d576_512";
        UnifiedProblem p = with_padding(make_unified_problem(c), kLeadRows, kTailRows, c.seed + 3000);
        absorb_values(&p);
        std::vector<uint16_t> copied;
        ASSERT_TRUE(call(p, c, LB_BOUNDED, &copied)) << what;
        EXPECT_EQ(std::string(lb_last_variant()), name) << what << ": copies";
        expect_unified_accurate(p, reference::reference_unified_fp64(p), reference::reference_unified_naive_fp32(p, true),
                                copied, what + " [copies]", true);
        UnifiedBuffers buf;
        make_unified_args(p, c, LB_BOUNDED, &buf);
        buf.args.v_buffer = key_view(buf.args.k_buffer, p.Lv);
        DeviceArgs d;
        ASSERT_EQ(d.mirror(buf.args), "") << what;
        ASSERT_EQ(d.args.v_buffer.data, d.args.k_buffer.data) << what;
        ASSERT_EQ(lb_extend_attention_fwd_unified(&d.args, livebound::cuda_device(device_, stream_)), LB_OK) << lb_last_error();
        EXPECT_EQ(std::string(lb_last_variant()), name + (LIVEBOUND_VALUES_IN_KEYS_BUILT ? "_vk" : "")) << what << ": views";
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        ASSERT_EQ(d.download_o(), "") << what;
        expect_same_bits(buf.o, copied, what);
    }
}

// ---- (c) forms not built for CUDA ----

using CudaUnifiedUnsupported = CudaUnifiedBase;

TEST_F(CudaUnifiedUnsupported, NotBuiltFormsAreRefusedByName) {
    struct Form {
        UnifiedCase c;
        lb_variant variant;
    };
    // (Head-dim buckets: a variant serves the dims up to its own that are multiples of its
    // vector width, 8, or 1 for the 32/32 bucket: 44 has none. int32 index tensors are
    // served by every variant.)
    UnifiedCase f128{"fp16_d128", 252, false, 8, 2, 128, 128, {40, 3}, {10, 20}};
    UnifiedCase b256{"bf16_d256", 253, true, 8, 2, 256, 256, {40, 3}, {10, 20}};
    UnifiedCase odd{"bf16_d44", 255, true, 8, 2, 44, 44, {40, 3}, {10, 20}};
    // fp8 caches: no full-width fp16 or 256/256.
    auto fp8 = [](UnifiedCase c) {
        c.name = "fp8_" + c.name;
        c.fp8_cache = true;
        return c;
    };
    const std::vector<Form> forms = {{f128, LB_FULL_WIDTH}, {b256, LB_FULL_WIDTH},      {odd, LB_BOUNDED},
                                     {fp8(f128), LB_FULL_WIDTH}, {fp8(b256), LB_FULL_WIDTH}, {fp8(odd), LB_BOUNDED}};
    for (const Form &f : forms) {
        const UnifiedProblem p = with_padding(make_unified_problem(f.c), kLeadRows, kTailRows, f.c.seed);
        std::vector<uint16_t> o;
        lb_status status = LB_OK;
        std::string message;
        ASSERT_TRUE(call(p, f.c, f.variant, &o, &status, &message)) << describe(f.c, f.variant);
        EXPECT_EQ(status, LB_ERROR_UNSUPPORTED) << describe(f.c, f.variant) << ": " << message;
        EXPECT_NE(message.find("'q'"), std::string::npos) << "the message does not name 'q': " << message;
        size_t touched = 0;
        for (uint16_t x : o) touched += x != kPoison16;
        EXPECT_EQ(touched, 0u) << touched << " o elements written by a refused call: " << describe(f.c, f.variant);
    }
}

// ---- (c') argument errors only CUDA calls reach ----

using CudaUnifiedErrors = CudaUnifiedBase;

// o still poisoned on the host and, downloaded, on the device.
void expect_o_untouched(UnifiedBuffers &buf, const DeviceArgs &dev, const std::string &what) {
    size_t touched = 0;
    for (uint16_t x : buf.o) touched += x != kPoison16;
    EXPECT_EQ(touched, 0u) << touched << " host o elements written: " << what;
    ASSERT_EQ(dev.download_o(), "") << what;  // into buf.o
    touched = 0;
    for (uint16_t x : buf.o) touched += x != kPoison16;
    EXPECT_EQ(touched, 0u) << touched << " device o elements written: " << what;
}

UnifiedCase unified_error_case() {
    UnifiedCase c{"errors", 4343, true, 8, 2, 64, 64, {40, 3, 17}, {20, 0, 9}};
    c.window = 10;
    c.sinks = true;
    c.custom_mask = true;
    return c;
}

// Each tensor the call uses, in turn, in host memory (the others on the test device): refused
// naming it, nothing written.
TEST_F(CudaUnifiedErrors, HostPointersAreRejectedByName) {
    const UnifiedCase c = unified_error_case();
    const UnifiedProblem p = make_unified_problem(c);
    for (const NamedMember &t : kTensors) {
        const std::string name = t.name;
        UnifiedBuffers buf;
        make_unified_args(p, c, LB_BOUNDED, &buf);
        ASSERT_NE((buf.args.*t.member).data, nullptr) << name << " is absent in this case";
        DeviceArgs dev;
        ASSERT_EQ(dev.mirror(buf.args), "");
        lb_extend_attention_unified_args args = dev.args;
        (args.*t.member).data = (buf.args.*t.member).data;  // host memory
        const lb_status status = lb_extend_attention_fwd_unified(&args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE)
            << name << " in host memory: status " << status << ": " << message;
        EXPECT_NE(message.find("'" + name + "'"), std::string::npos) << name << " in host memory: " << message;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        expect_o_untouched(buf, dev, name + " in host memory");
    }
}

// Every tensor on the test device, the call on another: the first tensor checked for
// residency, q, is refused by name, naming both devices, nothing written. Needs two devices.
TEST_F(CudaUnifiedErrors, TensorsOnAnotherDeviceAreRejectedByName) {
    const int other = other_device();
    if (other < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
    const UnifiedCase c = unified_error_case();
    const UnifiedProblem p = make_unified_problem(c);
    UnifiedBuffers buf;
    make_unified_args(p, c, LB_BOUNDED, &buf);
    DeviceArgs dev;
    ASSERT_EQ(dev.mirror(buf.args), "");
    const lb_status status = lb_extend_attention_fwd_unified(&dev.args, livebound::cuda_device(other, nullptr));
    const std::string message = lb_last_error();
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find("argument 'q'"), std::string::npos) << message;
    EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
    expect_o_untouched(buf, dev, "tensors on " + cuda_label() + ", call on device " + std::to_string(other));
}

// MLA's 576/512 runs only on tensor cores (no SIMT variant serves it on CUDA): q, k_buffer
// or v_buffer with a layout they cannot read (rows 4 elements past a multiple of 8) is
// refused naming that tensor (LB_ERROR_UNSUPPORTED), writing nothing. As K7's
// CudaExtendErrors.MlaLayoutsTensorCoresCannotReadAreRefusedByName.
TEST_F(CudaUnifiedErrors, MlaLayoutsTensorCoresCannotReadAreRefusedByName) {
    const UnifiedCase c{"mla_layout", 10, true, 8, 1, 576, 512, {20, 7}, {10, 0}};
    const UnifiedProblem p = make_unified_problem(c);
    ASSERT_FALSE(p.fp8_cache);
    // A copy of [rows, heads, dim] `src` whose rows are `pad` elements longer.
    auto padded = [](const std::vector<uint16_t> &src, int64_t rows, int64_t row, int64_t pad) {
        std::vector<uint16_t> out(size_t(rows * (row + pad)), 0);
        for (int64_t r = 0; r < rows; r++) std::copy_n(src.begin() + long(r * row), row, out.begin() + long(r * (row + pad)));
        return out;
    };
    struct Broken {
        const char *name;
        Member member;
        const std::vector<uint16_t> *src;
        int64_t rows, heads, dim;
    };
    const Broken broken[] = {{"q", &lb_extend_attention_unified_args::q, &p.q, p.T, p.Hq, p.Lq},
                             {"k_buffer", &lb_extend_attention_unified_args::k_buffer, &p.k_buf, p.num_slots, p.Hkv, p.Lq},
                             {"v_buffer", &lb_extend_attention_unified_args::v_buffer, &p.v_buf, p.num_slots, p.Hkv, p.Lv}};
    for (const Broken &b : broken) {
        const int64_t row = b.heads * b.dim;
        std::vector<uint16_t> storage = padded(*b.src, b.rows, row, 4);
        UnifiedBuffers buf;
        make_unified_args(p, c, LB_BOUNDED, &buf);
        buf.args.*b.member = lb_tensor{storage.data(), LB_BFLOAT16, 3, {b.rows, b.heads, b.dim}, {row + 4, b.dim, 1}};
        DeviceArgs dev;
        ASSERT_EQ(dev.mirror(buf.args), "");
        const std::string what = std::string(b.name) + " row stride 4 past a multiple of 8 at 576/512";
        EXPECT_EQ(lb_extend_attention_fwd_unified(&dev.args, livebound::cuda_device(device_, stream_)), LB_ERROR_UNSUPPORTED)
            << what << ": " << lb_last_error();
        const std::string message = lb_last_error();
        EXPECT_NE(message.find("argument '" + std::string(b.name) + "'"), std::string::npos) << what << ": " << message;
        EXPECT_NE(message.find("runs only on the tensor-core kernel"), std::string::npos) << what << ": " << message;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        expect_o_untouched(buf, dev, what);
    }
}

// ---- (d) device-held garbage: clamped, memory-safe ----

// Contract. On the CPU the index values the kernel follows are checked and a bad one is
// refused (LB_ERROR_INVALID_ARGUMENT naming the first bad value: qo_indptr / kv_indptr
// negative, decreasing or past T / len(kv_indices), prefix_lens[b] with P + E != N,
// mask_indptr[b] whose block does not fit, kv_indices[i] outside [0, num_slots)). On CUDA
// they live in device memory and are not checked (that would need a sync): the kernel
// clamps every data-dependent index, so the call returns LB_OK, reads and writes nothing
// out of bounds, and the garbage shows only in the garbage requests' own rows: rows outside
// [qo_indptr[0], qo_indptr[B]) of o keep their poison, the clean requests' rows are
// bit-identical to a clean call's. Garbage in qo_indptr itself makes the written rows
// undefined (they are what qo_indptr says): there the contract is only LB_OK and no fault
// (the stream synchronises without an error).
using CudaUnifiedGarbage = CudaUnifiedBase;

TEST_F(CudaUnifiedGarbage, GarbageValuesStayInBounds) {
    struct Form {
        UnifiedCase c;
        lb_variant variant;
    };
    // Tensor cores (bf16 128/128, bounded and full-width; bf16 64/64 with a mask) and SIMT
    // (fp16 128/128 with an fp8 cache, int32 kv_indices, int64 indptrs and prefix_lens).
    UnifiedCase t{"garbage_bf16_d128", 301, true, 8, 2, 128, 128, {70, 33, 90, 1, 20}, {40, 60, 25, 9, 30}};
    t.window = 48;
    UnifiedCase s{"garbage_fp8_fp16_d128_index32_indptr64", 302, false, 8, 2, 128, 128, {45, 20, 33, 7, 12}, {30, 5, 70, 11, 0}};
    s.fp8_cache = true;
    s.sinks = true;
    s.index64 = false;
    s.indptr64 = true;
    UnifiedCase m{"garbage_bf16_d64_mask", 303, true, 8, 2, 64, 64, {40, 9, 33, 5, 20}, {25, 60, 12, 0, 8}};
    m.custom_mask = true;
    const Form forms[] = {{t, LB_BOUNDED}, {t, LB_FULL_WIDTH}, {s, LB_BOUNDED}, {m, LB_BOUNDED}};
    for (const Form &f : forms) {
        const std::string form = describe(f.c, f.variant);
        const UnifiedProblem p = with_padding(make_unified_problem(f.c), kLeadRows, kTailRows, f.c.seed + 7000);
        ASSERT_GE(p.N(2), 6) << form;
        std::vector<uint16_t> clean;
        ASSERT_TRUE(call(p, f.c, f.variant, &clean)) << form;
        for (IndexGarbage g : {IndexGarbage::kv_indices, IndexGarbage::kv_indptr, IndexGarbage::prefix_lens, IndexGarbage::mask_indptr,
                            IndexGarbage::qo_indptr}) {
            if (g == IndexGarbage::mask_indptr && !p.has_mask()) continue;
            UnifiedProblem bad = p;  // the host storage the garbage goes into
            UnifiedBuffers buf;
            make_unified_args(bad, f.c, f.variant, &buf);  // max_len_extend: the clean value
            const Injected injected = inject_index_garbage(g, p, &buf.args);
            const std::string what = form + " with garbage " + injected.what;
            DeviceArgs dev;
            ASSERT_EQ(dev.mirror(buf.args), "") << what;
            ASSERT_EQ(lb_extend_attention_fwd_unified(&dev.args, livebound::cuda_device(device_, stream_)), LB_OK)
                << lb_last_error() << "\n" << what;
            // No fault: an out-of-bounds access would fail this (and every later call).
            ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "") << what;
            if (g == IndexGarbage::qo_indptr) continue;  // the written rows are undefined: nothing more to check
            ASSERT_EQ(dev.download_o(), "") << what;
            const size_t ro = size_t(p.Hq * p.Lv);
            const size_t r0 = size_t(p.qo_indptr.front()), r1 = size_t(p.qo_indptr.back());
            size_t touched = 0;
            for (size_t i = 0; i < buf.o.size(); i++) {
                if ((i / ro < r0 || i / ro >= r1) && buf.o[i] != kPoison16) touched++;
            }
            EXPECT_EQ(touched, 0u) << "o elements outside rows [" << r0 << ", " << r1 << ") written: " << what;
            for (int64_t b = 0; b < p.B; b++) {
                bool garbage = false;
                for (int64_t r : injected.requests) garbage = garbage || r == b;
                if (garbage || p.E(b) == 0) continue;
                const size_t q0 = size_t(p.qo_indptr[size_t(b)]), E = size_t(p.E(b));
                EXPECT_EQ(0, std::memcmp(&buf.o[q0 * ro], &clean[q0 * ro], E * ro * 2))
                    << "clean request " << b << "'s o differs from the clean call's: " << what;
            }
        }
    }
}

// ---- determinism: reruns and batch composition ----

// A request's o rows are the same bits on a rerun of the same call, when it runs alone,
// and in the batch reversed (tensor cores: bf16 128/128 bounded and full-width; SIMT: fp16
// 64/64 with a mask).
using CudaUnifiedDeterminism = CudaUnifiedBase;

TEST_F(CudaUnifiedDeterminism, RerunsAloneAndReorderedGiveTheSameBits) {
    UnifiedCase w{"determinism_window_sinks", 311, true, 8, 2, 128, 128, {100, 1, 37, 0, 64}, {30, 90, 0, 12, 5}};
    w.window = 25;
    w.sinks = true;
    UnifiedCase m{"determinism_mask_fp16_d64", 312, false, 8, 4, 64, 64, {70, 1, 33, 40}, {25, 60, 0, 80}};
    m.custom_mask = true;
    m.causal = false;
    const std::pair<UnifiedCase, lb_variant> forms[] = {{w, LB_BOUNDED}, {w, LB_FULL_WIDTH}, {m, LB_BOUNDED}};
    for (const auto &[c, v] : forms) {
        const UnifiedProblem p = make_unified_problem(c);
        std::vector<uint16_t> all, again;
        ASSERT_TRUE(call(p, c, v, &all)) << describe(c, v);
        ASSERT_TRUE(call(p, c, v, &again)) << describe(c, v);
        EXPECT_EQ(all, again) << "a rerun of the same call differs: " << describe(c, v);
        auto compare = [&](const UnifiedProblem &batch, const std::vector<int64_t> &order, const std::vector<uint16_t> &got,
                           const std::string &what) {
            int64_t first = -1;
            EXPECT_EQ(rows_differing_from_batch(p, all, batch, order, got, &first), 0u)
                << "first at request " << first << ", " << what << ": " << describe(c, v);
        };
        for (int64_t b = 0; b < p.B; b++) {
            if (p.E(b) == 0) continue;  // (T = 0: nothing to run)
            const UnifiedProblem one = subset(p, {b});
            std::vector<uint16_t> got;
            ASSERT_TRUE(call(one, c, v, &got)) << describe(c, v) << " request " << b << " alone";
            compare(one, {b}, got, "alone");
        }
        std::vector<int64_t> reversed;
        for (int64_t b = p.B - 1; b >= 0; b--) reversed.push_back(b);
        const UnifiedProblem rev = subset(p, reversed);
        std::vector<uint16_t> got;
        ASSERT_TRUE(call(rev, c, v, &got)) << describe(c, v) << " reversed";
        compare(rev, reversed, got, "batch reversed");
    }
}

}  // namespace
}  // namespace livebound::testing
