// Lesson 4: the window over the cached prefix, which SGLang's hand-written bound leaves alone.
//
// Chunked prefill: a long prompt arrives in pieces. When a piece of E new tokens runs, the P
// tokens before it are already in the paged KV cache (the prefix). K7 attends in two stages:
// stage 1 over the prefix keys j (positions 0 .. P-1), stage 2 over the new keys. Query row m
// sits at position P + m, so with a sliding window W it sees prefix key j only if
// (P + m) - j <= W. SGLang's #34462 gave stage 2 a window start; stage 1 still loops over every
// prefix chunk, 0 .. P, and only skips the loads of a chunk once it has found its whole mask
// false. livebound states stage 1's window as it states stage 2's, an overlap predicate per
// (tile, chunk), and Halide derives the prefix loop's start from it (and an empty loop for a
// tile whose first row is already W past the prefix's last key).
#include "lesson_support.h"

#include <algorithm>

using namespace Halide;

int main() {
    const int BM = 128, BN = 64;  // SGLang's H200 tile for head dims <= 128
    std::printf("Lesson 4: the prefix stage of chunked prefill, bounded by the window.\n\n");

    // ---- the algorithm: stage 1 alone. out(qi, qt) = sum of prefix values row m = qt*BM + qi sees ----
    ImageParam value(Int(32), 1, "value");  // [P] int32, one number per prefix key
    Param<int> P("P"), E("E"), W("W");     // prefix keys, new tokens (query rows), window (<= 0: off)
    Var qi("qi"), qt("qt");
    RDom r(0, BN, 0, (P + BN - 1) / BN, "r");  // r.x: key within a chunk, r.y: the prefix chunk
    Expr m = qt * BM + qi, j = r.y * BN + r.x;
    Expr W_eff = select(W > 0, W, P + E);  // off = wider than any distance
    Expr chunk_start = r.y * BN, chunk_end = r.y * BN + BN - 1, tile_start = qt * BM;
    // Chunk-level (they mention only r.y and qt), as livebound's K7 states them:
    r.where(chunk_start < select(tile_start < E, P, 0));  // the chunk holds prefix keys (none for a dead tile)
    r.where((P + tile_start) - chunk_end <= W_eff);       // window: the tile's first row sees the chunk's last key
    r.where(tile_start + 1 <= W_eff);                     // ... and sees the prefix's last key, P - 1, at all
    // Element-level:
    r.where(m < E && j < P && (P + m) - j <= W_eff);
    Func out("out");  // (BM, tiles) int32
    out(qi, qt) = 0;
    out(qi, qt) += value(clamp(j, 0, P - 1));
    out.update().reorder(r.x, qi, r.y, qt);

    Pipeline p(out);
    const std::string stmt = lesson::lowered_stmt(p, {value, P, E, W}, get_jit_target_from_environment());
    const auto prefix_loop = lesson::lines_with_lets(stmt, {"out.s1.r$y.new_min.s =", "for (out.s1.r$y"});
    std::printf("The prefix-chunk loop, lowered for the CPU (BLOCK_M %d, BLOCK_N %d):\n", BM, BN);
    lesson::show(prefix_loop);
    std::printf("Read it with m0 = 128 qt and W > 0: the t-let (0 - (W - P))/64 makes new_min = floor((P + m0 - W)/64),\n"
                "the chunk of the first prefix key the tile's first row sees; new_max is cdiv(P, 64), or 0 for a dead\n"
                "tile. SGLang's stage 1 starts every tile at chunk 0.\n\n");
    p.add_custom_lowering_pass(new lesson::RecordTrips("out.s1.r$y", "out.s1.qt"));

    struct Case {
        const char *what;
        int prefix, extend, window;
    };
    const Case cases[] = {{"4096 cached + 1024 new, W 512", 4096, 1024, 512},
                          {"2900 cached + 100 new, W 128 (SGLang's chunked-SWA test)", 2900, 100, 128},
                          {"1000 cached + 600 new, W 200 (late tiles see no prefix)", 1000, 600, 200},
                          {"3000 cached + 300 new, W 4000 (window wider than all)", 3000, 300, 4000},
                          {"1000 cached + 500 new, no window", 1000, 500, -1}};
    int wrong_sums = 0, not_ideal = 0, not_fewer = 0;
    for (const Case &c : cases) {
        Buffer<int32_t> values(c.prefix);
        for (int k = 0; k < c.prefix; k++) values(k) = 1 + (5 * k) % 11;
        value.set(values);
        P.set(c.prefix);
        E.set(c.extend);
        W.set(c.window);
        const int tiles = (c.extend + BM - 1) / BM, chunks = (c.prefix + BN - 1) / BN;
        const int w_eff = c.window > 0 ? c.window : c.prefix + c.extend;
        lesson::trips().clear();
        Buffer<int32_t> sums = p.realize({BM, tiles});

        int sglang_total = 0, derived_total = 0, ideal_total = 0;
        const bool show_tiles = &c == &cases[0];
        if (show_tiles) std::printf("%s: prefix chunks each query tile visits\n   tile  rows       SGLang  derived  ideal\n", c.what);
        for (int t = 0; t < tiles; t++) {
            const int m0 = t * BM, rows = std::min(BM, c.extend - m0);
            // SGLang's stage 1: for start_n in range(0, P, BLOCK_N), every live tile.
            const int sglang = chunks;
            // Ideal: chunks holding a key some row of the tile sees (the first row sees the most).
            const int first_key = std::max(c.prefix + m0 - w_eff, 0);
            const int ideal = first_key < c.prefix ? chunks - first_key / BN : 0;
            const int derived = lesson::trips_of(t);
            sglang_total += sglang, derived_total += derived, ideal_total += ideal;
            not_ideal += derived != ideal;
            for (int i = 0; i < rows; i++) {  // the plain C++ loop
                int want = 0;
                for (int k = 0; k < c.prefix; k++) want += (c.prefix + m0 + i) - k <= w_eff ? values(k) : 0;
                wrong_sums += sums(i, t) != want;
            }
            if (show_tiles) std::printf("%7d  %4d  %11d  %7d  %5d\n", t, rows, sglang, derived, ideal);
        }
        not_fewer += w_eff < c.prefix && derived_total >= sglang_total;
        std::printf("%-60s prefix chunk visits: SGLang %4d, derived %4d (ideal %d)\n", c.what, sglang_total,
                    derived_total, ideal_total);
        if (show_tiles) std::printf("\n");
    }
    std::printf("\nEvery chunk SGLang visits beyond the derived count lies wholly outside the window: its mask is\n"
                "computed, found all false, and thrown away. The derived loop never reaches it.\n\n");

    lesson::expect(lesson::any_line_has(prefix_loop, " W"), "the prefix loop's bounds are computed from W");
    lesson::expect(not_ideal == 0, "each tile visited exactly the prefix chunks holding a key it sees");
    lesson::expect(not_fewer == 0, "with a window shorter than the prefix, the derived loop visits fewer chunks than SGLang's");
    lesson::expect(wrong_sums == 0, "every row's sum over the prefix equals the plain C++ loop");
    return lesson::finish("lesson_04");
}
