// K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata on the CPU against
// the plain C++ reference (tests/reference/dsa_metadata_reference.h). Every case x dtype x
// form: scalars and prefix sums compared in full; the live prefix of every table row exact;
// every other storage element (columns past the live prefix, rows past the batch, guards)
// still poisoned in the bounded form; the full-width twin writes every column of the width
// and agrees with the bounded form on the live prefix.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "cases.h"

namespace livebound::dsa_testing {
namespace {

using Param = std::tuple<DsaCase, lb_dtype, lb_variant>;
class DsaMetadataCpu : public ::testing::TestWithParam<Param> {};

::testing::AssertionResult run(DsaProblem &p, lb_variant variant) {
    const lb_status status = p.call(variant, host_ptr, livebound::cpu());
    if (status != LB_OK) return ::testing::AssertionFailure() << "status " << status << ": " << lb_last_error();
    if (std::string(lb_last_error()) != "") return ::testing::AssertionFailure() << "lb_last_error() after success";
    return ::testing::AssertionSuccess();
}

TEST_P(DsaMetadataCpu, MatchesReferenceAndWritesOnlyTheLivePrefix) {
    const auto &[spec, dtype, variant] = GetParam();
    DsaProblem p = make_problem(spec, dtype);
    const std::string context = p.describe(variant, "cpu");
    SCOPED_TRACE(context);
    const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
    ASSERT_TRUE(run(p, variant)) << context;
    EXPECT_TRUE(check_outputs(p, want, variant, context));
    if (variant == LB_FULL_WIDTH) {
        // The twin's live prefix is the bounded form's, bit for bit.
        DsaProblem bounded = make_problem(spec, dtype);
        ASSERT_TRUE(run(bounded, LB_BOUNDED)) << context;
        for (int64_t r = 0; r < p.rows; ++r) {
            for (int64_t k = 0; k < want.live_tokens[r] && p.page_table_1.present; ++k) {
                const int64_t e = r * p.page_table_1.stride0 + k;
                ASSERT_EQ(p.page_table_1.load(e), bounded.page_table_1.load(e)) << context << " page_table_1[" << r << ", " << k << "]";
            }
            for (int64_t j = 0; j < want.live_pages[r] && p.real_page_table.present; ++j) {
                const int64_t e = r * p.real_page_table.stride0 + j;
                ASSERT_EQ(p.real_page_table.load(e), bounded.real_page_table.load(e)) << context << " real_page_table[" << r << ", " << j << "]";
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, DsaMetadataCpu,
                         ::testing::Combine(::testing::ValuesIn(all_cases()), ::testing::Values(LB_INT64, LB_INT32),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<Param> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
                         });

// The large shape (1M-token width): int64 dtypes only, bounded and full width (heavy on the CPU).
INSTANTIATE_TEST_SUITE_P(LargeShape, DsaMetadataCpu,
                         ::testing::Combine(::testing::ValuesIn(large_shape_cases()), ::testing::Values(LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<Param> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
                         });

// The empty batch writes exactly cu_seqlens_k[0] = 0 and dsa_cu_seqlens_k[0] = 0.
TEST(DsaMetadataCpuEmpty, WritesOnlyTheFirstPrefixSums) {
    for (const DsaCase &c : empty_cases()) {
        DsaProblem p = make_problem(c, LB_INT64);
        const std::string context = p.describe(LB_BOUNDED, "cpu");
        ASSERT_EQ(p.call(LB_BOUNDED, host_ptr, livebound::cpu()), LB_OK) << lb_last_error();
        EXPECT_EQ(p.cu_seqlens_k.load(0), 0) << context;
        EXPECT_EQ(p.dsa_cu_seqlens_k.load(0), 0) << context;
        p.cu_seqlens_k.store(0, kPoison);
        p.dsa_cu_seqlens_k.store(0, kPoison);
        EXPECT_TRUE(outputs_untouched(p, context + " (besides the two first prefix sums)"));
    }
}

// seq_lens past int32 (the high word is dropped, as int32(seq_lens[b])), negative lengths
// (nothing written), a top-k of 0.
TEST(DsaMetadataCpuEdges, Int32WrapNegativeLengthsAndZeroTopk) {
    DsaCase c;
    c.name = "decode_edges";
    c.seq_lens = {(int64_t{1} << 32) + 5, -3, 0, 40, (int64_t{3} << 32) + 100};
    c.width = 64;
    c.topk = 0;
    c.rps = 16;
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        DsaProblem p = make_problem(c, LB_INT64);
        const std::string context = p.describe(v, "cpu");
        const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
        ASSERT_EQ(p.call(v, host_ptr, livebound::cpu()), LB_OK) << lb_last_error();
        EXPECT_TRUE(check_outputs(p, want, v, context));
    }
}

// The checks are sharp: the full-width twin's output (which writes the dead columns) must fail
// the bounded form's check wherever some row has a dead column.
TEST(DsaMetadataCpuChecks, FullWidthOutputFailsTheBoundedCheck) {
    for (const DsaCase &c : {decode_cases()[2], verify_cases()[3]}) {
        DsaProblem p = make_problem(c, LB_INT64);
        const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
        ASSERT_EQ(p.call(LB_FULL_WIDTH, host_ptr, livebound::cpu()), LB_OK) << lb_last_error();
        EXPECT_TRUE(check_outputs(p, want, LB_FULL_WIDTH, c.name));
        EXPECT_FALSE(check_outputs(p, want, LB_BOUNDED, c.name)) << c.name;
    }
}

}  // namespace
}  // namespace livebound::dsa_testing
