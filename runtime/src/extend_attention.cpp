// K7 extend_attention_fwd: validate every argument, pick the AOT variant (target x
// bounded/full-width x dtype x KV-cache dtype x head dims, from
// cmake/families/extend_attention.cmake) and call it on the caller's memory, with the
// caller's device and stream on CUDA (nothing allocated, no sync: graph-capturable).
// Index arguments (mask_indptr too) may be int32 or int64 each: the variants read int32 with
// any stride, and an int64 tensor is passed as the view of its low 32-bit words (index_view).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "errors.h"
#include "pipeline_call.h"
#include "livebound/livebound.h"
#include "validate.h"

#include "livebound/k7_headers.inc"  // generated: every K7 variant's header

namespace livebound {
namespace {

enum class Target { cpu, cuda };
enum class Dt { bf16, fp16 };
enum class Cache { model, e4m3 };  // the KV cache's dtype: the model's (q's), or fp8 e4m3

// The table facts of a call's validated dtypes.
Dt dt_of(lb_dtype dt) { return dt == LB_BFLOAT16 ? Dt::bf16 : Dt::fp16; }
Cache cache_of(lb_dtype cache_dt) { return cache_dt == LB_FLOAT8_E4M3FN ? Cache::e4m3 : Cache::model; }

struct Variant {
    Target target;
    lb_variant form;
    Dt dtype;
    Cache cache;
    // The head-dim bucket: the variant serves lq <= head_dim_qk and lv <= head_dim_v, both
    // multiples of `vector` (cmake/families/extend_attention.cmake, LIVEBOUND_K7_CPU_BUCKETS).
    int32_t head_dim_qk, head_dim_v, vector;
    bool with_lse;  // the variant has the lse output
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)

