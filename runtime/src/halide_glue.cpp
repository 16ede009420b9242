#include "halide_glue.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "HalideRuntimeCuda.h"
#include "cubin_loader.h"
#include "cuda_driver.h"

namespace livebound::glue {
namespace {

thread_local std::string t_halide_error;

void record_error(void * /*user_context*/, const char *message) {
    if (!t_halide_error.empty()) t_halide_error += "; ";
    t_halide_error += message;
    // Halide's messages end with a newline.
    while (!t_halide_error.empty() && t_halide_error.back() == '\n') t_halide_error.pop_back();
}

// Halide's CUDA runtime pushes whatever context this returns around each of its
// driver calls. It is always the device's primary context: memory from PyTorch or
// the CUDA runtime belongs to it. Never a private context.
int acquire_context(void *user_context, void **ctx, bool create) {
    const auto *call = static_cast<const CallContext *>(user_context);
    int device = call ? call->device : 0;
    std::string error;
    if (!call && !create) {
        // Process-exit cleanup without a call context: only an already retained context.
        *ctx = cuda::device_count() > 0 ? cuda::primary_context(0, &error) : nullptr;
        return 0;
    }
    *ctx = cuda::primary_context(device, &error);
    if (!*ctx) {
        record_error(user_context, error.c_str());
        return halide_error_code_device_interface_no_device;
    }
    return 0;
}

int release_context(void * /*user_context*/) { return 0; }

int get_stream(void *user_context, void * /*ctx*/, void **stream) {
    const auto *call = static_cast<const CallContext *>(user_context);
    *stream = call ? call->stream : nullptr;
    return 0;
}

}  // namespace

void install_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_set_error_handler(record_error);
#ifdef LIVEBOUND_WITH_CUDA
        halide_set_cuda_acquire_context(acquire_context);
        halide_set_cuda_release_context(release_context);
        halide_set_cuda_get_stream(get_stream);
        // The JIT register cap (255 unless the caller set HL_CUDA_JIT_MAX_REGISTERS) is
        // passed per module load by the cuModuleLoadDataEx wrapper (cubin_loader.cpp): the
        // process environment is never changed.
#endif
    });
}

std::string take_halide_error() {
    std::string message;
    message.swap(t_halide_error);
    return message;
}

bool WrappedBuffer::wrap(void *data, halide_type_t type, int dimensions, const halide_dimension_t *dims,
                         bool on_cuda, CallContext *context, std::string *error) {
    std::memcpy(dims_, dims, sizeof(halide_dimension_t) * dimensions);
    buffer_.type = type;
    buffer_.dimensions = dimensions;
    buffer_.dim = dims_;
    context_ = context;
    if (!on_cuda) {
        buffer_.host = static_cast<uint8_t *>(data);
        return true;
    }
#ifdef LIVEBOUND_WITH_CUDA
    int status = halide_cuda_wrap_device_ptr(context, &buffer_, reinterpret_cast<uint64_t>(data));
    if (status != 0) {
        *error = "cannot wrap device pointer: " + take_halide_error();
        return false;
    }
    cuda_wrapped_ = true;
    return true;
#else
    *error = "this livebound build has no CUDA support";
    return false;
#endif
}

WrappedBuffer::~WrappedBuffer() {
#ifdef LIVEBOUND_WITH_CUDA
    if (cuda_wrapped_) halide_cuda_detach_device_ptr(context_, &buffer_);
#endif
}

}  // namespace livebound::glue

// Halide's CUDA runtime resolves every driver entry point through this hook; its
// default tries the unversioned libcuda.so, which driver-only machines lack.
// This strong definition replaces the runtime's weak one. cuModuleLoadDataEx, through
// which Halide loads each pipeline's PTX, is wrapped so that variants with a cubin table
// (tensor-core, register-capped) load their build-time cubin or linked PTX instead, and
// every module gets livebound's JIT register cap (cubin_loader.h).
extern "C" void *halide_cuda_get_symbol(void * /*user_context*/, const char *name) {
    static void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    void *symbol = lib ? dlsym(lib, name) : nullptr;
    if (symbol != nullptr && std::strcmp(name, "cuModuleLoadDataEx") == 0) {
        return livebound::cubins::wrap_module_load(symbol);
    }
    return symbol;
}
