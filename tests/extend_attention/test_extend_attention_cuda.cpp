// K7 extend_attention_fwd on the test CUDA device (LIVEBOUND_TEST_DEVICE, default 0;
// cuda_test_util.h), on caller-owned device memory (cuMemAlloc in the primary context) and
// a caller-created non-blocking stream. Problems, data and
// tolerances are the CPU suite's (cases.h, tests/reference/): every host buffer gets a
// device copy of its whole storage, outputs poisoned, and the outputs are downloaded whole
// after the call, so the host checks apply unchanged.
//
//   (a) CudaExtendAccuracy: every CPU-suite case (bf16/fp16, 64/64, 128/128, causal and
//       not, windows, GQA, logit cap, sinks, k/v scales, custom masks, xai, skip flags,
//       int32 and int64 index tensors, 16-bit and fp8 (e4m3fn) caches) plus bf16 256/256
//       cases and longer fp8-cache cases, bounded, with and without lse_extend where that
//       variant is built: o and lse within the CPU suite's fp64-reference tolerance, and
//       rows outside [qo_indptr[0], qo_indptr[B]) (lead and tail rows added to every case)
//       still hold their poison. Forms not built for CUDA (fp16 MLA with an fp8 cache, ...)
//       must be refused with LB_ERROR_UNSUPPORTED naming 'q_extend', writing nothing;
//       CudaExtendUnsupported does the same for the other forms the build lacks
//       (full-width fp16 / 64/64 / 256/256 with lse, fp8-cache twins).
//   (b) CudaExtendTwin: bounded == full-width bit for bit (o, lse and the poisoned rows) for
//       the bf16 128/128 cases whose full-width form is built (16-bit caches with and
//       without lse, fp8 caches with lse), and a 256/256 case without lse.
//   (c) CudaExtendBatchMates: a request's rows are bit-identical whether it runs alone, in
//       its batch, or in the batch reversed (an empty request alone: T = 0, nothing to
//       compare or download).
//   (d) CudaExtendGraph: CUDA-graph capture of one call on the caller's stream (after a
//       warm-up call), replays == the direct call, also after new q values and new
//       qo_indptr / kv_indptr were uploaded into the captured buffers.
//   (e) CudaExtendErrors: host pointers on a CUDA device and a wrong device index are
//       rejected by name and write nothing; B = 0 / empty rows write nothing; the NULL
//       (legacy default) stream works.
//   (f) CudaExtendGarbage: garbage in the device-held index values (kv_indices,
//       kv_indptr, mask_indptr, qo_indptr) is clamped: LB_OK, no fault, poison kept outside
//       the batch's rows and the clean requests' rows bit-identical to a clean call's.
//
// A built CUDA variant (cuda_variant_built(): the list of cmake/families/extend_attention.cmake,
// written out here) that returns LB_ERROR_UNSUPPORTED is a failure here. Every test skips,
// saying why, without a driver or a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"
#include "cuda_driver.h"
#include "cuda_test_util.h"  // DeviceBuffer, CudaFixture, cuda_error
#include "device_args.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing {
namespace {

using reference::ExtendProblem;

// ---- problems ----

// `lead` rows before and `tail` rows after the batch's rows (random values, never read):
// qo_indptr[0] = lead, T = lead + sum(E) + tail. Only rows [lead, lead + sum E) may be written.
ExtendProblem with_padding(const ExtendProblem &p, int64_t lead, int64_t tail, uint32_t seed) {
    ExtendProblem out = p;
    std::mt19937 rng(seed);
    std::normal_distribution<float> val(0.1f, 0.5f);
    auto pad = [&](const std::vector<uint16_t> &src, int64_t row, std::vector<uint16_t> *dst) {
        dst->clear();
        for (int64_t i = 0; i < lead * row; i++) dst->push_back(p.from_f(val(rng)));
        dst->insert(dst->end(), src.begin(), src.end());
        for (int64_t i = 0; i < tail * row; i++) dst->push_back(p.from_f(val(rng)));
    };
    pad(p.q, p.Hq * p.Lq, &out.q);
    pad(p.k_ext, p.Hkv * p.Lq, &out.k_ext);
    pad(p.v_ext, p.Hkv * p.Lv, &out.v_ext);
    for (auto &x : out.qo_indptr) x += int32_t(lead);
    out.T = p.T + lead + tail;
    return out;
}

// The batch of requests `reqs` of p, in that order (same cache, same slots; masks and
// window_kv_offsets follow their request).
ExtendProblem subset(const ExtendProblem &p, const std::vector<int64_t> &reqs) {
    ExtendProblem s = p;
    s.B = int64_t(reqs.size());
    s.q.clear();
    s.k_ext.clear();
    s.v_ext.clear();
    s.kv_indices.clear();
    s.qo_indptr.assign(1, 0);
    s.kv_indptr.assign(1, 0);
    s.custom_mask.clear();
    s.mask_indptr.clear();
    s.window_kv_offsets.clear();
    const int64_t ql = p.Hq * p.Lq, kl = p.Hkv * p.Lq, vl = p.Hkv * p.Lv;
    for (int64_t b : reqs) {
        const int64_t q0 = p.qo_indptr[size_t(b)], E = p.E(b), k0 = p.kv_indptr[size_t(b)], P = p.P(b);
        s.q.insert(s.q.end(), p.q.begin() + q0 * ql, p.q.begin() + (q0 + E) * ql);
        s.k_ext.insert(s.k_ext.end(), p.k_ext.begin() + q0 * kl, p.k_ext.begin() + (q0 + E) * kl);
        s.v_ext.insert(s.v_ext.end(), p.v_ext.begin() + q0 * vl, p.v_ext.begin() + (q0 + E) * vl);
        s.kv_indices.insert(s.kv_indices.end(), p.kv_indices.begin() + k0, p.kv_indices.begin() + k0 + P);
        s.qo_indptr.push_back(s.qo_indptr.back() + int32_t(E));
        s.kv_indptr.push_back(s.kv_indptr.back() + int32_t(P));
        if (!p.window_kv_offsets.empty()) s.window_kv_offsets.push_back(p.window_kv_offsets[size_t(b)]);
        if (p.has_mask()) {
            const int64_t size = E * (P + E + p.wko(b)), start = p.mask_indptr[size_t(b)];
            s.mask_indptr.push_back(int64_t(s.custom_mask.size()));
            s.custom_mask.insert(s.custom_mask.end(), p.custom_mask.begin() + start, p.custom_mask.begin() + start + size);
        }
    }
    if (p.has_mask()) {
        s.mask_indptr.push_back(int64_t(s.custom_mask.size()));
        if (s.custom_mask.empty()) s.custom_mask.assign(1, 0);  // keep "has a mask" for an all-empty subset
    }
    s.T = s.qo_indptr.back();
    return s;
}

int64_t max_extend(const ExtendProblem &p) {
    int64_t m = 0;
    for (int64_t b = 0; b < p.B; b++) m = std::max(m, p.E(b));
    return m;
}

// ---- device copies of a call's tensors ----

using K7DeviceArgs = AttentionDeviceArgs<lb_extend_attention_args>;
using TensorMember = K7DeviceArgs::Member;
using NamedMember = K7DeviceArgs::Named;
const auto &kTensors = kExtendTensors;  // (device_args.h)

// The K7 block's device copies, with its two outputs.
struct DeviceArgs : K7DeviceArgs {
    std::string mirror(const lb_extend_attention_args &h) { return K7DeviceArgs::mirror(h, kTensors); }
    std::string upload_outputs() const {
        std::string e = upload(&lb_extend_attention_args::o_extend);
        if (e.empty() && find(&lb_extend_attention_args::lse_extend)) e = upload(&lb_extend_attention_args::lse_extend);
        return e;
    }
    std::string download_outputs() const {
        std::string e = download(&lb_extend_attention_args::o_extend);
        if (e.empty() && find(&lb_extend_attention_args::lse_extend)) e = download(&lb_extend_attention_args::lse_extend);
        return e;
    }
};

// The outputs of one call, whole storage (poisoned rows included); lse empty without LSE.
struct Outputs {
    std::vector<uint16_t> o;
    std::vector<float> lse;
};

std::string describe(const ExtendCase &c, lb_variant v, bool with_lse) {
    std::ostringstream os;
    os << c << (v == LB_BOUNDED ? " bounded" : " full-width") << (with_lse ? " with lse" : " without lse") << " on "
       << cuda_label(test_device());
    return os.str();
}

// Whether `name` occurs in `message` as a whole identifier.
bool names_argument(const std::string &message, const std::string &name) {
    auto is_ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    for (size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
        const bool starts = at == 0 || !is_ident(message[at - 1]);
        const size_t end = at + name.size();
        if (starts && (end == message.size() || !is_ident(message[end]))) return true;
    }
    return false;
}

::testing::AssertionResult call_failed(lb_status status) {
    auto f = ::testing::AssertionFailure();
    f << "status " << status << ", lb_last_error(): " << lb_last_error();
    if (status == LB_ERROR_UNSUPPORTED) f << " (a planned CUDA variant is missing)";
    return f;
}

class CudaExtendBase : public CudaFixture {
protected:
    // One call on `stream` with every tensor mirrored to the device (outputs poisoned);
    // outputs downloaded whole into *out.
    ::testing::AssertionResult run_on_device(const ExtendProblem &p, const ExtendCase &c, lb_variant variant, bool with_lse,
                                             cuda::CUstream stream, Outputs *out) {
        ExtendBuffers buf;
        make_args(p, c, variant, &buf, with_lse);
        DeviceArgs d;
        std::string error = d.mirror(buf.args);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_status status = lb_extend_attention_fwd(&d.args, livebound::cuda_device(device_, stream));
        if (status != LB_OK) return call_failed(status);
        error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream));
        if (error.empty()) error = d.download_outputs();
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        out->o = std::move(buf.o);
        if (with_lse) {
            out->lse = std::move(buf.lse);
        } else {
            out->lse.clear();
        }
        return ::testing::AssertionSuccess();
    }

    // A call for a shape without a CUDA variant: LB_ERROR_UNSUPPORTED, the message names
    // 'q_extend', o_extend and lse_extend (device copies) still poisoned.
    void expect_unsupported(const ExtendProblem &p, const ExtendCase &c, lb_variant variant, bool with_lse) {
        const std::string what = describe(c, variant, with_lse);
        ExtendBuffers buf;
        make_args(p, c, variant, &buf, with_lse);
        DeviceArgs dev;
        ASSERT_EQ(dev.mirror(buf.args), "") << what;
        const lb_status status = lb_extend_attention_fwd(&dev.args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        EXPECT_EQ(status, LB_ERROR_UNSUPPORTED) << what << ": " << message;
        EXPECT_NE(message.find("'q_extend'"), std::string::npos) << "the message does not name 'q_extend': " << message;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        ASSERT_EQ(dev.download_outputs(), "") << what;
        size_t touched = 0;
        for (uint16_t x : buf.o) touched += x != kPoison16;
        if (with_lse) {
            for (float x : buf.lse) touched += std::memcmp(&x, &kPoisonLse, 4) != 0;
        }
        EXPECT_EQ(touched, 0u) << touched << " output elements written by a refused call: " << what;
    }
};

