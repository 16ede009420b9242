// K6 argument validation (livebound.h: "Every argument is validated before anything runs.
// A bad one returns a non-zero lb_status and writes nothing; lb_last_error() then names the
// argument"). Each test breaks exactly one argument of an otherwise valid CPU call and
// asserts the status, that the message names the argument, and that the result storage
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

namespace livebound::testing::k6 {
namespace {

// The valid call every test starts from: bs 4 (extend lengths 3, 0, 6, 2: N = 11),
// topk 16, max_seqlen_k 40, T = 13, output_num_tokens 15, max_extend_len 6, page table
// [4, 40] (one row per request).
TransformIndexCase baseline_case() {
    TransformIndexCase c;
    c.name = "errors_baseline";
    c.extend_lens = {3, 0, 6, 2};
    c.topk = 16;
    c.max_seqlen_k = 40;
    c.extra_topk_rows = 2;
    c.extra_output_rows = 2;
    c.seed = 6006;
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

// The call failed with `status` in `statuses` and its message says "argument '<name>'".
::testing::AssertionResult rejected(lb_status status, const std::vector<lb_status> &statuses, const std::string &name) {
    const std::string message = lb_last_error();
    ::testing::Test::RecordProperty("lb_last_error", message);
    bool status_ok = false;
    for (lb_status s : statuses) status_ok = status_ok || s == status;
    const bool named = message.find("argument '" + name + "'") != std::string::npos;
    if (status_ok && named) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "status " << status_name(status) << ", lb_last_error() = \"" << message
                                         << "\" (must name argument '" << name << "')";
}

const std::vector<lb_status> kInvalid = {LB_ERROR_INVALID_ARGUMENT};
const std::vector<lb_status> kInvalidOrDevice = {LB_ERROR_INVALID_ARGUMENT, LB_ERROR_DEVICE};

// One bad argument: how to break the baseline call, and which argument the message names.
struct BadArgument {
    std::string test_name;
    std::string name;
    std::function<void(lb_transform_index_args &, TransformIndexProblem &)> apply;
};
void PrintTo(const BadArgument &bad, std::ostream *os) { *os << bad.test_name; }

void set_cu(TransformIndexProblem &p, int64_t i, int32_t v) { p.cu_seqlens_q.at(i, 0) = v; }

std::vector<BadArgument> bad_arguments() {
    using A = lb_transform_index_args;
    using P = TransformIndexProblem;
    std::vector<BadArgument> list = {
        {"variant_7", "variant", [](A &a, P &) { a.variant = static_cast<lb_variant>(7); }},
        {"page_size_0", "page_size", [](A &a, P &) { a.page_size = 0; }},
        {"page_size_64", "page_size", [](A &a, P &) { a.page_size = 64; }},
        // cu_seqlens_q
        {"cu_seqlens_q_int64", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.dtype = LB_INT64; }},
        {"cu_seqlens_q_2d", "cu_seqlens_q",
         [](A &a, P &) {
             a.cu_seqlens_q.ndim = 2;
             a.cu_seqlens_q.shape[1] = 1;
             a.cu_seqlens_q.strides[1] = 1;
         }},
        {"cu_seqlens_q_no_entry", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.shape[0] = 0; }},
        {"cu_seqlens_q_null_data", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.data = nullptr; }},
        {"cu_seqlens_q_stride_0", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.strides[0] = 0; }},
        {"cu_seqlens_q_first_not_0", "cu_seqlens_q", [](A &, P &p) { set_cu(p, 0, 1); }},
        {"cu_seqlens_q_decreasing", "cu_seqlens_q", [](A &, P &p) { set_cu(p, 2, 2); }},  // cu = 0,3,2,9,11
        {"cu_seqlens_q_last_not_num_tokens", "cu_seqlens_q", [](A &, P &p) { set_cu(p, 4, 10); }},
        {"cu_seqlens_q_extend_above_max_extend_len", "cu_seqlens_q",
         [](A &a, P &) { a.max_extend_len = 5; }},  // request 2 has 6 tokens
        {"cu_seqlens_q_no_request_but_tokens", "cu_seqlens_q",
         [](A &a, P &) { a.cu_seqlens_q.shape[0] = 1; }},  // bs = 0, N = 11
        // topk_indices
        {"topk_indices_int64", "topk_indices", [](A &a, P &) { a.topk_indices.dtype = LB_INT64; }},
        {"topk_indices_1d", "topk_indices", [](A &a, P &) { a.topk_indices.ndim = 1; }},
        {"topk_indices_column_stride_2", "topk_indices", [](A &a, P &) { a.topk_indices.strides[1] = 2; }},
        {"topk_indices_null_data", "topk_indices", [](A &a, P &) { a.topk_indices.data = nullptr; }},
        {"topk_indices_value_equals_max_seqlen_k", "topk_indices",
         [](A &, P &p) { p.topk_indices.at(10, 15) = static_cast<int32_t>(p.spec.max_seqlen_k); }},
        {"topk_indices_value_huge", "topk_indices", [](A &, P &p) { p.topk_indices.at(0, 0) = INT32_MAX; }},
        // num_tokens
        {"num_tokens_negative", "num_tokens", [](A &a, P &) { a.num_tokens = -1; }},
        {"num_tokens_above_topk_rows", "num_tokens", [](A &a, P &p) { a.num_tokens = p.num_rows + 1; }},
        // output_num_tokens
        {"output_num_tokens_below_topk_rows", "output_num_tokens",
         [](A &a, P &p) { a.output_num_tokens = p.num_rows - 1; }},
        {"output_num_tokens_2pow31", "output_num_tokens", [](A &a, P &) { a.output_num_tokens = int64_t{1} << 31; }},
        // max_extend_len
        {"max_extend_len_negative", "max_extend_len", [](A &a, P &) { a.max_extend_len = -1; }},
        {"max_extend_len_0_with_tokens", "max_extend_len", [](A &a, P &) { a.max_extend_len = 0; }},
        {"max_extend_len_2pow31", "max_extend_len", [](A &a, P &) { a.max_extend_len = int64_t{1} << 31; }},
        // page_table
        {"page_table_int64", "page_table", [](A &a, P &) { a.page_table.dtype = LB_INT64; }},
        {"page_table_1d", "page_table", [](A &a, P &) { a.page_table.ndim = 1; }},
        {"page_table_column_stride_2", "page_table", [](A &a, P &) { a.page_table.strides[1] = 2; }},
        {"page_table_fewer_rows_than_bs", "page_table", [](A &a, P &) { a.page_table.shape[0] = 3; }},
        {"page_table_no_column", "page_table", [](A &a, P &) { a.page_table.shape[1] = 0; }},
        {"page_table_null_data", "page_table", [](A &a, P &) { a.page_table.data = nullptr; }},
        {"page_table_expanded_fewer_rows_than_num_tokens", "page_table",
         [](A &a, P &) { a.page_table_is_expanded = 1; }},  // 4 rows < N = 11
        // result
        {"result_int64", "result", [](A &a, P &) { a.result.dtype = LB_INT64; }},
        {"result_1d", "result", [](A &a, P &) { a.result.ndim = 1; }},
        {"result_fewer_rows_than_output_num_tokens", "result", [](A &a, P &p) { a.result.shape[0] = p.output_num_tokens - 1; }},
        {"result_fewer_columns_than_topk", "result", [](A &a, P &) { a.result.shape[1] = 15; }},
        {"result_column_stride_2", "result", [](A &a, P &) { a.result.strides[1] = 2; }},
        {"result_null_data", "result", [](A &a, P &) { a.result.data = nullptr; }},
        // extents outside [0, 2^31) (refused before anything is read)
        {"cu_seqlens_q_negative_extent", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.shape[0] = -1; }},
        {"topk_indices_negative_extent", "topk_indices", [](A &a, P &) { a.topk_indices.shape[1] = -1; }},
        {"page_table_negative_extent", "page_table", [](A &a, P &) { a.page_table.shape[0] = -1; }},
        {"result_negative_extent", "result", [](A &a, P &) { a.result.shape[1] = -1; }},
        // (result's rows need only be at least output_num_tokens: only the range check
        // refuses 2^31.)
        {"result_extent_2pow31", "result", [](A &a, P &) { a.result.shape[0] = int64_t{1} << 31; }},
    };
    return list;
}

