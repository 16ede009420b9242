// K7 `extend_attention_fwd` / `_fwd_kernel` (spec §3.7, §3.9): two-stage extend attention.
// Request b has P_b prefix tokens in the paged KV cache (slots kv_indices[k0_b + j]) and
// E_b new tokens (rows q0_b .. q0_b + E_b - 1 of the ragged q/k/v_extend). Query row m of
// request b (position P + m) attends to
//   stage 1, prefix key j < P:     (P + m) - j <= W                        (W > 0)
//   stage 2, extend key n < E:     causal: n <= m;  W > 0: m - n <= W, and non-causal
//                                  also n - m <= W
// with one online softmax across both stages (fp32 state), per-head sinks in the
// denominator, logit cap, k_scale/v_scale on the prefix, and an optional natural-log LSE.
//
// Algorithm only. The work is indexed as SGLang's grid is: request b, head h, query tile qt
// (a Var of the algorithm: m = qt*BM + qi), and per stage a 2-level RDom over the keys
// (r.x = key within a chunk of BN, r.y = chunk). Every bound is a predicate of that RDom,
// never a loop bound:
//   * tile-by-chunk overlap predicates, next to the element predicates:
//       chunk_start < (qt*BM < E_b ? len : 0)            (the stage's length; none for a dead
//                                                          query tile: the #32109 exit)
//       tile_start_pos - chunk_end_pos <= W_eff          (window lower bound, both stages)
//       chunk_start - tile_end <= U                      (causal / two-sided window upper bound)
//     From these Halide's TrimNoOps derives the chunk loop's min and extent per tile, for
//     the extend stage (PR #34462's extend_start) AND the paged prefix (which SGLang's
//     hand-written bound leaves unbounded).
// "No window" is W_eff = select(W > 0, W, big), "not causal" U = select(causal, 0, W_eff):
// both runtime values, no specialisation.
//
// The full-width twin (`bounded=false`) has the same algorithm with the window, causal and
// tile predicates turned into value masks: every query tile of the grid (dead ones too)
// visits every chunk of its request's prefix and extend chunk, as the kernel before #32109
// and #34462 did, and a masked element leaves the state exactly as it was (select), so the
// two forms agree bit for bit.
//
// The request ranges, the window/causal limits and the chunk-level predicates live in
// common/extend_attention_tiles.h, shared with the chunk instruments (the tests' counter and
// `livebound picture`'s map, tools/instruments/chunk_instruments_generator.cpp). K7's and K8's differences are stated
// once, side by side (k7_semantics, k8_semantics); the CPU/SIMT formulation (generate())
// and the tensor-core one (define_tensor_core) read them from `sem` alone.
//
// Halide dimension order is innermost first: q_extend(d, h, t) is torch [T, Hq, Lq].
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "Halide.h"
#include "common/autoschedule.h"
#include "common/convergence_check.h"
#include "common/extend_attention_tiles.h"
#include "common/half_float.h"
#include "common/mma.h"

#include "extend_attention/cpu.h"
#include "extend_attention/cuda.h"
#include "extend_attention/cuda_tensor_core.h"

namespace livebound {
namespace {

using namespace Halide;
using extend_attention::IndexRead;
using extend_attention::Limits;
using extend_attention::RequestRanges;
using extend_attention::TileShape;
using extend_attention::chunk_predicates;
using extend_attention::request_ranges;
using extend_attention::stored_ranges;
using extend_attention::window_limits;

class ExtendAttention : public Generator<ExtendAttention> {
public:
    // ---- variant facts (compile time) ----
    // Element type of q/k/v_extend, k/v_buffer and o_extend: float16 or bfloat16.
    GeneratorParam<Type> dtype{"dtype", Float(16)};
    // true: the KV cache (k_buffer, v_buffer) holds float8 e4m3fn bytes (torch
    // float8_e4m3fn), each decoded exactly where it is read: to fp32 (e4m3_to_float), or on
    // tensor cores byte pairs to 16-bit pairs times 2^-8 (e4m3_pair_to_16bit_pair; the 2^8
    // folded into k_scale / v_scale). The scores and values are then those of a 16-bit cache
    // holding the same values.
    GeneratorParam<bool> fp8_kv_cache{"fp8_kv_cache", false};
    // Head dims Lq (q, k) and Lv (v, o): the head-dim bucket, the largest dims the variant
    // serves. CPU/SIMT formulation: the call's own dims lq <= Lq, lv <= Lv are the tensors'
    // extents, multiples of cpu_vector (any dims when cpu_vector = 1); the lanes past them
    // are masked (q) or never written (o). Tensor cores: Lq = Lv, exact dims, or with
    // tc_padded_head_dim the call's lq = lv (o's extent) a multiple of 8 up to the bucket,
    // masked the same way in 16-byte groups.
    GeneratorParam<int> head_dim_qk{"head_dim_qk", 128};
    GeneratorParam<int> head_dim_v{"head_dim_v", 128};
    // true: derived bounds (product); false: full-width twin.
    GeneratorParam<bool> bounded{"bounded", true};
    // false: no LSE output (the runtime's choice when the caller passes none; on CUDA it
    // cannot hand the kernel a scratch block without allocating).
    GeneratorParam<bool> with_lse{"with_lse", true};
    // true: K8 `extend_attention_fwd_unified` (spec §3.8) instead of K7: one stage over
    // request b's unified key list kv_indices[kv_indptr[b] ..], N_b = P_b + E_b cache
    // slots (prefix then extend), prefix_lens[b] = P_b; no k/v_extend, no LSE.
    GeneratorParam<bool> unified{"unified", false};
    // BLOCK_M / BLOCK_N: query rows per tile, keys per chunk.
    GeneratorParam<int> block_m{"block_m", extend_attention::Knobs{}.block_m};
    GeneratorParam<int> block_n{"block_n", extend_attention::Knobs{}.block_n};
    // ---- schedule knobs ----
    // fp32 lanes of the head-dim vectors (also the granule of the call's head dims, above).
    GeneratorParam<int> cpu_vector{"cpu_vector", extend_attention::Knobs{}.cpu_vector};
    // Head-dim elements per online-softmax state (see generate()); 0 = the target's choice.
    GeneratorParam<int> acc_group{"acc_group", 0};
    // true: the CUDA tensor-core formulation (define_tensor_core; block_m must be 16, one
    // warp per 16-row q tile; q/k/v are read as b32 pairs of 16-bit elements).
    GeneratorParam<bool> tensor_core{"tensor_core", false};
    // Tensor-core schedule knobs: warps (16-row q tiles) per block, and whether a warp keeps
    // its Q fragments in registers across the key loop (-1: the schedule's choice by head dim).
    GeneratorParam<int> tc_warps{"tc_warps", extend_attention::TensorCoreKnobs{}.warps};
    GeneratorParam<int> tc_q_in_registers{"tc_q_in_registers", -1};
    // Warps per 16-row q tile, each owning Lv / tc_o_split columns of O (part of the
    // fragment coordinates). The variant manifest chooses it per head dim (_lb_tc_tiles in
    // cmake/families/extend_attention.cmake: 2 above 128), next to the key tile.
    GeneratorParam<int> tc_o_split{"tc_o_split", 1};
    // Tensor cores: the call's head dim at run time (above) instead of exactly head_dim. A
    // separate variant: the runtime head-dim arithmetic costs the key loop 6-8 % more
    // instructions (head dim 96: 11.0 / 10.3 SASS per HMMA in the two common-case key
    // loops against 10.2 / 9.7 exact; autotune/records/extend_attention.jsonl).
    GeneratorParam<bool> tc_padded_head_dim{"tc_padded_head_dim", false};
    // Tensor cores with O split over warps (tc_o_split > 1): true = the q tile's warps
    // compute S together, each 1 / tc_o_split of the Lq reduction, and add their parts
    // through shared memory (two block barriers per key tile), instead of each computing the
    // whole of S (MLA 576/512 over four warps: 39 % of the mma work useful -> all of it).
    // tc_warps / tc_o_split q tiles per block: one (the barrier is the block's) or more (each
    // q tile's warps meet at their own named barrier and use their own part of the exchange;
    // the q tiles of a block read the same K/V lines, L1 reuse as in the unshared form).
    GeneratorParam<bool> tc_share_s{"tc_share_s", false};
    // With S shared: true = a key tile's V fragments come before the exchange in the PTX (its
    // first barrier takes a V fragment as an order token); ptxas issues them right after the
    // second barrier (SASS, 576/512), so their latency overlaps the gets and the softmax;
    // false = after the softmax, where PV waits for them.
    GeneratorParam<bool> tc_share_v_first{"tc_share_v_first", false};
    // With S shared: true = the exchange moves a lane's two neighbouring S elements per
    // shared access (8 bytes: lb_share_put2 / lb_share_get2), half the shared instructions
    // of false (4 bytes each). The sums, and so the bits, are the same.
    GeneratorParam<bool> tc_share_wide{"tc_share_wide", false};
    // With S shared, one q tile per block: true = each thread stores its Q fragments once in
    // the helpers' shared array lb_q_stage and reloads them from there per key tile (no
    // barrier: a thread reads back only its own words); false = reloaded from global memory.
    GeneratorParam<bool> tc_q_stage{"tc_q_stage", false};
    // With S shared, one q tile per block: true = one block barrier per key tile in the last
    // key-tile stage (K7's extend keys, K8's list), its tiles alternating between two
    // exchange buffers by the tile's parity; earlier stages (K7's prefix) keep two barriers
    // and a third buffer of their own. false = two barriers per tile in every stage, one
    // buffer. See define_tensor_core for why it is safe.
    GeneratorParam<bool> tc_share_one_barrier{"tc_share_one_barrier", false};
    // With S shared and the wide exchange: true = each warp adds the parts of its own n-tiles
    // of S only (n-tile n belongs to warp n % tc_o_split) and puts the sums back; after a
    // second barrier every warp gets the sums (a reduce-scatter, then an all-gather: per
    // lane 16 shared loads of 8 bytes where false has 32, the same sums in the same order).
    // false = every warp gets every part and adds them all.
    GeneratorParam<bool> tc_share_scatter{"tc_share_scatter", false};
    // With S shared: true = a lane loads its K pairs 16 bytes at a time, one 32-element chunk
    // (two of the warp's mma steps) per load, instead of 8 bytes per step: half the K load
    // instructions (a quad then reads 64 contiguous bytes, two whole sectors). With an odd
    // count of steps per warp, its last step comes from a 16-byte load of which it uses half.
    GeneratorParam<bool> tc_share_k_chunks{"tc_share_k_chunks", false};
    // MLA's absorbed layout, a fact of the call the runtime checks before it picks such a
    // variant: every stage's values are the first Lv dims of its keys (v_buffer a view of
    // k_buffer, and for K7 v_extend a view of k_extend), so V(d, key) = K(d, key), d < Lv.
    // With S shared, a warp's K fragments of its first Lv dims are then the V fragments of
    // its O columns (movmatrix turns either), and no V is loaded: the warp owns the O
    // columns its S steps cover (values_col). v_buffer and v_extend are not read.
    GeneratorParam<bool> values_in_keys{"values_in_keys", false};
    // With values_in_keys, K7 only: V from K in the list stage alone (v_buffer a view of
    // k_buffer); the extend stage loads v_extend, which may be a copy (SGLang's K7 call
    // passes v.contiguous()), at the O columns the warp owns (values_col).
    GeneratorParam<bool> values_in_keys_list_only{"values_in_keys_list_only", false};