// ---- checks ----

struct References {
    reference::Result<double> r64;
    reference::Result<float> r32;
    // The naive reference with P rounded to the input dtype (the tensor-core kernels' P).
    reference::Result<float> r32p;
};

References references(const ExtendProblem &p) {
    return {reference::reference_fp64(p), reference::reference_naive_fp32(p), reference::reference_naive_fp32(p, true)};
}

// The tensor-core variants of cmake/families/extend_attention.cmake, written out here (an
// oracle independent of the build's generated list): the runtime runs one of them for these
// facts (the suites' tensors are contiguous and cuMemAlloc-aligned, the layout they read).
// Any index dtypes. A padded variant serves every Lq = Lv <= d that is a multiple of 8, the
// others exactly their Lq / Lv (which differ for 192/128 and MLA's 576/512).
bool tensor_core_built(const ExtendCase &c, lb_variant variant, bool with_lse) {
    struct Built {
        lb_variant form;
        bool bf16;
        int64_t dqk, dv;
        bool padded;
        bool fp8_cache;
    };
    // Each with and without the LSE output, but the full-width 256 (without only) and the
    // full-width fp8 128 (with only).
    static const Built both_lse[] = {
        {LB_BOUNDED, true, 64, 64, false, false},     {LB_BOUNDED, true, 96, 96, false, false},
        {LB_BOUNDED, true, 96, 96, true, false},      {LB_BOUNDED, true, 128, 128, false, false},
        {LB_BOUNDED, true, 256, 256, false, false},   {LB_BOUNDED, false, 64, 64, false, false},
        {LB_BOUNDED, false, 128, 128, false, false},  {LB_FULL_WIDTH, true, 128, 128, false, false},
        {LB_BOUNDED, true, 128, 128, false, true},    {LB_BOUNDED, true, 192, 128, false, false},
        {LB_BOUNDED, true, 576, 512, false, false},   {LB_BOUNDED, false, 576, 512, false, false},
        {LB_BOUNDED, true, 576, 512, false, true},    {LB_BOUNDED, false, 576, 512, false, true},
    };
    static const Built nolse_only[] = {{LB_FULL_WIDTH, true, 256, 256, false, false}};
    static const Built lse_only[] = {{LB_FULL_WIDTH, true, 128, 128, false, true}};
    auto matches = [&](const Built &b) {
        const bool serves = b.padded ? c.Lq == c.Lv && c.Lq <= b.dqk && c.Lq % 8 == 0 : c.Lq == b.dqk && c.Lv == b.dv;
        return serves && b.form == variant && b.bf16 == c.bf16 && b.fp8_cache == c.fp8_cache;
    };
    for (const Built &b : both_lse) {
        if (matches(b)) return true;
    }
    for (const Built &b : nolse_only) {
        if (!with_lse && matches(b)) return true;
    }
    for (const Built &b : lse_only) {
        if (with_lse && matches(b)) return true;
    }
    return false;
}

// max |a - b| over [begin, end), same-signed infinities equal, NaN -> inf.
template <typename A, typename B>
double max_abs_diff(const std::vector<A> &a, const std::vector<B> &b, size_t begin, size_t end) {
    double e = 0;
    for (size_t i = begin; i < end; i++) {
        const double x = double(a[i]), y = double(b[i]);
        if (std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0)) continue;
        const double d = std::fabs(x - y);
        if (std::isnan(d)) return INFINITY;
        e = std::max(e, d);
    }
    return e;
}