class TransformIndexBadArgument : public ::testing::TestWithParam<BadArgument> {};

TEST_P(TransformIndexBadArgument, RejectedByNameAndNothingWritten) {
    const BadArgument &bad = GetParam();
    TransformIndexProblem problem = make_problem(baseline_case());
    const std::string context = problem.describe(LB_BOUNDED) + " broken: " + bad.test_name;
    SCOPED_TRACE(context);
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        lb_transform_index_args args = problem.args(variant);
        bad.apply(args, problem);
        const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cpu());
        EXPECT_TRUE(rejected(status, kInvalid, bad.name)) << context << " " << variant_tag(variant);
        EXPECT_TRUE(result_untouched(problem, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cpu, TransformIndexBadArgument, ::testing::ValuesIn(bad_arguments()),
                         [](const ::testing::TestParamInfo<BadArgument> &info) { return info.param.test_name; });

// The baseline itself is valid: without this, every rejection above could be an accident.
TEST(TransformIndexErrors, BaselineCallSucceeds) {
    TransformIndexProblem problem = make_problem(baseline_case());
    const auto expected = reference::transform_index(problem.reference_inputs());
    const lb_transform_index_args args = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_transform_index_page_table_prefill(&args, livebound::cpu()), LB_OK) << lb_last_error();
    EXPECT_TRUE(check_result(problem, expected, problem.describe(LB_BOUNDED)));
}

