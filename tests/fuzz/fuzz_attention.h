// Pieces the K7 and K8 harnesses (fuzz_k7.cpp, fuzz_k8.cpp) share: head dims, scalar
// tables, attention tensors in several layouts (their logical contents for the reference),
// and the accuracy check against the fp64 reference (the suites' rules, per element).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "reference/extend_attention_reference.h"

namespace fuzz::attention {

using livebound::reference::e4m3_to_float;

constexpr uint16_t kPoison16 = 0x7e5a;  // a NaN in fp16 and bf16
constexpr float kPoisonLse = -12345.0f;

// (Lq, Lv): mostly small dims the CPU build has variants for (the scalar bucket up to 32,
// 64/64, 40 in the 64 bucket, 80 in 96, 128/128, 192/128), rarely dims no variant serves.
inline void head_dims(Bytes &in, int64_t *lq, int64_t *lv) {
    static const int64_t kDims[32][2] = {{16, 16}, {16, 16}, {16, 16}, {16, 16}, {16, 16},  {16, 16}, {16, 16},
                                         {16, 16}, {8, 8},   {8, 8},   {8, 8},   {13, 13},  {13, 13}, {32, 32},
                                         {32, 32}, {32, 32}, {24, 16}, {16, 24}, {64, 64},  {64, 64}, {64, 64},
                                         {64, 64}, {8, 16},  {40, 40}, {128, 128}, {192, 128}, {80, 80}, {1, 1},
                                         {33, 33}, {600, 8}, {16, 16}, {64, 64}};
    const uint8_t b = in.u8() % 32;
    *lq = kDims[b][0];
    *lv = kDims[b][1];
}

inline float pick(Bytes &in, std::initializer_list<float> normal, std::initializer_list<float> garbage) {
    const uint8_t b = in.u8();
    if (b >= 248 && garbage.size() > 0) return garbage.begin()[b % garbage.size()];
    return normal.begin()[b % normal.size()];
}
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN(), kInf = std::numeric_limits<float>::infinity();

// Element values: 16-bit ones k/8 for k in [-16, 16] (x `big`), exact in fp16 and bf16; fp8
// cache bytes mostly of magnitude < 4, sometimes any finite e4m3 byte.
struct Values {
    std::mt19937 rng;
    bool bf16;
    float big;
    bool wide_fp8;
    Values(Bytes &in, bool bf16_) : rng(in.u32()), bf16(bf16_) {
        const uint8_t b = in.u8();
        big = b % 8 == 0 ? 16.0f : 1.0f;
        wide_fp8 = b % 5 == 0;
    }
    uint16_t v16() {
        const float f = float(int(rng() % 33) - 16) / 8.0f * big;
        return bf16 ? livebound::reference::float_to_bf16(f) : livebound::reference::float_to_fp16(f);
    }
    uint16_t v8() {
        for (;;) {
            const uint32_t r = rng();
            const uint8_t byte = wide_fp8 ? uint8_t(r) : uint8_t((r & 0x80) | ((r >> 8) % 9) << 3 | ((r >> 12) & 7));
            if ((byte & 0x7f) != 0x7f) return byte;
        }
    }
};

// A [R, H, L] attention tensor: logical contents (row-major, what the reference reads) and
// the storage a view describes. Layouts: 0 contiguous, 1 rows padded (+8 elements), 2 heads
// broadcast (head stride 0; every head holds head 0's values), 3 last dimension strided
// (stride 2: refused).
template <typename E>
struct Tensor3 {
    std::vector<E> logical, storage;
    lb_tensor view{};
    int64_t R = 0, H = 0, L = 0;
    void make(lb_dtype dt, int64_t rows, int64_t heads, int64_t dim, int layout, const std::function<E()> &value) {
        R = rows;
        H = heads;
        L = dim;
        logical.resize(size_t(R * H * L));
        for (auto &x : logical) x = value();
        if (layout == 2) {
            for (int64_t r = 0; r < R; r++) {
                for (int64_t h = 1; h < H; h++) {
                    for (int64_t d = 0; d < L; d++) logical[size_t((r * H + h) * L + d)] = logical[size_t(r * H * L + d)];
                }
            }
        }
        int64_t s0 = H * L, s1 = L, s2 = 1;
        if (layout == 1) s0 = H * L + 8;
        if (layout == 2) s0 = L, s1 = 0;
        if (layout == 3) s0 = 2 * H * L, s1 = 2 * L, s2 = 2;
        const int64_t span = R > 0 && H > 0 && L > 0 ? (R - 1) * s0 + (H - 1) * s1 + (L - 1) * s2 + 1 : 0;
        storage.assign(size_t(span + 1), E(0x5a));
        for (int64_t r = 0; r < R; r++) {
            for (int64_t h = 0; h < H; h++) {
                for (int64_t d = 0; d < L; d++) storage[size_t(r * s0 + h * s1 + d * s2)] = logical[size_t((r * H + h) * L + d)];
            }
        }
        view = lb_tensor{storage.data(), dt, 3, {R, H, L}, {s0, s1, s2}};
    }
    std::vector<uint16_t> wide() const { return std::vector<uint16_t>(logical.begin(), logical.end()); }
};

// An input layout: mostly contiguous.
inline int input_layout(Bytes &in) {
    const uint8_t b = in.u8();
    return b < 200 ? 0 : b < 224 ? 1 : b < 250 ? 2 : 3;
}

template <typename T>
double max_abs_diff(const std::vector<T> &a, const std::vector<double> &exact, const std::vector<size_t> &at) {
    double e = 0;
    for (size_t i : at) {
        const double x = double(a[i]), y = exact[i];
        if (std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0)) continue;
        const double d = std::fabs(x - y);
        if (std::isnan(d)) return INFINITY;
        e = std::max(e, d);
    }
    return e;
}