// The CPU suite's tolerance over the written rows (kernel error <= 2x the naive same-precision
// reference's + 1e-5, every o element within one ulp + 1e-6 of the fp64 value) and the
// poison everywhere else. A tensor-core kernel (P rounded to the input dtype as an mma
// operand, as SGLang's kernel rounds it) is held to 2x the error of the naive reference
// that rounds P the same way; its elements may be more than one output ulp off.
void expect_accurate(const ExtendProblem &p, const References &ref, const Outputs &out, const std::string &context,
                     bool tensor_core = false) {
    const size_t r0 = size_t(p.qo_indptr.front()), r1 = size_t(p.qo_indptr.back());
    const size_t ro = size_t(p.Hq * p.Lv), rl = size_t(p.Hq);
    ASSERT_EQ(out.o.size(), size_t(p.T) * ro);
    std::vector<float> o(out.o.size());
    for (size_t i = 0; i < o.size(); i++) o[i] = p.to_f(out.o[i]);
    const double err = max_abs_diff(o, ref.r64.o, r0 * ro, r1 * ro);
    const reference::Result<float> &naive = tensor_core ? ref.r32p : ref.r32;
    const double err_naive = max_abs_diff(naive.o, ref.r64.o, r0 * ro, r1 * ro);
    EXPECT_LE(err, 2 * err_naive + 1e-5) << "o: kernel error " << err << " vs naive " << err_naive
                                         << (tensor_core ? " (P rounded)" : "") << "\n" << context;
    size_t bad_ulp = 0, first_bad = 0;
    for (size_t i = r0 * ro; i < r1 * ro && !tensor_core; i++) {
        const double exact = ref.r64.o[i];
        const uint16_t bits = p.from_f(float(std::fabs(exact)));
        const double ulp = std::fabs(double(p.to_f(uint16_t(bits + 1))) - double(p.to_f(bits)));
        if (!(std::fabs(o[i] - exact) <= ulp + 1e-6)) {
            if (bad_ulp++ == 0) first_bad = i;
        }
    }
    EXPECT_EQ(bad_ulp, 0u) << bad_ulp << " o elements off by more than one ulp + 1e-6; first: element " << first_bad
                           << " (row " << first_bad / ro << ") = " << o[first_bad] << " vs exact " << ref.r64.o[first_bad]
                           << "\n" << context;
    size_t touched = 0, first_touched = 0;
    for (size_t i = 0; i < out.o.size(); i++) {
        if ((i < r0 * ro || i >= r1 * ro) && out.o[i] != kPoison16) {
            if (touched++ == 0) first_touched = i;
        }
    }
    EXPECT_EQ(touched, 0u) << touched << " o elements outside rows [" << r0 << ", " << r1 << ") were written; first: element "
                           << first_touched << " (row " << first_touched / ro << ")\n" << context;
    double lerr = 0, lerr_naive = 0;
    if (!out.lse.empty()) {
        ASSERT_EQ(out.lse.size(), size_t(p.T) * rl);
        lerr = max_abs_diff(out.lse, ref.r64.lse, r0 * rl, r1 * rl);
        lerr_naive = max_abs_diff(naive.lse, ref.r64.lse, r0 * rl, r1 * rl);
        EXPECT_LE(lerr, 2 * lerr_naive + 1e-5) << "lse: kernel error " << lerr << " vs naive " << lerr_naive << "\n" << context;
        size_t lse_touched = 0;
        for (size_t i = 0; i < out.lse.size(); i++) {
            if ((i < r0 * rl || i >= r1 * rl) && std::memcmp(&out.lse[i], &kPoisonLse, 4) != 0) lse_touched++;
        }
        EXPECT_EQ(lse_touched, 0u) << lse_touched << " lse elements outside rows [" << r0 << ", " << r1
                                   << ") were written\n" << context;
    }
    std::printf("%s%s: o error %.3g (naive %.3g)", context.c_str(), tensor_core ? " [tensor cores]" : "", err, err_naive);
    if (!out.lse.empty()) std::printf(", lse error %.3g (naive %.3g)", lerr, lerr_naive);
    std::printf("\n");
}

// o (and lse, when both have it) identical bit for bit, whole storage.
void expect_identical(const Outputs &a, const Outputs &b, const std::string &what) {
    ASSERT_EQ(a.o.size(), b.o.size()) << what;
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < a.o.size(); i++) {
        if (a.o[i] != b.o[i] && differ++ == 0) first = i;
    }
    EXPECT_EQ(differ, 0u) << differ << " o elements differ; first: element " << first << " (" << a.o[first] << " vs "
                          << b.o[first] << ")\n" << what;
    if (!a.lse.empty() && !b.lse.empty()) {
        ASSERT_EQ(a.lse.size(), b.lse.size()) << what;
        EXPECT_EQ(0, std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4)) << "lse differs\n" << what;
    }
}

constexpr int64_t kLeadRows = 3, kTailRows = 5;

// ---- (a) accuracy, every CPU case + 256/256 ----

// The CUDA SIMT variants of cmake/families/extend_attention.cmake, written out here (an
// oracle independent of the build's generated list; every one takes int32 or int64 index
// tensors):
//   16-bit caches: bounded bf16 and fp16 32/32 (scalar: any dims), 64/64, 128/128, 256/256,
//   each with and without the LSE output; full-width bf16 128/128 (with and without the
//   LSE) and bf16 256/256 (without);
//   fp8 (e4m3fn) caches: the same forms but the full-width 256/256 and the full-width
//   128/128 without the LSE.
// A variant serves the case when its head-dim bucket does: Lq, Lv up to the bucket's,
// multiples of its vector width (8; 1 for the 32/32 bucket: the runtime's rule,
// Variant::serves). The tensor-core variants (tensor_core_built) serve a subset, and MLA's
// 576/512, which no SIMT variant serves (a thread would hold 514 state registers). Nothing
// else is built for CUDA: the runtime refuses it (LB_ERROR_UNSUPPORTED).
bool cuda_variant_built(const ExtendCase &c, lb_variant variant, bool with_lse) {
    if (tensor_core_built(c, variant, with_lse)) return true;
    struct Built {
        lb_variant form;
        bool bf16, fp8_cache;
        int64_t dqk, dv;
        bool lse;
    };
    static const Built built[] = {
        // bounded, both dtypes, both caches, with and without the LSE (vector 1 at 32/32)
        {LB_BOUNDED, true, false, 32, 32, true},   {LB_BOUNDED, true, false, 32, 32, false},
        {LB_BOUNDED, false, false, 32, 32, true},  {LB_BOUNDED, false, false, 32, 32, false},
        {LB_BOUNDED, true, true, 32, 32, true},    {LB_BOUNDED, true, true, 32, 32, false},
        {LB_BOUNDED, false, true, 32, 32, true},   {LB_BOUNDED, false, true, 32, 32, false},
        {LB_BOUNDED, true, false, 64, 64, true},   {LB_BOUNDED, true, false, 64, 64, false},
        {LB_BOUNDED, false, false, 64, 64, true},  {LB_BOUNDED, false, false, 64, 64, false},
        {LB_BOUNDED, true, true, 64, 64, true},    {LB_BOUNDED, true, true, 64, 64, false},
        {LB_BOUNDED, false, true, 64, 64, true},   {LB_BOUNDED, false, true, 64, 64, false},
        {LB_BOUNDED, true, false, 128, 128, true}, {LB_BOUNDED, true, false, 128, 128, false},
        {LB_BOUNDED, false, false, 128, 128, true}, {LB_BOUNDED, false, false, 128, 128, false},
        {LB_BOUNDED, true, true, 128, 128, true},  {LB_BOUNDED, true, true, 128, 128, false},
        {LB_BOUNDED, false, true, 128, 128, true}, {LB_BOUNDED, false, true, 128, 128, false},
        {LB_BOUNDED, true, false, 256, 256, true}, {LB_BOUNDED, true, false, 256, 256, false},
        {LB_BOUNDED, false, false, 256, 256, true}, {LB_BOUNDED, false, false, 256, 256, false},
        {LB_BOUNDED, true, true, 256, 256, true},  {LB_BOUNDED, true, true, 256, 256, false},
        {LB_BOUNDED, false, true, 256, 256, true}, {LB_BOUNDED, false, true, 256, 256, false},
        // full-width twins
        {LB_FULL_WIDTH, true, false, 128, 128, true}, {LB_FULL_WIDTH, true, false, 128, 128, false},
        {LB_FULL_WIDTH, true, false, 256, 256, false}, {LB_FULL_WIDTH, true, true, 128, 128, true},
    };
    for (const Built &b : built) {
        const int64_t vector = b.dqk == 32 ? 1 : 8;
        if (b.form == variant && b.bf16 == c.bf16 && b.fp8_cache == c.fp8_cache && b.lse == with_lse && c.Lq <= b.dqk &&
            c.Lv <= b.dv && c.Lq % vector == 0 && c.Lv % vector == 0) {
            return true;
        }
    }
    return false;
}

