// K5 argument validation (livebound.h: "Every argument is validated before anything runs.
// A bad one returns a non-zero lb_status and writes nothing; lb_last_error() then names the
// argument"). Each test breaks exactly one argument of an otherwise valid CPU call and
// asserts the status, that the message names the argument, and that every output byte
// still holds the poison.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing::k5 {
namespace {

// The valid call every test starts from: B = 4, seq_lens {70, 0, 129, 3}, page_size 64,
// strided page_indices and seq_lens, padded rows (see the case list).
KvGatherCase baseline_case() {
    KvGatherCase c = kv_gather_cases_named({"strided_everything"}).at(0);
    c.name = "errors_baseline";
    c.seed = 4343;
    return c;
}

const char *status_name(lb_status s) {
    switch (s) {
    case LB_OK: return "LB_OK";
    case LB_ERROR_INVALID_ARGUMENT: return "LB_ERROR_INVALID_ARGUMENT";
    case LB_ERROR_UNSUPPORTED: return "LB_ERROR_UNSUPPORTED";
    case LB_ERROR_DEVICE: return "LB_ERROR_DEVICE";
    case LB_ERROR_KERNEL: return "LB_ERROR_KERNEL";
    }
    return "unknown lb_status";
}

struct BadArgument {
    std::string test_name;
    std::string name;           // lb_last_error() must name this argument
    lb_status status;           // the status the call must return
    std::function<void(lb_dsa_kv_gather_args &, KvGatherProblem &)> apply;
    lb_device device = livebound::cpu();  // the device the call runs on (rows breaking the device)
    lb_status also = LB_OK;               // a second accepted status (LB_OK: none)
};

void PrintTo(const BadArgument &bad, std::ostream *os) { *os << bad.test_name; }

using Member = lb_tensor lb_dsa_kv_gather_args::*;
struct NamedTensor {
    const char *name;
    Member member;
    lb_dtype wrong_dtype;  // a dtype the argument does not accept
};
const NamedTensor kTensors[] = {
    {"buf", &lb_dsa_kv_gather_args::buf, LB_INT32},
    {"page_indices", &lb_dsa_kv_gather_args::page_indices, LB_UINT8},
    {"seq_lens", &lb_dsa_kv_gather_args::seq_lens, LB_UINT8},
    {"k_out", &lb_dsa_kv_gather_args::k_out, LB_INT32},
    {"s_out", &lb_dsa_kv_gather_args::s_out, LB_INT64},
};

void change_ndim(lb_tensor &t) {
    if (t.ndim == 1) {
        t.ndim = 2;
        t.shape[1] = 1;
        t.strides[1] = 1;
    } else {
        t.ndim = 1;
        t.shape[1] = 0;
        t.strides[1] = 0;
    }
}

std::vector<BadArgument> bad_arguments() {
    std::vector<BadArgument> list;
    const lb_status kInvalid = LB_ERROR_INVALID_ARGUMENT;
    auto add = [&](std::string test, std::string name, lb_status status,
                   std::function<void(lb_dsa_kv_gather_args &, KvGatherProblem &)> apply) {
        list.push_back({std::move(test), std::move(name), status, std::move(apply)});
    };

    // ---- per tensor ----
    for (const NamedTensor &t : kTensors) {
        const Member m = t.member;
        const lb_dtype wrong = t.wrong_dtype;
        add(std::string("NullDataNonEmpty_") + t.name, t.name, kInvalid,
            [m](lb_dsa_kv_gather_args &a, KvGatherProblem &) { (a.*m).data = nullptr; });
        add(std::string("WrongNdim_") + t.name, t.name, kInvalid,
            [m](lb_dsa_kv_gather_args &a, KvGatherProblem &) { change_ndim(a.*m); });
        add(std::string("DtypeNone_") + t.name, t.name, kInvalid,
            [m](lb_dsa_kv_gather_args &a, KvGatherProblem &) { (a.*m).dtype = LB_DTYPE_NONE; });
        add(std::string("WrongDtype_") + t.name, t.name, kInvalid,
            [m, wrong](lb_dsa_kv_gather_args &a, KvGatherProblem &) { (a.*m).dtype = wrong; });
        add(std::string("NegativeExtent_") + t.name, t.name, kInvalid,
            [m](lb_dsa_kv_gather_args &a, KvGatherProblem &) { (a.*m).shape[(a.*m).ndim - 1] = -1; });
        add(std::string("Absent_") + t.name, t.name, kInvalid,
            [m](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.*m = lb_tensor{}; });
    }
    add("ColumnStride2_page_indices", "page_indices", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.page_indices.strides[1] = 2; a.page_indices.shape[1] /= 2; });
    // An extent of 2^31 (the upper bound of [0, 2^31)): k_out's rows need only be at least
    // seq_len_sum, so only the range check refuses it (before anything is read).
    add("Extent2pow31_k_out", "k_out", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.k_out.shape[0] = int64_t{1} << 31; });
    add("RowStrideNegative_k_out", "k_out", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) {
        a.k_out.data = static_cast<uint8_t *>(a.k_out.data) + (a.k_out.shape[0] - 1) * a.k_out.strides[0];
        a.k_out.strides[0] = -a.k_out.strides[0];
    });

    // ---- shapes ----
    add("RowsNotB_page_indices", "page_indices", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.page_indices.shape[0] += 1; });
    add("PageBytesNotPageSizeTimesDPlus4_buf", "buf", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.buf.shape[1] -= 4; });
    add("FewerRowsThanSeqLenSum_k_out", "k_out", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &p) { a.k_out.shape[0] = p.seq_len_sum - 1; });
    add("WidthNotD_k_out", "k_out", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.k_out.shape[1] = kHeadDim - 4; });
    add("FewerRowsThanSeqLenSum_s_out", "s_out", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &p) { a.s_out.shape[0] = p.seq_len_sum - 1; });
    add("WidthNot4_s_out", "s_out", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.s_out.shape[1] = 8; });

    // ---- word views: alignment and row strides ----
    add("Misaligned_buf", "buf", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) {
        a.buf.data = static_cast<uint8_t *>(a.buf.data) + 1;
        a.buf.shape[0] -= 1;
    });
    add("RowStrideNotMultipleOf4_buf", "buf", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) {
        a.buf.strides[0] += 2;
        a.buf.shape[0] -= 1;
    });
    add("Misaligned_k_out", "k_out", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) {
        a.k_out.data = static_cast<uint8_t *>(a.k_out.data) + 2;
        a.k_out.shape[0] -= 1;
    });
    add("RowStrideNotMultipleOf4_k_out", "k_out", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.k_out.strides[0] += 1; a.k_out.shape[0] -= 1; });
    add("Misaligned_s_out", "s_out", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) {
        a.s_out.data = static_cast<uint8_t *>(a.s_out.data) + 3;
        a.s_out.shape[0] -= 1;
    });
    add("RowStrideNotMultipleOf4_s_out", "s_out", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.s_out.strides[0] = 6; a.s_out.shape[0] -= 1; });

    // ---- scalars ----
    for (int32_t ps : {0, -64, (1 << 20) + 1, INT32_MIN}) {
        const std::string tag = ps < 0 ? "Minus" + std::to_string(-static_cast<int64_t>(ps)) : std::to_string(ps);
        add("PageSize" + tag, "page_size", kInvalid,
            [ps](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.page_size = ps; });
    }
    add("IndexHeadDim0", "index_head_dim", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.index_head_dim = 0; });
    add("IndexHeadDim130NotMultipleOf4", "index_head_dim", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.index_head_dim = 130; });
    // Built: 64, 128, 256 (cmake/families/dsa_kv_gather.cmake); 96 is a valid D without a variant.
    add("IndexHeadDim96NotBuilt", "index_head_dim", LB_ERROR_UNSUPPORTED,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.index_head_dim = 96; });
    add("SeqLenSumMinus1", "seq_len_sum", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.seq_len_sum = -1; });
    add("SeqLenSumAboveInt32Max", "seq_len_sum", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.seq_len_sum = int64_t{INT32_MAX} + 1; });
    add("SeqLenSumOneLess", "seq_len_sum", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.seq_len_sum -= 1; });
    add("SeqLenSumOneMore", "seq_len_sum", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) {
        a.seq_len_sum += 1;  // the outputs have spare rows: only the sum is wrong
    });
    add("MaxSeqLenMinus1", "max_seq_len", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.max_seq_len = -1; });
    add("MaxSeqLenAboveInt32Max", "max_seq_len", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.max_seq_len = int64_t{INT32_MAX} + 1; });
    add("MaxSeqLenBelowLongestRequest", "max_seq_len", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.max_seq_len = 128; /* seq_lens[2] = 129 */ });
    add("UnknownVariant", "variant", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.variant = static_cast<lb_variant>(7); });

    // ---- values the CPU path reads ----
    add("NegativeLength_seq_lens", "seq_lens", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &p) {
        p.seq_lens.store(1 * p.spec.seq_lens_stride, -1);
        a.seq_len_sum -= 1;  // keep the sum consistent: the negative length is the culprit
    });
    add("PageIdMinus1_page_indices", "page_indices", kInvalid,
        [](lb_dsa_kv_gather_args &, KvGatherProblem &p) { p.page_indices.store(2 * p.pi_row_stride + 1, -1); });
    add("PageIdEqualsNumPages_page_indices", "page_indices", kInvalid,
        [](lb_dsa_kv_gather_args &, KvGatherProblem &p) { p.page_indices.store(0, p.num_pages); });
    add("PageIdAbove2pow32_page_indices", "page_indices", kInvalid, [](lb_dsa_kv_gather_args &a, KvGatherProblem &p) {
        if (a.page_indices.dtype == LB_INT64) {
            p.page_indices.store(0, (int64_t{1} << 32) + 1);  // int32 truncation would give page 1
        } else {
            p.page_indices.store(0, INT32_MAX);
        }
    });
    add("TooFewColumnsForSeqLen_page_indices", "page_indices", kInvalid,
        [](lb_dsa_kv_gather_args &a, KvGatherProblem &) { a.page_indices.shape[1] = 2; /* seq_lens[2] = 129 needs 3 */ });

    // ---- the device (the other arguments: the valid CPU call's, in host memory). As K1's
    // DecodeMetadataBadDevice.CudaIndex*: LB_ERROR_DEVICE (no driver: "CUDA is not
    // available"; with one: "CUDA device n does not exist"). ----
    auto noop = [](lb_dsa_kv_gather_args &, KvGatherProblem &) {};
    list.push_back({"CudaIndexMinus1", "device", kInvalid, noop, livebound::cuda_device(-1, nullptr), LB_ERROR_DEVICE});
    list.push_back({"CudaIndex999", "device", kInvalid, noop, livebound::cuda_device(999, nullptr), LB_ERROR_DEVICE});
    return list;
}

