// The autotune runner's view of a kernel: workloads that prepare their inputs once, issue one
// call through the public C ABI, and check what the call wrote. The runner (tune_runner.cpp)
// loads every candidate of an experiment into one process (the tune tree links them,
// cmake/LiveboundKernel.cmake) and routes the variant's calls to each candidate in turn
// (set_pipeline_override), so every candidate runs the same inputs through the same
// validation and binding as the hand schedule.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "livebound/livebound.hpp"

namespace livebound::autotune {

// One tensor's bytes on the host, and on the device when the workload runs on CUDA.
class Memory {
public:
    Memory() = default;
    explicit Memory(size_t bytes) : host_(bytes) {}
    template <typename T>
    T *host() {
        return reinterpret_cast<T *>(host_.data());
    }
    size_t bytes() const { return host_.size(); }
    // Copies the host bytes to a new device buffer (CUDA workloads); false on failure.
    bool to_device() {
        device_ = std::make_unique<tools::DeviceBuffer>(host_.size() == 0 ? 4 : host_.size());
        return host_.empty() || device_->upload(host_.data(), host_.size());
    }
    bool upload() { return !device_ || host_.empty() || device_->upload(host_.data(), host_.size()); }
    bool download() { return !device_ || host_.empty() || device_->download(host_.data(), host_.size()); }
    // What a call's tensor points at: the device copy when there is one.
    void *data() { return device_ ? device_->get() : static_cast<void *>(host_.data()); }

private:
    std::vector<uint8_t> host_;
    std::unique_ptr<tools::DeviceBuffer> device_;
};

class Workload {
public:
    virtual ~Workload() = default;
    // e.g. "K2/skip/bs:64"; the workload class groups workloads for distillation
    // (autotune/distill.py: one best knob set per class).
    virtual std::string name() const = 0;
    virtual std::string workload_class() const = 0;
    // Builds the inputs (uploaded when on_cuda) and the expected outputs; "" or an error.
    virtual std::string prepare(bool on_cuda) = 0;
    // One call on `device` (outputs left where the call wrote them).
    virtual lb_status call(const lb_device &device) = 0;
    // Fills every output with a poison value (host and device), so that a candidate that
    // leaves an element unwritten fails check().
    virtual bool poison() = 0;
    // Downloads the outputs and compares them with the expected ones: "" or the first
    // difference. `hand_first` is true on the hand schedule's run, after which a workload
    // without an exact reference may keep its outputs as the expected ones.
    virtual std::string check(bool hand_first) = 0;
};

using WorkloadList = std::vector<std::unique_ptr<Workload>>;

// A kernel the runner can tune: its workloads and the prefix of its variants' names.
struct KernelWorkloads {
    const char *kernel;          // "K2"
    const char *variant_prefix;  // "lb_k2_"
    WorkloadList (*make)(bool on_cuda);
};

// Registration at start-up (one static per workloads_*.cpp).
bool register_kernel(const KernelWorkloads &k);
const std::vector<KernelWorkloads> &kernels();

// Poison fill of a host buffer of 32-bit elements.
inline void fill32(Memory &m, uint32_t value) {
    uint32_t *p = m.host<uint32_t>();
    for (size_t i = 0; i < m.bytes() / 4; i++) p[i] = value;
}

}  // namespace livebound::autotune
