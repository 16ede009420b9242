// K4 update_trtllm_mha_graph_metadata on the test CUDA device (LIVEBOUND_TEST_DEVICE, default
// 0; cuda_test_util.h), on caller-owned device memory
// (cuMemAlloc in the primary context) and a caller-created non-blocking stream, against
// the plain C++ reference. Same cases and checks as the CPU suite (cases.h): device
// outputs are poisoned by uploading the poisoned host storage and downloaded whole
// (guards included) after the call. Skips, saying why, without a driver or device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "cuda_test_util.h"  // DeviceCopies, CudaFixture, cuda_error
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "trtllm_metadata/cases.h"

namespace livebound::testing::k4 {
namespace {

using Mirror = DeviceCopies<HostTensor>;

// CudaFixture (the test device's primary context and a non-blocking stream, or skipped) + K4 runs.
class CudaTestBase : public CudaFixture {
protected:
    ::testing::AssertionResult run_on_device(TrtllmProblem &p, lb_variant variant, cuda::CUstream stream) {
        Mirror mirror;
        std::string error = mirror.mirror(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_trtllm_mha_graph_metadata_args args =
            p.args(variant, [&](HostTensor &t) { return mirror.device_pointer(t); });
        const lb_status status = lb_update_trtllm_mha_graph_metadata(&args, livebound::cuda_device(device_, stream));
        if (status != LB_OK) {
            return ::testing::AssertionFailure() << "status " << status << ", lb_last_error(): " << lb_last_error();
        }
        error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream));
        if (error.empty()) error = mirror.download_outputs(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        return ::testing::AssertionSuccess();
    }
};

template <class Param>
class CudaParamTest : public CudaTestBase, public ::testing::WithParamInterface<Param> {};

std::string variant_tag(lb_variant v) { return v == LB_BOUNDED ? "bounded" : "full_width"; }

// ---- spec §4.3's matrix and the extra cases, bounded and full-width ----

using MatrixParam = std::tuple<TrtllmCase, lb_variant>;
using CudaTrtllmMetadata = CudaParamTest<MatrixParam>;

TEST_P(CudaTrtllmMetadata, MatchesReferenceAndLeavesEverythingElsePoisoned) {
    const auto &[spec, variant] = GetParam();
    TrtllmProblem problem = make_problem(spec);
    const std::string context = problem.describe(variant, cuda_label());
    SCOPED_TRACE(context);
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
    ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
    const bool noop = problem.bs == 0;
    EXPECT_TRUE(check_scalars(problem, want, context, noop));
    EXPECT_TRUE(check_tables(problem, want, variant, context, noop));
    if (variant == LB_FULL_WIDTH) {
        TrtllmProblem bounded = make_problem(spec);
        ASSERT_TRUE(run_on_device(bounded, LB_BOUNDED, stream_)) << context;
        EXPECT_TRUE(live_prefixes_identical(problem, bounded, want, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaTrtllmMetadata,
                         ::testing::Combine(::testing::ValuesIn(all_cases()),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return std::get<0>(info.param).name + "_" + variant_tag(std::get<1>(info.param));
                         });

// ---- every dtype combination on a few cases ----

using DtypeParam = std::tuple<TrtllmCase, lb_dtype, lb_dtype, lb_dtype>;
using CudaTrtllmMetadataDtypes = CudaParamTest<DtypeParam>;

TEST_P(CudaTrtllmMetadataDtypes, MatchesReference) {
    const auto &[spec, seq, idx, ql] = GetParam();
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        TrtllmProblem problem = make_problem(spec, seq, idx, ql);
        const std::string context = problem.describe(variant, cuda_label());
        SCOPED_TRACE(context);
        const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
        ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
        EXPECT_TRUE(check_scalars(problem, want, context));
        EXPECT_TRUE(check_tables(problem, want, variant, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaTrtllmMetadataDtypes,
                         ::testing::Combine(::testing::ValuesIn(cases_named({"bs17_off4_q1_swa_static",
                                                                             "bs8_off1_q2_noswa_tight"})),
                                            ::testing::Values(LB_INT32, LB_INT64), ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_INT32, LB_INT64)),
                         [](const ::testing::TestParamInfo<DtypeParam> &info) {
                             auto t = [](lb_dtype d) { return d == LB_INT32 ? "32" : "64"; };
                             return std::get<0>(info.param).name + "_s" + t(std::get<1>(info.param)) + "_i" +
                                    t(std::get<2>(info.param)) + "_q" + t(std::get<3>(info.param));
                         });

// ---- the legacy default stream (stream NULL) ----

using CudaTrtllmMetadataDefaultStream = CudaTestBase;

TEST_F(CudaTrtllmMetadataDefaultStream, NullStreamIsTheLegacyDefaultStream) {
    const std::vector<TrtllmCase> picked = cases_named({"bs17_off1_q1_swa_static"});
    ASSERT_EQ(picked.size(), 1u);
    TrtllmProblem problem = make_problem(picked[0]);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" stream NULL"));
    const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
    ASSERT_TRUE(run_on_device(problem, LB_BOUNDED, nullptr)) << context;
    EXPECT_TRUE(check_scalars(problem, want, context));
    EXPECT_TRUE(check_tables(problem, want, LB_BOUNDED, context));
}

// ---- CUDA-graph capture and replay: cache_seqlens (and everything else) follows the
// seq_lens uploaded between replays (spec §4.3) ----

using GraphParam = std::tuple<TrtllmCase, lb_variant>;
using CudaTrtllmMetadataGraph = CudaParamTest<GraphParam>;

TEST_P(CudaTrtllmMetadataGraph, ReplaysFollowUpdatedSeqLens) {
    const auto &[spec, variant] = GetParam();
    const cuda::Driver *d = cuda::driver();
    TrtllmProblem problem = make_problem(spec);
    const std::string context = problem.describe(variant, cuda_label(" graph"));
    SCOPED_TRACE(context);

    Mirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_trtllm_mha_graph_metadata_args args =
        problem.args(variant, [&](HostTensor &t) { return mirror.device_pointer(t); });
    const lb_device device = livebound::cuda_device(device_, stream_);

    // Warm-up (JIT-compiles the variants' PTX), outside the capture.
    ASSERT_EQ(lb_update_trtllm_mha_graph_metadata(&args, device), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "");

    ASSERT_EQ(cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream_, cuda::kStreamCaptureModeThreadLocal)),
              "");
    const lb_status captured_status = lb_update_trtllm_mha_graph_metadata(&args, device);
    const std::string captured_message = lb_last_error();
    cuda::CUgraph graph = nullptr;
    const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream_, &graph));
    ASSERT_EQ(captured_status, LB_OK) << "call during capture: " << captured_message;
    ASSERT_EQ(end_error, "") << "the call did something a capture forbids (sync, allocation, ...)";
    {
        // Kernel launches per call: on CUDA the lengths, the page tables and, with the SWA
        // table, swa_out_cache_loc are one kernel (the fused part). swa_out_cache_loc is a
        // launch of its own only when it has entries and the fused kernel has no SWA table
        // to ride on (no SWA table, or the tables skipped or zero-width: then the seqlens part
        // is the first launch). Nothing but kernels.
        const CapturedNodes nodes = count_graph_nodes(graph);
        const bool fused = !spec.skip_page_table && problem.max_seq_pages > 0;
        const bool swa_out_fused = fused && spec.with_swa;
        const size_t swa_out = problem.bs > 0 && problem.swa_out_len > 0 && !swa_out_fused ? 1 : 0;
        EXPECT_EQ(nodes.error, "");
        EXPECT_EQ(nodes.kernels, (problem.bs > 0 ? 1u : 0u) + swa_out);
        EXPECT_EQ(nodes.total, nodes.kernels) << "a node that is not a kernel";
    }
    cuda::CUgraphExec exec = nullptr;
    const std::string instantiate_error =
        cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (!instantiate_error.empty()) d->cuGraphDestroy(graph);
    ASSERT_EQ(instantiate_error, "");