class KvGatherErrors : public ::testing::TestWithParam<BadArgument> {};

TEST_P(KvGatherErrors, RejectedByNameAndNothingWritten) {
    const BadArgument &bad = GetParam();
    for (lb_dtype idx : {LB_INT32, LB_INT64}) {
        KvGatherProblem problem = make_problem(baseline_case(), LB_INT64, idx);
        const std::string context = problem.describe(LB_BOUNDED) + " broken: " + bad.test_name;
        SCOPED_TRACE(context);
        lb_dsa_kv_gather_args args = problem.args(LB_BOUNDED);
        bad.apply(args, problem);
        const lb_status status = lb_get_k_and_s(&args, bad.device);
        const std::string message = lb_last_error();
        ::testing::Test::RecordProperty("lb_last_error", message);
        EXPECT_TRUE(status == bad.status || (bad.also != LB_OK && status == bad.also))
            << status_name(status) << " want " << status_name(bad.status)
            << (bad.also != LB_OK ? std::string(" or ") + status_name(bad.also) : std::string()) << ": " << message;
        EXPECT_TRUE(names_argument(message, bad.name)) << "lb_last_error() = \"" << message << "\" must name '"
                                                       << bad.name << "'";
        EXPECT_TRUE(outputs_untouched(problem, context));
    }
}