    // All inputs and outputs are added by configure() (their types are variant facts).
    // (Lq, Hq, T) dtype = torch [T, Hq, Lq], any head/token strides: queries.
    Input<Buffer<>> *q_extend = nullptr;
    // (Lq, Hkv, T) dtype = torch [T, Hkv, Lq]: keys of the extend tokens.
    Input<Buffer<>> *k_extend = nullptr;
    // (Lv, Hkv, T) dtype = torch [T, Hkv, Lv]: values of the extend tokens.
    Input<Buffer<>> *v_extend = nullptr;
    // (Lq, Hkv, num_slots) dtype (or e4m3 bytes, fp8_kv_cache) = torch [num_slots, Hkv, Lq]:
    // the KV cache keys.
    Input<Buffer<>> *k_buffer = nullptr;
    // (Lv, Hkv, num_slots) as k_buffer = torch [num_slots, Hkv, Lv]: the KV cache values.
    Input<Buffer<>> *v_buffer = nullptr;
    // Index inputs are int32 with any stride: the runtime passes an int64 tensor as the view
    // of its low 32-bit words (stride 2), so one variant serves either dtype.
    // [B + 1] int32: q0_b = qo_indptr[b], E_b = qo_indptr[b + 1] - q0_b.
    Input<Buffer<int32_t, 1>> *qo_indptr = nullptr;
    // [B + 1] int32: k0_b = kv_indptr[b], P_b = kv_indptr[b + 1] - k0_b (K8: the unified
    // list's length N_b = P_b + E_b).
    Input<Buffer<int32_t, 1>> *kv_indptr = nullptr;
    // [>= 1] int32: cache slot of each prefix key (one dummy entry when sum P_b = 0).
    Input<Buffer<>> *kv_indices = nullptr;
    // K8 only, [B] int32: P_b, the prefix part of the unified list.
    Input<Buffer<int32_t, 1>> *prefix_lens = nullptr;
    // [Hq] float32: per-head sink logits (read only when has_sinks).
    Input<Buffer<float, 1>> *sinks = nullptr;
    Input<bool> *has_sinks = nullptr;
    Input<bool> *is_causal = nullptr;
    // Sliding window W; W <= 0 is off.
    Input<int32_t> *sliding_window = nullptr;
    // >= max_b E_b: sizes the query-tile axis, cdiv(max_len_extend, BM) tiles.
    Input<int32_t> *max_len_extend = nullptr;
    // 0 -> 1/sqrt(Lq).
    Input<float> *sm_scale = nullptr;
    // > 0: s = cap * tanh(s / cap).
    Input<float> *logit_cap = nullptr;
    // Dequantisation scales of the cache (prefix) K and V.
    Input<float> *k_scale = nullptr;
    Input<float> *v_scale = nullptr;
    // Spec §3.7.1-3:
    // [>= 1] uint8, flat: request b's E x (P + E + wko) mask at mask_indptr[b]; nonzero =
    // visible (read only when has_mask; the runtime passes one dummy byte otherwise).
    Input<Buffer<uint8_t, 1>> *custom_mask = nullptr;
    // [B + 1] int32, any stride: start of request b's mask (read only when has_mask). An
    // index input like qo_indptr (an int64 tensor arrives as its low words): a valid start is
    // at most custom_mask's length, which is below 2^31 (every tensor extent is).
    Input<Buffer<int32_t, 1>> *mask_indptr = nullptr;
    // [>= 1] int32: leading mask columns to skip per request (read only when use_wko).
    Input<Buffer<int32_t, 1>> *window_kv_offsets = nullptr;
    Input<bool> *has_mask = nullptr;
    // true: the custom mask is not applied to prefix keys.
    Input<bool> *skip_prefix_custom_mask = nullptr;
    // true: window_kv_offsets is read (custom mask given, W > 0, offsets given).
    Input<bool> *use_wko = nullptr;
    // L > 0: s *= (P + m > L) ? log2(P + m) / log2(L) : 1 (after the cap).
    Input<int32_t> *xai_temperature_len = nullptr;
    // Stage 1 (prefix) / stage 2 (extend chunk) not computed.
    Input<bool> *skip_prefix = nullptr;
    Input<bool> *skip_extend = nullptr;

    // Tensor-core variants: the token-row stride of q_extend, k_extend, v_extend, k_buffer,
    // v_buffer (K8: q, k_buffer, v_buffer) in 16-byte units (= row stride in elements / 8).
    // Indexed by view: 0 q_extend, 1 k_extend, 2 v_extend, 3 k_buffer, 4 v_buffer (K8: no 1, 2).
    Input<int32_t> *row_stride_16b[5] = {};
    // Tensor-core variants: Hkv and the cache's slot count (the flat views do not carry them).
    Input<int32_t> *num_kv_heads = nullptr, *num_cache_slots = nullptr;
    // Tensor-core variants: no custom mask, no logit cap, no xai temperature (the runtime's
    // verdict, passed as one flag: the schedule specialises on it, and Halide substitutes a
    // specialisation condition only when it is a plain boolean parameter).
    Input<bool> *plain_logits_in = nullptr;
    // (Lv, Hq, T) dtype = torch [T, Hq, Lv]: every row of every request written.
    Output<Buffer<>> *o_extend = nullptr;
    // (Hq, T) float32 = torch [T, Hq]: natural-log LSE (-inf for a row that sees nothing).
    Output<Buffer<float, 2>> *lse = nullptr;

    void configure() {
        const Type dt = dtype;
        if (!(dt == Float(16) || dt == BFloat(16))) throw std::invalid_argument("extend_attention: dtype must be float16 or bfloat16");
        if (unified && with_lse) throw std::invalid_argument("extend_attention: K8 (unified) has no LSE output");
        // Tensor-core variants read q/k/v as b32 pairs (two 16-bit elements each).
        // Tensor-core variants: flat 1-D views of b32 pairs (two 16-bit elements each) over
        // the tensors' storage, addressed by the kernel itself (see generate()).
        const Type in_t = tensor_core ? UInt(32) : dt;
        const int in_dims = tensor_core ? 1 : 3;
        q_extend = add_input<Buffer<>>("q_extend", in_t, in_dims);
        if (!unified) {
            k_extend = add_input<Buffer<>>("k_extend", in_t, in_dims);
            v_extend = add_input<Buffer<>>("v_extend", in_t, in_dims);
        }
        // (An fp8 cache: its bytes, as uint8; tensor cores: byte pairs, as uint16.)
        const Type cache_t = fp8_kv_cache ? (tensor_core ? UInt(16) : UInt(8)) : in_t;
        k_buffer = add_input<Buffer<>>("k_buffer", cache_t, in_dims);
        v_buffer = add_input<Buffer<>>("v_buffer", cache_t, in_dims);
        qo_indptr = add_input<Buffer<int32_t, 1>>("qo_indptr");
        kv_indptr = add_input<Buffer<int32_t, 1>>("kv_indptr");
        kv_indices = add_input<Buffer<>>("kv_indices", Int(32), 1);
        if (unified) prefix_lens = add_input<Buffer<int32_t, 1>>("prefix_lens");
        sinks = add_input<Buffer<float, 1>>("sinks");
        has_sinks = add_input<bool>("has_sinks");
        is_causal = add_input<bool>("is_causal");
        sliding_window = add_input<int32_t>("sliding_window");
        max_len_extend = add_input<int32_t>("max_len_extend");
        sm_scale = add_input<float>("sm_scale");
        logit_cap = add_input<float>("logit_cap");
        k_scale = add_input<float>("k_scale");
        v_scale = add_input<float>("v_scale");
        custom_mask = add_input<Buffer<uint8_t, 1>>("custom_mask");
        mask_indptr = add_input<Buffer<int32_t, 1>>("mask_indptr");
        if (!unified) window_kv_offsets = add_input<Buffer<int32_t, 1>>("window_kv_offsets");
        has_mask = add_input<bool>("has_mask");
        if (!unified) {
            skip_prefix_custom_mask = add_input<bool>("skip_prefix_custom_mask");
            use_wko = add_input<bool>("use_wko");
        }
        xai_temperature_len = add_input<int32_t>("xai_temperature_len");
        if (!unified) {
            skip_prefix = add_input<bool>("skip_prefix");
            skip_extend = add_input<bool>("skip_extend");
        }
        if (tensor_core) {
            // Row (token / slot) strides of q/k/v in 16-byte units (4 pairs; an fp8 cache's in
            // 8-byte units, the same 8 elements): the fragment loads' addresses are then
            // provably aligned inside the kernel.
            const char *names[5] = {"q_extend", "k_extend", "v_extend", "k_buffer", "v_buffer"};
            for (int which = 0; which < 5; which++) {
                if (unified && (which == 1 || which == 2)) continue;  // K8 has no k/v_extend
                row_stride_16b[which] = add_input<int32_t>(std::string(names[which]) + "_row_stride_16b");
            }
            num_kv_heads = add_input<int32_t>("num_kv_heads");
            num_cache_slots = add_input<int32_t>("num_slots");
            plain_logits_in = add_input<bool>("plain_logits");
        }
        o_extend = add_output<Buffer<>>("o_extend", dt, 3);
        if (with_lse) lse = add_output<Buffer<float, 2>>("lse");
    }

