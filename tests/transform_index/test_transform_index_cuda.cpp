// K6 transform_index_page_table_prefill on the test CUDA device (LIVEBOUND_TEST_DEVICE, default
// 0; cuda_test_util.h), on caller-owned device memory
// (cuMemAlloc in the primary context) and a caller-created non-blocking stream, against
// the plain C++ reference. Same cases and checks as the CPU suite (cases.h): the device
// result is poisoned by uploading the poisoned host storage and downloaded whole
// (padding and guard included) after the call. Skips, saying why, without a driver or
// device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cases.h"
#include "cuda_driver.h"
#include "cuda_test_util.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing::k6 {
namespace {

using livebound::testing::cuda_error;
using livebound::testing::CudaFixture;
using livebound::testing::DeviceCopies;

// Device copies of every table of a problem (whole storage: view + guard).
class DeviceProblem : public DeviceCopies<HostTable> {
public:
    std::string mirror(TransformIndexProblem &p) {
        for (HostTable *t : {&p.page_table, &p.topk_indices, &p.cu_seqlens_q, &p.result}) {
            std::string error = add(*t);
            if (!error.empty()) return error;
        }
        return {};
    }
    void *pointer(const HostTable &t) const { return device_pointer(t); }
};

// CudaFixture (the test device's primary context and a non-blocking stream, or skipped) + K6 runs.
class CudaTestBase : public CudaFixture {
protected:
    // Mirrors p to the device, runs K6 on `stream`, synchronises, downloads the result.
    ::testing::AssertionResult run_on_device(TransformIndexProblem &p, lb_variant variant, cuda::CUstream stream) {
        DeviceProblem d;
        std::string error = d.mirror(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_transform_index_args args = p.args(variant, [&](HostTable &t) { return d.pointer(t); });
        const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(device_, stream));
        if (status != LB_OK) return ::testing::AssertionFailure() << "status " << status << ": " << lb_last_error();
        if (std::string(lb_last_error()) != "") {
            return ::testing::AssertionFailure() << "lb_last_error() not empty after a success: " << lb_last_error();
        }
        error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream));
        if (error.empty()) error = d.download(p.result);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        return ::testing::AssertionSuccess();
    }
};

template <class Param>
class CudaParamTest : public CudaTestBase, public ::testing::WithParamInterface<Param> {};

// ---- every case x variant ----

using MatrixParam = std::tuple<TransformIndexCase, lb_variant>;
using CudaTransformIndex = CudaParamTest<MatrixParam>;

TEST_P(CudaTransformIndex, MatchesReferenceEverywhere) {
    const auto &[spec, variant] = GetParam();
    TransformIndexProblem problem = make_problem(spec);
    const std::string context = problem.describe(variant, cuda_label());
    SCOPED_TRACE(context);
    const auto expected = reference::transform_index(problem.reference_inputs());
    ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
    EXPECT_TRUE(check_result(problem, expected, context));
    if (variant == LB_FULL_WIDTH) {
        TransformIndexProblem bounded = make_problem(spec);
        ASSERT_TRUE(run_on_device(bounded, LB_BOUNDED, stream_)) << context;
        EXPECT_EQ(bounded.result.storage, problem.result.storage) << context << ": twin and bounded differ";
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaTransformIndex,
                         ::testing::Combine(::testing::ValuesIn(transform_index_cases()),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param));
                         });

// ---- the legacy default stream (stream NULL) ----

using CudaTransformIndexDefaultStream = CudaTestBase;

TEST_F(CudaTransformIndexDefaultStream, NullStreamIsTheLegacyDefaultStream) {
    TransformIndexProblem problem = make_problem(transform_index_cases_named({"one_long_topk2048"}).at(0));
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" stream NULL"));
    const auto expected = reference::transform_index(problem.reference_inputs());
    ASSERT_TRUE(run_on_device(problem, LB_BOUNDED, nullptr)) << context;
    EXPECT_TRUE(check_result(problem, expected, context));
}

// ---- CUDA-graph capture and replay with changed cu_seqlens_q contents ----
// num_tokens, max_extend_len and output_num_tokens are baked into the captured launch;
// the per-request lengths (cu_seqlens_q's contents) change between replays, tokens moving
// between requests (some to 0, some to max_extend_len), as a prefill batch of the same
// bucket would.

// New extend lengths with the same sum, each in [0, max_len].
std::vector<int64_t> redistribute(std::vector<int64_t> lens, int64_t max_len, std::mt19937 &rng, int replay) {
    const size_t bs = lens.size();
    if (bs < 2) return lens;
    for (int move = 0; move < 50; ++move) {
        const size_t from = rng() % bs, to = rng() % bs;
        if (from == to || lens[from] == 0) continue;
        const int64_t room = max_len - lens[to];
        const int64_t k = std::min<int64_t>(room, 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(lens[from])));
        lens[from] -= k;
        lens[to] += k;
    }
    // Empty one request when its tokens fit elsewhere.
    const size_t victim = static_cast<size_t>(replay) % bs;
    for (size_t b = 0; b < bs && lens[victim] > 0; ++b) {
        if (b == victim) continue;
        const int64_t k = std::min(lens[victim], max_len - lens[b]);
        lens[victim] -= k;
        lens[b] += k;
    }
    return lens;
}

