// K4 argument validation (livebound.h: "Every argument is validated before anything runs.
// A bad one returns a non-zero lb_status and writes nothing; lb_last_error() then names the
// argument"). Each test breaks exactly one argument of an otherwise valid CPU call and
// asserts the status, that the message names the argument, and that every output still
// holds what it held before (poison; swa_out_cache_loc's 123 prefill).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "trtllm_metadata/cases.h"

namespace livebound::testing::k4 {
namespace {

// The valid call every test starts from: bs = 4, ps 128, static width (16 pages), SWA
// pages and swa_out_cache_loc, q_mode 1 (cumsum), seqlen_offset 1.
TrtllmCase baseline_case() {
    TrtllmCase c;
    c.name = "errors_baseline_bs4_q1_swa_static";
    c.bs = 4;
    c.q_mode = 1;
    c.with_swa = true;
    c.static_width = true;
    c.seqlen_offset = 1;
    c.seed = 4244;
    return c;
}

struct BadArgument {
    std::string test_name;
    std::string names;  // lb_last_error() must name this argument
    std::function<void(lb_trtllm_mha_graph_metadata_args &, TrtllmProblem &)> apply;
    lb_device device = livebound::cpu();                       // rows breaking the device change it
    std::vector<lb_status> statuses = {LB_ERROR_INVALID_ARGUMENT};  // accepted statuses
};
void PrintTo(const BadArgument &bad, std::ostream *os) { *os << bad.test_name; }

using Member = lb_tensor lb_trtllm_mha_graph_metadata_args::*;
struct NamedTensor {
    const char *name;
    Member member;
    bool optional;  // absent is valid for this baseline
};
const NamedTensor kTensors[] = {
    {"req_pool_indices", &lb_trtllm_mha_graph_metadata_args::req_pool_indices, false},
    {"seq_lens", &lb_trtllm_mha_graph_metadata_args::seq_lens, false},
    {"req_to_token", &lb_trtllm_mha_graph_metadata_args::req_to_token, false},
    {"swa_mapping", &lb_trtllm_mha_graph_metadata_args::swa_mapping, false},
    {"out_cache_loc", &lb_trtllm_mha_graph_metadata_args::out_cache_loc, true},
    {"qlens", &lb_trtllm_mha_graph_metadata_args::qlens, false},
    {"cache_seqlens", &lb_trtllm_mha_graph_metadata_args::cache_seqlens, false},
    {"cu_seqlens_k", &lb_trtllm_mha_graph_metadata_args::cu_seqlens_k, false},
    {"cu_seqlens_q", &lb_trtllm_mha_graph_metadata_args::cu_seqlens_q, false},
    {"page_table", &lb_trtllm_mha_graph_metadata_args::page_table, false},
    {"swa_page_table", &lb_trtllm_mha_graph_metadata_args::swa_page_table, true},
    {"swa_out_cache_loc", &lb_trtllm_mha_graph_metadata_args::swa_out_cache_loc, true},
};

std::vector<BadArgument> bad_arguments() {
    std::vector<BadArgument> list;
    auto add = [&](std::string test, std::string name,
                   std::function<void(lb_trtllm_mha_graph_metadata_args &, TrtllmProblem &)> apply) {
        list.push_back({std::move(test), std::move(name), std::move(apply)});
    };
    using A = lb_trtllm_mha_graph_metadata_args;
    using P = TrtllmProblem;

    // ---- per tensor: null data, wrong ndim, wrong dtype, absent where required ----
    for (const NamedTensor &t : kTensors) {
        const Member m = t.member;
        add(std::string("NullData_") + t.name, t.name, [m](A &a, P &) { (a.*m).data = nullptr; });
        add(std::string("NdimThree_") + t.name, t.name, [m](A &a, P &) { (a.*m).ndim = 3; });
        add(std::string("DtypeNone_") + t.name, t.name, [m](A &a, P &) { (a.*m).dtype = LB_DTYPE_NONE; });
        add(std::string("DtypeUint8_") + t.name, t.name, [m](A &a, P &) { (a.*m).dtype = LB_UINT8; });
        add(std::string("NegativeExtent_") + t.name, t.name, [m](A &a, P &) { (a.*m).shape[(a.*m).ndim - 1] = -1; });
    }
    // An extent of 2^31 (the upper bound of [0, 2^31)): page_table's columns need only be at
    // least max_seq_pages, so only the range check refuses it (before anything is read).
    add("Extent2pow31_page_table", "page_table", [](A &a, P &) { a.page_table.shape[1] = int64_t{1} << 31; });
    // int32 where int64 is required and vice versa.
    add("Int32_swa_mapping", "swa_mapping", [](A &a, P &) { a.swa_mapping.dtype = LB_INT32; });
    add("Int32_out_cache_loc", "out_cache_loc", [](A &a, P &) { a.out_cache_loc.dtype = LB_INT32; });
    add("Int32_swa_out_cache_loc", "swa_out_cache_loc", [](A &a, P &) { a.swa_out_cache_loc.dtype = LB_INT32; });
    add("Int64_cache_seqlens", "cache_seqlens", [](A &a, P &) { a.cache_seqlens.dtype = LB_INT64; });
    add("Int64_cu_seqlens_k", "cu_seqlens_k", [](A &a, P &) { a.cu_seqlens_k.dtype = LB_INT64; });
    add("Int64_cu_seqlens_q", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.dtype = LB_INT64; });
    add("Int64_page_table", "page_table", [](A &a, P &) { a.page_table.dtype = LB_INT64; });
    add("Int64_req_to_token", "req_to_token", [](A &a, P &) { a.req_to_token.dtype = LB_INT64; });

