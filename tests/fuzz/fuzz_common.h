// Shared pieces of the C ABI fuzz target (tests/fuzz/fuzz_c_abi.cpp and its per-kernel
// harnesses fuzz_k1.cpp .. fuzz_k8.cpp): the byte reader, fail(), poisoned outputs with the
// set of elements a call may write, strided index tensors, the accepted / refused counters,
// and the refusal property every harness checks the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "livebound/livebound.h"

namespace fuzz {

// The harnesses (kernel k in 1..8: K1..K8); each reads the input after the selector byte.
int fuzz_k1(const uint8_t *data, size_t size);
int fuzz_k2(const uint8_t *data, size_t size);
int fuzz_k3(const uint8_t *data, size_t size);
int fuzz_k4(const uint8_t *data, size_t size);
int fuzz_k5(const uint8_t *data, size_t size);
int fuzz_k6(const uint8_t *data, size_t size);
int fuzz_k7(const uint8_t *data, size_t size);
int fuzz_k8(const uint8_t *data, size_t size);

constexpr int kKernels = 8;
constexpr int32_t kPoison = 0x5a5a5a5a;
constexpr int64_t kPoison64 = 0x5a5a5a5a5a5a5a5aLL;
constexpr uint8_t kPoison8 = 0xa5;

// The input as a stream of small integers (an exhausted input reads zeros).
struct Bytes {
    const uint8_t *data;
    size_t size, at = 0;
    uint8_t u8() { return at < size ? data[at++] : 0; }
    uint32_t u32() { return uint32_t(u8()) | uint32_t(u8()) << 8 | uint32_t(u8()) << 16 | uint32_t(u8()) << 24; }
    // Mostly in [lo, hi], sometimes a raw 32-bit value (garbage).
    int64_t value(int64_t lo, int64_t hi) {
        const uint8_t mode = u8();
        if (mode >= 240) return int64_t(int32_t(u32()));
        return hi < lo ? lo : lo + int64_t(mode) % (hi - lo + 1);
    }
    // True with probability about 1 / n (n in 1..256).
    bool one_in(int n) { return u8() % n == 0; }
    // A power of two 2^(byte % (max_log2 + 1)), rarely (byte >= 240) a small non-power (-10 .. 5).
    int32_t pow2(int max_log2) {
        const uint8_t b = u8();
        return b < 240 ? int32_t{1} << (b % (max_log2 + 1)) : int32_t(b) - 250;
    }
    // LB_BOUNDED or LB_FULL_WIDTH, rarely (byte >= 250) a garbage value.
    lb_variant variant() {
        const uint8_t b = u8();
        return b < 250 ? lb_variant(b & 1) : lb_variant(int32_t(b) * 1000 - 7);
    }
};

// Bulk values (tables, caches) from a generator seeded by the input: mostly in [lo, hi],
// a few out of range (the rate also read from the input: none, 1 %, 3 % or 12 %).
struct Bulk {
    std::mt19937 rng;
    uint32_t garbage_per_256;
    explicit Bulk(Bytes &in) : rng(in.u32()) {
        static const uint32_t kRates[4] = {0, 2, 8, 32};
        garbage_per_256 = kRates[in.u8() % 4];
    }
    int64_t value(int64_t lo, int64_t hi) {
        if (rng() % 256 < garbage_per_256) {
            const uint32_t r = rng();
            return r % 3 == 0 ? hi + 1 + r % 4 : r % 3 == 1 ? lo - 1 - int64_t(r % 4) : int64_t(int32_t(rng()));
        }
        return hi < lo ? lo : lo + int64_t(rng() % uint64_t(hi - lo + 1));
    }
    uint32_t raw() { return rng(); }
};

[[noreturn]] inline void fail(const char *what, const std::string &detail) {
    std::fprintf(stderr, "fuzz_c_abi: %s: %s\n", what, detail.c_str());
    std::abort();
}

// Calls accepted / refused per kernel (index 0..7 = K1..K8).
extern int64_t g_accepted[kKernels], g_refused[kKernels];

// The properties of a refused call: the status is INVALID_ARGUMENT or UNSUPPORTED, the
// message names an argument, and nothing was written (`untouched`).
inline void check_refused(int kernel, lb_status status, const std::string &message, bool untouched) {
    if (status != LB_ERROR_INVALID_ARGUMENT && status != LB_ERROR_UNSUPPORTED) {
        fail("unexpected status", std::to_string(int(status)) + ": " + message +
                                      (untouched ? " (outputs untouched)" : " (and it wrote outputs)"));
    }
    if (message.find("argument '") == std::string::npos) fail("refusal names no argument", message);
    if (!untouched) fail("a refused call wrote its outputs", message);
    g_refused[kernel - 1]++;
}

// An output: poisoned storage, a view over it, and for the check, what each storage element
// may hold after an accepted call: poison (the default), exactly one value, or anything.
template <typename T>
struct Output {
    std::vector<T> data;
    T poison;
    lb_tensor view{};
    enum Kind : uint8_t { untouched, exact, any };
    std::vector<uint8_t> kind;
    std::vector<T> want;