    void generate() {
        const int Lq = head_dim_qk, Lv = head_dim_v, BM = block_m, BN = block_n, V = cpu_vector;
        if (Lq <= 0 || Lq % V != 0 || Lv <= 0 || Lv % V != 0) {
            throw std::invalid_argument("extend_attention: head dims must be positive multiples of cpu_vector");
        }

        // ---- interface ----
        // Tensor-core variants read q/k/v through flat views of b32 pairs: element (d, head,
        // row) is pair d/2 at row * row_stride + head * (head_dim / 2), with heads
        // contiguous inside a row and row strides a multiple of 4 pairs (16 bytes, an input
        // in 16-byte units), the storage 16-byte aligned. The kernel computes these
        // addresses itself, so Halide knows every fragment load is a 16-byte load (a
        // buffer's own stride is an opaque kernel argument). The runtime passes such views
        // or picks a SIMT variant.
        if (tensor_core) {
            for (Input<Buffer<>> *in : {q_extend, k_extend, v_extend, k_buffer, v_buffer}) {
                if (!in) continue;
                in->dim(0).set_min(0).set_stride(1);
                // (fp8 caches: 8 bytes hold the 8 elements of a 16-byte group.)
                in->set_host_alignment(fp8_kv_cache && (in == k_buffer || in == v_buffer) ? 8 : 16);
            }
        } else {
            // Head dims at run time (up to the bucket Lq / Lv): no extent constraint.
            for (Input<Buffer<>> *in : {q_extend, k_extend, v_extend, k_buffer, v_buffer}) {
                if (!in) continue;
                in->dim(0).set_min(0).set_stride(1);
                in->dim(1).set_min(0);
                in->dim(2).set_min(0);
            }
        }
        o_extend->dim(0).set_min(0).set_stride(1);
        if (tensor_core && !tc_padded_head_dim) o_extend->dim(0).set_extent(Lv);
        // The LSE in any layout ([T, Hq] with any strides, a transposed one included).
        if (lse && !tensor_core) lse->dim(0).set_stride(Expr());
        if (prefix_lens) prefix_lens->dim(0).set_min(0).set_stride(Expr());
        qo_indptr->dim(0).set_min(0).set_stride(Expr());
        kv_indptr->dim(0).set_min(0).set_stride(Expr());
        kv_indices->dim(0).set_min(0).set_stride(Expr());
        sinks->dim(0).set_min(0).set_stride(Expr());

        // (Tensor-core variants: Hq and T from the output, Hkv and the slot count inputs.)
        Expr Hq = tensor_core ? o_extend->dim(1).extent() : q_extend->dim(1).extent();
        Expr Hkv = tensor_core ? Expr(*num_kv_heads) : k_buffer->dim(1).extent();
        Expr T = tensor_core ? o_extend->dim(2).extent() : q_extend->dim(2).extent();
        Expr num_slots = tensor_core ? Expr(*num_cache_slots) : k_buffer->dim(2).extent();
        Expr num_indices = kv_indices->dim(0).extent();
        Expr B = qo_indptr->dim(0).extent() - 1;
        Expr max_ext = max(*max_len_extend, 0);
        Expr num_q_tiles = (max_ext + (BM - 1)) / BM;

        // ---- the request's ranges (common/extend_attention_tiles.h), once per request ----
        IndexRead read_qo = [this](const Expr &i) { return (*qo_indptr)(i); };
        IndexRead read_kv = [this](const Expr &i) { return (*kv_indptr)(i); };
        IndexRead read_prefix = [this](const Expr &i) { return (*prefix_lens)(i); };
        const RequestRanges ranges =
            request_ranges(b, read_qo, read_kv, prefix_lens ? &read_prefix : nullptr,
                           prefix_lens ? prefix_lens->dim(0).extent() : Expr(), T, num_indices, max_ext);
        lens(b) = Tuple(ranges.stored());
        const RequestRanges req = stored_ranges(lens(b), ranges.separate_pos0);
        Expr q0_b = req.q0, E_b = req.E, k0_b = req.k0, P_b = req.P;

        // Every position difference of the call is below `big` (the window "off" value).
        Expr big = min(num_indices + num_q_tiles * BM + BN, Expr(1 << 29));
        Expr kvh = clamp(h / max(Hq / max(Hkv, 1), 1), 0, Hkv - 1);  // GQA

        // ---- attention's semantics: K7's or K8's, stated side by side below; every
        //      formulation reads only `sem` ----
        custom_mask->dim(0).set_min(0).set_stride(Expr());
        mask_indptr->dim(0).set_min(0).set_stride(Expr());
        if (window_kv_offsets) window_kv_offsets->dim(0).set_min(0).set_stride(Expr());
        Semantics sem = unified ? k8_semantics(req, big) : k7_semantics(req, big);
        if (tensor_core) sem.plain_logits = *plain_logits_in;
        num_stages = sem.num_stages;

        if (tensor_core) {
            define_tensor_core(sem, Hq, T, num_slots, num_indices, B, num_q_tiles, kvh);
            return;
        }

        Expr m = qt * BM + qi;                       // query row within the request
        Expr q_row = clamp(q0_b + m, 0, T - 1);

        // ---- the key RDoms, per stage: x = key within a chunk, y = chunk. Stage 0 is the
        //      key list (K7 the paged prefix, K8 the unified list), stage 1 K7's extend keys.
        //      The chunk-level predicates mention only the chunk RVar and the tile:
        //      TrimNoOps solves them for the chunk; then the element-level ones. The
        //      full-width twin turns the element predicates into value masks (vis[st]).
        const TileShape tiles{BM, BN, bounded, sem.list_has_upper};
        const Expr chunks[2] = {(num_indices + (BN - 1)) / BN, (num_q_tiles * BM + (BN - 1)) / BN};
        RDom *keys[2] = {&rp, &re};
        const char *key_names[2] = {"rp", "re"};
        Expr key_of[2], vis[2];
        for (int st = 0; st < sem.num_stages; st++) {
            RDom &r = *keys[st];
            r = RDom(0, BN, 0, chunks[st], key_names[st]);
            key_of[st] = r.y * BN + r.x;
            for (const Expr &c : chunk_predicates(st, r.y, qt, tiles, req, sem.limits)) r.where(c);
            vis[st] = sem.visible(st, m, key_of[st]);
            r.where(key_of[st] < sem.length(st));
            Expr mask = sem.mask(st, m, key_of[st]), run = sem.run(st);
            if (bounded) {
                r.where(m < E_b);   // rows past E_b of the last tile: no work
                r.where(vis[st]);
                if (run.defined()) r.where(run);  // loop-invariant: the whole stage or nothing
                r.where(mask);
            } else {
                vis[st] = run.defined() ? vis[st] && run && mask : vis[st] && mask;
            }
        }

        // ---- logits ----
        // q.k as Lq/V lanes of partial sums (vectorised over the lane), then summed:
        // the same order in every variant. Stage 0 keys are cache slots kv_indices[k0_b +
        // key], stage 1 keys extend rows q0_b + key.
        rd = RDom(0, Lq / V, "rd");
        Expr jc = clamp(k0_b + key, 0, num_indices - 1);
        Expr slot_raw = (*kv_indices)(jc);
        Expr slot = cast<int32_t>(clamp(slot_raw, cast(slot_raw.type(), 0), cast(slot_raw.type(), num_slots - 1)));
        Expr n_row = clamp(q0_b + key, 0, T - 1);
        // The query tile in fp32: q_tile(dq, qi, qt, h, b) = q[q0_b + qt*BM + qi, h, dq].
        // The call's head dims: lanes dq >= lq of q are 0 (so q.k ignores them), and every
        // q/k/v element index is kept inside its row (in_row).
        Expr lq = q_extend->dim(0).extent(), lv = o_extend->dim(0).extent();
        q_tile(dq, qi, qt, h, b) = select(dq < lq, widen_to_float((*q_extend)(in_row(dq, lq), h, q_row)), 0.0f);
        Expr qv = q_tile(rd * V + lane, qi, qt, h, b);
        Func dots[2] = {dot_p, dot_e}, scores[2] = {score_p, score_e};
        for (int st = 0; st < sem.num_stages; st++) {
            Func dot = dots[st];
            Input<Buffer<>> *k_in = st == 0 ? k_buffer : k_extend;
            Expr k_row = st == 0 ? slot : n_row;
            dot(lane, key, qi, qt, h, b) = 0.0f;
            dot(lane, key, qi, qt, h, b) =
                strict_float(dot(lane, key, qi, qt, h, b) + qv * element_value(k_in, (*k_in)(in_row(rd * V + lane, lq), kvh, k_row)));
            Expr sum = dot(0, key, qi, qt, h, b);
            for (int l = 1; l < V; l++) sum += dot(l, key, qi, qt, h, b);
            // strict_float (here and in the state update): Halide and LLVM may not
            // reassociate or contract these, so every variant rounds the same operations
            // the same way.
            scores[st](key, qi, qt, h, b) = strict_float(sem.logit(sum, st == 0, m));
        }

        // ---- one online softmax across the stages. The state of row (qi, qt, h, b) is
        //      split into groups of G = acc_group head-dim elements, each a Tuple
        //      {running max, denominator, acc[g*G + 0 .. g*G + G-1]}: every group runs the
        //      same max/denominator recurrence, so every element sees the same operations
        //      whatever G (a state layout choice of the target's schedule, see
        //      schedules/extend_attention/).
        state(g, qi, qt, h, b) = Tuple(initial_state());
        for (int st = 0; st < sem.num_stages; st++) {
            const Expr &kk = key_of[st];
            Expr v_row = st == 0 ? cast<int32_t>(clamp(cast<int64_t>((*kv_indices)(clamp(k0_b + kk, 0, num_indices - 1))),
                                                       cast<int64_t>(0), cast<int64_t>(num_slots - 1)))
                                 : clamp(q0_b + kk, 0, T - 1);
            Input<Buffer<>> *v_in = st == 0 ? v_buffer : v_extend;
            auto v = [&](const Expr &dv) {
                Expr val = element_value(v_in, (*v_in)(in_row(dv, lv), kvh, v_row));
                return st == 0 && sem.list_value_scale.defined() ? val * sem.list_value_scale : val;
            };
            online_update(scores[st](kk, qi, qt, h, b), v, bounded ? Expr() : vis[st]);
        }

        // ---- finish: sinks, then the semantics' normalisation (an empty row -> 0, LSE
        //      -inf; K8 also * v_scale) ----
        const int G = acc_group_size();
        Expr gd = d / G;
        Expr mx = state(gd, qi, qt, h, b)[0], den = state(gd, qi, qt, h, b)[1];
        std::vector<Expr> accs;
        for (int i = 0; i < G; i++) accs.push_back(state(gd, qi, qt, h, b)[2 + i]);
        Expr acc = G == 1 ? accs[0] : mux(d % G, accs);  // a constant index once d is unrolled
        Expr sink = (*sinks)(clamp(h, 0, sinks->dim(0).extent() - 1));
        Expr mf = select(*has_sinks, max(mx, sink), mx);
        Expr keep = select(mx == mf, 1.0f, exp(mx - mf));    // exp(-inf - sink) = 0
        Expr denf = den * keep + select(*has_sinks, exp(sink - mf), 0.0f);
        Expr accf = acc * keep;
        Expr o_val = sem.normalise(accf, denf);
        Expr lse_val = select(denf > 0.0f, log(denf) + mf, Expr(-std::numeric_limits<float>::infinity()));

        // ---- outputs: rows m < E_b of every live tile, scattered to row q0_b + m ----
        // (x = qi, y = qt, z = b, w = head: the head is an RVar too, so that the o and lse
        // scatters have the same loops, whatever the output buffers' extents.)
        ro = RDom({{0, BM}, {0, num_q_tiles}, {0, B}, {0, Hq}}, "ro");
        if (bounded) ro.where(likely(ro.y * BM < lens(ro.z)[1]));
        ro.where(ro.y * BM + ro.x < lens(ro.z)[1]);
        Expr row = clamp(lens(ro.z)[0] + ro.y * BM + ro.x, 0, T - 1);
        Func fin("finish");
        fin(d, qi, qt, h, b) = Tuple(o_val, lse_val);
        Func o = *o_extend;
        o(d, h, t) = undef(Type(dtype));
        o(d, ro.w, row) = narrow_from_float(Type(dtype), fin(d, ro.x, ro.y, ro.w, ro.z)[0]);
        if (with_lse) {
            Func l = *lse;
            l(h, t) = undef<float>();
            l(ro.w, row) = fin(0, ro.x, ro.y, ro.w, ro.z)[1];
        }
        finish = fin;
    }

