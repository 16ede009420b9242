// K1 normal_decode_set_metadata on the test CUDA device (LIVEBOUND_TEST_DEVICE, default 0;
// cuda_test_util.h), on caller-owned device memory
// (cuMemAlloc in the primary context) and a caller-created non-blocking stream, against
// the plain C++ reference. Same cases and checks as the CPU suite (decode_metadata_cases.h):
// device outputs are poisoned by uploading the poisoned host storage, and downloaded
// whole (guards included) after the call. Skips, saying why, without a driver or device.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "cuda_test_util.h"
#include "decode_metadata_cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing {
namespace {

using DeviceMirror = DeviceCopies<HostTensor>;

// CudaFixture (the test device's primary context and a non-blocking stream, or skipped) + K1 runs.
class CudaTestBase : public CudaFixture {
protected:
    // Mirrors p to the device, runs K1 on `stream`, synchronises and downloads every
    // output back into p's host storage.
    ::testing::AssertionResult run_on_device(DecodeMetadataProblem &p, lb_variant variant, cuda::CUstream stream) {
        DeviceMirror mirror;
        std::string error = mirror.mirror(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_decode_metadata_args args =
            p.args(variant, [&](HostTensor &t) { return mirror.device_pointer(t); });
        const lb_status status = lb_normal_decode_set_metadata(&args, livebound::cuda_device(device_, stream));
        if (status != LB_OK) {
            return ::testing::AssertionFailure() << "status " << status << ", lb_last_error(): " << lb_last_error();
        }
        if (std::string(lb_last_error()) != "") {
            return ::testing::AssertionFailure() << "lb_last_error() not empty after a success: " << lb_last_error();
        }
        error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream));
        if (error.empty()) error = mirror.download_outputs(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        return ::testing::AssertionSuccess();
    }
};

template <class Param>
class CudaParamTest : public CudaTestBase, public ::testing::WithParamInterface<Param> {};

// ---- every case x seq_lens dtype x req_pool_indices dtype x variant ----

using MatrixParam = std::tuple<DecodeMetadataCase, lb_dtype, lb_dtype, lb_variant>;
using CudaDecodeMetadata = CudaParamTest<MatrixParam>;

TEST_P(CudaDecodeMetadata, MatchesReferenceAndLeavesEverythingElsePoisoned) {
    const auto &[spec, seq_dtype, index_dtype, variant] = GetParam();
    DecodeMetadataProblem problem = make_problem(spec, seq_dtype, index_dtype);
    const std::string context = problem.describe(variant, cuda_label());
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());

    ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, expectation_for(variant, false), context));

    if (variant == LB_FULL_WIDTH) {
        DecodeMetadataProblem bounded = make_problem(spec, seq_dtype, index_dtype);
        ASSERT_TRUE(run_on_device(bounded, LB_BOUNDED, stream_)) << context;
        EXPECT_TRUE(live_prefixes_identical(problem, bounded, expected, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaDecodeMetadata,
                         ::testing::Combine(::testing::ValuesIn(decode_metadata_cases()),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param),
                                               std::get<2>(info.param), std::get<3>(info.param));
                         });

// ---- skip_page_table = 1 (the scan-only kernel) ----

using SkipParam = std::tuple<DecodeMetadataCase, lb_dtype, bool /* page tables absent */>;
using CudaDecodeMetadataSkipPageTable = CudaParamTest<SkipParam>;

TEST_P(CudaDecodeMetadataSkipPageTable, WritesOnlySeqlensAndPrefixSums) {
    const auto &[spec, seq_dtype, tables_absent] = GetParam();
    DecodeMetadataProblem problem = make_problem(spec, seq_dtype, LB_INT64);
    problem.skip_page_table = true;
    if (tables_absent) {
        problem.page_table = HostTensor{};
        problem.swa_page_table = HostTensor{};
        problem.full_to_swa = HostTensor{};
    }
    const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + (tables_absent ? " page tables absent" : "");
    SCOPED_TRACE(context);
    reference::DecodeMetadataInputs inputs = problem.reference_inputs();
    inputs.full_to_swa = nullptr;
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(inputs);

    ASSERT_TRUE(run_on_device(problem, LB_BOUNDED, stream_)) << context;
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, PageTableExpectation::kUntouched, context));
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaDecodeMetadataSkipPageTable,
                         ::testing::Combine(::testing::ValuesIn(decode_metadata_cases_named(
                                                {"B64_len512_ps1", "batch_257_ps1_swa", "negative_delta_ps16_swa",
                                                 "empty_batch_ps16_swa", "seq_lens_stride2_ps1_delta2"})),
                                            ::testing::Values(LB_INT32, LB_INT64), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<SkipParam> &info) {
                             return std::get<0>(info.param).name +
                                    (std::get<1>(info.param) == LB_INT32 ? "_s32" : "_s64") +
                                    (std::get<2>(info.param) ? "_tables_absent" : "_tables_present");
                         });

