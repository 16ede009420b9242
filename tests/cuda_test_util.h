// Device memory and the fixture for the CUDA tests, through livebound's driver loader
// (cuda_driver.h; no CUDA headers, no cudart). Every host buffer of a problem gets a
// device copy of its whole storage (view + guard), so the device outputs carry the same
// poison and guards as the host ones and the host checks apply unchanged after a download.
//
// Every function needs the device's primary context current (cuda::ScopedContext; the
// fixture CudaFixture makes it current for each test).
//
// The device: every CUDA suite runs on the ordinal in $LIVEBOUND_TEST_DEVICE (0 when unset;
// test_device()), so the same binaries test a second GPU (CTest registers each CUDA suite
// again with LIVEBOUND_TEST_DEVICE=1, label multi_gpu; tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "livebound/livebound.h"

namespace livebound::testing {

// The CUDA device ordinal named by `text` (LIVEBOUND_TEST_DEVICE's value): nullptr or "" is
// device 0; otherwise a decimal ordinal in [0, 1024), nothing else (no sign, no spaces, no
// trailing characters). -1 plus *why for anything else.
inline int parse_test_device(const char *text, std::string *why) {
    if (text == nullptr || *text == '\0') return 0;
    char *end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    const bool digits_only = text[0] >= '0' && text[0] <= '9' && end != nullptr && *end == '\0';
    if (!digits_only || errno != 0 || value < 0 || value >= 1024) {
        *why = std::string("LIVEBOUND_TEST_DEVICE='") + text +
               "' is not a CUDA device ordinal (a decimal integer in [0, 1024); unset means 0)";
        return -1;
    }
    return static_cast<int>(value);
}

// The CUDA device the suites run on: $LIVEBOUND_TEST_DEVICE, 0 when unset or empty. A
// malformed value is a test failure here (ADD_FAILURE naming it), never a silent 0: the
// function then returns -1 and the caller stops (CudaFixture does).
inline int test_device() {
    std::string why;
    const int device = parse_test_device(std::getenv("LIVEBOUND_TEST_DEVICE"), &why);
    if (device < 0) ADD_FAILURE() << why;
    return device;
}

// "cuda:<device>" for messages and case descriptions.
inline std::string cuda_label(int device) { return "cuda:" + std::to_string(device); }

// "" when `result` is CUDA_SUCCESS, else "cuXxx failed: ...".
inline std::string cuda_error(const char *call, cuda::CUresult result) {
    return result == 0 ? std::string() : cuda::describe(call, result);
}

// Copies host -> device with cuMemcpyHtoD and waits for the copy on the legacy default
// stream (from pageable memory cuMemcpyHtoD may return before the DMA lands, and a
// non-blocking stream does not order itself after the legacy stream).
inline std::string upload_bytes(cuda::CUdeviceptr dst, const void *src, size_t bytes) {
    std::string error = cuda_error("cuMemcpyHtoD", cuda::driver()->cuMemcpyHtoD(dst, src, bytes));
    if (!error.empty()) return error;
    return cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr));
}

// Owns one cuMemAlloc allocation.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
        std::swap(ptr_, other.ptr_);
        std::swap(bytes_, other.bytes_);
        return *this;
    }
    ~DeviceBuffer() {
        if (ptr_ != 0) cuda::driver()->cuMemFree(ptr_);
    }

    // Allocates `bytes` (at least 4: cuMemAlloc rejects 0).
    std::string allocate(size_t bytes) {
        bytes_ = bytes < 4 ? 4 : bytes;
        return cuda_error("cuMemAlloc", cuda::driver()->cuMemAlloc(&ptr_, bytes_));
    }
    // Host -> device (upload_bytes) and device -> host, `bytes` from the start.
    std::string upload(const void *host, size_t bytes) const { return upload_bytes(ptr_, host, bytes); }
    std::string download(void *host, size_t bytes) const {
        return cuda_error("cuMemcpyDtoH", cuda::driver()->cuMemcpyDtoH(host, ptr_, bytes));
    }
    cuda::CUdeviceptr device() const { return ptr_; }
    void *pointer() const { return reinterpret_cast<void *>(static_cast<uintptr_t>(ptr_)); }
    size_t bytes() const { return bytes_; }

