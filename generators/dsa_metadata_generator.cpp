// K2 `fused_dsa_decode_metadata` (spec §3.2) and K3 `fused_dsa_target_verify_metadata`
// (spec §3.3): the metadata DeepSeek Sparse Attention reads each decode / verify step,
// rebuilt inside CUDA-graph replay.
//
// Algorithm only. The live-prefix contract is one predicate per table:
//   page_table_1:    column < live_tokens(row)                 (c < min(kv, width))
//   real_page_table: column < cdiv(live_tokens(row), rps)      (j * rps < min(kv, width))
// The bounded variant leaves every other element undefined (`undef`: not written) and
// Halide derives the column loop bounds from the predicates. The full-width twin
// (`bounded=false`) is the same algorithm with the predicates switched off: every
// column of the table's width is written. (SGLang writes whole 128-column blocks; the
// bounded form here writes exactly the live prefix, which is stricter.)
//
// Halide dimension order is innermost first: `page_table_1(column, row)` is the
// row-major torch tensor `page_table_1[row, column]`.
#include <stdexcept>

#include "Halide.h"
#include "common/autoschedule.h"

#include "common/interface.h"
#include "common/paging.h"
#include "common/scan.h"
#include "dsa_metadata/cpu.h"
#include "dsa_metadata/cuda.h"

namespace livebound {
namespace {

using namespace Halide;

// s / P rounded toward zero (C / Triton `//` on integers; Halide's `/` floors), P >= 1
// (the runtime clamps index_kpool to >= 1 before any call). The same integers as
// select(s < 0, -((-s) / P), s / P), as one hardware division instead of two floored ones
// (each with its sign fix-ups): on the GPU a division by a runtime value is a ~20-instruction
// sequence, and the lengths kernel evaluates dsa() once per term of its scans.
Expr div_trunc(const Expr &s, const Expr &p) { return div_round_to_zero(s, p); }

// v / 2^shift rounded toward zero (Triton's `v // rps` for a power-of-two rps), as shifts.
Expr shift_trunc(const Expr &v, const Expr &shift) {
    Expr bias = select(v < 0, (Expr(1) << shift) - 1, 0);
    return (v + bias) >> shift;
}

// GeneratorParam tables_from_zero (K2 and K3): req_to_token and the tables indexed from 0 too,
// fewer kernel parameters. Only with the riding grid on CUDA: with the tables' mins constant,
// Halide 21 moves the two-launch form's per-thread request_row into a device buffer allocated
// on every call (K2) and stops on K3's ("Symbol not found:
// page_table_1.s0.fused.row.block_id_x.loop_extent"); the riding grid lowers cleanly.
template <typename Rows, typename Table>
void index_tables_from_zero(bool on, bool riding_grid, const Target &target, Rows *req_to_token, Table *page_table_1,
                            Table *real_page_table) {
    if (!on) return;
    if (!riding_grid && target.has_feature(Target::CUDA)) {
        throw std::invalid_argument("dsa_metadata: tables_from_zero needs riding_grid on CUDA (the two-launch form's lowering fails)");
    }
    interface::index_from_zero(req_to_token, page_table_1, real_page_table);
}

// The DSA top-k clamp with the later `index_kpool` rule (spec §3.2):
//   full = (s / P) * P ;  dsa = min(full, topk) + (s - full)
// For P = 1 this is min(s, topk), the PR-era rule, so one formula serves both.
Expr dsa_length(const Expr &s, const Expr &topk, const Expr &kpool) {
    Expr full = div_trunc(s, kpool) * kpool;
    return min(full, topk) + (s - full);
}

// The Vars and Funcs K2 and K3 share, and the algorithm pieces built on them.
struct Common {
    Var i{"i"}, column{"column"}, row{"row"};
    Func request_row{"request_row"}, token_slot{"token_slot"}, page_slot{"page_slot"};

    // Prefix sums of value(i) for i in [0, n) into out: blocked (block > 0) or serial. K2 and K3
    // each run two blocked scans in one pipeline: `prefix` keeps their Func names distinct.
    scan::Blocked prefix_sums(const std::string &prefix, Func out, const Func &value, const Expr &n, int block) {
        if (block > 0) return scan::define_blocked(out, scan::padded(value, n), n, block, i, prefix + "_");
        scan::define_serial(out, value, n, i);
        return {};
    }

