// K5 `_get_k_and_s_triton` (spec §3.5): the DSA indexer's K + scale gather. For every
// request b and token t < seq_lens[b] it copies the token's FP8 key row (D bytes) and its
// FP32 scale (4 raw bytes) out of a paged byte buffer into one ragged, contiguous array:
//
//   off_b = seq_lens[0] + ... + seq_lens[b-1]
//   pg = page_indices[b, t / page_size],  j = t % page_size
//   k_out[off_b + t, 0:D] = buf[pg, j*D : j*D + D]
//   s_out[off_b + t, 0:4] = buf[pg, page_size*D + 4*j : page_size*D + 4*j + 4]
//
// Algorithm only. The work is a scatter over (token t, request b), t in [0, max_seq_len):
// the grid SGLang launches. Which tokens exist is one predicate, `t < seq_lens[b]`
// (`is_live` below); every other (t, b) is `undef` (no store), and Halide derives the
// token loop bound from the predicate. It is a compute kernel: all seq_len_sum output rows
// are defined, and nothing else exists. So the full-width twin (`bounded=false`) cannot
// write dead tokens (their rows belong to the next request): it keeps the same predicate
// as a per-token mask that the compiler cannot see through (materialised by the schedule
// into a one-element buffer), so every (t, b) of the grid is visited, as SGLang's kernel
// did before PR #32109, and writes identical bytes.
//
// Memory is addressed in 4-byte words. The runtime passes typed uint32 views of the
// caller's bytes (spec layout: page_size*D key bytes then page_size*4 scale bytes per page,
// D a multiple of 4), so a key row is D/4 words and a scale is exactly one word:
//   buf    (word, page)  uint32 = torch uint8 [num_pages, page_size*(D+4)] viewed as words
//   k_out  (word, row)   uint32 = torch uint8 [seq_len_sum, D]
//   s_out  (row)         uint32 = torch uint8 [seq_len_sum, 4]
// Every offset into buf is 64-bit (large_buffers): page id x page stride passes 2^31 for
// page ids >= 254,201 at D = 128, page_size = 64, where SGLang's int32 arithmetic wraps
// (spec §1.4).
//
// A second form of the same copy, `row_grid` (CUDA, bounded; define_row_grid), iterates the
// output rows instead and finds each row's request by a binary search over off_b: one
// kernel for both outputs, 16-byte accesses. The runtime prefers it where it applies.
//
// Halide dimension order is innermost first: `page_indices(column, b)` is the row-major
// torch tensor `page_indices[b, column]`.
#include <stdexcept>
#include <string>

#include "Halide.h"

#include "common/interface.h"
#include "common/paging.h"
#include "common/scan.h"
#include "dsa_kv_gather/cpu.h"
#include "dsa_kv_gather/cuda.h"

namespace livebound {
namespace {

using namespace Halide;

class DsaKvGather : public Generator<DsaKvGather> {
public:
    // ---- variant facts (compile time) ----
    // index_head_dim D: key bytes per token (a multiple of 4). SGLang: 128.
    GeneratorParam<int> head_dim{"head_dim", 128};
    // true: the live-token predicate is on (derived bound); false: full-width twin.
    GeneratorParam<bool> bounded{"bounded", true};
    // Prefix-sum algorithm for off_b: 0 = serial recurrence; > 0 = blocked scan with this block.
    GeneratorParam<int> scan_block{"scan_block", 0};

    // ---- schedule knobs: defaults are the reviewed values of schedules/dsa_kv_gather ----
    GeneratorParam<int> token_threads{"token_threads", dsa_kv_gather::Knobs{}.token_threads};
    GeneratorParam<int> tokens_per_thread{"tokens_per_thread", dsa_kv_gather::Knobs{}.tokens_per_thread};
    GeneratorParam<int> chunks_per_thread{"chunks_per_thread", dsa_kv_gather::Knobs{}.chunks_per_thread};
    GeneratorParam<int> scale_chunks{"scale_chunks", dsa_kv_gather::Knobs{}.scale_chunks};
    GeneratorParam<int> cpu_vector_words{"cpu_vector_words", dsa_kv_gather::Knobs{}.cpu_vector_words};
    GeneratorParam<int> rows_per_thread{"rows_per_thread", dsa_kv_gather::Knobs{}.rows_per_thread};
    GeneratorParam<bool> stage_scan_heads{"stage_scan_heads", dsa_kv_gather::Knobs{}.stage_scan_heads};
    GeneratorParam<bool> stage_scan_totals{"stage_scan_totals", dsa_kv_gather::Knobs{}.stage_scan_totals};
    GeneratorParam<int> row_lanes{"row_lanes", dsa_kv_gather::Knobs{}.row_lanes};
    GeneratorParam<int> block_threads{"block_threads", dsa_kv_gather::Knobs{}.block_threads};
    // true: the row-grid form (CUDA, bounded only; see define_row_grid): the work is the
    // output rows, 16-byte accesses, one kernel for both outputs.
    GeneratorParam<bool> row_grid{"row_grid", false};

