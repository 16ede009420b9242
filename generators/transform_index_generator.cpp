// K6 `transform_index_page_table_prefill` (spec §3.6): DSA sparse prefill maps each query
// token's top-k kv positions to KV slots through the page_size = 1 page table.
//
// Algorithm only. SGLang's grid spans (request i, query row q < max_extend_len, topk
// column j); the query row of (q, i) is t = cu_seqlens_q[i] + q, and only pairs with
// `cu_seqlens_q[i] + q < cu_seqlens_q[i + 1]` hold a token (the predicate its PR #32109
// guard tests per q tile). Here that predicate masks the gather's store; the bounded
// variant lets Halide derive from it the live query rows of every request (dead q
// tiles run an empty loop: the early exit, never typed in). The full-width twin
// (`bounded=false`) is the same algorithm with the same mask, evaluated for every
// (q, i) of the grid through an opaque per-row value that Halide cannot turn into a loop
// bound: every tile is visited, as before the PR. Both write identical results.
//
// Rows t >= num_tokens get -1 (SGLang fills them on the host before the launch). Here
// that is the pure definition of `result`: `select(t >= num_tokens, -1, undef)`, so the
// bounded fill covers only those rows (bound derived again); the twin fills every row
// with -1 and the gather then overwrites rows < num_tokens.
//
// The bounded CUDA variants use a second form, `row_grid` (define_rows): one definition over
// the output rows, one kernel.
//
// Halide dimension order is innermost first: `result(j, t)` is the row-major torch
// tensor `result[t, j]`.
#include <stdexcept>

#include "Halide.h"
#include "common/autoschedule.h"

#include "common/scan.h"
#include "transform_index/cpu.h"
#include "transform_index/cuda.h"

namespace livebound {
namespace {

using namespace Halide;

class TransformIndex : public Generator<TransformIndex> {
public:
    // ---- variant facts (compile time) ----
    // false: only the -1 fill of every row (the num_tokens == 0 call); no inputs.
    GeneratorParam<bool> gather{"gather", true};
    // page_table rows are query tokens ([T, max_seqlen_k]) instead of requests ([bs, ...]).
    GeneratorParam<bool> expanded{"expanded", false};
    // true: the live-row predicate bounds the loops (derived); false: full-width twin.
    GeneratorParam<bool> bounded{"bounded", true};
    // true: the row form (CUDA, bounded; define_rows): one definition over the output rows,
    // one kernel. false: SGLang's (request, query row, topk) grid.
    GeneratorParam<bool> row_grid{"row_grid", false};

    // ---- schedule knobs: defaults are the reviewed values of schedules/transform_index ----
    GeneratorParam<int> j_threads{"j_threads", transform_index::Knobs{}.j_threads};
    GeneratorParam<int> q_tile{"q_tile", transform_index::Knobs{}.q_tile};
    GeneratorParam<int> fill_groups{"fill_groups", transform_index::Knobs{}.fill_groups};
    GeneratorParam<int> cpu_q_tile{"cpu_q_tile", transform_index::Knobs{}.cpu_q_tile};
    GeneratorParam<int> cpu_vector{"cpu_vector", transform_index::Knobs{}.cpu_vector};
    GeneratorParam<int> cpu_fill_rows{"cpu_fill_rows", transform_index::Knobs{}.cpu_fill_rows};

    // Added by configure() when gather:
    // (max_seqlen_k, rows) int32 = torch [bs or T, max_seqlen_k]: KV slot of each kv position.
    Input<Buffer<int32_t, 2>> *page_table = nullptr;
    // (topk, T) int32 = torch [T, topk]: per query token, kv positions (negative = empty).
    Input<Buffer<int32_t, 2>> *topk_indices = nullptr;
    // [bs + 1] int32, any stride: query-token offsets of the requests (cu[0] = 0, cu[bs] = N).
    Input<Buffer<int32_t, 1>> *cu_seqlens_q = nullptr;
    // N = cu_seqlens_q[bs], a host value: rows >= N get -1.
    Input<int32_t> *num_tokens = nullptr;
    // The batch's longest extend length (host value): sizes the q axis of the grid.
    Input<int32_t> *max_extend_len = nullptr;

    // (topk, output_num_tokens) int32 = torch [output_num_tokens, topk], any row stride:
    // every element written.
    Output<Buffer<int32_t, 2>> result{"result"};

    void configure() {
        if (!gather) return;
        page_table = add_input<Buffer<int32_t, 2>>("page_table");
        topk_indices = add_input<Buffer<int32_t, 2>>("topk_indices");
        cu_seqlens_q = add_input<Buffer<int32_t, 1>>("cu_seqlens_q");
        num_tokens = add_input<int32_t>("num_tokens");
        max_extend_len = add_input<int32_t>("max_extend_len");
    }