    std::mt19937 rng(spec.seed + 1000);
    // New lengths stay within the captured width: at most max_seq_pages * ps - seqlen_offset.
    const int64_t most = std::max<int64_t>(1, problem.max_seq_pages * spec.page_size - spec.seqlen_offset);
    std::uniform_int_distribution<int64_t> length(1, std::min<int64_t>(most, 1499));
    for (int replay = 0; replay < 3; ++replay) {
        std::vector<int64_t> lengths;
        for (int64_t b = 0; b < problem.bs; ++b) lengths.push_back(length(rng));
        if (problem.bs > 0) lengths[replay % problem.bs] = replay == 0 ? 1 : most;  // shortest and longest
        problem.set_seq_lens(lengths);
        problem.poison_outputs();
        for (HostTensor *t : {&problem.seq_lens, &problem.cache_seqlens, &problem.cu_seqlens_k, &problem.cu_seqlens_q,
                              &problem.page_table, &problem.swa_page_table, &problem.swa_out_cache_loc}) {
            if (t->present) ASSERT_EQ(mirror.upload(*t), "");
        }
        const std::string replay_context = context + " replay " + std::to_string(replay);
        const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(problem.reference_inputs());
        ASSERT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream_)), "") << replay_context;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "") << replay_context;
        ASSERT_EQ(mirror.download_outputs(problem), "") << replay_context;
        EXPECT_TRUE(check_scalars(problem, want, replay_context));
        EXPECT_TRUE(check_tables(problem, want, variant, replay_context));
    }
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaTrtllmMetadataGraph,
                         ::testing::Combine(::testing::ValuesIn(cases_named({"bs17_off1_q1_swa_static",
                                                                             "bs8_off4_q2_noswa_static",
                                                                             "bs3_off0_q0_swa_static",
                                                                             "batch_257_q1_swa"})),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<GraphParam> &info) {
                             return std::get<0>(info.param).name + "_" + variant_tag(std::get<1>(info.param));
                         });

