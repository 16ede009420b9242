// How livebound drives Halide's runtime: one user context per call carrying the
// caller's device and stream, CUDA hooks that hand Halide the device's primary
// context and that stream, and an error handler that records Halide's message for
// lb_last_error() instead of aborting.
#pragma once

#include <string>

#include "HalideRuntime.h"

namespace livebound::glue {

// Passed as Halide's `user_context` to every pipeline call.
struct CallContext {
    int device = 0;          // CUDA device ordinal
    void *stream = nullptr;  // the caller's CUstream (nullptr: legacy default stream)
};

// Installs the hooks; idempotent and thread-safe. Called before every pipeline call.
void install_hooks();

// Halide's error text recorded on this thread since the last take_halide_error().
std::string take_halide_error();

// A halide_buffer_t over caller memory, dims given innermost first (Halide order).
// For CUDA the pointer is wrapped as device memory and detached on destruction:
// no copy, no allocation.
class WrappedBuffer {
public:
    WrappedBuffer() = default;
    WrappedBuffer(const WrappedBuffer &) = delete;
    WrappedBuffer &operator=(const WrappedBuffer &) = delete;
    ~WrappedBuffer();

    // Returns false (and sets *error) when wrapping failed.
    bool wrap(void *data, halide_type_t type, int dimensions, const halide_dimension_t *dims, bool on_cuda,
              CallContext *context, std::string *error);
    halide_buffer_t *get() { return &buffer_; }

private:
    halide_buffer_t buffer_{};
    halide_dimension_t dims_[4]{};
    bool cuda_wrapped_ = false;
    CallContext *context_ = nullptr;
};

}  // namespace livebound::glue