    Output() = default;
    // 1-D: n elements at stride `stride`, plus `tail` elements past the view.
    void make_1d(lb_dtype dt, int64_t n, int64_t stride, T poison_value, int64_t tail = 2) {
        poison = poison_value;
        const int64_t storage = (n > 0 ? (n - 1) * stride + 1 : 0) + tail;
        data.assign(size_t(storage > 0 ? storage : 1), poison);
        view = lb_tensor{data.data(), dt, 1, {n}, {stride}};
        reset_expectation();
    }
    // 2-D: rows x cols at strides (row_stride, col_stride) (non-overlapping), plus `tail`.
    void make_2d(lb_dtype dt, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, T poison_value,
                 int64_t tail = 2) {
        poison = poison_value;
        const int64_t storage = (rows > 0 && cols > 0 ? (rows - 1) * row_stride + (cols - 1) * col_stride + 1 : 0) + tail;
        data.assign(size_t(storage > 0 ? storage : 1), poison);
        view = lb_tensor{data.data(), dt, 2, {rows, cols}, {row_stride, col_stride}};
        reset_expectation();
    }
    void reset_expectation() {
        kind.assign(data.size(), untouched);
        want.assign(data.size(), poison);
    }
    size_t pos1(int64_t i) const { return size_t(i * view.strides[0]); }
    size_t pos2(int64_t r, int64_t c) const { return size_t(r * view.strides[0] + c * view.strides[1]); }
    T at1(int64_t i) const { return data[pos1(i)]; }
    T at2(int64_t r, int64_t c) const { return data[pos2(r, c)]; }
    void expect1(int64_t i, T v) { set(pos1(i), v); }
    void expect2(int64_t r, int64_t c, T v) { set(pos2(r, c), v); }
    void may1(int64_t i) { kind[pos1(i)] = any; }
    void may2(int64_t r, int64_t c) { kind[pos2(r, c)] = any; }
    void set(size_t p, T v) {
        if (p >= data.size()) fail("harness", "expectation outside the output's storage");
        kind[p] = exact;
        want[p] = v;
    }
    bool poisoned() const {
        for (const T &x : data) {
            if (std::memcmp(&x, &poison, sizeof(T)) != 0) return false;
        }
        return true;
    }
    // Every storage element against its expectation; `name` and a describer for messages.
    void verify(const char *name) const {
        for (size_t p = 0; p < data.size(); p++) {
            if (kind[p] == any) continue;
            const T expect = kind[p] == exact ? want[p] : poison;
            if (std::memcmp(&data[p], &expect, sizeof(T)) != 0) {
                fail(kind[p] == exact ? "an output differs from the reference" : "an element outside what the call may write was written",
                     std::string(name) + " storage element " + std::to_string(p) + " (view strides " +
                         std::to_string(view.strides[0]) + (view.ndim > 1 ? ", " + std::to_string(view.strides[1]) : "") +
                         "): got " + std::to_string(int64_t(data[p])) + ", expected " + std::to_string(int64_t(expect)));
            }
        }
    }
};

// An index tensor of dtype int32 / int64 holding `values` at `stride` (storage kept here;
// the gaps hold -1).
struct IndexTensor {
    std::vector<int32_t> i32;
    std::vector<int64_t> i64;
    lb_tensor view{};
    IndexTensor() = default;
    IndexTensor(const std::vector<int64_t> &values, bool int64, int64_t stride) { make(values, int64, stride); }
    void make(const std::vector<int64_t> &values, bool int64, int64_t stride) {
        const size_t n = values.size();
        const int64_t s = stride < 1 ? 1 : stride;  // (storage for stride 0 / negative views: one row)
        const size_t storage = n == 0 ? 1 : (n - 1) * size_t(s) + 1;
        i32.clear();
        i64.clear();
        if (int64) {
            i64.assign(storage, -1);
            for (size_t i = 0; i < n; i++) i64[i * size_t(s)] = values[i];
        } else {
            i32.assign(storage, -1);
            for (size_t i = 0; i < n; i++) i32[i * size_t(s)] = int32_t(values[i]);
        }
        view.data = int64 ? static_cast<void *>(i64.data()) : static_cast<void *>(i32.data());
        view.dtype = int64 ? LB_INT64 : LB_INT32;
        view.ndim = 1;
        view.shape[0] = int64_t(n);
        view.strides[0] = stride;
    }
};

// A 1-D stride for an index tensor: 1 or 2, rarely 0 (refused when n > 1).
inline int64_t stride_1d(Bytes &in) {
    const uint8_t b = in.u8();
    return b < 8 ? 0 : 1 + b % 2;
}

// The column stride of a table: 1, or 2 when `bad` (refused when the table has more than one
// column; with one column the stride is unchecked and unused: the call must run). The
// corpus inputs corpus/k2/one-column-table-column-stride and corpus/k4/... are the fuzzer's
// find here: validate::halide_dims_2d handed that stride to Halide, whose pipeline then
// failed (LB_ERROR_KERNEL), K4 after writing cache_seqlens and cu_seqlens_k; fixed.
inline int64_t column_stride(bool bad) { return bad ? 2 : 1; }

// Output length: n + slack, rarely (about 1 in `one_in`) one short.
inline int64_t out_len(Bytes &in, int64_t n, int short_one_in = 24) {
    const uint8_t b = in.u8();
    if (b % short_one_in == 0) return n - 1;  // (-1 for n == 0: a negative extent, refused)
    return n + b % 3;
}

}  // namespace fuzz
