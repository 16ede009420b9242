// K7 argument validation (livebound.h: "Every argument is validated before anything runs.
// A bad one returns a non-zero lb_status and writes nothing; lb_last_error() then names the
// argument"). Each test breaks exactly one argument of an otherwise valid CPU call and
// asserts the status, that the message names the argument, and that o_extend and
// lse_extend still hold the poison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "unified_cases.h"

namespace livebound::testing {
namespace {

ExtendCase baseline_case() {
    ExtendCase c{"errors_baseline", 4242, true, 8, 2, 64, 64, {40, 3, 17}, {20, 0, 9}};
    c.window = 10;
    c.sinks = true;
    c.custom_mask = true;        // with window_kv_offsets (read: mask and W > 0)
    c.window_kv_offsets = true;
    return c;
}

struct BadArgument {
    std::string test_name;
    std::string name;   // lb_last_error() must name this argument
    lb_status status;
    std::function<void(lb_extend_attention_args &, ExtendProblem &)> apply;
    lb_device device = cpu_device();  // the device the call runs on (rows breaking the device)
};
void PrintTo(const BadArgument &bad, std::ostream *os) { *os << bad.test_name; }

using AttnMember = lb_tensor lb_extend_attention_args::*;  // the float tensors
struct NamedAttn {
    const char *name;
    AttnMember member;
    bool optional;
};
const NamedAttn kAttn[] = {
    {"q_extend", &lb_extend_attention_args::q_extend, false},
    {"k_extend", &lb_extend_attention_args::k_extend, false},
    {"v_extend", &lb_extend_attention_args::v_extend, false},
    {"o_extend", &lb_extend_attention_args::o_extend, false},
    {"k_buffer", &lb_extend_attention_args::k_buffer, false},
    {"v_buffer", &lb_extend_attention_args::v_buffer, false},
    {"sinks", &lb_extend_attention_args::sinks, true},
    {"lse_extend", &lb_extend_attention_args::lse_extend, true},
};
using IdxMember = lb_tensor lb_extend_attention_args::*;
struct NamedIdx {
    const char *name;
    IdxMember member;
};
const NamedIdx kIdx[] = {{"qo_indptr", &lb_extend_attention_args::qo_indptr},
                         {"kv_indptr", &lb_extend_attention_args::kv_indptr},
                         {"kv_indices", &lb_extend_attention_args::kv_indices}};

std::vector<BadArgument> bad_arguments() {
    std::vector<BadArgument> list;
    const lb_status kInvalid = LB_ERROR_INVALID_ARGUMENT;
    auto add = [&](std::string test, std::string name, lb_status status,
                   std::function<void(lb_extend_attention_args &, ExtendProblem &)> apply) {
        list.push_back({std::move(test), std::move(name), status, std::move(apply)});
    };
    // ---- per float tensor ----
    for (const NamedAttn &t : kAttn) {
        const AttnMember m = t.member;
        add(std::string("NullData_") + t.name, t.name, kInvalid,
            [m](lb_extend_attention_args &a, ExtendProblem &) { (a.*m).data = nullptr; });
        add(std::string("WrongNdim_") + t.name, t.name, kInvalid,
            [m](lb_extend_attention_args &a, ExtendProblem &) { (a.*m).ndim = (a.*m).ndim == 3 ? 2 : 3; });
        add(std::string("WrongDtype_") + t.name, t.name, kInvalid, [m](lb_extend_attention_args &a, ExtendProblem &) {
            (a.*m).dtype = (a.*m).dtype == LB_FLOAT32 ? LB_BFLOAT16 : LB_FLOAT32;
        });
        add(std::string("NegativeExtent_") + t.name, t.name, kInvalid,
            [m](lb_extend_attention_args &a, ExtendProblem &) { (a.*m).shape[0] = -1; });
        // (lse_extend takes any strides: ExtendLayouts.TransposedLseEqualsContiguous.)
        if (std::string(t.name) != "lse_extend") {
            add(std::string("LastDimStrided_") + t.name, t.name, kInvalid,
                [m](lb_extend_attention_args &a, ExtendProblem &) { (a.*m).strides[(a.*m).ndim - 1] = 2; });
        }
        if (!t.optional) {
            add(std::string("Absent_") + t.name, t.name, kInvalid,
                [m](lb_extend_attention_args &a, ExtendProblem &) { a.*m = lb_tensor{}; });
        }
    }
    // ---- per index tensor ----
    for (const NamedIdx &t : kIdx) {
        const IdxMember m = t.member;
        add(std::string("NullData_") + t.name, t.name, kInvalid,
            [m](lb_extend_attention_args &a, ExtendProblem &) { (a.*m).data = nullptr; });
        add(std::string("WrongDtype_") + t.name, t.name, kInvalid,
            [m](lb_extend_attention_args &a, ExtendProblem &) { (a.*m).dtype = LB_UINT8; });
        add(std::string("WrongNdim_") + t.name, t.name, kInvalid, [m](lb_extend_attention_args &a, ExtendProblem &) {
            (a.*m).ndim = 2;
            (a.*m).shape[1] = 1;
            (a.*m).strides[1] = 1;
        });
    }
    // ---- shapes ----
    add("KExtendRowsNotT", "k_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.k_extend.shape[0] -= 1; });
    add("KExtendHeadsNotDividingHq", "k_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) {
        a.k_extend.shape[1] = 3;
        a.k_extend.strides[0] = 3 * 64;
    });
    add("KExtendHeadDimNotLq", "k_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.k_extend.shape[2] = 32; });
    add("VExtendHeadsNotHkv", "v_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.v_extend.shape[1] = 1; });
    add("OExtendHeadsNotHq", "o_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.o_extend.shape[1] = 4; });
    add("OExtendDimNotLv", "o_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.o_extend.shape[2] = 32; });
    add("KBufferHeadDimNotLq", "k_buffer", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.k_buffer.shape[2] = 32; });
    add("VBufferSlotsNotKBuffer", "v_buffer", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.v_buffer.shape[0] -= 1; });
    add("SinksNotHq", "sinks", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.sinks.shape[0] = 7; });
    add("LseHeadsNotHq", "lse_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.lse_extend.shape[1] = 7; });
    // (Each one extent of a tensor whose earlier checks all pass: a smaller extent keeps the
    // view inside its storage, and the tensors checked before it are untouched.)
    add("VExtendRowsNotT", "v_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.v_extend.shape[0] -= 1; });
    add("OExtendRowsNotT", "o_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.o_extend.shape[0] -= 1; });
    add("KBufferHeadsNotHkv", "k_buffer", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.k_buffer.shape[1] = 1; });
    add("VBufferHeadsNotHkv", "v_buffer", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.v_buffer.shape[1] = 1; });
    add("VBufferHeadDimNotLv", "v_buffer", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.v_buffer.shape[2] = 32; });
    add("LseRowsNotT", "lse_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.lse_extend.shape[0] -= 1; });
    add("KvIndptrLengthNotB1", "kv_indptr", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.kv_indptr.shape[0] -= 1; });
    add("QoIndptrEmpty", "qo_indptr", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.qo_indptr.shape[0] = 0; });
    // ---- fp8 (e4m3fn): the caches only, both of them ----
    // (The 16-bit buffers viewed as bytes: every call is refused before anything is read.)
    add("KBufferFp8VBuffer16Bit", "v_buffer", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.k_buffer.dtype = LB_FLOAT8_E4M3FN; });
    add("VBufferFp8KBuffer16Bit", "v_buffer", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.v_buffer.dtype = LB_FLOAT8_E4M3FN; });
    add("KBufferUint8", "k_buffer", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) {
        a.k_buffer.dtype = LB_UINT8;
        a.v_buffer.dtype = LB_UINT8;
    });
    add("Fp8_q_extend", "q_extend", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.q_extend.dtype = LB_FLOAT8_E4M3FN; });
    add("Fp8_k_extend", "k_extend", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.k_extend.dtype = LB_FLOAT8_E4M3FN; });
    add("Fp8_v_extend", "v_extend", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.v_extend.dtype = LB_FLOAT8_E4M3FN; });
    add("Fp8_o_extend", "o_extend", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.o_extend.dtype = LB_FLOAT8_E4M3FN; });
    add("Fp8ExtendAndCache_k_extend", "k_extend", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) {
        a.k_extend.dtype = a.k_buffer.dtype = a.v_buffer.dtype = LB_FLOAT8_E4M3FN;
    });
    // ---- values ----
    add("QoIndptrDecreasing", "qo_indptr", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.qo_indptr[2] = 1; });
    add("QoIndptrPastT", "qo_indptr", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.qo_indptr[3] += 1; });
    add("QoIndptrNegative", "qo_indptr", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.qo_indptr[0] = -1; });
    add("KvIndptrPastIndices", "kv_indptr", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.kv_indptr[3] += 1; });
    add("KvIndptrDecreasing", "kv_indptr", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.kv_indptr[1] = 25; });
    // (qo_indptr is valid, so its value checks pass and kv_indptr's first entry is the first
    // thing refused.)
    add("KvIndptrNegative", "kv_indptr", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.kv_indptr[0] = -1; });
    add("KvIndexOutOfRange", "kv_indices", kInvalid,
        [](lb_extend_attention_args &, ExtendProblem &p) { p.kv_indices[5] = p.num_slots; });
    add("KvIndexNegative", "kv_indices", kInvalid, [](lb_extend_attention_args &, ExtendProblem &p) { p.kv_indices[0] = -1; });
    add("MaxLenExtendBelowLongest", "max_len_extend", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.max_len_extend = 39; });
    add("MaxLenExtendNegative", "max_len_extend", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.max_len_extend = -1; });
    add("SmScaleNegative", "sm_scale", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.sm_scale = -1; });
    add("SmScaleNaN", "sm_scale", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.sm_scale = std::numeric_limits<float>::quiet_NaN(); });
    add("LogitCapNegative", "logit_cap", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) { a.logit_cap = -2; });
    add("KScaleInf", "k_scale", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.k_scale = std::numeric_limits<float>::infinity(); });
    add("VScaleNaN", "v_scale", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.v_scale = std::numeric_limits<float>::quiet_NaN(); });
    add("UnknownVariant", "variant", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.variant = static_cast<lb_variant>(5); });
    list.push_back({"UnknownDeviceType", "device", kInvalid, [](lb_extend_attention_args &, ExtendProblem &) {},
                    lb_device{static_cast<lb_device_type>(7), 0, nullptr}});
    // An extent of 2^31 (the upper bound of [0, 2^31)): k_buffer may have any number of slots,
    // so only the range check refuses it (before anything is read).
    add("Extent2pow31_k_buffer", "k_buffer", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.k_buffer.shape[0] = int64_t{1} << 31; });
    // ---- custom mask, window_kv_offsets, xai ----
    add("WrongDtype_custom_mask", "custom_mask", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.custom_mask.dtype = LB_INT32; });
    add("WrongNdim_custom_mask", "custom_mask", kInvalid, [](lb_extend_attention_args &a, ExtendProblem &) {
        a.custom_mask.ndim = 2;
        a.custom_mask.shape[1] = 1;
        a.custom_mask.strides[1] = 1;
    });
    add("Absent_mask_indptr", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.mask_indptr = lb_tensor{}; });
    add("WrongDtype_mask_indptr", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.mask_indptr.dtype = LB_FLOAT32; });
    add("MaskIndptrLengthNotB1", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.mask_indptr.shape[0] -= 1; });
    add("MaskIndptrWithoutMask", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.custom_mask = lb_tensor{}; });
    add("MaskIndptrNegative", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &, ExtendProblem &p) { p.mask_indptr[1] = -1; });
    add("MaskIndptrPastMask", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &, ExtendProblem &p) { p.mask_indptr[2] = int64_t(p.custom_mask.size()) - 5; });
    add("MaskTooShort", "mask_indptr", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.custom_mask.shape[0] -= 3; });
    // (int32 and int64 are both valid for window_kv_offsets and mask_indptr, as for qo_indptr,
    // kv_indptr and kv_indices.)
    add("WrongDtype_window_kv_offsets", "window_kv_offsets", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.window_kv_offsets.dtype = LB_UINT8; });
    add("WindowKvOffsetsLengthNotB", "window_kv_offsets", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.window_kv_offsets.shape[0] = 2; });
    add("WindowKvOffsetsNegative", "window_kv_offsets", kInvalid,
        [](lb_extend_attention_args &, ExtendProblem &p) { p.window_kv_offsets[1] = -1; });
    add("XaiTemperatureLenOne", "xai_temperature_len", kInvalid,
        [](lb_extend_attention_args &a, ExtendProblem &) { a.xai_temperature_len = 1; });
    // ---- valid, but not built ----
    add("HeadDim36NotBuilt", "q_extend", LB_ERROR_UNSUPPORTED, [](lb_extend_attention_args &a, ExtendProblem &) {
        // Lq = Lv = 36 (part rows of the 64-wide buffers): above the scalar bucket (32) and
        // not a multiple of 8, so no variant serves it.
        for (lb_tensor *t : {&a.q_extend, &a.k_extend, &a.v_extend, &a.o_extend, &a.k_buffer, &a.v_buffer}) t->shape[2] = 36;
    });
    add("Fp8CacheHeadDim36NotBuilt", "q_extend", LB_ERROR_UNSUPPORTED, [](lb_extend_attention_args &a, ExtendProblem &) {
        for (lb_tensor *t : {&a.q_extend, &a.k_extend, &a.v_extend, &a.o_extend, &a.k_buffer, &a.v_buffer}) t->shape[2] = 36;
        a.k_buffer.dtype = a.v_buffer.dtype = LB_FLOAT8_E4M3FN;
    });
    return list;
}