// ---- every other tensor with every stride doubled (inner stride 2) ----
// As on the CPU: 1-D tensors may have any stride, 2-D tables are rejected up front.

using StrideParam = std::tuple<StridedTensor, lb_variant>;
using CudaDecodeMetadataInnerStride2 = CudaParamTest<StrideParam>;

TEST_P(CudaDecodeMetadataInnerStride2, OneDimensionalHonouredTablesRejected) {
    const auto &[strided, variant] = GetParam();
    const std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"batch_257_ps1_swa"});
    ASSERT_EQ(picked.size(), 1u);
    DecodeMetadataProblem problem = make_problem(picked[0], LB_INT32, LB_INT32);
    HostTensor &tensor = problem.*(strided.member);
    tensor = restrided(tensor, 2, strided.filler);
    const std::string context = problem.describe(variant, cuda_label()) + " " + strided.name + " with every stride doubled";
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());

    if (tensor.ndim == 1) {
        ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
        EXPECT_TRUE(check_seqlens(problem, expected, context));
        EXPECT_TRUE(check_page_tables(problem, expected, expectation_for(variant, false), context));
        return;
    }
    DeviceMirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_decode_metadata_args args = problem.args(variant, [&](HostTensor &t) { return mirror.device_pointer(t); });
    const lb_status status = lb_normal_decode_set_metadata(&args, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << "2-D tables need a column stride of 1; lb_last_error(): " << message;
    EXPECT_TRUE(names_argument(message, strided.name)) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context));
}

INSTANTIATE_TEST_SUITE_P(Tensors, CudaDecodeMetadataInnerStride2,
                         ::testing::Combine(::testing::ValuesIn(kStridedTensors),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<StrideParam> &info) {
                             return std::string(std::get<0>(info.param).name) + "_" +
                                    variant_tag(std::get<1>(info.param));
                         });

// ---- the legacy default stream (stream NULL) ----

using CudaDecodeMetadataDefaultStream = CudaTestBase;

TEST_F(CudaDecodeMetadataDefaultStream, NullStreamIsTheLegacyDefaultStream) {
    const std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"B16_len512_ps64_swa"});
    ASSERT_EQ(picked.size(), 1u);
    DecodeMetadataProblem problem = make_problem(picked[0], LB_INT64, LB_INT64);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" stream NULL"));
    SCOPED_TRACE(context);
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());
    ASSERT_TRUE(run_on_device(problem, LB_BOUNDED, nullptr)) << context;
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, PageTableExpectation::kBounded, context));
}

// ---- CUDA-graph capture and replay with changing seq_lens ----

using GraphParam = std::tuple<DecodeMetadataCase, lb_dtype>;
using CudaDecodeMetadataGraph = CudaParamTest<GraphParam>;

