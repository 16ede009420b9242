// K1 normal_decode_set_metadata on the CPU (device = livebound::cpu()), against the
// plain C++ reference (reference/decode_metadata_reference.h). Every output is poisoned
// before each call; decode_metadata_cases.h says what must hold afterwards.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "decode_metadata_cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing {
namespace {

// Runs K1 on the CPU over p's host buffers; returns the status.
lb_status run_on_cpu(DecodeMetadataProblem &p, lb_variant variant) {
    const lb_decode_metadata_args args = p.args(variant);
    return lb_normal_decode_set_metadata(&args, livebound::cpu());
}

// ---- every case x seq_lens dtype x req_pool_indices dtype x variant ----

using MatrixParam = std::tuple<DecodeMetadataCase, lb_dtype, lb_dtype, lb_variant>;

class CpuDecodeMetadata : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(CpuDecodeMetadata, MatchesReferenceAndLeavesEverythingElsePoisoned) {
    const auto &[spec, seq_dtype, index_dtype, variant] = GetParam();
    DecodeMetadataProblem problem = make_problem(spec, seq_dtype, index_dtype);
    const std::string context = problem.describe(variant);
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());

    ASSERT_EQ(run_on_cpu(problem, variant), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
    EXPECT_STREQ(lb_last_error(), "") << "a successful call leaves lb_last_error() empty";
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, expectation_for(variant, false), context));

    if (variant == LB_FULL_WIDTH) {
        // The full-width twin's live prefix is the bounded product's, element for element.
        DecodeMetadataProblem bounded = make_problem(spec, seq_dtype, index_dtype);
        ASSERT_EQ(run_on_cpu(bounded, LB_BOUNDED), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
        EXPECT_TRUE(live_prefixes_identical(problem, bounded, expected, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuDecodeMetadata,
                         ::testing::Combine(::testing::ValuesIn(decode_metadata_cases()),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param),
                                               std::get<2>(info.param), std::get<3>(info.param));
                         });

// ---- skip_page_table = 1: only cache_seqlens and cu_seqlens_k are written ----

// How the page tables are passed to a skip_page_table call.
enum class SkippedTables {
    kPresent,  // both page tables (and full_to_swa) passed, poisoned: they must stay poisoned
    kAbsent,   // page_table, swa_page_table and full_to_swa absent (all-zero descriptors)
};

void PrintTo(SkippedTables tables, std::ostream *os) {
    *os << (tables == SkippedTables::kAbsent ? "page tables absent" : "page tables present");
}

using SkipParam = std::tuple<DecodeMetadataCase, lb_dtype, lb_variant, SkippedTables>;

class CpuDecodeMetadataSkipPageTable : public ::testing::TestWithParam<SkipParam> {};

TEST_P(CpuDecodeMetadataSkipPageTable, WritesOnlySeqlensAndPrefixSums) {
    const auto &[spec, seq_dtype, variant, tables] = GetParam();
    DecodeMetadataProblem problem = make_problem(spec, seq_dtype, LB_INT64);
    problem.skip_page_table = true;
    if (tables == SkippedTables::kAbsent) {
        problem.page_table = HostTensor{};
        problem.swa_page_table = HostTensor{};
        problem.full_to_swa = HostTensor{};
    }
    const std::string context =
        problem.describe(variant) + (tables == SkippedTables::kAbsent ? " page tables absent" : " page tables present");
    SCOPED_TRACE(context);
    reference::DecodeMetadataInputs inputs = problem.reference_inputs();
    inputs.full_to_swa = nullptr;  // the page rows are not compared
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(inputs);

    ASSERT_EQ(run_on_cpu(problem, variant), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, PageTableExpectation::kUntouched, context));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CpuDecodeMetadataSkipPageTable,
    ::testing::Combine(::testing::ValuesIn(decode_metadata_cases_named(
                           {"B16_len256_ps1_shuffled_pool", "B8_len256_ps16_swa_shuffled_pool",
                            "negative_delta_ps16_swa", "batch_257_ps1_swa", "empty_batch_ps16_swa",
                            "seq_lens_stride2_row_stride_plus37_ps64_swa"})),
                       ::testing::Values(LB_INT32, LB_INT64), ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH),
                       ::testing::Values(SkippedTables::kPresent, SkippedTables::kAbsent)),
    [](const ::testing::TestParamInfo<SkipParam> &info) {
        return std::get<0>(info.param).name + (std::get<1>(info.param) == LB_INT32 ? "_s32_" : "_s64_") +
               variant_tag(std::get<2>(info.param)) +
               (std::get<3>(info.param) == SkippedTables::kAbsent ? "_tables_absent" : "_tables_present");
    });

// ---- bs = 0 with absent (null, zero-length) inputs ----

class CpuDecodeMetadataEmptyBatch : public ::testing::TestWithParam<std::tuple<lb_dtype, lb_variant>> {};

TEST_P(CpuDecodeMetadataEmptyBatch, NullZeroLengthInputsWriteOnlyCuZero) {
    const auto &[dtype, variant] = GetParam();
    const std::vector<DecodeMetadataCase> empty = decode_metadata_cases_named({"empty_batch_ps16_swa"});
    ASSERT_EQ(empty.size(), 1u);
    DecodeMetadataProblem problem = make_problem(empty[0], dtype, dtype);
    const std::string context = problem.describe(variant) + " (seq_lens and req_pool_indices: data NULL, shape [0])";
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());
    ASSERT_EQ(expected.cu_seqlens_k.size(), 1u);

    lb_decode_metadata_args args = problem.args(variant);
    args.seq_lens.data = nullptr;          // [0] seq_lens: nothing to point at
    args.req_pool_indices.data = nullptr;  // [0] req_pool_indices
    ASSERT_EQ(lb_normal_decode_set_metadata(&args, livebound::cpu()), LB_OK)
        << context << "\nlb_last_error: " << lb_last_error();
    EXPECT_TRUE(check_seqlens(problem, expected, context));  // cu_seqlens_k[0] == 0, the rest poisoned
    EXPECT_TRUE(check_page_tables(problem, expected, expectation_for(variant, false), context));
}