// ---- garbage in the device-held indices: clamped, memory-safe ----
// Contract (spec §1.3; runtime/src/trtllm_metadata.cpp, check_index_values): on the CPU the
// runtime reads the indices the kernels follow and refuses the call, naming the first bad
// value. On CUDA that would need a device sync, so the kernels clamp every data-dependent
// index instead (pool row, token column, swa_mapping slot, out_cache_loc): the call returns
// LB_OK, garbage changes only the VALUES in the garbage request's own region (its columns
// < live_i, or < max_seq_pages for LB_FULL_WIDTH, its lengths, its swa_out_cache_loc entry),
// every other element keeps its poison, and the clean requests still equal the reference.

using CudaTrtllmMetadataGarbage = CudaTestBase;

TEST_F(CudaTrtllmMetadataGarbage, GarbageValuesStayInBounds) {
    const std::vector<TrtllmCase> picked = cases_named({"bs17_off1_q1_swa_static"});
    ASSERT_EQ(picked.size(), 1u);
    constexpr int64_t kBadSlots = 5, kTooLong = 6, kDead = 7;
    auto clean = [](int64_t b) { return b == 2 || b > kDead; };  // requests 2 and 8..16
    for (lb_dtype dtype : {LB_INT32, LB_INT64}) {
        for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
            TrtllmProblem p = make_problem(picked[0], dtype, dtype);
            ASSERT_EQ(p.bs, 17);
            reference::TrtllmMetadataExpected want = reference::trtllm_metadata(p.reference_inputs());
            // The grid as wide as the page tables (18 pages): 2 pages past req_to_token's columns.
            const int64_t reference_width = p.max_seq_pages;
            p.max_seq_pages = p.page_table.shape[1];

            // Pool rows out of [0, pool_rows) for live requests (and a dead one, read by LB_FULL_WIDTH).
            const bool wide = dtype == LB_INT64;
            const std::pair<int64_t, int64_t> bad_rows[] = {
                {0, -1}, {1, p.spec.pool_rows}, {3, int64_t{1} << 30},
                {4, wide ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max()},
                {kDead, wide ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min()}};
            for (const auto &[b, row] : bad_rows) p.req_pool_indices.store(p.req_pool_indices.offset(b), row);
            // Token slots past swa_mapping (and a negative one, which maps to -1) in kBadSlots' live pages.
            const int64_t swa_n = static_cast<int64_t>(p.swa_mapping_values.size());
            const int64_t slots[] = {swa_n, std::numeric_limits<int32_t>::max(), -7, swa_n + 12345};
            for (int64_t k = 0; k < want.live_pages[kBadSlots]; ++k) {
                const int64_t column = k * p.spec.page_size;
                p.req_to_token.store(p.req_to_token.offset(p.pool_row_of[kBadSlots], column), slots[k % 4]);
            }
            // out_cache_loc entries past swa_mapping.
            const int64_t bad_locs[] = {2, 3, 4};
            const int64_t locs[] = {swa_n, std::numeric_limits<int64_t>::max(), swa_n + (int64_t{1} << 40)};
            for (int j = 0; j < 3; ++j) p.out_cache_loc.store(p.out_cache_loc.offset(bad_locs[j]), locs[j]);
            // A length past req_to_token's width (live = max_seq_pages) and a negative one.
            std::vector<int64_t> lengths = p.seq_len_values;
            lengths[kTooLong] = int64_t{1} << 20;
            lengths[kDead] = -5;
            p.set_seq_lens(lengths);
            const std::string context =
                p.describe(variant, cuda_label()) + " with garbage indices in requests 0-7 but 2";
            SCOPED_TRACE(context);

            ASSERT_TRUE(run_on_device(p, variant, stream_)) << context;
            // Lengths and prefix sums follow seq_lens alone (max_seq_pages 0: the reference reads no page).
            reference::TrtllmMetadataInputs lengths_only = p.reference_inputs();
            lengths_only.max_seq_pages = 0;
            const reference::TrtllmMetadataExpected scan = reference::trtllm_metadata(lengths_only);
            want.cache_seqlens = scan.cache_seqlens;
            want.cu_seqlens_k = scan.cu_seqlens_k;
            want.cu_seqlens_q = scan.cu_seqlens_q;
            // Unspecified values, taken from the device: the garbage swa_out_cache_loc entries,
            // the garbage requests' rows, and every row's columns past the reference's width.
            for (int64_t k : bad_locs) {
                want.swa_out_cache_loc[k] = p.swa_out_cache_loc.load(p.swa_out_cache_loc.offset(k));
            }
            auto adopt = [&](std::vector<int32_t> &row, const HostTensor &table, int64_t b, int64_t from) {
                row.resize(from);
                for (int64_t k = from; k < p.max_seq_pages; ++k) {
                    row.push_back(static_cast<int32_t>(table.load(table.offset(b, k))));
                }
            };
            for (int64_t b = 0; b < p.bs; ++b) {
                if (!clean(b)) {
                    want.live_pages[b] =
                        reference::trtllm_live_pages(want.cache_seqlens[b], p.spec.page_size, p.max_seq_pages);
                }
                const int64_t from = clean(b) ? reference_width : 0;
                adopt(want.page_rows[b], p.page_table, b, from);
                adopt(want.swa_page_rows[b], p.swa_page_table, b, from);
            }
            EXPECT_TRUE(check_scalars(p, want, context));
            EXPECT_TRUE(check_tables(p, want, variant, context));
        }
    }
}