    // (page_size*(D+4)/4, num_pages) uint32 = torch uint8 [num_pages, page_size*(D+4)], any
    // row stride (a multiple of 4 bytes): the paged key + scale buffer, as words.
    Input<Buffer<uint32_t, 2>> buf{"buf"};
    // (max_pages, B) int32 | int64 (type set by `page_indices.type`) = torch [B, max_pages],
    // any row stride: page id of each request's k-th page.
    Input<Buffer<void, 2>> page_indices{"page_indices"};
    // [B] int32 | int64 (type set by `seq_lens.type`): tokens per request.
    Input<Buffer<void, 1>> seq_lens{"seq_lens"};
    // Tokens per request the grid covers; >= every seq_lens[b] (a caller guarantee on CUDA).
    Input<int32_t> max_seq_len{"max_seq_len"};
    // Tokens per page (SGLang: 64). Any value >= 1: t / page_size and t % page_size.
    Input<int32_t> page_size{"page_size"};

    // (D/4, seq_len_sum) uint32 = torch uint8 [seq_len_sum, D]: key rows, all written.
    Output<Buffer<uint32_t, 2>> k_out{"k_out"};
    // Added by configure(): [seq_len_sum] uint32 = torch uint8 [seq_len_sum, 4], raw FP32
    // scale bytes, all written. The row grid takes it as (1, seq_len_sum) (word, row), the
    // key rows' layout with one word per row, so that both outputs share their loops.
    Output<Buffer<uint32_t>> *s_out = nullptr;

    // Added by configure() for the row grid: the row strides of buf and k_out in 16-byte
    // units (4 words), so that the kernel can prove every 16-byte access aligned (a
    // buffer's own stride is an opaque kernel argument). The runtime passes this form only
    // 16-byte aligned storage.
    Input<int32_t> *buf_row_stride_16b = nullptr;
    Input<int32_t> *k_out_row_stride_16b = nullptr;

    void configure() {
        s_out = add_output<Buffer<uint32_t>>("s_out", row_grid ? 2 : 1);
        if (!row_grid) return;
        buf_row_stride_16b = add_input<int32_t>("buf_row_stride_16b");
        k_out_row_stride_16b = add_input<int32_t>("k_out_row_stride_16b");
    }

    void generate() {
        const int words = head_dim / 4;
        if (head_dim <= 0 || head_dim % 4 != 0) throw std::invalid_argument("dsa_kv_gather: head_dim must be a positive multiple of 4");

        // Interface. Every buffer is indexed from 0 (generators/common/interface.h). Key
        // rows are exactly D/4 contiguous words (a compile-time extent: the word loop is a
        // fixed 32-lane loop); buf pages are contiguous words; strides of rows are runtime
        // values. seq_lens may be a strided view.
        interface::index_from_zero(&k_out, s_out, &buf, &page_indices, &seq_lens);
        k_out.dim(0).set_extent(words).set_stride(1);
        if (row_grid) {
            s_out->dim(0).set_extent(1).set_stride(1);
        } else {
            s_out->dim(0).set_stride(Expr());
        }
        buf.dim(0).set_stride(1);
        seq_lens.dim(0).set_stride(Expr());

        Expr bs = seq_lens.dim(0).extent();
        Expr rows = k_out.dim(1).extent();  // seq_len_sum (the runtime passes s_out with the same extent)
        Expr max_pages = page_indices.dim(0).extent();
        Expr num_pages = buf.dim(1).extent();
        Expr page_words = buf.dim(0).extent();  // page_size * (D + 4) / 4

        // The live length of request b, clamped to [0, max_seq_len] (the tokens the grid
        // covers) in seq_lens' own type before narrowing: identical for valid inputs.
        Expr raw_len = seq_lens(b);
        len(b) = cast<int32_t>(clamp(raw_len, cast(raw_len.type(), 0), cast(raw_len.type(), max_seq_len)));

        if (row_grid) {
            define_row_grid(bs, max_pages, num_pages);
            return;
        }

        // The grid: every token position t < max_seq_len of every request b.
        token = RDom(0, max_seq_len, 0, bs, "token");

        // Each output gets its own copies of the per-request and per-token values (off_b,
        // the predicate, the page id), as each SGLang program recomputes off_b: the two
        // outputs then schedule independently (one pass each on the CPU; on CUDA one
        // kernel each, every block computing its request's off_b itself).
        define_gather(key, "k", bs, rows, max_pages, num_pages);
        define_gather(scale, "s", bs, rows, max_pages, num_pages);

        Expr rt = token.x, rb = token.y;
        Expr j = rt % page_size;  // rt >= 0: floor == truncation
        // Key words j*D/4 + w and the scale word page_size*D/4 + j of the token's page,
        // clamped to the page (never binds for j < page_size).
        Expr key_word = min(j * words + w, page_words - 1);
        Expr scale_word = min(page_size * words + j, page_words - 1);

        k_out(w, i) = undef<uint32_t>();
        k_out(w, key.out_row) = select(key.live, buf(key_word, key.page(rt, rb)), undef<uint32_t>());
        (*s_out)(i) = undef<uint32_t>();
        (*s_out)(scale.out_row) = select(scale.live, buf(scale_word, scale.page(rt, rb)), undef<uint32_t>());
    }

