// K6 transform_index_page_table_prefill on the CPU against the plain C++ reference:
// every case x variant, every element of the result exact, everything else still poison,
// and the full-width twin bit-identical to the bounded variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"

namespace livebound::testing::k6 {
namespace {

using Param = std::tuple<TransformIndexCase, lb_variant>;
class CpuTransformIndex : public ::testing::TestWithParam<Param> {};

TEST_P(CpuTransformIndex, MatchesReferenceEverywhere) {
    const auto &[spec, variant] = GetParam();
    TransformIndexProblem problem = make_problem(spec);
    const std::string context = problem.describe(variant);
    SCOPED_TRACE(context);
    const auto expected = reference::transform_index(problem.reference_inputs());
    const lb_transform_index_args args = problem.args(variant);
    ASSERT_EQ(lb_transform_index_page_table_prefill(&args, livebound::cpu()), LB_OK) << context << "\n" << lb_last_error();
    EXPECT_STREQ(lb_last_error(), "");
    EXPECT_TRUE(check_result(problem, expected, context));

    if (variant == LB_FULL_WIDTH) {
        TransformIndexProblem bounded = make_problem(spec);
        const lb_transform_index_args b = bounded.args(LB_BOUNDED);
        ASSERT_EQ(lb_transform_index_page_table_prefill(&b, livebound::cpu()), LB_OK) << lb_last_error();
        EXPECT_EQ(bounded.result.storage, problem.result.storage) << context << ": twin and bounded differ";
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuTransformIndex,
                         ::testing::Combine(::testing::ValuesIn(transform_index_cases()),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<Param> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param));
                         });

// The result does not depend on what it held before (poison, zeros, or a previous call's
// values with other lengths): every element of the written region is rewritten.
TEST(CpuTransformIndexReuse, StaleResultIsFullyOverwritten) {
    const auto picked = transform_index_cases_named({"one_long_topk2048"});
    ASSERT_EQ(picked.size(), 1u);
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        TransformIndexProblem problem = make_problem(picked[0]);
        const lb_transform_index_args first = problem.args(variant);
        ASSERT_EQ(lb_transform_index_page_table_prefill(&first, livebound::cpu()), LB_OK) << lb_last_error();
        // Same N and max_extend_len, lengths moved between requests (a replay's new batch).
        std::vector<int64_t> lens = problem.spec.extend_lens;
        std::rotate(lens.begin(), lens.begin() + 1, lens.end());
        problem.set_extend_lens(lens);
        const std::string context = problem.describe(variant) + " after a call with other lengths";
        const auto expected = reference::transform_index(problem.reference_inputs());
        const lb_transform_index_args second = problem.args(variant);
        ASSERT_EQ(lb_transform_index_page_table_prefill(&second, livebound::cpu()), LB_OK) << lb_last_error();
        EXPECT_TRUE(check_result(problem, expected, context));
    }
}

// The C++ wrapper: livebound::check on the C entry point.
TEST(CpuTransformIndexCpp, CheckWrapperSucceeds) {
    TransformIndexProblem problem = make_problem(transform_index_cases_named({"tile_edges"}).at(0));
    const auto expected = reference::transform_index(problem.reference_inputs());
    const lb_transform_index_args args = problem.args(LB_BOUNDED);
    EXPECT_NO_THROW(livebound::check(lb_transform_index_page_table_prefill(&args, livebound::cpu())));
    EXPECT_TRUE(check_result(problem, expected, problem.describe(LB_BOUNDED)));
}

}  // namespace
}  // namespace livebound::testing::k6