// Head dims 256/256 (the spec's §A shape scaled down): bf16, fp16, fp8 caches.
std::vector<ExtendCase> d256_cases() {
    std::vector<ExtendCase> cs;
    ExtendCase w{"cuda_bf16_d256_window", 131, true, 16, 8, 256, 256, {200, 3, 70}, {0, 90, 40}};
    w.window = 64;
    cs.push_back(w);
    ExtendCase s{"cuda_bf16_d256_causal_sinks", 132, true, 8, 2, 256, 256, {65, 130, 1}, {10, 0, 33}};
    s.sinks = true;
    cs.push_back(s);
    ExtendCase f{"cuda_fp16_d256_noncausal_window", 133, false, 8, 2, 256, 256, {70, 1, 40}, {30, 60, 0}};
    f.causal = false;
    f.window = 50;
    cs.push_back(f);
    ExtendCase e{"cuda_fp8_fp16_d192_sinks", 134, false, 8, 2, 192, 192, {40, 9}, {20, 50}};
    e.fp8_cache = true;
    e.sinks = true;
    cs.push_back(e);
    return cs;
}

// fp8 (e4m3fn) caches on the CUDA variants, longer than the CPU suite's (several key and
// query tiles per request): bf16 128/128 (bounded with and without the LSE, the full-width
// twin with it), bf16 64/64, fp16 128/128 (without the LSE only) and fp16 64/64 (the
// 128/128 bucket), bf16 256/256; k/v scales, windows, sinks, masks, cap, index dtypes.
std::vector<ExtendCase> fp8_cuda_cases() {
    std::vector<ExtendCase> cs;
    ExtendCase a{"cuda_fp8_bf16_d128_uneven_scales", 161, true, 8, 2, 128, 128, {300, 1, 65, 0, 130}, {200, 0, 500, 17, 64}};
    a.fp8_cache = true;
    a.k_scale = 0.5f;
    a.v_scale = 1.7f;
    a.indptr64 = true;
    cs.push_back(a);
    ExtendCase w{"cuda_fp8_bf16_d128_window_sinks_mask", 162, true, 8, 2, 128, 128, {150, 33, 64}, {90, 300, 0}};
    w.fp8_cache = true;
    w.window = 48;
    w.sinks = true;
    w.custom_mask = true;
    w.window_kv_offsets = true;
    w.index64 = false;
    cs.push_back(w);
    ExtendCase g{"cuda_fp8_bf16_d64_gqa8_cap", 163, true, 16, 2, 64, 64, {200, 7, 97}, {150, 40, 0}};
    g.fp8_cache = true;
    g.logit_cap = 6.0f;
    g.window = 100;
    g.k_scale = 0.5f;
    g.v_scale = 1.7f;
    cs.push_back(g);
    ExtendCase f{"cuda_fp8_fp16_d128_noncausal_scales", 164, false, 8, 2, 128, 128, {130, 20, 65}, {70, 0, 250}};
    f.fp8_cache = true;
    f.causal = false;
    f.window = 40;
    f.k_scale = 0.5f;
    f.v_scale = 1.7f;
    f.indptr64 = true;
    f.index64 = false;
    cs.push_back(f);
    ExtendCase h{"cuda_fp8_fp16_d64_sinks", 165, false, 8, 4, 64, 64, {97, 3, 40}, {60, 100, 0}};
    h.fp8_cache = true;
    h.sinks = true;
    cs.push_back(h);
    ExtendCase d{"cuda_fp8_bf16_d256_window", 166, true, 8, 4, 256, 256, {120, 3, 70}, {0, 90, 160}};
    d.fp8_cache = true;
    d.window = 64;
    d.v_scale = 1.7f;
    cs.push_back(d);
    return cs;
}

std::vector<ExtendCase> accuracy_cases() {
    std::vector<ExtendCase> cs = extend_cases();
    for (const ExtendCase &c : d256_cases()) cs.push_back(c);
    for (const ExtendCase &c : fp8_cuda_cases()) cs.push_back(c);
    return cs;
}

class CudaExtendAccuracy : public CudaExtendBase, public ::testing::WithParamInterface<ExtendCase> {};

// Built shapes: o (and lse where the variant has it) within the fp64 tolerance, poison kept.
// Forms not built for CUDA (full-width MLA 576/512, ...) must be refused by name,
// writing nothing.
TEST_P(CudaExtendAccuracy, MatchesFp64ReferenceAndKeepsPoison) {
    const ExtendCase &c = GetParam();
    const ExtendProblem p = with_padding(make_problem(c), kLeadRows, kTailRows, c.seed + 5000);
    std::vector<bool> lse_forms;
    for (bool with_lse : {true, false}) {
        if (cuda_variant_built(c, LB_BOUNDED, with_lse)) {
            lse_forms.push_back(with_lse);
        } else {
            expect_unsupported(p, c, LB_BOUNDED, with_lse);
        }
    }
    if (lse_forms.empty()) return;
    const References ref = references(p);
    std::vector<Outputs> outs;
    for (bool with_lse : lse_forms) {
        Outputs out;
        ASSERT_TRUE(run_on_device(p, c, LB_BOUNDED, with_lse, stream_, &out)) << describe(c, LB_BOUNDED, with_lse);
        expect_accurate(p, ref, out, describe(c, LB_BOUNDED, with_lse), tensor_core_built(c, LB_BOUNDED, with_lse));
        outs.push_back(std::move(out));
    }
    if (outs.size() == 2) {
        // Informational (the CPU suite asserts it; the CUDA variants with and without LSE
        // are separate kernels): whether o is the same bits either way.
        size_t differ = 0;
        for (size_t i = 0; i < outs[0].o.size(); i++) differ += outs[0].o[i] != outs[1].o[i];
        std::printf("%s: o with vs without lse: %zu of %zu elements differ\n", c.name.c_str(), differ, outs[0].o.size());
    }
}

// Shapes and forms the CUDA build does not have, beyond the accuracy cases: full-width fp16,
// full-width 256/256 with the LSE, head dims above 32 that are not multiples of 8 (40 + 4),
// full-width MLA 576/512; with fp8 caches: full-width fp16, 256/256, bf16 without the LSE
// and MLA 576/512. (int32
// index tensors are served by every variant.)
using CudaExtendUnsupported = CudaExtendBase;