INSTANTIATE_TEST_SUITE_P(BadArguments, KvGatherErrors, ::testing::ValuesIn(bad_arguments()),
                         [](const ::testing::TestParamInfo<BadArgument> &info) { return info.param.test_name; });

TEST(KvGatherErrorsMisc, NullArgs) {
    EXPECT_EQ(lb_get_k_and_s(nullptr, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(names_argument(lb_last_error(), "args")) << lb_last_error();
}

TEST(KvGatherErrorsMisc, UnknownDeviceType) {
    KvGatherProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    const lb_dsa_kv_gather_args args = problem.args(LB_BOUNDED);
    lb_device device = livebound::cpu();
    device.type = static_cast<lb_device_type>(9);
    EXPECT_EQ(lb_get_k_and_s(&args, device), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(names_argument(lb_last_error(), "device")) << lb_last_error();
    EXPECT_TRUE(outputs_untouched(problem, "unknown device type"));
}

// A valid call after a rejected one succeeds and clears lb_last_error().
TEST(KvGatherErrorsMisc, SuccessAfterFailureClearsLastError) {
    KvGatherProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT32);
    lb_dsa_kv_gather_args args = problem.args(LB_BOUNDED);
    args.seq_len_sum += 1;
    ASSERT_NE(lb_get_k_and_s(&args, livebound::cpu()), LB_OK);
    args.seq_len_sum -= 1;
    ASSERT_EQ(lb_get_k_and_s(&args, livebound::cpu()), LB_OK) << lb_last_error();
    EXPECT_STREQ(lb_last_error(), "");
    EXPECT_TRUE(check_outputs(problem, reference::get_k_and_s(problem.reference_inputs()), "after a failure"));
}

}  // namespace
}  // namespace livebound::testing::k5