    // The two page tables of one output row `row`, which reads req_to_token row
    // `pool_row` (an unclamped index value of the row) and whose live token count is `live`.
    //   page_table_1[row, c]    = req_to_token[pool_row, c]              for c < live
    //   real_page_table[row, j] = req_to_token[pool_row, j*rps] / rps    for j*rps < live
    // nullptr: the table is absent.
    void define_tables(const Func &req_to_token, const Expr &ctx, const Expr &pool_rows, const Expr &pool_row,
                       const Expr &live, const Expr &real_page_shift, bool bounded, Func *page_table_1,
                       Func *real_page_table) {
        // Bounds inference ignores predicates: every data-dependent index is clamped.
        Type t = pool_row.type();
        request_row(row) = cast<int32_t>(clamp(pool_row, cast(t, 0), cast(t, pool_rows - 1)));
        token_slot(column, row) = req_to_token(paging::clamp_index(column, ctx), request_row(row));
        if (page_table_1) {
            Expr v = token_slot(column, row);
            (*page_table_1)(column, row) = bounded ? select(column < live, v, undef<int32_t>()) : v;
        }
        if (real_page_table) {
            // j * rps < live  <=>  j < cdiv(live, rps) = (live + rps - 1) >> shift: the same
            // predicate, written so that Halide can solve it for j.
            Expr live_pages = paging::pages_for_tokens(live, real_page_shift);
            page_slot(column, row) = req_to_token(paging::clamp_index(column << real_page_shift, ctx), request_row(row));
            Expr v = shift_trunc(page_slot(column, row), real_page_shift);
            (*real_page_table)(column, row) = bounded ? select(column < live_pages, v, undef<int32_t>()) : v;
        }
    }

    // CUDA variants put both tables in one kernel; the CPU gives each its own loop.
    void schedule(dsa_metadata::Stages &s, const Target &target, const dsa_metadata::Knobs &k) {
        s.i = i;
        s.column = column;
        s.row = row;
        s.request_row = request_row;
        if (target.has_feature(Target::CUDA)) {
            dsa_metadata::schedule_cuda(s, k);
        } else {
            dsa_metadata::schedule_cpu(s, k);
        }
    }
};

// The GeneratorParams of both generators (a Generator's params must be its own members).
#define LB_DSA_METADATA_PARAMS                                                                   \
    /* Write page_table_1 (token slots). false: it is absent (SGLang passes None). */            \
    GeneratorParam<bool> with_page_table_1{"with_page_table_1", true};                            \
    /* Write real_page_table. false: real_page_size == 1, the real table IS page_table_1. */     \
    GeneratorParam<bool> with_real_page_table{"with_real_page_table", true};                      \
    /* true: the live-prefix predicates are on (derived bounds); false: the full-width twin. */ \
    GeneratorParam<bool> bounded{"bounded", true};                                                \
    /* Prefix-sum algorithm: 0 = serial recurrence; > 0 = blocked scan with this block. */       \
    GeneratorParam<int> scan_block{"scan_block", 0};                                              \
    /* Schedule knobs: defaults are the reviewed values of schedules/dsa_metadata. */            \
    GeneratorParam<int> col_threads{"col_threads", dsa_metadata::Knobs{}.col_threads};            \
    GeneratorParam<int> col_groups{"col_groups", dsa_metadata::Knobs{}.col_groups};               \
    GeneratorParam<int> scan_threads{"scan_threads", dsa_metadata::Knobs{}.scan_threads};         \
    GeneratorParam<bool> stage_head{"stage_head", dsa_metadata::Knobs{}.stage_head};              \
    GeneratorParam<bool> stage_totals{"stage_totals", dsa_metadata::Knobs{}.stage_totals};        \
    GeneratorParam<bool> riding_grid{"riding_grid", dsa_metadata::Knobs{}.riding_grid};           \
    GeneratorParam<bool> scan_in_registers{"scan_in_registers", dsa_metadata::Knobs{}.scan_in_registers}; \
    /* The tables (req_to_token, page_table_1, real_page_table) indexed from 0 too: fewer kernel */ \
    /* parameters. Only with riding_grid: the two-launch form then fails in Halide 21 (below).  */ \
    GeneratorParam<bool> tables_from_zero{"tables_from_zero", false};                             \
    dsa_metadata::Knobs knobs() const {                                                           \
        dsa_metadata::Knobs k;                                                                    \
        k.col_threads = col_threads;                                                              \
        k.col_groups = col_groups;                                                                \
        k.scan_threads = scan_threads;                                                            \
        k.stage_head = stage_head;                                                                \
        k.stage_totals = stage_totals;                                                            \
        k.riding_grid = riding_grid;                                                              \
        k.scan_in_registers = scan_in_registers;                                                  \
        return k;                                                                                 \
    }

// ---------------------------------------------------------------------------------------
// K2 fused_dsa_decode_metadata (spec §3.2). Per request b, s_b = int32(seq_lens[b]):
//   cache_seqlens[b] = s_b ;            cu_seqlens_k     = [0, cumsum(s)]
//   dsa_cache_seqlens[b] = dsa(s_b) ;   dsa_cu_seqlens_k = [0, cumsum(dsa)]
//   tables of row b with live = min(s_b, max_len)
class DsaDecodeMetadata : public Generator<DsaDecodeMetadata> {
public:
    LB_DSA_METADATA_PARAMS

