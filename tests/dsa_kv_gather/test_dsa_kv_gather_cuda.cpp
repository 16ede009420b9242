// K5 _get_k_and_s_triton on the test CUDA device (LIVEBOUND_TEST_DEVICE, default 0;
// cuda_test_util.h), on caller-owned device memory (cuMemAlloc in the primary context)
// and a caller-created non-blocking stream, against the plain C++ reference. Same cases
// and checks as the CPU suite (cases.h): the device outputs get the poisoned host storage
// uploaded, and are downloaded whole (padding and guards included)
// after the call. Also: CUDA-graph capture and replay with seq_lens changed between
// replays, a page id past 254,201 (byte offsets past 2^31), and memory safety when the
// caller breaks the preconditions the device path cannot check. Skips, saying why,
// without a driver or device.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cases.h"
#include "cuda_driver.h"
#include "cuda_test_util.h"  // DeviceBuffer, CudaFixture, cuda_error
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing::k5 {
namespace {

// Device copies of one problem's five storages.
struct DeviceProblem {
    DeviceBuffer buf, page_indices, seq_lens, k_out, s_out;
    std::string mirror(KvGatherProblem &p) {
        std::pair<DeviceBuffer *, std::pair<const void *, size_t>> all[] = {
            {&buf, {p.buf.data(), p.buf.storage_bytes()}},
            {&page_indices, {p.page_indices.words.data(), p.page_indices.storage_bytes()}},
            {&seq_lens, {p.seq_lens.words.data(), p.seq_lens.storage_bytes()}},
            {&k_out, {p.k_out.data(), p.k_out.storage_bytes()}},
            {&s_out, {p.s_out.data(), p.s_out.storage_bytes()}}};
        for (auto &[d, host] : all) {
            std::string e = d->allocate(host.second);
            if (e.empty()) e = d->upload(host.first, host.second);
            if (!e.empty()) return e;
        }
        return {};
    }
    lb_dsa_kv_gather_args args(KvGatherProblem &p, lb_variant variant) {
        return p.args(variant, [&](void *host) -> void * {
            if (host == p.buf.data()) return buf.pointer();
            if (host == p.page_indices.data()) return page_indices.pointer();
            if (host == p.seq_lens.data()) return seq_lens.pointer();
            if (host == p.k_out.data()) return k_out.pointer();
            return s_out.pointer();
        });
    }
    std::string download_outputs(KvGatherProblem &p) const {
        std::string e = k_out.download(p.k_out.data(), p.k_out.storage_bytes());
        if (e.empty()) e = s_out.download(p.s_out.data(), p.s_out.storage_bytes());
        return e;
    }
    std::string upload_inputs_and_outputs(KvGatherProblem &p) const {
        std::string e = seq_lens.upload(p.seq_lens.words.data(), p.seq_lens.storage_bytes());
        if (e.empty()) e = page_indices.upload(p.page_indices.words.data(), p.page_indices.storage_bytes());
        if (e.empty()) e = k_out.upload(p.k_out.data(), p.k_out.storage_bytes());
        if (e.empty()) e = s_out.upload(p.s_out.data(), p.s_out.storage_bytes());
        return e;
    }
};

// CudaFixture (the test device's primary context and a non-blocking stream, or skipped) + K5 runs.
class CudaTestBase : public CudaFixture {
protected:
    ::testing::AssertionResult run_on_device(KvGatherProblem &p, lb_variant variant, cuda::CUstream stream) {
        DeviceProblem d;
        std::string error = d.mirror(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        const lb_dsa_kv_gather_args args = d.args(p, variant);
        const lb_status status = lb_get_k_and_s(&args, livebound::cuda_device(device_, stream));
        if (status != LB_OK) {
            return ::testing::AssertionFailure() << "status " << status << ", lb_last_error(): " << lb_last_error();
        }
        error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream));
        if (error.empty()) error = d.download_outputs(p);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        return ::testing::AssertionSuccess();
    }
};

template <class Param>
class CudaParamTest : public CudaTestBase, public ::testing::WithParamInterface<Param> {};

// ---- every case x seq_lens dtype x page_indices dtype x variant ----

using MatrixParam = std::tuple<KvGatherCase, lb_dtype, lb_dtype, lb_variant>;
using CudaKvGather = CudaParamTest<MatrixParam>;

TEST_P(CudaKvGather, MatchesReferenceAndWritesNothingElse) {
    const auto &[spec, seq_dtype, index_dtype, variant] = GetParam();
    KvGatherProblem problem = make_problem(spec, seq_dtype, index_dtype);
    const std::string context = problem.describe(variant, cuda_label());
    SCOPED_TRACE(context);
    const reference::KvGatherExpected expected = reference::get_k_and_s(problem.reference_inputs());
    ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
    EXPECT_TRUE(check_outputs(problem, expected, context));
    if (variant == LB_FULL_WIDTH) {
        KvGatherProblem bounded = make_problem(spec, seq_dtype, index_dtype);
        ASSERT_TRUE(run_on_device(bounded, LB_BOUNDED, stream_)) << context;
        EXPECT_TRUE(outputs_identical(problem, bounded, context));
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaKvGather,
                         ::testing::Combine(::testing::ValuesIn(kv_gather_cases()),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<MatrixParam> &info) {
                             return param_name(std::get<0>(info.param), std::get<1>(info.param),
                                               std::get<2>(info.param), std::get<3>(info.param));
                         });

// ---- the legacy default stream ----

using CudaKvGatherDefaultStream = CudaTestBase;

TEST_F(CudaKvGatherDefaultStream, NullStreamIsTheLegacyDefaultStream) {
    KvGatherProblem problem = make_problem(kv_gather_cases_named({"prefill_B8_ragged_ps64"}).at(0), LB_INT64, LB_INT32);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" stream NULL"));
    ASSERT_TRUE(run_on_device(problem, LB_BOUNDED, nullptr)) << context;
    EXPECT_TRUE(check_outputs(problem, reference::get_k_and_s(problem.reference_inputs()), context));
}