    void schedule() {
        if (using_autoscheduler()) {
            set_baseline_estimates();
            return;
        }
        if (tensor_core) {
            if (!get_target().has_feature(Target::CUDA)) throw std::invalid_argument("extend_attention: tensor_core needs a CUDA target");
            tc.out = *o_extend;
            if (with_lse) tc.lse = *lse;
            tc.num_stages = num_stages;
            tc.w = w, tc.rr = rr, tc.c = c, tc.nt = nt, tc.lane = lane, tc.hf = hf, tc.ku = ku, tc.dq = dq;
            tc.kt = kt, tc.qt = qt, tc.h = h, tc.b = b, tc.os = os;
            tc.o_split = o_split();
            tc.share_s = tc_share_s;
            tc.lens = lens;
            tc.plain_logits = *plain_logits_in;
            tc.ro = ro;
            extend_attention::TensorCoreKnobs knobs;
            knobs.warps = tc_warps;
            knobs.q_in_registers = tc_q_in_registers < 0
                                       ? extend_attention::TensorCoreKnobs::q_in_registers_for(head_dim_qk, tc_share_s ? o_split() : 1)
                                       : tc_q_in_registers != 0;
            knobs.staged_logits = extend_attention::TensorCoreKnobs::staged_logits_for(head_dim_qk);
            extend_attention::schedule_cuda_tensor_core(tc, knobs);
            // The verifier: no warp-collective call under lane-dependent control flow.
            get_pipeline().add_custom_lowering_pass(new ConvergenceCheck("extend_attention tensor_core"));
            return;
        }
        extend_attention::Knobs knobs;
        knobs.block_m = block_m;
        knobs.block_n = block_n;
        knobs.cpu_vector = cpu_vector;
        extend_attention::Stages s;
        s.state = state;
        s.score_p = score_p;
        s.score_e = score_e;
        s.dot_p = dot_p;
        s.dot_e = dot_e;
        s.lens = lens;
        s.q_tile = q_tile;
        s.finish = finish;
        s.out = *o_extend;
        if (with_lse) s.lse = *lse;
        s.rp = rp;
        s.rd = rd;
        s.cap_on = *logit_cap > 0.0f;
        s.xai_on = *xai_temperature_len > 0;
        s.re = re;
        s.num_stages = num_stages;
        s.ro = ro;
        s.d = d;
        s.dq = dq;
        s.g = g;
        s.acc_group = acc_group_size();
        s.head_dim_v = head_dim_v;
        s.qi = qi;
        s.qt = qt;
        s.h = h;
        s.b = b;
        s.lane = lane;
        s.key = key;
        s.t = t;
        s.bounded = bounded;
        if (get_target().has_feature(Target::CUDA)) {
            extend_attention::schedule_cuda(s, knobs);
        } else {
            extend_attention::schedule_cpu(s, knobs);
        }
    }

    // A baseline (autotune/): Halide's autoscheduler schedules the algorithm instead of
    // schedules/extend_attention/, for case C of targets.md (8 requests, 4079 rows of 32 q / 8
    // kv heads, 12k cache slots, causal, no window, no mask).
    void set_baseline_estimates() {
        const int64_t T = 4096, S = 12288, B = 8, Hq = 32, Hkv = 8, Lq = head_dim_qk, Lv = head_dim_v;
        autoschedule::buffer(q_extend, {Lq, Hq, T});
        autoschedule::buffer(k_extend, {Lq, Hkv, T});
        autoschedule::buffer(v_extend, {Lv, Hkv, T});
        autoschedule::buffer(k_buffer, {Lq, Hkv, S});
        autoschedule::buffer(v_buffer, {Lv, Hkv, S});
        for (auto *ptr : {qo_indptr, kv_indptr}) autoschedule::buffer(ptr, {B + 1});
        autoschedule::buffer(kv_indices, {S});
        autoschedule::buffer(prefix_lens, {B});
        autoschedule::buffer(sinks, {Hq});
        autoschedule::buffer(custom_mask, {1});
        autoschedule::buffer(mask_indptr, {B + 1});
        autoschedule::buffer(window_kv_offsets, {B});
        for (auto *flag : {has_sinks, has_mask, skip_prefix_custom_mask, use_wko, skip_prefix, skip_extend}) {
            autoschedule::scalar(flag, false);
        }
        autoschedule::scalar(is_causal, true);
        autoschedule::scalar(plain_logits_in, true);
        autoschedule::scalar(sliding_window, -1);
        autoschedule::scalar(max_len_extend, 8192);
        autoschedule::scalar(xai_temperature_len, -1);
        autoschedule::scalar(sm_scale, 0.088f);
        autoschedule::scalar(logit_cap, 0.0f);
        autoschedule::scalar(k_scale, 1.0f);
        autoschedule::scalar(v_scale, 1.0f);
        for (auto *stride : row_stride_16b) autoschedule::scalar(stride, 64);
        autoschedule::scalar(num_kv_heads, int(Hkv));
        autoschedule::scalar(num_cache_slots, int(S));
        autoschedule::buffer(o_extend, {Lv, Hq, T});
        autoschedule::buffer(lse, {Hq, T});
    }

private:
    Var d{"d"}, dq{"dq"}, g{"g"}, qi{"qi"}, qt{"qt"}, h{"h"}, b{"b"}, lane{"lane"}, key{"key"}, t{"t"};
    // Tensor-core fragment coordinates: w = pair within a lane's 16-byte load, rr / hr = row
    // half (rows g, g + 8), c = 32-element chunk of the head dim, nt = 8-key n-tile, kt = key
    // tile, hf / ku = key half / 16-key step of V, wq / jj = n-tile in a 32-column block /
    // column in a pair of the O fragment, os = the warp's part of O (t and g as above:
    // lane = 4g + t).
    Var w{"w"}, rr{"rr"}, c{"c"}, nt{"nt"}, kt{"kt"}, hf{"hf"}, ku{"ku"}, wq{"wq"}, hr{"hr"}, jj{"jj"}, os{"os"};
    extend_attention::TensorCoreStages tc;

    // ---- attention's semantics: which (row, key) elements are visible and what a logit
    //      is, as functions of row m of request b and a key. Stage 0 keys are the key list
    //      (K7: the paged prefix, positions j < P; K8: the unified list of prefix and extend
    //      keys, positions j < P), stage 1 keys (K7 only) the extend keys n < E at position
    //      P + n; row m sits at position pos0 + m (K7 pos0 = P, K8 prefix_lens[b]). Built
    //      once per variant by k7_semantics() or k8_semantics(); the CPU/SIMT and the
    //      tensor-core formulations read nothing else of K7 and K8's differences. ----
    struct Semantics {
        int num_stages = 0;          // K7: 2 (list, extend keys); K8: 1 (the list)
        bool list_has_upper = false; // the list holds keys after the query (K8): causal upper bound there
        RequestRanges req;           // the request's ranges (from lens(b))
        Limits limits;               // W_eff, U
        // Window / causal visibility of list key j and of extend key n, from row m.
        std::function<Expr(const Expr &, const Expr &)> visible_list, visible_extend;
        // The custom mask's verdict (true without one).
        std::function<Expr(const Expr &, const Expr &)> mask_list, mask_extend;
        // Stage runs (K7: not skip_prefix / skip_extend); undefined: always.
        Expr run_list, run_extend;
        // The logit of a q.k dot product (list key or not) for row m: scale, k_scale, cap, xai.
        std::function<Expr(const Expr &, bool, const Expr &)> logit;
        // The logit with the cap and the xai temperature off.
        std::function<Expr(const Expr &, bool)> plain_logit;
        // Tensor cores: no custom mask, no cap, no xai (the runtime's verdict, an input): the
        // common case, which the schedule specialises (the logit is then plain_logit and the
        // mask bytes are not loaded).
        Expr plain_logits;
        // Scale of a list key's value (K7: v_scale on the cache values); undefined: none.
        Expr list_value_scale;
        // The output from the sink-adjusted accumulator and denominator.
        std::function<Expr(const Expr &, const Expr &)> normalise;

        // Per stage st (0 list, 1 extend).
        Expr length(int st) const { return st == 0 ? req.P : req.E; }
        Expr visible(int st, const Expr &m, const Expr &key) const {
            return st == 0 ? visible_list(m, key) : visible_extend(m, key);
        }
        Expr mask(int st, const Expr &m, const Expr &key) const { return st == 0 ? mask_list(m, key) : mask_extend(m, key); }
        Expr run(int st) const { return st == 0 ? run_list : run_extend; }
    };

    // K7 (spec §3.7): the list is the paged prefix (queries at P + m), then the extend keys.
    //   window over both stages, causal and the two-sided window in the extend stage;
    //   custom mask: request b's E x (P + E + wko) matrix at mask_indptr[b] + wko, prefix key
    //   j column j (unless skip_prefix_custom_mask), extend key n column P + n;
    //   logit: q.k * scale, list keys * k_scale; xai log2(qpos) / log2(L) for qpos > L;
    //   list values * v_scale; a row that sees nothing -> 0 (and LSE -inf).
    Semantics k7_semantics(const RequestRanges &r, const Expr &big) {
        Semantics sem;
        sem.num_stages = 2;
        sem.list_has_upper = false;
        sem.req = r;
        sem.limits = window_limits(*sliding_window, *is_causal, big, *has_mask);
        const Expr W_eff = sem.limits.W_eff, U = sem.limits.U, pos0 = r.pos0, P = r.P;
        sem.visible_list = [=](const Expr &m, const Expr &j) { return (pos0 + m) - j <= W_eff; };
        sem.visible_extend = [=](const Expr &m, const Expr &n) { return (m - n <= W_eff) && (n - m <= U); };
        Expr wko = select(*use_wko, (*window_kv_offsets)(clamp(b, 0, window_kv_offsets->dim(0).extent() - 1)), 0);
        auto mask_at = mask_reader(cast<int64_t>(P) + cast<int64_t>(r.E) + cast<int64_t>(wko), wko);
        Expr has = *has_mask, skip_prefix_mask = *skip_prefix_custom_mask;
        sem.mask_list = [=](const Expr &m, const Expr &j) { return !(has && !skip_prefix_mask) || mask_at(m, j); };
        sem.mask_extend = [=](const Expr &m, const Expr &n) { return !has || mask_at(m, P + n); };
        sem.run_list = !*skip_prefix;
        sem.run_extend = !*skip_extend;
        const Expr scale = logit_scale(), k_sc = *k_scale * cache_read_scale(), xl = *xai_temperature_len;
        sem.plain_logit = [=](const Expr &dot, bool list_key) { return list_key ? dot * scale * k_sc : dot * scale; };
        auto plain = sem.plain_logit;
        sem.logit = [=](const Expr &dot, bool list_key, const Expr &m) {
            Expr qpos = pos0 + m;
            Expr xai = select(xl > 0 && qpos > xl, log_ratio(cast<float>(qpos), cast<float>(max(xl, 2))), 1.0f);
            return capped_and_tempered(plain(dot, list_key), xai);
        };
        sem.list_value_scale = *v_scale * cache_read_scale();
        sem.normalise = [](const Expr &acc, const Expr &den) { return select(den > 0.0f, acc / den, 0.0f); };
        return sem;
    }

    // K8 (spec §3.8): one stage over the unified list (queries at prefix_lens[b] + m).
    //   window, causal and the two-sided window all on the list; a custom mask (request b's
    //   E x N matrix at mask_indptr[b], key j column j) replaces the causal rule;
    //   logit: q.k * (scale * k_scale) for every key; xai L / (qpos + 1) for qpos >= L;
    //   output (acc / den) * v_scale; a row that sees no key -> 0, as K7's (SGLang's
    //   unified kernel divides 0 by 0 there and returns NaN: a deliberate difference).
    Semantics k8_semantics(const RequestRanges &r, const Expr &big) {
        Semantics sem;
        sem.num_stages = 1;
        sem.list_has_upper = true;
        sem.req = r;
        sem.limits = window_limits(*sliding_window, *is_causal, big, *has_mask);
        const Expr W_eff = sem.limits.W_eff, U = sem.limits.U, pos0 = r.pos0;
        sem.visible_list = [=](const Expr &m, const Expr &j) {
            Expr qpos = pos0 + m;
            return (qpos - j <= W_eff) && (j - qpos <= U);
        };
        auto mask_at = mask_reader(cast<int64_t>(r.P), Expr(0));
        Expr has = *has_mask;
        sem.mask_list = [=](const Expr &m, const Expr &j) { return !has || mask_at(m, j); };
        const Expr scale = logit_scale(), k_sc = *k_scale * cache_read_scale(), xl = *xai_temperature_len;
        sem.plain_logit = [=](const Expr &dot, bool) { return dot * (scale * k_sc); };
        auto plain = sem.plain_logit;
        sem.logit = [=](const Expr &dot, bool list_key, const Expr &m) {
            Expr qpos = pos0 + m;
            Expr xai = select(xl > 0 && qpos >= xl, cast<float>(xl) / cast<float>(qpos + 1), 1.0f);
            return capped_and_tempered(plain(dot, list_key), xai);
        };
        Expr vs = *v_scale * cache_read_scale();
        sem.normalise = [=](const Expr &acc, const Expr &den) { return select(den > 0.0f, (acc / den) * vs, 0.0f); };
        return sem;
    }

