// K4 update_trtllm_mha_graph_metadata on CUDA device 0, on caller-owned device memory
// (cuMemAlloc in the primary context) and a caller-created non-blocking stream, against
// the plain C++ reference. Same cases and checks as the CPU suite (cases.h): device
// outputs are poisoned by uploading the poisoned host storage and downloaded whole
// (guards included) after the call. Skips, saying why, without a driver or device.
#include <gtest/gtest.h>

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

// CudaFixture (device 0's primary context and a non-blocking stream, or skipped) + K4 runs.
class CudaTestBase : public CudaFixture {
protected:
    ::testing::AssertionResult run_on_device(TrtllmProblem &p, lb_variant variant, cuda::CUstream stream) {
        Mirror mirror;
        std::string error = mirror.mirror(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_trtllm_mha_graph_metadata_args args =
            p.args(variant, [&](HostTensor &t) { return mirror.device_pointer(t); });
        const lb_status status = lb_update_trtllm_mha_graph_metadata(&args, livebound::cuda_device(0, stream));
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
    const std::string context = problem.describe(variant, "cuda:0");
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
        const std::string context = problem.describe(variant, "cuda:0");
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
    const std::string context = problem.describe(LB_BOUNDED, "cuda:0 stream NULL");
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
    const std::string context = problem.describe(variant, "cuda:0 graph");
    SCOPED_TRACE(context);

    Mirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_trtllm_mha_graph_metadata_args args =
        problem.args(variant, [&](HostTensor &t) { return mirror.device_pointer(t); });
    const lb_device device = livebound::cuda_device(0, stream_);

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
        // Kernel launches per call: on CUDA the lengths and the page tables are one kernel
        // (the fused part; the seqlens part alone when the tables are skipped or zero-width),
        // plus one for swa_out_cache_loc when it has entries (its own AOT pipeline). Nothing
        // but kernels.
        const CapturedNodes nodes = count_graph_nodes(graph);
        const size_t swa_out = problem.bs > 0 && problem.swa_out_len > 0 ? 1 : 0;
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

// ---- a host pointer where device memory is required ----

using CudaTrtllmMetadataWrongMemory = CudaTestBase;

TEST_F(CudaTrtllmMetadataWrongMemory, HostPageTableIsRejectedByName) {
    const std::vector<TrtllmCase> picked = cases_named({"bs8_off1_q1_swa_static"});
    ASSERT_EQ(picked.size(), 1u);
    TrtllmProblem problem = make_problem(picked[0]);
    const std::string context = problem.describe(LB_BOUNDED, "cuda:0") + " page_table in host memory";
    Mirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    lb_trtllm_mha_graph_metadata_args args =
        problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });
    args.page_table.data = problem.page_table.data();  // host memory
    const lb_status status = lb_update_trtllm_mha_graph_metadata(&args, livebound::cuda_device(0, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << status << ": " << message;
    EXPECT_TRUE(names_argument(message, "page_table")) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (host page_table)"));
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (device outputs)"));
}

}  // namespace
}  // namespace livebound::testing::k4