// ---- CUDA-graph capture and replay with changing seq_lens ----
// The capture bakes in the host arguments (seq_len_sum, max_seq_len, the output shapes);
// seq_lens and page_indices are device memory the kernel reads at replay time. Replays
// use new lengths (0 included) with the same sum (the caller's contract: seq_len_sum ==
// sum(seq_lens)), then one with a smaller sum: rows past the new sum stay untouched.

using GraphParam = std::tuple<KvGatherCase, lb_dtype, lb_variant>;
using CudaKvGatherGraph = CudaParamTest<GraphParam>;

// Lengths in [0, max_len] summing to `sum`, `zero_at` forced to 0.
std::vector<int64_t> lengths_with_sum(std::mt19937 &rng, int64_t bs, int64_t sum, int64_t max_len, int64_t zero_at) {
    std::vector<int64_t> out(bs, 0);
    int64_t left = sum;
    while (left > 0) {
        const int64_t b = std::uniform_int_distribution<int64_t>(0, bs - 1)(rng);
        if (b == zero_at || out[b] >= max_len) continue;
        const int64_t add = std::min<int64_t>({left, max_len - out[b], std::uniform_int_distribution<int64_t>(1, 97)(rng)});
        out[b] += add;
        left -= add;
    }
    return out;
}

TEST_P(CudaKvGatherGraph, ReplaysFollowUpdatedSeqLens) {
    const auto &[spec, dtype, variant] = GetParam();
    const cuda::Driver *d = cuda::driver();
    KvGatherProblem problem = make_problem(spec, dtype, dtype);
    // Every request may grow to max_seq_len on a replay: give every page-table column a page.
    const int64_t columns = cdiv(problem.max_seq_len, spec.page_size);
    ASSERT_LE(columns, problem.max_pages) << "test bug: the case needs extra_page_columns";
    std::mt19937 rng(spec.seed + 1000);
    for (int64_t b = 0; b < problem.bs; ++b) {
        for (int64_t k = 0; k < columns; ++k) {
            problem.page_indices.store(b * problem.pi_row_stride + k,
                                       std::uniform_int_distribution<int64_t>(0, problem.num_pages - 1)(rng));
        }
    }
    const std::string context = problem.describe(variant, cuda_label(" graph"));
    SCOPED_TRACE(context);
    DeviceProblem dev;
    ASSERT_EQ(dev.mirror(problem), "");
    const lb_dsa_kv_gather_args args = dev.args(problem, variant);
    const lb_device device = livebound::cuda_device(device_, stream_);
    const int64_t captured_sum = problem.seq_len_sum;

    ASSERT_EQ(lb_get_k_and_s(&args, device), LB_OK) << lb_last_error();  // warm-up (PTX JIT)
    ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "");

    ASSERT_EQ(cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream_, cuda::kStreamCaptureModeThreadLocal)), "");
    const lb_status captured_status = lb_get_k_and_s(&args, device);
    const std::string captured_message = lb_last_error();
    cuda::CUgraph graph = nullptr;
    const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream_, &graph));
    ASSERT_EQ(captured_status, LB_OK) << "call during capture: " << captured_message;
    ASSERT_EQ(end_error, "") << "the call did something a capture forbids (sync, allocation, ...)";
    cuda::CUgraphExec exec = nullptr;
    const std::string instantiate_error = cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (!instantiate_error.empty()) d->cuGraphDestroy(graph);
    ASSERT_EQ(instantiate_error, "");

    for (int replay = 0; replay < 4; ++replay) {
        const bool smaller = replay == 3;
        const int64_t sum = smaller ? captured_sum / 2 : captured_sum;
        problem.set_seq_lens(lengths_with_sum(rng, problem.bs, sum, problem.max_seq_len, replay % problem.bs));
        problem.poison_outputs();
        ASSERT_EQ(dev.upload_inputs_and_outputs(problem), "");
        const std::string replay_context = context + " replay " + std::to_string(replay) + (smaller ? " (smaller sum)" : "");
        ASSERT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream_)), "") << replay_context;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "") << replay_context;
        ASSERT_EQ(dev.download_outputs(problem), "") << replay_context;
        // check_outputs compares rows [0, problem.seq_len_sum): the new sum; rows past it
        // (including the captured rows [sum, captured_sum)) must still be poison.
        EXPECT_TRUE(check_outputs(problem, reference::get_k_and_s(problem.reference_inputs()), replay_context));
    }
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
}