    // Shared by both semantics. The custom mask's verdict at (row m, column col) of request
    // b's mask, rows of `row_len` bytes starting `col_offset` bytes into its block (clamped
    // into the mask buffer: memory safety for any input).
    std::function<Expr(const Expr &, const Expr &)> mask_reader(const Expr &row_len, const Expr &col_offset) {
        Expr mask_len = custom_mask->dim(0).extent();
        Expr offset = cast<int64_t>((*mask_indptr)(clamp(b, 0, mask_indptr->dim(0).extent() - 1)));
        Expr mask_start = offset + cast<int64_t>(col_offset);
        Input<Buffer<uint8_t, 1>> *mask = custom_mask;
        return [=](const Expr &m, const Expr &col) {
            Expr i = clamp(mask_start + cast<int64_t>(m) * row_len + cast<int64_t>(col), cast<int64_t>(0),
                           cast<int64_t>(mask_len - 1));
            return (*mask)(cast<int32_t>(i)) != cast<uint8_t>(0);
        };
    }
    // The fp32 value of element `e` read from input `in`: a cache element of an fp8 cache
    // decoded from its e4m3 byte, any other widened from its 16-bit type.
    Expr element_value(const Input<Buffer<>> *in, const Expr &e) const {
        const bool cache = in == k_buffer || in == v_buffer;
        return cache && fp8_kv_cache ? e4m3_to_float(e) : widen_to_float(e);
    }
    // The factor between a cache element's value and what the formulation reads of it: 2^8
    // for an fp8 cache on tensor cores (e4m3_pair_to_16bit_pair), else 1. Exact in fp32.
    Expr cache_read_scale() const { return Expr(fp8_kv_cache && tensor_core ? e4m3_pair_scale : 1.0f); }
    // sm_scale, 0 -> 1/sqrt(Lq) of the call.
    Expr logit_scale() const {
        // The call's Lq: q's extent (CPU/SIMT), o's (padded tensor cores), else the constant.
        Expr default_scale;
        if (!tensor_core) {
            default_scale = 1.0f / sqrt(cast<float>(q_extend->dim(0).extent()));
        } else if (tc_padded_head_dim) {
            default_scale = 1.0f / sqrt(cast<float>(o_extend->dim(0).extent()));
        } else {
            default_scale = Expr(1.0f / std::sqrt(float(int(head_dim_qk))));
        }
        return select(*sm_scale == 0.0f, default_scale, *sm_scale);
    }
    // The logit cap (cap > 0: cap * tanh(s / cap)), then the xai temperature (L > 0: * xai).
    Expr capped_and_tempered(const Expr &s, const Expr &xai) const {
        Expr cap = *logit_cap, xl = *xai_temperature_len;
        Expr capped = select(cap > 0.0f, cap * tanh_of(s / cap), s);
        return select(xl > 0, capped * xai, capped);
    }
    // The tensor-core kernels must not branch on the lane (warp-collective mma): libdevice's
    // tanhf and logf branch on their argument, so there tanh is 1 - 2 / (2^(2x log2 e) + 1)
    // and a log ratio a ratio of SFU log2s (the same functions to a few ulp).
    Expr tanh_of(const Expr &x) const {
        if (!tensor_core) return tanh(x);
        return 1.0f - 2.0f / (mma::exp2_approx(x * (2.0f * 1.4426950408889634f)) + 1.0f);
    }
    Expr log_ratio(const Expr &a, const Expr &b_) const {
        if (!tensor_core) return log(a) / log(b_);
        return mma::log2_approx(a) / mma::log2_approx(b_);
    }

    Func lens{"lens"}, state{"state"}, score_p{"score_p"}, score_e{"score_e"};
    Func dot_p{"dot_p"}, dot_e{"dot_e"}, finish{"finish"}, q_tile{"q_tile"};
    RDom rp, re, ro, rd;
    int num_stages = 0;  // sem.num_stages, for schedule()

