// K4 `update_trtllm_mha_graph_metadata` (spec §3.4): the metadata the TRTLLM-MHA backend
// rebuilds on every CUDA-graph replay: cache_seqlens, cu_seqlens_k, optional cu_seqlens_q,
// the page table, an optional SWA page table and the optional SWA write locations.
//
// Algorithm only. The live-prefix contract is one predicate, `column < live_pages(b)`
// with live_pages(b) = min(cdiv(L_b, page_size), max_seq_pages), on the page-table
// definitions; the bounded variant leaves every other column undefined (`undef`: not
// written at all) and Halide derives the column loop bound from the predicate. The
// full-width twin (`bounded=false`) is the same algorithm with the predicate switched
// off: every column below `max_seq_pages` is written, as SGLang's kernel did before
// PR #32109.
//
// One generator, three parts (the `part` GeneratorParam), each its own AOT pipeline so
// that the optional pieces add variants instead of multiplying them:
//   seqlens: cache_seqlens, cu_seqlens_k[1..bs], cu_seqlens_q[1..bs] (q modes 1 and 2)
//   pages:   page_table, swa_page_table (SWA)
//   swa_out: swa_out_cache_loc (translated prefix, zero tail)
// and a fourth, `fused` = seqlens + pages in one pipeline (the same definitions), which the
// CUDA build uses so that a call is one kernel launch (schedules/trtllm_metadata/cuda.h);
// with SWA it holds swa_out too (a call that writes no swa_out_cache_loc passes an empty one).
// The runtime (runtime/src/trtllm_metadata.cpp) calls the parts a call needs.
//
// cu_seqlens_k[0] (and cu_seqlens_q[0]) are NOT written (spec §3.4): the seqlens part's
// prefix-sum outputs are views that start at element 1, so the pipeline cannot touch
// element 0 and the sums never read it (cu[i + 1] = L_0 + ... + L_i, inclusive sums).
//
// Halide dimension order is innermost first: `page_table(column, b)` is the row-major
// torch tensor `page_table[b, column]`.
#include "Halide.h"

#include "common/interface.h"
#include "common/paging.h"
#include "common/scan.h"
#include "trtllm_metadata/cpu.h"
#include "trtllm_metadata/cuda.h"

namespace livebound {
namespace {

using namespace Halide;

enum class Part { seqlens, pages, swa_out, fused };
// cu_seqlens_q: none (Q_MODE_NONE: not written), cumsum (Q_MODE_CUMSUM: prefix sums of
// qlens), strided (Q_MODE_STRIDED: (i + 1) * q_stride).
enum class QMode { none, cumsum, strided };

class TrtllmMetadata : public Generator<TrtllmMetadata> {
public:
    // ---- variant facts (compile time) ----
    GeneratorParam<Part> part{"part", Part::pages,
                              {{"seqlens", Part::seqlens},
                               {"pages", Part::pages},
                               {"swa_out", Part::swa_out},
                               {"fused", Part::fused}}};
    // seqlens part: which cu_seqlens_q the variant writes.
    GeneratorParam<QMode> q_mode{"q_mode", QMode::none,
                                 {{"none", QMode::none}, {"cumsum", QMode::cumsum}, {"strided", QMode::strided}}};
    // pages part: also build the SWA page table through swa_mapping.
    GeneratorParam<bool> with_swa{"with_swa", false};
    // pages part: true: the live-prefix predicate is on (derived bound); false: full-width twin.
    GeneratorParam<bool> bounded{"bounded", true};
    GeneratorParam<Type> seq_type{"seq_type", Int(32)};     // dtype of seq_lens
    GeneratorParam<Type> index_type{"index_type", Int(64)}; // dtype of req_pool_indices
    GeneratorParam<Type> qlens_type{"qlens_type", Int(32)}; // dtype of qlens (q_mode=cumsum)
    // Prefix-sum algorithm: 0 = serial recurrence; > 0 = blocked scan with this block.
    GeneratorParam<int> scan_block{"scan_block", 0};

    // ---- schedule knobs: defaults are the reviewed values of schedules/trtllm_metadata ----
    GeneratorParam<int> col_threads{"col_threads", trtllm_metadata::Knobs{}.col_threads};
    GeneratorParam<int> col_groups{"col_groups", trtllm_metadata::Knobs{}.col_groups};
    GeneratorParam<int> scan_threads{"scan_threads", trtllm_metadata::Knobs{}.scan_threads};
    GeneratorParam<int> out_threads{"out_threads", trtllm_metadata::Knobs{}.out_threads};
    GeneratorParam<bool> riders_first{"riders_first", trtllm_metadata::Knobs{}.riders_first};
    GeneratorParam<bool> scan_in_registers{"scan_in_registers", trtllm_metadata::Knobs{}.scan_in_registers};

