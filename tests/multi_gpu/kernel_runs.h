// One call of each kernel K1-K8 for the multi-GPU tests (tests/test_multi_gpu_cuda.cpp),
// built from the family's own problem builders, reference and checks (the cases.h of
// each CUDA suite): a fixed, small problem per kernel, its device copies, the call, and
// the suite's exact (K1-K6) or fp64-reference (K7, K8) check of the outputs.
//
// Device copies live on the device whose primary context is current when mirror() runs
// (cuda::ScopedContext), and are freed by the destructor: destroy a run while that context
// is current too. One run is used by one thread at a time.
//
// One binary links every family's test headers (one family per runs_*.cpp), so their
// inline definitions must not share names with different bodies (an ODR violation the
// linker resolves silently: K1's and K5's MismatchLog once corrupted the heap here). Each
// family's cases.h has a namespace of its own (k4, k5, k6, dsa_testing) but K1's and the
// attention kernels', whose names do not collide.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "livebound/livebound.h"

namespace livebound::testing::multi_gpu {

class KernelRun {
public:
    virtual ~KernelRun() = default;

    // "K1 normal_decode_set_metadata (case B16_len512_ps64_swa)" and the like.
    virtual std::string name() const = 0;
    // Allocates device copies of every tensor in the current context and uploads the host
    // contents (inputs, and outputs poisoned). "" or what failed.
    virtual std::string mirror() = 0;
    // The bounded call over the device copies, on `device` (its index and stream).
    virtual lb_status call(const lb_device &device) = 0;
    // Downloads every output (the caller synchronised the call's stream) and checks it:
    // the reference where the kernel writes, the poison everywhere else.
    virtual ::testing::AssertionResult check(const std::string &context) = 0;
    // Downloads every output and checks that each element still holds its poison (a
    // refused call wrote nothing).
    virtual ::testing::AssertionResult untouched(const std::string &context) = 0;
    // Poisons the host outputs again and uploads them (between CUDA-graph replays).
    virtual std::string repoison() = 0;
    // The bytes of every output's host storage (after check() or untouched()), to compare
    // two devices' results bit for bit.
    virtual std::vector<uint8_t> output_bytes() = 0;
};

using KernelRuns = std::vector<std::unique_ptr<KernelRun>>;

// One run per entry point, each fresh (nothing mirrored): K1, K2, K3, K4 (runs_metadata.cpp),
// K5, K6 (runs_gathers.cpp), K7, K8 (runs_attention.cpp).
void add_metadata_runs(KernelRuns *runs);
void add_gather_runs(KernelRuns *runs);
void add_attention_runs(KernelRuns *runs);

inline KernelRuns all_kernel_runs() {
    KernelRuns runs;
    add_metadata_runs(&runs);
    add_gather_runs(&runs);
    add_attention_runs(&runs);
    return runs;
}

// The bytes of `n` elements of T at `data` appended to *out (output_bytes()).
template <class T>
void append_bytes(const T *data, size_t n, std::vector<uint8_t> *out) {
    const auto *bytes = reinterpret_cast<const uint8_t *>(data);
    out->insert(out->end(), bytes, bytes + n * sizeof(T));
}

}  // namespace livebound::testing::multi_gpu
