// K7 test cases (spec §4.4 / §4.5 scaled down for CPU time): uneven batches (one long and
// several short requests), prefix 0 and non-zero, E not a multiple of BM, GQA 1/4/8,
// windows {-1, 0, small, >= E}, causal and not, logit cap, sinks, scales, empty rows, fp8
// (e4m3fn) KV caches, int32 / int64 index tensors.
// Data as SGLang's builder: values normal(0.1, 0.5) in the input dtype (an fp8 cache: the
// same draws rounded to e4m3); each request's prefix at its own slots (contiguous or
// shuffled), fixed seeds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "livebound/livebound.h"
#include "reference/extend_attention_reference.h"

namespace livebound::testing {

using reference::ExtendProblem;

struct ExtendCase {
    std::string name;
    uint32_t seed = 1;
    bool bf16 = true;
    int64_t Hq = 8, Hkv = 2, Lq = 128, Lv = 128;
    std::vector<int64_t> E, P;   // per request
    bool causal = true;
    int32_t window = -1;
    float sm_scale = 0, logit_cap = 0, k_scale = 1, v_scale = 1;
    bool sinks = false;
    bool shuffle_slots = true;
    bool index64 = true;         // kv_indices int64 (else int32); the other index tensors: indptr64
    int64_t extra_max_len = 0;   // max_len_extend = max(E) + this
    // §3.7.2 extras: a random custom mask (0 above the diagonal when causal, keep
    // probability mask_density), window_kv_offsets (random in [0, 5]), the stage switches.
    bool custom_mask = false;
    float mask_density = 0.7f;
    // Image spans (Gemma 4's vision tokens): with custom_mask, the mask is the model's instead
    // of a random one: key position <= query position, or both in one span, so under is_causal
    // it opens keys above the diagonal. Spans are {request, first position, length}, positions
    // 0 .. P + E - 1 of the request (prefix key j at j, extend token n at P + n): a span may
    // start in the cached prefix.
    struct Span {
        int64_t b, start, length;
    };
    std::vector<Span> spans;
    bool mask_indptr32 = false;  // mask_indptr passed as int32 (else int64)
    bool skip_prefix_custom_mask = false;
    bool window_kv_offsets = false;
    int32_t xai_temperature_len = -1;
    bool skip_prefix = false, skip_extend = false;
    bool indptr64 = false;   // qo_indptr, kv_indptr, window_kv_offsets passed as int64 (see index64)
    // k_buffer / v_buffer in float8 e4m3fn (LB_FLOAT8_E4M3FN), the extend K/V and q in the
    // input dtype; k_scale / v_scale as for a 16-bit cache.
    bool fp8_cache = false;
};

inline std::ostream &operator<<(std::ostream &os, const ExtendCase &c) {
    os << c.name << " seed=" << c.seed << (c.bf16 ? " bf16" : " fp16") << " Hq=" << c.Hq << " Hkv=" << c.Hkv
       << " Lq=" << c.Lq << " Lv=" << c.Lv << " causal=" << c.causal << " W=" << c.window << " cap=" << c.logit_cap
       << " sinks=" << c.sinks << " sm=" << c.sm_scale << " ks=" << c.k_scale << " vs=" << c.v_scale << " E={";
    for (auto e : c.E) os << e << ",";
    os << "} P={";
    for (auto p : c.P) os << p << ",";
    os << "} spans={";
    for (const auto &sp : c.spans) os << "b" << sp.b << ":" << sp.start << "+" << sp.length << ",";
    return os << "} mask_indptr i" << (c.mask_indptr32 ? 32 : 64) << " kv_indices i" << (c.index64 ? 64 : 32)
              << " indptr i" << (c.indptr64 ? 64 : 32)
              << (c.fp8_cache ? " cache e4m3" : " cache 16-bit") << (c.shuffle_slots ? " shuffled" : " contiguous")
              << " mask=" << c.custom_mask << "/" << c.mask_density << " skip_prefix_mask=" << c.skip_prefix_custom_mask
              << " wko=" << c.window_kv_offsets << " xai=" << c.xai_temperature_len << " skip_prefix=" << c.skip_prefix
              << " skip_extend=" << c.skip_extend;
}
inline void PrintTo(const ExtendCase &c, std::ostream *os) { *os << c; }

inline ExtendProblem make_problem(const ExtendCase &c) {
    ExtendProblem p;
    p.bf16 = c.bf16;
    p.B = int64_t(c.E.size());
    p.Hq = c.Hq;
    p.Hkv = c.Hkv;
    p.Lq = c.Lq;
    p.Lv = c.Lv;
    p.causal = c.causal;
    p.window = c.window;
    p.sm_scale = c.sm_scale;
    p.logit_cap = c.logit_cap;
    p.k_scale = c.k_scale;
    p.v_scale = c.v_scale;
    p.fp8_cache = c.fp8_cache;
    std::mt19937 rng(c.seed);
    std::normal_distribution<float> val(0.1f, 0.5f);
    auto fill = [&](std::vector<uint16_t> &v, int64_t n) {
        v.resize(size_t(n));
        for (auto &x : v) x = p.from_f(val(rng));
    };
    auto fill_cache = [&](std::vector<uint16_t> &v, int64_t n) {  // e4m3 bytes with fp8_cache
        v.resize(size_t(n));
        for (auto &x : v) x = p.cache_from_f(val(rng));
    };
    p.qo_indptr.assign(1, 0);
    p.kv_indptr.assign(1, 0);
    for (int64_t b = 0; b < p.B; b++) {
        p.qo_indptr.push_back(p.qo_indptr.back() + int32_t(c.E[size_t(b)]));
        p.kv_indptr.push_back(p.kv_indptr.back() + int32_t(c.P[size_t(b)]));
    }
    p.T = p.qo_indptr.back();
    const int64_t sumP = p.kv_indptr.back();
    p.num_slots = sumP + 7;  // a few slots no request uses
    fill(p.q, p.T * p.Hq * p.Lq);
    fill(p.k_ext, p.T * p.Hkv * p.Lq);
    fill(p.v_ext, p.T * p.Hkv * p.Lv);
    fill_cache(p.k_buf, p.num_slots * p.Hkv * p.Lq);
    fill_cache(p.v_buf, p.num_slots * p.Hkv * p.Lv);
    std::vector<int64_t> slots(size_t(p.num_slots));
    std::iota(slots.begin(), slots.end(), 0);
    if (c.shuffle_slots) std::shuffle(slots.begin(), slots.end(), rng);
    p.kv_indices.assign(slots.begin(), slots.begin() + sumP);
    if (c.sinks) {
        std::uniform_real_distribution<float> sd(-1.0f, 2.0f);
        p.sinks.resize(size_t(p.Hq));
        for (auto &x : p.sinks) x = sd(rng);
    }
    p.skip_prefix_custom_mask = c.skip_prefix_custom_mask;
    p.xai_temperature_len = c.xai_temperature_len;
    p.skip_prefix = c.skip_prefix;
    p.skip_extend = c.skip_extend;
    if (c.window_kv_offsets) {
        std::uniform_int_distribution<int32_t> wd(0, 5);
        for (int64_t b = 0; b < p.B; b++) p.window_kv_offsets.push_back(wd(rng));
    }
    if (c.custom_mask) {
        // Each request's block, with a few unused bytes between blocks; the wko leading
        // columns (never read) hold random bytes too.
        std::bernoulli_distribution keep(c.mask_density);
        auto span_of = [&](int64_t b, int64_t pos) {  // index of the span holding pos, or -1
            for (size_t i = 0; i < c.spans.size(); i++) {
                const ExtendCase::Span &sp = c.spans[i];
                if (sp.b == b && pos >= sp.start && pos < sp.start + sp.length) return int64_t(i);
            }
            return int64_t(-1);
        };
        p.custom_mask.assign(3, 1);
        for (int64_t b = 0; b < p.B; b++) {
            const int64_t E = p.E(b), P = p.P(b), w = p.wko(b);
            p.mask_indptr.push_back(int64_t(p.custom_mask.size()));
            for (int64_t m = 0; m < E; m++) {
                for (int64_t col = 0; col < w + P + E; col++) {
                    const int64_t n = col - w - P;
                    if (!c.spans.empty()) {
                        const int64_t qpos = P + m, kpos = col - w, span = span_of(b, kpos);
                        const bool seen = col >= w && (kpos <= qpos || (span >= 0 && span == span_of(b, qpos)));
                        p.custom_mask.push_back(seen ? 1 : uint8_t(col < w && keep(rng)));
                        continue;
                    }
                    p.custom_mask.push_back(c.causal && n > m ? 0 : uint8_t(keep(rng)));
                }
            }
            p.custom_mask.insert(p.custom_mask.end(), 2, 1);
        }
        p.mask_indptr.push_back(int64_t(p.custom_mask.size()) - 2);  // mask_indptr[B]: end of the last block
    }
    return p;
}

// The caller-side buffers of one call (outputs poisoned), and the copies of the problem's
// inputs in the dtypes the case asks for (args points into them: not copyable).
struct ExtendBuffers {
    std::vector<uint16_t> o;
    std::vector<float> lse;
    std::vector<int32_t> idx32;                                    // kv_indices as int32
    std::vector<int64_t> qo_indptr64, kv_indptr64, window_kv_offsets64;  // indptr64 copies
    std::vector<int32_t> mask_indptr32;                            // mask_indptr32 copy
    std::vector<uint8_t> k_buffer8, v_buffer8;                     // the fp8 cache's e4m3 bytes
    lb_extend_attention_args args{};

