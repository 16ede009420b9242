// Lesson 1: a live-length gather, and the loop Halide trims to the live length.
//
// K1 (normal_decode_set_metadata) writes, for every request b, the page id of each of its
// pages into row b of a page table as wide as the longest context a CUDA graph may see. Only
// the first live_pages(b) = cdiv(seq_lens[b], page_size) columns mean anything. SGLang stops
// there with a hand-written early exit. livebound states the fact in the algorithm instead,
// "column c of row b is written iff c < live_pages(b)", and Halide finds the loop bound.
// This lesson prints the bound Halide found and proves that the loop runs exactly the live
// columns, however wide the table is.
#include "lesson_support.h"

#include <algorithm>

using namespace Halide;

int main() {
    // ---- the algorithm. Halide lists dimensions innermost first: (column, b) = torch [b, column] ----
    ImageParam seq_lens(Int(32), 1, "seq_lens");          // [bs] tokens in request b's KV cache
    ImageParam req_to_token(Int(32), 2, "req_to_token");  // (ctx, bs) = torch [bs, ctx]: KV slot of each token
    Param<int> page_shift("page_shift");                  // log2(page_size)
    Param<int> max_seq_pages("max_seq_pages");            // the table's width in pages (the static maximum)
    Var column("column"), b("b");

    Expr page_size = Expr(1) << page_shift;
    Expr live_pages = min((seq_lens(b) + page_size - 1) >> page_shift, max_seq_pages);  // cdiv(L_b, ps)
    // Bounds inference ignores predicates, so the token index is clamped into the row.
    Expr first_token_of_page = clamp(column << page_shift, 0, req_to_token.dim(0).extent() - 1);
    Expr page_id = req_to_token(first_token_of_page, b) >> page_shift;

    // The bounded form: a column past the live length is `undef`, i.e. not written at all.
    Func page_table("page_table");  // (max_seq_pages, bs) int32 = torch [bs, max_seq_pages]
    page_table(column, b) = select(column < live_pages, page_id, undef<int32_t>());
    // The full-width twin: the same gather with the predicate switched off.
    Func full_width("full_width");
    full_width(column, b) = page_id;
    // No schedule: b is the outer loop, column the inner one, both serial.

    // ---- what Halide made of it ----
    const std::vector<Argument> args{seq_lens, req_to_token, page_shift, max_seq_pages};
    const Target cpu = get_jit_target_from_environment();
    const std::string bounded_stmt = lesson::lowered_stmt(Pipeline(page_table), args, cpu);
    const std::string full_stmt = lesson::lowered_stmt(Pipeline(full_width), args, cpu);
    std::printf("Lesson 1: the predicate `column < live_pages(b)` becomes the column loop's bound.\n\n");
    std::printf("Bounded form, lowered for the CPU (the column loop and the lets that size it):\n");
    lesson::show(lesson::lines_with(bounded_stmt, "page_table.s0.column"));
    std::printf("Full-width twin (the same gather, no predicate): the loop spans the buffer.\n");
    lesson::show(lesson::lines_with(full_stmt, "for (full_width.s0.column"));
    std::printf("\nThe bounded loop's extent is `new_max`, read from seq_lens[b]: Halide's TrimNoOps pass\n"
                "solved `column < live_pages(b)` for `column`. No `if` is left in the loop body.\n\n");

    // ---- run both: 4 requests, page size 4, a table 64 pages wide, outputs pre-filled with poison ----
    const int bs = 4, ctx_tokens = 256, width = 64, shift = 2, poison = -7;
    const int lens[bs] = {0, 1, 37, 300};  // empty, one token, a partial last page, longer than the table
    Buffer<int32_t> lens_buf(bs), r2t(ctx_tokens, bs);
    for (int r = 0; r < bs; r++) lens_buf(r) = lens[r];
    r2t.for_each_element([&](int t, int r) { r2t(t, r) = 10000 * r + t; });  // slot of token t of request r
    seq_lens.set(lens_buf);
    req_to_token.set(r2t);
    page_shift.set(shift);
    max_seq_pages.set(width);

    // Runs `f` into `out` and returns how many times its column loop ran (lesson::trips()
    // keeps each iteration: request index, trip number).
    auto run = [&](Func f, Buffer<int32_t> &out) {
        Pipeline p(f);
        p.add_custom_lowering_pass(new lesson::RecordTrips(f.name() + ".s0.column", f.name() + ".s0.b"));
        lesson::trips().clear();
        out.fill(poison);
        p.realize(out);
        return lesson::trips().size();
    };
    Buffer<int32_t> full_out(width, bs), bounded_out(width, bs);
    const size_t full_trips = run(full_width, full_out);
    const size_t bounded_trips = run(page_table, bounded_out);  // trips() now holds this run's

    // ---- the same gather as a plain C++ loop ----
    size_t live_total = 0;
    bool values_match = true, tail_untouched = true, each_row_trimmed = true;
    std::printf("request  seq_len  live pages  column-loop trips (bounded)\n");
    for (int r = 0; r < bs; r++) {
        const int live = std::min((lens[r] + (1 << shift) - 1) >> shift, width);
        live_total += live;
        each_row_trimmed &= lesson::trips_of(r) == live;
        for (int c = 0; c < width; c++) {
            const int want = r2t(std::min(c << shift, ctx_tokens - 1), r) >> shift;
            if (c < live) values_match &= bounded_out(c, r) == want;
            else tail_untouched &= bounded_out(c, r) == poison;
            values_match &= full_out(c, r) == want;
        }
        std::printf("%7d  %7d  %10d  %d\n", r, lens[r], live, lesson::trips_of(r));
    }
    std::printf("\ncolumn-loop trips in all: bounded %zu (sum of live pages %zu), full width %zu (bs x width %d)\n\n",
                bounded_trips, live_total, full_trips, bs * width);

    lesson::expect(lesson::any_line_has(lesson::lines_with(bounded_stmt, "page_table.s0.column.new_max ="), "seq_lens"),
                   "the bounded column loop is sized by a let computed from seq_lens[b]");
    lesson::expect(!lesson::any_line_has(lesson::lines_with(bounded_stmt, "if ("), "column"),
                   "no `if` on the column is left in the bounded statement");
    lesson::expect(each_row_trimmed, "for every request the bounded loop ran exactly live_pages(b) times");
    lesson::expect(full_trips == size_t(bs) * width, "the full-width loop ran bs x width times");
    lesson::expect(values_match, "every column written equals the plain C++ gather");
    lesson::expect(tail_untouched, "every column >= live_pages(b) still holds the poison: never written");
    return lesson::finish("lesson_01");
}
