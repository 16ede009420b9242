// K4 update_trtllm_mha_graph_metadata on the CPU (device = livebound::cpu()), against the
// plain C++ reference (reference/trtllm_metadata_reference.h). Every output is poisoned
// before each call; cases.h says what must hold afterwards.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "trtllm_metadata/cases.h"

namespace livebound::testing::k4 {
namespace {

lb_status run_on_cpu(TrtllmProblem &p, lb_variant variant) {
    const lb_trtllm_mha_graph_metadata_args args = p.host_args(variant);
    return lb_update_trtllm_mha_graph_metadata(&args, livebound::cpu());
}

std::string variant_tag(lb_variant v) { return v == LB_BOUNDED ? "bounded" : "full_width"; }

// ---- spec §4.3's matrix and the extra cases, bounded and full-width ----

using MatrixParam = std::tuple<TrtllmCase, lb_variant>;
class CpuTrtllmMetadata : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(CpuTrtllmMetadata, MatchesReferenceAndLeavesEverythingElsePoisoned) {
    const auto &[spec, variant] = GetParam();
    TrtllmProblem problem = make_problem(spec);
    const std::string context = problem.describe(variant);
    SCOPED_TRACE(context);
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());

    ASSERT_EQ(run_on_cpu(problem, variant), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
    EXPECT_STREQ(lb_last_error(), "");
    const bool noop = problem.bs == 0;  // bs == 0: nothing written at all
    EXPECT_TRUE(check_scalars(problem, want, context, noop));
    EXPECT_TRUE(check_tables(problem, want, variant, context, noop));

    if (variant == LB_FULL_WIDTH) {
        TrtllmProblem bounded = make_problem(spec);
        ASSERT_EQ(run_on_cpu(bounded, LB_BOUNDED), LB_OK) << lb_last_error();
        EXPECT_TRUE(live_prefixes_identical(problem, bounded, want, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuTrtllmMetadata,
                         ::testing::Combine(::testing::ValuesIn(all_cases()),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return std::get<0>(info.param).name + "_" + variant_tag(std::get<1>(info.param));
                         });

// ---- every dtype combination (seq_lens x req_pool_indices x qlens) on a few cases ----

using DtypeParam = std::tuple<TrtllmCase, lb_dtype, lb_dtype, lb_dtype, lb_variant>;
class CpuTrtllmMetadataDtypes : public ::testing::TestWithParam<DtypeParam> {};

TEST_P(CpuTrtllmMetadataDtypes, MatchesReference) {
    const auto &[spec, seq, idx, ql, variant] = GetParam();
    TrtllmProblem problem = make_problem(spec, seq, idx, ql);
    const std::string context = problem.describe(variant);
    SCOPED_TRACE(context);
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
    ASSERT_EQ(run_on_cpu(problem, variant), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
    EXPECT_TRUE(check_scalars(problem, want, context));
    EXPECT_TRUE(check_tables(problem, want, variant, context));
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuTrtllmMetadataDtypes,
                         ::testing::Combine(::testing::ValuesIn(cases_named({"bs17_off4_q1_swa_static",
                                                                             "bs8_off1_q2_noswa_tight",
                                                                             "bs3_off0_q0_swa_tight"})),
                                            ::testing::Values(LB_INT32, LB_INT64), ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<DtypeParam> &info) {
                             auto t = [](lb_dtype d) { return d == LB_INT32 ? "32" : "64"; };
                             return std::get<0>(info.param).name + "_s" + t(std::get<1>(info.param)) + "_i" +
                                    t(std::get<2>(info.param)) + "_q" + t(std::get<3>(info.param)) + "_" +
                                    variant_tag(std::get<4>(info.param));
                         });

// ---- repeated calls on the same buffers: a stale tail from a longer earlier call stays ----

TEST(CpuTrtllmMetadataReplay, ShorterLengthsLeaveTheOldTailInPlace) {
    const std::vector<TrtllmCase> picked = cases_named({"bs8_off1_q1_swa_static"});
    ASSERT_EQ(picked.size(), 1u);
    TrtllmProblem problem = make_problem(picked[0]);
    ASSERT_EQ(run_on_cpu(problem, LB_BOUNDED), LB_OK) << lb_last_error();
    const std::vector<int32_t> before(reinterpret_cast<const int32_t *>(problem.page_table.words.data()),
                                      reinterpret_cast<const int32_t *>(problem.page_table.words.data()) +
                                          problem.page_table.storage_elements);
    // Halve every length: the new live prefix is rewritten, the old live tail is not.
    std::vector<int64_t> shorter;
    for (int64_t l : problem.seq_len_values) shorter.push_back(l / 2);
    problem.set_seq_lens(shorter);
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
    ASSERT_EQ(run_on_cpu(problem, LB_BOUNDED), LB_OK) << lb_last_error();
    for (int64_t b = 0; b < problem.bs; ++b) {
        for (int64_t k = 0; k < problem.max_seq_pages; ++k) {
            const int64_t e = problem.page_table.offset(b, k);
            const int64_t got = problem.page_table.load(e);
            if (k < want.live_pages[b]) {
                EXPECT_EQ(got, want.page_rows[b][k]) << "b=" << b << " p=" << k;
            } else {
                EXPECT_EQ(got, before[e]) << "b=" << b << " p=" << k << ": a dead page was rewritten";
            }
        }
    }
}

}  // namespace
}  // namespace livebound::testing::k4