    void generate() {
        if (!gather) {
            result(j, t) = -1;
            return;
        }
        cu_seqlens_q->dim(0).set_stride(Expr());
        Expr bs = cu_seqlens_q->dim(0).extent() - 1;
        Expr topk = topk_indices->dim(0).extent();
        Expr n = *num_tokens;
        if (row_grid) {
            define_rows(bs, n);
            return;
        }

        // Rows past the tokens: -1. The bounded fill's loop starts at num_tokens (derived);
        // the twin visits every row and tests the same mask through an opaque value.
        if (bounded) {
            result(j, t) = select(t >= n, -1, undef<int32_t>());
        } else {
            pad_mask(t) = select(t >= n, cast<uint8_t>(1), cast<uint8_t>(0));
            result(j, t) = select(pad_mask(t) != 0, -1, undef<int32_t>());
        }

        // The gather over SGLang's grid: topk column j, query row q, request i.
        r = RDom(0, topk, 0, *max_extend_len, 0, bs, "r");
        Expr jj = r.x, q = r.y, i = r.z;
        Expr start = (*cu_seqlens_q)(i);
        Expr end = (*cu_seqlens_q)(i + 1);
        Expr token = start + q;
        // The predicate: (q, i) holds a query token.
        Expr live = token < end;

        // Bounds inference ignores predicates: every data-dependent index is clamped so
        // that no read or write leaves its buffer, whatever cu_seqlens_q and topk_indices
        // hold on a device where they cannot be checked (design §3).
        Expr out_row = clamp(token, result.dim(1).min(), result.dim(1).max());
        Expr index_row = clamp(token, 0, topk_indices->dim(1).extent() - 1);
        Expr index = (*topk_indices)(jj, index_row);
        Expr table_row = expanded ? clamp(token, 0, page_table->dim(1).extent() - 1)
                                  : clamp(i, 0, page_table->dim(1).extent() - 1);
        Expr slot = (*page_table)(clamp(index, 0, page_table->dim(0).extent() - 1), table_row);
        Expr value = select(index >= 0, slot, -1);

        if (bounded) {
            result(jj, out_row) = select(live, value, undef<int32_t>());
        } else {
            // The same mask, computed per (q, i) into a value the loop nest reads back:
            // Halide cannot solve a loaded value for q, so no loop is trimmed.
            Var qv{"qv"}, iv{"iv"};
            row_mask(qv, iv) = select((*cu_seqlens_q)(iv) + qv < (*cu_seqlens_q)(iv + 1),
                                      cast<uint8_t>(1), cast<uint8_t>(0));
            result(jj, out_row) = select(row_mask(q, i) != 0, value, undef<int32_t>());
        }
    }

    void schedule() {
        if (using_autoscheduler()) {
            // A baseline (autotune/): Halide's autoscheduler schedules the algorithm, for a
            // prefill of 8 requests, 8192 tokens, top-k 2048 over 8192 kv positions.
            autoschedule::buffer(page_table, {8192, 8});
            autoschedule::buffer(topk_indices, {2048, 8192});
            autoschedule::buffer(cu_seqlens_q, {9});
            autoschedule::scalar(num_tokens, 8192);
            autoschedule::scalar(max_extend_len, 4096);
            result.set_estimates({{0, 2048}, {0, 8192}});
            return;
        }
        transform_index::Knobs knobs;
        knobs.j_threads = j_threads;
        knobs.q_tile = q_tile;
        knobs.fill_groups = fill_groups;
        knobs.cpu_q_tile = cpu_q_tile;
        knobs.cpu_vector = cpu_vector;
        knobs.cpu_fill_rows = cpu_fill_rows;
        transform_index::Stages stages{result, row_mask, pad_mask, r, j, t, bounded};
        stages.gather = gather;
        stages.request = request;
        stages.row_grid = row_grid;
        if (row_grid && (!bounded || !gather || !get_target().has_feature(Target::CUDA))) {
            throw std::invalid_argument("transform_index: row_grid is a CUDA form of the bounded gather");
        }
        if (get_target().has_feature(Target::CUDA)) {
            transform_index::schedule_cuda(stages, knobs);
        } else {
            transform_index::schedule_cpu(stages, knobs);
        }
    }

private:
    Var j{"j"}, t{"t"};
    Func row_mask{"row_mask"}, pad_mask{"pad_mask"}, request{"request"};
    RDom r;

    // The row form: what every output row t holds, one pure definition. Row t < num_tokens
    // is a query token; its request is the largest i with cu_seqlens_q[i] <= t (an empty
    // request has cu[i] = cu[i+1] and loses to the next one), found by a binary search of
    // ceil(log2 B) halvings (not needed with an expanded page table, whose rows are tokens).
    // Rows t >= num_tokens get -1. Nothing is dead, so there is no bound to derive: the
    // grid is the output rows, the fill is the same definition, and a CUDA call is one
    // kernel. For valid cu_seqlens_q it writes what the grid form writes; with garbage on
    // the device every index is clamped, as there.
    void define_rows(const Expr &bs, const Expr &n) {
        auto &cu = *cu_seqlens_q;
        Expr token_row = clamp(t, 0, topk_indices->dim(1).extent() - 1);
        Expr index = (*topk_indices)(j, token_row);
        Expr table_row;
        if (expanded) {
            table_row = clamp(t, 0, page_table->dim(1).extent() - 1);
        } else {
            scan::define_owner_search(request, [&](const Expr &c) { return cu(clamp(c, 0, bs)); }, bs, t);
            table_row = clamp(request(t), 0, page_table->dim(1).extent() - 1);
        }
        Expr slot = (*page_table)(clamp(index, 0, page_table->dim(0).extent() - 1), table_row);
        result(j, t) = select(t >= n, -1, select(index >= 0, slot, -1));
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::TransformIndex, transform_index)