std::vector<KvGatherCase> graph_cases() {
    std::vector<KvGatherCase> out;
    for (KvGatherCase c : kv_gather_cases_named({"prefill_B8_ragged_ps64", "batch_100", "wide_grid_max8192"})) {
        c.extra_page_columns = cdiv(c.max_seq_len >= 0 ? c.max_seq_len : 4096, c.page_size);
        c.extra_pages = 64;
        out.push_back(c);
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaKvGatherGraph,
                         ::testing::Combine(::testing::ValuesIn(graph_cases()), ::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<GraphParam> &info) {
                             return std::get<0>(info.param).name + (std::get<1>(info.param) == LB_INT32 ? "_i32_" : "_i64_") +
                                    variant_tag(std::get<2>(info.param));
                         });

// ---- page ids past 254,201: a real 2.36 GiB device buffer ----

class CudaKvGatherLargeOffsets : public CudaParamTest<std::tuple<lb_dtype, lb_variant>> {};

TEST_P(CudaKvGatherLargeOffsets, PageIdsPast254201ReadTheRightBytes) {
    const auto &[index_dtype, variant] = GetParam();
    constexpr int64_t kPageSize = 64, kPageBytes = kPageSize * (kHeadDim + 4), kNumPages = 300003;
    DeviceBuffer buf;
    const std::string alloc = buf.allocate(static_cast<size_t>(kNumPages * kPageBytes));
    if (!alloc.empty()) GTEST_SKIP() << "cannot allocate 2.36 GiB on the device: " << alloc;
    const std::vector<std::vector<int64_t>> pages = {{254201, 254200, 300002}, {7, 270000}};
    const std::vector<int64_t> lengths = {150, 100};
    std::mt19937 rng(99);
    // Host image of the used pages only; uploaded page by page.
    std::vector<std::vector<uint8_t>> page_bytes;
    reference::KvGatherInputs in;
    for (const auto &row : pages) {
        for (int64_t pg : row) {
            std::vector<uint8_t> bytes(kPageBytes);
            for (auto &x : bytes) x = static_cast<uint8_t>(rng());
            ASSERT_EQ(cuda_error("cuMemcpyHtoD", cuda::driver()->cuMemcpyHtoD(buf.device() + pg * kPageBytes, bytes.data(),
                                                                                 bytes.size())),
                      "");
            page_bytes.push_back(std::move(bytes));
        }
    }
    // Reference: a compact buffer of the 5 used pages, with page_indices renumbered.
    std::vector<uint8_t> compact;
    std::vector<std::vector<int64_t>> renumbered;
    int64_t next = 0;
    for (const auto &row : pages) {
        std::vector<int64_t> r;
        for (size_t k = 0; k < row.size(); ++k) r.push_back(next++);
        renumbered.push_back(r);
    }
    for (const auto &bytes : page_bytes) compact.insert(compact.end(), bytes.begin(), bytes.end());
    in.buf = compact.data();
    in.num_pages = next;
    in.buf_row_stride = kPageBytes;
    in.seq_lens = lengths;
    in.page_indices = renumbered;
    const reference::KvGatherExpected want = reference::get_k_and_s(in);

    std::vector<int64_t> pi64(6, 0);
    std::vector<int32_t> pi32(6, 0);
    for (size_t b = 0; b < 2; ++b) {
        for (size_t k = 0; k < pages[b].size(); ++k) {
            pi64[b * 3 + k] = pages[b][k];
            pi32[b * 3 + k] = static_cast<int32_t>(pages[b][k]);
        }
    }
    const int64_t sum = 250;
    DeviceBuffer d_pi, d_seq, d_k, d_s;
    std::vector<uint8_t> k_out(sum * kHeadDim, kPoisonByte), s_out(sum * 4, kPoisonByte);
    ASSERT_EQ(d_pi.allocate(48), "");
    ASSERT_EQ(index_dtype == LB_INT64 ? d_pi.upload(pi64.data(), 48) : d_pi.upload(pi32.data(), 24), "");
    ASSERT_EQ(d_seq.allocate(16), "");
    ASSERT_EQ(d_seq.upload(lengths.data(), 16), "");
    ASSERT_EQ(d_k.allocate(k_out.size()), "");
    ASSERT_EQ(d_k.upload(k_out.data(), k_out.size()), "");
    ASSERT_EQ(d_s.allocate(s_out.size()), "");
    ASSERT_EQ(d_s.upload(s_out.data(), s_out.size()), "");
    lb_dsa_kv_gather_args a{};
    a.buf = livebound::tensor_2d(buf.pointer(), LB_UINT8, kNumPages, kPageBytes);
    a.page_indices = livebound::tensor_2d(d_pi.pointer(), index_dtype, 2, 3);
    a.seq_lens = livebound::tensor_1d(d_seq.pointer(), LB_INT64, 2);
    a.k_out = livebound::tensor_2d(d_k.pointer(), LB_UINT8, sum, kHeadDim);
    a.s_out = livebound::tensor_2d(d_s.pointer(), LB_UINT8, sum, 4);
    a.seq_len_sum = sum;
    a.max_seq_len = 256;
    a.page_size = kPageSize;
    a.index_head_dim = kHeadDim;
    a.variant = variant;
    ASSERT_EQ(lb_get_k_and_s(&a, livebound::cuda_device(device_, stream_)), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    ASSERT_EQ(d_k.download(k_out.data(), k_out.size()), "");
    ASSERT_EQ(d_s.download(s_out.data(), s_out.size()), "");
    EXPECT_EQ(std::memcmp(k_out.data(), want.k_rows.data(), want.k_rows.size()), 0) << "k_out differs";
    EXPECT_EQ(std::memcmp(s_out.data(), want.s_rows.data(), want.s_rows.size()), 0) << "s_out differs";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaKvGatherLargeOffsets,
                         ::testing::Combine(::testing::Values(LB_INT32, LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         [](const ::testing::TestParamInfo<std::tuple<lb_dtype, lb_variant>> &info) {
                             return std::string("i") + (std::get<0>(info.param) == LB_INT32 ? "32" : "64") + "_" +
                                    variant_tag(std::get<1>(info.param));
                         });

// ---- broken preconditions the device path cannot check: memory-safe, nothing outside
// rows [0, seq_len_sum) written ----

using CudaKvGatherBrokenContract = CudaTestBase;

TEST_F(CudaKvGatherBrokenContract, OutOfRangePagesAndLengthsStayInsideTheOutputs) {
    KvGatherProblem problem = make_problem(kv_gather_cases_named({"prefill_B8_ragged_ps64"}).at(0), LB_INT64, LB_INT64);
    const int64_t true_sum = problem.seq_len_sum;
    // Page ids out of range (negative, past num_pages, 2^40), lengths past max_seq_len,
    // a negative length; seq_len_sum keeps the original (now wrong) value.
    problem.page_indices.store(0, -5);
    problem.page_indices.store(1, problem.num_pages + 100);
    problem.page_indices.store(problem.pi_row_stride, int64_t{1} << 40);
    std::vector<int64_t> broken = problem.lengths;
    broken[1] = problem.max_seq_len + 5000;
    broken[3] = -7;
    problem.set_seq_lens(broken);
    problem.seq_len_sum = true_sum;  // what the caller passes
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" broken contract"));
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        problem.poison_outputs();
        ASSERT_TRUE(run_on_device(problem, variant, stream_)) << context;
        // Only rows [0, seq_len_sum) may have been written: padding, extra rows and guards are poison.
        MismatchLog log(context + " " + variant_tag(variant));
        for (size_t e = 0; e < problem.k_out.storage_bytes(); ++e) {
            const int64_t row = e / problem.k_row_stride, col = e % problem.k_row_stride;
            if ((row >= true_sum || col >= kHeadDim) && problem.k_out.data()[e] != kPoisonByte) {
                log.add("k_out byte " + std::to_string(e), kPoisonByte, problem.k_out.data()[e]);
            }
        }
        for (size_t e = 0; e < problem.s_out.storage_bytes(); ++e) {
            const int64_t row = e / problem.s_row_stride, col = e % problem.s_row_stride;
            if ((row >= true_sum || col >= 4) && problem.s_out.data()[e] != kPoisonByte) {
                log.add("s_out byte " + std::to_string(e), kPoisonByte, problem.s_out.data()[e]);
            }
        }
        EXPECT_TRUE(log.result());
    }
}

// ---- kernel launches per call ----
// One call captured into a CUDA graph: the bounded calls whose buf and k_out rows are
// 16-byte multiples run the row grid, one kernel for both outputs; other bounded calls
// (here buf rows of 8484 bytes) run the scatter form, and the full-width twin is the
// scatter form too: two kernels (k_out, s_out). No other node (memset, memcpy) ever.

struct LaunchCase {
    const char *case_name;
    lb_variant variant;
    size_t kernels;
};
void PrintTo(const LaunchCase &c, std::ostream *os) {
    *os << c.case_name << " " << variant_tag(c.variant) << " (" << c.kernels << " kernels)";
}
class CudaKvGatherLaunches : public CudaParamTest<LaunchCase> {};

TEST_P(CudaKvGatherLaunches, KernelNodesPerCall) {
    const LaunchCase &c = GetParam();
    KvGatherProblem problem = make_problem(kv_gather_cases_named({c.case_name}).at(0), LB_INT64, LB_INT32);
    const std::string context = problem.describe(c.variant, cuda_label(" captured"));
    DeviceProblem dev;
    ASSERT_EQ(dev.mirror(problem), "");
    const lb_dsa_kv_gather_args args = dev.args(problem, c.variant);
    const lb_device device = livebound::cuda_device(device_, stream_);
    ASSERT_EQ(lb_get_k_and_s(&args, device), LB_OK) << lb_last_error();  // warm-up (PTX JIT)
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    const CapturedNodes nodes = capture_nodes(stream_, [&] { return lb_get_k_and_s(&args, device); });
    ASSERT_EQ(nodes.error, "") << context;
    EXPECT_EQ(nodes.kernels, c.kernels) << context;
    EXPECT_EQ(nodes.total, nodes.kernels) << context << ": a node that is not a kernel";
}

INSTANTIATE_TEST_SUITE_P(Calls, CudaKvGatherLaunches,
                         ::testing::Values(LaunchCase{"prefill_B8_ragged_ps64", LB_BOUNDED, 1},
                                           LaunchCase{"strided_aligned16", LB_BOUNDED, 1},
                                           LaunchCase{"batch_257_ps16", LB_BOUNDED, 1},
                                           LaunchCase{"strided_everything", LB_BOUNDED, 2},
                                           LaunchCase{"page_size_3", LB_BOUNDED, 2},
                                           LaunchCase{"prefill_B8_ragged_ps64", LB_FULL_WIDTH, 2}),
                         [](const ::testing::TestParamInfo<LaunchCase> &info) {
                             return std::string(info.param.case_name) + "_" + variant_tag(info.param.variant);
                         });

// ---- a host pointer where device memory is required ----

using CudaKvGatherWrongMemory = CudaTestBase;

TEST_F(CudaKvGatherWrongMemory, HostKOutIsRejectedByName) {
    KvGatherProblem problem = make_problem(kv_gather_cases_named({"prefill_B8_ragged_ps64"}).at(0), LB_INT64, LB_INT64);
    DeviceProblem dev;
    ASSERT_EQ(dev.mirror(problem), "");
    lb_dsa_kv_gather_args args = dev.args(problem, LB_BOUNDED);
    args.k_out.data = problem.k_out.data();
    const lb_status status = lb_get_k_and_s(&args, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << status << ": " << message;
    EXPECT_TRUE(names_argument(message, "k_out")) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(outputs_untouched(problem, "host k_out"));
    ASSERT_EQ(dev.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, "device outputs"));
}

// ---- memory of another CUDA device ----
// Every tensor lives on the test device; the call runs on another. The first tensor checked for
// residency, buf, is refused by name, and nothing is written. Needs two devices.
TEST_F(CudaKvGatherWrongMemory, TensorsOnAnotherDeviceAreRejectedByName) {
    const int other = other_device();
    if (other < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
    KvGatherProblem problem = make_problem(kv_gather_cases_named({"prefill_B8_ragged_ps64"}).at(0), LB_INT64, LB_INT64);
    DeviceProblem dev;
    ASSERT_EQ(dev.mirror(problem), "");
    const lb_dsa_kv_gather_args args = dev.args(problem, LB_BOUNDED);
    const lb_status status = lb_get_k_and_s(&args, livebound::cuda_device(other, nullptr));
    const std::string message = lb_last_error();
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << message;
    EXPECT_TRUE(names_argument(message, "buf")) << message;
    EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
    ASSERT_EQ(dev.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, "tensors on " + cuda_label() + ", call on device " + std::to_string(other)));
}

// ---- relations only CUDA calls reach ----
// On the CPU the values are read first and the culprit is named (a length above
// max_seq_len, a page id outside buf's pages); on CUDA they stay in device memory, and the
// host checks only what the shapes and scalars say: seq_len_sum <= B * max_seq_len, and, with
// seq_len_sum > 0, at least one column of page_indices and one page of buf. Each test breaks
// one of them in an otherwise valid call on device memory: refused by name, nothing written.
class CudaKvGatherDeviceOnlyChecks : public CudaTestBase {
protected:
    void expect_refused(const std::function<void(lb_dsa_kv_gather_args &, const KvGatherProblem &)> &apply,
                        const std::string &name, const std::string &what) {
        KvGatherProblem problem =
            make_problem(kv_gather_cases_named({"prefill_B8_ragged_ps64"}).at(0), LB_INT64, LB_INT32);
        const std::string context = problem.describe(LB_BOUNDED, cuda_label()) + " " + what;
        SCOPED_TRACE(context);
        ASSERT_GT(problem.seq_len_sum, 0);
        DeviceProblem dev;
        ASSERT_EQ(dev.mirror(problem), "");
        lb_dsa_kv_gather_args args = dev.args(problem, LB_BOUNDED);
        apply(args, problem);
        const lb_status status = lb_get_k_and_s(&args, livebound::cuda_device(device_, stream_));
        const std::string message = lb_last_error();
        EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << message;
        EXPECT_TRUE(names_argument(message, name)) << "lb_last_error() = \"" << message << "\" must name '" << name << "'";
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        ASSERT_EQ(dev.download_outputs(problem), "");
        EXPECT_TRUE(outputs_untouched(problem, context));
    }
};

TEST_F(CudaKvGatherDeviceOnlyChecks, SeqLenSumAboveBTimesMaxSeqLenIsRejected) {
    expect_refused(
        [](lb_dsa_kv_gather_args &a, const KvGatherProblem &p) { a.max_seq_len = (p.seq_len_sum - 1) / p.bs; },
        "seq_len_sum", "max_seq_len = (seq_len_sum - 1) / B");
}

TEST_F(CudaKvGatherDeviceOnlyChecks, PageIndicesWithoutColumnsIsRejected) {
    expect_refused([](lb_dsa_kv_gather_args &a, const KvGatherProblem &) { a.page_indices.shape[1] = 0; },
                   "page_indices", "page_indices with 0 columns");
}

TEST_F(CudaKvGatherDeviceOnlyChecks, BufWithoutPagesIsRejected) {
    expect_refused([](lb_dsa_kv_gather_args &a, const KvGatherProblem &) { a.buf.shape[0] = 0; }, "buf",
                   "buf with 0 pages");
}

}  // namespace
}  // namespace livebound::testing::k5