TEST_F(CudaExtendUnsupported, NotBuiltFormsAreRefusedByName) {
    struct Form {
        ExtendCase c;
        lb_variant variant;
        bool with_lse;
    };
    ExtendCase b44{"bf16_d44", 151, true, 8, 2, 44, 44, {40, 3}, {10, 20}};
    ExtendCase f64{"fp16_d64", 152, false, 8, 2, 64, 64, {40, 3}, {10, 20}};
    ExtendCase b256{"bf16_d256", 153, true, 8, 2, 256, 256, {40, 3}, {10, 20}};
    auto fp8 = [](ExtendCase c) {
        c.name = "fp8_" + c.name;
        c.fp8_cache = true;
        return c;
    };
    ExtendCase f128{"fp16_d128", 156, false, 8, 2, 128, 128, {40, 3}, {10, 20}};
    ExtendCase b128{"bf16_d128", 157, true, 8, 2, 128, 128, {40, 3}, {10, 20}};
    ExtendCase f576{"fp16_d576_512", 158, false, 4, 1, 576, 512, {10, 3}, {10, 20}};
    const std::vector<Form> forms = {
        {b44, LB_BOUNDED, true},        {b44, LB_BOUNDED, false},        {f64, LB_FULL_WIDTH, false},
        {b256, LB_FULL_WIDTH, true},    {fp8(b44), LB_BOUNDED, true},    {fp8(f64), LB_FULL_WIDTH, true},
        {fp8(b128), LB_FULL_WIDTH, false}, {fp8(f128), LB_FULL_WIDTH, false}, {fp8(b256), LB_FULL_WIDTH, false},
        {fp8(f576), LB_FULL_WIDTH, false}, {f576, LB_FULL_WIDTH, true},
    };
    for (const Form &f : forms) {
        ASSERT_FALSE(cuda_variant_built(f.c, f.variant, f.with_lse)) << describe(f.c, f.variant, f.with_lse);
        const ExtendProblem p = with_padding(make_problem(f.c), kLeadRows, kTailRows, f.c.seed + 5000);
        expect_unsupported(p, f.c, f.variant, f.with_lse);
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaExtendAccuracy, ::testing::ValuesIn(accuracy_cases()),
                         [](const ::testing::TestParamInfo<ExtendCase> &i) { return i.param.name; });

// ---- (b) bounded == full-width twin ----

// The full-width CUDA variants: bf16 128/128 with and without lse (16-bit caches), with lse
// (fp8 caches); bf16 256/256 without lse.
struct TwinParam {
    ExtendCase c;
    bool with_lse;
};
void PrintTo(const TwinParam &t, std::ostream *os) { *os << t.c << (t.with_lse ? " with lse" : " without lse"); }

std::vector<TwinParam> twin_params() {
    std::vector<TwinParam> out;
    std::vector<ExtendCase> cs = extend_cases();
    for (const ExtendCase &c : fp8_cuda_cases()) cs.push_back(c);
    for (const ExtendCase &c : cs) {
        if (!c.bf16 || c.Lq != 128 || c.Lv != 128) continue;
        for (bool with_lse : {true, false}) {
            if (cuda_variant_built(c, LB_FULL_WIDTH, with_lse)) out.push_back({c, with_lse});
        }
    }
    out.push_back({d256_cases().at(0), false});
    return out;
}

class CudaExtendTwin : public CudaExtendBase, public ::testing::WithParamInterface<TwinParam> {};

TEST_P(CudaExtendTwin, BoundedEqualsFullWidthBitForBit) {
    const ExtendCase &c = GetParam().c;
    const bool with_lse = GetParam().with_lse;
    const ExtendProblem p = with_padding(make_problem(c), kLeadRows, kTailRows, c.seed + 6000);
    Outputs bounded, full;
    ASSERT_TRUE(run_on_device(p, c, LB_BOUNDED, with_lse, stream_, &bounded)) << describe(c, LB_BOUNDED, with_lse);
    ASSERT_TRUE(run_on_device(p, c, LB_FULL_WIDTH, with_lse, stream_, &full)) << describe(c, LB_FULL_WIDTH, with_lse);
    // Includes the lead and tail rows: the twin writes no more rows than the bounded form.
    expect_identical(bounded, full, describe(c, LB_FULL_WIDTH, with_lse) + " vs bounded");
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaExtendTwin, ::testing::ValuesIn(twin_params()),
                         [](const ::testing::TestParamInfo<TwinParam> &i) {
                             return i.param.c.name + (i.param.with_lse ? "_lse" : "_nolse");
                         });

// ---- (c) a request's output does not depend on its batch mates ----

using CudaExtendBatchMates = CudaExtendBase;

TEST_F(CudaExtendBatchMates, RequestBitsIndependentOfBatchMates) {
    std::vector<ExtendCase> cs;
    ExtendCase w{"batch_bf16_d128_window", 81, true, 8, 2, 128, 128, {100, 1, 37, 64, 0, 130}, {30, 90, 0, 5, 12, 70}};
    w.window = 25;
    cs.push_back(w);
    ExtendCase s{"batch_fp16_d64_sinks_cap", 82, false, 8, 4, 64, 64, {150, 1, 33, 64, 5}, {40, 0, 200, 17, 3}};
    s.sinks = true;
    s.logit_cap = 6.0f;
    cs.push_back(s);
    ExtendCase m{"batch_bf16_d128_i32_mask", 83, true, 8, 2, 128, 128, {70, 1, 33, 40}, {25, 60, 0, 80}};
    m.custom_mask = true;
    m.index64 = false;
    cs.push_back(m);
    ExtendCase f{"batch_fp8_fp16_d128_i64_window", 84, false, 8, 2, 128, 128, {90, 1, 37, 64}, {30, 90, 0, 5}};
    f.fp8_cache = true;
    f.window = 25;
    f.indptr64 = true;
    f.k_scale = 0.5f;
    f.v_scale = 1.7f;
    cs.push_back(f);
    for (const ExtendCase &c : cs) {
        const ExtendProblem p = make_problem(c);
        // With the LSE where that form is built (fp8 caches with fp16: without only).
        const bool with_lse = cuda_variant_built(c, LB_BOUNDED, true);
        Outputs all;
        ASSERT_TRUE(run_on_device(p, c, LB_BOUNDED, with_lse, stream_, &all)) << describe(c, LB_BOUNDED, with_lse);
        const size_t ro = size_t(p.Hq * p.Lv), rl = size_t(p.Hq);
        // Request b's rows in `got` (a batch `order` of p's requests) vs in `all`.
        auto compare = [&](const ExtendProblem &batch, const std::vector<int64_t> &order, const Outputs &got,
                           const std::string &what) {
            for (size_t i = 0; i < order.size(); i++) {
                const int64_t b = order[i], E = p.E(b);
                if (E == 0) continue;  // an empty request has no rows to compare
                const size_t at = size_t(batch.qo_indptr[i]), want = size_t(p.qo_indptr[size_t(b)]);
                EXPECT_EQ(0, std::memcmp(&got.o[at * ro], &all.o[want * ro], size_t(E) * ro * 2))
                    << "request " << b << " o, " << what << "\n" << c;
                if (with_lse) {
                    EXPECT_EQ(0, std::memcmp(&got.lse[at * rl], &all.lse[want * rl], size_t(E) * rl * 4))
                        << "request " << b << " lse, " << what << "\n" << c;
                }
            }
        };
        for (int64_t b = 0; b < p.B; b++) {
            const ExtendProblem one = subset(p, {b});
            ExtendCase c1 = c;
            c1.E = {p.E(b)};
            Outputs got;
            ASSERT_TRUE(run_on_device(one, c1, LB_BOUNDED, with_lse, stream_, &got)) << "request " << b << " alone\n" << c;
            compare(one, {b}, got, "alone");
        }
        std::vector<int64_t> reversed;
        for (int64_t b = p.B - 1; b >= 0; b--) reversed.push_back(b);
        const ExtendProblem rev = subset(p, reversed);
        ExtendCase cr = c;
        cr.extra_max_len = 77;  // a different grid too
        Outputs got;
        ASSERT_TRUE(run_on_device(rev, cr, LB_BOUNDED, with_lse, stream_, &got)) << "reversed batch\n" << c;
        compare(rev, reversed, got, "batch reversed, max_len_extend + 77");
    }
}

// ---- (c2) a custom mask replaces the causal rule ----

using CudaExtendSpanMask = CudaExtendBase;

// Image spans open keys above the diagonal: without a window, is_causal on and off give the
// same bits (tensor cores and SIMT, with and without the LSE where built), with int32 and
// int64 mask_indptr (the accuracy sweep checks both against the reference).
TEST_F(CudaExtendSpanMask, SpanMaskDecidesAloneWhateverIsCausal) {
    for (ExtendCase c : span_mask_cases()) {
        if (c.window > 0) continue;
        const ExtendProblem causal = with_padding(make_problem(c), kLeadRows, kTailRows, c.seed + 5000);
        ExtendProblem noncausal = causal;
        noncausal.causal = false;
        for (bool with_lse : {true, false}) {
            if (!cuda_variant_built(c, LB_BOUNDED, with_lse)) continue;
            for (bool indptr32 : {false, true}) {
                c.mask_indptr32 = indptr32;
                Outputs a, b;
                ASSERT_TRUE(run_on_device(causal, c, LB_BOUNDED, with_lse, stream_, &a)) << describe(c, LB_BOUNDED, with_lse);
                ASSERT_TRUE(run_on_device(noncausal, c, LB_BOUNDED, with_lse, stream_, &b)) << describe(c, LB_BOUNDED, with_lse);
                expect_identical(a, b, describe(c, LB_BOUNDED, with_lse) + ": is_causal on vs off");
            }
        }
    }
}

// ---- (d) CUDA-graph capture and replay on the caller's stream ----

using CudaExtendGraph = CudaExtendBase;

TEST_F(CudaExtendGraph, ReplayEqualsDirectCallAlsoAfterNewInputs) {
    const cuda::Driver *d = cuda::driver();
    ExtendCase c{"graph", 141, true, 8, 2, 128, 128, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}};
    c.window = 30;
    c.sinks = true;
    const ExtendProblem p1 = with_padding(make_problem(c), kLeadRows, kTailRows, 7141);

    // Second inputs for the same captured buffers: new q values, a new split of the rows
    // (fewer of them: the tail of the captured range must stay poisoned) and new prefixes
    // inside the same kv_indices, every E_b <= the captured max_len_extend.
    ExtendProblem p2 = p1;
    {
        std::mt19937 rng(7142);
        std::normal_distribution<float> val(0.1f, 0.5f);
        for (auto &x : p2.q) x = p2.from_f(val(rng));
        const std::vector<int32_t> E2 = {100, 20, 33, 10, 50, 0}, P2 = {0, 60, 150, 17, 30, 3};
        p2.qo_indptr.assign(1, int32_t(kLeadRows));
        p2.kv_indptr.assign(1, 0);
        for (size_t b = 0; b < E2.size(); b++) {
            p2.qo_indptr.push_back(p2.qo_indptr.back() + E2[b]);
            p2.kv_indptr.push_back(p2.kv_indptr.back() + P2[b]);
        }
        ASSERT_LE(p2.qo_indptr.back(), p1.qo_indptr.back());
        ASSERT_LE(size_t(p2.kv_indptr.back()), p1.kv_indices.size());
    }
    ExtendCase c2 = c;
    c2.extra_max_len = max_extend(p1) - max_extend(p2);  // the captured max_len_extend

    Outputs direct1, direct2;
    ASSERT_TRUE(run_on_device(p1, c, LB_BOUNDED, true, stream_, &direct1)) << describe(c, LB_BOUNDED, true);
    ASSERT_TRUE(run_on_device(p2, c2, LB_BOUNDED, true, stream_, &direct2)) << describe(c2, LB_BOUNDED, true);

    ExtendBuffers buf;
    make_args(p1, c, LB_BOUNDED, &buf, true);
    DeviceArgs dev;
    ASSERT_EQ(dev.mirror(buf.args), "");
    const lb_device device = livebound::cuda_device(device_, stream_);
    ASSERT_EQ(lb_extend_attention_fwd(&dev.args, device), LB_OK) << lb_last_error();  // warm-up (PTX JIT)
    ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "");

    ASSERT_EQ(cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream_, cuda::kStreamCaptureModeThreadLocal)), "");
    const lb_status captured_status = lb_extend_attention_fwd(&dev.args, device);
    const std::string captured_message = lb_last_error();
    cuda::CUgraph graph = nullptr;
    const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream_, &graph));
    ASSERT_EQ(captured_status, LB_OK) << "call during capture: " << captured_message;
    ASSERT_EQ(end_error, "") << "the call did something a capture forbids (sync, allocation, ...)";
    {
        // One kernel per call, nothing else (no memset of the LSE, no copy).
        const CapturedNodes nodes = count_graph_nodes(graph);
        EXPECT_EQ(nodes.error, "");
        EXPECT_EQ(nodes.kernels, 1u);
        EXPECT_EQ(nodes.total, 1u) << "a node that is not a kernel";
    }
    cuda::CUgraphExec exec = nullptr;
    const std::string instantiate_error =
        cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (!instantiate_error.empty()) d->cuGraphDestroy(graph);
    ASSERT_EQ(instantiate_error, "");

    auto replay = [&](const std::string &what, const Outputs &want) {
        std::fill(buf.o.begin(), buf.o.end(), kPoison16);
        std::fill(buf.lse.begin(), buf.lse.end(), kPoisonLse);
        ASSERT_EQ(dev.upload_outputs(), "") << what;
        ASSERT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream_)), "") << what;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "") << what;
        ASSERT_EQ(dev.download_outputs(), "") << what;
        expect_identical(Outputs{buf.o, buf.lse}, want, what);
    };
    replay("replay 1 (captured inputs) vs direct call", direct1);
    replay("replay 2 (captured inputs again) vs direct call", direct1);
    // New contents in the captured device buffers: p2's q, qo_indptr and kv_indptr (same
    // sizes as p1's, int32 as the case's: indptr64 false) uploaded over them.
    dev.host.q_extend.data = p2.q.data();
    dev.host.qo_indptr.data = p2.qo_indptr.data();
    dev.host.kv_indptr.data = p2.kv_indptr.data();
    ASSERT_EQ(dev.upload(&lb_extend_attention_args::q_extend), "");
    ASSERT_EQ(dev.upload(&lb_extend_attention_args::qo_indptr), "");
    ASSERT_EQ(dev.upload(&lb_extend_attention_args::kv_indptr), "");
    replay("replay 3 (new q, qo_indptr, kv_indptr) vs direct call on them", direct2);
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
}

