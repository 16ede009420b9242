// K7 extend_attention_fwd references (spec §3.7.2, §3.7.3), plain C++:
//   * reference_fp64: the spec formulas in double precision over the stored inputs;
//   * reference_naive_fp32: the same-precision naive reference (FlashAttention's rule):
//     inputs as stored (already rounded to the input dtype), scores, softmax and the
//     weighted sum in float, output rounded to the input dtype;
//   * ideal_chunk_count: chunks holding at least one visible (row, key) element, per stage
//     and query tile (the count a derived chunk loop must hit).
// K8 extend_attention_fwd_unified (spec §3.8): UnifiedProblem, reference_unified<Real>
// (reference_unified_fp64 / reference_unified_naive_fp32), ideal_unified_chunk_count, and
// unified_from_extend, which turns a K7 problem into the equivalent K8 one.
// KV caches (k_buf / v_buf) hold 16-bit values of the input dtype, or with fp8_cache one
// float8 e4m3fn byte per element (torch.float8_e4m3fn), which every reference decodes
// exactly (e4m3_to_float) before the same fp64 / fp32 arithmetic.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace livebound::reference {

// ---- 16-bit float conversions (round to nearest even) ----
inline float bf16_to_float(uint16_t h) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) return 0x7fc0;
    u += 0x7fff + ((u >> 16) & 1);
    return uint16_t(u >> 16);
}
inline float fp16_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    int32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t u;
    if (exp == 0) {
        if (mant == 0) {
            u = sign;
        } else {  // subnormal
            exp = 1;
            while (!(mant & 0x400)) {
                mant <<= 1;
                exp--;
            }
            mant &= 0x3ff;
            u = sign | uint32_t(exp + 127 - 15) << 23 | mant << 13;
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | mant << 13;
    } else {
        u = sign | uint32_t(exp + 127 - 15) << 23 | mant << 13;
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline uint16_t float_to_fp16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000);
    const float a = std::fabs(f);
    if (std::isnan(f)) return 0x7e00;
    if (a >= 65520.0f) return sign | 0x7c00;
    if (a < 6.103515625e-05f) {  // subnormal range: multiples of 2^-24
        const float scaled = a * 16777216.0f;
        return sign | uint16_t(std::nearbyint(scaled));
    }
    int e;
    const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    float mant = std::nearbyint((m * 2.0f - 1.0f) * 1024.0f);
    int exp = e - 1 + 15;
    if (mant >= 1024.0f) {
        mant = 0;
        exp++;
    }
    if (exp >= 31) return sign | 0x7c00;
    return sign | uint16_t(exp << 10) | uint16_t(mant);
}

// ---- float8 e4m3fn (torch.float8_e4m3fn): 1 sign, 4 exponent (bias 7), 3 mantissa bits ----
// Exponent field e > 0: (1 + m/8) * 2^(e-7); e = 0: subnormal m/8 * 2^-6 = m * 2^-9. No
// infinities; 0x7f / 0xff (e = 15, m = 7) are NaN, so the largest finite value is
// 1.75 * 2^8 = 448 (0x7e). Every value is exact in float, bf16 and fp16.
inline float e4m3_to_float(uint8_t b) {
    const int exp = (b >> 3) & 0xf, mant = b & 0x7;
    if (exp == 0xf && mant == 0x7) return std::numeric_limits<float>::quiet_NaN();
    const float magnitude = exp == 0 ? std::ldexp(float(mant), -9) : std::ldexp(float(8 + mant), exp - 10);
    return (b & 0x80) ? -magnitude : magnitude;
}
// Round to nearest even; magnitudes past 448 saturate to +-448 (no infinities to go to);
// NaN -> 0x7f.
inline uint8_t float_to_e4m3(float f) {
    if (std::isnan(f)) return 0x7f;
    const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
    const float a = std::fabs(f);
    if (a >= 448.0f) return sign | 0x7e;
    if (a < 0.015625f) {  // below the smallest normal 2^-6: multiples of 2^-9 (8 of them reach 2^-6 = 0x08)
        return sign | uint8_t(std::nearbyint(a * 512.0f));
    }
    int e;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): a = 1.x * 2^(e-1)
    int exp = e - 1 + 7;
    float steps = std::nearbyint(std::ldexp(a, 3 - (e - 1)));  // (1 + mant/8) * 8, in [8, 16]
    if (steps >= 16.0f) {
        steps = 8.0f;
        exp++;
    }
    const int mant = int(steps) - 8;
    if (exp > 15 || (exp == 15 && mant > 6)) return sign | 0x7e;  // (448 <= a handled above)
    return sign | uint8_t(exp << 3) | uint8_t(mant);
}