    void schedule() {
        dsa_kv_gather::Knobs knobs;
        knobs.token_threads = token_threads;
        knobs.tokens_per_thread = tokens_per_thread;
        knobs.chunks_per_thread = chunks_per_thread;
        knobs.scale_chunks = scale_chunks;
        knobs.cpu_vector_words = cpu_vector_words;
        knobs.rows_per_thread = rows_per_thread;
        knobs.stage_scan_heads = stage_scan_heads;
        knobs.stage_scan_totals = stage_scan_totals;
        knobs.row_lanes = row_lanes;
        knobs.block_threads = block_threads;
        if (row_grid) {
            if (!get_target().has_feature(Target::CUDA) || !bounded) {
                throw std::invalid_argument("dsa_kv_gather: row_grid is a CUDA form of the bounded variant");
            }
            by_row.k_out = k_out;
            by_row.w = w;
            by_row.batch = seq_lens.dim(0).extent();
            by_row.words = head_dim / 4;
            by_row.s_out = *s_out;
            dsa_kv_gather::schedule_cuda_rows(by_row, knobs);
            return;
        }
        key.out = k_out;
        scale.out = *s_out;
        dsa_kv_gather::Stages stages{key, scale, token, w, b, bounded};
        if (get_target().has_feature(Target::CUDA)) {
            dsa_kv_gather::schedule_cuda(stages, knobs);
        } else {
            dsa_kv_gather::schedule_cpu(stages, knobs);
        }
    }

private:
    Var w{"w"}, i{"i"}, b{"b"}, t{"t"};
    RDom token;
    Func len{"len"};
    dsa_kv_gather::Gather key, scale;
    dsa_kv_gather::RowGrid by_row;

    // The row-grid form. The work is the output rows r in [0, seq_len_sum) rather than the
    // grid of (t, b) positions. Row r belongs to the request whose rows [off_b, off_b +
    // len_b) hold it: the largest b with off_b <= r (an empty request has off_b = off_{b+1}
    // and loses to the next one), found by a binary search over the prefix sums; then
    // t = r - off_b and the copy is the scatter form's. Which rows exist is one predicate,
    // `r < off_B` (the sum of the live lengths), as `t < seq_lens[b]` is in the scatter
    // form: for valid inputs it holds on every row, and a graph replayed with shorter
    // lengths (a smaller sum than the captured seq_len_sum) leaves the rows past the new
    // sum untouched, as SGLang's kernel does (on the GPU it guards each row's store).
    void define_row_grid(const Expr &bs, const Expr &max_pages, const Expr &num_pages) {
        const int words = head_dim / 4;
        // Interface: 16-byte aligned rows (the runtime checks the caller's pointers and strides).
        buf.set_host_alignment(16);
        buf.dim(1).set_stride(4 * *buf_row_stride_16b);
        k_out.set_host_alignment(16);
        k_out.dim(1).set_stride(4 * *k_out_row_stride_16b);

        by_row.off = Func("off");
        by_row.scan = scan::define_blocked(by_row.off, scan::padded(len, bs), bs, scan_block, b);
        // Row i's request: a binary search over off_b.
        by_row.request = Func("request");
        by_row.search = scan::define_owner_search(
            by_row.request, [&](const Expr &c) { return by_row.off(clamp(c, 0, bs - 1)); }, bs, i);

        // Where output row i lives: its request's token t = i - off_b, the clamped page id
        // of t's page, and the slot j = t mod page_size inside it (clamped, a no-op, so that
        // bounds inference sees j < page_size; the word is not clamped, which would hide its
        // 16-byte alignment). One quotient serves both.
        Expr request = clamp(by_row.request(i), 0, bs - 1);
        Expr token = i - by_row.off(request);  // >= 0
        Expr page_column = token / page_size;
        Expr raw_page = page_indices(clamp(page_column, 0, max_pages - 1), request);
        by_row.page = Func("page");
        by_row.slot = Func("slot");
        by_row.page(i) = cast<int32_t>(clamp(raw_page, cast(raw_page.type(), 0), cast(raw_page.type(), num_pages - 1)));
        by_row.slot(i) = clamp(token - page_column * page_size, 0, page_size - 1);

        // What output row i holds: defined on every i (every read clamped), so a schedule
        // may load rows before it knows which of them are written.
        by_row.key_value = Func("key_value");
        by_row.scale_value = Func("scale_value");
        by_row.key_value(w, i) = buf(by_row.slot(i) * words + w, by_row.page(i));
        by_row.scale_value(i) = buf(page_size * words + by_row.slot(i), by_row.page(i));

        // Which rows are written: r < off_B.
        by_row.row = RDom(0, k_out.dim(1).extent(), "row");
        RDom &r = by_row.row;
        r.where(r < by_row.off(bs));
        k_out(w, i) = undef<uint32_t>();
        k_out(w, r) = by_row.key_value(w, r);
        (*s_out)(w, i) = undef<uint32_t>();
        (*s_out)(w, r) = by_row.scale_value(r);  // w: the one word of a scale row
    }

