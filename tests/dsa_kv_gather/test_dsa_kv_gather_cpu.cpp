// K5 _get_k_and_s_triton on the CPU (device = livebound::cpu()), against the plain C++
// reference (reference/dsa_kv_gather_reference.h). Every output byte is poisoned before
// each call; cases.h says what must hold afterwards.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing::k5 {
namespace {

lb_status run_on_cpu(KvGatherProblem &p, lb_variant variant) {
    const lb_dsa_kv_gather_args args = p.args(variant);
    return lb_get_k_and_s(&args, livebound::cpu());
}

// ---- every case x seq_lens dtype x page_indices dtype x variant ----

using MatrixParam = std::tuple<KvGatherCase, lb_dtype, lb_dtype, lb_variant>;
class CpuKvGather : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(CpuKvGather, MatchesReferenceAndWritesNothingElse) {
    const auto &[spec, seq_dtype, index_dtype, variant] = GetParam();
    KvGatherProblem problem = make_problem(spec, seq_dtype, index_dtype);
    const std::string context = problem.describe(variant);
    SCOPED_TRACE(context);
    const reference::KvGatherExpected expected = reference::get_k_and_s(problem.reference_inputs());

    ASSERT_EQ(run_on_cpu(problem, variant), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
    EXPECT_STREQ(lb_last_error(), "") << "a successful call leaves lb_last_error() empty";
    EXPECT_TRUE(check_outputs(problem, expected, context));

    if (variant == LB_FULL_WIDTH) {
        KvGatherProblem bounded = make_problem(spec, seq_dtype, index_dtype);
        ASSERT_EQ(run_on_cpu(bounded, LB_BOUNDED), LB_OK) << context << "\nlb_last_error: " << lb_last_error();
        EXPECT_TRUE(outputs_identical(problem, bounded, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuKvGather,
                         ::testing::Combine(::testing::ValuesIn(kv_gather_cases()),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param),
                                               std::get<2>(info.param), std::get<3>(info.param));
                         });

// ---- B = 0 with null, zero-length inputs and outputs ----

TEST(CpuKvGatherEmpty, NullZeroLengthTensorsAreANoOp) {
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        lb_dsa_kv_gather_args a{};
        uint32_t page[64 * 132 / 4] = {};
        a.buf = livebound::tensor_2d(page, LB_UINT8, 1, 64 * 132);
        a.page_indices = livebound::tensor_2d(nullptr, LB_INT32, 0, 0);
        a.seq_lens = livebound::tensor_1d(nullptr, LB_INT64, 0);
        a.k_out = livebound::tensor_2d(nullptr, LB_UINT8, 0, kHeadDim);
        a.s_out = livebound::tensor_2d(nullptr, LB_UINT8, 0, 4);
        a.page_size = 64;
        a.index_head_dim = kHeadDim;
        a.variant = variant;
        EXPECT_EQ(lb_get_k_and_s(&a, livebound::cpu()), LB_OK) << variant_tag(variant) << ": " << lb_last_error();
    }
}

// ---- the same problem twice: the second call rewrites the same bytes ----

TEST(CpuKvGatherRepeat, SecondCallOnWrittenOutputsGivesTheSameBytes) {
    const auto picked = kv_gather_cases_named({"prefill_B8_ragged_ps64"});
    ASSERT_EQ(picked.size(), 1u);
    KvGatherProblem problem = make_problem(picked[0], LB_INT64, LB_INT32);
    const std::string context = problem.describe(LB_BOUNDED) + " (called twice)";
    const reference::KvGatherExpected expected = reference::get_k_and_s(problem.reference_inputs());
    ASSERT_EQ(run_on_cpu(problem, LB_BOUNDED), LB_OK) << lb_last_error();
    ASSERT_EQ(run_on_cpu(problem, LB_BOUNDED), LB_OK) << lb_last_error();
    EXPECT_TRUE(check_outputs(problem, expected, context));
}

// ---- page ids past 254,201: byte offsets past 2^31 (spec §1.4) ----
// buf is a sparse anonymous mapping of 300,003 pages x 8448 bytes = 2.36 GiB of address
// space (MAP_NORESERVE); only the few pages the requests use are ever touched, so the
// test needs a few hundred KiB of memory. SGLang's int32 arithmetic computes
// page_id * 8448 in 32 bits and wraps for these ids (254,201 * 8448 = 2,147,490,048).

class SparseBuffer {
public:
    explicit SparseBuffer(size_t bytes) : bytes_(bytes) {
        void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        data_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
    }
    ~SparseBuffer() {
        if (data_) munmap(data_, bytes_);
    }
    uint8_t *data() const { return data_; }

private:
    size_t bytes_;
    uint8_t *data_ = nullptr;
};

class CpuKvGatherLargeOffsets : public ::testing::TestWithParam<std::tuple<lb_dtype, lb_variant>> {};

TEST_P(CpuKvGatherLargeOffsets, PageIdsPast254201ReadTheRightBytes) {
    const auto &[index_dtype, variant] = GetParam();
    constexpr int64_t kPageSize = 64, kPageBytes = kPageSize * (kHeadDim + 4), kNumPages = 300003;
    SparseBuffer buf(static_cast<size_t>(kNumPages * kPageBytes));
    if (buf.data() == nullptr) GTEST_SKIP() << "cannot reserve 2.36 GiB of address space (MAP_NORESERVE)";
    // Request 0: pages 254201 (first byte offset 2,147,490,048 > 2^31), 254200, 300002;
    // request 1: pages 7, 270000. Each used page gets distinct bytes.
    const std::vector<std::vector<int64_t>> pages = {{254201, 254200, 300002}, {7, 270000}};
    const std::vector<int64_t> lengths = {150, 100};
    std::mt19937 rng(99);
    for (const auto &row : pages) {
        for (int64_t pg : row) {
            for (int64_t i = 0; i < kPageBytes; ++i) buf.data()[pg * kPageBytes + i] = static_cast<uint8_t>(rng());
        }
    }
    std::vector<int64_t> pi(2 * 3, 0);
    std::vector<int32_t> pi32(2 * 3, 0);
    for (size_t b = 0; b < pages.size(); ++b) {
        for (size_t k = 0; k < pages[b].size(); ++k) {
            pi[b * 3 + k] = pages[b][k];
            pi32[b * 3 + k] = static_cast<int32_t>(pages[b][k]);
        }
    }
    std::vector<int64_t> seq = lengths;
    const int64_t sum = 250;
    std::vector<uint32_t> k_out(sum * kHeadDim / 4, 0xA5A5A5A5u), s_out(sum, 0xA5A5A5A5u);

    lb_dsa_kv_gather_args a{};
    a.buf = livebound::tensor_2d(buf.data(), LB_UINT8, kNumPages, kPageBytes);
    a.page_indices = index_dtype == LB_INT64 ? livebound::tensor_2d(pi.data(), LB_INT64, 2, 3)
                                             : livebound::tensor_2d(pi32.data(), LB_INT32, 2, 3);
    a.seq_lens = livebound::tensor_1d(seq.data(), LB_INT64, 2);
    a.k_out = livebound::tensor_2d(k_out.data(), LB_UINT8, sum, kHeadDim);
    a.s_out = livebound::tensor_2d(s_out.data(), LB_UINT8, sum, 4);
    a.seq_len_sum = sum;
    a.max_seq_len = 256;
    a.page_size = kPageSize;
    a.index_head_dim = kHeadDim;
    a.variant = variant;
    ASSERT_EQ(lb_get_k_and_s(&a, livebound::cpu()), LB_OK) << lb_last_error();

    reference::KvGatherInputs in;
    in.buf = buf.data();
    in.num_pages = kNumPages;
    in.buf_row_stride = kPageBytes;
    in.seq_lens = lengths;
    in.page_indices = pages;
    const reference::KvGatherExpected want = reference::get_k_and_s(in);
    EXPECT_EQ(std::memcmp(k_out.data(), want.k_rows.data(), want.k_rows.size()), 0) << "k_out differs";
    EXPECT_EQ(std::memcmp(s_out.data(), want.s_rows.data(), want.s_rows.size()), 0) << "s_out differs";
    // Sanity of the test: token 0 of request 0 reads from past 2^31 and its bytes are not
    // what a 32-bit wrapped offset would read.
    const int64_t wrapped = static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(254201u * 8448u)));
    ASSERT_LT(wrapped, 0);
    EXPECT_GT(254201 * kPageBytes, int64_t{1} << 31);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CpuKvGatherLargeOffsets,
                         ::testing::Combine(::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<std::tuple<lb_dtype, lb_variant>> &info) {
                             return std::string("i") + (std::get<0>(info.param) == LB_INT32 ? "32" : "64") + "_" +
                                    variant_tag(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace livebound::testing::k5