// One K7 problem in torch layouts (row-major), 16-bit inputs stored raw.
struct ExtendProblem {
    bool bf16 = true;
    int64_t B = 0, T = 0, Hq = 0, Hkv = 0, Lq = 0, Lv = 0, num_slots = 0;
    std::vector<uint16_t> q, k_ext, v_ext;  // [T, Hq, Lq], [T, Hkv, Lq], [T, Hkv, Lv]
    std::vector<uint16_t> k_buf, v_buf;     // [num_slots, Hkv, Lq], [num_slots, Hkv, Lv]
    // The cache's dtype: false, the input dtype (bf16 / fp16 bits); true, float8 e4m3fn:
    // k_buf / v_buf then hold one e4m3 byte per element (values 0..255), decoded exactly
    // (cache_f). q and the extend K/V keep the input dtype.
    bool fp8_cache = false;
    std::vector<int32_t> qo_indptr, kv_indptr;  // [B + 1]
    std::vector<int64_t> kv_indices;        // [sum P]
    std::vector<float> sinks;               // [Hq] or empty
    bool causal = true;
    int32_t window = -1;
    float sm_scale = 0, logit_cap = 0, k_scale = 1, v_scale = 1;
    // Custom mask (empty: none): request b's E x (P + E + wko) block at mask_indptr[b].
    std::vector<uint8_t> custom_mask;
    std::vector<int64_t> mask_indptr;       // [B + 1] (a call may pass it as int32 or int64)
    std::vector<int32_t> window_kv_offsets; // [B] or empty (read only with a mask and W > 0)
    bool skip_prefix_custom_mask = false;
    int32_t xai_temperature_len = -1;
    bool skip_prefix = false, skip_extend = false;

    float to_f(uint16_t h) const { return bf16 ? bf16_to_float(h) : fp16_to_float(h); }
    uint16_t from_f(float f) const { return bf16 ? float_to_bf16(f) : float_to_fp16(f); }
    // The value of one cache element (k_buf / v_buf), exact for either cache dtype.
    float cache_f(uint16_t h) const { return fp8_cache ? e4m3_to_float(uint8_t(h)) : to_f(h); }
    // A float as a cache element (rounded to the cache dtype).
    uint16_t cache_from_f(float f) const { return fp8_cache ? uint16_t(float_to_e4m3(f)) : from_f(f); }
    int64_t E(int64_t b) const { return qo_indptr[b + 1] - qo_indptr[b]; }
    int64_t P(int64_t b) const { return kv_indptr[b + 1] - kv_indptr[b]; }
    bool has_mask() const { return !custom_mask.empty(); }
    int64_t wko(int64_t b) const {
        return has_mask() && window > 0 && !window_kv_offsets.empty() ? window_kv_offsets[size_t(b)] : 0;
    }
    // Spec §3.7.2 addressing: column col of query row m of request b.
    bool mask_at(int64_t b, int64_t m, int64_t col) const {
        const int64_t S = P(b) + E(b), w = wko(b);
        return custom_mask[size_t(mask_indptr[size_t(b)] + m * (S + w) + w + col)] != 0;
    }
};

// Spec §3.7.2 visibility by position (the rules a chunk loop's bounds come from; the mask's
// bytes and the stage switches come on top). Prefix key j for row m: window only. Extend key
// n: the causal rule n <= m unless a custom mask is given (the mask replaces it, so under
// is_causal the keys above the diagonal are the mask's to open, not limited by the window),
// the window m - n <= W, and when not causal also n - m <= W.
inline bool prefix_visible(const ExtendProblem &p, int64_t P, int64_t m, int64_t j) {
    return j < P && (p.window <= 0 || (P + m) - j <= p.window);
}
inline bool extend_visible(const ExtendProblem &p, int64_t m, int64_t n) {
    if (p.causal && !p.has_mask() && n > m) return false;
    if (p.window > 0) {
        if (m - n > p.window) return false;
        if (!p.causal && n - m > p.window) return false;
    }
    return true;
}