    // [bs] int32 | int64 (`seq_lens.type`): kv length s_b.
    Input<Buffer<void, 1>> seq_lens{"seq_lens"};
    // [bs] int32 | int64 (`req_pool_indices.type`): request-pool row of request b.
    Input<Buffer<void, 1>> req_pool_indices{"req_pool_indices"};
    // (ctx >= max_len, pool_rows) int32 = torch [pool_rows, ctx]: token slots.
    Input<Buffer<int32_t, 2>> req_to_token{"req_to_token"};
    // Width of page_table_1 (the static graph width); live = min(s_b, max_len).
    Input<int32_t> max_len{"max_len"};
    // The indexer top-k.
    Input<int32_t> dsa_index_topk{"dsa_index_topk"};
    // log2(real_page_size); real_page_size is a power of two.
    Input<int32_t> real_page_shift{"real_page_shift"};
    // index_kpool P >= 1 (1: the PR-era min(s, topk)).
    Input<int32_t> index_kpool{"index_kpool"};

    // [bs] int32: s_b.
    Output<Buffer<int32_t, 1>> cache_seqlens{"cache_seqlens"};
    // [bs + 1] int32: exclusive prefix sums of s_b (all entries written).
    Output<Buffer<int32_t, 1>> cu_seqlens_k{"cu_seqlens_k"};
    // [bs] int32: dsa(s_b) = min(full, topk) + (s_b - full), full = (s_b / P) * P.
    Output<Buffer<int32_t, 1>> dsa_cache_seqlens{"dsa_cache_seqlens"};
    // [bs + 1] int32: exclusive prefix sums of dsa(s_b).
    Output<Buffer<int32_t, 1>> dsa_cu_seqlens_k{"dsa_cu_seqlens_k"};
    // Added by configure():
    // (max_len, bs) int32 = torch [bs, >= max_len], any row stride: token slots, live prefix only.
    Output<Buffer<int32_t, 2>> *page_table_1 = nullptr;
    // (cdiv(max_len, rps), bs) int32: page ids (slot / rps), live prefix only.
    Output<Buffer<int32_t, 2>> *real_page_table = nullptr;

    void configure() {
        if (with_page_table_1) page_table_1 = add_output<Buffer<int32_t, 2>>("page_table_1");
        if (with_real_page_table) real_page_table = add_output<Buffer<int32_t, 2>>("real_page_table");
    }

