#include "pipeline_call.h"

#include <atomic>
#include <cstring>
#include <string>

#include "cuda_driver.h"
#include "livebound/batch_alternates_headers.inc"  // generated: the tuned batch alternates' headers
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

namespace {

const char *kind_name(int kind) {
    switch (kind) {
    case halide_argument_kind_input_scalar: return "scalar";
    case halide_argument_kind_input_buffer: return "input buffer";
    case halide_argument_kind_output_buffer: return "output buffer";
    default: return "unknown kind";
    }
}

std::string type_name(halide_type_t t) {
    static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat"};
    std::string s = t.code < 5 ? codes[t.code] : "code" + std::to_string(t.code);
    s += std::to_string(t.bits);
    if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
    return s;
}

// "input buffer int32 2-D" / "scalar float32"
std::string describe(int kind, halide_type_t type, int dimensions) {
    std::string s = std::string(kind_name(kind)) + " " + type_name(type);
    if (kind != halide_argument_kind_input_scalar) s += " " + std::to_string(dimensions) + "-D";
    return s;
}

[[noreturn]] void binding_error(const halide_filter_metadata_t &md, const char *argument, const std::string &what) {
    throw Failure(LB_ERROR_KERNEL, std::string("argument '") + argument + "': AOT pipeline " + md.name + " " + what +
                                       " (the runtime and the generator disagree: rebuild, or fix the runtime's call)");
}

}  // namespace

namespace {
struct BatchAlternate {
    int (*variant)(void **);
    int64_t min_size;
    bool by_entries;  // min_size counts the call's prefix-sum entries, not its requests
    Pipeline alternate;
};
// Empty without tuned batch classes (a zero-length table).
const BatchAlternate kBatchAlternates[] = {
#define LB_ENTRIES_ALTERNATE(variant, min_entries, alternate, knobs) \
    {variant##_argv, min_entries, true, LB_PIPELINE(alternate)},
#define LB_BATCH_ALTERNATE(variant, min_batch, alternate, knobs) {variant##_argv, min_batch, false, LB_PIPELINE(alternate)},
#include "livebound/batch_alternates.inc"
#undef LB_BATCH_ALTERNATE
#undef LB_ENTRIES_ALTERNATE
};
}  // namespace

const Pipeline &for_batch(const Pipeline &variant, int64_t batch, int64_t entries) {
    if (entries < 0) entries = batch;
    for (const BatchAlternate &a : kBatchAlternates) {
        if (a.variant == variant.argv && (a.by_entries ? entries : batch) >= a.min_size) return a.alternate;
    }
    return variant;
}

namespace {
// The one override an autotune runner sets (set_pipeline_override).
std::atomic<int (*)(void **)> g_override_variant{nullptr};
Pipeline g_override_candidate{nullptr, nullptr};
std::atomic<uint64_t> g_override_hits{0};
}  // namespace

uint64_t pipeline_override_hits() { return g_override_hits.load(std::memory_order_relaxed); }

void set_pipeline_override(int (*variant)(void **), const Pipeline &candidate) {
    g_override_variant.store(nullptr, std::memory_order_relaxed);
    g_override_candidate = candidate;
    if (candidate.argv != nullptr) g_override_variant.store(variant, std::memory_order_release);
}

void PipelineCall::run(const Pipeline &requested, const std::vector<PipelineArg> &args) {
    const bool rerouted = requested.argv != nullptr && g_override_variant.load(std::memory_order_acquire) == requested.argv;
    if (rerouted) g_override_hits.fetch_add(1, std::memory_order_relaxed);
    const Pipeline &pipeline = rerouted ? g_override_candidate : requested;
    const halide_filter_metadata_t &md = *pipeline.metadata();
    std::vector<void *> argv(static_cast<size_t>(md.num_arguments));
    // Arguments are looked up by name, trying the runtime's position first: every call
    // site lists them in the generator's order, so the lookup costs one comparison each.
    size_t bound = 0, next = 0;
    for (int i = 0; i < md.num_arguments; i++) {
        const halide_filter_argument_t &m = md.arguments[i];
        if (std::strcmp(m.name, "__user_context") == 0) {
            argv[i] = &user_context_;
            continue;
        }
        const PipelineArg *a = nullptr;
        if (next < args.size() && std::strcmp(args[next].name, m.name) == 0) {
            a = &args[next];
        } else {
            for (const PipelineArg &candidate : args) {
                if (std::strcmp(candidate.name, m.name) == 0) a = &candidate;
            }
        }
        if (a == nullptr) {
            binding_error(md, m.name, "takes it as " + describe(m.kind, m.type, m.dimensions) + ", but it is not passed");
        }
        if (a->kind != m.kind || a->type != m.type || a->dimensions != m.dimensions) {
            binding_error(md, m.name,
                          "takes it as " + describe(m.kind, m.type, m.dimensions) + ", but it is passed as " +
                              describe(a->kind, a->type, a->dimensions));
        }
        argv[i] = a->value;
        next = static_cast<size_t>(a - args.data()) + 1;
        bound++;
    }
    if (bound != args.size()) {
        // Something passed that the pipeline does not take, or passed twice.
        for (size_t j = 0; j < args.size(); j++) {
            bool taken = false;
            for (int i = 0; i < md.num_arguments; i++) taken = taken || std::strcmp(md.arguments[i].name, args[j].name) == 0;
            if (!taken) binding_error(md, args[j].name, "does not take it");
            for (size_t k = 0; k < j; k++) {
                if (std::strcmp(args[k].name, args[j].name) == 0) binding_error(md, args[j].name, "is passed it twice");
            }
        }
    }
    int status = pipeline.argv(argv.data());
    if (status != 0) {
        throw Failure(LB_ERROR_KERNEL,
                      "kernel failed (Halide status " + std::to_string(status) + "): " + glue::take_halide_error());
    }
    note_variant(md.name);
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