// With every §3.7.2 rule: the stage switches, the custom mask's bytes, the window. (SGLang's
// Triton kernel, under is_causal with a mask, also stops its extend loop at a BLOCK_M-dependent
// point; livebound has no such cut-off: the mask alone decides.)
inline bool prefix_key_visible(const ExtendProblem &p, int64_t b, int64_t m, int64_t j) {
    if (p.skip_prefix) return false;
    if (p.has_mask() && !p.skip_prefix_custom_mask && !p.mask_at(b, m, j)) return false;
    return prefix_visible(p, p.P(b), m, j);
}
inline bool extend_key_visible(const ExtendProblem &p, int64_t b, int64_t m, int64_t n) {
    if (p.skip_extend) return false;
    if (p.has_mask() && !p.mask_at(b, m, p.P(b) + n)) return false;
    return extend_visible(p, m, n);
}

template <typename Real>
struct Result {
    std::vector<Real> o;    // [T, Hq, Lv]
    std::vector<Real> lse;  // [T, Hq]
};

// Softmax over the visible keys of one (row, head), in Real arithmetic. Output not rounded.
// round_p: the weights p (times v_scale for prefix keys) are rounded to the input dtype
// before they multiply V, as SGLang's Triton kernel and livebound's tensor-core kernels do
// (P is an mma operand); the denominator keeps them unrounded.
template <typename Real>
Result<Real> reference(const ExtendProblem &p, bool round_p = false) {
    Result<Real> r;
    r.o.assign(size_t(p.T * p.Hq * p.Lv), Real(0));
    r.lse.assign(size_t(p.T * p.Hq), -std::numeric_limits<Real>::infinity());
    const int64_t group = p.Hq / p.Hkv;
    const Real scale = p.sm_scale == 0 ? Real(1) / std::sqrt(Real(p.Lq)) : Real(p.sm_scale);
    std::vector<Real> s;
    std::vector<const uint16_t *> vrow;
    std::vector<Real> vmul;
    std::vector<bool> vcache;  // vrow[i] is a cache row (else an extend row)
    // Element d of a K or V row: cache rows decoded in the cache dtype, extend rows in the input dtype.
    auto value = [&](const uint16_t *row, int64_t d, bool cache) { return Real(cache ? p.cache_f(row[d]) : p.to_f(row[d])); };
    for (int64_t b = 0; b < p.B; b++) {
        const int64_t q0 = p.qo_indptr[b], E = p.E(b), k0 = p.kv_indptr[b], P = p.P(b);
        for (int64_t m = 0; m < E; m++) {
            for (int64_t h = 0; h < p.Hq; h++) {
                const int64_t g = h / group;
                const uint16_t *qr = &p.q[size_t(((q0 + m) * p.Hq + h) * p.Lq)];
                s.clear();
                vrow.clear();
                vmul.clear();
                vcache.clear();
                auto add = [&](const uint16_t *kr, const uint16_t *vr, bool cache, Real ks, Real vs) {
                    Real dot = 0;
                    for (int64_t d = 0; d < p.Lq; d++) dot += Real(p.to_f(qr[d])) * value(kr, d, cache);
                    Real x = dot * scale * ks;
                    if (p.logit_cap > 0) x = Real(p.logit_cap) * std::tanh(x / Real(p.logit_cap));
                    const int64_t L = p.xai_temperature_len;
                    if (L > 0 && P + m > L) x *= std::log2(Real(P + m)) / std::log2(Real(L));
                    s.push_back(x);
                    vrow.push_back(vr);
                    vmul.push_back(vs);
                    vcache.push_back(cache);
                };
                for (int64_t j = 0; j < P; j++) {
                    if (!prefix_key_visible(p, b, m, j)) continue;
                    const int64_t slot = p.kv_indices[size_t(k0 + j)];
                    add(&p.k_buf[size_t((slot * p.Hkv + g) * p.Lq)], &p.v_buf[size_t((slot * p.Hkv + g) * p.Lv)], true,
                        Real(p.k_scale), Real(p.v_scale));
                }
                for (int64_t n = 0; n < E; n++) {
                    if (!extend_key_visible(p, b, m, n)) continue;
                    add(&p.k_ext[size_t(((q0 + n) * p.Hkv + g) * p.Lq)], &p.v_ext[size_t(((q0 + n) * p.Hkv + g) * p.Lv)],
                        false, Real(1), Real(1));
                }
                const bool sink = !p.sinks.empty();
                Real M = -std::numeric_limits<Real>::infinity();
                for (Real x : s) M = std::max(M, x);
                if (sink) M = std::max(M, Real(p.sinks[size_t(h)]));
                Real den = 0;
                std::vector<Real> acc(size_t(p.Lv), Real(0));
                for (size_t i = 0; i < s.size(); i++) {
                    const Real e = std::exp(s[i] - M);
                    den += e;
                    if (round_p) {
                        const Real w = Real(p.to_f(p.from_f(float(e * vmul[i]))));
                        for (int64_t d = 0; d < p.Lv; d++) acc[size_t(d)] += w * value(vrow[i], d, vcache[i]);
                        continue;
                    }
                    for (int64_t d = 0; d < p.Lv; d++) acc[size_t(d)] += e * value(vrow[i], d, vcache[i]) * vmul[i];
                }
                if (sink) den += std::exp(Real(p.sinks[size_t(h)]) - M);
                const size_t row = size_t((q0 + m) * p.Hq + h);
                if (den > 0) {
                    for (int64_t d = 0; d < p.Lv; d++) r.o[row * size_t(p.Lv) + size_t(d)] = acc[size_t(d)] / den;
                    r.lse[row] = std::log(den) + M;
                }
            }
        }
    }
    return r;
}