    bool serves(int64_t lq, int64_t lv) const {
        return lq >= 1 && lv >= 1 && lq <= head_dim_qk && lv <= head_dim_v && lq % vector == 0 && lv % vector == 0;
    }
};

constexpr lb_variant k_bounded = LB_BOUNDED, k_full = LB_FULL_WIDTH;

const Variant kVariants[] = {
#define LB_K7_ATTN(target, form, dt, cache, dqk, dv, vec, lse, name) \
    {Target::target, k_##form, Dt::dt, Cache::cache, dqk, dv, vec, lse, LB_PIPELINE(name)},
#include "livebound/k7_variants.inc"
#undef LB_K7_ATTN
};

// CUDA tensor-core variants (exact: Lq = head_dim_qk and Lv = head_dim_v, which may differ,
// e.g. 192/128 and MLA's 576/512; a padded one serves any Lq = Lv <= its head dim that is a
// multiple of 8): picked before the SIMT ones when one serves the call's facts and every
// q/k/v tensor has their layout (pair_view below).
struct TensorCoreVariant {
    lb_variant form;
    Dt dtype;
    Cache cache;
    int32_t head_dim_qk, head_dim_v;
    bool padded;
    bool with_lse;
    // MLA's absorbed layout only (generator values_in_keys): the kernel reads V as K's first
    // Lv dims in its list stage (1: K7's extend stage loads v_extend) or in every stage (2),
    // so it serves only calls whose values are that far such views (key_view_level).
    int values_in_keys;
    Pipeline pipeline;  // the AOT function (LB_PIPELINE)

    bool serves(int64_t Lq, int64_t Lv) const {
        if (padded) return Lq == Lv && Lq >= 8 && Lq % 8 == 0 && Lq <= head_dim_qk;
        return Lq == head_dim_qk && Lv == head_dim_v;
    }
};
const TensorCoreVariant kTensorCoreVariants[] = {
#define LB_K7_TC(form, dt, cache, dqk, dv, padded, lse, vk, name) \
    {k_##form, Dt::dt, Cache::cache, dqk, dv, padded, lse, vk, LB_PIPELINE(name)},
#include "livebound/k7_tc_variants.inc"
#undef LB_K7_TC
    {k_bounded, Dt::bf16, Cache::model, 0, 0, false, false, 0, {nullptr, nullptr}},  // end (the list is empty without CUDA)
};
const TensorCoreVariant kUnifiedTensorCoreVariants[] = {
#define LB_K8_TC(form, dt, cache, dqk, dv, padded, vk, name) \
    {k_##form, Dt::dt, Cache::cache, dqk, dv, padded, false, vk, LB_PIPELINE(name)},
#include "livebound/k8_tc_variants.inc"
#undef LB_K8_TC
    {k_bounded, Dt::bf16, Cache::model, 0, 0, false, false, 0, {nullptr, nullptr}},  // end
};

// Whether `values` ([rows, heads, Lv]) is a view of the first Lv dims of `keys` ([rows,
// heads, Lq]): the same storage, rows and heads, as torch's k[..., :Lv] (MLA's absorbed
// layout). Extents of 1 ignore their stride, as torch does.
bool values_are_key_views(const lb_tensor &keys, const lb_tensor &values) {
    if (values.data != keys.data || values.dtype != keys.dtype || values.ndim != 3 || keys.ndim != 3) return false;
    if (values.shape[0] != keys.shape[0] || values.shape[1] != keys.shape[1] || values.shape[2] > keys.shape[2]) return false;
    if (values.strides[2] != keys.strides[2]) return false;
    if (values.shape[0] > 1 && values.strides[0] != keys.strides[0]) return false;
    return values.shape[1] <= 1 || values.strides[1] == keys.strides[1];
}

// How far a call's values are views of its keys (values_are_key_views), the scale of
// TensorCoreVariant::values_in_keys: 0 not the cache's, 1 the cache's (v_buffer of
// k_buffer) but not K7's extend values, 2 every stage's (K8: the cache's).
int key_view_level(const lb_tensor &k_buffer, const lb_tensor &v_buffer, const lb_tensor *k_extend,
                   const lb_tensor *v_extend) {
    if (!values_are_key_views(k_buffer, v_buffer)) return 0;
    return k_extend == nullptr || values_are_key_views(*k_extend, *v_extend) ? 2 : 1;
}

// The built tensor-core variant for these facts: the exact one, else the padded one with
// the smallest head dim that serves them; or null. `key_views` (key_view_level): a
// values_in_keys variant serves the call when its level is at most that, and the highest
// such level is preferred (it loads the least V); at level 0 such a variant never runs.
template <size_t N>
const TensorCoreVariant *find_tensor_core(const TensorCoreVariant (&table)[N], lb_variant form, lb_dtype dt,
                                          lb_dtype cache_dt, int64_t Lq, int64_t Lv, bool lse, int key_views) {
    const Dt want = dt_of(dt);
    const Cache cache = cache_of(cache_dt);
    const TensorCoreVariant *best = nullptr;
    for (const auto &c : table) {
        if (!c.pipeline.argv || c.form != form || c.dtype != want || c.cache != cache || c.with_lse != lse || !c.serves(Lq, Lv) ||
            c.values_in_keys > key_views) {
            continue;
        }
        if (!best || (best->padded && !c.padded) ||
            (best->padded == c.padded && (c.head_dim_qk < best->head_dim_qk ||
                                          (c.head_dim_qk == best->head_dim_qk && c.values_in_keys > best->values_in_keys)))) {
            best = &c;
        }
    }
    return best;
}

// What a tensor-core variant reads of a [rows, heads, head_dim] 16-bit (or fp8 cache)
// tensor: a flat 1-D view of element pairs over its storage (b32 pairs; an fp8 cache's
// byte pairs, uint16), and its row stride in groups of 8 elements (16 bytes; fp8: 8). The
// kernels compute the addresses themselves (generator, define_tensor_core), so the layout
// must be theirs: heads contiguous inside a row, rows aligned to a group, at most 2^31 - 1
// pairs. false: another layout (the call then runs a SIMT variant).
struct PairView {
    lb_tensor flat;
    int32_t row_stride_16b = 0;
    bool byte_pairs = false;  // fp8 elements
};
bool pair_view(const lb_tensor &t, PairView *out) {
    const int64_t rows = t.shape[0], heads = t.shape[1], dim = t.shape[2];
    if (rows < 1 || heads < 1 || dim % 8 != 0 || t.strides[2] != 1) return false;
    if (heads > 1 && t.strides[1] != dim) return false;
    const int64_t row_stride = rows > 1 ? t.strides[0] : 0;
    if (row_stride < 0 || row_stride % 8 != 0) return false;
    const bool fp8 = t.dtype == LB_FLOAT8_E4M3FN;
    if (reinterpret_cast<uintptr_t>(t.data) % (fp8 ? 8 : 16) != 0) return false;
    const int64_t pairs = ((rows - 1) * row_stride + heads * dim) / 2;
    if (pairs > INT32_MAX || row_stride / 8 > INT32_MAX) return false;
    out->flat = lb_tensor{t.data, LB_INT32, 1, {pairs}, {1}};
    out->row_stride_16b = static_cast<int32_t>(row_stride / 8);
    out->byte_pairs = fp8;
    return true;
}

// A call only a tensor-core variant serves (MLA's 576/512 on CUDA) with a tensor that lacks
// its layout: refused naming the tensor and what the kernel needs.
constexpr const char *kTensorCoreQkvLayout =
    "q/k/v with a contiguous head dim, heads contiguous inside a row (or one head), row strides a multiple of 8 "
    "elements, 16-byte aligned storage (8 bytes for an fp8 cache) and a span below 2^32 elements";
[[noreturn]] void refuse_layout(const char *name, int64_t Lq, int64_t Lv, const char *needs = kTensorCoreQkvLayout) {
    throw Failure(LB_ERROR_UNSUPPORTED, "argument '" + std::string(name) + "': on CUDA, Lq = " + std::to_string(Lq) +
                                            ", Lv = " + std::to_string(Lv) +
                                            " runs only on the tensor-core kernel, which needs " + needs);
}

// Halide's view of a PairView (uint32 elements; byte pairs: uint16).
halide_buffer_t *wrap_pairs(PipelineCall &call, const PairView &v, const char *name) {
    halide_dimension_t dim{0, static_cast<int32_t>(v.flat.shape[0]), 1, 0};
    return call.wrap(v.flat, name, halide_type_t(halide_type_uint, v.byte_pairs ? 16 : 32, 1), 1, &dim);
}

// The arguments of a tensor-core call: the q/k/v tensors as flat pair views, and after the
// SIMT arguments their row strides in 16-byte units, Hkv, the slot count and the
// common-case flag. Holds the scalars the call's arguments point to.
struct TensorCoreArgs {
    static constexpr int kMax = 5;
    PairView views[kMax];
    int32_t row_strides[kMax] = {}, kv_heads = 0, slots = 0;
    bool plain_logits = false;
    int n = 0;

    // -1: every tensor has the tensor-core layout (pair_view); else the index of the first
    // that has not (the call then runs a SIMT variant, or is refused naming that tensor).
    int take(const lb_tensor *const *tensors, int count) {
        n = count;
        for (int i = 0; i < n; i++) {
            if (!pair_view(*tensors[i], &views[i])) return i;
            row_strides[i] = views[i].row_stride_16b;
        }
        return -1;
    }
    // Whether the tensor-core variant runs: it does when every tensor has its layout. Else
    // the SIMT variant runs (has_simt), or the call is refused naming the first tensor that lacks it.
    bool take_or_fall_back(const lb_tensor *const *tensors, const char *const *names, int count, bool has_simt,
                           int64_t Lq, int64_t Lv) {
        const int bad = take(tensors, count);
        if (bad >= 0 && !has_simt) refuse_layout(names[bad], Lq, Lv);
        return bad < 0;
    }
    halide_buffer_t *wrap(PipelineCall &call, int i, const char *name) const { return wrap_pairs(call, views[i], name); }
    // `stride_names`: the generator's names of the n row-stride parameters.
    void append_scalars(std::vector<PipelineArg> *args, const char *const *stride_names) {
        for (int i = 0; i < n; i++) args->push_back(scalar(stride_names[i], &row_strides[i]));
        args->push_back(scalar("num_kv_heads", &kv_heads));
        args->push_back(scalar("num_slots", &slots));
        args->push_back(scalar("plain_logits", &plain_logits));
    }
};

// K8 variants (no LSE output).
const Variant kUnifiedVariants[] = {
#define LB_K8_ATTN(target, form, dt, cache, dqk, dv, vec, name) \
    {Target::target, k_##form, Dt::dt, Cache::cache, dqk, dv, vec, false, LB_PIPELINE(name)},
#include "livebound/k8_variants.inc"
#undef LB_K8_ATTN
};

// ---- checks shared by K7 and K8 ----

// q/k/v and the caches: the head dim contiguous, the other dimensions any stride, 0 included
// (an expanded view: the kernels only read them). Outputs keep strides >= 1.
constexpr validate::Layout kInput = validate::Layout::broadcast_input;

using validate::index_view;  // int64 index tensors as the int32 view the variants read

// The KV cache's dtype: k_buffer of the model dtype or float8_e4m3fn (the callers then
// validate v_buffer against it). Returns that dtype.
lb_dtype check_k_buffer(const lb_tensor &k_buffer, lb_dtype dt) {
    validate::tensor(k_buffer, "k_buffer", {dt, LB_FLOAT8_E4M3FN}, 3, kInput);
    return k_buffer.dtype;
}

// The scalar arguments.
void check_scalars(int64_t max_len_extend, float sm_scale, float logit_cap, float k_scale, float v_scale,
                   int32_t xai_temperature_len) {
    if (max_len_extend < 0 || max_len_extend > (int64_t{1} << 28)) {
        bad_argument("max_len_extend", "must be in [0, 2^28], got " + std::to_string(max_len_extend));
    }
    if (!std::isfinite(sm_scale) || sm_scale < 0) bad_argument("sm_scale", "must be finite and >= 0 (0: 1/sqrt(Lq))");
    if (!std::isfinite(logit_cap) || logit_cap < 0) bad_argument("logit_cap", "must be finite and >= 0 (0: off)");
    if (!std::isfinite(k_scale)) bad_argument("k_scale", "must be finite");
    if (!std::isfinite(v_scale)) bad_argument("v_scale", "must be finite");
    // (The xai temperature divides by log2(xai_temperature_len).)
    if (xai_temperature_len == 1) {
        bad_argument("xai_temperature_len", "must be <= 0 (off) or >= 2, got 1 (log2(1) = 0)");
    }
}

// Optional sinks [Hq] float32, contiguous (lb_tensor lets 1-D index tensors be strided).
void check_sinks(const lb_tensor &sinks, int64_t Hq, const char *what) {
    if (validate::is_absent(sinks)) return;
    validate::tensor(sinks, "sinks", {LB_FLOAT32}, 1);
    validate::extent_equals(sinks, "sinks", 0, Hq, what);
    if (sinks.shape[0] > 1 && sinks.strides[0] != 1) {
        bad_argument("sinks", "must be contiguous (stride 1), got stride " + std::to_string(sinks.strides[0]));
    }
}

// Optional custom mask (flat uint8) with its [B + 1] int32 or int64 mask_indptr; true when
// given. (A valid start is at most custom_mask's length, below 2^31 like every extent: the
// variants read mask_indptr as an index view, as qo_indptr.)
bool check_mask(const lb_tensor &mask, const lb_tensor &mask_indptr, int64_t B) {
    if (validate::is_absent(mask)) {
        if (!validate::is_absent(mask_indptr)) bad_argument("mask_indptr", "is given but custom_mask is not");
        return false;
    }
    validate::tensor(mask, "custom_mask", {LB_UINT8}, 1);
    validate::tensor(mask_indptr, "mask_indptr", {LB_INT32, LB_INT64}, 1);
    validate::extent_equals(mask_indptr, "mask_indptr", 0, B + 1, "B + 1 (qo_indptr length)");
    return true;
}

// On CUDA, every given tensor must be device memory of device.index.
void check_on_device(const std::vector<std::pair<const lb_tensor *, const char *>> &used, const lb_device &device) {
    if (device.type != LB_DEVICE_CUDA) return;
    for (const auto &[t, name] : used) validate::on_cuda_device(*t, name, device.index);
}

// Host values (CPU calls): an indptr is non-negative, non-decreasing and ends at <= limit;
// for qo_indptr every E_b <= max_len_extend.
void check_indptr_values(const lb_tensor &t, const char *name, int64_t B, int64_t limit, const char *what,
                         int64_t max_len_extend) {
    int64_t prev = validate::host_element(t, 0);
    if (prev < 0) bad_argument(name, std::string(name) + "[0] = " + std::to_string(prev) + " is negative");
    for (int64_t b = 1; b <= B; b++) {
        const int64_t v = validate::host_element(t, b);
        if (v < prev) {
            bad_argument(name, std::string(name) + "[" + std::to_string(b) + "] = " + std::to_string(v) +
                                   " is smaller than entry " + std::to_string(b - 1) + " = " + std::to_string(prev));
        }
        if (max_len_extend >= 0 && v - prev > max_len_extend) {
            bad_argument("max_len_extend", std::to_string(max_len_extend) + " is smaller than E_" + std::to_string(b - 1) +
                                               " = " + std::to_string(v - prev));
        }
        prev = v;
    }
    if (prev > limit) {
        bad_argument(name, std::string(name) + "[B] = " + std::to_string(prev) + " exceeds " + what + " = " +
                               std::to_string(limit));
    }
}

// Host values: the slots the requests' lists name are inside the cache.
void check_slot_values(const lb_tensor &kv_indptr, const lb_tensor &kv_indices, int64_t B, int64_t num_slots) {
    const int64_t used = validate::host_element(kv_indptr, B);
    for (int64_t i = validate::host_element(kv_indptr, 0); i < used; i++) {
        const int64_t slot = validate::host_element(kv_indices, i);
        if (slot < 0 || slot >= num_slots) {
            bad_argument("kv_indices", "kv_indices[" + std::to_string(i) + "] = " + std::to_string(slot) +
                                           " is outside [0, " + std::to_string(num_slots) + ") (k_buffer slots)");
        }
    }
}

const char *dt_text(Dt d) { return d == Dt::bf16 ? "bfloat16" : "float16"; }
const char *cache_text(Cache c) { return c == Cache::e4m3 ? "float8_e4m3fn" : "16-bit"; }
const char *form_text(lb_variant f) { return f == LB_BOUNDED ? "bounded" : "full-width"; }

// What this build has, read from the variant tables (generated from the manifest,
// cmake/families/extend_attention.cmake), for a refusal's message: for the call's target,
// form, dtype and cache, the head dims its SIMT variants serve (each bucket not inside a
// larger one, with and without the LSE output where the target has both) and its tensor-core
// variants' (Lq/Lv; "padded": any multiple of 8 up to it, Lq = Lv); when there are none
// for those facts, the (form, dtype, cache) combinations that have variants on the target.
template <size_t N>
std::string built_text(const Variant *table, size_t count, const TensorCoreVariant (&tc)[N], bool on_cuda, lb_variant form,
                       Dt dtype, Cache cache) {
    const Target target = on_cuda ? Target::cuda : Target::cpu;
    auto same_facts = [&](const Variant &v) {
        return v.target == target && v.form == form && v.dtype == dtype && v.cache == cache;
    };
    std::string text;
    for (bool lse : {true, false}) {
        std::string buckets;
        for (size_t i = 0; i < count; i++) {
            const Variant &v = table[i];
            if (!same_facts(v) || v.with_lse != lse) continue;
            bool inside = false;  // served entirely by a larger bucket of the same facts
            for (size_t j = 0; j < count && !inside; j++) {
                const Variant &w = table[j];
                inside = j != i && same_facts(w) && w.with_lse == lse && w.head_dim_qk >= v.head_dim_qk &&
                         w.head_dim_v >= v.head_dim_v && v.vector % w.vector == 0 &&
                         (w.head_dim_qk > v.head_dim_qk || w.head_dim_v > v.head_dim_v || w.vector < v.vector || j < i);
            }
            if (inside) continue;
            buckets += std::string(buckets.empty() ? "" : ", ") + "up to " + std::to_string(v.head_dim_qk) + "/" +
                       std::to_string(v.head_dim_v) + (v.vector == 1 ? " (any)" : " (multiples of " + std::to_string(v.vector) + ")");
        }
        if (!buckets.empty()) {
            text += std::string(text.empty() ? "" : "; ") + (on_cuda ? (lse ? "with lse " : "without lse ") : "") + buckets;
        }
    }
    std::string cores;
    for (const auto &v : tc) {
        if (!on_cuda || !v.pipeline.argv || v.form != form || v.dtype != dtype || v.cache != cache) continue;
        const std::string dims = std::to_string(v.head_dim_qk) + "/" + std::to_string(v.head_dim_v) +
                                 (v.padded ? " padded" : "");
        if (cores.find(dims) == std::string::npos) cores += std::string(cores.empty() ? "" : ", ") + dims;
    }
    if (!cores.empty()) text += std::string(text.empty() ? "" : "; ") + "tensor cores " + cores;
    const std::string where = on_cuda ? "this build's CUDA variants" : "this build's CPU variants";
    if (!text.empty()) {
        return where + " for " + form_text(form) + " " + dt_text(dtype) + " with a " + cache_text(cache) +
               " cache serve Lq/Lv " + text;
    }
    std::string combos;
    auto add = [&](lb_variant f, Dt d, Cache c) {
        const std::string one = std::string(form_text(f)) + " " + dt_text(d) + " with a " + cache_text(c) + " cache";
        if (combos.find(one) == std::string::npos) combos += std::string(combos.empty() ? "" : ", ") + one;
    };
    for (size_t i = 0; i < count; i++) {
        if (table[i].target == target) add(table[i].form, table[i].dtype, table[i].cache);
    }
    for (const auto &v : tc) {
        if (on_cuda && v.pipeline.argv) add(v.form, v.dtype, v.cache);
    }
    return where + ": " + (combos.empty() ? std::string("none") : combos);
}

// The variant of `table` for these facts whose head-dim bucket serves (Lq, Lv), the
// smallest such bucket (least padding). None: LB_ERROR_UNSUPPORTED naming `arg` and what is
// built (built_text over `table` and `tc_table`, only then: no per-call cost), or null when
// `tensor_core` (a tensor-core variant serves the facts instead). (`table`, `count`: a
// variant table may be empty, in a tree that builds only some variants.)
template <size_t N>
const Variant *pick_variant(const Variant *table, size_t count, const TensorCoreVariant (&tc_table)[N], const char *kernel,
                            const char *arg, bool on_cuda, lb_variant form, lb_dtype dt, lb_dtype cache_dt, int64_t Lq,
                            int64_t Lv, bool lse, const std::string &lse_text, const TensorCoreVariant *tensor_core) {
    const Dt want = dt_of(dt);
    const Cache cache = cache_of(cache_dt);
    const Target target = on_cuda ? Target::cuda : Target::cpu;
    const Variant *best = nullptr;
    for (const Variant *it = table; it != table + count; ++it) {
        const Variant &c = *it;
        if (c.target == target && c.form == form && c.dtype == want && c.cache == cache && c.serves(Lq, Lv) &&
            c.with_lse == lse) {
            // Least padded work first (q.k over Lq, P V over Lv), then the wider vector.
            const int64_t size = int64_t(c.head_dim_qk) + c.head_dim_v;
            if (!best || size < int64_t(best->head_dim_qk) + best->head_dim_v ||
                (size == int64_t(best->head_dim_qk) + best->head_dim_v && c.vector > best->vector)) {
                best = &c;
            }
        }
    }
    if (best || tensor_core) return best;
    throw Failure(LB_ERROR_UNSUPPORTED, "argument '" + std::string(arg) + "': no " + kernel + " " +
                                            (on_cuda ? "CUDA" : "CPU") + " variant for dtype " + validate::dtype_name(dt) +
                                            ", KV cache " + validate::dtype_name(cache_dt) + ", Lq = " + std::to_string(Lq) +
                                            ", Lv = " + std::to_string(Lv) + lse_text + ", " +
                                            form_text(form) + " (" +
                                            built_text(table, count, tc_table, on_cuda, form, want, cache) + ")");
}

// Stand-ins for absent or empty inputs (one-element views: the kernels clamp every index
// into the buffer's extent). The kernels never use their values (their flags are off, or
// no request has such a key), but may load them: on the CPU a host scalar; on CUDA nothing
// may be allocated, so an 8-byte aligned scalar inside the caller's q (its first row has
// Lq >= 8 elements: 16 contiguous bytes, every CUDA variant's granule).
struct StandIns {
    StandIns(bool on_cuda, const lb_tensor &q) {
        if (on_cuda) scalar = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(q.data) + 7) & ~uintptr_t{7});
    }
    lb_tensor view(lb_dtype type) const { return lb_tensor{scalar, type, 1, {1}, {1}}; }
    uint64_t host_scalar = 0;
    void *scalar = &host_scalar;
};

// Host values (K7 CPU calls): the ranges and the slots the kernel follows.
void check_values(const lb_extend_attention_args &a, int64_t B, int64_t T, int64_t num_slots) {
    check_indptr_values(a.qo_indptr, "qo_indptr", B, T, "T (q_extend rows)", a.max_len_extend);
    check_indptr_values(a.kv_indptr, "kv_indptr", B, a.kv_indices.shape[0], "len(kv_indices)", -1);
    check_slot_values(a.kv_indptr, a.kv_indices, B, num_slots);
}

// Custom-mask addressing (CPU calls): every request's E x (S + wko) block inside custom_mask.
void check_mask_values(const lb_extend_attention_args &a, int64_t B, bool use_wko) {
    const int64_t n = a.custom_mask.shape[0];
    for (int64_t b = 0; b < B; b++) {
        const int64_t E = validate::host_element(a.qo_indptr, b + 1) - validate::host_element(a.qo_indptr, b);
        const int64_t P = validate::host_element(a.kv_indptr, b + 1) - validate::host_element(a.kv_indptr, b);
        int64_t wko = 0;
        if (use_wko) {
            wko = validate::host_element(a.window_kv_offsets, b);
            if (wko < 0 || wko >= (int64_t{1} << 31)) {
                bad_argument("window_kv_offsets", "window_kv_offsets[" + std::to_string(b) + "] = " + std::to_string(wko) +
                                                      " is outside [0, 2^31)");
            }
        }
        const int64_t start = validate::host_element(a.mask_indptr, b);
        const int64_t size = E * (P + E + wko);
        if (start < 0 || (size > 0 && start > n - size)) {
            bad_argument("mask_indptr", "mask_indptr[" + std::to_string(b) + "] = " + std::to_string(start) +
                                            ": request " + std::to_string(b) + "'s mask of E x (P + E + wko) = " +
                                            std::to_string(E) + " x " + std::to_string(P + E + wko) +
                                            " bytes does not fit in custom_mask (" + std::to_string(n) + " bytes)");
        }
    }
}

void run_extend_attention(const lb_extend_attention_args &a, const lb_device &device) {
    // ---- arguments ----
    validate::device(device);
    validate::variant(a.variant);
    const lb_dtype dt = a.q_extend.dtype;
    if (dt != LB_FLOAT16 && dt != LB_BFLOAT16) {
        bad_argument("q_extend", std::string("expected dtype float16 or bfloat16, got ") + validate::dtype_name(dt));
    }
    validate::tensor(a.q_extend, "q_extend", {dt}, 3, kInput);
    const int64_t T = a.q_extend.shape[0], Hq = a.q_extend.shape[1], Lq = a.q_extend.shape[2];
    validate::tensor(a.k_extend, "k_extend", {dt}, 3, kInput);
    validate::extent_equals(a.k_extend, "k_extend", 0, T, "T (q_extend rows)");
    validate::extent_equals(a.k_extend, "k_extend", 2, Lq, "Lq (q_extend head dim)");
    const int64_t Hkv = a.k_extend.shape[1];
    if (Hkv < 1 || Hq % Hkv != 0) {
        bad_argument("k_extend", "shape " + validate::shape_text(a.k_extend) + ": Hkv = " + std::to_string(Hkv) +
                                     " must be >= 1 and divide Hq = " + std::to_string(Hq));
    }
    validate::tensor(a.v_extend, "v_extend", {dt}, 3, kInput);
    validate::extent_equals(a.v_extend, "v_extend", 0, T, "T (q_extend rows)");
    validate::extent_equals(a.v_extend, "v_extend", 1, Hkv, "Hkv (k_extend heads)");
    const int64_t Lv = a.v_extend.shape[2];
    validate::tensor(a.o_extend, "o_extend", {dt}, 3);
    validate::extent_equals(a.o_extend, "o_extend", 0, T, "T (q_extend rows)");
    validate::extent_equals(a.o_extend, "o_extend", 1, Hq, "Hq (q_extend heads)");
    validate::extent_equals(a.o_extend, "o_extend", 2, Lv, "Lv (v_extend head dim)");
    const lb_dtype cache_dt = check_k_buffer(a.k_buffer, dt);
    validate::extent_equals(a.k_buffer, "k_buffer", 1, Hkv, "Hkv (k_extend heads)");
    validate::extent_equals(a.k_buffer, "k_buffer", 2, Lq, "Lq (q_extend head dim)");
    const int64_t num_slots = a.k_buffer.shape[0];
    validate::tensor(a.v_buffer, "v_buffer", {cache_dt}, 3, kInput);
    validate::extent_equals(a.v_buffer, "v_buffer", 0, num_slots, "num_slots (k_buffer slots)");
    validate::extent_equals(a.v_buffer, "v_buffer", 1, Hkv, "Hkv (k_extend heads)");
    validate::extent_equals(a.v_buffer, "v_buffer", 2, Lv, "Lv (v_extend head dim)");

    validate::tensor(a.qo_indptr, "qo_indptr", {LB_INT32, LB_INT64}, 1);
    const int64_t B = a.qo_indptr.shape[0] - 1;
    if (B < 0) bad_argument("qo_indptr", "must have B + 1 >= 1 entries, got 0");
    validate::tensor(a.kv_indptr, "kv_indptr", {LB_INT32, LB_INT64}, 1);
    if (a.kv_indptr.shape[0] != B + 1) {
        bad_argument("kv_indptr", "has " + std::to_string(a.kv_indptr.shape[0]) + " entries, must equal B + 1 = " +
                                      std::to_string(B + 1) + " (qo_indptr length)");
    }
    validate::tensor(a.kv_indices, "kv_indices", {LB_INT32, LB_INT64}, 1);
    check_sinks(a.sinks, Hq, "Hq (q_extend heads)");
    const bool with_lse = !validate::is_absent(a.lse_extend);
    if (with_lse) {
        validate::tensor(a.lse_extend, "lse_extend", {LB_FLOAT32}, 2, validate::Layout::any_strides);
        validate::extent_equals(a.lse_extend, "lse_extend", 0, T, "T (q_extend rows)");
        validate::extent_equals(a.lse_extend, "lse_extend", 1, Hq, "Hq (q_extend heads)");
    }
    const bool has_mask = check_mask(a.custom_mask, a.mask_indptr, B);
    // window_kv_offsets is read only with a custom mask and a window (SGLang ignores it otherwise).
    const bool use_wko = has_mask && a.sliding_window_size > 0 && !validate::is_absent(a.window_kv_offsets);
    if (use_wko) {
        validate::tensor(a.window_kv_offsets, "window_kv_offsets", {LB_INT32, LB_INT64}, 1);
        validate::extent_equals(a.window_kv_offsets, "window_kv_offsets", 0, B, "B (qo_indptr length - 1)");
    }
    check_scalars(a.max_len_extend, a.sm_scale, a.logit_cap, a.k_scale, a.v_scale, a.xai_temperature_len);

    // Every given tensor lives where the call runs (CUDA: device memory of device.index).
    const bool on_cuda = device.type == LB_DEVICE_CUDA;
    std::vector<std::pair<const lb_tensor *, const char *>> used = {
        {&a.q_extend, "q_extend"},   {&a.k_extend, "k_extend"},   {&a.v_extend, "v_extend"},
        {&a.o_extend, "o_extend"},   {&a.k_buffer, "k_buffer"},   {&a.v_buffer, "v_buffer"},
        {&a.qo_indptr, "qo_indptr"}, {&a.kv_indptr, "kv_indptr"}, {&a.kv_indices, "kv_indices"}};
    if (!validate::is_absent(a.sinks)) used.push_back({&a.sinks, "sinks"});
    if (with_lse) used.push_back({&a.lse_extend, "lse_extend"});
    if (has_mask) {
        used.push_back({&a.custom_mask, "custom_mask"});
        used.push_back({&a.mask_indptr, "mask_indptr"});
    }
    if (use_wko) used.push_back({&a.window_kv_offsets, "window_kv_offsets"});
    check_on_device(used, device);

    // The variant: CPU variants always have the LSE output (a host scratch block stands in
    // when the caller passes none); on CUDA the variant without it. On CUDA a tensor-core
    // variant when one is built for the facts (and q/k/v have its layout, below); its LSE
    // rows have contiguous heads (a runtime head stride kept live across the key loop cost
    // 10 % more SASS per HMMA at head dim 128); any other LSE layout runs SIMT.
    const bool lse_heads_contiguous = !with_lse || a.lse_extend.shape[1] <= 1 || a.lse_extend.strides[1] == 1;
    const TensorCoreVariant *tcv =
        on_cuda ? find_tensor_core(kTensorCoreVariants, a.variant, dt, cache_dt, Lq, Lv, with_lse,
                                   key_view_level(a.k_buffer, a.v_buffer, &a.k_extend, &a.v_extend))
                : nullptr;
    const Variant *v = pick_variant(
        kVariants, sizeof kVariants / sizeof(Variant), kTensorCoreVariants, "K7", "q_extend", on_cuda, a.variant, dt, cache_dt,
        Lq, Lv, with_lse || !on_cuda, on_cuda ? (with_lse ? ", with lse_extend" : ", without lse_extend") : "",
        tcv);
    if (tcv && !lse_heads_contiguous) {
        if (!v) refuse_layout("lse_extend", Lq, Lv, "lse_extend with contiguous heads (stride 1 between heads)");
        tcv = nullptr;
    }
    // Index values are checked where the host can read them; on CUDA the kernel clamps every
    // data-dependent index instead (memory safety), and nothing is read back (no sync).
    if (!on_cuda) {
        check_values(a, B, T, num_slots);
        if (has_mask) check_mask_values(a, B, use_wko);
    }

    // ---- call ----
    // No query row: nothing to write, nothing runs (max_len_extend = 0: every E_b is 0, and
    // a kernel with zero query tiles could not be launched).
    if (B == 0 || T == 0 || a.max_len_extend == 0) return;
    if (!on_cuda && validate::host_element(a.qo_indptr, B) == validate::host_element(a.qo_indptr, 0)) return;

    PipelineCall call(device);
    // Stand-ins (StandIns), and with no cache slot at all a one-slot cache viewed on
    // k_extend/v_extend row 0 (T >= 1 here; the slot is never read: no request has a
    // prefix key).
    const StandIns stand_in(on_cuda, a.q_extend);
    auto scalar_view = [&](lb_dtype type) { return stand_in.view(type); };
    std::vector<float> lse_scratch;

    lb_tensor kv_indices = index_view(a.kv_indices);
    if (kv_indices.shape[0] == 0) kv_indices = scalar_view(LB_INT32);
    lb_tensor k_buffer = a.k_buffer, v_buffer = a.v_buffer;
    if (num_slots == 0) {
        // (An fp8 cache: the same bytes as e4m3 elements, strides in bytes.)
        const int64_t step = cache_dt == dt ? 1 : 2;
        k_buffer = lb_tensor{a.k_extend.data, cache_dt, 3, {1, Hkv, Lq},
                             {a.k_extend.strides[0] * step, a.k_extend.strides[1] * step, 1}};
        v_buffer = lb_tensor{a.v_extend.data, cache_dt, 3, {1, Hkv, Lv},
                             {a.v_extend.strides[0] * step, a.v_extend.strides[1] * step, 1}};
    }
    const bool has_sinks = !validate::is_absent(a.sinks);
    const lb_tensor sinks = has_sinks ? a.sinks : scalar_view(LB_FLOAT32);
    lb_tensor lse = a.lse_extend;
    if (!with_lse && !on_cuda) {
        lse_scratch.assign(static_cast<size_t>(T * Hq), 0.0f);
        lse = lb_tensor{lse_scratch.data(), LB_FLOAT32, 2, {T, Hq}, {Hq, 1}};
    }
    const lb_tensor mask = has_mask && a.custom_mask.shape[0] > 0 ? a.custom_mask : scalar_view(LB_UINT8);
    const lb_tensor mask_indptr = has_mask ? index_view(a.mask_indptr) : scalar_view(LB_INT32);
    const lb_tensor wko =
        use_wko && a.window_kv_offsets.shape[0] > 0 ? index_view(a.window_kv_offsets) : scalar_view(LB_INT32);

    // The tensor-core variant (above) when q/k/v have its layout: they are then passed as
    // flat pair views, followed by their row strides, Hkv and the slot count.
    TensorCoreArgs tc;
    const lb_tensor *qkv[5] = {&a.q_extend, &a.k_extend, &a.v_extend, &k_buffer, &v_buffer};
    static const char *const kQkvNames[5] = {"q_extend", "k_extend", "v_extend", "k_buffer", "v_buffer"};
    if (tcv && !tc.take_or_fall_back(qkv, kQkvNames, 5, v != nullptr, Lq, Lv)) tcv = nullptr;
    auto wrap_qkv = [&](int i, const char *name) { return tcv ? tc.wrap(call, i, name) : call.wrap_nd(*qkv[i], name); };
    halide_buffer_t *q = wrap_qkv(0, "q_extend");
    halide_buffer_t *k = wrap_qkv(1, "k_extend");
    halide_buffer_t *vv = wrap_qkv(2, "v_extend");
    halide_buffer_t *kb = wrap_qkv(3, "k_buffer");
    halide_buffer_t *vb = wrap_qkv(4, "v_buffer");
    halide_buffer_t *qo = call.wrap_1d(index_view(a.qo_indptr), "qo_indptr", B + 1);
    halide_buffer_t *kvp = call.wrap_1d(index_view(a.kv_indptr), "kv_indptr", B + 1);
    halide_buffer_t *kvi = call.wrap_1d(kv_indices, "kv_indices", kv_indices.shape[0]);
    halide_buffer_t *sk = call.wrap_nd(sinks, "sinks");
    halide_buffer_t *cm = call.wrap_nd(mask, "custom_mask");
    halide_buffer_t *mi = call.wrap_1d(mask_indptr, "mask_indptr", B + 1);
    halide_buffer_t *wk = call.wrap_nd(wko, "window_kv_offsets");
    bool has_mask_arg = has_mask, skip_prefix_mask = a.skip_prefix_custom_mask != 0, use_wko_arg = use_wko;
    bool skip_prefix = a.skip_prefix != 0, skip_extend = a.skip_extend != 0;
    int32_t xai_len = a.xai_temperature_len;
    halide_buffer_t *o = call.wrap_nd(a.o_extend, "o_extend");
    bool has_sinks_arg = has_sinks, causal = a.is_causal != 0;
    int32_t window = a.sliding_window_size, max_len = static_cast<int32_t>(a.max_len_extend);
    float sm_scale = a.sm_scale, logit_cap = a.logit_cap, k_scale = a.k_scale, v_scale = a.v_scale;
    std::vector<PipelineArg> args = {
        in("q_extend", q), in("k_extend", k), in("v_extend", vv), in("k_buffer", kb), in("v_buffer", vb),
        in("qo_indptr", qo), in("kv_indptr", kvp), in("kv_indices", kvi), in("sinks", sk),
        scalar("has_sinks", &has_sinks_arg), scalar("is_causal", &causal), scalar("sliding_window", &window),
        scalar("max_len_extend", &max_len), scalar("sm_scale", &sm_scale), scalar("logit_cap", &logit_cap),
        scalar("k_scale", &k_scale), scalar("v_scale", &v_scale),
        in("custom_mask", cm), in("mask_indptr", mi), in("window_kv_offsets", wk), scalar("has_mask", &has_mask_arg),
        scalar("skip_prefix_custom_mask", &skip_prefix_mask), scalar("use_wko", &use_wko_arg),
        scalar("xai_temperature_len", &xai_len), scalar("skip_prefix", &skip_prefix), scalar("skip_extend", &skip_extend)};
    if (tcv) {
        tc.kv_heads = static_cast<int32_t>(Hkv);
        tc.slots = static_cast<int32_t>(k_buffer.shape[0]);
        // The common case the tensor-core kernels specialise: no custom mask, cap or xai.
        tc.plain_logits = !has_mask && !(a.logit_cap > 0) && !(a.xai_temperature_len > 0);
        static const char *const kStrideNames[5] = {"q_extend_row_stride_16b", "k_extend_row_stride_16b",
                                                    "v_extend_row_stride_16b", "k_buffer_row_stride_16b",
                                                    "v_buffer_row_stride_16b"};
        tc.append_scalars(&args, kStrideNames);
    }
    args.push_back(out("o_extend", o));
    if (with_lse || !on_cuda) args.push_back(out("lse", call.wrap_nd(lse, "lse_extend")));
    call.run(tcv ? tcv->pipeline : v->pipeline, args);
}

// K8: validate, pick the variant, call (spec §3.8).
void run_extend_attention_unified(const lb_extend_attention_unified_args &a, const lb_device &device) {
    validate::device(device);
    validate::variant(a.variant);
    const lb_dtype dt = a.q.dtype;
    if (dt != LB_FLOAT16 && dt != LB_BFLOAT16) {
        bad_argument("q", std::string("expected dtype float16 or bfloat16, got ") + validate::dtype_name(dt));
    }
    validate::tensor(a.q, "q", {dt}, 3, kInput);
    const int64_t T = a.q.shape[0], Hq = a.q.shape[1], Lq = a.q.shape[2];
    const lb_dtype cache_dt = check_k_buffer(a.k_buffer, dt);
    validate::extent_equals(a.k_buffer, "k_buffer", 2, Lq, "Lq (q head dim)");
    const int64_t num_slots = a.k_buffer.shape[0], Hkv = a.k_buffer.shape[1];
    if (Hkv < 1 || Hq % Hkv != 0) {
        bad_argument("k_buffer", "shape " + validate::shape_text(a.k_buffer) + ": Hkv = " + std::to_string(Hkv) +
                                     " must be >= 1 and divide Hq = " + std::to_string(Hq));
    }
    if (num_slots < 1) bad_argument("k_buffer", "must have at least one slot (every key is in the cache)");
    validate::tensor(a.v_buffer, "v_buffer", {cache_dt}, 3, kInput);
    validate::extent_equals(a.v_buffer, "v_buffer", 0, num_slots, "num_slots (k_buffer slots)");
    validate::extent_equals(a.v_buffer, "v_buffer", 1, Hkv, "Hkv (k_buffer heads)");
    const int64_t Lv = a.v_buffer.shape[2];
    validate::tensor(a.o, "o", {dt}, 3);
    validate::extent_equals(a.o, "o", 0, T, "T (q rows)");
    validate::extent_equals(a.o, "o", 1, Hq, "Hq (q heads)");
    validate::extent_equals(a.o, "o", 2, Lv, "Lv (v_buffer head dim)");
    validate::tensor(a.qo_indptr, "qo_indptr", {LB_INT32, LB_INT64}, 1);
    const int64_t B = a.qo_indptr.shape[0] - 1;
    if (B < 0) bad_argument("qo_indptr", "must have B + 1 >= 1 entries, got 0");
    validate::tensor(a.kv_indptr, "kv_indptr", {LB_INT32, LB_INT64}, 1);
    validate::extent_equals(a.kv_indptr, "kv_indptr", 0, B + 1, "B + 1 (qo_indptr length)");
    validate::tensor(a.kv_indices, "kv_indices", {LB_INT32, LB_INT64}, 1);
    validate::tensor(a.prefix_lens, "prefix_lens", {LB_INT32, LB_INT64}, 1);
    validate::extent_equals(a.prefix_lens, "prefix_lens", 0, B, "B (qo_indptr length - 1)");
    const bool has_sinks = !validate::is_absent(a.sinks);
    check_sinks(a.sinks, Hq, "Hq (q heads)");
    const bool has_mask = check_mask(a.custom_mask, a.mask_indptr, B);
    check_scalars(a.max_len_extend, a.sm_scale, a.logit_cap, a.k_scale, a.v_scale, a.xai_temperature_len);

    const bool on_cuda = device.type == LB_DEVICE_CUDA;
    std::vector<std::pair<const lb_tensor *, const char *>> used = {
        {&a.q, "q"},                 {&a.o, "o"},                 {&a.k_buffer, "k_buffer"},
        {&a.v_buffer, "v_buffer"},   {&a.qo_indptr, "qo_indptr"}, {&a.kv_indptr, "kv_indptr"},
        {&a.kv_indices, "kv_indices"}, {&a.prefix_lens, "prefix_lens"}};
    if (has_sinks) used.push_back({&a.sinks, "sinks"});
    if (has_mask) {
        used.push_back({&a.custom_mask, "custom_mask"});
        used.push_back({&a.mask_indptr, "mask_indptr"});
    }
    check_on_device(used, device);
    // (On CUDA a tensor-core variant when one is built and q/k/v have its layout, as K7.)
    const TensorCoreVariant *tcv =
        on_cuda ? find_tensor_core(kUnifiedTensorCoreVariants, a.variant, dt, cache_dt, Lq, Lv, false,
                                   key_view_level(a.k_buffer, a.v_buffer, nullptr, nullptr))
                : nullptr;
    const Variant *v = pick_variant(kUnifiedVariants, sizeof kUnifiedVariants / sizeof(Variant), kUnifiedTensorCoreVariants, "K8",
                                    "q", on_cuda, a.variant, dt, cache_dt, Lq, Lv, false, "", tcv);
    if (!on_cuda) {
        // The ranges (as K7) and the unified list: N_b = P_b + E_b, slots in range, the masks.
        check_indptr_values(a.qo_indptr, "qo_indptr", B, T, "T (q rows)", a.max_len_extend);
        check_indptr_values(a.kv_indptr, "kv_indptr", B, a.kv_indices.shape[0], "len(kv_indices)", -1);
        for (int64_t b = 0; b < B; b++) {
            const int64_t E = validate::host_element(a.qo_indptr, b + 1) - validate::host_element(a.qo_indptr, b);
            const int64_t N = validate::host_element(a.kv_indptr, b + 1) - validate::host_element(a.kv_indptr, b);
            const int64_t P = validate::host_element(a.prefix_lens, b);
            if (P < 0 || P + E != N) {
                bad_argument("prefix_lens", "prefix_lens[" + std::to_string(b) + "] = " + std::to_string(P) +
                                                ": request " + std::to_string(b) + "'s list has N = " + std::to_string(N) +
                                                " keys, which must be P + E with E = " + std::to_string(E));
            }
            if (has_mask) {
                const int64_t start = validate::host_element(a.mask_indptr, b);
                if (start < 0 || (E * N > 0 && start > a.custom_mask.shape[0] - E * N)) {
                    bad_argument("mask_indptr", "mask_indptr[" + std::to_string(b) + "] = " + std::to_string(start) +
                                                    ": request " + std::to_string(b) + "'s E x N mask does not fit in "
                                                    "custom_mask (" + std::to_string(a.custom_mask.shape[0]) + " bytes)");
                }
            }
        }
        check_slot_values(a.kv_indptr, a.kv_indices, B, num_slots);
    }
    if (B == 0 || T == 0 || a.max_len_extend == 0) return;
    if (!on_cuda && validate::host_element(a.qo_indptr, B) == validate::host_element(a.qo_indptr, 0)) return;

    const StandIns stand_in(on_cuda, a.q);
    auto scalar_view = [&](lb_dtype type) { return stand_in.view(type); };
    lb_tensor kv_indices = index_view(a.kv_indices);
    if (kv_indices.shape[0] == 0) kv_indices = scalar_view(LB_INT32);
    const lb_tensor sinks = has_sinks ? a.sinks : scalar_view(LB_FLOAT32);
    const lb_tensor mask = has_mask && a.custom_mask.shape[0] > 0 ? a.custom_mask : scalar_view(LB_UINT8);
    const lb_tensor mask_indptr = has_mask ? index_view(a.mask_indptr) : scalar_view(LB_INT32);

    PipelineCall call(device);
    // The tensor-core variant (above) when q/k/v have its layout (as K7).
    TensorCoreArgs tc;
    const lb_tensor *qkv[3] = {&a.q, &a.k_buffer, &a.v_buffer};
    static const char *const kQkvNames[3] = {"q", "k_buffer", "v_buffer"};
    if (tcv && !tc.take_or_fall_back(qkv, kQkvNames, 3, v != nullptr, Lq, Lv)) tcv = nullptr;
    auto wrap_qkv = [&](int i, const char *name) { return tcv ? tc.wrap(call, i, name) : call.wrap_nd(*qkv[i], name); };
    halide_buffer_t *q = wrap_qkv(0, "q");
    halide_buffer_t *kb = wrap_qkv(1, "k_buffer");
    halide_buffer_t *vb = wrap_qkv(2, "v_buffer");
    halide_buffer_t *qo = call.wrap_1d(index_view(a.qo_indptr), "qo_indptr", B + 1);
    halide_buffer_t *kvp = call.wrap_1d(index_view(a.kv_indptr), "kv_indptr", B + 1);
    halide_buffer_t *kvi = call.wrap_1d(kv_indices, "kv_indices", kv_indices.shape[0]);
    halide_buffer_t *pl = call.wrap_1d(index_view(a.prefix_lens), "prefix_lens", B);
    halide_buffer_t *sk = call.wrap_nd(sinks, "sinks");
    halide_buffer_t *cm = call.wrap_nd(mask, "custom_mask");
    halide_buffer_t *mi = call.wrap_1d(mask_indptr, "mask_indptr", B + 1);
    halide_buffer_t *o = call.wrap_nd(a.o, "o");
    bool has_sinks_arg = has_sinks, causal = a.is_causal != 0, has_mask_arg = has_mask;
    int32_t window = a.sliding_window_size, max_len = static_cast<int32_t>(a.max_len_extend);
    int32_t xai_len = a.xai_temperature_len;
    float sm_scale = a.sm_scale, logit_cap = a.logit_cap, k_scale = a.k_scale, v_scale = a.v_scale;
    std::vector<PipelineArg> args = {
        in("q_extend", q), in("k_buffer", kb), in("v_buffer", vb),
        in("qo_indptr", qo), in("kv_indptr", kvp), in("kv_indices", kvi), in("prefix_lens", pl), in("sinks", sk),
        scalar("has_sinks", &has_sinks_arg), scalar("is_causal", &causal), scalar("sliding_window", &window),
        scalar("max_len_extend", &max_len), scalar("sm_scale", &sm_scale), scalar("logit_cap", &logit_cap),
        scalar("k_scale", &k_scale), scalar("v_scale", &v_scale),
        in("custom_mask", cm), in("mask_indptr", mi), scalar("has_mask", &has_mask_arg),
        scalar("xai_temperature_len", &xai_len)};
    if (tcv) {
        tc.kv_heads = static_cast<int32_t>(Hkv);
        tc.slots = static_cast<int32_t>(num_slots);
        tc.plain_logits = !has_mask && !(a.logit_cap > 0) && !(a.xai_temperature_len > 0);  // (as K7)
        static const char *const kStrideNames[3] = {"q_extend_row_stride_16b", "k_buffer_row_stride_16b",
                                                    "v_buffer_row_stride_16b"};
        tc.append_scalars(&args, kStrideNames);
    }
    args.push_back(out("o_extend", o));
    call.run(tcv ? tcv->pipeline : v->pipeline, args);
}

}  // namespace
}  // namespace livebound

extern "C" lb_status lb_extend_attention_fwd(const lb_extend_attention_args *args, lb_device device) {
    struct Call {
        const lb_extend_attention_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_extend_attention_fwd",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_extend_attention(*c->args, c->device);
        },
        &call);
}

extern "C" lb_status lb_extend_attention_fwd_unified(const lb_extend_attention_unified_args *args, lb_device device) {
    struct Call {
        const lb_extend_attention_unified_args *args;
        lb_device device;
    } call{args, device};
    return livebound::guarded_call(
        "lb_extend_attention_fwd_unified",
        [](const void *p) {
            const auto *c = static_cast<const Call *>(p);
            if (!c->args) livebound::bad_argument("args", "is null");
            livebound::run_extend_attention_unified(*c->args, c->device);
        },
        &call);
}