// ---- a host pointer where device memory is required ----

using CudaTrtllmMetadataWrongMemory = CudaTestBase;

TEST_F(CudaTrtllmMetadataWrongMemory, HostPageTableIsRejectedByName) {
    const std::vector<TrtllmCase> picked = cases_named({"bs8_off1_q1_swa_static"});
    ASSERT_EQ(picked.size(), 1u);
    TrtllmProblem problem = make_problem(picked[0]);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + " page_table in host memory";
    Mirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    lb_trtllm_mha_graph_metadata_args args =
        problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });
    args.page_table.data = problem.page_table.data();  // host memory
    const lb_status status = lb_update_trtllm_mha_graph_metadata(&args, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << status << ": " << message;
    EXPECT_TRUE(names_argument(message, "page_table")) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (host page_table)"));
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (device outputs)"));
}

// ---- memory of another CUDA device ----
// Every tensor lives on the test device; the call runs on another. The first tensor checked for
// residency, seq_lens, is refused by name, and nothing is written. Needs two devices.
TEST_F(CudaTrtllmMetadataWrongMemory, TensorsOnAnotherDeviceAreRejectedByName) {
    const int other = other_device();
    if (other < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
    const std::vector<TrtllmCase> picked = cases_named({"bs8_off1_q1_swa_static"});
    ASSERT_EQ(picked.size(), 1u);
    TrtllmProblem problem = make_problem(picked[0]);
    const std::string context =
        problem.describe(LB_BOUNDED, livebound::testing::cuda_label(other)) + " every tensor on " + cuda_label();
    Mirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_trtllm_mha_graph_metadata_args args =
        problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });
    const lb_status status = lb_update_trtllm_mha_graph_metadata(&args, livebound::cuda_device(other, nullptr));
    const std::string message = lb_last_error();
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << message;
    EXPECT_TRUE(names_argument(message, "seq_lens")) << message;
    EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (device outputs)"));
}

}  // namespace
}  // namespace livebound::testing::k4
