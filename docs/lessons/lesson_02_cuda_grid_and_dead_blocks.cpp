// Lesson 2: why a CUDA grid keeps its full width, and how its dead blocks exit.
//
// Lesson 1's gather again, scheduled the way SGLang launches it on a GPU: one block of 128
// threads per 128-column chunk of a row, over the table's whole width. On the CPU Halide
// trimmed the column loop to the live length. A GPU's block and thread loops are not loops
// Halide can trim: they are the launch grid, sized on the host before the kernel runs, from
// buffer extents. The host never reads seq_lens (it lives on the device, and a CUDA graph
// replays the same grid while seq_lens changes in place). So the grid keeps the static
// width, and the predicate becomes an `if` in every thread. In a block whose first column is
// past the live length every thread fails it: the block exits after one load of seq_lens[b]
// and one compare. That is SGLang's hand-written early exit, derived.
//
// Lowering for CUDA needs no GPU: this lesson lowers for host + CUDA and prints the kernel's
// loop nest (Halide's "conceptual" statement), then runs the same loop structure on the CPU.
// (livebound's own K1 schedule launches a few blocks per request instead and gives each
// thread a serial loop over its column chunks, which Halide does trim: docs/derived-bounds.md §3.)
#include "lesson_support.h"

#include <algorithm>

using namespace Halide;