inline Result<double> reference_fp64(const ExtendProblem &p) { return reference<double>(p); }

// Naive same-precision reference: float arithmetic, output rounded to the input dtype.
// round_p: P rounded to the input dtype before P V (the tensor-core kernels' precision).
inline Result<float> reference_naive_fp32(const ExtendProblem &p, bool round_p = false) {
    Result<float> r = reference<float>(p, round_p);
    for (float &x : r.o) x = p.to_f(p.from_f(x));
    return r;
}

// Chunks of stage 0 (prefix) / 1 (extend) with a visible element for a live row of tile qt.
inline int32_t ideal_chunk_count(const ExtendProblem &p, int64_t b, int stage, int64_t qt, int64_t BM, int64_t BN) {
    const int64_t E = p.E(b), P = p.P(b);
    const int64_t len = stage == 0 ? P : E;
    int32_t count = 0;
    for (int64_t c = 0; c * BN < len; c++) {
        bool any = false;
        for (int64_t m = qt * BM; m < std::min((qt + 1) * BM, E) && !any; m++) {
            for (int64_t key = c * BN; key < std::min((c + 1) * BN, len) && !any; key++) {
                any = stage == 0 ? prefix_visible(p, P, m, key) : extend_visible(p, m, key);
            }
        }
        count += any;
    }
    return count;
}

// ============================ K8 (spec §3.8) ============================

// One K8 problem: every key (prefix and extend) already in the cache; request b's unified
// list kv_indices[kv_indptr[b] .. kv_indptr[b+1]) of N_b = P_b + E_b slots, the P_b =
// prefix_lens[b] prefix slots first.
struct UnifiedProblem {
    bool bf16 = true;
    int64_t B = 0, T = 0, Hq = 0, Hkv = 0, Lq = 0, Lv = 0, num_slots = 0;
    std::vector<uint16_t> q;                  // [T, Hq, Lq]
    std::vector<uint16_t> k_buf, v_buf;       // [num_slots, Hkv, Lq], [num_slots, Hkv, Lv]
    bool fp8_cache = false;                   // k_buf / v_buf hold e4m3 bytes (as ExtendProblem)
    std::vector<int32_t> qo_indptr, kv_indptr;  // [B + 1]
    std::vector<int32_t> prefix_lens;         // [B]
    std::vector<int64_t> kv_indices;          // [sum N]
    std::vector<float> sinks;                 // [Hq] or empty
    bool causal = true;
    int32_t window = -1;
    float sm_scale = 0, logit_cap = 0, k_scale = 1, v_scale = 1;
    // Custom mask (empty: none): request b's row-major E x N block at mask_indptr[b].
    std::vector<uint8_t> custom_mask;
    std::vector<int64_t> mask_indptr;         // [B + 1]
    int32_t xai_temperature_len = -1;

