// Argument checks shared by every kernel's entry point. Each throws a Failure whose
// message names the argument.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "HalideRuntime.h"
#include "errors.h"
#include "livebound/livebound.h"

namespace livebound::validate {

// An index tensor (int32 or int64, 1-D, any stride) as an int32 view: an int64 tensor's low
// 32-bit words (little-endian: the first word of each element), stride doubled. For valid
// values (below 2^31: lengths, rows, slots, offsets) the low word is the value, and it is
// always int32(value), the C/torch truncation; the host checks (CPU calls) read full values.
inline lb_tensor index_view(const lb_tensor &t) {
    if (t.dtype != LB_INT64) return t;
    lb_tensor low = t;
    low.dtype = LB_INT32;
    low.strides[0] = t.strides[0] * 2;
    return low;
}

const char *dtype_name(lb_dtype dtype);
bool is_absent(const lb_tensor &t);  // all zeros: an optional tensor not given
std::string shape_text(const lb_tensor &t);  // "[d0, d1, ...]" for messages

// dtype in `dtypes`, ndim (1..LB_MAX_DIMS) as given, shapes >= 0 and within int32, strides
// in [1, 2^31) on every dimension longer than one, the last dimension contiguous when
// ndim >= 2 (unless the kernel takes any layout: Layout::any_strides), data non-null when
// the tensor has elements.
// last_contiguous: the last dimension has stride 1, the others any stride >= 1;
// broadcast_input: the same, but the other dimensions may also have stride 0 (an input read
// through an expanded view: torch's expand(); never an output, whose elements would overlap);
// any_strides: every dimension any stride >= 1.
enum class Layout { last_contiguous, broadcast_input, any_strides };
void tensor(const lb_tensor &t, const char *name, std::initializer_list<lb_dtype> dtypes, int ndim,
            Layout layout = Layout::last_contiguous);

// shape[dim] == n (exact) or >= n (at_least).
void extent_equals(const lb_tensor &t, const char *name, int dim, int64_t n, const char *what_n);
void extent_at_least(const lb_tensor &t, const char *name, int dim, int64_t n, const char *what_n);

// The form of a kernel: LB_BOUNDED or LB_FULL_WIDTH.
void variant(lb_variant v);

// A host integer that a kernel receives as int32: in [0, 2^31).
void int32_range(int64_t value, const char *name);

// req_to_token: int32 [pool_rows, ctx] with at least one row and one column when bs > 0.
void req_to_token(const lb_tensor &t, int64_t bs);

// An int32 page-table output: at least bs rows and max_seq_pages columns.
void page_table(const lb_tensor &t, const char *name, int64_t bs, int64_t max_seq_pages);

// The device: its type, and for CUDA that the device exists and that device.stream belongs
// to it (stream_on_device).
void device(const lb_device &device);

// CUDA calls: `stream` (lb_device.stream) is one the call may launch on, i.e. a stream of
// device_index's primary context (the context every call runs in), or a special handle
// (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD: that context's default streams). One
// cuStreamGetCtx (a host-side query, allowed during capture) when it is a stream of the
// primary context; refused naming 'stream' otherwise, saying which device it belongs to.
void stream_on_device(void *stream, int device_index);

// CUDA calls: the tensor's memory is CUDA memory of `device_index` (checked with
// cuPointerGetAttribute, a host-side query: no sync, allowed during capture).
void on_cuda_device(const lb_tensor &t, const char *name, int device_index);

// A page size: a power of two in [1, 2^20] (else bad_argument(name, "must be a power of
// two in [1, 2^20], got <value>")); returns its log2.
int page_shift(int64_t page_size, const char *name);

// Element i of a 1-D int32/int64 tensor in host memory (CPU calls: index values are checked).
int64_t host_element(const lb_tensor &t, int64_t i);

// Halide's view of the first `rows` x `cols` (or `n`) elements: dims innermost first.
halide_type_t halide_type(lb_dtype dtype);
void halide_dims_1d(const lb_tensor &t, int64_t n, halide_dimension_t *dims);
void halide_dims_2d(const lb_tensor &t, int64_t rows, int64_t cols, halide_dimension_t *dims);
// The whole tensor, every dimension (t.ndim of them, at most LB_MAX_DIMS); a dimension of
// extent <= 1 gets stride 1.
void halide_dims_nd(const lb_tensor &t, halide_dimension_t *dims);

}  // namespace livebound::validate