INSTANTIATE_TEST_SUITE_P(DtypesAndVariants, CpuDecodeMetadataEmptyBatch,
                         ::testing::Combine(::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<std::tuple<lb_dtype, lb_variant>> &info) {
                             return std::string(dtype_name(std::get<0>(info.param))) + "_" +
                                    variant_tag(std::get<1>(info.param));
                         });

// ---- every other tensor with every stride doubled (inner stride 2) ----
// livebound.h: 1-D tensors may have any stride (>= 1); 2-D tables need a column stride
// of 1. So the 1-D ones must give the reference's results, and the 2-D ones
// (req_to_token, page_table, swa_page_table) must be rejected up front, by name, with
// nothing written. (seq_lens with stride 2 is in the case matrix above.)

using StrideParam = std::tuple<StridedTensor, lb_variant>;

class CpuDecodeMetadataInnerStride2 : public ::testing::TestWithParam<StrideParam> {};

TEST_P(CpuDecodeMetadataInnerStride2, OneDimensionalHonouredTablesRejected) {
    const auto &[strided, variant] = GetParam();
    const std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"B8_len256_ps16_swa_shuffled_pool"});
    ASSERT_EQ(picked.size(), 1u);
    DecodeMetadataProblem problem = make_problem(picked[0], LB_INT64, LB_INT64);
    HostTensor &tensor = problem.*(strided.member);
    tensor = restrided(tensor, 2, strided.filler);
    const std::string context = problem.describe(variant) + " " + strided.name + " with every stride doubled";
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());

    const lb_status status = run_on_cpu(problem, variant);
    if (tensor.ndim == 1) {
        ASSERT_EQ(status, LB_OK) << "1-D tensors may have any stride; lb_last_error(): " << lb_last_error();
        EXPECT_TRUE(check_seqlens(problem, expected, context));
        EXPECT_TRUE(check_page_tables(problem, expected, expectation_for(variant, false), context));
    } else {
        const std::string message = lb_last_error();
        EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << "2-D tables need a column stride of 1; lb_last_error(): " << message;
        EXPECT_TRUE(names_argument(message, strided.name)) << message;
        EXPECT_TRUE(outputs_untouched(problem, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Tensors, CpuDecodeMetadataInnerStride2,
                         ::testing::Combine(::testing::ValuesIn(kStridedTensors),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<StrideParam> &info) {
                             return std::string(std::get<0>(info.param).name) + "_" +
                                    variant_tag(std::get<1>(info.param));
                         });

// ---- the stale-tail contract across calls (what CUDA-graph replays rely on) ----

TEST(CpuDecodeMetadataStaleTail, ShorterSecondCallKeepsTheFirstCallsColumnsPastItsLivePrefix) {
    const std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"B16_len512_ps64_swa"});
    ASSERT_EQ(picked.size(), 1u);
    DecodeMetadataProblem problem = make_problem(picked[0], LB_INT64, LB_INT32);
    const std::string context = problem.describe(LB_BOUNDED) + " (second call with halved lengths, no re-poisoning)";
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected first = reference::decode_metadata(problem.reference_inputs());
    ASSERT_EQ(run_on_cpu(problem, LB_BOUNDED), LB_OK) << lb_last_error();
    const HostTensor after_first = problem.page_table;  // [bs + 2, width] int32 snapshot

    std::vector<int64_t> shorter;
    for (int64_t len : problem.seq_len_values) shorter.push_back(len / 2);
    problem.set_seq_lens(shorter);
    const reference::DecodeMetadataExpected second = reference::decode_metadata(problem.reference_inputs());
    ASSERT_EQ(run_on_cpu(problem, LB_BOUNDED), LB_OK) << lb_last_error();

    EXPECT_TRUE(check_seqlens(problem, second, context));
    MismatchLog log(context + "\npage_table after the second call");
    for (int64_t b = 0; b < problem.bs; ++b) {
        for (int64_t k = 0; k < problem.page_table.shape[1]; ++k) {
            const int64_t e = problem.page_table.offset(b, k);
            const int64_t got = problem.page_table.load(e);
            const std::string where = "page_table[b=" + std::to_string(b) + ", column=" + std::to_string(k) + "]";
            if (k < second.live_pages[b]) {
                if (got != second.page_rows[b][k]) log.add(where + " (live in call 2)", std::to_string(second.page_rows[b][k]), got);
            } else if (got != after_first.load(e)) {
                log.add(where + " (dead in call 2: keeps call 1's value)", std::to_string(after_first.load(e)), got);
            }
        }
    }
    EXPECT_TRUE(log.result());
    // Sanity of the test itself: some columns were live in call 1 and dead in call 2.
    int64_t shrunk_rows = 0;
    for (int64_t b = 0; b < problem.bs; ++b) shrunk_rows += second.live_pages[b] < first.live_pages[b] ? 1 : 0;
    EXPECT_GT(shrunk_rows, 0);
}

}  // namespace
}  // namespace livebound::testing
