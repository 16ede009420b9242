// livebound: the C++ API, a thin layer over the C ABI (livebound.h) that throws
// livebound::Error instead of returning a status.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>

#include "livebound/livebound.h"

namespace livebound {

class Error : public std::runtime_error {
public:
    Error(lb_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    lb_status status() const { return status_; }

private:
    lb_status status_;
};

inline void check(lb_status status) {
    if (status != LB_OK) throw Error(status, lb_last_error());
}

// Row-major (torch-order) contiguous views of caller memory; strides in elements.
inline lb_tensor tensor_1d(void *data, lb_dtype dtype, int64_t n, int64_t stride = 1) {
    lb_tensor t{};
    t.data = data;
    t.dtype = dtype;
    t.ndim = 1;
    t.shape[0] = n;
    t.strides[0] = stride;
    return t;
}
inline lb_tensor tensor_2d(void *data, lb_dtype dtype, int64_t rows, int64_t cols, int64_t row_stride = -1) {
    lb_tensor t{};
    t.data = data;
    t.dtype = dtype;
    t.ndim = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.strides[0] = row_stride < 0 ? cols : row_stride;
    t.strides[1] = 1;
    return t;
}
inline lb_tensor i32(int32_t *p, int64_t n) { return tensor_1d(p, LB_INT32, n); }
inline lb_tensor i64(int64_t *p, int64_t n) { return tensor_1d(p, LB_INT64, n); }

inline lb_device cpu() { return lb_device{LB_DEVICE_CPU, 0, nullptr}; }
inline lb_device cuda_device(int index, void *stream) { return lb_device{LB_DEVICE_CUDA, index, stream}; }

// K1 (spec §3.1); see lb_decode_metadata_args for every field.
inline void normal_decode_set_metadata(const lb_decode_metadata_args &args, lb_device device) {
    check(lb_normal_decode_set_metadata(&args, device));
}

}  // namespace livebound