private:
    cuda::CUdeviceptr ptr_ = 0;
    size_t bytes_ = 0;
};

// Device copies of host buffers of type Tensor (anything with data() and bytes(), the
// whole storage). mirror()/download_outputs() take a problem whose inputs()/outputs()
// return Tensor pointers with a `present` flag.
template <class Tensor>
class DeviceCopies {
public:
    // Allocates a device copy of `t` and uploads its current (e.g. poisoned) contents.
    std::string add(Tensor &t) {
        DeviceBuffer buffer;
        std::string error = buffer.allocate(t.bytes());
        if (error.empty()) error = upload_bytes(buffer.device(), t.data(), t.bytes());
        if (!error.empty()) return error;
        copies_.emplace_back(&t, std::move(buffer));
        return {};
    }

    // add() for every present input and output of `p`.
    template <class Problem>
    std::string mirror(Problem &p) {
        std::vector<Tensor *> all = p.inputs();
        for (Tensor *t : p.outputs()) all.push_back(t);
        for (Tensor *t : all) {
            if (!t->present) continue;
            std::string error = add(*t);
            if (!error.empty()) return error;
        }
        return {};
    }

    // The device copy of `t` (nullptr for an absent tensor).
    void *device_pointer(const Tensor &t) const {
        const DeviceBuffer *buffer = find(t);
        return buffer == nullptr ? nullptr : buffer->pointer();
    }

    // Host -> device for one tensor (e.g. new seq_lens, a re-poisoned output).
    std::string upload(Tensor &t) const {
        const DeviceBuffer *buffer = find(t);
        if (buffer == nullptr) return "upload: tensor has no device copy";
        return upload_bytes(buffer->device(), t.data(), t.bytes());
    }

    // Device -> host for one tensor (the caller has synchronised the stream).
    std::string download(Tensor &t) const {
        const DeviceBuffer *buffer = find(t);
        if (buffer == nullptr) return "download: tensor has no device copy";
        return buffer->download(t.data(), t.bytes());
    }

    // Device -> host for every present output of `p` (the caller has synchronised the stream).
    template <class Problem>
    std::string download_outputs(Problem &p) const {
        for (Tensor *t : p.outputs()) {
            if (!t->present || find(*t) == nullptr) continue;
            std::string error = download(*t);
            if (!error.empty()) return error;
        }
        return {};
    }

private:
    const DeviceBuffer *find(const Tensor &t) const {
        for (const auto &[host, buffer] : copies_) {
            if (host == &t) return &buffer;
        }
        return nullptr;
    }

    std::vector<std::pair<const Tensor *, DeviceBuffer>> copies_;
};

// The nodes of a CUDA graph that captured one call: how many launch a kernel, how many
// there are in all (a memset or memcpy node would be a hidden copy).
struct CapturedNodes {
    size_t kernels = 0;
    size_t total = 0;
    std::string error;  // empty when the capture worked and the call returned LB_OK
};

// Counts the nodes of `graph` (kernels and all).
inline CapturedNodes count_graph_nodes(cuda::CUgraph graph) {
    const cuda::Driver *d = cuda::driver();
    CapturedNodes out;
    size_t count = 0;
    out.error = cuda_error("cuGraphGetNodes", d->cuGraphGetNodes(graph, nullptr, &count));
    std::vector<cuda::CUgraphNode> nodes(count);
    if (out.error.empty() && count > 0) {
        out.error = cuda_error("cuGraphGetNodes", d->cuGraphGetNodes(graph, nodes.data(), &count));
    }
    for (size_t i = 0; out.error.empty() && i < count; ++i) {
        int type = -1;
        out.error = cuda_error("cuGraphNodeGetType", d->cuGraphNodeGetType(nodes[i], &type));
        if (type == cuda::kGraphNodeTypeKernel) out.kernels++;
    }
    out.total = count;
    return out;
}