using GraphParam = std::tuple<TransformIndexCase, lb_variant>;
using CudaTransformIndexGraph = CudaParamTest<GraphParam>;

TEST_P(CudaTransformIndexGraph, ReplaysFollowUpdatedCuSeqlensQ) {
    const auto &[spec, variant] = GetParam();
    const cuda::Driver *d = cuda::driver();
    TransformIndexProblem problem = make_problem(spec);
    const std::string context = problem.describe(variant, cuda_label(" graph"));
    SCOPED_TRACE(context);

    DeviceProblem mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_transform_index_args args = problem.args(variant, [&](HostTable &t) { return mirror.pointer(t); });
    const lb_device device = livebound::cuda_device(device_, stream_);

    // Warm-up (JIT-compiles the variant's PTX), outside the capture.
    ASSERT_EQ(lb_transform_index_page_table_prefill(&args, device), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "");

    ASSERT_EQ(cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream_, cuda::kStreamCaptureModeThreadLocal)), "");
    const lb_status captured_status = lb_transform_index_page_table_prefill(&args, device);
    const std::string captured_message = lb_last_error();
    cuda::CUgraph graph = nullptr;
    const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream_, &graph));
    ASSERT_EQ(captured_status, LB_OK) << "call during capture: " << captured_message;
    ASSERT_EQ(end_error, "") << "the call did something a capture forbids (sync, allocation, ...)";
    {
        // Kernel launches per call: one for the bounded row form (fill and gather are one
        // definition) and for the fill alone (num_tokens == 0); the full-width twin keeps
        // the grid form, whose fill and gather are two stages, one kernel each. Nothing but
        // kernels.
        const CapturedNodes nodes = count_graph_nodes(graph);
        EXPECT_EQ(nodes.error, "");
        EXPECT_EQ(nodes.kernels, variant == LB_BOUNDED || problem.n == 0 ? 1u : 2u);
        EXPECT_EQ(nodes.total, nodes.kernels) << "a node that is not a kernel";
    }
    cuda::CUgraphExec exec = nullptr;
    const std::string instantiate_error = cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (!instantiate_error.empty()) d->cuGraphDestroy(graph);
    ASSERT_EQ(instantiate_error, "");

    std::mt19937 rng(spec.seed + 1000);
    for (int replay = 0; replay < 3; ++replay) {
        problem.set_extend_lens(redistribute(problem.spec.extend_lens, problem.max_extend_len, rng, replay));
        problem.poison_result();
        ASSERT_EQ(mirror.upload(problem.cu_seqlens_q), "");
        ASSERT_EQ(mirror.upload(problem.result), "");
        const std::string replay_context =
            context + " replay " + std::to_string(replay) + " extend_lens " + lens_text(problem.spec.extend_lens);
        const auto expected = reference::transform_index(problem.reference_inputs());
        ASSERT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream_)), "") << replay_context;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "") << replay_context;
        ASSERT_EQ(mirror.download(problem.result), "") << replay_context;
        EXPECT_TRUE(check_result(problem, expected, replay_context));
    }
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaTransformIndexGraph,
                         ::testing::Combine(::testing::ValuesIn(transform_index_cases_named(
                                                {"one_long_topk2048", "one_long_topk2048_expanded", "tile_edges",
                                                 "max_extend_len_slack", "strided_everything_expanded",
                                                 "random_1_", "empty_requests"})),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<GraphParam> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param));
                         });

// ---- device-side garbage: clamped, never out of bounds ----
// On CUDA cu_seqlens_q and topk_indices are not checked (that would need a sync). With
// garbage in them the values are unspecified, but the call must succeed and nothing
// outside result[0:output_num_tokens, 0:topk] may be written.

using CudaTransformIndexGarbage = CudaTestBase;

TEST_F(CudaTransformIndexGarbage, GarbageIndicesStayInBounds) {
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        TransformIndexProblem problem = make_problem(transform_index_cases_named({"strided_everything"}).at(0));
        const std::vector<int32_t> cu = {0, 1000000, -7, 2000000000, 5};
        for (size_t i = 0; i < cu.size(); ++i) problem.cu_seqlens_q.at(static_cast<int64_t>(i), 0) = cu[i];
        problem.topk_indices.at(0, 0) = INT32_MAX;
        problem.topk_indices.at(5, 3) = 1 << 30;
        const std::string context = problem.describe(variant, cuda_label()) + " with garbage cu_seqlens_q / topk_indices";
        ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
        for (size_t s = 0; s < problem.result.storage.size(); ++s) {
            const int64_t r = static_cast<int64_t>(s) / problem.result.row_stride;
            const int64_t c = static_cast<int64_t>(s) % problem.result.row_stride;
            if (r < problem.output_num_tokens && c < problem.spec.topk) continue;
            ASSERT_EQ(problem.result.storage[s], kPoison) << context << ": wrote outside the result view at row " << r
                                                           << ", column " << c;
        }
    }
}

// ---- a host pointer where device memory is required ----