    // ---- the CUDA tensor-core formulation (tensor_core = true; design:
    //      ../shared/reference/tensorize-halide21.md). The same semantics (sem) in mma
    //      fragment coordinates: one warp owns 16 query rows of one head (q tile qt of 16,
    //      rows 16 qt + g and 16 qt + 8 + g for lane 4g + t), and per key tile of BN keys
    //      computes S = Q K^T (16 x BN), the tile's row max, P = 2^(S log2e - m) and
    //      O = O alpha + P V (P rounded to the element type, as SGLang's kernel rounds it).
    //      Only warp-uniform (q-tile level) predicates go into the key-tile RDoms, so Halide
    //      derives the same tile bounds as on the CPU (dead-tile exit, window lower bound in
    //      both stages, causal upper bound) and they are the same for all 32 lanes;
    //      everything that depends on a row or key (window, causal, length, custom mask)
    //      is an additive mask on the logit: a masked element gets p = 0 exactly and a
    //      fully masked tile alpha = 1, so the full-width twin (masks only) computes the
    //      same bits. Rows past E_b are computed as row E_b - 1 (clamped) and written to
    //      it again with the same bits: no store is predicated per lane. ----
    void define_tensor_core(const Semantics &sem, const Expr &Hq, const Expr &T, const Expr &num_slots,
                            const Expr &num_indices, const Expr &B, const Expr &num_q_tiles, const Expr &kvh) {
        // D: q.k's head dim (Lq, the S chunks), DV: v's and o's (Lv, the O columns). They
        // differ for 192/128 and MLA's 576/512; padded variants have one run-time head dim.
        const int D = head_dim_qk, DV = head_dim_v, BN = block_n, KN = BN / 8, NC = D / 32;
        // O split: OS warps per q tile, warp part os owning O columns [os DS, (os + 1) DS)
        // (NCO 32-column chunks); each computes the tile's S itself.
        const int OS = o_split(), DS = DV / OS, NCO = DS / 32;
        if (D % 32 != 0 || DV % 32 != 0) throw std::invalid_argument("extend_attention tensor_core: Lq and Lv multiples of 32");
        if (tc_padded_head_dim && DV != D) throw std::invalid_argument("extend_attention tensor_core: padded variants need Lq == Lv");
        if (DS % 32 != 0) throw std::invalid_argument("extend_attention tensor_core: Lv / tc_o_split a multiple of 32");
        if (block_m != 16 || BN % 16 != 0) throw std::invalid_argument("extend_attention tensor_core: block_m 16, block_n a multiple of 16");
        const Type et = dtype;
        const float NEG = -1e30f;                      // finite sentinels: the PTX target has no infs
        const float LOG2E = 1.4426950408889634f;
        Expr q0_b = sem.req.q0, E_b = sem.req.E, k0_b = sem.req.k0, P_b = sem.req.P;
        // Fragment Funcs are indexed by the lane (0..31) itself, never by (t, g): bounds
        // inference then sees exactly one point per lane (lane % 4 would widen to [0, 3]).
        Expr t_of_lane = lane % 4, g_of_lane = lane / 4;
        // The lane's row of half rr (0: g, 1: g + 8) in q tile qt, clamped into the request.
        auto row_of = [&](const Expr &rr) { return clamp(qt * 16 + 8 * rr + g_of_lane, 0, max(E_b - 1, 0)); };

        // The head dim in 16-byte groups of 4 pairs: a head's row is `groups` groups (heads
        // contiguous inside a row), D / 8, or with tc_padded_head_dim the call's (lq = lv <=
        // D, o's extent, a multiple of 8): then a lane's loads are whole groups clamped into
        // the row (groups past it: the q lanes are 0, so q.k ignores them; o columns past it
        // are never written). Exact dims keep the plain addresses: the clamps and masks
        // would stay in their code (the simplifier cannot prove them away).
        const bool padded = tc_padded_head_dim;
        Expr groups = padded ? o_extend->dim(0).extent() / 8 : Expr(D / 8);
        // Pair w of 16-byte group `group` of head `head` in row `row` of flat view `which`
        // (0 q_extend, 1 k_extend, 2 v_extend, 3 k_buffer, 4 v_buffer; K8 0 q, 3 k_buffer,
        // 4 v_buffer): pair 4 group + w, `pair` the same written as the caller's sum (the
        // exact form's address expression, as Halide best simplifies it). An fp8 cache's view
        // holds byte pairs (two e4m3 elements, 8 bytes a group, row strides in 8-byte units),
        // decoded into the 16-bit pair (times 2^-8, cache_read_scale).
        auto pair_at = [&](int which, const Expr &group, const Expr &pair, const Expr &head, const Expr &row) {
            Input<Buffer<>> *views[5] = {q_extend, k_extend, v_extend, k_buffer, v_buffer};
            Expr row_pairs = 4 * *row_stride_16b[which];
            const int head_pairs = (which == 2 || which == 4 ? DV : D) / 2;  // a head's row in pairs
            Expr stored = !padded ? (*views[which])(row * row_pairs + head * head_pairs + pair)
                                  : (*views[which])(row * row_pairs + head * (4 * groups) + 4 * min(group, groups - 1) + w);
            return fp8_kv_cache && which >= 3 ? e4m3_pair_to_16bit_pair(et, stored) : stored;
        };
        // The shared-S form (tc_share_s): warp os of the q tile computes mma steps
        // os, os + OS, os + 2 OS, ... of S's NSTEP = Lq / 16 (SP of them), puts its part of
        // the tile into the exchange, and after the block's barrier every warp adds the OS
        // parts in one order (the same expression in every warp, so the same bits: the warps'
        // row maxima and sums agree). The key-tile Funcs (S, the
        // logits, the tile maxima) then take the warp os as a coordinate.
        const bool share = tc_share_s;
        const int NSTEP = D / 16, SP = share ? NSTEP / OS : 0;
        // Shared S: QB q tiles per block, the q tile's place in it qt % QB (the schedule's
        // thread_id_z), its exchange part EX floats.
        const int QB = share ? tc_warps / OS : 1, EX = OS * KN * 4 * 32;
        if (share) {
            if (OS < 2 || OS % 2 != 0) throw std::invalid_argument("extend_attention tc_share_s: tc_o_split even, >= 2");
            if (NSTEP % OS != 0) throw std::invalid_argument("extend_attention tc_share_s: tc_o_split must divide Lq / 16");
            if (padded) throw std::invalid_argument("extend_attention tc_share_s: exact head dims only");
            if (QB * EX > mma::kShareExchangeFloats) {
                throw std::invalid_argument("extend_attention tc_share_s: the exchange (generators/common/mma_helpers.cu) is too small"
                                            " for tc_warps / tc_o_split q tiles per block");
            }
            if (QB > 15) throw std::invalid_argument("extend_attention tc_share_s: at most 15 q tiles per block (named barriers 1..15)");
        }
        if (tc_share_v_first && !share) throw std::invalid_argument("extend_attention tc_share_v_first: needs tc_share_s (it orders the exchange)");
        if (tc_share_wide && !share) throw std::invalid_argument("extend_attention tc_share_wide: needs tc_share_s (it is the exchange's layout)");
        const bool q_stage = tc_q_stage;
        if (q_stage && (!share || QB != 1 || SP * 4 * OS * 32 > mma::kQStageWords)) {
            throw std::invalid_argument("extend_attention tc_q_stage: needs tc_share_s, one q tile per block and a Q tile that fits lb_q_stage");
        }
        tc.q_staged = q_stage;
        // tc_share_one_barrier: in the last stage, tile kt puts into buffer kt % 2 and meets
        // the other warps at one barrier, then gets. A warp puts tile kt + 2 into the same
        // buffer only after passing tile kt + 1's barrier, which every warp reaches after its
        // gets of tile kt: so the buffer is free. That needs the stage's tiles to be visited
        // in a row, without a gap (a skipped tile would put two same-parity tiles next to
        // each other): each of the key-tile RDom's predicates (chunk_predicates, sem.run) is
        // linear in the tile or constant in it, so the tiles it keeps are one interval. An
        // earlier stage (K7's prefix) ends on a tile of unknown parity, so it keeps the
        // two-barrier form in a third buffer: the last stage's first put never lands in a
        // buffer a slow warp still reads.
        const bool one_barrier = tc_share_one_barrier;
        // tc_share_scatter: the warp's n-tiles nt = os + OS j (KN / OS of them); their sums
        // after the parts in the exchange (KN * 4 * 32 floats). One buffer each and two
        // barriers per tile, whatever tiles are skipped: a warp puts tile kt + 1's parts
        // after the barrier every warp reaches only once it has added tile kt's parts, and
        // puts its sums after the barrier every warp reaches only after its key loop got
        // past tile kt's sums (an iteration ends before the next begins).
        const bool scatter = tc_share_scatter;
        if (scatter && (!share || !tc_share_wide || one_barrier || QB != 1 || KN % OS != 0 ||
                        EX + KN * 4 * 32 > mma::kShareExchangeFloats)) {
            throw std::invalid_argument("extend_attention tc_share_scatter: needs tc_share_s, tc_share_wide, one q tile per"
                                        " block, block_n / 8 a multiple of tc_o_split, no tc_share_one_barrier, and room in"
                                        " lb_s_exchange for the sums");
        }
        tc.share_scatter = scatter;
        if (one_barrier && (!share || QB != 1 || 3 * EX > mma::kShareExchangeFloats)) {
            throw std::invalid_argument("extend_attention tc_share_one_barrier: needs tc_share_s, one q tile per block and"
                                        " three exchange buffers that fit lb_s_exchange");
        }
        // tc_q_stage: word 4 ((step o_split + os) 32 + lane) + j of lb_q_stage holds the
        // lane's A fragment word j of its step `step` (16 bytes per lane, consecutive lanes).
        auto q_word = [&](const Expr &step) { return ((step * OS + os) * 32 + lane) * 4; };
        auto at_tile = [&](std::vector<Expr> args, const Expr &tile) {
            if (share) args.push_back(os);
            for (const Expr &e : {Expr(qt), Expr(h), Expr(b), tile}) args.push_back(e);
            return args;
        };
        // The pair of mma step `c` (the warp's c-th step in the shared-S form) a lane loads
        // for its row or key: pairs 16 (s / 2) + 4t + 2 (s % 2) + w, w < 2, of step
        // s = OS c + os (OS even: s / 2 = (OS / 2) c + os / 2, s % 2 = os % 2). A quad's four
        // 8-byte loads then cover two 32-byte sectors, half of each (Nsight Compute: 2.0
        // sectors per request, 1.0 ideal, L1 85-92 % busy). Giving the quad the step's pairs
        // contiguously (8s + 2t + w, one sector) was measured and lost: K7 576/512 5-6 % slower
        // with V first (H100, 2026-12-05, autotune/records/k7-mla-share-sector-h200.jsonl).
        Expr share_pair = 8 * OS * c + 16 * (os / 2) + 2 * (os % 2) + 4 * t_of_lane + w;
        // tc_share_k_chunks: the warp's K load j (KL of them) is chunk OS j + os for j < FC
        // (its FC = SP / 2 whole chunks), and with SP odd its last load is chunk OS FC + os / 2,
        // of which its step 2 FC uses half os % 2 (the OS / 2 chunks left, a half per warp).
        // Step c uses half c % 2 of load c / 2: pairs 16 chunk + 4t + 2 half + w, w < 2 (Q
        // and K alike, so each warp's part of q.k is a sum over its own pairs, each once).
        const bool k_chunks = tc_share_k_chunks;
        if (k_chunks && !share) throw std::invalid_argument("extend_attention tc_share_k_chunks: needs tc_share_s");
        tc.k_chunks = k_chunks;
        const int FC = SP / 2, KL = FC + SP % 2;
        // (min(j, FC - 1): bounds inference takes both sides of the select over all j.)
        auto chunk_of = [&](const Expr &j) { return select(j < FC, OS * min(j, FC - 1) + os, OS * FC + os / 2); };
        auto half_of = [&](const Expr &step) { return select(step < 2 * FC, step % 2, os % 2); };
        if (k_chunks) share_pair = 16 * chunk_of(c / 2) + 4 * t_of_lane + 2 * half_of(c) + w;
        // values_in_keys: V block (dq, wq) of warp os (8 columns: lanes t, elements jj) is the
        // K fragment the warp loaded for the same keys and dims: word wq % 2 of step
        // 2 dq + wq / 2 (8-byte loads) or word wq of load dq (tc_share_k_chunks). Its column
        // (the O column it feeds) is that fragment's dim. The warp's first 2 NCO steps (loads
        // NCO) cover a quarter of dims [0, Lv), and the OS warps all of them, once.
        const bool vk = values_in_keys;
        if (vk && (!share || padded || DV > D || (k_chunks && NCO > FC))) {
            throw std::invalid_argument("extend_attention values_in_keys: needs tc_share_s, exact head dims and Lv <= Lq");
        }
        const bool vk_list_only = values_in_keys_list_only;
        if (vk_list_only && (!vk || unified)) {
            throw std::invalid_argument("extend_attention values_in_keys_list_only: needs values_in_keys, K7 only");
        }
        for (int st = 0; st < 2; st++) tc.values_in_keys[st] = vk && !(vk_list_only && st == 1);
        auto values_col = [&](const Expr &dq, const Expr &wq, const Expr &t, const Expr &jj, const Expr &o) {
            if (!vk) return 32 * (dq + NCO * o) + 8 * t + 2 * wq + jj;
            if (k_chunks) return 2 * (16 * (OS * dq + o) + 4 * t + wq) + jj;
            return 2 * (8 * OS * (2 * dq + wq / 2) + 16 * (o / 2) + 2 * (o % 2) + 4 * t + wq % 2) + jj;
        };

        // Q fragments: pairs 16c + 4t + w (group 4c + t) of the lane's row rr (k permuted
        // inside each 32-element chunk c so that a lane's 4 pairs are one 16-byte load; K
        // gets the same permutation, so q.k is unchanged); 0 past the call's head dim.
        Expr q_group = 4 * c + t_of_lane;
        Expr q_row = clamp(q0_b + row_of(rr), 0, T - 1);
        if (share) {
            tc.q(w, rr, lane, c, os, qt, h, b) = pair_at(0, share_pair / 4, share_pair, h, q_row);
            if (q_stage) {
                Expr puts = 0;
                for (int step = 0; step < SP; step++) {
                    puts = puts + mma::q_put4({tc.q(0, 0, lane, step, os, qt, h, b), tc.q(0, 1, lane, step, os, qt, h, b),
                                               tc.q(1, 0, lane, step, os, qt, h, b), tc.q(1, 1, lane, step, os, qt, h, b)},
                                              q_word(step));
                }
                tc.q_stage_token(lane, os, qt, h, b) = puts;
            }
        } else {
            Expr q_pairs = pair_at(0, q_group, 16 * c + 4 * t_of_lane + w, h, q_row);
            tc.q(w, rr, lane, c, qt, h, b) = padded ? select(q_group < groups, q_pairs, cast<uint32_t>(0)) : q_pairs;
        }

        // Per stage: K and V fragments, the S tile, the key-tile RDom.
        // Stage 0 keys are list keys (K7: the paged prefix, K8: the unified list), in cache
        // slots kv_indices[k0_b + key]; stage 1 keys (K7) are extend rows q0_b + key.
        // Lane (g, t) of n-tile nt holds key 8nt + g of the tile.
        Expr list_key = clamp(kt * BN + 8 * nt + g_of_lane, 0, max(P_b - 1, 0));
        Expr slot_raw = (*kv_indices)(clamp(k0_b + list_key, 0, num_indices - 1));
        tc.slot(nt, lane, kt, b) = cast<int32_t>(clamp(cast<int64_t>(slot_raw), cast<int64_t>(0), cast<int64_t>(num_slots - 1)));
        Expr ext_row = clamp(q0_b + clamp(kt * BN + 8 * nt + g_of_lane, 0, max(E_b - 1, 0)), 0, T - 1);
        for (int st = 0; st < sem.num_stages; st++) {
            const int kin = st == 0 ? 3 : 1, vin = st == 0 ? 4 : 2;
            Expr key_row = st == 0 ? Expr(tc.slot(nt, lane, kt, b)) : ext_row;
            // K: pairs 16c + 4t + w (group 4c + t) of key 8nt + g (shared S: the warp's step c).
            if (share && k_chunks) {
                // tc_share_k_chunks: w < 4, c the warp's load (see chunk_of).
                Expr pair = 16 * chunk_of(c) + 4 * t_of_lane + w;
                tc.k[st](w, lane, nt, c, os, kt, h, b) = pair_at(kin, pair / 4, pair, kvh, key_row);
            } else if (share) {
                tc.k[st](w, lane, nt, c, os, kt, h, b) = pair_at(kin, share_pair / 4, share_pair, kvh, key_row);
            } else {
                tc.k[st](w, lane, nt, c, kt, h, b) = pair_at(kin, 4 * c + t_of_lane, 16 * c + 4 * t_of_lane + w, kvh, key_row);
            }
            // V: pairs 16dq + 4t + w (head-dim columns 32dq + 8t + 2w, +1) of key 16ku + 8hf + g;
            // movmatrix turns them into the B operand (pairs along keys) below.
            Expr v_row = st == 0 ? Expr(tc.slot(2 * ku + hf, lane, kt, b)) : substitute(nt.name(), 2 * ku + hf, ext_row);
            if (tc.values_in_keys[st] && k_chunks) {
                tc.v[st](w, lane, hf, ku, dq, os, kt, h, b) = tc.k[st](w, lane, 2 * ku + hf, dq, os, kt, h, b);
            } else if (tc.values_in_keys[st]) {
                tc.v[st](w, lane, hf, ku, dq, os, kt, h, b) = tc.k[st](w % 2, lane, 2 * ku + hf, 2 * dq + w / 2, os, kt, h, b);
            } else if (vk) {
                // values_in_keys_list_only's extend stage: the same words of V as the list
                // stage takes from K (the pairs of values_col), loaded.
                Expr pair = k_chunks ? 16 * (OS * dq + os) + 4 * t_of_lane + w
                                     : 8 * OS * (2 * dq + w / 2) + 16 * (os / 2) + 2 * (os % 2) + 4 * t_of_lane + w % 2;
                tc.v[st](w, lane, hf, ku, dq, os, kt, h, b) = pair_at(vin, pair / 4, pair, kvh, v_row);
            } else {
                tc.v[st](w, lane, hf, ku, dq, os, kt, h, b) =
                    pair_at(vin, 4 * (dq + NCO * os) + t_of_lane, 16 * (dq + NCO * os) + 4 * t_of_lane + w, kvh, v_row);
            }
            // S tile: n-tile nt, the C fragment {row g: keys 2t, 2t+1; row g+8: the same}.
            // Shared S: the warp's part first (s_part), over its SP steps.
            Func s = share ? tc.s_part[st] : tc.s[st];
            const char *rs_name = st == 0 ? "rs_list" : "rs_extend";
            tc.rs[st] = share && k_chunks ? RDom(0, 2, 0, KL, rs_name)  // y = the warp's K load, x = the step in it
                        : share           ? RDom(0, 1, 0, SP, rs_name)  // y = the warp's mma step
                                          : RDom(0, 2, 0, NC, rs_name); // x = mma step in chunk y
            if (share && k_chunks && SP % 2) tc.rs[st].where(2 * tc.rs[st].y + tc.rs[st].x < SP);
            const RDom &rs = tc.rs[st];
            std::vector<Expr> s_at = at_tile({nt, lane}, kt);
            s(s_at) = Tuple(0.0f, 0.0f, 0.0f, 0.0f);
            Expr step = 2 * rs.x, chunk = rs.y;
            Func qf = tc.q;
            std::vector<Expr> a, bb;
            // Shared S: the warp's mma step (Q's index) and its two K words.
            Expr wstep = k_chunks ? 2 * rs.y + rs.x : rs.y;
            if (share && k_chunks) {
                Expr half = half_of(wstep);
                for (int i = 0; i < 2; i++) {
                    bb.push_back(select(half == 0, tc.k[st](i, lane, nt, chunk, os, kt, h, b), tc.k[st](2 + i, lane, nt, chunk, os, kt, h, b)));
                }
            } else if (share) {
                bb = {tc.k[st](0, lane, nt, chunk, os, kt, h, b), tc.k[st](1, lane, nt, chunk, os, kt, h, b)};
            }
            if (share && q_stage) {
                // The key tile in the token: the reloads stay in the key loop.
                Expr token = mma::order_after(tc.q_stage_token(lane, os, qt, h, b), kt);
                std::vector<Expr> lo = mma::q_get2(q_word(wstep), token), hi = mma::q_get2(q_word(wstep) + 2, token);
                a = {lo[0], lo[1], hi[0], hi[1]};
            } else if (share) {
                a = {qf(0, 0, lane, wstep, os, qt, h, b), qf(0, 1, lane, wstep, os, qt, h, b),
                     qf(1, 0, lane, wstep, os, qt, h, b), qf(1, 1, lane, wstep, os, qt, h, b)};
            } else {
                a = {qf(step, 0, lane, chunk, qt, h, b), qf(step, 1, lane, chunk, qt, h, b),
                     qf(step + 1, 0, lane, chunk, qt, h, b), qf(step + 1, 1, lane, chunk, qt, h, b)};
                bb = {tc.k[st](step, lane, nt, chunk, kt, h, b), tc.k[st](step + 1, lane, nt, chunk, kt, h, b)};
            }
            std::vector<Expr> cc;
            for (int e = 0; e < 4; e++) cc.push_back(s(s_at)[e]);
            s(s_at) = Tuple(mma::order_tuple_update(mma::mma_16816(et, a, bb, cc), cc));
            if (share) {
                // Exchange element of (warp o, n-tile, C element e, lane): consecutive lanes
                // hit consecutive banks. One buffer, two barriers per key tile: `ready`
                // (every warp has got the previous tile's sums; it takes this tile's part,
                // so it comes after this warp's mma), the puts, `token` (every part is in),
                // the gets. With tc_share_one_barrier the last stage drops `ready` (parity
                // buffers; why that is safe is written where the knob is read).
                // Several q tiles per block: the q tile's own part of the exchange and its
                // own named barrier (1 + its place; 0 is the block's).
                Expr q_place = QB > 1 ? Expr(qt % QB) : Expr(0);
                // tc_share_one_barrier: buffer kt % 2 in the last stage (one barrier), buffer 2
                // in an earlier one (two barriers); else buffer 0.
                const bool parity = one_barrier && st == sem.num_stages - 1;
                Expr buffer = parity ? Expr(kt % 2) : Expr(one_barrier ? 2 : 0);
                // tc_share_wide: a lane's C elements e = 2p, 2p + 1 side by side (one 8-byte
                // access per pair p), lanes still consecutive: ((o KN + n) 2 + p) 32 + lane
                // pairs. Either way n-tile n starts at element 4 * 32 * n of part o.
                auto slot_of = [&](const Expr &o, int n, int e) {
                    Expr in_part = tc_share_wide ? ((((o * KN + n) * 2 + e / 2) * 32 + lane) * 2 + e % 2)
                                                 : (((o * KN + n) * 4 + e) * 32) + lane;
                    return QB > 1 ? q_place * EX + in_part : (one_barrier ? buffer * EX + in_part : in_part);
                };
                auto barrier = [&](const Expr &token) {
                    return QB > 1 ? mma::share_barrier_group(token, q_place + 1, OS * 32) : mma::share_barrier(token);
                };
                Expr part_done = reinterpret(Int(32), tc.s_part[st](at_tile({0, lane}, kt))[0]);
                if (tc_share_v_first) {
                    part_done = mma::order_after(part_done, reinterpret(Int(32), tc.v[st](0, lane, 0, 0, 0, os, kt, h, b)));
                }
                Expr ready = parity || scatter ? part_done : barrier(part_done);
                Expr puts = 0;
                for (int n = 0; n < KN; n++) {
                    Tuple part = tc.s_part[st](at_tile({n, lane}, kt));
                    for (int e = 0; e < 4; e += tc_share_wide ? 2 : 1) {
                        puts = puts + (tc_share_wide ? mma::share_put2(part[e], part[e + 1], slot_of(os, n, e), ready)
                                                     : mma::share_put(part[e], slot_of(os, n, e), ready));
                    }
                }
                tc.share_token[st](at_tile({lane}, kt)) = barrier(puts);
                Expr token = tc.share_token[st](at_tile({lane}, kt));
                // Part o of element e of n-tile nt; the sum over the parts in one order.
                // tc_share_wide: part o of n-tile n's elements e - e % 2 and e - e % 2 + 1.
                auto part_pair = [&](int o, int e, const Expr &n) {
                    return mma::share_get2(slot_of(o, 0, e - e % 2) + 4 * 32 * n, token);
                };
                auto part_of = [&](int o, int e) -> Expr {
                    if (!tc_share_wide) return mma::share_get(slot_of(o, 0, e) + 4 * 32 * nt, token);
                    return part_pair(o, e, nt)[e % 2];
                };
                std::vector<Expr> full;
                if (scatter) {
                    // The sums of n-tile n, element pair p (e = 2p, 2p + 1): pairs
                    // (n 2 + p) 32 + lane after the parts, so consecutive lanes again.
                    auto sum_slot = [&](const Expr &n, int e) { return EX + (((n * 2 + e / 2) * 32 + lane) * 2); };
                    Expr sum_puts = 0;
                    for (int j = 0; j < KN / OS; j++) {
                        Expr n_own = os + OS * j;
                        for (int e = 0; e < 4; e += 2) {
                            Expr sum[2];
                            for (int o = 0; o < OS; o++) {
                                std::vector<Expr> pair = part_pair(o, e, n_own);
                                for (int i = 0; i < 2; i++) sum[i] = o == 0 ? pair[i] : sum[i] + pair[i];
                            }
                            sum_puts = sum_puts + mma::share_put2(sum[0], sum[1], sum_slot(n_own, e), token);
                        }
                    }
                    tc.sum_token[st](at_tile({lane}, kt)) = barrier(sum_puts);
                    Expr sums_in = tc.sum_token[st](at_tile({lane}, kt));
                    for (int e = 0; e < 4; e++) full.push_back(mma::share_get2(sum_slot(nt, e - e % 2), sums_in)[e % 2]);
                } else {
                    for (int e = 0; e < 4; e++) {
                        Expr sum = part_of(0, e);
                        for (int o = 1; o < OS; o++) sum = sum + part_of(o, e);
                        full.push_back(sum);
                    }
                }
                tc.s[st](s_at) = Tuple(full);
            }

            // Key tiles: the chunk-level predicates of the CPU formulation with BM = 16 and
            // BN keys (chunk_predicates); skip_prefix / skip_extend are uniform too.
            Expr tiles = st == 0 ? (num_indices + (BN - 1)) / BN : (num_q_tiles * 16 + (BN - 1)) / BN;
            tc.rk[st] = RDom(0, tiles, st == 0 ? "rk_list" : "rk_extend");
            RDom &rk = tc.rk[st];
            const TileShape shape{16, BN, bounded, sem.list_has_upper};
            for (const Expr &p : chunk_predicates(st, rk.x, qt, shape, sem.req, sem.limits)) rk.where(p);
            if (bounded && sem.run(st).defined()) rk.where(sem.run(st));

            // The masked logit tile, in log2 units: C element e (row g + 8(e/2), key 2t + e%2)
            // of n-tile nt. Visible elements s * log2e, the others -2e30 (additive: no select
            // around the mma that feeds it, so no branch on the lane). A Func of the key tile,
            // not of the state, which the state update below reads: the schedule inlines it
            // or computes it per key tile (knob staged_logits).
            std::vector<Expr> masked;
            for (int e = 0; e < 4; e++) {
                Expr m = row_of(e / 2);
                Expr key = kt * BN + 8 * nt + 2 * t_of_lane + (e % 2);
                Expr vis = (key < sem.length(st)) && sem.visible(st, m, key);
                if (sem.run(st).defined()) vis = vis && sem.run(st);
                Expr mask = sem.mask(st, m, key);
                Expr dot = tc.s[st](s_at)[e];
                // Common case (plain_logits, which the schedule specialises): no mask bytes,
                // no cap, no xai in the key loop.
                vis = vis && (sem.plain_logits || mask);
                Expr logit = select(sem.plain_logits, sem.plain_logit(dot, st == 0), sem.logit(dot, st == 0, m));
                masked.push_back(logit * LOG2E + select(vis, 0.0f, Expr(2 * NEG)));
            }
            tc.logit[st](s_at) = Tuple(masked);
            // The tile's row maxima (rows g and g + 8): the lane's keys, then the quad's
            // (t = 0..3 hold the row's keys).
            std::vector<Expr> row_max;
            for (int hr = 0; hr < 2; hr++) {
                std::vector<Expr> vals;
                for (int jj = 0; jj < KN; jj++) {
                    vals.push_back(tc.logit[st](at_tile({jj, lane}, kt))[2 * hr]);
                    vals.push_back(tc.logit[st](at_tile({jj, lane}, kt))[2 * hr + 1]);
                }
                Expr mx = mma::tree_max(vals);
                mx = max(mx, mma::shfl_xor(mx, 1));
                row_max.push_back(max(mx, mma::shfl_xor(mx, 2)));
            }
            tc.tile_max[st](at_tile({lane}, kt)) = Tuple(row_max);
        }

        // The per-lane state of O part os: its O fragments (n-tile nd = 4dq + wq of the part:
        // 4 floats at 4nd), then the running max m (log2 units) and the lane's partial row
        // sum l of rows g and g + 8.
        const int NS = DS / 2 + 4, M0 = DS / 2, L0 = DS / 2 + 2;
        std::vector<Expr> init(NS, Expr(0.0f));
        init[M0] = init[M0 + 1] = Expr(NEG);
        tc.state(lane, os, qt, h, b) = Tuple(init);
        for (int st = 0; st < sem.num_stages; st++) {
            const RDom &rk = tc.rk[st];
            Expr tile = rk.x;
            std::vector<Expr> old;
            for (int i = 0; i < NS; i++) old.push_back(tc.state(lane, os, qt, h, b)[i]);
            // m_new = max(m, the tile's row max), alpha = 2^(m - m_new) per row half.
            Expr m_new[2], alpha[2];
            for (int hr = 0; hr < 2; hr++) {
                m_new[hr] = max(old[M0 + hr], tc.tile_max[st](at_tile({lane}, tile))[hr]);
                alpha[hr] = mma::exp2_approx(old[M0 + hr] - m_new[hr]);
            }
            auto p = [&](int jj, int e) { return mma::exp2_approx(tc.logit[st](at_tile({jj, lane}, tile))[e] - m_new[e / 2]); };
            std::vector<Expr> next(NS);
            for (int hr = 0; hr < 2; hr++) {
                std::vector<Expr> terms{old[L0 + hr] * alpha[hr]};
                for (int jj = 0; jj < KN; jj++) {
                    terms.push_back(p(jj, 2 * hr));
                    terms.push_back(p(jj, 2 * hr + 1));
                }
                next[M0 + hr] = m_new[hr];
                next[L0 + hr] = mma::tree_sum(terms);
            }
            // K7 scales the cache values by v_scale: applied to P (O += (P v_scale) V).
            auto p_of_v = [&](int jj, int e) {
                return st == 0 && sem.list_value_scale.defined() ? p(jj, e) * sem.list_value_scale : p(jj, e);
            };
            for (int dqi = 0; dqi < NCO; dqi++) {
                for (int wq = 0; wq < 4; wq++) {
                    const int nd = 4 * dqi + wq;
                    std::vector<Expr> acc{old[4 * nd] * alpha[0], old[4 * nd + 1] * alpha[0], old[4 * nd + 2] * alpha[1],
                                          old[4 * nd + 3] * alpha[1]};
                    for (int ui = 0; ui < KN / 2; ui++) {
                        // P as the A operand of keys 16ui .. 16ui + 15 (n-tiles 2ui, 2ui + 1).
                        std::vector<Expr> a{mma::pack_pair(et, p_of_v(2 * ui, 0), p_of_v(2 * ui, 1)),
                                            mma::pack_pair(et, p_of_v(2 * ui, 2), p_of_v(2 * ui, 3)),
                                            mma::pack_pair(et, p_of_v(2 * ui + 1, 0), p_of_v(2 * ui + 1, 1)),
                                            mma::pack_pair(et, p_of_v(2 * ui + 1, 2), p_of_v(2 * ui + 1, 3))};
                        std::vector<Expr> bv{mma::movmatrix_trans(tc.v[st](wq, lane, 0, ui, dqi, os, tile, h, b)),
                                             mma::movmatrix_trans(tc.v[st](wq, lane, 1, ui, dqi, os, tile, h, b))};
                        acc = mma::mma_16816(et, a, bv, acc);
                    }
                    for (int e = 0; e < 4; e++) next[4 * nd + e] = acc[e];
                }
            }
            tc.state(lane, os, qt, h, b) = Tuple(mma::order_tuple_update(next, old));
        }

        // The rows' sums: the quad's partial sums added (shuffles), computed by all lanes
        // before any store.
        {
            Expr l[2];
            for (int hr = 0; hr < 2; hr++) {
                Expr v = tc.state(lane, os, qt, h, b)[L0 + hr];
                v = v + mma::shfl_xor(v, 1);
                l[hr] = v + mma::shfl_xor(v, 2);
            }
            tc.row_sum(lane, os, qt, h, b) = Tuple(l[0], l[1]);
        }

        // ---- finish (as the CPU's, in log2 units): sinks, the semantics' normalisation ----
        std::vector<Expr> accs;
        for (int i = 0; i < DS / 2; i++) accs.push_back(tc.state(lane, os, qt, h, b)[i]);
        Expr mx = select(hr == 0, tc.state(lane, os, qt, h, b)[M0], tc.state(lane, os, qt, h, b)[M0 + 1]);
        Expr den = select(hr == 0, tc.row_sum(lane, os, qt, h, b)[0], tc.row_sum(lane, os, qt, h, b)[1]);
        Expr sink = (*sinks)(clamp(h, 0, sinks->dim(0).extent() - 1)) * LOG2E;
        Expr mf = select(*has_sinks, max(mx, sink), mx);
        Expr keep = select(mx == mf, 1.0f, mma::exp2_approx(mx - mf));
        Expr denf = den * keep + select(*has_sinks, mma::exp2_approx(sink - mf), 0.0f);
        Expr accf = mma::tree_mux(16 * dq + 4 * wq + 2 * hr + jj, accs) * keep;  // constant index once unrolled
        Expr o_val = sem.normalise(accf, denf);
        // (log2 on the SFU: libdevice's logf branches on its argument, see sem.logit.)
        Expr log2_den = mma::log2_approx(denf);
        Expr lse_val = select(denf > 0.0f, (log2_den + mf) * (1.0f / LOG2E), Expr(-std::numeric_limits<float>::infinity()));
        Func fin("finish_tc");
        fin(jj, wq, dq, hr, lane, os, qt, h, b) = Tuple(o_val, lse_val);

        // ---- outputs: lane (g, t) of O part os writes head-dim columns 32(dq + NCO os) +
        //      8t + 2wq + jj of its rows g + 8hr; only warp-uniform predicates (a live tile;
        //      the twin: a live request). ----
        // ro = (jj, wq, dq, hr, lane, [os,] qt, h, b) (the O part only when OS > 1); the lane
        // is one RVar (t = lane % 4, g = lane / 4) so that the o and lse scatters share their
        // loops down to it (compute_with).
        Region ro_dims = {{0, 2}, {0, 4}, {0, NCO}, {0, 2}, {0, 32}};
        if (OS > 1) ro_dims.push_back({0, OS});
        for (const Range &r : Region{{0, num_q_tiles}, {0, Hq}, {0, B}}) ro_dims.push_back(r);
        ro = RDom(ro_dims, "ro");
        const int X = OS > 1 ? 1 : 0;  // position shift of qt, h, b
        Expr os_r = OS > 1 ? Expr(ro[5]) : Expr(0), qt_r = ro[5 + X], h_r = ro[6 + X], b_r = ro[7 + X];
        Expr E_r = lens(b_r)[1];
        ro.where(bounded ? qt_r * 16 < E_r : E_r > 0);
        Expr t_r = ro[4] % 4, g_r = ro[4] / 4;  // (index arithmetic of the stores only)
        // The lane's column of o. Padded head dims: only the call's lv columns are stored (a
        // lane-dependent predicate on the stores alone, after every warp-collective call:
        // ptx_link's epilogue rule), and the index is clamped into o so that bounds
        // inference (which ignores predicates) asks for lv columns only.
        Expr lv = o_extend->dim(0).extent();
        Expr col = values_col(ro[2], ro[1], t_r, ro[0], os_r);
        if (padded) {
            ro.where(col < lv);
            col = min(col, lv - 1);
        }
        auto out_row = [&](const Expr &hrr) {
            Expr m = clamp(qt_r * 16 + 8 * hrr + g_r, 0, max(E_r - 1, 0));
            return clamp(lens(b_r)[0] + m, 0, T - 1);
        };
        Expr fin_r = fin(ro[0], ro[1], ro[2], ro[3], ro[4], os_r, qt_r, h_r, b_r)[0];
        Func o = *o_extend;
        o(d, h, t) = undef(Type(dtype));
        o(col, h_r, out_row(ro[3])) = narrow_from_float(Type(dtype), fin_r);
        if (with_lse) {
            // Over the same RDom as o, so that the schedule can fuse the two scatters at the
            // lane (compute_with): every lane of the quad (and every O part) writes its rows'
            // (identical) LSE, once per column it wrote of o (the stores repeat the same
            // value; they run once per q tile, after the key loops).
            Func l = *lse;
            l(h, t) = undef<float>();
            l(h_r, out_row(ro[3])) = fin(ro[0], ro[1], ro[2], ro[3], ro[4], os_r, qt_r, h_r, b_r)[1];
        }
        finish = fin;
    }

