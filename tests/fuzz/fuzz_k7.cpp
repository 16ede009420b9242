// K7 (lb_extend_attention_fwd) on the CPU, tiny shapes: dtype (bf16 / fp16, rarely float32),
// KV cache dtype (16-bit or fp8 e4m3fn), head dims (fuzz_attention.h), heads (GQA 1:1 / 2:1,
// rarely Hq not a multiple of Hkv), requests' extend and prefix lengths, lead / tail rows
// outside [qo_indptr[0], qo_indptr[B]), index dtypes (qo_indptr, kv_indptr, kv_indices,
// window_kv_offsets: int32 / int64 each, strides 1 / 2), the slots (sometimes out of range),
// broken indptrs, max_len_extend, causal, window, sm_scale, logit_cap, k/v scales (garbage:
// NaN, inf, negative), sinks, lse_extend (given or not, row-major, transposed or padded),
// custom mask (with window_kv_offsets, skip_prefix_custom_mask), xai temperature, the stage
// switches, input layouts (padded rows, broadcast heads, a strided last dimension: refused),
// o's row padding and the variant from the bytes. Accepted calls against
// reference_fp64 / reference_naive_fp32 (tests/reference/extend_attention_reference.h):
// o within one ulp + 2x the naive error + 1e-5 per element, lse within 2x the naive error +
// 1e-5 (+1e-6 relative), -inf where a row sees nothing; rows outside
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