    float to_f(uint16_t h) const { return bf16 ? bf16_to_float(h) : fp16_to_float(h); }
    uint16_t from_f(float f) const { return bf16 ? float_to_bf16(f) : float_to_fp16(f); }
    float cache_f(uint16_t h) const { return fp8_cache ? e4m3_to_float(uint8_t(h)) : to_f(h); }
    uint16_t cache_from_f(float f) const { return fp8_cache ? uint16_t(float_to_e4m3(f)) : from_f(f); }
    int64_t E(int64_t b) const { return qo_indptr[size_t(b + 1)] - qo_indptr[size_t(b)]; }
    int64_t N(int64_t b) const { return kv_indptr[size_t(b + 1)] - kv_indptr[size_t(b)]; }
    int64_t P(int64_t b) const { return prefix_lens[size_t(b)]; }
    bool has_mask() const { return !custom_mask.empty(); }
    bool mask_at(int64_t b, int64_t m, int64_t n) const {
        return custom_mask[size_t(mask_indptr[size_t(b)] + m * N(b) + n)] != 0;
    }
};

// Spec §3.8 visibility of list key n for query row m (position P + m) of request b, by
// position (what the chunk loop's bounds come from): causal n <= P + m unless a custom mask
// is given (it replaces the causal rule, as in K7); W > 0: (P + m) - n <= W, and when not
// causal also n - (P + m) <= W.
inline bool unified_position_visible(const UnifiedProblem &p, int64_t b, int64_t m, int64_t n) {
    const int64_t qpos = p.P(b) + m;
    if (p.causal && !p.has_mask() && n > qpos) return false;
    if (p.window > 0) {
        if (qpos - n > p.window) return false;
        if (!p.causal && n - qpos > p.window) return false;
    }
    return true;
}
// With the custom mask's bytes: mask(m, n) != 0.
inline bool unified_visible(const UnifiedProblem &p, int64_t b, int64_t m, int64_t n) {
    if (p.has_mask() && !p.mask_at(b, m, n)) return false;
    return unified_position_visible(p, b, m, n);
}

// Softmax over the visible keys of one (row, head), in Real arithmetic; o not rounded, lse
// left empty (K8 has none). A row that sees nothing and has no sink: 0, as K7 (livebound's
// choice; SGLang's unified kernel divides 0 by 0 there and returns NaN).
template <typename Real>
Result<Real> reference_unified(const UnifiedProblem &p, bool round_p = false) {
    Result<Real> r;
    r.o.assign(size_t(p.T * p.Hq * p.Lv), Real(0));
    const int64_t group = p.Hq / p.Hkv;
    const Real scale = p.sm_scale == 0 ? Real(1) / std::sqrt(Real(p.Lq)) : Real(p.sm_scale);
    const Real qk_scale = scale * Real(p.k_scale);
    std::vector<Real> s;
    std::vector<const uint16_t *> vrow;
    std::vector<Real> acc(size_t(p.Lv));
    for (int64_t b = 0; b < p.B; b++) {
        const int64_t q0 = p.qo_indptr[size_t(b)], E = p.E(b), k0 = p.kv_indptr[size_t(b)], N = p.N(b), P = p.P(b);
        for (int64_t m = 0; m < E; m++) {
            const int64_t qpos = P + m;
            const int64_t L = p.xai_temperature_len;
            const Real xai = L > 0 && qpos >= L ? Real(L) / Real(qpos + 1) : Real(1);
            for (int64_t h = 0; h < p.Hq; h++) {
                const int64_t g = h / group;
                const uint16_t *qr = &p.q[size_t(((q0 + m) * p.Hq + h) * p.Lq)];
                s.clear();
                vrow.clear();
                for (int64_t n = 0; n < N; n++) {
                    if (!unified_visible(p, b, m, n)) continue;
                    const int64_t slot = p.kv_indices[size_t(k0 + n)];
                    const uint16_t *kr = &p.k_buf[size_t((slot * p.Hkv + g) * p.Lq)];
                    Real dot = 0;
                    for (int64_t d = 0; d < p.Lq; d++) dot += Real(p.to_f(qr[d])) * Real(p.cache_f(kr[d]));
                    Real x = dot * qk_scale;
                    if (p.logit_cap > 0) x = Real(p.logit_cap) * std::tanh(x / Real(p.logit_cap));
                    x *= xai;
                    s.push_back(x);
                    vrow.push_back(&p.v_buf[size_t((slot * p.Hkv + g) * p.Lv)]);
                }
                const bool sink = !p.sinks.empty();
                Real M = -std::numeric_limits<Real>::infinity();
                for (Real x : s) M = std::max(M, x);
                if (sink) M = std::max(M, Real(p.sinks[size_t(h)]));
                Real den = 0;
                std::fill(acc.begin(), acc.end(), Real(0));
                for (size_t i = 0; i < s.size(); i++) {
                    const Real e = std::exp(s[i] - M);
                    den += e;
                    const Real w = round_p ? Real(p.to_f(p.from_f(float(e)))) : e;  // (see reference())
                    for (int64_t d = 0; d < p.Lv; d++) acc[size_t(d)] += w * Real(p.cache_f(vrow[i][d]));
                }
                if (sink) den += std::exp(Real(p.sinks[size_t(h)]) - M);
                Real *o = &r.o[size_t((q0 + m) * p.Hq + h) * size_t(p.Lv)];
                for (int64_t d = 0; d < p.Lv; d++) {
                    o[d] = den > 0 ? acc[size_t(d)] / den * Real(p.v_scale) : Real(0);
                }
            }
        }
    }
    return r;
}