// The output o [T, Hq, Lv] (rows padded or not): poisoned storage; after an accepted call the
// rows [row0, row1) are compared with the fp64 reference within one ulp of the exact value +
// 2x the naive fp32 reference's largest error + 1e-5 (the suites' two rules, per element),
// every other storage element must keep its poison.
struct OutO {
    Output<uint16_t> out;
    int64_t T = 0, Hq = 0, Lv = 0;
    void make(lb_dtype dt, int64_t t, int64_t hq, int64_t lv, bool padded) {
        T = t;
        Hq = hq;
        Lv = lv;
        out.make_2d(dt, T, Hq * Lv, Hq * Lv + (padded ? 4 : 0), 1, kPoison16, 4);
        out.view.ndim = 3;
        out.view.shape[1] = Hq;
        out.view.shape[2] = Lv;
        out.view.strides[1] = Lv;
        out.view.strides[2] = 1;
    }
    template <typename Problem>
    void check(const Problem &p, int64_t row0, int64_t row1, const std::vector<double> &exact,
               const std::vector<float> &naive, const char *context) {
        std::vector<size_t> at;
        for (int64_t r = row0; r < row1; r++) {
            for (int64_t i = 0; i < Hq * Lv; i++) at.push_back(size_t(r * Hq * Lv + i));
        }
        const double err_naive = max_abs_diff(naive, exact, at);
        for (int64_t r = row0; r < row1; r++) {
            for (int64_t i = 0; i < Hq * Lv; i++) {
                // (The view is 3-D [T, Hq, Lv]: element (r, i / Lv, i % Lv) at r * row stride + i.)
                const size_t pos = size_t(r * out.view.strides[0] + i);
                out.kind[pos] = Output<uint16_t>::any;
                const double e = exact[size_t(r * Hq * Lv + i)];
                const float got = p.to_f(out.data[pos]);
                const uint16_t bits = p.from_f(float(std::fabs(e)));
                const double ulp = std::fabs(double(p.to_f(uint16_t(bits + 1))) - double(p.to_f(bits)));
                const bool ok = std::isnan(e) ? std::isnan(got) : std::fabs(double(got) - e) <= ulp + 2 * err_naive + 1e-5;
                if (!ok) {
                    fail("o differs from the fp64 reference",
                         std::string(context) + ": row " + std::to_string(r) + ", head " + std::to_string(i / Lv) +
                             ", dim " + std::to_string(i % Lv) + ": got " + std::to_string(got) + ", exact " +
                             std::to_string(e) + " (naive fp32 error " + std::to_string(err_naive) + ")");
                }
            }
        }
        out.verify("o");
    }
};

}  // namespace fuzz::attention