    // ---- required tensors absent ----
    add("Absent_page_table", "page_table", [](A &a, P &) { a.page_table = lb_tensor{}; });
    add("Absent_req_to_token", "req_to_token", [](A &a, P &) { a.req_to_token = lb_tensor{}; });
    add("Absent_qlens_in_q_mode_1", "qlens", [](A &a, P &) { a.qlens = lb_tensor{}; });
    add("Absent_cu_seqlens_q_in_q_mode_1", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q = lb_tensor{}; });
    add("Absent_cu_seqlens_q_in_q_mode_2", "cu_seqlens_q", [](A &a, P &) {
        a.q_mode = LB_Q_MODE_STRIDED;
        a.cu_seqlens_q = lb_tensor{};
    });
    add("SwaPageTableWithoutSwaMapping", "swa_page_table", [](A &a, P &) {
        a.swa_mapping = lb_tensor{};
        a.swa_out_cache_loc = lb_tensor{};
    });
    add("SwaOutWithoutSwaMapping", "swa_out_cache_loc", [](A &a, P &) {
        a.swa_mapping = lb_tensor{};
        a.swa_page_table = lb_tensor{};
    });
    add("EmptySwaMapping", "swa_mapping", [](A &a, P &) { a.swa_mapping.shape[0] = 0; });

    // ---- shapes ----
    add("ShortSeqLens", "seq_lens", [](A &a, P &) { a.seq_lens.shape[0] = a.bs - 1; });
    add("ShortReqPoolIndices", "req_pool_indices", [](A &a, P &) { a.req_pool_indices.shape[0] = a.bs - 1; });
    add("ShortQlens", "qlens", [](A &a, P &) { a.qlens.shape[0] = a.bs - 1; });
    add("ShortCacheSeqlens", "cache_seqlens", [](A &a, P &) { a.cache_seqlens.shape[0] = a.bs - 1; });
    add("CuSeqlensKOfLengthBs", "cu_seqlens_k", [](A &a, P &) { a.cu_seqlens_k.shape[0] = a.bs; });
    add("CuSeqlensQOfLengthBs", "cu_seqlens_q", [](A &a, P &) { a.cu_seqlens_q.shape[0] = a.bs; });
    add("PageTableRowsBelowBs", "page_table", [](A &a, P &) { a.page_table.shape[0] = a.bs - 1; });
    add("PageTableColumnsBelowMaxSeqPages", "page_table", [](A &a, P &) { a.page_table.shape[1] = a.max_seq_pages - 1; });
    add("SwaPageTableRowsBelowBs", "swa_page_table", [](A &a, P &) { a.swa_page_table.shape[0] = a.bs - 1; });
    add("SwaPageTableColumnsBelowMaxSeqPages", "swa_page_table",
        [](A &a, P &) { a.swa_page_table.shape[1] = a.max_seq_pages - 1; });
    add("PageTableColumnStride2", "page_table", [](A &a, P &) {
        a.page_table.strides[1] = 2;
        a.page_table.shape[1] = a.max_seq_pages;  // stays inside the storage
    });
    add("ReqToTokenNoRows", "req_to_token", [](A &a, P &) { a.req_to_token.shape[0] = 0; });
    add("NegativeStrideSeqLens", "seq_lens", [](A &a, P &) { a.seq_lens.strides[0] = -1; });

