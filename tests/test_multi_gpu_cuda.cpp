// Every kernel K1-K8 on a second GPU, and the runtime's check that the caller's stream
// belongs to the call's device (issue 14). Each kernel's call is one case of its CUDA
// suite (tests/multi_gpu/: the suite's problem builder, reference and checks).
//
//   (a) MultiGpu.FirstCallsOnTwoDevicesAtOnce: two host threads, one per device (the test
//       device and the next one), each makes the first call of every kernel in the process
//       (PTX JIT / cubin load, module load into that device's primary context) on a stream
//       of its device, both at once; every output equals the reference, and both devices'
//       outputs are the same bits. First in this file, so that a whole-binary run makes
//       these the process's first calls (CTest runs each test in a process of its own).
//   (b) MultiGpu.StreamOfAnotherDeviceIsRefusedByName: tensors on the test device; a stream
//       of the other device with the test device's index, and the test device's stream
//       with the other device's index: LB_ERROR_INVALID_ARGUMENT naming 'stream' and both
//       devices, nothing written.
//   (c) MultiGpu.CaptureAndReplayOnDevice1: tensors and stream on cuda:1, a warm-up call,
//       one call captured into a CUDA graph (the stream check, cuStreamGetCtx, runs during
//       capture), two replays with re-poisoned outputs: each equals the reference.
//   (d) CudaStreams.StreamOfAPrivateContextIsRefusedByName (one GPU is enough): a stream
//       created in a context of the test device that is not its primary context
//       (cuCtxCreate) is refused naming 'stream', nothing written.
//   (e) CudaStreams.SpecialStreamHandlesAreAccepted (one GPU): CU_STREAM_LEGACY and
//       CU_STREAM_PER_THREAD, which belong to no context, run every kernel correctly.
//   (f) CudaStreams.CppApiOnTheTestDevice: K1 through the C++ API (livebound.hpp) on the
//       test device; with two GPUs, another device's stream throws livebound::Error
//       naming 'stream'.
//
// (a)-(c) need two CUDA devices and skip, saying so, with fewer; everything skips without
// a driver. The per-kernel CUDA suites run on cuda:1 as well: CTest registers each again
// with LIVEBOUND_TEST_DEVICE=1 (label multi_gpu, tests/CMakeLists.txt); their graph tests
// (K1-K7) then capture on cuda:1 too.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "cuda_test_util.h"
#include "decode_metadata_cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"
#include "multi_gpu/kernel_runs.h"