// ---- (e) errors and edges ----

using CudaExtendErrors = CudaExtendBase;

ExtendCase error_case() {
    ExtendCase c{"errors", 4242, true, 8, 2, 128, 128, {40, 3, 17}, {20, 0, 9}};
    c.window = 10;
    c.sinks = true;
    return c;
}

// o_extend and lse_extend still poisoned, on the host and on the device.
void expect_untouched(const ExtendBuffers &host, const DeviceArgs &dev, const std::string &what) {
    auto poisoned = [](const std::vector<uint16_t> &o, const std::vector<float> &lse) {
        for (uint16_t x : o) {
            if (x != kPoison16) return false;
        }
        for (float x : lse) {
            if (std::memcmp(&x, &kPoisonLse, 4) != 0) return false;
        }
        return true;
    };
    EXPECT_TRUE(poisoned(host.o, host.lse)) << "host outputs written: " << what;
    std::vector<uint16_t> o(host.o.size());
    std::vector<float> lse(host.lse.size());
    const DeviceBuffer *bo = dev.find(&lb_extend_attention_args::o_extend);
    const DeviceBuffer *bl = dev.find(&lb_extend_attention_args::lse_extend);
    ASSERT_TRUE(bo != nullptr && bl != nullptr);
    ASSERT_EQ(bo->download(o.data(), o.size() * 2), "");
    ASSERT_EQ(bl->download(lse.data(), lse.size() * 4), "");
    EXPECT_TRUE(poisoned(o, lse)) << "device outputs written: " << what;
}