TEST_P(CudaDecodeMetadataGraph, ReplaysFollowUpdatedSeqLens) {
    const auto &[spec, dtype] = GetParam();
    const cuda::Driver *d = cuda::driver();
    DecodeMetadataProblem problem = make_problem(spec, dtype, dtype);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" graph"));
    SCOPED_TRACE(context);

    DeviceMirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_decode_metadata_args args =
        problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });
    const lb_device device = livebound::cuda_device(device_, stream_);

    // Warm-up (JIT-compiles the variant's PTX), outside the capture.
    ASSERT_EQ(lb_normal_decode_set_metadata(&args, device), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "");

    // Capture one call.
    ASSERT_EQ(cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream_, cuda::kStreamCaptureModeThreadLocal)),
              "");
    const lb_status captured_status = lb_normal_decode_set_metadata(&args, device);
    const std::string captured_message = lb_last_error();
    cuda::CUgraph graph = nullptr;
    const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream_, &graph));
    ASSERT_EQ(captured_status, LB_OK) << "call during capture: " << captured_message;
    ASSERT_EQ(end_error, "") << "the call did something a capture forbids (sync, allocation, ...)";
    {
        // One kernel launch per call: the page-table gather with the lengths and prefix
        // sums riding on its last column group (schedules/decode_metadata/cuda.h), or the
        // prefix-sum kernel alone without tables. Nothing but kernels.
        const CapturedNodes nodes = count_graph_nodes(graph);
        EXPECT_EQ(nodes.error, "");
        EXPECT_EQ(nodes.kernels, 1u);
        EXPECT_EQ(nodes.total, nodes.kernels) << "a node that is not a kernel";
    }
    cuda::CUgraphExec exec = nullptr;
    const std::string instantiate_error =
        cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (!instantiate_error.empty()) d->cuGraphDestroy(graph);
    ASSERT_EQ(instantiate_error, "");

    std::mt19937 rng(spec.seed + 1000);
    std::uniform_int_distribution<int64_t> length(0, spec.max_seq_len);
    for (int replay = 0; replay < 3; ++replay) {
        // New lengths (shorter and longer than the captured ones, 0 included) and poisoned outputs.
        std::vector<int64_t> lengths;
        for (int64_t b = 0; b < problem.bs; ++b) lengths.push_back(length(rng));
        if (problem.bs > 0) lengths[replay % problem.bs] = 0;
        problem.set_seq_lens(lengths);
        problem.poison_outputs();
        for (HostTensor *t : {&problem.seq_lens, &problem.cache_seqlens, &problem.cu_seqlens_k, &problem.page_table,
                              &problem.swa_page_table}) {
            if (t->present) {
                ASSERT_EQ(mirror.upload(*t), "");
            }
        }
        const std::string replay_context = context + " replay " + std::to_string(replay);
        const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());

        ASSERT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream_)), "") << replay_context;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "") << replay_context;
        ASSERT_EQ(mirror.download_outputs(problem), "") << replay_context;
        EXPECT_TRUE(check_seqlens(problem, expected, replay_context));
        EXPECT_TRUE(check_page_tables(problem, expected, PageTableExpectation::kBounded, replay_context));
    }
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaDecodeMetadataGraph,
                         ::testing::Combine(::testing::ValuesIn(decode_metadata_cases_named(
                                                {"B64_len512_ps1", "B16_len512_ps64_swa",
                                                 "B8_len400_ps64_swa_delta2_shuffled_pool", "batch_257_ps1_swa",
                                                 "static_width_2048_ps1"})),
                                            ::testing::Values(LB_INT32, LB_INT64)),
                         [](const ::testing::TestParamInfo<GraphParam> &info) {
                             return std::get<0>(info.param).name +
                                    (std::get<1>(info.param) == LB_INT32 ? "_i32" : "_i64");
                         });

// ---- garbage in the device-held indices: clamped, memory-safe ----
// Contract (spec §1.3; runtime/src/decode_metadata.cpp, check_index_values): on the CPU the
// runtime reads the indices a kernel follows and refuses the call, naming the first bad
// value. On CUDA that would need a device sync, so the kernel clamps every data-dependent
// index instead (pool row, token column, full-pool slot): the call returns LB_OK, garbage
// changes only the VALUES in the garbage request's own region (its columns < live_pages,
// or < max_seq_pages for LB_FULL_WIDTH, and its lengths), every other element keeps its
// poison, and the clean request still equals the reference.

using CudaDecodeMetadataGarbage = CudaTestBase;