namespace livebound::testing {
namespace {

using multi_gpu::all_kernel_runs;
using multi_gpu::KernelRun;
using multi_gpu::KernelRuns;

// A non-blocking stream created in the primary context of `device` (and destroyed there).
class StreamOn {
public:
    explicit StreamOn(int device) : device_(device) {
        cuda::ScopedContext scope(device);
        if (!scope.ok()) {
            error_ = scope.error();
            return;
        }
        error_ = cuda_error("cuStreamCreate", cuda::driver()->cuStreamCreate(&stream_, cuda::kStreamNonBlocking));
    }
    StreamOn(const StreamOn &) = delete;
    StreamOn &operator=(const StreamOn &) = delete;
    ~StreamOn() {
        if (stream_ == nullptr) return;
        cuda::ScopedContext scope(device_);
        cuda::driver()->cuStreamDestroy(stream_);
    }
    cuda::CUstream get() const { return stream_; }
    const std::string &error() const { return error_; }

private:
    int device_;
    cuda::CUstream stream_ = nullptr;
    std::string error_;
};

// Mirrors `run` (current context), calls it on `device`, synchronises `stream` and checks
// the outputs; "" or what went wrong.
std::string call_and_check(KernelRun &run, const lb_device &device, const std::string &context) {
    const lb_status status = run.call(device);
    if (status != LB_OK) return run.name() + " on " + context + ": status " + std::to_string(status) + ": " + lb_last_error();
    const std::string error = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(device.stream));
    if (!error.empty()) return run.name() + " on " + context + ": " + error;
    const ::testing::AssertionResult checked = run.check(context);
    return checked ? std::string() : run.name() + ": " + checked.message();
}

// The test device and a second one (CudaFixture's device_ and other_device()), or skipped.
class MultiGpu : public CudaFixture {
protected:
    void SetUp() override {
        CudaFixture::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        other_ = other_device();
        if (other_ < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
        if (lb_cuda_device_available(other_) == 0) {
            GTEST_SKIP() << "CUDA device " << other_ << " cannot run livebound's CUDA variants";
        }
    }
    int other_ = -1;
};

// ---- (a) two host threads, one per device, first calls at once ----

// What one device's thread saw: failures, and every kernel's output bytes (in run order).
struct DeviceOutcome {
    std::vector<std::string> failures;
    std::vector<std::string> names;
    std::vector<std::vector<uint8_t>> outputs;
};

// The thread of `device`: its primary context, a stream and every run mirrored, then (once
// `ready` counts both threads) every kernel called and checked in turn.
void run_every_kernel_on(int device, std::atomic<int> *ready, DeviceOutcome *out) {
    const std::string context = cuda_label(device) + " (one of two threads, first calls)";
    bool arrived = false;
    auto arrive_and_wait = [&] {
        if (arrived) return;
        arrived = true;
        ready->fetch_add(1);
        while (ready->load() < 2) std::this_thread::yield();
    };
    {
        cuda::ScopedContext scope(device);
        if (!scope.ok()) {
            out->failures.push_back(context + ": " + scope.error());
            arrive_and_wait();
            return;
        }
        cuda::CUstream stream = nullptr;
        std::string error = cuda_error("cuStreamCreate", cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking));
        {
            KernelRuns runs = all_kernel_runs();
            for (const auto &run : runs) {
                if (error.empty()) error = run->mirror();
            }
            arrive_and_wait();
            if (!error.empty()) out->failures.push_back(context + ": setup: " + error);
            for (size_t i = 0; error.empty() && i < runs.size(); i++) {
                const std::string failure = call_and_check(*runs[i], livebound::cuda_device(device, stream), context);
                if (!failure.empty()) out->failures.push_back(failure);
                out->names.push_back(runs[i]->name());
                out->outputs.push_back(runs[i]->output_bytes());
            }
        }  // device copies freed in the device's context
        if (stream != nullptr) cuda::driver()->cuStreamDestroy(stream);
    }
    arrive_and_wait();
}

TEST_F(MultiGpu, FirstCallsOnTwoDevicesAtOnce) {
    std::atomic<int> ready{0};
    DeviceOutcome first, second;
    std::thread a(run_every_kernel_on, device_, &ready, &first);
    std::thread b(run_every_kernel_on, other_, &ready, &second);
    a.join();
    b.join();
    for (const DeviceOutcome *o : {&first, &second}) {
        for (const std::string &f : o->failures) ADD_FAILURE() << f;
    }
    ASSERT_EQ(first.outputs.size(), second.outputs.size());
    for (size_t i = 0; i < first.outputs.size(); i++) {
        EXPECT_TRUE(first.outputs[i] == second.outputs[i])
            << first.names[i] << ": the outputs on " << cuda_label() << " and " << livebound::testing::cuda_label(other_)
            << " differ (same problem, same kernel)";
    }
}

// ---- (b) a stream of another device ----

TEST_F(MultiGpu, StreamOfAnotherDeviceIsRefusedByName) {
    const StreamOn foreign(other_);
    ASSERT_EQ(foreign.error(), "");
    // (tensor device, stream, device index, the device the stream belongs to)
    struct Mismatch {
        const char *what;
        cuda::CUstream stream;
        int call_device, stream_device;
    };
    const Mismatch mismatches[] = {
        {"a stream of the other device, the tensors' device index", foreign.get(), device_, other_},
        {"the tensors' device's stream, the other device's index", stream_, other_, device_},
    };
    KernelRuns runs = all_kernel_runs();
    for (const auto &run : runs) {
        ASSERT_EQ(run->mirror(), "") << run->name();
        for (const Mismatch &m : mismatches) {
            const std::string context = cuda_label() + " tensors, " + m.what;
            const lb_status status = run->call(livebound::cuda_device(m.call_device, m.stream));
            const std::string message = lb_last_error();
            EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << run->name() << ", " << context << ": " << message;
            EXPECT_NE(message.find("argument 'stream'"), std::string::npos) << run->name() << ": " << message;
            const std::string both = "belongs to CUDA device " + std::to_string(m.stream_device) +
                                     ", but the call runs on device " + std::to_string(m.call_device);
            EXPECT_NE(message.find(both), std::string::npos) << run->name() << ": " << message;
            ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
            EXPECT_TRUE(run->untouched(context)) << run->name();
        }
    }
}

// ---- (c) CUDA-graph capture and replay on cuda:1 ----

TEST_F(MultiGpu, CaptureAndReplayOnDevice1) {
    constexpr int kDevice = 1;
    const cuda::Driver *d = cuda::driver();
    cuda::ScopedContext scope(kDevice);
    ASSERT_TRUE(scope.ok()) << scope.error();
    const StreamOn stream(kDevice);
    ASSERT_EQ(stream.error(), "");
    const lb_device device = livebound::cuda_device(kDevice, stream.get());
    KernelRuns runs = all_kernel_runs();
    for (const auto &run : runs) {
        const std::string context = livebound::testing::cuda_label(kDevice) + " graph";
        SCOPED_TRACE(run->name());
        ASSERT_EQ(run->mirror(), "");
        // Warm-up outside the capture (the first call JIT-compiles or loads the kernel).
        const std::string warm = call_and_check(*run, device, context + " warm-up");
        ASSERT_EQ(warm, "");
        ASSERT_EQ(run->repoison(), "");
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(nullptr)), "");

