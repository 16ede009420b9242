// K1 `normal_decode_set_metadata` (spec §3.1): the metadata FlashAttention-3 decode
// reads each step, rebuilt inside CUDA-graph replay.
//
// Algorithm only. The live-prefix contract is one predicate, `column < live_pages(b)`,
// on the page-table definitions; the bounded variant leaves every other column
// undefined (`undef`: not written at all) and Halide derives the column loop bound
// from the predicate. The full-width twin (`bounded=false`) is the same algorithm
// with the predicate switched off: every column below `max_seq_pages` is written,
// as SGLang's kernel did before PR #32109.
//
// Halide dimension order is innermost first: `page_table(column, b)` is the
// row-major torch tensor `page_table[b, column]`.
#include "Halide.h"

#include "common/interface.h"
#include "common/paging.h"
#include "common/scan.h"
#include "decode_metadata/cpu.h"
#include "decode_metadata/cuda.h"

namespace livebound {
namespace {

using namespace Halide;

class DecodeMetadata : public Generator<DecodeMetadata> {
public:
    // ---- variant facts (compile time) ----
    // false: the `skip_page_table` variant, only the seqlen scan runs.
    GeneratorParam<bool> gather_pages{"gather_pages", true};
    // Also build the SWA page table through the full->SWA slot mapping.
    GeneratorParam<bool> with_swa{"with_swa", false};
    // true: the live-prefix predicate is on (derived bound); false: full-width twin.
    GeneratorParam<Type> index_type{"index_type", Int(64)};  // dtype of req_pool_indices
    GeneratorParam<bool> bounded{"bounded", true};
    // Prefix-sum algorithm: 0 = serial recurrence; > 0 = blocked scan with this block.
    GeneratorParam<int> scan_block{"scan_block", 0};

    // ---- schedule knobs: defaults are the reviewed values of schedules/decode_metadata ----
    GeneratorParam<int> col_threads{"col_threads", decode_metadata::Knobs{}.col_threads};
    GeneratorParam<int> col_groups{"col_groups", decode_metadata::Knobs{}.col_groups};
    GeneratorParam<bool> full_grid{"full_grid", decode_metadata::Knobs{}.full_grid};
    GeneratorParam<int> scan_threads{"scan_threads", decode_metadata::Knobs{}.scan_threads};
    GeneratorParam<bool> one_kernel{"one_kernel", decode_metadata::Knobs{}.one_kernel};
    GeneratorParam<bool> riding_scan{"riding_scan", decode_metadata::Knobs{}.riding_scan};
    GeneratorParam<bool> riding_grid{"riding_grid", decode_metadata::Knobs{}.riding_grid};
    GeneratorParam<bool> riders_first{"riders_first", decode_metadata::Knobs{}.riders_first};
    GeneratorParam<bool> stage_scan_heads{"stage_scan_heads", decode_metadata::Knobs{}.stage_scan_heads};
    GeneratorParam<bool> scan_in_registers{"scan_in_registers", decode_metadata::Knobs{}.scan_in_registers};

    // [bs] int32 | int64 (type set by the `seq_lens.type` GeneratorParam): kv length before delta.
    Input<Buffer<void, 1>> seq_lens{"seq_lens"};
    // Added to every seq_lens[b] (speculative_step_id + 1 in draft decode, 0 in plain decode).
    Input<int32_t> seq_len_delta{"seq_len_delta"};

    // [bs] int32: L_b = int32(seq_lens[b]) + seq_len_delta.
    Output<Buffer<int32_t, 1>> cache_seqlens{"cache_seqlens"};
    // [bs + 1] int32: cu[0] = 0, cu[b + 1] = cu[b] + L_b (all entries written).
    Output<Buffer<int32_t, 1>> cu_seqlens_k{"cu_seqlens_k"};

    // Added by configure() when gather_pages:
    // [bs] int32 | int64: request-pool row of batch entry b.
    Input<Buffer<>> *req_pool_indices = nullptr;
    // (ctx, pool_rows) int32 = torch [pool_rows, ctx]: KV slot of each token position.
    Input<Buffer<int32_t, 2>> *req_to_token = nullptr;
    // Page-table columns the launch covers (the full width). Columns >= it are never touched.
    Input<int32_t> *max_seq_pages = nullptr;
    // log2(page_size); page sizes are powers of two.
    Input<int32_t> *page_shift = nullptr;
    // [full_pool_slots] int64: full-pool slot -> SWA-pool slot (with_swa only).
    Input<Buffer<int64_t, 1>> *full_to_swa = nullptr;
    // (max_seq_pages, bs) int32 = torch [bs, >= max_seq_pages], any row stride:
    // page id of each live page; columns >= live_pages(b) untouched (bounded variant).
    Output<Buffer<int32_t, 2>> *page_table = nullptr;
    // Same layout: SWA-pool page ids (with_swa only).
    Output<Buffer<int32_t, 2>> *swa_page_table = nullptr;