class ExtendErrors : public ::testing::TestWithParam<BadArgument> {};

TEST_P(ExtendErrors, RejectedByNameAndNothingWritten) {
    const BadArgument &bad = GetParam();
    const ExtendCase c = baseline_case();
    ExtendProblem p = make_problem(c);
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf);
    bad.apply(buf.args, p);
    const lb_status s = lb_extend_attention_fwd(&buf.args, bad.device);
    EXPECT_EQ(s, bad.status) << bad.test_name << ": " << lb_last_error();
    const std::string msg = lb_last_error();
    EXPECT_NE(msg.find("'" + bad.name + "'"), std::string::npos) << "message does not name " << bad.name << ": " << msg;
    for (uint16_t x : buf.o) ASSERT_EQ(x, kPoison16) << "o_extend written: " << bad.test_name;
    for (float x : buf.lse) ASSERT_EQ(x, kPoisonLse) << "lse_extend written: " << bad.test_name;
}

INSTANTIATE_TEST_SUITE_P(Bad, ExtendErrors, ::testing::ValuesIn(bad_arguments()),
                         [](const ::testing::TestParamInfo<BadArgument> &i) { return i.param.test_name; });

// A CUDA call given host memory. Without a driver or device the device check fails first
// (LB_ERROR_DEVICE); with one, the first tensor is refused by name as host memory (run with
// the H200 present: tests/results/2026-12-02-nvidia-h200-errors-with-gpu.md). Never LB_OK,
// nothing written.
TEST(ExtendErrorsDevice, CudaCallWithHostMemoryIsRefused) {
    const ExtendCase c = baseline_case();
    ExtendProblem p = make_problem(c);
    ExtendBuffers buf;
    make_args(p, c, LB_BOUNDED, &buf);
    const lb_status s = lb_extend_attention_fwd(&buf.args, lb_device{LB_DEVICE_CUDA, 0, nullptr});
    const std::string message = lb_last_error();
    if (s == LB_ERROR_DEVICE) {
        EXPECT_NE(message.find("device"), std::string::npos) << message;
    } else {
        EXPECT_EQ(s, LB_ERROR_INVALID_ARGUMENT) << message;
        EXPECT_NE(message.find("is not CUDA device memory"), std::string::npos) << message;
    }
    for (uint16_t x : buf.o) ASSERT_EQ(x, kPoison16);
}