        ASSERT_EQ(cuda_error("cuStreamBeginCapture",
                             d->cuStreamBeginCapture(stream.get(), cuda::kStreamCaptureModeThreadLocal)),
                  "");
        const lb_status captured = run->call(device);
        const std::string captured_message = lb_last_error();
        cuda::CUgraph graph = nullptr;
        const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream.get(), &graph));
        if (captured != LB_OK || !end_error.empty()) {
            if (graph != nullptr) d->cuGraphDestroy(graph);
            FAIL() << "call during capture: status " << captured << " " << captured_message << "; " << end_error;
        }
        cuda::CUgraphExec exec = nullptr;
        const std::string instantiate = cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
        d->cuGraphDestroy(graph);
        ASSERT_EQ(instantiate, "");
        for (int replay = 0; replay < 2; replay++) {
            const std::string replay_context = context + " replay " + std::to_string(replay);
            EXPECT_EQ(run->repoison(), "");
            EXPECT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(nullptr)), "");
            EXPECT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream.get())), "") << replay_context;
            EXPECT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream.get())), "") << replay_context;
            EXPECT_TRUE(run->check(replay_context));
        }
        d->cuGraphExecDestroy(exec);
    }
    runs.clear();  // device copies freed while cuda:1's context is current
}

// ---- (d)-(f): one GPU ----

using CudaStreams = CudaFixture;