TEST_F(CudaExtendErrors, HostPointersAreRejectedByName) {
    const ExtendCase c = error_case();
    const ExtendProblem p = make_problem(c);
    for (const NamedMember &t : kTensors) {
        const std::string name = t.name;
        if (name == "custom_mask" || name == "mask_indptr" || name == "window_kv_offsets") continue;  // absent here
        ExtendBuffers buf;
        make_args(p, c, LB_BOUNDED, &buf, true);
        DeviceArgs dev;
        ASSERT_EQ(dev.mirror(buf.args), "");
        lb_extend_attention_args args = dev.args;
        (args.*t.member).data = (buf.args.*t.member).data;  // host memory
        const lb_status status = lb_extend_attention_fwd(&args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE)
            << name << " in host memory: status " << status << ": " << message;
        EXPECT_TRUE(names_argument(message, name)) << name << " in host memory: " << message;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        expect_untouched(buf, dev, name + " in host memory");
    }
}

TEST_F(CudaExtendErrors, WrongDeviceIndexIsRejected) {
    const ExtendCase c = error_case();
    const ExtendProblem p = make_problem(c);
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf, true);
    DeviceArgs dev;
    ASSERT_EQ(dev.mirror(buf.args), "");
    const int32_t count = lb_cuda_device_count();
    for (int32_t index : {count, -1}) {
        const lb_status status = lb_extend_attention_fwd(&dev.args, livebound::cuda_device(index, stream_));
        const std::string message = lb_last_error();
        EXPECT_TRUE(status == LB_ERROR_DEVICE || status == LB_ERROR_INVALID_ARGUMENT)
            << "device " << index << ": status " << status << ": " << message;
        EXPECT_TRUE(names_argument(message, "device")) << message;
    }
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    expect_untouched(buf, dev, "nonexistent device index");
    if (const int other = other_device(); other >= 0) {
        // A real device that does not hold the tensors (they live on the test device).
        const lb_status status = lb_extend_attention_fwd(&dev.args, livebound::cuda_device(other, nullptr));
        const std::string message = lb_last_error();
        EXPECT_TRUE(status == LB_ERROR_DEVICE || status == LB_ERROR_INVALID_ARGUMENT) << "status " << status << ": " << message;
        bool named = false;
        for (const NamedMember &t : kTensors) named = named || names_argument(message, t.name);
        EXPECT_TRUE(named) << "the message names no argument: " << message;
        EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos) << message;
        ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
        expect_untouched(buf, dev, "tensors on " + cuda_label() + ", call on device " + std::to_string(other));
    }
}

// MLA's 576/512 runs only on tensor cores: a layout they cannot read is refused naming the
// tensor (a transposed lse_extend; q_extend rows 4 elements apart beyond a multiple of 8),
// writing nothing.
TEST_F(CudaExtendErrors, MlaLayoutsTensorCoresCannotReadAreRefusedByName) {
    ExtendCase c{"mla_layout", 10, true, 8, 1, 576, 512, {20, 7}, {10, 0}};
    const ExtendProblem p = make_problem(c);
    {
        ExtendBuffers buf;
        make_args(p, c, LB_BOUNDED, &buf, true);
        buf.args.lse_extend = lb_tensor{buf.lse.data(), LB_FLOAT32, 2, {p.T, p.Hq}, {1, p.T}};
        DeviceArgs dev;
        ASSERT_EQ(dev.mirror(buf.args), "");
        EXPECT_EQ(lb_extend_attention_fwd(&dev.args, livebound::cuda_device(device_, stream_)), LB_ERROR_UNSUPPORTED);
        EXPECT_TRUE(names_argument(lb_last_error(), "lse_extend")) << lb_last_error();
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        expect_untouched(buf, dev, "transposed lse_extend at 576/512");
    }
    {
        const int64_t row = p.Hq * p.Lq + 4;  // q rows padded by 4 elements
        std::vector<uint16_t> padded(size_t(p.T * row), 0);
        for (int64_t t = 0; t < p.T; t++) {
            std::copy_n(p.q.begin() + long(t * p.Hq * p.Lq), p.Hq * p.Lq, padded.begin() + long(t * row));
        }
        ExtendBuffers buf;
        make_args(p, c, LB_BOUNDED, &buf, true);
        buf.args.q_extend = lb_tensor{padded.data(), LB_BFLOAT16, 3, {p.T, p.Hq, p.Lq}, {row, p.Lq, 1}};
        DeviceArgs dev;
        ASSERT_EQ(dev.mirror(buf.args), "");
        EXPECT_EQ(lb_extend_attention_fwd(&dev.args, livebound::cuda_device(device_, stream_)), LB_ERROR_UNSUPPORTED);
        EXPECT_TRUE(names_argument(lb_last_error(), "q_extend")) << lb_last_error();
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        expect_untouched(buf, dev, "q_extend row stride 4 past a multiple of 8 at 576/512");
    }
}

using CudaExtendEdges = CudaExtendBase;