// A refusal for a head dim nothing serves says what this build serves for the call's facts,
// read from the variant tables (built_text in runtime/src/extend_attention.cpp): the CPU
// buckets of cmake/families/extend_attention.cmake (any dims up to 32, multiples of 8 in
// the larger buckets), for the call's dtype, cache and form.
TEST(ExtendErrorsDevice, UnsupportedHeadDimSaysWhatIsBuilt) {
    for (const bool fp8 : {false, true}) {
        const ExtendCase c = baseline_case();
        ExtendProblem p = make_problem(c);
        ExtendBuffers buf;
        make_args(p, c, LB_BOUNDED, &buf);
        for (lb_tensor *t : {&buf.args.q_extend, &buf.args.k_extend, &buf.args.v_extend, &buf.args.o_extend,
                             &buf.args.k_buffer, &buf.args.v_buffer}) {
            t->shape[2] = 36;
        }
        if (fp8) buf.args.k_buffer.dtype = buf.args.v_buffer.dtype = LB_FLOAT8_E4M3FN;
        ASSERT_EQ(lb_extend_attention_fwd(&buf.args, cpu_device()), LB_ERROR_UNSUPPORTED) << lb_last_error();
        const std::string message = lb_last_error();
        const std::string facts = std::string("this build's CPU variants for bounded ") +
                                  (buf.args.q_extend.dtype == LB_BFLOAT16 ? "bfloat16" : "float16") + " with a " +
                                  (fp8 ? "float8_e4m3fn" : "16-bit") + " cache serve Lq/Lv ";
        EXPECT_NE(message.find(facts + "up to 32/32 (any), up to "), std::string::npos) << message;
        EXPECT_NE(message.find("(multiples of 8)"), std::string::npos) << message;
        for (uint16_t x : buf.o) ASSERT_EQ(x, kPoison16);
    }
}