    // Every input and output is added by configure(), in this order (the argv order the
    // runtime uses): inputs, then outputs. The fused part has the seqlens part's inputs, then
    // the pages part's from req_pool_indices on (with SWA: then the swa_out part's
    // out_cache_loc and num_real), then the three parts' outputs.
    // seqlens, pages:
    //   seq_lens          [bs] int32 | int64: kv lengths
    //   seqlen_offset     int32: added to every seq_lens[i]
    // seqlens, q_mode=cumsum:  qlens [bs] int32 | int64: query lengths
    // seqlens, q_mode=strided: q_stride int32: tokens per request
    // pages:
    //   req_pool_indices  [bs] int32 | int64: request-pool row of batch entry i
    //   req_to_token      (ctx, pool_rows) int32 = torch [pool_rows, ctx]: slots (-1 allowed)
    //   max_seq_pages     int32: page-table columns the launch covers (the full width)
    //   page_shift        int32: log2(page_size)
    //   swa_mapping       [n] int64: full slot -> SWA slot, -1 = none (with_swa)
    // swa_out:
    //   out_cache_loc     [num_out] int64: full slots written this step (-1 = none)
    //   num_real          int32: min(swa_out_len, num_out); 0 without out_cache_loc
    //   swa_mapping       [n] int64
    // outputs:
    //   seqlens: cache_seqlens [bs] int32; cu_seqlens_k [bs] int32 = torch cu_seqlens_k[1:bs+1];
    //            cu_seqlens_q [bs] int32 = torch cu_seqlens_q[1:bs+1] (q_mode != none)
    //   pages:   page_table (max_seq_pages, bs) int32 = torch [bs, >= max_seq_pages], any row
    //            stride: live prefix only (bounded); swa_page_table, same layout (with_swa)
    //   swa_out: swa_out_cache_loc [swa_out_len] int64, every entry written
    Input<Buffer<>> *seq_lens = nullptr;
    Input<int32_t> *seqlen_offset = nullptr;
    Input<Buffer<>> *qlens = nullptr;
    Input<int32_t> *q_stride = nullptr;
    Input<Buffer<>> *req_pool_indices = nullptr;
    Input<Buffer<int32_t, 2>> *req_to_token = nullptr;
    Input<int32_t> *max_seq_pages = nullptr;
    Input<int32_t> *page_shift = nullptr;
    Input<Buffer<int64_t, 1>> *out_cache_loc = nullptr;
    Input<int32_t> *num_real = nullptr;
    Input<Buffer<int64_t, 1>> *swa_mapping = nullptr;
    Output<Buffer<int32_t, 1>> *cache_seqlens = nullptr;
    Output<Buffer<int32_t, 1>> *cu_seqlens_k = nullptr;
    Output<Buffer<int32_t, 1>> *cu_seqlens_q = nullptr;
    Output<Buffer<int32_t, 2>> *page_table = nullptr;
    Output<Buffer<int32_t, 2>> *swa_page_table = nullptr;
    Output<Buffer<int64_t, 1>> *swa_out_cache_loc = nullptr;

    void configure() {
        switch (part) {
        case Part::seqlens:
        case Part::fused:
            seq_lens = add_input<Buffer<>>("seq_lens", seq_type, 1);
            seqlen_offset = add_input<int32_t>("seqlen_offset");
            if (q_mode == QMode::cumsum) qlens = add_input<Buffer<>>("qlens", qlens_type, 1);
            if (q_mode == QMode::strided) q_stride = add_input<int32_t>("q_stride");
            if (part == Part::fused) add_page_inputs();
            // The fused part with SWA computes swa_out too (swa_mapping is a page input).
            if (part == Part::fused && with_swa) add_swa_out_inputs(false);
            cache_seqlens = add_output<Buffer<int32_t, 1>>("cache_seqlens");
            cu_seqlens_k = add_output<Buffer<int32_t, 1>>("cu_seqlens_k");
            if (q_mode != QMode::none) cu_seqlens_q = add_output<Buffer<int32_t, 1>>("cu_seqlens_q");
            if (part == Part::fused) add_page_outputs();
            if (part == Part::fused && with_swa) swa_out_cache_loc = add_output<Buffer<int64_t, 1>>("swa_out_cache_loc");
            break;
        case Part::pages:
            seq_lens = add_input<Buffer<>>("seq_lens", seq_type, 1);
            seqlen_offset = add_input<int32_t>("seqlen_offset");
            add_page_inputs();
            add_page_outputs();
            break;
        case Part::swa_out:
            add_swa_out_inputs(true);
            swa_out_cache_loc = add_output<Buffer<int64_t, 1>>("swa_out_cache_loc");
            break;
        }
    }