// Boundaries that must be accepted: the largest valid index (max_seqlen_k - 1), any
// negative index, max_extend_len equal to the longest request, garbage in rows >= N of
// topk_indices (never read).
TEST(TransformIndexErrors, BoundaryValuesAreAccepted) {
    TransformIndexProblem problem = make_problem(baseline_case());
    problem.topk_indices.at(10, 15) = static_cast<int32_t>(problem.spec.max_seqlen_k - 1);
    problem.topk_indices.at(0, 0) = INT32_MIN;
    problem.topk_indices.at(11, 0) = INT32_MAX;  // row N: not read
    ASSERT_EQ(problem.max_extend_len, 6);
    const auto expected = reference::transform_index(problem.reference_inputs());
    const lb_transform_index_args args = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_transform_index_page_table_prefill(&args, livebound::cpu()), LB_OK) << lb_last_error();
    EXPECT_TRUE(check_result(problem, expected, problem.describe(LB_BOUNDED) + " boundary values"));
}

TEST(TransformIndexErrors, NullArgsPointer) {
    const lb_status status = lb_transform_index_page_table_prefill(nullptr, livebound::cpu());
    EXPECT_TRUE(rejected(status, kInvalid, "args"));
}

// ---- devices ----

TEST(TransformIndexBadDevice, UnknownDeviceType) {
    TransformIndexProblem problem = make_problem(baseline_case());
    const lb_transform_index_args args = problem.args(LB_BOUNDED);
    const lb_status status = lb_transform_index_page_table_prefill(&args, lb_device{static_cast<lb_device_type>(7), 0, nullptr});
    EXPECT_TRUE(rejected(status, kInvalid, "device"));
    EXPECT_TRUE(result_untouched(problem, "device type 7"));
}

TEST(TransformIndexBadDevice, CudaIndex999) {
    TransformIndexProblem problem = make_problem(baseline_case());
    const lb_transform_index_args args = problem.args(LB_BOUNDED);
    const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(999, nullptr));
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE || status == LB_ERROR_UNSUPPORTED)
        << status_name(status) << ": " << lb_last_error();
    EXPECT_TRUE(std::string(lb_last_error()).find("device") != std::string::npos) << lb_last_error();
    EXPECT_TRUE(result_untouched(problem, "CUDA device 999"));
}

// Without a driver or device a CUDA call fails cleanly (the path this build machine takes).
TEST(TransformIndexBadDevice, CudaWithoutDeviceFailsAndWritesNothing) {
    if (lb_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present; see test_transform_index_cuda";
    TransformIndexProblem problem = make_problem(baseline_case());
    const lb_transform_index_args args = problem.args(LB_BOUNDED);
    const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(0, nullptr));
    EXPECT_TRUE(status == LB_ERROR_DEVICE || status == LB_ERROR_UNSUPPORTED) << status_name(status);
    EXPECT_STRNE(lb_last_error(), "");
    EXPECT_TRUE(result_untouched(problem, "cuda:0 without a device"));
}

// The C++ wrapper throws livebound::Error with the status and the message.
TEST(TransformIndexErrors, CppWrapperThrowsWithStatusAndMessage) {
    TransformIndexProblem problem = make_problem(baseline_case());
    lb_transform_index_args bad = problem.args(LB_BOUNDED);
    bad.page_size = 2;
    try {
        livebound::check(lb_transform_index_page_table_prefill(&bad, livebound::cpu()));
        ADD_FAILURE() << "no exception for page_size 2";
    } catch (const livebound::Error &e) {
        EXPECT_EQ(e.status(), LB_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("argument 'page_size'"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(result_untouched(problem, "page_size 2"));
}

}  // namespace
}  // namespace livebound::testing::k6