int main() {
    const int block_cols = 128;  // columns per block (SGLang's BLOCK_COLS for page sizes > 1)

    // ---- the algorithm: lesson 1's gather, word for word ----
    ImageParam seq_lens(Int(32), 1, "seq_lens");          // [bs] tokens in request b's KV cache
    ImageParam req_to_token(Int(32), 2, "req_to_token");  // (ctx, bs) = torch [bs, ctx]: KV slot of each token
    Param<int> page_shift("page_shift");                  // log2(page_size)
    Param<int> max_seq_pages("max_seq_pages");            // the table's width in pages
    Var column("column"), b("b"), block("block"), lane("lane"), row("row"), unit("unit");
    Expr live_pages = min((seq_lens(b) + (Expr(1) << page_shift) - 1) >> page_shift, max_seq_pages);
    Expr first_token_of_page = clamp(column << page_shift, 0, req_to_token.dim(0).extent() - 1);
    Expr page_id = req_to_token(first_token_of_page, b) >> page_shift;
    Func page_table("page_table");  // (max_seq_pages, bs) int32 = torch [bs, max_seq_pages]
    page_table(column, b) = select(column < live_pages, page_id, undef<int32_t>());
    const std::vector<Argument> args{seq_lens, req_to_token, page_shift, max_seq_pages};

    // ---- GPU: blocks over (column chunk, request), a thread per column ----
    page_table.gpu_tile(column, b, block, row, lane, unit, block_cols, 1, TailStrategy::GuardWithIf);
    const Target cuda = get_host_target().with_feature(Target::CUDA).with_feature(Target::CUDACapability86);
    const std::string gpu_stmt = lesson::lowered_stmt(Pipeline(page_table), args, cuda, /*conceptual=*/true);
    std::printf("Lesson 2: the grid keeps its width; the predicate becomes each thread's exit.\n\n");
    std::printf("The kernel as Halide lowered it for CUDA (grid, then the per-thread test):\n");
    const std::string host_part = gpu_stmt.substr(0, gpu_stmt.find("gpu_block"));
    lesson::show(lesson::lines_with(host_part, "+ 127)/128"));
    lesson::show(lesson::lines_with(gpu_stmt, "gpu_block"));
    lesson::show(lesson::lines_with(gpu_stmt, "gpu_thread<CUDA> (.thread_id_x"));
    const auto thread_tests = lesson::lines_with(gpu_stmt, "seq_lens[");
    lesson::show({thread_tests.empty() ? std::string("(no test on seq_lens found)") : thread_tests.front()});
    std::printf("\nThe block loop runs over (width + 127)/128 blocks: buffer extents, known on the host.\n"
                "seq_lens[b] is read only inside the thread, in the `if` that guards the store: a block\n"
                "whose columns are all >= live_pages(b) does nothing but that load and compare.\n\n");

    // ---- the CPU: the same split as plain loops (block outer, lane inner). Here the block loop is
    //      an ordinary loop, and TrimNoOps trims it to the live blocks ----
    Func cpu_table("cpu_table");
    cpu_table(column, b) = select(column < live_pages, page_id, undef<int32_t>());
    cpu_table.split(column, block, lane, block_cols, TailStrategy::GuardWithIf).reorder(lane, block, b);
    Pipeline cpu_pipeline(cpu_table);
    cpu_pipeline.add_custom_lowering_pass(new lesson::RecordTrips("cpu_table.s0.column.block", "cpu_table.s0.b"));

    const int bs = 4, width = 1024, shift = 2, ctx_tokens = width << shift, poison = -7;
    const int lens[bs] = {0, 500, 520, 4096};  // 0, 125, 130 and all 1024 pages live
    Buffer<int32_t> lens_buf(bs), r2t(ctx_tokens, bs), out(width, bs);
    for (int r = 0; r < bs; r++) lens_buf(r) = lens[r];
    r2t.for_each_element([&](int t, int r) { r2t(t, r) = 100000 * r + t; });
    seq_lens.set(lens_buf);
    req_to_token.set(r2t);
    page_shift.set(shift);
    max_seq_pages.set(width);
    out.fill(poison);
    lesson::trips().clear();
    cpu_pipeline.realize(out);

    const int grid_blocks = (width + block_cols - 1) / block_cols;
    bool matches = true, cpu_blocks_are_live_blocks = true;
    int dead_blocks = 0;
    std::printf("request  live pages  GPU blocks launched  blocks with a live column  dead blocks (exit)  CPU block-loop trips\n");
    for (int r = 0; r < bs; r++) {
        const int live = std::min((lens[r] + (1 << shift) - 1) >> shift, width);
        const int live_blocks = (live + block_cols - 1) / block_cols;
        dead_blocks += grid_blocks - live_blocks;
        cpu_blocks_are_live_blocks &= lesson::trips_of(r) == live_blocks;
        for (int c = 0; c < width; c++) {
            const int want = c < live ? r2t(c << shift, r) >> shift : poison;  // plain C++ gather
            matches &= out(c, r) == want;
        }
        std::printf("%7d  %10d  %19d  %25d  %18d  %d\n", r, live, grid_blocks, live_blocks, grid_blocks - live_blocks,
                    lesson::trips_of(r));
    }
    std::printf("\n%d of %d launched blocks are dead and leave after one load of seq_lens[b].\n\n", dead_blocks,
                grid_blocks * bs);

    lesson::expect(host_part.find("seq_lens[") == std::string::npos,
                   "the host code that sizes the grid never reads seq_lens: the grid is the static width");
    // The grid's column dimension: the gpu_block loop's extent is a let of the host code.
    const auto width_lets = lesson::lines_with(host_part, " = (page_table.extent.0 + 127)/128");
    const std::string width_let = width_lets.empty() ? "?" : width_lets.front().substr(width_lets.front().find("let ") + 4);
    const std::string grid_extent = ", 0, " + width_let.substr(0, width_let.find(' ')) + ")";
    lesson::expect(lesson::any_line_has(lesson::lines_with(gpu_stmt, "gpu_block<CUDA> (page_table.s0.column"), grid_extent),
                   "the column-block grid dimension is (page_table.extent.0 + 127)/128 blocks");
    lesson::expect(!thread_tests.empty() && thread_tests.front().find("if (") != std::string::npos &&
                       thread_tests.front().find(".thread_id_x") != std::string::npos,
                   "inside the thread, seq_lens[b] is first read by an `if` on the thread's column");
    lesson::expect(cpu_blocks_are_live_blocks, "on the CPU the same block loop was trimmed to the live blocks");
    lesson::expect(matches, "the CPU run equals the plain C++ gather (live columns) and the poison (the rest)");
    return lesson::finish("lesson_02");
}