    // Defines one output's off_b, predicate, page id and store row over the grid `token`.
    void define_gather(dsa_kv_gather::Gather &g, const std::string &tag, const Expr &bs, const Expr &rows,
                       const Expr &max_pages, const Expr &num_pages) {
        g.off = Func("off_" + tag);
        g.live_len = Func("live_len_" + tag);
        g.is_live = Func("is_live_" + tag);
        g.live_mask = Func("live_mask_" + tag);
        g.page = Func("page_" + tag);

        // off_b: exclusive prefix sum of the lengths, int32 (scan.h): exact for valid inputs,
        // where off_b <= seq_len_sum < 2^31. Everything derived from it below is compared and
        // clamped in int64, so a broken (wrapping) sum cannot move a store out of the output.
        if (scan_block > 0) {
            g.scan = scan::define_blocked(g.off, scan::padded(len, bs), bs, scan_block, b);
        } else {
            scan::define_serial(g.off, len, bs, b);
        }

        // The predicate: token t of request b exists, t < seq_lens[b]. The second bound,
        // seq_len_sum - off_b, never binds for valid inputs (off_b + seq_lens[b] <=
        // seq_len_sum); it keeps a CUDA caller's broken seq_len_sum from making two tokens
        // share the last row. Computed in int64 (a broken off_b may have wrapped) and
        // clamped back into [0, max_seq_len], so the predicate is one int32 comparison of
        // t, which Halide solves for t.
        Expr room = clamp(cast<int64_t>(rows) - cast<int64_t>(g.off(b)), cast<int64_t>(0), cast<int64_t>(len(b)));
        g.live_len(b) = cast<int32_t>(room);
        g.is_live(t, b) = t < g.live_len(b);
        // The twin's mask: the same predicate, materialised per token by the schedule, so
        // that no loop bound can be derived from it.
        if (!bounded) g.live_mask(t, b) = g.is_live(t, b);

        // Page of token t, clamped for memory safety (bounds inference ignores predicates:
        // design §3). Clamped in the index's own type before narrowing, so that an int64
        // page id of 2^32 + 1 is not truncated into a valid id.
        Expr raw_page = page_indices(paging::clamp_index(t / page_size, max_pages), b);
        g.page(t, b) = cast<int32_t>(clamp(raw_page, cast(raw_page.type(), 0), cast(raw_page.type(), num_pages - 1)));

        Expr rt = token.x, rb = token.y;
        g.live = bounded ? g.is_live(rt, rb) : g.live_mask(rt, rb);
        // Store row off_b + t, clamped into the output (never binds where `live` holds).
        Expr row = cast<int64_t>(g.off(rb)) + cast<int64_t>(rt);
        g.out_row = cast<int32_t>(clamp(row, cast<int64_t>(0), cast<int64_t>(rows) - 1));
    }
};

}  // namespace
}  // namespace livebound

HALIDE_REGISTER_GENERATOR(livebound::DsaKvGather, dsa_kv_gather)