inline Result<double> reference_unified_fp64(const UnifiedProblem &p) { return reference_unified<double>(p); }

// Naive same-precision reference: float arithmetic, output rounded to the input dtype;
// round_p as reference_naive_fp32.
inline Result<float> reference_unified_naive_fp32(const UnifiedProblem &p, bool round_p = false) {
    Result<float> r = reference_unified<float>(p, round_p);
    for (float &x : r.o) x = p.to_f(p.from_f(x));
    return r;
}

// Chunks of BN keys of request b's unified list holding a key visible by position
// (unified_position_visible: the mask's bytes are not chunk-level) for a live row (m < E_b)
// of query tile qt; 0 for a dead tile.
inline int32_t ideal_unified_chunk_count(const UnifiedProblem &p, int64_t b, int64_t qt, int64_t BM, int64_t BN) {
    const int64_t E = p.E(b), N = p.N(b);
    int32_t count = 0;
    for (int64_t c = 0; c * BN < N; c++) {
        bool any = false;
        for (int64_t m = qt * BM; m < std::min((qt + 1) * BM, E) && !any; m++) {
            for (int64_t n = c * BN; n < std::min((c + 1) * BN, N) && !any; n++) any = unified_position_visible(p, b, m, n);
        }
        count += any;
    }
    return count;
}

// The same problem with a 16-bit cache holding an fp8 problem's decoded cache values (every
// e4m3 value is exact in bf16 and fp16; throws std::logic_error if one is not). K7 or K8.
template <typename Problem>
Problem with_16bit_cache(const Problem &p8) {
    Problem p16 = p8;
    p16.fp8_cache = false;
    for (auto *cache : {&p16.k_buf, &p16.v_buf}) {
        for (uint16_t &x : *cache) {
            const float v = e4m3_to_float(uint8_t(x));
            x = p16.from_f(v);
            if (!(p16.to_f(x) == v || (std::isnan(v) && std::isnan(p16.to_f(x))))) {
                throw std::logic_error("with_16bit_cache: an e4m3 value is not exact in the input dtype");
            }
        }
    }
    return p16;
}