    void generate() {
        // 1-D tensors may be strided views; tables keep unit column stride.
        for (auto *b : {&seq_lens, &req_pool_indices}) b->dim(0).set_stride(Expr());
        for (auto *b : {&cache_seqlens, &cu_seqlens_k, &dsa_cache_seqlens, &dsa_cu_seqlens_k}) b->dim(0).set_stride(Expr());
        // The 1-D buffers are indexed from 0 (generators/common/interface.h says why; K2/K3 on
        // the H200: 5-7 % faster, e.g. K2 skip bs 1 4.44 -> 4.14 us, K3 bs 64 8.66 -> 8.25).
        // The tables keep free mins unless tables_from_zero (index_tables_from_zero says why).
        interface::index_from_zero(&seq_lens, &req_pool_indices, &cache_seqlens, &cu_seqlens_k, &dsa_cache_seqlens,
                                   &dsa_cu_seqlens_k);
        index_tables_from_zero(tables_from_zero, riding_grid, get_target(), &req_to_token, page_table_1, real_page_table);
        Expr bs = seq_lens.dim(0).extent();

        Var i = c.i, row = c.row;
        kv_len(i) = cast<int32_t>(seq_lens(i));
        dsa_len(i) = dsa_length(kv_len(i), dsa_index_topk, index_kpool);
        cache_seqlens(i) = kv_len(i);
        dsa_cache_seqlens(i) = dsa_len(i);
        cu_scan = c.prefix_sums("cu", cu_seqlens_k, kv_len, bs, scan_block);
        dsa_scan = c.prefix_sums("dsa_cu", dsa_cu_seqlens_k, dsa_len, bs, scan_block);

        // The live-prefix bound of row b: the columns a consumer reads.
        Expr live = min(kv_len(row), max_len);
        Func pt1 = page_table_1 ? Func(*page_table_1) : Func(), real = real_page_table ? Func(*real_page_table) : Func();
        c.define_tables(req_to_token, req_to_token.dim(0).extent(), req_to_token.dim(1).extent(),
                        req_pool_indices(row), live, real_page_shift, bounded,
                        page_table_1 ? &pt1 : nullptr, real_page_table ? &real : nullptr);
    }

    void schedule() {
        if (using_autoscheduler()) {
            // A baseline (autotune/): Halide's autoscheduler schedules the algorithm, for
            // table E's decode batch (bs 64, width 16384, real pages of 64, top-k 2048).
            autoschedule::buffer(&seq_lens, {64});
            autoschedule::buffer(&req_pool_indices, {64});
            autoschedule::buffer(&req_to_token, {16384, 128});
            autoschedule::scalar(&max_len, 16384);
            autoschedule::scalar(&dsa_index_topk, 2048);
            autoschedule::scalar(&real_page_shift, 6);
            autoschedule::scalar(&index_kpool, 1);
            for (auto *o : {&cache_seqlens, &dsa_cache_seqlens}) autoschedule::buffer(o, {64});
            for (auto *o : {&cu_seqlens_k, &dsa_cu_seqlens_k}) autoschedule::buffer(o, {65});
            autoschedule::buffer(page_table_1, {16384, 64});
            autoschedule::buffer(real_page_table, {256, 64});
            return;
        }
        dsa_metadata::Stages s;
        s.cu_seqlens_k = cu_seqlens_k;
        s.cu_scan = cu_scan;
        s.dsa_cu_seqlens_k = dsa_cu_seqlens_k;
        s.dsa_scan = dsa_scan;
        s.elementwise = {cache_seqlens, dsa_cache_seqlens};
        if (page_table_1) s.page_table_1 = *page_table_1;
        if (real_page_table) s.real_page_table = *real_page_table;
        c.schedule(s, get_target(), knobs());
    }

private:
    Common c;
    Func kv_len{"kv_len"}, dsa_len{"dsa_len"};
    scan::Blocked cu_scan, dsa_scan;
};

// ---------------------------------------------------------------------------------------
// K3 fused_dsa_target_verify_metadata (spec §3.3). E = bs * next_n expanded rows; row e
// belongs to request r = e / next_n, draft offset d = e % next_n; kv_r = s_r + next_n:
//   cache_seqlens[r] = kv_r ;              cu_seqlens_k = [0, cumsum(kv)]
//   seqlens_expanded[e] = s_r + d + 1 ;    dsa_cache_seqlens[e] = dsa(seqlens_expanded[e])
//   dsa_cu_seqlens_k = [0, cumsum(dsa)] ;  paged_mqa_ctx_lens_2d[r, d] = kv_r (optional)
//   tables of row e = request r's row, live = min(kv_r, max_seqlen_k)
class DsaTargetVerifyMetadata : public Generator<DsaTargetVerifyMetadata> {
public:
    LB_DSA_METADATA_PARAMS
    // Also write paged_mqa_ctx_lens_2d.
    GeneratorParam<bool> with_ctx_lens{"with_ctx_lens", false};