    void configure() {
        if (!gather_pages) return;
        req_pool_indices = add_input<Buffer<>>("req_pool_indices", index_type, 1);
        req_to_token = add_input<Buffer<int32_t, 2>>("req_to_token");
        max_seq_pages = add_input<int32_t>("max_seq_pages");
        page_shift = add_input<int32_t>("page_shift");
        if (with_swa) full_to_swa = add_input<Buffer<int64_t, 1>>("full_to_swa");
        page_table = add_output<Buffer<int32_t, 2>>("page_table");
        if (with_swa) swa_page_table = add_output<Buffer<int32_t, 2>>("swa_page_table");
    }

    void generate() {
        // Interface: 1-D tensors may be strided views (e.g. a column of a larger torch
        // tensor); 2-D tables keep Halide's default unit column stride.
        seq_lens.dim(0).set_stride(Expr());
        cache_seqlens.dim(0).set_stride(Expr());
        cu_seqlens_k.dim(0).set_stride(Expr());
        if (gather_pages) req_pool_indices->dim(0).set_stride(Expr());
        if (with_swa) full_to_swa->dim(0).set_stride(Expr());
        // Every buffer is indexed from 0 (generators/common/interface.h says why).
        interface::index_from_zero(&seq_lens, &cache_seqlens, &cu_seqlens_k, req_pool_indices, req_to_token,
                                   full_to_swa, page_table, swa_page_table);

        Expr bs = seq_lens.dim(0).extent();

        // L_b: the kv length the attention kernel uses.
        kv_len(b) = cast<int32_t>(seq_lens(b)) + seq_len_delta;
        cache_seqlens(b) = kv_len(b);

        if (scan_block > 0) {
            blocked_scan = scan::define_blocked(cu_seqlens_k, scan::padded(kv_len, bs), bs, scan_block, b);
        } else {
            scan::define_serial(cu_seqlens_k, kv_len, bs, b);
        }

        if (gather_pages) define_page_tables();
    }

    void schedule() {
        decode_metadata::Knobs knobs;
        knobs.col_threads = col_threads;
        knobs.col_groups = col_groups;
        knobs.full_grid = full_grid;
        knobs.scan_threads = scan_threads;
        knobs.one_kernel = one_kernel;
        knobs.riding_scan = riding_scan;
        knobs.riding_grid = riding_grid;
        knobs.riders_first = riders_first;
        knobs.stage_scan_heads = stage_scan_heads;
        knobs.scan_in_registers = scan_in_registers;
        decode_metadata::Stages stages{kv_len, cache_seqlens, cu_seqlens_k, blocked_scan,
                                       page_table ? Func(*page_table) : Func(),
                                       swa_page_table ? Func(*swa_page_table) : Func(),
                                       page_slot, request_row, b, column};
        if (get_target().has_feature(Target::CUDA)) {
            decode_metadata::schedule_cuda(stages, knobs);
        } else {
            decode_metadata::schedule_cpu(stages, knobs);
        }
    }

private:
    Var b{"b"}, column{"column"};
    Func kv_len{"kv_len"}, page_slot{"page_slot"}, request_row{"request_row"};
    scan::Blocked blocked_scan;  // undefined Funcs for the serial scan

    void define_page_tables() {
        Expr ctx = req_to_token->dim(0).extent();
        Expr pool_rows = req_to_token->dim(1).extent();
        Expr shift = *page_shift;

        // The live-prefix predicate: columns a consumer reads (spec §3.1).
        Expr live = paging::live_pages(kv_len(b), shift, *max_seq_pages);
        Expr is_live = column < live;

        // Slot of the first token of page `column` of request b.
        request_row(b) = paging::clamp_index(cast<int32_t>((*req_pool_indices)(b)), pool_rows);
        Expr first_token = paging::clamp_index(column << shift, ctx);
        page_slot(column, b) = (*req_to_token)(first_token, request_row(b));

        Expr page_id = page_slot(column, b) >> shift;
        (*page_table)(column, b) = bounded ? select(is_live, page_id, undef<int32_t>()) : page_id;

        if (with_swa) {
            Expr full_slots = full_to_swa->dim(0).extent();
            Expr swa_slot = (*full_to_swa)(paging::clamp_index(page_slot(column, b), full_slots));
            Expr swa_page_id = cast<int32_t>(swa_slot >> cast<int64_t>(shift));
            (*swa_page_table)(column, b) =
                bounded ? select(is_live, swa_page_id, undef<int32_t>()) : swa_page_id;
        }
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::DecodeMetadata, decode_metadata)