// No query row (every E_b = 0, rows on both sides of the empty range; and B = 0): OK,
// nothing written.
TEST_F(CudaExtendEdges, NoRowsWritesNothing) {
    ExtendCase c{"no_rows", 5, true, 8, 2, 128, 128, {0, 0}, {10, 3}};
    const ExtendProblem p = with_padding(make_problem(c), kLeadRows, kTailRows, 5005);
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf, true);
    DeviceArgs dev;
    ASSERT_EQ(dev.mirror(buf.args), "");
    ASSERT_EQ(lb_extend_attention_fwd(&dev.args, livebound::cuda_device(device_, stream_)), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    expect_untouched(buf, dev, "every E_b = 0");

    ExtendProblem b0 = p;
    b0.B = 0;
    b0.qo_indptr = {int32_t(kLeadRows)};
    b0.kv_indptr = {0};
    ExtendBuffers buf0;
    make_args(b0, c, LB_BOUNDED, &buf0, true);
    DeviceArgs dev0;
    ASSERT_EQ(dev0.mirror(buf0.args), "");
    ASSERT_EQ(lb_extend_attention_fwd(&dev0.args, livebound::cuda_device(device_, stream_)), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    expect_untouched(buf0, dev0, "B = 0");
}

TEST_F(CudaExtendEdges, NullStreamIsTheLegacyDefaultStream) {
    ExtendCase c = error_case();
    const ExtendProblem p = with_padding(make_problem(c), kLeadRows, kTailRows, 5006);
    Outputs out;
    ASSERT_TRUE(run_on_device(p, c, LB_BOUNDED, true, nullptr, &out)) << describe(c, LB_BOUNDED, true) << " stream NULL";
    expect_accurate(p, references(p), out, describe(c, LB_BOUNDED, true) + " stream NULL", tensor_core_built(c, LB_BOUNDED, true));
}

// MLA's absorbed layout on tensor cores: v_buffer and v_extend as views of the first 512
// dims of k_buffer and k_extend (row stride 576, the same device memory) run the
// values_in_keys variant (V fragments taken from K's, its O columns in another order);
// v_buffer alone a view (v_extend a copy, as SGLang's K7 call passes v.contiguous()) runs
// the list-stage-only one (_vkl) where it is built (LIVEBOUND_MLA_VALUES_IN_LIST_KEYS), else
// the form that loads V. All give the bits of materialised copies, which run the
// variant that loads V; bf16 and fp16, 16-bit and fp8 caches, with and without the LSE.
TEST_F(CudaExtendEdges, MlaValuesAsKeyViewsEqualCopies) {
    for (const char *dt : kMlaDtypes) {
        for (bool with_lse : {true, false}) {
            ExtendCase c{"mla_absorbed_views", 9, true, 8, 1, 576, 512, {40, 37, 5}, {70, 0, 12}};
            c.window = 16;
            set_mla_dtype(&c, dt);
            const std::string what = describe(c, LB_BOUNDED, with_lse);
            const std::string name = std::string("lb_k7_cuda_tc_bounded_") + dt + "_d576_512";
            const std::string lse_tag = with_lse ? "_lse" : "_nolse";
            ExtendProblem p = with_padding(make_problem(c), kLeadRows, kTailRows, 5009);
            absorb_values(&p);
            Outputs copied;
            ASSERT_TRUE(run_on_device(p, c, LB_BOUNDED, with_lse, stream_, &copied)) << what;
            EXPECT_EQ(std::string(lb_last_variant()), name + lse_tag) << what << ": copies";
            expect_accurate(p, references(p), copied, what, tensor_core_built(c, LB_BOUNDED, with_lse));
            for (bool extend_views : {true, false}) {
                const std::string form = what + (extend_views ? ": both values views" : ": v_buffer a view, v_extend a copy");
                ExtendBuffers buf;
                make_args(p, c, LB_BOUNDED, &buf, with_lse);
                if (extend_views) {
                    values_as_key_views(p, &buf.args);
                } else {
                    buf.args.v_buffer = key_view(buf.args.k_buffer, p.Lv);
                }
                DeviceArgs dev;
                ASSERT_EQ(dev.mirror(buf.args), "");
                ASSERT_EQ(dev.args.v_buffer.data, dev.args.k_buffer.data) << form;
                ASSERT_EQ(dev.args.v_extend.data == dev.args.k_extend.data, extend_views) << form;
                ASSERT_EQ(lb_extend_attention_fwd(&dev.args, livebound::cuda_device(device_, stream_)), LB_OK) << lb_last_error();
                const char *tag = extend_views ? (LIVEBOUND_VALUES_IN_KEYS_BUILT ? "_vk" : "")
                                               : (LIVEBOUND_VALUES_IN_LIST_KEYS_BUILT ? "_vkl" : "");
                EXPECT_EQ(std::string(lb_last_variant()), name + tag + lse_tag) << form;
                ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
                ASSERT_EQ(dev.download_outputs(), "");
                expect_identical(copied, Outputs{buf.o, buf.lse}, form + " vs copies");
            }
        }
    }
}

// ---- (f) device-held garbage: clamped, memory-safe ----

// Contract. On the CPU the index values the kernel follows are checked and a bad one is
// refused (LB_ERROR_INVALID_ARGUMENT naming the first bad value: kv_indices[i] outside
// [0, num_slots), qo_indptr / kv_indptr negative, decreasing or past T / len(kv_indices),
// mask_indptr[b] whose block does not fit). On CUDA they live in device memory and are not
// checked (that would need a sync): the kernel clamps every data-dependent index, so the
// call returns LB_OK, reads and writes nothing out of bounds, and the garbage shows only in
// the garbage requests' own rows: rows outside [qo_indptr[0], qo_indptr[B]) of o / lse keep
// their poison, the clean requests' rows are bit-identical to a clean call's. Garbage in
// qo_indptr itself makes the written rows undefined (they are what qo_indptr says): there
// the contract is only LB_OK and no fault (the stream synchronises without an error).
using CudaExtendGarbage = CudaExtendBase;

TEST_F(CudaExtendGarbage, GarbageValuesStayInBounds) {
    struct Form {
        ExtendCase c;
        lb_variant variant;
        bool with_lse;
    };
    // Tensor cores (bf16 128/128, bounded and full-width; bf16 64/64 with a mask, without
    // the LSE) and SIMT (fp16 64/64 with an fp8 cache, int32 kv_indices, int64 indptrs).
    ExtendCase t{"garbage_bf16_d128", 171, true, 8, 2, 128, 128, {70, 33, 90, 1, 20}, {40, 60, 25, 9, 30}};
    t.window = 48;
    ExtendCase s{"garbage_fp8_fp16_d64_index32_indptr64", 172, false, 8, 2, 64, 64, {45, 20, 33, 7, 12}, {30, 5, 70, 11, 0}};
    s.fp8_cache = true;
    s.sinks = true;
    s.index64 = false;
    s.indptr64 = true;
    ExtendCase m{"garbage_bf16_d64_mask", 173, true, 8, 2, 64, 64, {40, 9, 33, 5, 20}, {25, 60, 12, 0, 8}};
    m.custom_mask = true;
    const Form forms[] = {{t, LB_BOUNDED, true}, {t, LB_FULL_WIDTH, true}, {s, LB_BOUNDED, true}, {m, LB_BOUNDED, false}};
    for (const Form &f : forms) {
        const std::string form = describe(f.c, f.variant, f.with_lse);
        ASSERT_TRUE(cuda_variant_built(f.c, f.variant, f.with_lse)) << form;
        const ExtendProblem p = with_padding(make_problem(f.c), kLeadRows, kTailRows, f.c.seed + 7000);
        ASSERT_GE(p.P(2), 6) << form;
        Outputs clean;
        ASSERT_TRUE(run_on_device(p, f.c, f.variant, f.with_lse, stream_, &clean)) << form;
        for (IndexGarbage g : {IndexGarbage::kv_indices, IndexGarbage::kv_indptr, IndexGarbage::mask_indptr, IndexGarbage::qo_indptr}) {
            if (g == IndexGarbage::mask_indptr && !p.has_mask()) continue;
            ExtendProblem bad = p;  // the host storage the garbage goes into
            ExtendBuffers buf;
            make_args(bad, f.c, f.variant, &buf, f.with_lse);  // max_len_extend: the clean value
            const Injected injected = inject_index_garbage(g, p, &buf.args);
            const std::string what = form + " with garbage " + injected.what;
            DeviceArgs dev;
            ASSERT_EQ(dev.mirror(buf.args), "") << what;
            ASSERT_EQ(lb_extend_attention_fwd(&dev.args, livebound::cuda_device(device_, stream_)), LB_OK)
                << lb_last_error() << "\n" << what;
            // No fault: an out-of-bounds access would fail this (and every later call).
            ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "") << what;
            if (g == IndexGarbage::qo_indptr) continue;  // the written rows are undefined: nothing more to check
            ASSERT_EQ(dev.download_outputs(), "") << what;
            const size_t ro = size_t(p.Hq * p.Lv), rl = size_t(p.Hq);
            const size_t r0 = size_t(p.qo_indptr.front()), r1 = size_t(p.qo_indptr.back());
            size_t o_touched = 0, lse_touched = 0;
            for (size_t i = 0; i < buf.o.size(); i++) {
                if ((i / ro < r0 || i / ro >= r1) && buf.o[i] != kPoison16) o_touched++;
            }
            for (size_t i = 0; f.with_lse && i < buf.lse.size(); i++) {
                if ((i / rl < r0 || i / rl >= r1) && std::memcmp(&buf.lse[i], &kPoisonLse, 4) != 0) lse_touched++;
            }
            EXPECT_EQ(o_touched, 0u) << "o elements outside rows [" << r0 << ", " << r1 << ") written: " << what;
            EXPECT_EQ(lse_touched, 0u) << "lse elements outside rows [" << r0 << ", " << r1 << ") written: " << what;
            for (int64_t b = 0; b < p.B; b++) {
                const bool garbage = std::find(injected.requests.begin(), injected.requests.end(), b) != injected.requests.end();
                if (garbage || p.E(b) == 0) continue;
                const size_t q0 = size_t(p.qo_indptr[size_t(b)]), E = size_t(p.E(b));
                EXPECT_EQ(0, std::memcmp(&buf.o[q0 * ro], &clean.o[q0 * ro], E * ro * 2))
                    << "clean request " << b << "'s o differs from the clean call's: " << what;
                if (f.with_lse) {
                    EXPECT_EQ(0, std::memcmp(&buf.lse[q0 * rl], &clean.lse[q0 * rl], E * rl * 4))
                        << "clean request " << b << "'s lse differs from the clean call's: " << what;
                }
            }
        }
    }
}

}  // namespace
}  // namespace livebound::testing