    // [bs] int32 | int64: kv length s_r before the draft tokens.
    Input<Buffer<void, 1>> seq_lens{"seq_lens"};
    // [bs] int32 | int64: request-pool row of request r.
    Input<Buffer<void, 1>> req_pool_indices{"req_pool_indices"};
    // (ctx >= max_seqlen_k, pool_rows) int32: token slots.
    Input<Buffer<int32_t, 2>> req_to_token{"req_to_token"};
    // Width of page_table_1; live = min(s_r + next_n, max_seqlen_k).
    Input<int32_t> max_seqlen_k{"max_seqlen_k"};
    Input<int32_t> dsa_index_topk{"dsa_index_topk"};
    Input<int32_t> real_page_shift{"real_page_shift"};
    // Draft tokens per request, >= 1.
    Input<int32_t> next_n{"next_n"};
    Input<int32_t> index_kpool{"index_kpool"};

    // [bs] int32: s_r + next_n.
    Output<Buffer<int32_t, 1>> cache_seqlens{"cache_seqlens"};
    // [bs + 1] int32: exclusive prefix sums of the above.
    Output<Buffer<int32_t, 1>> cu_seqlens_k{"cu_seqlens_k"};
    // [E] int32: s_r + d + 1.
    Output<Buffer<int32_t, 1>> seqlens_expanded{"seqlens_expanded"};
    // [E] int32: dsa(seqlens_expanded[e]).
    Output<Buffer<int32_t, 1>> dsa_cache_seqlens{"dsa_cache_seqlens"};
    // [E + 1] int32: exclusive prefix sums of the above.
    Output<Buffer<int32_t, 1>> dsa_cu_seqlens_k{"dsa_cu_seqlens_k"};
    // Added by configure():
    // (next_n, bs) int32 = torch [bs, >= next_n]: s_r + next_n for every d.
    Output<Buffer<int32_t, 2>> *paged_mqa_ctx_lens_2d = nullptr;
    // (max_seqlen_k, E) int32 = torch [E, >= max_seqlen_k]: token slots, live prefix only.
    Output<Buffer<int32_t, 2>> *page_table_1 = nullptr;
    // (cdiv(max_seqlen_k, rps), E) int32: page ids, live prefix only.
    Output<Buffer<int32_t, 2>> *real_page_table = nullptr;

    void configure() {
        if (with_ctx_lens) paged_mqa_ctx_lens_2d = add_output<Buffer<int32_t, 2>>("paged_mqa_ctx_lens_2d");
        if (with_page_table_1) page_table_1 = add_output<Buffer<int32_t, 2>>("page_table_1");
        if (with_real_page_table) real_page_table = add_output<Buffer<int32_t, 2>>("real_page_table");
    }

