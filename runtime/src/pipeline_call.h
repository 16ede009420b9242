// One call of an AOT pipeline on the caller's memory: the user context with the
// caller's device and stream, Halide buffers over the caller's tensors (wrapped device
// pointers on CUDA: no copy, no allocation), the argv call bound from the pipeline's own
// metadata, and Halide's error text turned into a Failure. Every family's entry point uses
// it after validating.
#pragma once

#include <cstdint>
#include <deque>
#include <type_traits>
#include <vector>

#include "halide_glue.h"
#include "livebound/livebound.h"

namespace livebound {

// An AOT pipeline: its `_argv` entry point and the metadata Halide generated beside it
// (every argument's name, kind, type and rank, in argv order).
struct Pipeline {
    int (*argv)(void **);
    const halide_filter_metadata_t *(*metadata)();
};
// The Pipeline of the AOT function `name` (a variant table's row: LB_PIPELINE(name)).
#define LB_PIPELINE(name) ::livebound::Pipeline{name##_argv, name##_metadata}

// One argument the runtime passes, under the generator's name for it. The call binds
// these to the pipeline's argv by name and checks kind, type and rank against the
// metadata, so a renamed, reordered or retyped generator parameter is an error naming the
// argument instead of a silent misbinding. Build them with in(), out() and scalar().
struct PipelineArg {
    const char *name;             // the generator's parameter name
    halide_argument_kind_t kind;  // input scalar, input buffer or output buffer
    halide_type_t type;           // a buffer's element type; a scalar's C++ type
    int dimensions;               // a buffer's rank; 0 for a scalar
    void *value;                  // the halide_buffer_t *, or the scalar's address
};
inline PipelineArg in(const char *name, halide_buffer_t *buffer) {
    return {name, halide_argument_kind_input_buffer, buffer->type, buffer->dimensions, buffer};
}
inline PipelineArg out(const char *name, halide_buffer_t *buffer) {
    return {name, halide_argument_kind_output_buffer, buffer->type, buffer->dimensions, buffer};
}
// `value` must outlive the call (the pipeline reads it through argv).
template <typename T>
PipelineArg scalar(const char *name, T *value) {
    static_assert(std::is_arithmetic_v<T>, "a pipeline scalar is a bool, an integer or a float");
    return {name, halide_argument_kind_input_scalar, halide_type_of<T>(), 0, value};
}

// The pipeline to run for a call of `batch` requests whose longest prefix sum has `entries`
// entries (-1: `batch`): the first alternate of `variant` that applies, in the order the build
// lists them (cmake/LiveboundKernel.cmake): a large-entries form (LIVEBOUND_LARGE_ENTRIES_
// <variant>, a manifest's form without a size limit) when entries >= its minimum, then a tuned
// batch alternate (schedules/<family>/tuned/*.cmake, LIVEBOUND_TUNED_BATCH_<variant>: the
// knobs that were fastest at large batches) when batch >= its minimum; else `variant` itself.
// Entry points whose variants have batch classes call it.
const Pipeline &for_batch(const Pipeline &variant, int64_t batch, int64_t entries = -1);

// Autotune runners only (autotune/runner/): while set, every call that would run the
// pipeline whose entry point is `variant` runs `candidate` instead (a pipeline of the same
// interface: the same generator and facts, other schedule knobs), through the same
// validation and argument binding. Not thread-safe against concurrent calls; pass a
// candidate of {nullptr, nullptr} to clear. Off (one atomic load per call) otherwise.
void set_pipeline_override(int (*variant)(void **), const Pipeline &candidate);
// How many calls the override has rerouted so far (a runner's check that a workload reaches
// the variant it tunes).
uint64_t pipeline_override_hits();

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

    // Binds `args` (and the user context) to the pipeline's argv in its metadata's order
    // and calls it. Throws Failure(LB_ERROR_KERNEL) naming the argument when `args` and the
    // metadata disagree (a missing, extra or differently typed argument: a build defect,
    // nothing runs), and with Halide's message when the pipeline reports an error.
    void run(const Pipeline &pipeline, const std::vector<PipelineArg> &args);

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