int fuzz_k7(const uint8_t *data, size_t size) {
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
    std::vector<int64_t> E(static_cast<size_t>(B)), P(static_cast<size_t>(B));
    int64_t sumE = 0, sumP = 0, maxE = 0;
    for (int64_t b = 0; b < B; b++) {
        E[size_t(b)] = in.u8() % 5;
        P[size_t(b)] = in.u8() % 6;
        sumE += E[size_t(b)];
        sumP += P[size_t(b)];
        maxE = std::max(maxE, E[size_t(b)]);
    }
    const int64_t lead = in.u8() % 2, tail = in.u8() % 2, kv0 = in.u8() % 2;
    const int64_t T = lead + sumE + tail;
    std::vector<int64_t> qo(static_cast<size_t>(B + 1)), kvp(static_cast<size_t>(B + 1));
    qo[0] = lead;
    kvp[0] = kv0;
    for (int64_t b = 0; b < B; b++) {
        qo[size_t(b + 1)] = qo[size_t(b)] + E[size_t(b)];
        kvp[size_t(b + 1)] = kvp[size_t(b)] + P[size_t(b)];
    }
    const int64_t n_indices = kvp[size_t(B)] + (in.one_in(24) ? -1 : in.u8() % 2);
    if (in.one_in(16)) {  // a broken indptr entry
        auto &v = in.u8() & 1 ? qo : kvp;
        const size_t at = size_t(in.u8() % (B + 1));
        v[at] = in.value(v[at] - 2, v[at] + 2);
    }
    const int64_t num_slots = sumP == 0 && in.one_in(4) ? 0 : sumP + 1 + in.u8() % 3;
    const uint8_t mle = in.u8();  // (never a huge valid query-tile grid: that would only be slow)
    const int64_t max_len_extend = mle < 8 ? maxE - 1 : mle < 12 ? (mle % 2 ? -1 : (int64_t{1} << 28) + 1) : maxE + mle % 3;
    const bool causal = in.u8() & 1;
    const int32_t window = int32_t(in.value(-1, 6));
    const float sm_scale = pick(in, {0, 0, 0.125f, 0.3f}, {-1.0f, kNaN, kInf});
    const float logit_cap = pick(in, {0, 0, 0, 5.0f, 1.5f}, {-1.0f, kNaN, kInf});
    const float k_scale = pick(in, {1, 1, 0.5f, 1.7f, -0.75f}, {kNaN, kInf});
    const float v_scale = pick(in, {1, 1, 0.5f, 1.7f, -0.75f}, {kNaN, -kInf});
    const uint8_t sink_mode = in.u8() % 24;  // 0-7 given, 8 wrong extent, 9 strided, else absent
    const uint8_t lse_mode = in.u8() % 6;    // 0-1 absent, 2-3 row-major, 4 transposed, 5 padded rows
    const bool mask = in.one_in(4);
    const uint8_t mask_density = in.u8();
    const bool wko_given = in.u8() & 1;
    const uint8_t index_widths = in.u8();
    const bool wko64 = index_widths & 1, mask_indptr64 = !(index_widths & 2);
    const bool skip_prefix_mask = in.u8() & 1;
    const int32_t xai = int32_t(pick(in, {-1, -1, -1, 0, 2, 3, 5}, {1, 1}));
    const bool skip_prefix = in.one_in(8), skip_extend = in.one_in(8);
    const bool qo64 = in.u8() & 1, kvp64 = in.u8() & 1, idx64 = in.u8() & 1;
    const int64_t qo_stride = stride_1d(in), kvp_stride = stride_1d(in), idx_stride = stride_1d(in);
    const int lq_layout = input_layout(in), lk_layout = input_layout(in), lv_layout = input_layout(in);
    const int lkb_layout = input_layout(in), lvb_layout = input_layout(in);
    const bool o_padded = in.one_in(4);
    const lb_variant variant = in.variant();
    Bulk bulk(in);
    std::vector<int64_t> kv_indices(size_t(std::max<int64_t>(n_indices, 0)));
    for (auto &s : kv_indices) s = bulk.value(0, std::max<int64_t>(num_slots, 1) - 1);
    std::vector<int64_t> wko(static_cast<size_t>(B));
    for (auto &w : wko) w = bulk.value(0, 3);

    // Tensors.
    Values val(in, bf16);
    const lb_dtype edt = dt == LB_FLOAT32 ? LB_FLOAT32 : dt;  // (float32: refused; storage stays 16-bit)
    Tensor3<uint16_t> q, k, v, kb16, vb16;
    Tensor3<uint8_t> kb8, vb8;
    q.make(edt, T, Hq, Lq, lq_layout, [&] { return val.v16(); });
    k.make(edt, T, Hkv, Lq, lk_layout, [&] { return val.v16(); });
    v.make(edt, T, Hkv, Lv, lv_layout, [&] { return val.v16(); });
    if (fp8) {
        kb8.make(cache_dt, num_slots, Hkv, Lq, lkb_layout, [&] { return uint8_t(val.v8()); });
        vb8.make(cache_dt, num_slots, Hkv, Lv, lvb_layout, [&] { return uint8_t(val.v8()); });
    } else {
        kb16.make(edt, num_slots, Hkv, Lq, lkb_layout, [&] { return val.v16(); });
        vb16.make(edt, num_slots, Hkv, Lv, lvb_layout, [&] { return val.v16(); });
    }
    std::vector<float> sinks(static_cast<size_t>(Hq + 1) * 2);
    for (auto &s : sinks) s = float(int(bulk.raw() % 33) - 16) / 8.0f;
    // Custom mask: request b's E x (wko + P + E) block at mask_indptr[b], a byte between blocks.
    std::vector<uint8_t> mask_bytes(1, 1);
    std::vector<int64_t> mask_indptr;
    const bool use_wko = mask && window > 0 && wko_given;
    for (int64_t b = 0; b < B; b++) {
        mask_indptr.push_back(int64_t(mask_bytes.size()));
        const int64_t w = use_wko ? std::clamp<int64_t>(wko[size_t(b)], 0, 3) : 0;  // (garbage: a short block)
        const int64_t n = E[size_t(b)] * (w + P[size_t(b)] + E[size_t(b)]);
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
    Output<float> lse;
    if (lse_mode == 4) {
        lse.make_2d(LB_FLOAT32, T, Hq, 1, std::max<int64_t>(T, 1), kPoisonLse);
    } else {
        lse.make_2d(LB_FLOAT32, T, Hq, Hq + (lse_mode == 5 ? 3 : 0), 1, kPoisonLse);
    }
    OutO o;
    o.make(edt, T, Hq, Lv, o_padded);
    IndexTensor qo_t(qo, qo64, qo_stride), kvp_t(kvp, kvp64, kvp_stride), idx_t(kv_indices, idx64, idx_stride);
    IndexTensor wko_t(wko, wko64, 1), mi_t(mask_indptr, mask_indptr64, 1);

    lb_extend_attention_args a{};
    a.q_extend = q.view;
    a.k_extend = k.view;
    a.v_extend = v.view;
    a.o_extend = o.out.view;
    a.k_buffer = fp8 ? kb8.view : kb16.view;
    a.v_buffer = fp8 ? vb8.view : vb16.view;
    a.qo_indptr = qo_t.view;
    a.kv_indptr = kvp_t.view;
    a.kv_indices = idx_t.view;
    if (sink_mode <= 9) {
        a.sinks = lb_tensor{sinks.data(), LB_FLOAT32, 1, {Hq + (sink_mode == 8 ? 1 : 0)}, {sink_mode == 9 ? 2 : 1}};
    }
    if (lse_mode >= 2) a.lse_extend = lse.view;
    if (mask) {
        a.custom_mask = lb_tensor{mask_bytes.data(), LB_UINT8, 1, {mask_len}, {1}};
        a.mask_indptr = mi_t.view;
        if (wko_given) a.window_kv_offsets = wko_t.view;
    }
    a.max_len_extend = max_len_extend;
    a.is_causal = causal;
    a.sliding_window_size = window;
    a.sm_scale = sm_scale;
    a.logit_cap = logit_cap;
    a.k_scale = k_scale;
    a.v_scale = v_scale;
    a.skip_prefix_custom_mask = skip_prefix_mask;
    a.xai_temperature_len = xai;
    a.skip_prefix = skip_prefix;
    a.skip_extend = skip_extend;
    a.variant = variant;

    if (std::getenv("FUZZ_DEBUG")) {
        std::fprintf(stderr, "K7 dt %d fp8 %d Lq %lld Lv %lld Hq %lld Hkv %lld B %lld T %lld slots %lld causal %d W %d sm %g cap %g ks %g vs %g "
                     "sinks %d lse %d mask %d xai %d skip %d/%d layouts q%d k%d v%d kb%d vb%d o%d variant %d\n",
                     int(dt), fp8, (long long)Lq, (long long)Lv, (long long)Hq, (long long)Hkv, (long long)B, (long long)T,
                     (long long)num_slots, causal, window, sm_scale, logit_cap, k_scale, v_scale, sink_mode, lse_mode, mask, xai,
                     skip_prefix, skip_extend, lq_layout, lk_layout, lv_layout, lkb_layout, lvb_layout, o_padded, int(variant));
        std::fprintf(stderr, "  qo");
        for (auto x : qo) std::fprintf(stderr, " %lld", (long long)x);
        std::fprintf(stderr, " (i%d s%lld) kvp", qo64 ? 64 : 32, (long long)qo_stride);
        for (auto x : kvp) std::fprintf(stderr, " %lld", (long long)x);
        std::fprintf(stderr, " (i%d s%lld) idx", kvp64 ? 64 : 32, (long long)kvp_stride);
        for (auto x : kv_indices) std::fprintf(stderr, " %lld", (long long)x);
        std::fprintf(stderr, " (i%d s%lld) max_len %lld\n", idx64 ? 64 : 32, (long long)idx_stride, (long long)max_len_extend);
    }
    const lb_status status = lb_extend_attention_fwd(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(7, status, message, o.out.poisoned() && lse.poisoned());
        return 0;
    }
    g_accepted[6]++;

    // What the call accepted must be a problem the reference can read.
    const int64_t qB = qo[size_t(B)], q0 = qo[0];
    auto invalid = [&](const std::string &why) { fail("an accepted K7 call with invalid arguments", why); };
    if (q0 < 0 || qB > T || kvp[0] < 0 || kvp[size_t(B)] > int64_t(kv_indices.size())) invalid("indptr bounds");
    for (int64_t b = 0; b < B; b++) {
        if (qo[size_t(b + 1)] < qo[size_t(b)] || kvp[size_t(b + 1)] < kvp[size_t(b)]) invalid("decreasing indptr");
        if (qo[size_t(b + 1)] - qo[size_t(b)] > max_len_extend) invalid("max_len_extend");
    }
    for (int64_t i = kvp[0]; i < kvp[size_t(B)]; i++) {
        if (kv_indices[size_t(i)] < 0 || kv_indices[size_t(i)] >= num_slots) invalid("kv_indices[" + std::to_string(i) + "]");
    }
    livebound::reference::ExtendProblem p;
    p.bf16 = bf16;
    p.B = B;
    p.T = T;
    p.Hq = Hq;
    p.Hkv = Hkv;
    p.Lq = Lq;
    p.Lv = Lv;
    p.num_slots = num_slots;
    p.q = q.logical;
    p.k_ext = k.logical;
    p.v_ext = v.logical;
    p.fp8_cache = fp8;
    p.k_buf = fp8 ? kb8.wide() : kb16.logical;
    p.v_buf = fp8 ? vb8.wide() : vb16.logical;
    for (int64_t x : qo) p.qo_indptr.push_back(int32_t(x));
    for (int64_t x : kvp) p.kv_indptr.push_back(int32_t(x));
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
        p.custom_mask.assign(mask_bytes.begin(), mask_bytes.begin() + mask_len);
        p.mask_indptr = mask_indptr;
        if (use_wko) {
            for (int64_t w : wko) p.window_kv_offsets.push_back(int32_t(w));
        }
        for (int64_t b = 0; b < B; b++) {
            const int64_t e = p.E(b), s = e * (p.P(b) + e + p.wko(b));
            if (mask_indptr[size_t(b)] < 0 || (s > 0 && mask_indptr[size_t(b)] + s > mask_len)) invalid("mask block");
        }
        if (p.custom_mask.empty()) p.custom_mask.assign(1, 0);  // (has_mask() stays true)
    }
    p.skip_prefix_custom_mask = skip_prefix_mask;
    p.xai_temperature_len = xai;
    p.skip_prefix = skip_prefix;
    p.skip_extend = skip_extend;
    const auto r64 = livebound::reference::reference_fp64(p);
    const auto r32 = livebound::reference::reference_naive_fp32(p);
    o.check(p, q0, qB, r64.o, r32.o, "K7");
    if (lse_mode >= 2) {
        std::vector<size_t> at;
        for (int64_t r = q0; r < qB; r++) {
            for (int64_t h = 0; h < Hq; h++) at.push_back(size_t(r * Hq + h));
        }
        const double err_naive = max_abs_diff(r32.lse, r64.lse, at);
        for (int64_t r = q0; r < qB; r++) {
            for (int64_t h = 0; h < Hq; h++) {
                const double e = r64.lse[size_t(r * Hq + h)];
                const float got = lse.at2(r, h);
                lse.may2(r, h);
                const bool ok = std::isinf(e) ? got == float(e)
                                              : std::fabs(double(got) - e) <= 2 * err_naive + 1e-5 + 1e-6 * std::fabs(e);
                if (!ok) {
                    fail("lse differs from the fp64 reference", "row " + std::to_string(r) + ", head " + std::to_string(h) +
                                                                   ": got " + std::to_string(got) + ", exact " +
                                                                   std::to_string(e));
                }
            }
        }
        lse.verify("lse_extend");
    }
    return 0;
}

}  // namespace fuzz