    // ---- scalars ----
    add("BsNegative", "bs", [](A &a, P &) { a.bs = -1; });
    add("BsTooLarge", "bs", [](A &a, P &) { a.bs = int64_t{1} << 31; });
    add("QModeThree", "q_mode", [](A &a, P &) { a.q_mode = 3; });
    add("QModeNegative", "q_mode", [](A &a, P &) { a.q_mode = -1; });
    add("PageSizeZero", "page_size", [](A &a, P &) { a.page_size = 0; });
    add("PageSizeNotPowerOfTwo", "page_size", [](A &a, P &) { a.page_size = 96; });
    add("PageSizeTooLarge", "page_size", [](A &a, P &) { a.page_size = 1 << 21; });
    add("MaxSeqPagesNegative", "max_seq_pages", [](A &a, P &) { a.max_seq_pages = -1; });
    add("MaxSeqPagesTooLarge", "max_seq_pages", [](A &a, P &) { a.max_seq_pages = int64_t{1} << 31; });
    add("VariantUnknown", "variant", [](A &a, P &) { a.variant = static_cast<lb_variant>(7); });

    // ---- the device (the other arguments: the valid CPU call's, in host memory) ----
    auto noop = [](A &, P &) {};
    list.push_back({"UnknownDeviceType", "device", noop, lb_device{static_cast<lb_device_type>(7), 0, nullptr}});
    // As K1's DecodeMetadataBadDevice.CudaIndex*: LB_ERROR_DEVICE (no driver: "CUDA is not
    // available"; with one: "CUDA device n does not exist").
    list.push_back({"CudaIndexMinus1", "device", noop, livebound::cuda_device(-1, nullptr),
                    {LB_ERROR_INVALID_ARGUMENT, LB_ERROR_DEVICE}});
    list.push_back({"CudaIndex999", "device", noop, livebound::cuda_device(999, nullptr),
                    {LB_ERROR_INVALID_ARGUMENT, LB_ERROR_DEVICE}});

    // ---- index values the kernel would follow (CPU) ----
    add("ReqPoolIndexPastPool", "req_pool_indices", [](A &a, P &p) {
        p.req_pool_indices.store(p.req_pool_indices.offset(2), p.spec.pool_rows);
    });
    add("ReqPoolIndexNegative", "req_pool_indices",
        [](A &a, P &p) { p.req_pool_indices.store(p.req_pool_indices.offset(1), -1); });
    add("SeqLenPastReqToTokenColumns", "seq_lens", [](A &a, P &p) {
        a.req_to_token.shape[1] = 1000;  // a narrower view (same row stride)
        p.seq_lens.store(p.seq_lens.offset(0), 1400);
    });
    add("LiveSlotPastSwaMapping", "req_to_token", [](A &a, P &p) {
        const int64_t row = p.pool_row_of[0];
        p.req_to_token.store(row * p.ctx, a.swa_mapping.shape[0]);
    });
    add("OutCacheLocPastSwaMapping", "out_cache_loc",
        [](A &a, P &p) { p.out_cache_loc.store(p.out_cache_loc.offset(2), a.swa_mapping.shape[0]); });
    return list;
}

class CpuTrtllmMetadataErrors : public ::testing::TestWithParam<BadArgument> {};

TEST_P(CpuTrtllmMetadataErrors, RejectedByNameAndNothingWritten) {
    const BadArgument &bad = GetParam();
    TrtllmProblem problem = make_problem(baseline_case());
    lb_trtllm_mha_graph_metadata_args args = problem.host_args(LB_BOUNDED);
    {
        // The baseline itself is valid.
        TrtllmProblem ok = make_problem(baseline_case());
        const lb_trtllm_mha_graph_metadata_args ok_args = ok.host_args(LB_BOUNDED);
        ASSERT_EQ(lb_update_trtllm_mha_graph_metadata(&ok_args, livebound::cpu()), LB_OK) << lb_last_error();
    }
    bad.apply(args, problem);
    const std::string context = problem.describe(LB_BOUNDED) + " broken: " + bad.test_name;
    const lb_status status = lb_update_trtllm_mha_graph_metadata(&args, bad.device);
    const std::string message = lb_last_error();
    ::testing::Test::RecordProperty("lb_last_error", message);
    bool status_ok = false;
    for (lb_status s : bad.statuses) status_ok = status_ok || s == status;
    EXPECT_TRUE(status_ok) << context << "\nstatus " << status << "\nlb_last_error: " << message;
    EXPECT_TRUE(names_argument(message, bad.names)) << context << "\nlb_last_error: \"" << message
                                                    << "\" must name '" << bad.names << "'";
    EXPECT_TRUE(outputs_untouched(problem, context));
}

