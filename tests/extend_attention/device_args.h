// Device copies of an attention call's argument block (K7 lb_extend_attention_args, K8
// lb_extend_attention_unified_args) for the CUDA suites: every present tensor of the host
// block gets a cuMemAlloc copy of the bytes its view spans, and `args` is the same block
// with device pointers. Absent tensors stay absent; a host nullptr (an empty std::vector's
// data()) stays nullptr. Needs the device's primary context current (CudaFixture).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"           // tensor_bytes
#include "cuda_test_util.h"  // DeviceBuffer
#include "livebound/livebound.h"

namespace livebound::testing {

template <class Args>
struct AttentionDeviceArgs {
    using Member = lb_tensor Args::*;
    struct Named {
        const char *name;
        Member member;
    };

    Args args{};
    Args host{};
    std::vector<std::pair<Member, DeviceBuffer>> buffers;

    // Mirrors the tensors of `h` named in `tensors`; "" or "<tensor>: <error>".
    template <size_t N>
    std::string mirror(const Args &h, const Named (&tensors)[N]) {
        host = h;
        args = h;
        for (const Named &t : tensors) {
            const lb_tensor &src = h.*t.member;
            if (src.data == nullptr) continue;
            const size_t bytes = tensor_bytes(src);
            DeviceBuffer buffer;
            std::string error = buffer.allocate(bytes);
            if (error.empty() && bytes > 0) error = buffer.upload(src.data, bytes);
            if (!error.empty()) return std::string(t.name) + ": " + error;
            (args.*t.member).data = buffer.pointer();
            buffers.emplace_back(t.member, std::move(buffer));
        }
        return {};
    }
    const DeviceBuffer *find(Member m) const {
        for (const auto &[member, buffer] : buffers) {
            if (member == m) return &buffer;
        }
        return nullptr;
    }
    // Host -> device again for one tensor (its host storage changed). A zero-byte tensor
    // (e.g. the output of a batch without rows: T = 0) has nothing to copy.
    std::string upload(Member m) const {
        const size_t bytes = tensor_bytes(host.*m);
        if (bytes == 0) return {};
        const DeviceBuffer *b = find(m);
        if (b == nullptr) return "upload: no device copy";
        return b->upload((host.*m).data, bytes);
    }
    // Device -> host storage for one tensor (nothing for a zero-byte one, as upload()).
    std::string download(Member m) const {
        const size_t bytes = tensor_bytes(host.*m);
        if (bytes == 0) return {};
        const DeviceBuffer *b = find(m);
        if (b == nullptr) return "download: no device copy";
        return b->download((host.*m).data, bytes);
    }
};

}  // namespace livebound::testing