TEST(ExtendErrorsDevice, NullArgs) {
    EXPECT_EQ(lb_extend_attention_fwd(nullptr, cpu_device()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lb_last_error()).find("'args'"), std::string::npos);
}

// ---- K8 lb_extend_attention_fwd_unified: the shared rules of checks.md 1.2 ----
// K8's own table (Bad/UnifiedErrors, test_extend_attention_unified_cpu.cpp) breaks one
// argument of a valid CPU call; these rows break the device, or give an extent of 2^31,
// in a call built the same way (UnifiedErrors' baseline: bf16 64/64, 3 requests, sinks, a
// custom mask), and assert the same: the status, that the message names the argument, o
// still poisoned.

struct BadUnifiedShared {
    std::string test_name;
    std::string name;                   // lb_last_error() must name this argument
    std::vector<lb_status> statuses;    // accepted statuses
    lb_device device;                   // the device the call runs on
    std::function<void(lb_extend_attention_unified_args &)> apply;
};
void PrintTo(const BadUnifiedShared &bad, std::ostream *os) { *os << bad.test_name; }

UnifiedCase unified_baseline_case() {
    UnifiedCase c{"errors", 4343, true, 8, 2, 64, 64, {40, 3, 17}, {20, 0, 9}};
    c.window = 10;
    c.sinks = true;
    c.custom_mask = true;
    return c;
}

