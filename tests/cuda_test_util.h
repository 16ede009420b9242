// Device memory for the CUDA tests, through livebound's driver loader (cuda_driver.h;
// no CUDA headers, no cudart). Every HostTensor of a problem gets a device copy of its
// whole storage (view + guard), so the device outputs carry the same poison and guards
// as the host ones and the host checks apply unchanged after a download.
//
// Every function needs the device's primary context current (cuda::ScopedContext).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "decode_metadata_cases.h"

namespace livebound::testing {

// "" when `result` is CUDA_SUCCESS, else "cuXxx failed: ...".
inline std::string cuda_error(const char *call, cuda::CUresult result) {
    return result == 0 ? std::string() : cuda::describe(call, result);
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
    cuda::CUdeviceptr device() const { return ptr_; }
    void *pointer() const { return reinterpret_cast<void *>(static_cast<uintptr_t>(ptr_)); }
    size_t bytes() const { return bytes_; }

private:
    cuda::CUdeviceptr ptr_ = 0;
    size_t bytes_ = 0;
};

// Copies host -> device with cuMemcpyHtoD and waits for the copy on the legacy default
// stream (from pageable memory cuMemcpyHtoD may return before the DMA lands, and a
// non-blocking stream does not order itself after the legacy stream).
inline std::string upload_bytes(cuda::CUdeviceptr dst, const void *src, size_t bytes) {
    std::string error = cuda_error("cuMemcpyHtoD", cuda::driver()->cuMemcpyHtoD(dst, src, bytes));
    if (!error.empty()) return error;
    return cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr));
}

// Device copies of every present tensor of a DecodeMetadataProblem.
class DeviceMirror {
public:
    // Allocates and uploads every tensor of `p` (outputs with their current, poisoned, contents).
    std::string mirror(DecodeMetadataProblem &p) {
        std::vector<HostTensor *> all = p.inputs();
        for (HostTensor *t : p.outputs()) all.push_back(t);
        for (HostTensor *t : all) {
            if (!t->present) continue;
            DeviceBuffer buffer;
            std::string error = buffer.allocate(t->bytes());
            if (error.empty()) error = upload_bytes(buffer.device(), t->data(), t->bytes());
            if (!error.empty()) return error;
            copies_.emplace_back(t, std::move(buffer));
        }
        return {};
    }

    // The device copy of `t` (nullptr for an absent tensor).
    void *device_pointer(const HostTensor &t) const {
        for (const auto &[host, buffer] : copies_) {
            if (host == &t) return buffer.pointer();
        }
        return nullptr;
    }

    // Host -> device for one tensor (e.g. new seq_lens, a re-poisoned output).
    std::string upload(const HostTensor &t) const {
        for (const auto &[host, buffer] : copies_) {
            if (host == &t) return upload_bytes(buffer.device(), t.data(), t.bytes());
        }
        return "upload: tensor has no device copy";
    }

    // Device -> host for every output of `p` (the caller has synchronised the stream).
    std::string download_outputs(DecodeMetadataProblem &p) const {
        for (HostTensor *t : p.outputs()) {
            if (!t->present) continue;
            for (const auto &[host, buffer] : copies_) {
                if (host != t) continue;
                std::string error =
                    cuda_error("cuMemcpyDtoH", cuda::driver()->cuMemcpyDtoH(t->data(), buffer.device(), t->bytes()));
                if (!error.empty()) return error;
            }
        }
        return {};
    }

private:
    std::vector<std::pair<const HostTensor *, DeviceBuffer>> copies_;
};

}  // namespace livebound::testing
