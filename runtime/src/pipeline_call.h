// One call of an AOT pipeline on the caller's memory: the user context with the
// caller's device and stream, Halide buffers over the caller's tensors (wrapped device
// pointers on CUDA: no copy, no allocation), the argv call, and Halide's error text
// turned into a Failure. Every family's entry point uses it after validating.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "halide_glue.h"
#include "livebound/livebound.h"

namespace livebound {

class PipelineCall {
public:
    explicit PipelineCall(const lb_device &device);
    PipelineCall(const PipelineCall &) = delete;
    PipelineCall &operator=(const PipelineCall &) = delete;

    bool on_cuda() const { return on_cuda_; }

    // Halide's view of the first `n` elements of a 1-D tensor, or the first `rows` x
    // `cols` of a 2-D one. `name` names the argument in errors.
    halide_buffer_t *wrap_1d(const lb_tensor &t, const char *name, int64_t n);
    halide_buffer_t *wrap_2d(const lb_tensor &t, const char *name, int64_t rows, int64_t cols);
    // Halide's view of the whole tensor, all t.ndim dimensions, element type from t.dtype.
    halide_buffer_t *wrap_nd(const lb_tensor &t, const char *name);
    // Any rank up to 4, dims given innermost first (Halide order) over t.data / t.dtype.
    halide_buffer_t *wrap(const lb_tensor &t, const char *name, halide_type_t type, int dimensions,
                          const halide_dimension_t *dims);

    // The `__user_context` argument of a pipeline (argv[0] is &user_context()).
    void **user_context() { return &user_context_; }

    // Calls a pipeline's _argv entry point; throws Failure(LB_ERROR_KERNEL) with Halide's
    // message when it reports an error.
    void run(int (*argv_entry)(void **), std::vector<void *> argv);

    // Writes `value` into element 0 of an int32 tensor, on the host or on the caller's
    // stream (for outputs a pipeline cannot produce, e.g. cu_seqlens_k[0] when bs = 0).
    void write_int32(const lb_tensor &t, int32_t value);

private:
    bool on_cuda_;
    glue::CallContext context_;
    void *user_context_;
    std::deque<glue::WrappedBuffer> buffers_;
};

}  // namespace livebound
