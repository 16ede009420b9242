#include "pipeline_call.h"

#include <string>

#include "cuda_driver.h"
#include "errors.h"
#include "validate.h"

namespace livebound {

PipelineCall::PipelineCall(const lb_device &device)
    : on_cuda_(device.type == LB_DEVICE_CUDA), context_{device.index, device.stream}, user_context_(&context_) {
    glue::install_hooks();
}

halide_buffer_t *PipelineCall::wrap(const lb_tensor &t, const char *name, halide_type_t type, int dimensions,
                                    const halide_dimension_t *dims) {
    buffers_.emplace_back();
    std::string error;
    if (!buffers_.back().wrap(t.data, type, dimensions, dims, on_cuda_, &context_, &error)) {
        throw Failure(LB_ERROR_DEVICE, std::string("argument '") + name + "': " + error);
    }
    return buffers_.back().get();
}

halide_buffer_t *PipelineCall::wrap_1d(const lb_tensor &t, const char *name, int64_t n) {
    halide_dimension_t dims[1];
    validate::halide_dims_1d(t, n, dims);
    return wrap(t, name, validate::halide_type(t.dtype), 1, dims);
}

halide_buffer_t *PipelineCall::wrap_2d(const lb_tensor &t, const char *name, int64_t rows, int64_t cols) {
    halide_dimension_t dims[2];
    validate::halide_dims_2d(t, rows, cols, dims);
    return wrap(t, name, validate::halide_type(t.dtype), 2, dims);
}

halide_buffer_t *PipelineCall::wrap_nd(const lb_tensor &t, const char *name) {
    halide_dimension_t dims[LB_MAX_DIMS];
    validate::halide_dims_nd(t, dims);
    return wrap(t, name, validate::halide_type(t.dtype), t.ndim, dims);
}

void PipelineCall::run(int (*argv_entry)(void **), std::vector<void *> argv) {
    int status = argv_entry(argv.data());
    if (status != 0) {
        throw Failure(LB_ERROR_KERNEL,
                      "kernel failed (Halide status " + std::to_string(status) + "): " + glue::take_halide_error());
    }
}

void PipelineCall::write_int32(const lb_tensor &t, int32_t value) {
    if (!on_cuda_) {
        *static_cast<int32_t *>(t.data) = value;
        return;
    }
    cuda::ScopedContext scope(context_.device);
    if (!scope.ok()) throw Failure(LB_ERROR_DEVICE, scope.error());
    auto r = cuda::driver()->cuMemsetD32Async(reinterpret_cast<cuda::CUdeviceptr>(t.data),
                                              static_cast<unsigned>(value), 1, context_.stream);
    if (r != 0) throw Failure(LB_ERROR_DEVICE, cuda::describe("cuMemsetD32Async", r));
}

}  // namespace livebound