using CudaTransformIndexWrongMemory = CudaTestBase;

TEST_F(CudaTransformIndexWrongMemory, HostResultIsRejectedByName) {
    TransformIndexProblem problem = make_problem(transform_index_cases_named({"tile_edges"}).at(0));
    const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + " result in host memory";
    DeviceProblem mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    lb_transform_index_args args = problem.args(LB_BOUNDED, [&](HostTable &t) { return mirror.pointer(t); });
    args.result.data = problem.result.data();  // host memory
    const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << "status " << status << ": " << message;
    EXPECT_NE(message.find("argument 'result'"), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(result_untouched(problem, context + " (host result)"));
    ASSERT_EQ(mirror.download(problem.result), "");
    EXPECT_TRUE(result_untouched(problem, context + " (device result)"));
}

// ---- memory of another CUDA device ----
// Every table lives on the test device; the call runs on another. The first tensor checked for
// residency, page_table, is refused by name, and nothing is written. Needs two devices.
TEST_F(CudaTransformIndexWrongMemory, TensorsOnAnotherDeviceAreRejectedByName) {
    const int other = other_device();
    if (other < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
    TransformIndexProblem problem = make_problem(transform_index_cases_named({"tile_edges"}).at(0));
    const std::string context =
        problem.describe(LB_BOUNDED, livebound::testing::cuda_label(other)) + " every table on " + cuda_label();
    DeviceProblem mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_transform_index_args args = problem.args(LB_BOUNDED, [&](HostTable &t) { return mirror.pointer(t); });
    const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(other, nullptr));
    const std::string message = lb_last_error();
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find("argument 'page_table'"), std::string::npos) << message;
    EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
    ASSERT_EQ(mirror.download(problem.result), "");
    EXPECT_TRUE(result_untouched(problem, context + " (device result)"));
}

// ---- the CUDA grid's limits (65535 blocks in y and z) ----
// bs > 65535 requests, or topk wider than 65535 chunks of 256, are refused on CUDA naming
// cu_seqlens_q / topk_indices. Only the shapes say so: the descriptors keep pointing at
// the baseline's (smaller) device copies, which are never read, since the check comes
// right after the tensor's own checks, before residency and before any value is used.
// One below each limit passes this check and is refused by a later one (naming another
// argument), which shows where the limit lies.
using CudaTransformIndexGridLimits = CudaTestBase;

TEST_F(CudaTransformIndexGridLimits, MoreThan65535RequestsAreRejected) {
    TransformIndexProblem problem = make_problem(transform_index_cases_named({"tile_edges"}).at(0));
    DeviceProblem mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    for (const int64_t bs : {int64_t{65536}, int64_t{65535}}) {
        const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + " cu_seqlens_q of bs + 1 = " +
                                    std::to_string(bs + 1) + " entries";
        lb_transform_index_args args = problem.args(LB_BOUNDED, [&](HostTable &t) { return mirror.pointer(t); });
        args.cu_seqlens_q.shape[0] = bs + 1;
        args.page_table_is_expanded = 0;  // page_table must then have bs rows: it has fewer
        const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << context << ": " << message;
        if (bs > 65535) {
            EXPECT_NE(message.find("argument 'cu_seqlens_q'"), std::string::npos) << context << ": " << message;
            EXPECT_NE(message.find("at most 65535 on CUDA"), std::string::npos) << context << ": " << message;
        } else {
            EXPECT_EQ(message.find("argument 'cu_seqlens_q'"), std::string::npos)
                << context << ": bs = 65535 is within the grid: " << message;
        }
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        ASSERT_EQ(mirror.download(problem.result), "");
        EXPECT_TRUE(result_untouched(problem, context));
    }
}

TEST_F(CudaTransformIndexGridLimits, TopkWiderThan65535ChunksIsRejected) {
    TransformIndexProblem problem = make_problem(transform_index_cases_named({"tile_edges"}).at(0));
    DeviceProblem mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const int64_t limit = int64_t{256} * 65535;  // the widest topk: 65535 chunks of 256
    for (const int64_t topk : {limit + 1, limit}) {
        const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + " topk_indices " +
                                    std::to_string(topk) + " columns wide";
        lb_transform_index_args args = problem.args(LB_BOUNDED, [&](HostTable &t) { return mirror.pointer(t); });
        args.topk_indices.shape[1] = topk;  // result is narrower: refused (naming result) at the limit
        const lb_status status = lb_transform_index_page_table_prefill(&args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << context << ": " << message;
        if (topk > limit) {
            EXPECT_NE(message.find("argument 'topk_indices'"), std::string::npos) << context << ": " << message;
            EXPECT_NE(message.find("too wide for the CUDA grid"), std::string::npos) << context << ": " << message;
        } else {
            EXPECT_EQ(message.find("too wide for the CUDA grid"), std::string::npos)
                << context << ": 65535 chunks fit the grid: " << message;
        }
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        ASSERT_EQ(mirror.download(problem.result), "");
        EXPECT_TRUE(result_untouched(problem, context));
    }
}

}  // namespace
}  // namespace livebound::testing::k6