    // Element e (< the bucket) of a head-dim row whose call length is `len`, kept inside the
    // row (memory safety; q lanes past len are masked, o columns past len never written).
    // A vector of V consecutive elements clamps its first element only, so it stays one
    // dense load: exact for every element < len when len is a multiple of V (the runtime's
    // rule), and any len when V = 1.
    Expr in_row(const Expr &e, const Expr &len) const {
        const int V = cpu_vector;
        if (V == 1) return min(e, len - 1);
        return min(e / V * V, max(len - V, 0)) + e % V;
    }

    // Tensor cores: warps per q tile (tc_o_split), a divisor of the block's warps.
    int o_split() const {
        const int parts = tc_o_split;
        if (parts < 1 || head_dim_v % parts != 0) throw std::invalid_argument("extend_attention: tc_o_split must divide head_dim_v");
        if (tc_warps % parts != 0) throw std::invalid_argument("extend_attention: tc_o_split must divide tc_warps");
        return parts;
    }

    // Head-dim elements per softmax state: the knob acc_group, 0 = the target schedule's
    // choice (schedules/extend_attention/{cpu,cuda}.h).
    int acc_group_size() const {
        const int Lv = head_dim_v;
        int G = acc_group;
        if (G == 0) {
            G = get_target().has_feature(Target::CUDA) ? extend_attention::cuda_acc_group(Lv)
                                                       : extend_attention::cpu_acc_group(Lv);
        }
        if (G <= 0 || Lv % G != 0) throw std::invalid_argument("extend_attention: acc_group must divide head_dim_v");
        return G;
    }