// Captures `call` (returning an lb_status) on `stream` into a graph and counts its nodes.
// Warm the call up outside the capture first: the first call JIT-compiles its PTX.
template <class Call>
CapturedNodes capture_nodes(cuda::CUstream stream, Call &&call) {
    const cuda::Driver *d = cuda::driver();
    CapturedNodes out;
    out.error = cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream, cuda::kStreamCaptureModeThreadLocal));
    if (!out.error.empty()) return out;
    const lb_status status = call();
    const std::string message = status == LB_OK ? "" : std::string("call: ") + lb_last_error();
    cuda::CUgraph graph = nullptr;
    out.error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream, &graph));
    if (out.error.empty()) out.error = message;
    if (out.error.empty()) out = count_graph_nodes(graph);
    if (graph != nullptr) d->cuGraphDestroy(graph);
    return out;
}

// The test device's primary context current (test_device(): device_, and stream_ a
// non-blocking stream created on it), or the test is skipped, saying why (no driver, fewer
// devices than the test device needs, a device livebound cannot use); a malformed
// LIVEBOUND_TEST_DEVICE fails the test. Each family's suite derives from it and adds its
// run_on_device(), calling with livebound::cuda_device(device_, stream).
class CudaFixture : public ::testing::Test {
protected:
    void SetUp() override {
        device_ = test_device();
        ASSERT_GE(device_, 0) << "LIVEBOUND_TEST_DEVICE is malformed";
        if (cuda::driver() == nullptr) GTEST_SKIP() << "no CUDA driver: " << cuda::why_unavailable();
        const int32_t count = lb_cuda_device_count();
        if (count <= device_) {
            GTEST_SKIP() << "needs " << device_ + 1 << " CUDA device" << (device_ > 0 ? "s" : "")
                         << " (the test device is " << cuda_label() << ": LIVEBOUND_TEST_DEVICE=" << device_ << "), "
                         << count << " present";
        }
        if (lb_cuda_device_available(device_) == 0) {
            GTEST_SKIP() << "CUDA device " << device_ << " cannot run livebound's CUDA variants";
        }
        context_ = std::make_unique<cuda::ScopedContext>(device_);
        ASSERT_TRUE(context_->ok()) << context_->error();
        ASSERT_EQ(cuda_error("cuStreamCreate", cuda::driver()->cuStreamCreate(&stream_, cuda::kStreamNonBlocking)), "");
    }
    void TearDown() override {
        if (stream_ != nullptr) cuda::driver()->cuStreamDestroy(stream_);
        stream_ = nullptr;
        context_.reset();
    }

    // "cuda:<device_>" followed by `suffix`, for case descriptions.
    std::string cuda_label(const std::string &suffix = "") const {
        return livebound::testing::cuda_label(device_) + suffix;
    }

    // A device other than device_ (the next ordinal, wrapping: device_ + 1 mod count) for
    // the wrong-device tests; -1 with fewer than two devices.
    int other_device() const {
        const int32_t count = lb_cuda_device_count();
        return count < 2 ? -1 : (device_ + 1) % count;
    }

    // What the runtime says of a tensor on device_ in a call on `call_device`
    // (validate::on_cuda_device): both ordinals, in that order.
    std::string tensor_on_test_device_text(int call_device) const {
        return "lives on CUDA device " + std::to_string(device_) + ", but the call runs on device " +
               std::to_string(call_device);
    }

    int device_ = 0;  // the CUDA ordinal every call of the test runs on
    std::unique_ptr<cuda::ScopedContext> context_;
    cuda::CUstream stream_ = nullptr;
};

}  // namespace livebound::testing