std::vector<BadUnifiedShared> bad_unified_shared() {
    using A = lb_extend_attention_unified_args;
    const std::vector<lb_status> kInvalid = {LB_ERROR_INVALID_ARGUMENT};
    auto noop = [](A &) {};
    return {
        {"UnknownDeviceType", "device", kInvalid, lb_device{static_cast<lb_device_type>(7), 0, nullptr}, noop},
        // As K1's DecodeMetadataBadDevice.CudaIndex*: LB_ERROR_DEVICE (no driver: "CUDA is not
        // available"; with one: "CUDA device n does not exist"); the tensors are host memory.
        {"CudaIndexMinus1", "device", {LB_ERROR_INVALID_ARGUMENT, LB_ERROR_DEVICE}, livebound::cuda_device(-1, nullptr),
         noop},
        {"CudaIndex999", "device", {LB_ERROR_INVALID_ARGUMENT, LB_ERROR_DEVICE}, livebound::cuda_device(999, nullptr),
         noop},
        // An extent of 2^31 (the upper bound of [0, 2^31)): k_buffer may have any number of
        // slots >= 1, so only the range check refuses it (before anything is read).
        {"Extent2pow31_k_buffer", "k_buffer", kInvalid, cpu_device(),
         [](A &a) { a.k_buffer.shape[0] = int64_t{1} << 31; }},
        // q's heads, whose extent is otherwise only compared with o's and sinks' (later).
        {"Extent2pow31_q", "q", kInvalid, cpu_device(), [](A &a) { a.q.shape[1] = int64_t{1} << 31; }},
    };
}

class UnifiedSharedErrors : public ::testing::TestWithParam<BadUnifiedShared> {};

TEST_P(UnifiedSharedErrors, RejectedByNameAndNothingWritten) {
    const BadUnifiedShared &bad = GetParam();
    const UnifiedCase c = unified_baseline_case();
    UnifiedProblem p = make_unified_problem(c);
    UnifiedBuffers buf;
    make_unified_args(p, c, LB_BOUNDED, &buf);
    bad.apply(buf.args);
    const lb_status s = lb_extend_attention_fwd_unified(&buf.args, bad.device);
    const std::string msg = lb_last_error();
    ::testing::Test::RecordProperty("lb_last_error", msg);
    bool status_ok = false;
    for (lb_status want : bad.statuses) status_ok = status_ok || want == s;
    EXPECT_TRUE(status_ok) << bad.test_name << ": status " << s << ": " << msg;
    EXPECT_NE(msg.find("'" + bad.name + "'"), std::string::npos) << "message does not name '" << bad.name << "': " << msg;
    for (uint16_t x : buf.o) ASSERT_EQ(x, kPoison16) << "o written: " << bad.test_name;
}

INSTANTIATE_TEST_SUITE_P(Bad, UnifiedSharedErrors, ::testing::ValuesIn(bad_unified_shared()),
                         [](const ::testing::TestParamInfo<BadUnifiedShared> &i) { return i.param.test_name; });

// The baseline of UnifiedSharedErrors is valid (so that each refusal is the broken argument's).
TEST(UnifiedSharedErrorsBaseline, BaselineCallSucceeds) {
    const UnifiedCase c = unified_baseline_case();
    UnifiedProblem p = make_unified_problem(c);
    UnifiedBuffers buf;
    make_unified_args(p, c, LB_BOUNDED, &buf);
    EXPECT_EQ(lb_extend_attention_fwd_unified(&buf.args, cpu_device()), LB_OK) << lb_last_error();
}

}  // namespace
}  // namespace livebound::testing