INSTANTIATE_TEST_SUITE_P(BadArguments, CpuTrtllmMetadataErrors, ::testing::ValuesIn(bad_arguments()),
                         [](const ::testing::TestParamInfo<BadArgument> &info) { return info.param.test_name; });

TEST(CpuTrtllmMetadataErrorsMisc, NullArgs) {
    EXPECT_EQ(lb_update_trtllm_mha_graph_metadata(nullptr, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(names_argument(lb_last_error(), "args")) << lb_last_error();
}

TEST(CpuTrtllmMetadataErrorsMisc, SuccessClearsLastError) {
    EXPECT_NE(lb_update_trtllm_mha_graph_metadata(nullptr, livebound::cpu()), LB_OK);
    TrtllmProblem problem = make_problem(baseline_case());
    const lb_trtllm_mha_graph_metadata_args args = problem.host_args(LB_BOUNDED);
    EXPECT_EQ(lb_update_trtllm_mha_graph_metadata(&args, livebound::cpu()), LB_OK);
    EXPECT_STREQ(lb_last_error(), "");
}

// A request whose kv length is 0 has no live page: its row is never read, so its
// req_pool_indices entry may be garbage. The CPU accepts it as CUDA does (issue 11); a live
// request's garbage row is still refused by name.
TEST(CpuTrtllmMetadataErrorsMisc, DeadRequestWithGarbagePoolRowIsAccepted) {
    TrtllmCase c = baseline_case();
    c.seqlen_offset = 0;
    TrtllmProblem problem = make_problem(c);
    std::vector<int64_t> lens = problem.seq_len_values;
    lens[0] = 0;
    problem.set_seq_lens(lens);
    // The reference (which also computes the full-width rows) sees the valid row; the bounded
    // outputs do not depend on it.
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
    problem.req_pool_indices.store(problem.req_pool_indices.offset(0), 1000000007);
    const std::string context = problem.describe(LB_BOUNDED) + " seq_lens[0] = 0, req_pool_indices[0] = 1000000007";
    const lb_trtllm_mha_graph_metadata_args args = problem.host_args(LB_BOUNDED);
    ASSERT_EQ(lb_update_trtllm_mha_graph_metadata(&args, livebound::cpu()), LB_OK) << context << "\n" << lb_last_error();
    EXPECT_TRUE(check_scalars(problem, want, context));
    EXPECT_TRUE(check_tables(problem, want, LB_BOUNDED, context));
    lens[0] = 1;
    problem.set_seq_lens(lens);
    const lb_trtllm_mha_graph_metadata_args live_args = problem.host_args(LB_BOUNDED);
    EXPECT_EQ(lb_update_trtllm_mha_graph_metadata(&live_args, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lb_last_error()).find("1000000007"), std::string::npos) << lb_last_error();
}

// q_mode 0 with qlens / cu_seqlens_q absent, skip_page_table with page tables absent and
// garbage page_size, out_cache_loc absent: all valid.
TEST(CpuTrtllmMetadataErrorsMisc, OptionalArgumentsMayBeAbsent) {
    TrtllmCase c = baseline_case();
    c.q_mode = 0;
    c.skip_page_table = true;
    c.page_tables_absent = true;
    c.with_out_cache_loc = false;
    TrtllmProblem problem = make_problem(c);
    lb_trtllm_mha_graph_metadata_args args = problem.host_args(LB_BOUNDED);
    args.cu_seqlens_q = lb_tensor{};
    args.qlens = lb_tensor{};
    args.req_to_token = lb_tensor{};
    args.req_pool_indices = lb_tensor{};
    args.page_size = 0;
    ASSERT_EQ(lb_update_trtllm_mha_graph_metadata(&args, livebound::cpu()), LB_OK) << lb_last_error();
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
    problem.cu_seqlens_q = HostTensor{};
    EXPECT_TRUE(check_scalars(problem, want, problem.describe(LB_BOUNDED)));
}

}  // namespace
}  // namespace livebound::testing::k4