// The K8 problem equivalent to K7 problem `e` (spec §3.8: "both prefix and extend K/V must
// already be in the cache"): k_buf / v_buf get the T extend tokens' K / V rows as new slots
// num_slots + t; request b's unified list is its prefix slots, then its extend slots
// num_slots + q0_b + n; prefix_lens[b] = P_b. A K7 custom mask becomes the E x N mask of the
// keys K7 lets the mask decide (prefix columns all ones under skip_prefix_custom_mask;
// window_kv_offsets dropped); in both kernels the mask replaces the causal rule, so the two
// agree on any mask, keys above the diagonal included. skip_prefix /
// skip_extend have no K8 counterpart (not converted). Equivalent outputs need
// k_scale = v_scale = 1 (K7 scales the prefix only) and no xai temperature (different
// formulas). With `shuffle_seed` != 0 the slots of the whole cache are permuted at random
// (the unified list follows), so the extend slots are not contiguous either.
// Needs a 16-bit cache (e.fp8_cache false; std::invalid_argument otherwise): the extend K/V
// that become cache slots are 16-bit values, which an fp8 cache could not hold unrounded,
// so the K8 problem would no longer be K7's. (Tests build fp8 K8 problems by rounding a
// 16-bit unified cache to e4m3: unified_cases.h.)
inline UnifiedProblem unified_from_extend(const ExtendProblem &e, uint32_t shuffle_seed = 0) {
    if (e.fp8_cache) {
        throw std::invalid_argument("unified_from_extend: the K7 problem has an fp8 cache (needs a 16-bit one)");
    }
    UnifiedProblem u;
    u.bf16 = e.bf16;
    u.B = e.B;
    u.T = e.T;
    u.Hq = e.Hq;
    u.Hkv = e.Hkv;
    u.Lq = e.Lq;
    u.Lv = e.Lv;
    u.q = e.q;
    u.sinks = e.sinks;
    u.causal = e.causal;
    u.window = e.window;
    u.sm_scale = e.sm_scale;
    u.logit_cap = e.logit_cap;
    u.k_scale = e.k_scale;
    u.v_scale = e.v_scale;
    u.xai_temperature_len = e.xai_temperature_len;
    const int64_t kl = e.Hkv * e.Lq, vl = e.Hkv * e.Lv;
    const int64_t base = e.num_slots;
    u.num_slots = base + e.T;
    u.k_buf = e.k_buf;
    u.v_buf = e.v_buf;
    u.k_buf.insert(u.k_buf.end(), e.k_ext.begin(), e.k_ext.begin() + e.T * kl);
    u.v_buf.insert(u.v_buf.end(), e.v_ext.begin(), e.v_ext.begin() + e.T * vl);
    u.qo_indptr = e.qo_indptr;
    u.kv_indptr.assign(1, 0);
    for (int64_t b = 0; b < e.B; b++) {
        const int64_t P = e.P(b), E = e.E(b), k0 = e.kv_indptr[size_t(b)], q0 = e.qo_indptr[size_t(b)];
        for (int64_t j = 0; j < P; j++) u.kv_indices.push_back(e.kv_indices[size_t(k0 + j)]);
        for (int64_t n = 0; n < E; n++) u.kv_indices.push_back(base + q0 + n);
        u.kv_indptr.push_back(int32_t(u.kv_indices.size()));
        u.prefix_lens.push_back(int32_t(P));
    }
    if (e.has_mask()) {
        u.custom_mask.assign(1, 1);  // one unused leading byte
        for (int64_t b = 0; b < e.B; b++) {
            u.mask_indptr.push_back(int64_t(u.custom_mask.size()));
            const int64_t P = e.P(b), E = e.E(b);
            for (int64_t m = 0; m < E; m++) {
                for (int64_t n = 0; n < P + E; n++) {
                    const bool keep = n < P && e.skip_prefix_custom_mask ? true : e.mask_at(b, m, n);
                    u.custom_mask.push_back(uint8_t(keep));
                }
            }
        }
        u.mask_indptr.push_back(int64_t(u.custom_mask.size()));
    }
    if (shuffle_seed != 0) {
        std::vector<int64_t> to(size_t(u.num_slots));  // old slot s -> new slot to[s]
        std::iota(to.begin(), to.end(), 0);
        std::mt19937 rng(shuffle_seed);
        std::shuffle(to.begin(), to.end(), rng);
        std::vector<uint16_t> kb(u.k_buf.size()), vb(u.v_buf.size());
        for (int64_t s = 0; s < u.num_slots; s++) {
            std::copy_n(&u.k_buf[size_t(s * kl)], kl, &kb[size_t(to[size_t(s)] * kl)]);
            std::copy_n(&u.v_buf[size_t(s * vl)], vl, &vb[size_t(to[size_t(s)] * vl)]);
        }
        u.k_buf.swap(kb);
        u.v_buf.swap(vb);
        for (int64_t &x : u.kv_indices) x = to[size_t(x)];
    }
    return u;
}

}  // namespace livebound::reference