TEST_F(CudaStreams, StreamOfAPrivateContextIsRefusedByName) {
    const cuda::Driver *d = cuda::driver();
    cuda::CUdevice handle = 0;
    ASSERT_EQ(cuda_error("cuDeviceGet", d->cuDeviceGet(&handle, device_)), "");
    // cuCtxCreate makes the new context current; the stream is created in it, then the
    // fixture's primary context is current again.
    cuda::CUcontext private_context = nullptr;
    ASSERT_EQ(cuda_error("cuCtxCreate", d->cuCtxCreate(&private_context, 0, handle)), "");
    cuda::CUstream private_stream = nullptr;
    const std::string created =
        cuda_error("cuStreamCreate", d->cuStreamCreate(&private_stream, cuda::kStreamNonBlocking));
    cuda::CUcontext popped = nullptr;
    d->cuCtxPopCurrent(&popped);
    ASSERT_EQ(created, "");
    {
        KernelRuns runs = all_kernel_runs();
        for (const auto &run : runs) {
            ASSERT_EQ(run->mirror(), "") << run->name();
            const lb_status status = run->call(livebound::cuda_device(device_, private_stream));
            const std::string message = lb_last_error();
            EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << run->name() << ": " << message;
            EXPECT_NE(message.find("argument 'stream'"), std::string::npos) << run->name() << ": " << message;
            const std::string why = "belongs to a context other than device " + std::to_string(device_) +
                                    "'s primary context";
            EXPECT_NE(message.find(why), std::string::npos) << run->name() << ": " << message;
            EXPECT_TRUE(run->untouched(cuda_label(" stream of a private context"))) << run->name();
        }
    }
    ASSERT_EQ(cuda_error("cuCtxPushCurrent", d->cuCtxPushCurrent(private_context)), "");
    d->cuStreamDestroy(private_stream);
    d->cuCtxPopCurrent(&popped);
    EXPECT_EQ(cuda_error("cuCtxDestroy", d->cuCtxDestroy(private_context)), "");
}

TEST_F(CudaStreams, SpecialStreamHandlesAreAccepted) {
    const struct {
        const char *name;
        uintptr_t handle;
    } handles[] = {{"CU_STREAM_LEGACY", cuda::kStreamLegacy}, {"CU_STREAM_PER_THREAD", cuda::kStreamPerThread}};
    KernelRuns runs = all_kernel_runs();
    for (const auto &run : runs) {
        ASSERT_EQ(run->mirror(), "") << run->name();
        for (const auto &h : handles) {
            ASSERT_EQ(run->repoison(), "");
            const lb_device device = livebound::cuda_device(device_, reinterpret_cast<void *>(h.handle));
            EXPECT_EQ(call_and_check(*run, device, cuda_label(std::string(" stream ") + h.name)), "");
        }
    }
}

TEST_F(CudaStreams, CppApiOnTheTestDevice) {
    DecodeMetadataProblem problem = make_problem(decode_metadata_cases_named({"B8_len400_ps64_swa_delta2_shuffled_pool"}).at(0),
                                                 LB_INT32, LB_INT64);
    const std::string context = problem.describe(LB_BOUNDED, cuda_label(" C++ API"));
    SCOPED_TRACE(context);
    DeviceCopies<HostTensor> mirror;
    ASSERT_EQ(mirror.mirror(problem), "");
    const lb_decode_metadata_args args =
        problem.args(LB_BOUNDED, [&](HostTensor &t) { return mirror.device_pointer(t); });
    ASSERT_NO_THROW(livebound::normal_decode_set_metadata(args, livebound::cuda_device(device_, stream_)));
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    ASSERT_EQ(mirror.download_outputs(problem), "");
    const reference::DecodeMetadataExpected want = reference::decode_metadata(problem.reference_inputs());
    EXPECT_TRUE(check_seqlens(problem, want, context));
    EXPECT_TRUE(check_page_tables(problem, want, PageTableExpectation::kBounded, context));

    const int other = other_device();
    if (other < 0) return;  // (the refusal below needs a second device)
    const StreamOn foreign(other);
    ASSERT_EQ(foreign.error(), "");
    problem.poison_outputs();
    for (HostTensor *t : problem.outputs()) {
        if (t->present) ASSERT_EQ(mirror.upload(*t), "");
    }
    try {
        livebound::normal_decode_set_metadata(args, livebound::cuda_device(device_, foreign.get()));
        ADD_FAILURE() << "a stream of CUDA device " << other << " was accepted";
    } catch (const livebound::Error &e) {
        EXPECT_EQ(e.status(), LB_ERROR_INVALID_ARGUMENT) << e.what();
        EXPECT_NE(std::string(e.what()).find("argument 'stream': belongs to CUDA device " + std::to_string(other)),
                  std::string::npos)
            << e.what();
    }
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    ASSERT_EQ(mirror.download_outputs(problem), "");
    EXPECT_TRUE(outputs_untouched(problem, context + " (refused stream)"));
}

}  // namespace
}  // namespace livebound::testing
