// K8 (lb_extend_attention_fwd_unified) on the CPU, tiny shapes: dtype, KV cache dtype
// (16-bit or fp8 e4m3fn), head dims, heads, requests' extend and prefix lengths (the unified
// key lists N_b = P_b + E_b, sometimes prefix_lens off by one), lead / tail rows, index
// dtypes and strides (qo_indptr, kv_indptr, kv_indices, prefix_lens), slots (sometimes out of
// range; num_slots 0 refused), broken indptrs, max_len_extend, causal, window, scales and
// cap (garbage too), sinks, custom mask (E x N per request), xai temperature, input layouts,
// o's row padding and the variant from the bytes. Accepted calls against
// reference_unified_fp64 / reference_unified_naive_fp32: o within one ulp + 2x the naive
// error + 1e-5 per element (0 where a row sees nothing and has no sink: livebound's choice,
// tests/extend_attention/test_extend_attention_unified_cpu.cpp), rows outside
// [qo_indptr[0], qo_indptr[B]) and row padding untouched.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_attention.h"
#include "fuzz_common.h"
#include "reference/extend_attention_reference.h"

namespace fuzz {

using namespace attention;

int fuzz_k8(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    const uint8_t dt_byte = in.u8();
    const bool bf16 = dt_byte & 1;
    const lb_dtype dt = dt_byte >= 252 ? LB_FLOAT32 : bf16 ? LB_BFLOAT16 : LB_FLOAT16;
    const bool fp8 = in.one_in(4);
    const lb_dtype cache_dt = fp8 ? LB_FLOAT8_E4M3FN : dt;
    int64_t Lq, Lv;
    head_dims(in, &Lq, &Lv);
    const int64_t Hkv = 1 + in.u8() % 2;
    const int64_t Hq = Hkv * (1 + in.u8() % 2) + (in.one_in(48) ? 1 : 0);
    const int64_t B = in.u8() % 4;
    std::vector<int64_t> E(static_cast<size_t>(B)), P(static_cast<size_t>(B)), prefix(static_cast<size_t>(B));
    int64_t sumE = 0, sumN = 0, maxE = 0;
    for (int64_t b = 0; b < B; b++) {
        E[size_t(b)] = in.u8() % 5;
        P[size_t(b)] = in.u8() % 6;
        sumE += E[size_t(b)];
        sumN += P[size_t(b)] + E[size_t(b)];
        maxE = std::max(maxE, E[size_t(b)]);
        prefix[size_t(b)] = in.one_in(24) ? in.value(P[size_t(b)] - 1, P[size_t(b)] + 1) : P[size_t(b)];
    }
    const int64_t lead = in.u8() % 2, tail = in.u8() % 2, kv0 = in.u8() % 2;
    const int64_t T = lead + sumE + tail;
    std::vector<int64_t> qo(static_cast<size_t>(B + 1)), kvp(static_cast<size_t>(B + 1));
    qo[0] = lead;
    kvp[0] = kv0;
    for (int64_t b = 0; b < B; b++) {
        qo[size_t(b + 1)] = qo[size_t(b)] + E[size_t(b)];
        kvp[size_t(b + 1)] = kvp[size_t(b)] + P[size_t(b)] + E[size_t(b)];
    }
    const int64_t n_indices = kvp[size_t(B)] + (in.one_in(24) ? -1 : in.u8() % 2);
    if (in.one_in(16)) {
        auto &v = in.u8() & 1 ? qo : kvp;
        const size_t at = size_t(in.u8() % (B + 1));
        v[at] = in.value(v[at] - 2, v[at] + 2);
    }
    const int64_t num_slots = in.one_in(32) ? 0 : sumN + 1 + in.u8() % 3;
    const uint8_t mle = in.u8();  // (never a huge valid query-tile grid: that would only be slow)
    const int64_t max_len_extend = mle < 8 ? maxE - 1 : mle < 12 ? (mle % 2 ? -1 : (int64_t{1} << 28) + 1) : maxE + mle % 3;
    const bool causal = in.u8() & 1;
    const int32_t window = int32_t(in.value(-1, 6));
    const float sm_scale = pick(in, {0, 0, 0.125f, 0.3f}, {-1.0f, kNaN, kInf});
    const float logit_cap = pick(in, {0, 0, 0, 5.0f, 1.5f}, {-1.0f, kNaN, kInf});
    const float k_scale = pick(in, {1, 1, 0.5f, 1.7f, -0.75f}, {kNaN, kInf});
    const float v_scale = pick(in, {1, 1, 0.5f, 1.7f, -0.75f}, {kNaN, -kInf});
    const uint8_t sink_mode = in.u8() % 24;  // 0-7 given, 8 wrong extent, 9 strided, else absent
    const bool mask = in.one_in(4);
    const uint8_t mask_density = in.u8();
    const int32_t xai = int32_t(pick(in, {-1, -1, -1, 0, 2, 3, 5}, {1, 1}));
    const bool qo64 = in.u8() & 1, kvp64 = in.u8() & 1, idx64 = in.u8() & 1;
    const uint8_t prefix_widths = in.u8();
    const bool pl64 = prefix_widths & 1, mask_indptr64 = !(prefix_widths & 2);
    const int64_t qo_stride = stride_1d(in), kvp_stride = stride_1d(in), idx_stride = stride_1d(in);
    const int64_t pl_stride = stride_1d(in);
    const int lq_layout = input_layout(in), lkb_layout = input_layout(in), lvb_layout = input_layout(in);
    const bool o_padded = in.one_in(4);
    const lb_variant variant = in.variant();
    Bulk bulk(in);
    std::vector<int64_t> kv_indices(size_t(std::max<int64_t>(n_indices, 0)));
    for (auto &s : kv_indices) s = bulk.value(0, std::max<int64_t>(num_slots, 1) - 1);

    Values val(in, bf16);
    Tensor3<uint16_t> q, kb16, vb16;
    Tensor3<uint8_t> kb8, vb8;
    q.make(dt, T, Hq, Lq, lq_layout, [&] { return val.v16(); });
    if (fp8) {
        kb8.make(cache_dt, num_slots, Hkv, Lq, lkb_layout, [&] { return uint8_t(val.v8()); });
        vb8.make(cache_dt, num_slots, Hkv, Lv, lvb_layout, [&] { return uint8_t(val.v8()); });
    } else {
        kb16.make(dt, num_slots, Hkv, Lq, lkb_layout, [&] { return val.v16(); });
        vb16.make(dt, num_slots, Hkv, Lv, lvb_layout, [&] { return val.v16(); });
    }
    std::vector<float> sinks(static_cast<size_t>(Hq + 1) * 2);
    for (auto &s : sinks) s = float(int(bulk.raw() % 33) - 16) / 8.0f;
    std::vector<uint8_t> mask_bytes(1, 1);
    std::vector<int64_t> mask_indptr;
    for (int64_t b = 0; b < B; b++) {
        mask_indptr.push_back(int64_t(mask_bytes.size()));
        const int64_t n = E[size_t(b)] * (P[size_t(b)] + E[size_t(b)]);
        for (int64_t i = 0; i < n; i++) {
            const uint32_t r = bulk.raw();
            mask_bytes.push_back(r % 256 < mask_density ? uint8_t(r % 16 == 0 ? 1 + (r >> 8) % 255 : 1) : 0);
        }
        mask_bytes.push_back(1);
    }
    mask_indptr.push_back(int64_t(mask_bytes.size()));
    if (mask && in.one_in(16)) {
        const size_t at = size_t(in.u8() % (B + 1));
        mask_indptr[at] = in.value(mask_indptr[at] - 3, mask_indptr[at] + 3);
    }
    const int64_t mask_len = int64_t(mask_bytes.size()) - (mask && in.one_in(16) ? 2 : 0);
    OutO o;
    o.make(dt, T, Hq, Lv, o_padded);
    IndexTensor qo_t(qo, qo64, qo_stride), kvp_t(kvp, kvp64, kvp_stride), idx_t(kv_indices, idx64, idx_stride);
    IndexTensor pl_t(prefix, pl64, pl_stride), mi_t(mask_indptr, mask_indptr64, 1);

    lb_extend_attention_unified_args a{};
    a.q = q.view;
    a.o = o.out.view;
    a.k_buffer = fp8 ? kb8.view : kb16.view;
    a.v_buffer = fp8 ? vb8.view : vb16.view;
    a.qo_indptr = qo_t.view;
    a.kv_indptr = kvp_t.view;
    a.kv_indices = idx_t.view;
    a.prefix_lens = pl_t.view;
    if (sink_mode <= 9) {
        a.sinks = lb_tensor{sinks.data(), LB_FLOAT32, 1, {Hq + (sink_mode == 8 ? 1 : 0)}, {sink_mode == 9 ? 2 : 1}};
    }
    if (mask) {
        a.custom_mask = lb_tensor{mask_bytes.data(), LB_UINT8, 1, {mask_len}, {1}};
        a.mask_indptr = mi_t.view;
    }
    a.max_len_extend = max_len_extend;
    a.is_causal = causal;
    a.sliding_window_size = window;
    a.sm_scale = sm_scale;
    a.logit_cap = logit_cap;
    a.k_scale = k_scale;
    a.v_scale = v_scale;
    a.xai_temperature_len = xai;
    a.variant = variant;

    if (std::getenv("FUZZ_DEBUG")) {
        std::fprintf(stderr, "K8 dt %d fp8 %d Lq %lld Lv %lld Hq %lld Hkv %lld B %lld T %lld slots %lld causal %d W %d sm %g cap %g ks %g vs %g "
                     "sinks %d mask %d xai %d layouts q%d kb%d vb%d o%d variant %d\n",
                     int(dt), fp8, (long long)Lq, (long long)Lv, (long long)Hq, (long long)Hkv, (long long)B, (long long)T,
                     (long long)num_slots, causal, window, sm_scale, logit_cap, k_scale, v_scale, sink_mode, mask, xai,
                     lq_layout, lkb_layout, lvb_layout, o_padded, int(variant));
    }
    const lb_status status = lb_extend_attention_fwd_unified(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(8, status, message, o.out.poisoned());
        return 0;
    }
    g_accepted[7]++;

    const int64_t qB = qo[size_t(B)], q0 = qo[0];
    auto invalid = [&](const std::string &why) { fail("an accepted K8 call with invalid arguments", why); };
    if (q0 < 0 || qB > T || kvp[0] < 0 || kvp[size_t(B)] > int64_t(kv_indices.size())) invalid("indptr bounds");
    for (int64_t b = 0; b < B; b++) {
        const int64_t e = qo[size_t(b + 1)] - qo[size_t(b)], n = kvp[size_t(b + 1)] - kvp[size_t(b)];
        if (e < 0 || n < 0) invalid("decreasing indptr");
        if (e > max_len_extend) invalid("max_len_extend");
        if (prefix[size_t(b)] < 0 || prefix[size_t(b)] + e != n) invalid("prefix_lens[" + std::to_string(b) + "]");
        if (mask && e * n > 0 && (mask_indptr[size_t(b)] < 0 || mask_indptr[size_t(b)] + e * n > mask_len)) {
            invalid("mask block");
        }
    }
    for (int64_t i = kvp[0]; i < kvp[size_t(B)]; i++) {
        if (kv_indices[size_t(i)] < 0 || kv_indices[size_t(i)] >= num_slots) invalid("kv_indices[" + std::to_string(i) + "]");
    }
    livebound::reference::UnifiedProblem p;
    p.bf16 = bf16;
    p.B = B;
    p.T = T;
    p.Hq = Hq;
    p.Hkv = Hkv;
    p.Lq = Lq;
    p.Lv = Lv;
    p.num_slots = num_slots;
    p.q = q.logical;
    p.fp8_cache = fp8;
    p.k_buf = fp8 ? kb8.wide() : kb16.logical;
    p.v_buf = fp8 ? vb8.wide() : vb16.logical;
    for (int64_t x : qo) p.qo_indptr.push_back(int32_t(x));
    for (int64_t x : kvp) p.kv_indptr.push_back(int32_t(x));
    for (int64_t x : prefix) p.prefix_lens.push_back(int32_t(x));
    p.kv_indices = kv_indices;
    if (sink_mode <= 7) p.sinks.assign(sinks.begin(), sinks.begin() + Hq);
    if (sink_mode == 9) {  // (stride 2: refused unless Hq == 1)
        for (int64_t h = 0; h < Hq; h++) p.sinks.push_back(sinks[size_t(2 * h)]);
    }
    p.causal = causal;
    p.window = window;
    p.sm_scale = sm_scale;
    p.logit_cap = logit_cap;
    p.k_scale = k_scale;
    p.v_scale = v_scale;
    if (mask) {
        p.custom_mask.assign(mask_bytes.begin(), mask_bytes.begin() + std::max<int64_t>(mask_len, 0));
        if (p.custom_mask.empty()) p.custom_mask.assign(1, 0);  // (has_mask() stays true)
        p.mask_indptr = mask_indptr;
    }
    p.xai_temperature_len = xai;
    const auto r64 = livebound::reference::reference_unified_fp64(p);
    const auto r32 = livebound::reference::reference_unified_naive_fp32(p);
    o.check(p, q0, qB, r64.o, r32.o, "K8");
    return 0;
}

}  // namespace fuzz