    void generate() {
        for (auto *b : {&seq_lens, &req_pool_indices}) b->dim(0).set_stride(Expr());
        for (auto *b : {&cache_seqlens, &cu_seqlens_k, &seqlens_expanded, &dsa_cache_seqlens, &dsa_cu_seqlens_k}) {
            b->dim(0).set_stride(Expr());
        }
        // Any strides for the 2-D ctx lens too (a transposed torch view included): its
        // columns are written one scalar at a time on every target.
        if (paged_mqa_ctx_lens_2d) paged_mqa_ctx_lens_2d->dim(0).set_stride(Expr());
        // The 1-D buffers are indexed from 0, the tables not (the K2 generator above says why).
        interface::index_from_zero(&seq_lens, &req_pool_indices, &cache_seqlens, &cu_seqlens_k, &seqlens_expanded,
                                   &dsa_cache_seqlens, &dsa_cu_seqlens_k);
        index_tables_from_zero(tables_from_zero, riding_grid, get_target(), &req_to_token, page_table_1, real_page_table);
        Var i = c.i, row = c.row;
        Expr bs = seq_lens.dim(0).extent();
        Expr expanded = bs * next_n;

        // Request of expanded row e (clamped: bounds inference ignores that e < E).
        Expr request = paging::clamp_index(i / next_n, bs);
        kv_len(i) = cast<int32_t>(seq_lens(i)) + next_n;
        draft_len(i) = cast<int32_t>(seq_lens(request)) + (i % next_n) + 1;
        dsa_len(i) = dsa_length(draft_len(i), dsa_index_topk, index_kpool);
        cache_seqlens(i) = kv_len(i);
        seqlens_expanded(i) = draft_len(i);
        dsa_cache_seqlens(i) = dsa_len(i);
        cu_scan = c.prefix_sums("cu", cu_seqlens_k, kv_len, bs, scan_block);
        dsa_scan = c.prefix_sums("dsa_cu", dsa_cu_seqlens_k, dsa_len, expanded, scan_block);
        if (paged_mqa_ctx_lens_2d) {
            Var d{"d"};
            (*paged_mqa_ctx_lens_2d)(d, i) = kv_len(i);
        }

        // Every draft row of request r gets request r's row, guarded on s_r + next_n
        // (not on the per-draft length).
        Expr row_request = paging::clamp_index(row / next_n, bs);
        Expr live = min(kv_len(row_request), max_seqlen_k);
        Func pt1 = page_table_1 ? Func(*page_table_1) : Func(), real = real_page_table ? Func(*real_page_table) : Func();
        c.define_tables(req_to_token, req_to_token.dim(0).extent(), req_to_token.dim(1).extent(),
                        req_pool_indices(row_request), live, real_page_shift, bounded,
                        page_table_1 ? &pt1 : nullptr, real_page_table ? &real : nullptr);
    }

    void schedule() {
        if (using_autoscheduler()) {
            // A baseline (autotune/): as K2's, with next_n 4 (256 expanded rows).
            autoschedule::buffer(&seq_lens, {64});
            autoschedule::buffer(&req_pool_indices, {64});
            autoschedule::buffer(&req_to_token, {16384, 128});
            autoschedule::scalar(&max_seqlen_k, 16384);
            autoschedule::scalar(&dsa_index_topk, 2048);
            autoschedule::scalar(&real_page_shift, 6);
            autoschedule::scalar(&next_n, 4);
            autoschedule::scalar(&index_kpool, 1);
            autoschedule::buffer(&cache_seqlens, {64});
            autoschedule::buffer(&cu_seqlens_k, {65});
            for (auto *o : {&seqlens_expanded, &dsa_cache_seqlens}) autoschedule::buffer(o, {256});
            autoschedule::buffer(&dsa_cu_seqlens_k, {257});
            autoschedule::buffer(paged_mqa_ctx_lens_2d, {4, 64});
            autoschedule::buffer(page_table_1, {16384, 256});
            autoschedule::buffer(real_page_table, {256, 256});
            return;
        }
        dsa_metadata::Stages s;
        s.cu_seqlens_k = cu_seqlens_k;
        s.cu_scan = cu_scan;
        s.dsa_cu_seqlens_k = dsa_cu_seqlens_k;
        s.dsa_scan = dsa_scan;
        s.elementwise = {cache_seqlens, seqlens_expanded, dsa_cache_seqlens};
        if (paged_mqa_ctx_lens_2d) s.ctx_lens_2d = *paged_mqa_ctx_lens_2d;
        if (page_table_1) s.page_table_1 = *page_table_1;
        if (real_page_table) s.real_page_table = *real_page_table;
        c.schedule(s, get_target(), knobs());
    }

private:
    Common c;
    Func kv_len{"kv_len"}, draft_len{"draft_len"}, dsa_len{"dsa_len"};
    scan::Blocked cu_scan, dsa_scan;
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::DsaDecodeMetadata, dsa_decode_metadata)
HALIDE_REGISTER_GENERATOR(livebound::DsaTargetVerifyMetadata, dsa_target_verify_metadata)
