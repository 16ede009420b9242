// Lesson 3: a sliding window's lower loop bound, derived from an overlap predicate.
//
// Causal attention with a sliding window W: query row m sees keys n with m - W <= n <= m.
// Attention kernels work in tiles: a query tile of BLOCK_M rows starting at m0 walks the keys
// in chunks of BLOCK_N. Chunks that end before m0 - W hold no key any row of the tile sees.
// SGLang PR #34462 skips them with a hand-written start for the chunk loop:
//     extend_start = floor(max(m0 - W, 0) / BLOCK_N) * BLOCK_N
// livebound writes no start. It states, next to the element predicates, when a chunk and a
// tile can meet at all (the tile's first row sees the chunk's last key: m0 - chunk_end <= W),
// and Halide solves that for the chunk index. This lesson prints the bound Halide derived,
// counts the chunks each tile's loop really ran, and compares them with SGLang's formula
// over a grid of tile shapes, tiles m0 and windows W.
#include "lesson_support.h"

#include <algorithm>

using namespace Halide;

struct Shape {
    int block_m, block_n;
};

int main() {
    const int num_keys = 1000;  // E: the extend chunk's length; queries and keys share positions
    const Shape shapes[] = {{64, 64}, {128, 64}, {32, 64}, {64, 32}, {16, 64}};
    const int windows[] = {-1, 1, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 300, 700, 999, 5000};  // -1: off
    std::printf("Lesson 3: the window's lower bound on the key-chunk loop, derived from an overlap predicate.\n\n");

    Buffer<int32_t> values(num_keys);  // [E] one small positive number per key
    for (int n = 0; n < num_keys; n++) values(n) = 1 + (7 * n) % 13;
    int cases = 0, equal = 0, tighter = 0, looser = 0, not_ideal = 0, wrong_sums = 0;
    for (const Shape &s : shapes) {
        const int BM = s.block_m, BN = s.block_n, tiles = (num_keys + BM - 1) / BM;
        // ---- the algorithm: out(qi, qt) = sum of values[n] over the keys row m = qt*BM + qi sees ----
        ImageParam value(Int(32), 1, "value");  // [E] int32
        Param<int> E("E"), W("W");              // keys; window (<= 0: off)
        Var qi("qi"), qt("qt");                 // row within the tile, tile
        RDom r(0, BN, 0, (E + BN - 1) / BN, "r");  // r.x: key within a chunk, r.y: the chunk
        Expr m = qt * BM + qi, n = r.y * BN + r.x;
        Expr W_eff = select(W > 0, W, E);        // "no window" = a window wider than any distance
        Expr chunk_start = r.y * BN, chunk_end = r.y * BN + BN - 1, tile_start = qt * BM, tile_end = qt * BM + BM - 1;
        // Chunk-level: can this chunk and this tile meet? (They mention only r.y and qt.)
        r.where(chunk_start < E);                 // the chunk holds keys
        r.where(tile_start - chunk_end <= W_eff); // window: the tile's first row sees the chunk's last key
        r.where(chunk_start - tile_end <= 0);     // causal: the chunk's first key is not after the last row
        // Element-level: does row m see key n?
        r.where(m < E && n < E && n <= m && m - n <= W_eff);
        Func out("out");  // (BM, tiles) int32: row qi of tile qt
        out(qi, qt) = 0;
        out(qi, qt) += value(clamp(n, 0, E - 1));
        out.update().reorder(r.x, qi, r.y, qt);  // the chunk loop outside the rows, as in a kernel

        Pipeline p(out);
        if (&s == &shapes[0]) {
            const std::string stmt = lesson::lowered_stmt(p, {value, E, W}, get_jit_target_from_environment());
            std::printf("BLOCK_M = BLOCK_N = 64, lowered for the CPU: the chunk loop and its derived bounds\n");
            const auto chunk_loop = lesson::lines_with_lets(stmt, {"out.s1.r$y.new_min.s =", "for (out.s1.r$y"});
            lesson::show(chunk_loop);
            std::printf("Read it with m0 = 64 qt and W > 0: the t-let with (-64 - W)/64 makes new_min = floor((m0 - W)/64);\n"
                        "the loop runs from max(new_min, 0), which is SGLang's floor(max(m0 - W, 0)/BLOCK_N), up to the\n"
                        "causal end min(qt + 1, cdiv(E, 64)). Halide solved the overlap predicates for both ends.\n\n");
            lesson::expect(lesson::any_line_has(chunk_loop, " W"),
                           "the chunk loop has a lower bound (new_min) computed from W");
        }
        // (Halide renames the second Func called "out" to "out$1": ask it for the name.)
        p.add_custom_lowering_pass(new lesson::RecordTrips(out.name() + ".s1.r$y", out.name() + ".s1.qt"));
        value.set(values);
        E.set(num_keys);

        for (int w : windows) {
            W.set(w);
            lesson::trips().clear();
            Buffer<int32_t> sums = p.realize({BM, tiles});
            const int w_eff = w > 0 ? w : num_keys;
            for (int t = 0; t < tiles; t++) {
                const int m0 = t * BM, end = std::min(num_keys, m0 + BM);  // causal end: SGLang's min(E, (mb+1)*BM)
                const int last_chunk = (end + BN - 1) / BN;                   // chunks [start, last_chunk)
                const int sglang_start = w > 0 ? std::max(m0 - w, 0) / BN : 0;  // extend_start / BLOCK_N
                // Ideal: the first chunk holding a key some row of the tile sees.
                const int ideal_start = std::max(m0 - w_eff, 0) / BN;
                // Halide rebases the trimmed loop to 0, so we know how many chunks it ran, not
                // which. Every chunk of [ideal_start, last_chunk) holds a key some row needs
                // (values are positive and the sums are checked), so the loop covered that
                // range; if it ran exactly that many chunks, it ran exactly those, and its
                // start is last_chunk minus its trip count.
                const int derived_start = last_chunk - lesson::trips_of(t);
                cases++;
                equal += derived_start == sglang_start;
                tighter += derived_start > sglang_start;
                looser += derived_start < sglang_start;
                not_ideal += derived_start != ideal_start;
                for (int qi_ = 0; qi_ < BM && m0 + qi_ < num_keys; qi_++) {  // plain C++ windowed sum
                    const int m_ = m0 + qi_;
                    int want = 0;
                    for (int n_ = std::max(m_ - w_eff, 0); n_ <= m_; n_++) want += values(n_);
                    wrong_sums += sums(qi_, t) != want;
                }
                if (BM == 128 && BN == 64 && w == 300 && t < 8) {
                    if (t == 0) std::printf("BLOCK_M 128, BLOCK_N 64 (SGLang's H200 tile), W = 300, E = %d:\n"
                                            "   m0  SGLang extend_start  derived start  chunks run: SGLang  derived\n", num_keys);
                    std::printf("%5d  %19d  %13d  %18d  %7d\n", m0, sglang_start * BN, derived_start * BN,
                                last_chunk - sglang_start, lesson::trips_of(t));
                }
            }
        }
    }
    std::printf("\n%d (shape, m0, W) cases over BLOCK_M x BLOCK_N in {64x64, 128x64, 32x64, 64x32, 16x64}:\n"
                "derived start equals SGLang's in %d, is tighter in %d, looser in %d.\n\n", cases, equal, tighter, looser);

    lesson::expect(looser == 0, "the derived lower bound is never below SGLang's extend_start");
    lesson::expect(not_ideal == 0, "each tile's loop starts at the first chunk holding a key the tile sees (the ideal)");
    lesson::expect(wrong_sums == 0, "every row's windowed sum equals the plain C++ loop");
    return lesson::finish("lesson_03");
}