TEST_F(CudaDecodeMetadataGarbage, GarbageValuesStayInBounds) {
    // 8 requests, ps 16, SWA, req_to_token 512 columns wide; a 40-page grid (640 tokens) is
    // wider than req_to_token, so a length past it makes the kernel clamp the column too.
    std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"B8_len256_ps16_swa_shuffled_pool"});
    ASSERT_EQ(picked.size(), 1u);
    picked[0].max_seq_pages = 40;
    constexpr int64_t kClean = 2, kBadSlots = 5, kTooLong = 6, kDead = 7;
    for (lb_dtype dtype : {LB_INT32, LB_INT64}) {
        for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
            DecodeMetadataProblem p = make_problem(picked[0], dtype, dtype);
            ASSERT_EQ(p.bs, 8);
            // full_to_swa holds values, not indices: entries outside any SWA pool pass through.
            for (int64_t i = 0; i < kFullPoolSlots; i += 7) {
                p.full_to_swa_values[i] = i % 2 ? -1 - i : std::numeric_limits<int64_t>::max() - i;
                p.full_to_swa.store(p.full_to_swa.offset(i), p.full_to_swa_values[i]);
            }
            reference::DecodeMetadataExpected want = reference::decode_metadata(p.reference_inputs());

            // Pool rows out of [0, pool_rows) for live requests (and a dead one, read by LB_FULL_WIDTH).
            const bool wide = dtype == LB_INT64;
            const std::pair<int64_t, int64_t> bad_rows[] = {
                {0, -1}, {1, p.pool_rows}, {3, int64_t{1} << 30},
                {4, wide ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max()},
                {kDead, wide ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min()}};
            for (const auto &[b, row] : bad_rows) p.req_pool_indices.store(p.req_pool_indices.offset(b), row);
            // Token slots outside the pool and past len(full_to_swa) in kBadSlots' live columns.
            const int64_t slots[] = {-1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                     kFullPoolSlots, kFullPoolSlots + 12345};
            for (int64_t k = 0; k < want.live_pages[kBadSlots]; ++k) {
                const int64_t column = k * p.spec.page_size;
                p.req_to_token.store(p.req_to_token.offset(p.pool_row_of[kBadSlots], column), slots[k % 5]);
            }
            // A length past req_to_token's width (live = max_seq_pages) and a negative one.
            std::vector<int64_t> lengths = p.seq_len_values;
            lengths[kTooLong] = int64_t{1} << 20;
            lengths[kDead] = -5;
            p.set_seq_lens(lengths);
            const std::string context =
                p.describe(variant, cuda_label()) + " with garbage indices in every request but 2";
            SCOPED_TRACE(context);

            ASSERT_TRUE(run_on_device(p, variant, stream_)) << context;
            // Lengths and prefix sums follow seq_lens alone (max_seq_pages 0: the reference reads no page).
            reference::DecodeMetadataInputs lengths_only = p.reference_inputs();
            lengths_only.max_seq_pages = 0;
            const reference::DecodeMetadataExpected scan = reference::decode_metadata(lengths_only);
            want.cache_seqlens = scan.cache_seqlens;
            want.cu_seqlens_k = scan.cu_seqlens_k;
            // Garbage requests: any value in their live prefix (taken from the device), poison past it.
            want.full_width_defined = false;  // LB_FULL_WIDTH dead columns: any written value
            for (int64_t b = 0; b < p.bs; ++b) {
                if (b == kClean) continue;
                want.live_pages[b] =
                    reference::live_page_count(want.cache_seqlens[b], p.spec.page_size, p.max_seq_pages);
                want.page_rows[b].clear();
                want.swa_page_rows[b].clear();
                for (int64_t k = 0; k < want.live_pages[b]; ++k) {
                    want.page_rows[b].push_back(static_cast<int32_t>(p.page_table.load(p.page_table.offset(b, k))));
                    want.swa_page_rows[b].push_back(
                        static_cast<int32_t>(p.swa_page_table.load(p.swa_page_table.offset(b, k))));
                }
            }
            EXPECT_TRUE(check_seqlens(p, want, context));
            EXPECT_TRUE(check_page_tables(p, want, expectation_for(variant, false), context));
        }
    }
}

// ---- a host pointer where device memory is required ----

using CudaDecodeMetadataWrongMemory = CudaTestBase;

TEST_F(CudaDecodeMetadataWrongMemory, HostPageTableIsRejectedByName) {
    const std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"B16_len512_ps64_swa"});
    ASSERT_EQ(picked.size(), 1u);
    DecodeMetadataProblem problem = make_problem(picked[0], LB_INT64, LB_INT64);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + " page_table in host memory (std::vector)";
    SCOPED_TRACE(context);
    DeviceMirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    lb_decode_metadata_args args = problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });
    args.page_table.data = problem.page_table.data();  // host memory

    const lb_status status = lb_normal_decode_set_metadata(&args, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << "status " << status << ": " << message;
    EXPECT_TRUE(names_argument(message, "page_table")) << message;

    // Nothing was written: neither the host table nor any device output.
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (host page_table)"));
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (device outputs)"));
}

// ---- memory of another CUDA device ----
// Every tensor lives on the test device; the call runs on another device (other_device()).
// The first tensor checked for residency, seq_lens, is refused by name (checked with
// cuPointerGetAttribute's device ordinal), naming both devices, and nothing is written. The
// stream is the legacy default stream (a special handle, valid on any device). Needs two
// devices.
TEST_F(CudaDecodeMetadataWrongMemory, TensorsOnAnotherDeviceAreRejectedByName) {
    const int other = other_device();
    if (other < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
    const std::vector<DecodeMetadataCase> picked = decode_metadata_cases_named({"B16_len512_ps64_swa"});
    ASSERT_EQ(picked.size(), 1u);
    DecodeMetadataProblem problem = make_problem(picked[0], LB_INT64, LB_INT64);
    const std::string context =
        problem.describe(LB_BOUNDED, livebound::testing::cuda_label(other)) + " every tensor on " + cuda_label();
    SCOPED_TRACE(context);
    DeviceMirror mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_decode_metadata_args args =
        problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });

    const lb_status status = lb_normal_decode_set_metadata(&args, livebound::cuda_device(other, nullptr));
    const std::string message = lb_last_error();
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << message;
    EXPECT_TRUE(names_argument(message, "seq_lens")) << message;
    EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos) << message;

    ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (device outputs)"));
}

}  // namespace
}  // namespace livebound::testing
