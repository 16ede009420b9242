#include "validate.h"

#include <limits>

#include "cuda_driver.h"

namespace livebound::validate {
namespace {

bool fits_int32(int64_t v) { return v >= 0 && v <= std::numeric_limits<int32_t>::max(); }

}  // namespace

std::string shape_text(const lb_tensor &t) {
    std::string s = "[";
    for (int d = 0; d < t.ndim && d < LB_MAX_DIMS; d++) s += (d ? ", " : "") + std::to_string(t.shape[d]);
    return s + "]";
}

const char *dtype_name(lb_dtype dtype) {
    switch (dtype) {
    case LB_INT32: return "int32";
    case LB_INT64: return "int64";
    case LB_UINT8: return "uint8";
    case LB_FLOAT16: return "float16";
    case LB_BFLOAT16: return "bfloat16";
    case LB_FLOAT32: return "float32";
    case LB_FLOAT8_E4M3FN: return "float8_e4m3fn";
    case LB_DTYPE_NONE: return "none";
    default: return "unknown";
    }
}

bool is_absent(const lb_tensor &t) { return t.data == nullptr && t.ndim == 0; }

void tensor(const lb_tensor &t, const char *name, std::initializer_list<lb_dtype> dtypes, int ndim, Layout layout) {
    bool dtype_ok = false;
    std::string allowed;
    for (lb_dtype d : dtypes) {
        dtype_ok |= (t.dtype == d);
        allowed += (allowed.empty() ? "" : " or ") + std::string(dtype_name(d));
    }
    if (!dtype_ok) bad_argument(name, "expected dtype " + allowed + ", got " + dtype_name(t.dtype));
    if (ndim < 1 || ndim > LB_MAX_DIMS) bad_argument(name, "internal: validated rank " + std::to_string(ndim) + " is not in [1, 4]");
    if (t.ndim != ndim) {
        bad_argument(name, "expected " + std::to_string(ndim) + " dimension(s), got " + std::to_string(t.ndim));
    }
    int64_t elements = 1;
    for (int d = 0; d < ndim; d++) {
        if (!fits_int32(t.shape[d])) {
            bad_argument(name, "shape " + shape_text(t) + ": dimension " + std::to_string(d) +
                                   " must be in [0, 2^31)");
        }
        const int64_t min_stride = layout == Layout::broadcast_input && d < ndim - 1 ? 0 : 1;
        if (t.shape[d] > 1 && (t.strides[d] < min_stride || t.strides[d] > std::numeric_limits<int32_t>::max())) {
            bad_argument(name, "stride " + std::to_string(t.strides[d]) + " of dimension " + std::to_string(d) +
                                   " must be in [" + std::to_string(min_stride) + ", 2^31)");
        }
        elements *= t.shape[d];
    }
    // Tables keep unit column stride (what the kernels were compiled for) unless the kernel
    // takes any layout; 1-D tensors may be strided.
    const bool last_contiguous = layout != Layout::any_strides;
    if (last_contiguous && ndim == 2 && t.shape[1] > 1 && t.strides[1] != 1) {
        bad_argument(name, "the column stride must be 1 (rows of contiguous columns), got " + std::to_string(t.strides[1]));
    }
    if (last_contiguous && ndim > 2 && t.shape[ndim - 1] > 1 && t.strides[ndim - 1] != 1) {
        bad_argument(name, "the last dimension must be contiguous (stride 1), got stride " +
                               std::to_string(t.strides[ndim - 1]));
    }
    if (elements > 0 && t.data == nullptr) bad_argument(name, "data is null but the shape " + shape_text(t) + " is not empty");
}

void extent_equals(const lb_tensor &t, const char *name, int dim, int64_t n, const char *what_n) {
    if (t.shape[dim] != n) {
        bad_argument(name, "shape " + shape_text(t) + ": dimension " + std::to_string(dim) + " must equal " +
                               what_n + " = " + std::to_string(n));
    }
}

void extent_at_least(const lb_tensor &t, const char *name, int dim, int64_t n, const char *what_n) {
    if (t.shape[dim] < n) {
        bad_argument(name, "shape " + shape_text(t) + ": dimension " + std::to_string(dim) + " must be at least " +
                               what_n + " = " + std::to_string(n));
    }
}

void variant(lb_variant v) {
    if (v != LB_BOUNDED && v != LB_FULL_WIDTH) {
        bad_argument("variant", "must be LB_BOUNDED or LB_FULL_WIDTH, got " + std::to_string(static_cast<int>(v)));
    }
}

void int32_range(int64_t value, const char *name) {
    if (value < 0 || value > std::numeric_limits<int32_t>::max()) {
        bad_argument(name, "must be in [0, 2^31), got " + std::to_string(value));
    }
}

void req_to_token(const lb_tensor &t, int64_t bs) {
    tensor(t, "req_to_token", {LB_INT32}, 2);
    if (bs > 0 && (t.shape[0] < 1 || t.shape[1] < 1)) {
        bad_argument("req_to_token", "must have at least one row and one column");
    }
}

void page_table(const lb_tensor &t, const char *name, int64_t bs, int64_t max_seq_pages) {
    tensor(t, name, {LB_INT32}, 2);
    extent_at_least(t, name, 0, bs, "bs");
    extent_at_least(t, name, 1, max_seq_pages, "max_seq_pages");
}

void device(const lb_device &device) {
    if (device.type == LB_DEVICE_CPU) return;
    if (device.type != LB_DEVICE_CUDA) {
        bad_argument("device", "unknown device type " + std::to_string(static_cast<int>(device.type)));
    }
#ifndef LIVEBOUND_WITH_CUDA
    throw Failure(LB_ERROR_UNSUPPORTED, "argument 'device': this livebound build has no CUDA variants");
#else
    if (!cuda::driver()) {
        throw Failure(LB_ERROR_DEVICE, "argument 'device': CUDA is not available: " + cuda::why_unavailable());
    }
    if (device.index < 0 || device.index >= cuda::device_count()) {
        throw Failure(LB_ERROR_DEVICE, "argument 'device': CUDA device " + std::to_string(device.index) +
                                           " does not exist (" + std::to_string(cuda::device_count()) +
                                           " present)");
    }
    stream_on_device(device.stream, device.index);
#endif
}

void stream_on_device(void *stream, int device_index) {
#ifdef LIVEBOUND_WITH_CUDA
    const uintptr_t handle = reinterpret_cast<uintptr_t>(stream);
    if (handle == 0 || handle == cuda::kStreamLegacy || handle == cuda::kStreamPerThread) return;
    std::string error;
    const cuda::CUcontext primary = cuda::primary_context(device_index, &error);
    if (primary == nullptr) throw Failure(LB_ERROR_DEVICE, "argument 'device': " + error);
    cuda::CUcontext owner = nullptr;
    const cuda::CUresult r = cuda::driver()->cuStreamGetCtx(stream, &owner);
    if (r != 0) bad_argument("stream", "is not a CUDA stream the driver knows (" + cuda::describe("cuStreamGetCtx", r) + ")");
    if (owner == primary) return;  // the fast path: one driver call
    // Refused: Halide launches on `stream` inside device_index's primary context, and a
    // stream of another context fails at launch, or worse, of another device runs the
    // kernel on the wrong GPU. Which device it belongs to, for the message:
    const int owner_device = cuda::context_device(owner, &error);
    const std::string call_device = std::to_string(device_index);
    if (owner_device < 0) {
        bad_argument("stream", "belongs to a CUDA context that is not device " + call_device +
                                   "'s primary context, the one the call runs on (its device is unknown: " + error + ")");
    }
    if (owner_device != device_index) {
        bad_argument("stream", "belongs to CUDA device " + std::to_string(owner_device) +
                                   ", but the call runs on device " + call_device);
    }
    bad_argument("stream", "belongs to a context other than device " + call_device +
                               "'s primary context (the call runs on the primary context, the one PyTorch and the "
                               "CUDA runtime use; create the stream there)");
#else
    (void)stream;
    (void)device_index;
#endif
}

void on_cuda_device(const lb_tensor &t, const char *name, int device_index) {
    if (t.data == nullptr) return;  // empty tensor (checked by tensor())
    // Both attributes in one driver call (one lookup of the allocation: this runs for every
    // tensor of every CUDA call). An address the driver does not know reads as memory type 0.
    int attributes[2] = {cuda::kPointerAttributeMemoryType, cuda::kPointerAttributeDeviceOrdinal};
    unsigned int memory_type = 0;
    int ordinal = -1;
    void *values[2] = {&memory_type, &ordinal};
    const cuda::CUresult r = cuda::driver()->cuPointerGetAttributes(2, attributes, values,
                                                                      reinterpret_cast<cuda::CUdeviceptr>(t.data));
    if (r != 0 || (memory_type != cuda::kMemoryTypeDevice && memory_type != cuda::kMemoryTypeUnified)) {
        bad_argument(name, "is not CUDA device memory (a CUDA call needs device pointers)");
    }
    if (ordinal != device_index) {
        bad_argument(name, "lives on CUDA device " + std::to_string(ordinal) + ", but the call runs on device " +
                               std::to_string(device_index));
    }
}

int page_shift(int64_t page_size, const char *name) {
    if (page_size < 1 || page_size > (1 << 20) || (page_size & (page_size - 1)) != 0) {
        bad_argument(name, "must be a power of two in [1, 2^20], got " + std::to_string(page_size));
    }
    int shift = 0;
    while ((int64_t{1} << shift) < page_size) shift++;
    return shift;
}

int64_t host_element(const lb_tensor &t, int64_t i) {
    const int64_t offset = i * t.strides[0];
    if (t.dtype == LB_INT64) return static_cast<const int64_t *>(t.data)[offset];
    return static_cast<const int32_t *>(t.data)[offset];
}

halide_type_t halide_type(lb_dtype dtype) {
    switch (dtype) {
    case LB_UINT8:
    case LB_FLOAT8_E4M3FN: return halide_type_t(halide_type_uint, 8);  // Halide has no fp8: its bytes
    case LB_INT64: return halide_type_t(halide_type_int, 64);
    case LB_FLOAT16: return halide_type_t(halide_type_float, 16);
    case LB_BFLOAT16: return halide_type_t(halide_type_bfloat, 16);
    case LB_FLOAT32: return halide_type_t(halide_type_float, 32);
    default: return halide_type_t(halide_type_int, 32);
    }
}

void halide_dims_1d(const lb_tensor &t, int64_t n, halide_dimension_t *dims) {
    dims[0] = halide_dimension_t(0, static_cast<int32_t>(n), static_cast<int32_t>(t.strides[0] > 0 ? t.strides[0] : 1));
}

void halide_dims_nd(const lb_tensor &t, halide_dimension_t *dims) {
    for (int i = 0; i < t.ndim && i < LB_MAX_DIMS; i++) {
        const int d = t.ndim - 1 - i;
        const int64_t stride = t.shape[d] > 1 ? t.strides[d] : 1;  // (0: a validated broadcast input)
        dims[i] = halide_dimension_t(0, static_cast<int32_t>(t.shape[d]), static_cast<int32_t>(stride));
    }
}

void halide_dims_2d(const lb_tensor &t, int64_t rows, int64_t cols, halide_dimension_t *dims) {
    // A dimension of extent 0 or 1 has an unchecked stride (tensor()), which no element
    // address uses: Halide gets 1 there (the pipelines require a column stride of 1 unless
    // the tensor takes any strides; found by the fuzz target, a [n, 1] table with strides {2, 2}).
    auto stride = [&](int d) { return static_cast<int32_t>(t.shape[d] > 1 && t.strides[d] > 0 ? t.strides[d] : 1); };
    dims[0] = halide_dimension_t(0, static_cast<int32_t>(cols), stride(1));
    dims[1] = halide_dimension_t(0, static_cast<int32_t>(rows), stride(0));
}

}  // namespace livebound::validate