    void add_page_inputs() {
        req_pool_indices = add_input<Buffer<>>("req_pool_indices", index_type, 1);
        req_to_token = add_input<Buffer<int32_t, 2>>("req_to_token");
        max_seq_pages = add_input<int32_t>("max_seq_pages");
        page_shift = add_input<int32_t>("page_shift");
        if (with_swa) swa_mapping = add_input<Buffer<int64_t, 1>>("swa_mapping");
    }
    void add_swa_out_inputs(bool with_mapping) {
        out_cache_loc = add_input<Buffer<int64_t, 1>>("out_cache_loc");
        num_real = add_input<int32_t>("num_real");
        if (with_mapping) swa_mapping = add_input<Buffer<int64_t, 1>>("swa_mapping");
    }
    void add_page_outputs() {
        page_table = add_output<Buffer<int32_t, 2>>("page_table");
        if (with_swa) swa_page_table = add_output<Buffer<int32_t, 2>>("swa_page_table");
    }

    void generate() {
        // Interface: 1-D tensors may be strided views (e.g. a column of a larger torch
        // tensor); 2-D tables keep Halide's default unit column stride.
        for (auto *in : {seq_lens, qlens, req_pool_indices}) {
            if (in) in->dim(0).set_stride(Expr());
        }
        for (auto *in : {out_cache_loc, swa_mapping}) {
            if (in) in->dim(0).set_stride(Expr());
        }
        for (auto *out : {cache_seqlens, cu_seqlens_k, cu_seqlens_q}) {
            if (out) out->dim(0).set_stride(Expr());
        }
        if (swa_out_cache_loc) swa_out_cache_loc->dim(0).set_stride(Expr());
        // Every buffer is indexed from 0 (generators/common/interface.h says why).
        interface::index_from_zero(seq_lens, qlens, req_pool_indices, req_to_token, out_cache_loc, swa_mapping,
                                   cache_seqlens, cu_seqlens_k, cu_seqlens_q, page_table, swa_page_table,
                                   swa_out_cache_loc);

        if (seq_lens) {
            // L_i = int32(seq_lens[i] + seqlen_offset), the addition in seq_lens' dtype.
            kv_len(b) = cast<int32_t>((*seq_lens)(b) + cast(seq_type, *seqlen_offset));
        }
        switch (part) {
        case Part::seqlens: define_seqlens(); break;
        case Part::pages: define_page_tables(); break;
        case Part::swa_out: define_swa_out(); break;
        case Part::fused:
            define_seqlens();
            define_page_tables();
            if (swa_out_cache_loc) define_swa_out();
            break;
        }
    }

    void schedule() {
        trtllm_metadata::Knobs knobs;
        knobs.col_threads = col_threads;
        knobs.col_groups = col_groups;
        knobs.scan_threads = scan_threads;
        knobs.out_threads = out_threads;
        knobs.riders_first = riders_first;
        knobs.scan_in_registers = scan_in_registers;
        auto func = [](auto *out) { return out ? Func(*out) : Func(); };
        trtllm_metadata::Stages stages{kv_len,
                                       func(cache_seqlens),
                                       func(cu_seqlens_k),
                                       func(cu_seqlens_q),
                                       scan_k,
                                       scan_q,
                                       func(page_table),
                                       func(swa_page_table),
                                       page_slot,
                                       request_row,
                                       func(swa_out_cache_loc),
                                       b,
                                       column};
        if (get_target().has_feature(Target::CUDA)) {
            trtllm_metadata::schedule_cuda(stages, knobs);
        } else {
            trtllm_metadata::schedule_cpu(stages, knobs);
        }
    }

private:
    Var b{"b"}, column{"column"};
    Func kv_len{"kv_len"}, q_len{"q_len"}, page_slot{"page_slot"}, request_row{"request_row"};
    Func exclusive_k{"exclusive_k"}, exclusive_q{"exclusive_q"};
    scan::Blocked scan_k, scan_q;  // undefined Funcs for the serial scan