    // The empty state: max -inf, denominator 0, G accumulators 0.
    std::vector<Expr> initial_state() const {
        std::vector<Expr> v{Expr(-std::numeric_limits<float>::infinity()), Expr(0.0f)};
        v.resize(2 + acc_group_size(), Expr(0.0f));
        return v;
    }

    // One online-softmax step per visible key (spec §3.7.3, per element instead of per BN
    // tile: the same math with one rescale per key) on the state group g, whose
    // accumulator i holds head-dim element g*G + i. `v(d)` is the key's value at head-dim
    // element d. `mask` (full-width twin only) keeps the old state for masked keys, exactly.
    void online_update(const Expr &s, const std::function<Expr(const Expr &)> &v, const Expr &mask) {
        const int G = acc_group_size();
        FuncRef old = state(g, qi, qt, h, b);
        Expr mo = old[0], lo = old[1];
        Expr mn = max(mo, s);
        Expr alpha = exp(mo - mn), p = exp(s - mn);
        std::vector<Expr> next{mn, strict_float(lo * alpha + p)}, keep{mo, lo};
        for (int i = 0; i < G; i++) {
            Expr ao = old[2 + i];
            next.push_back(strict_float(ao * alpha + p * v(g * G + i)));
            keep.push_back(ao);
        }
        Tuple t(next);
        if (mask.defined()) t = select(mask, t, Tuple(keep));
        state(g, qi, qt, h, b) = t;
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::ExtendAttention, extend_attention)