    ExtendBuffers() = default;
    ExtendBuffers(const ExtendBuffers &) = delete;
    ExtendBuffers &operator=(const ExtendBuffers &) = delete;
};

constexpr uint16_t kPoison16 = 0x7e5a;  // a NaN in both fp16 and bf16
constexpr float kPoisonLse = -12345.0f;

// Bytes of one element of `dt`.
inline size_t element_bytes(lb_dtype dt) {
    switch (dt) {
        case LB_UINT8:
        case LB_FLOAT8_E4M3FN: return 1;
        case LB_FLOAT16:
        case LB_BFLOAT16: return 2;
        case LB_INT64: return 8;
        default: return 4;
    }
}

// Bytes a tensor's view spans (0 for an absent or empty one): what a device copy of it needs.
inline size_t tensor_bytes(const lb_tensor &t) {
    if (t.data == nullptr || t.ndim <= 0) return 0;
    int64_t last = 0;
    for (int d = 0; d < t.ndim; d++) {
        if (t.shape[d] <= 0) return 0;
        last += (t.shape[d] - 1) * t.strides[d];
    }
    return size_t(last + 1) * element_bytes(t.dtype);
}

// For device copies of a call's tensors (the CUDA suites' mirror, the tuning runner): the
// index of an earlier tensor in `tensors` that tensors[i] is a view of (same first element,
// inside its span: MLA's v_buffer of k_buffer), or -1. A view then takes that tensor's copy,
// so views stay views on the device. Ask before any pointer is replaced by a device one.
inline int viewed_tensor(const std::vector<const lb_tensor *> &tensors, size_t i) {
    const lb_tensor &t = *tensors[i];
    const size_t bytes = tensor_bytes(t);
    if (bytes == 0) return -1;
    for (size_t e = 0; e < i; e++) {
        if (tensors[e]->data == t.data && bytes <= tensor_bytes(*tensors[e])) return int(e);
    }
    return -1;
}

inline lb_tensor attn3(const void *data, lb_dtype dt, int64_t a, int64_t b, int64_t c) {
    return lb_tensor{const_cast<void *>(data), dt, 3, {a, b, c}, {b * c, c, 1}};
}

// A 1-D index tensor over `values` (int32 or int64 storage).
inline lb_tensor index1(const std::vector<int32_t> &values) {
    return lb_tensor{const_cast<int32_t *>(values.data()), LB_INT32, 1, {int64_t(values.size())}, {1}};
}
inline lb_tensor index1(const std::vector<int64_t> &values) {
    return lb_tensor{const_cast<int64_t *>(values.data()), LB_INT64, 1, {int64_t(values.size())}, {1}};
}

// `values` as an int32 (as64 false: the problem's own storage) or an int64 tensor (a copy
// kept in *copy64).
inline lb_tensor index1_as(const std::vector<int32_t> &values, bool as64, std::vector<int64_t> *copy64) {
    if (!as64) return index1(values);
    copy64->assign(values.begin(), values.end());
    return index1(*copy64);
}

// `values` as an int64 tensor (as32 false: the problem's own storage) or an int32 tensor (a
// copy kept in *copy32).
inline lb_tensor index1_narrowed(const std::vector<int64_t> &values, bool as32, std::vector<int32_t> *copy32) {
    if (!as32) return index1(values);
    copy32->assign(values.begin(), values.end());
    return index1(*copy32);
}

// A KV-cache tensor [slots, heads, dim] over `cache` (16-bit elements of `dt`), or with
// `fp8` over *bytes8, filled with the e4m3 byte of each element (LB_FLOAT8_E4M3FN).
inline lb_tensor cache3(const std::vector<uint16_t> &cache, bool fp8, lb_dtype dt, int64_t slots, int64_t heads,
                        int64_t dim, std::vector<uint8_t> *bytes8) {
    if (!fp8) return attn3(cache.data(), dt, slots, heads, dim);
    bytes8->resize(cache.size());
    for (size_t i = 0; i < cache.size(); i++) (*bytes8)[i] = uint8_t(cache[i]);
    return attn3(bytes8->data(), LB_FLOAT8_E4M3FN, slots, heads, dim);
}

// Fills buffers for problem p (o and lse poisoned); `with_lse` false leaves lse absent. The
// cache dtype is the problem's (p.fp8_cache), the index dtypes the case's (c.index64,
// c.indptr64).
inline void make_args(const ExtendProblem &p, const ExtendCase &c, lb_variant variant, ExtendBuffers *out,
                      bool with_lse = true) {
    const lb_dtype dt = p.bf16 ? LB_BFLOAT16 : LB_FLOAT16;
    out->o.assign(size_t(p.T * p.Hq * p.Lv), kPoison16);
    out->lse.assign(size_t(p.T * p.Hq), kPoisonLse);
    lb_extend_attention_args &a = out->args;
    a = lb_extend_attention_args{};
    a.q_extend = attn3(p.q.data(), dt, p.T, p.Hq, p.Lq);
    a.k_extend = attn3(p.k_ext.data(), dt, p.T, p.Hkv, p.Lq);
    a.v_extend = attn3(p.v_ext.data(), dt, p.T, p.Hkv, p.Lv);
    a.o_extend = attn3(out->o.data(), dt, p.T, p.Hq, p.Lv);
    a.k_buffer = cache3(p.k_buf, p.fp8_cache, dt, p.num_slots, p.Hkv, p.Lq, &out->k_buffer8);
    a.v_buffer = cache3(p.v_buf, p.fp8_cache, dt, p.num_slots, p.Hkv, p.Lv, &out->v_buffer8);
    a.qo_indptr = index1_as(p.qo_indptr, c.indptr64, &out->qo_indptr64);
    a.kv_indptr = index1_as(p.kv_indptr, c.indptr64, &out->kv_indptr64);
    if (c.index64) {
        a.kv_indices = index1(p.kv_indices);
    } else {
        out->idx32.assign(p.kv_indices.begin(), p.kv_indices.end());
        a.kv_indices = index1(out->idx32);
    }
    if (!p.sinks.empty()) a.sinks = lb_tensor{const_cast<float *>(p.sinks.data()), LB_FLOAT32, 1, {p.Hq}, {1}};
    if (with_lse) a.lse_extend = lb_tensor{out->lse.data(), LB_FLOAT32, 2, {p.T, p.Hq}, {p.Hq, 1}};
    int64_t max_e = 0;
    for (int64_t b = 0; b < p.B; b++) max_e = std::max(max_e, p.E(b));
    a.max_len_extend = max_e + c.extra_max_len;
    a.is_causal = p.causal;
    a.sliding_window_size = p.window;
    a.sm_scale = p.sm_scale;
    a.logit_cap = p.logit_cap;
    a.k_scale = p.k_scale;
    a.v_scale = p.v_scale;
    if (p.has_mask()) {
        a.custom_mask = lb_tensor{const_cast<uint8_t *>(p.custom_mask.data()), LB_UINT8, 1,
                                  {int64_t(p.custom_mask.size())}, {1}};
        a.mask_indptr = index1_narrowed(p.mask_indptr, c.mask_indptr32, &out->mask_indptr32);
    }
    if (!p.window_kv_offsets.empty()) {
        a.window_kv_offsets = index1_as(p.window_kv_offsets, c.indptr64, &out->window_kv_offsets64);
    }
    a.skip_prefix_custom_mask = p.skip_prefix_custom_mask;
    a.xai_temperature_len = p.xai_temperature_len;
    a.skip_prefix = p.skip_prefix;
    a.skip_extend = p.skip_extend;
    a.variant = variant;
}

// MLA's absorbed layout (Lv <= Lq; 16-bit or fp8 caches): V is the first Lv dims of K.
// absorb_values makes the problem's V those dims, materialised; values_as_key_views points a
// call's v_buffer / v_extend at its k_buffer / k_extend storage instead (torch's k[..., :Lv]:
// K's dtype, row and head strides), which must give the same bits without a copy.
// (V's `rows` head rows of Lv elements: the first Lv of K's rows of Lq.)
inline void copy_key_prefixes(const std::vector<uint16_t> &k, std::vector<uint16_t> *v, int64_t rows, int64_t Lq,
                              int64_t Lv) {
    for (int64_t r = 0; r < rows; r++) std::copy_n(k.begin() + long(r * Lq), Lv, v->begin() + long(r * Lv));
}
inline void absorb_values(ExtendProblem *p) {
    copy_key_prefixes(p->k_buf, &p->v_buf, p->num_slots * p->Hkv, p->Lq, p->Lv);
    copy_key_prefixes(p->k_ext, &p->v_ext, p->T * p->Hkv, p->Lq, p->Lv);
}
// The first `dims` elements of each row and head of `keys` ([rows, heads, Lq]), as a view.
inline lb_tensor key_view(const lb_tensor &keys, int64_t dims) {
    lb_tensor v = keys;
    v.shape[2] = dims;
    return v;
}
// The 576/512 variants' four dtype forms (their names' dtype part), and a K7 or K8 case set to
// one: bf16 or fp16 with a 16-bit cache, or with an fp8 cache and scales.
constexpr const char *kMlaDtypes[] = {"bf16", "fp16", "bf16_e4m3", "fp16_e4m3"};
template <class Case>
void set_mla_dtype(Case *c, const std::string &dt) {
    c->bf16 = dt[0] == 'b';
    c->fp8_cache = dt.find("e4m3") != std::string::npos;
    if (c->fp8_cache) {
        c->k_scale = 0.5f;
        c->v_scale = 1.7f;
    }
}
inline void values_as_key_views(const ExtendProblem &p, lb_extend_attention_args *a) {
    a->v_buffer = key_view(a->k_buffer, p.Lv);
    a->v_extend = key_view(a->k_extend, p.Lv);
}

inline lb_device cpu_device() { return lb_device{LB_DEVICE_CPU, 0, nullptr}; }

// Custom masks of image spans (ExtendCase::spans), for the sweep and the span tests.
// Without a window (span_causal), with a window longer and shorter than spans, sinks,
// window_kv_offsets and an int32 mask_indptr (span_window), fp16 64/64 GQA 8:1.
inline std::vector<ExtendCase> span_mask_cases() {
    std::vector<ExtendCase> cs;
    ExtendCase c{"span_causal", 141, true, 8, 2, 128, 128, {450, 40, 17, 5}, {20, 100, 0, 3}};
    c.custom_mask = true;
    c.sinks = true;
    c.spans = {{0, 5, 17},   {0, 31, 1}, {0, 33, 15}, {0, 48, 16}, {0, 66, 17}, {0, 90, 100},
               {0, 166, 300}, {1, 90, 30}, {1, 125, 15}, {2, 0, 17}};
    cs.push_back(c);
    ExtendCase w{"span_window_wko_mask_indptr32", 142, false, 8, 1, 64, 64, {300, 60, 33}, {40, 10, 0}};
    w.custom_mask = true;
    w.window = 24;
    w.window_kv_offsets = true;
    w.sinks = true;
    w.mask_indptr32 = true;
    w.spans = {{0, 30, 17}, {0, 60, 100}, {0, 200, 16}, {1, 5, 15}, {1, 20, 1}, {1, 40, 30}, {2, 0, 33}};
    cs.push_back(w);
    return cs;
}

// The accuracy sweep.
inline std::vector<ExtendCase> extend_cases() {
    std::vector<ExtendCase> cs;
    auto add = [&](ExtendCase c) { cs.push_back(std::move(c)); };
    // One long + several short requests, prefix 0 and non-zero, causal, no window.
    add({"uneven_causal", 11, true, 8, 2, 128, 128, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}});
    // Sliding windows: small, tile-sized, >= E (no-op window), W = 0 (off).
    {
        ExtendCase c{"window_small", 12, true, 8, 2, 128, 128, {130, 7, 65}, {90, 300, 0}};
        c.window = 9;
        add(c);
        c.name = "window_tile";
        c.seed = 13;
        c.window = 32;
        add(c);
        c.name = "window_ge_E";
        c.seed = 14;
        c.window = 400;
        add(c);
        c.name = "window_zero_off";
        c.seed = 15;
        c.window = 0;
        add(c);
    }
    // Non-causal, with and without a window (two-sided).
    {
        ExtendCase c{"noncausal", 21, true, 8, 8, 128, 128, {70, 33, 1}, {20, 0, 45}};
        c.causal = false;
        add(c);
        c.name = "noncausal_window";
        c.seed = 22;
        c.window = 13;
        add(c);
    }
    // GQA 8:1, fp16, 64/64, logit cap, sinks, scales, explicit sm_scale, int64 + shuffled.
    {
        ExtendCase c{"fp16_d64_gqa8_cap_sinks", 31, false, 8, 1, 64, 64, {97, 12, 40}, {60, 5, 0}};
        c.logit_cap = 5.0f;
        c.sinks = true;
        c.k_scale = 0.75f;
        c.v_scale = 1.25f;
        c.sm_scale = 0.2f;
        c.window = 20;
        add(c);
    }
    // bf16 64/64 GQA 4:1, dead query tiles.
    {
        ExtendCase c{"bf16_d64_gqa4", 41, true, 8, 2, 64, 64, {45, 90}, {100, 0}};
        c.window = 50;
        c.extra_max_len = 40;  // dead query tiles beyond every request
        add(c);
    }
    // int32 indices everywhere, contiguous slots, sinks where a row sees nothing but the
    // sink (W = 1, prefix far away is still seen at distance 1; use no prefix + E = 1 rows).
    {
        ExtendCase c{"int32_contiguous_sinks", 51, true, 8, 8, 128, 128, {1, 2, 31, 32, 33}, {0, 1, 64, 0, 2}};
        c.index64 = false;
        c.shuffle_slots = false;
        c.sinks = true;
        add(c);
    }
    // fp16 128/128 non-causal with empty requests only at the ends.
    {
        ExtendCase c{"fp16_d128_noncausal_empty_ends", 61, false, 8, 2, 128, 128, {0, 50, 0}, {10, 30, 0}};
        c.causal = false;
        c.window = 7;
        add(c);
    }
    // MLA-absorbed head dims, Lq != Lv (576/512, bf16), GQA 4:1, window, prefix.
    {
        ExtendCase c{"bf16_mla_576_512", 71, true, 4, 1, 576, 512, {20, 37}, {30, 0}};
        c.window = 16;
        add(c);
    }
    // Custom masks (tree-mask-like: 0 above the diagonal when causal), on the prefix too.
    {
        ExtendCase c{"mask_causal", 81, true, 8, 2, 128, 128, {70, 1, 33, 0, 40}, {25, 60, 0, 9, 80}};
        c.custom_mask = true;
        add(c);
        // skip_prefix_custom_mask, window with window_kv_offsets (truncated prefix), fp16 64/64.
        ExtendCase w{"mask_window_wko_skip_prefix_mask", 82, false, 8, 2, 64, 64, {45, 20, 66}, {30, 5, 70}};
        w.custom_mask = true;
        w.skip_prefix_custom_mask = true;
        w.window = 24;
        w.window_kv_offsets = true;
        add(w);
        // Non-causal + two-sided window, mask on the prefix, window_kv_offsets, sparse mask
        // (rows that see nothing), sinks.
        ExtendCase n{"mask_noncausal_window_wko_sparse", 83, true, 8, 2, 64, 64, {50, 7, 33}, {40, 0, 12}};
        n.custom_mask = true;
        n.causal = false;
        n.window = 11;
        n.window_kv_offsets = true;
        n.mask_density = 0.15f;
        n.sinks = true;
        add(n);
    }
    // Image spans (Gemma 4): the mask opens keys above the diagonal inside each span, and it
    // alone decides under is_causal. Spans of 1, 15, 16, 17, 100 and 300 tokens at offsets
    // that cross q-tile and key-tile boundaries (16, 32, 64) and the prefix / extend boundary
    // (request 0's first span, request 1's first), several per request, a whole request as
    // one span; GQA 4:1, sinks, the LSE (every CPU call), int64 mask_indptr.
    for (const ExtendCase &c : span_mask_cases()) add(c);
    // xai temperature (positions P + m on both sides of L), with a cap.
    {
        ExtendCase c{"xai_temperature", 91, true, 8, 2, 128, 128, {60, 30, 9}, {10, 70, 0}};
        c.xai_temperature_len = 40;
        c.logit_cap = 8.0f;
        add(c);
    }
    // skip_prefix / skip_extend (DCP): one stage only; with a window and sinks.
    {
        ExtendCase c{"skip_prefix", 101, true, 8, 2, 64, 64, {40, 3, 70}, {30, 90, 0}};
        c.skip_prefix = true;
        c.window = 20;
        add(c);
        c.name = "skip_extend";
        c.seed = 102;
        c.skip_prefix = false;
        c.skip_extend = true;
        c.sinks = true;
        add(c);
        c.name = "skip_both_mask";
        c.seed = 103;
        c.skip_prefix = true;
        c.custom_mask = true;
        add(c);
    }
    // Head dims served by a larger bucket (cmake LIVEBOUND_K7_CPU_BUCKETS; lanes past the
    // call's dims masked): SGLang's test dim 13 (the scalar bucket 32), 40 (64), 80 (96;
    // bf16 on CUDA: the padded tensor-core variant p96), 96 (its own), 192/128 (Lq != Lv),
    // 256.
    {
        ExtendCase c{"head_dim_13", 111, true, 4, 2, 13, 13, {40, 3, 17}, {25, 0, 9}};
        c.window = 11;
        add(c);
        ExtendCase f{"fp16_head_dim_40_cap_sinks", 112, false, 4, 1, 40, 40, {33, 64}, {0, 45}};
        f.logit_cap = 6.0f;
        f.sinks = true;
        add(f);
        ExtendCase e{"fp16_head_dim_80", 113, false, 8, 2, 80, 80, {70, 1, 33}, {20, 90, 0}};
        e.window = 24;
        add(e);
        ExtendCase p{"head_dim_80_sinks", 117, true, 8, 2, 80, 80, {65, 9, 40}, {30, 70, 0}};
        p.sinks = true;
        p.window = 36;
        add(p);
        ExtendCase n{"head_dim_96_noncausal", 114, true, 8, 4, 96, 96, {45, 20}, {30, 0}};
        n.causal = false;
        add(n);
        ExtendCase m{"head_dim_192_128", 115, true, 8, 2, 192, 128, {50, 7, 33}, {40, 0, 12}};
        m.window = 30;
        add(m);
        ExtendCase w{"head_dim_256_window", 116, true, 4, 2, 256, 256, {60, 3, 30}, {0, 50, 20}};
        w.window = 40;
        add(w);
    }
    // Index dtypes per argument (every variant takes int32 or int64 for qo_indptr,
    // kv_indptr, kv_indices and window_kv_offsets, each on its own; the other cases are
    // int32 indptrs with int64 kv_indices, or int32 everywhere): (indptr64, index64) =
    // (1, 1) and (1, 0), and int64 window_kv_offsets under a mask.
    {
        ExtendCase c{"indptr64_index64_window", 121, true, 8, 2, 128, 128, {70, 1, 33, 0}, {40, 0, 90, 17}};
        c.indptr64 = true;
        c.window = 20;
        add(c);
        ExtendCase f{"fp16_d64_indptr64_index32_sinks", 122, false, 8, 2, 64, 64, {45, 20, 3}, {30, 0, 70}};
        f.indptr64 = true;
        f.index64 = false;
        f.sinks = true;
        add(f);
        ExtendCase m{"mask_window_wko64_index32", 123, true, 8, 2, 64, 64, {40, 9, 33}, {25, 60, 0}};
        m.custom_mask = true;
        m.window = 16;
        m.window_kv_offsets = true;
        m.indptr64 = true;
        m.index64 = false;
        add(m);
    }
    // fp8 (e4m3fn) KV caches: each cache element decoded exactly, then the formulas of the
    // 16-bit cases (k_scale on the prefix scores, v_scale on the prefix values); bf16 and
    // fp16 inputs; head dims 128, 64, 13 (the scalar bucket), 80 (the 96 bucket), 192/128
    // and 576/512 (MLA: few heads, short requests); windows, masks, sinks, cap, xai, a
    // prefix-only call; the index dtypes (indptr64, index64) = (1, 1), (1, 0), (0, 0), (0, 1).
    {
        ExtendCase a{"fp8_bf16_d128_scales", 131, true, 8, 2, 128, 128, {70, 1, 33, 0, 40}, {40, 0, 90, 17, 5}};
        a.fp8_cache = true;
        a.k_scale = 0.5f;
        a.v_scale = 1.7f;
        a.indptr64 = true;
        add(a);
        ExtendCase w{"fp8_fp16_d128_window_sinks", 132, false, 8, 2, 128, 128, {65, 9, 30}, {30, 70, 0}};
        w.fp8_cache = true;
        w.window = 20;
        w.sinks = true;
        w.indptr64 = true;
        w.index64 = false;
        add(w);
        ExtendCase n{"fp8_bf16_d64_noncausal_cap_scales", 133, true, 8, 1, 64, 64, {50, 7, 33}, {40, 0, 12}};
        n.fp8_cache = true;
        n.causal = false;
        n.window = 13;
        n.logit_cap = 5.0f;
        n.k_scale = 0.5f;
        n.v_scale = 1.7f;
        n.index64 = false;
        add(n);
        ExtendCase m{"fp8_fp16_d64_mask_window_wko64_sinks", 134, false, 8, 2, 64, 64, {45, 20, 33}, {30, 5, 70}};
        m.fp8_cache = true;
        m.custom_mask = true;
        m.window = 24;
        m.window_kv_offsets = true;
        m.sinks = true;
        m.indptr64 = true;
        add(m);
        ExtendCase k{"fp8_bf16_d128_skip_extend_scales", 135, true, 8, 2, 128, 128, {30, 5, 12}, {50, 20, 0}};
        k.fp8_cache = true;
        k.skip_extend = true;
        k.window = 40;
        k.k_scale = 0.5f;
        k.v_scale = 1.7f;
        k.indptr64 = true;
        add(k);
        ExtendCase d13{"fp8_bf16_head_dim_13_scales", 136, true, 4, 2, 13, 13, {40, 3, 17}, {25, 0, 9}};
        d13.fp8_cache = true;
        d13.window = 11;
        d13.k_scale = 0.5f;
        d13.v_scale = 1.7f;
        add(d13);
        ExtendCase d80{"fp8_fp16_head_dim_80_sinks", 137, false, 8, 2, 80, 80, {33, 1, 20}, {20, 45, 0}};
        d80.fp8_cache = true;
        d80.sinks = true;
        d80.window = 24;
        d80.indptr64 = true;
        d80.index64 = false;
        add(d80);
        ExtendCase d192{"fp8_bf16_head_dim_192_128_xai_cap", 138, true, 8, 2, 192, 128, {30, 7, 20}, {40, 0, 12}};
        d192.fp8_cache = true;
        d192.window = 30;
        d192.xai_temperature_len = 30;
        d192.logit_cap = 8.0f;
        add(d192);
        ExtendCase mla{"fp8_bf16_mla_576_512_scales", 139, true, 4, 1, 576, 512, {12, 20}, {30, 0}};
        mla.fp8_cache = true;
        mla.window = 16;
        mla.k_scale = 0.5f;
        mla.v_scale = 1.7f;
        mla.indptr64 = true;
        add(mla);
        ExtendCase mlm{"fp8_fp16_mla_576_512_mask_sinks", 140, false, 4, 1, 576, 512, {9, 14}, {0, 20}};
        mlm.fp8_cache = true;
        mlm.custom_mask = true;
        mlm.sinks = true;
        mlm.index64 = false;
        add(mlm);
    }
    return cs;
}

}  // namespace livebound::testing