    // out(i) = value(0) + ... + value(i) for i in [0, n): torch's cu[1 : n + 1].
    void define_inclusive_sums(Func out, Func value, Func exclusive, scan::Blocked *blocked) {
        Expr n = seq_lens->dim(0).extent();
        if (scan_block > 0) {
            // The blocked scan of common/scan.h gives exclusive sums; inclusive(i) = exclusive(i + 1).
            *blocked = scan::define_blocked(exclusive, scan::padded(value, n), n, scan_block, b);
            out(b) = exclusive(b + 1);
        } else {
            // Serial recurrence: out(0) = value(0), out(r) = out(r - 1) + value(r).
            out(b) = value(b);
            RDom r(1, n - 1, "scan_r");
            out(r) = out(r - 1) + value(r);
        }
    }

    void define_seqlens() {
        (*cache_seqlens)(b) = kv_len(b);
        define_inclusive_sums(*cu_seqlens_k, kv_len, exclusive_k, &scan_k);
        if (q_mode == QMode::cumsum) {
            q_len(b) = cast<int32_t>((*qlens)(b));
            define_inclusive_sums(*cu_seqlens_q, q_len, exclusive_q, &scan_q);
        } else if (q_mode == QMode::strided) {
            // cu_seqlens_q[i + 1] = (i + 1) * q_stride.
            (*cu_seqlens_q)(b) = (b + 1) * (*q_stride);
        }
    }

    void define_page_tables() {
        Expr ctx = req_to_token->dim(0).extent();
        Expr pool_rows = req_to_token->dim(1).extent();
        Expr shift = *page_shift;
        Expr page_size = Expr(1) << shift;

        // The live-prefix predicate: the columns a consumer reads (spec §3.4):
        // live_i = min(cdiv(L_i, PS), max_seq_pages).
        Expr live = paging::live_pages(kv_len(b), shift, *max_seq_pages);
        Expr is_live = column < live;

        // Slot t of the first token of page `column` of request b. Indices clamped
        // (bounds inference ignores predicates); the token offset in 64 bits so that a
        // full-width column past 2^31 / page_size cannot wrap.
        request_row(b) = paging::clamp_index(cast<int32_t>((*req_pool_indices)(b)), pool_rows);
        Expr first_token = cast<int32_t>(clamp(cast<int64_t>(column) << cast<int64_t>(shift), cast<int64_t>(0),
                                               cast<int64_t>(ctx) - 1));
        page_slot(column, b) = (*req_to_token)(first_token, request_row(b));
        Expr t = page_slot(column, b);

        // page_table = t / PS with C / Triton truncation toward zero (spec §1.4): a -1 slot
        // gives 0. Halide's `/` and `>>` floor, so negative slots are biased by PS - 1 first.
        Expr page_id = select(t < 0, t + (page_size - 1), t) >> shift;
        (*page_table)(column, b) = bounded ? select(is_live, page_id, undef<int32_t>()) : page_id;

        if (with_swa) {
            // m = t >= 0 ? swa_mapping[t] : -1;  swa page = m < 0 ? -1 : int32(m / PS).
            Expr n = swa_mapping->dim(0).extent();
            Expr m = select(t >= 0, (*swa_mapping)(paging::clamp_index(t, n)), cast<int64_t>(-1));
            Expr swa_page_id = select(m < 0, -1, cast<int32_t>(m >> cast<int64_t>(shift)));
            (*swa_page_table)(column, b) = bounded ? select(is_live, swa_page_id, undef<int32_t>()) : swa_page_id;
        }
    }

    void define_swa_out() {
        // k < num_real: loc < 0 ? -1 : swa_mapping[loc]; k >= num_real: 0 (spec §3.4).
        Var k = b;
        Expr num_out = out_cache_loc->dim(0).extent();
        Expr n = swa_mapping->dim(0).extent();
        Expr loc = (*out_cache_loc)(paging::clamp_index(k, num_out));
        Expr translated = select(loc < 0, cast<int64_t>(-1),
                                 (*swa_mapping)(cast<int32_t>(clamp(loc, cast<int64_t>(0), cast<int64_t>(n) - 1))));
        (*swa_out_cache_loc)(k) = select(k < *num_real, translated, cast<int64_t>(0));
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::TrtllmMetadata, trtllm_metadata)
