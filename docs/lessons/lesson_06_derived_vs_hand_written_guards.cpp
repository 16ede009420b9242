// Lesson 6: livebound's derived bounds against SGLang's hand-written guards, case by case.
//
// Every early exit and loop start SGLang wrote by hand in its Triton kernels corresponds to an
// overlap predicate livebound states instead: "can key chunk c hold anything query tile qt of
// request b needs?". Each case below builds that predicate into one small pipeline (a sum of
// key values per query row, over chunks of BLOCK_N keys), lets Halide derive the chunk loop,
// counts the chunks the loop really ran for every (request, tile) of a ragged batch, and puts
// the count next to the chunks SGLang's loop runs (its guard, evaluated in C++) and the ideal
// (chunks holding a key some row of the tile sees). Where SGLang wrote a guard, the derived
// bound matches it; where it wrote none (the prefix under a window, K8's unified list, the
// upper side of a non-causal window), the derived bound still removes the dead chunks.
#include "lesson_support.h"

#include <algorithm>
#include <functional>

using namespace Halide;

const int W = 128;  // the sliding window of the windowed cases (SGLang's sliding_window_size)

// A formula of (P, E) or of (m, k, P, W_eff, U), written once as a generic lambda and kept
// twice: as a Halide expression for the pipeline and as C++ ints for the plain reference loop.
struct Of2 {
    std::function<Expr(Expr, Expr)> halide;
    std::function<int(int, int)> cpp;
};
struct Of5 {
    std::function<Expr(Expr, Expr, Expr, Expr, Expr)> halide;
    std::function<int(int, int, int, int, int)> cpp;
};
template <class F> Of2 of2(F f) { return {f, f}; }
template <class F> Of5 of5(F f) { return {f, f}; }

struct Case {
    const char *name, *sglang_guard, *derived_from;
    int block_m, block_n, window;  // window: W, or -1 for none
    bool causal;
    Of2 rows, keys;  // query rows and keys of the stage, of the request's prefix P and extend length E
    Of5 sees;        // row m sees key k (m, k, P, W_eff, U), livebound's element predicate of the stage
    // The chunk-level predicates for chunk c of tile qt (mentioning only c, qt and the request).
    std::function<std::vector<Expr>(Expr c, Expr qt, Expr P, Expr E, Expr W_eff, Expr U)> chunk_predicates;
    std::function<std::pair<int, int>(int qt, int P, int E)> sglang_chunks;  // [first, end) SGLang's loop runs
};

int main() {
    const int BM = 128, BN = 64;  // SGLang's H200 tile for head dims <= 128
    // livebound's chunk-level predicates per stage (generators/common/extend_attention_tiles.h),
    // for chunk c of tile qt; W_eff is the window, or a distance larger than any when it is off.
    // U is the upper limit of key - query position: 0 causal, W_eff for a two-sided window.
    auto prefix_stage = [](Expr c, Expr qt, Expr P, Expr E, Expr W_eff, Expr) {
        Expr tile_start = qt * BM, chunk_start = c * BN, chunk_end = c * BN + BN - 1;
        return std::vector<Expr>{chunk_start < select(tile_start < E, P, 0),  // prefix keys; none for a dead tile
                                 (P + tile_start) - chunk_end <= W_eff,       // first row sees the chunk's last key
                                 tile_start + 1 <= W_eff};                    // ... and key P - 1 at all
    };
    auto extend_stage = [](Expr c, Expr qt, Expr E, Expr W_eff, Expr U) {
        Expr tile_start = qt * BM, tile_end = qt * BM + BM - 1, chunk_start = c * BN, chunk_end = c * BN + BN - 1;
        return std::vector<Expr>{chunk_start < select(tile_start < E, E, 0), tile_start - chunk_end <= W_eff,
                                 chunk_start - tile_end <= U};
    };
    auto list_stage = [](Expr c, Expr qt, Expr P, Expr E, Expr W_eff, Expr U) {  // K8: P + E keys, rows at P + m
        Expr tile_start = P + qt * BM, tile_end = P + qt * BM + BM - 1, chunk_start = c * BN, chunk_end = c * BN + BN - 1;
        return std::vector<Expr>{chunk_start < select(qt * BM < E, P + E, 0), tile_start - chunk_end <= W_eff,
                                 tile_start - (P + E - 1) <= W_eff, chunk_start - tile_end <= U};
    };
    auto window_start = [](int qt) { return std::max(qt * BM - W, 0) / BN; };  // #34462's extend_start / BN
    auto chunks_to = [](int keys) { return (keys + BN - 1) / BN; };
    auto dead = [](int qt, int E) { return qt * BM >= E; };                     // #32109's exit
    const std::pair<int, int> none{0, 0};
    // livebound's element predicates (k7_semantics, k8_semantics in extend_attention_generator.cpp).
    // The window term stays in when the window is off (W_eff is then huge): stated as `k <= m`
    // alone, the causal case gets its causal end from Halide 21 but keeps the length test as an
    // `if` inside the chunk loop, so dead tiles run their chunks doing nothing (README).
    auto prefix_sees = of5([](auto m, auto k, auto P, auto W_eff, auto) { return (P + m) - k <= W_eff; });
    auto extend_sees = of5([](auto m, auto k, auto, auto W_eff, auto U) { return m - k <= W_eff && k - m <= U; });
    auto list_sees = of5([](auto m, auto k, auto P, auto W_eff, auto U) { return (P + m) - k <= W_eff && k - (P + m) <= U; });
    auto E_rows = of2([](auto, auto E) { return E; });
    const std::vector<Case> cases = {
        {"K1 page-table gather (16-token pages)", "pid_c*128 >= live_pages: return", "column < live_pages(b)", 1, 128, -1,
         false, of2([](auto, auto) { return 1; }), of2([](auto P, auto E) { return (P + E + 15) / 16; }),
         of5([](auto, auto k, auto, auto, auto) { return k >= 0; }),  // every column of the live prefix
         [](Expr c, Expr, Expr P, Expr E, Expr, Expr) { return std::vector<Expr>{c * 128 < (P + E + 15) / 16}; },
         [&](int, int P, int E) { return std::make_pair(0, ((P + E + 15) / 16 + 127) / 128); }},
        {"K7 prefix, dead query tiles (#32109)", "mb*BLOCK_M >= E: return", "tile_start < E_b", BM, BN, -1, true,
         E_rows, of2([](auto P, auto) { return P; }), prefix_sees, prefix_stage,
         [&](int qt, int P, int E) { return dead(qt, E) ? none : std::make_pair(0, chunks_to(P)); }},
        {"K7 extend, causal", "end = min(E, (mb+1)*BLOCK_M)", "chunk_start - tile_end <= 0", BM, BN, -1, true, E_rows,
         E_rows, extend_sees, [&](Expr c, Expr qt, Expr, Expr E, Expr W_eff, Expr U) { return extend_stage(c, qt, E, W_eff, U); },
         [&](int qt, int, int E) { return dead(qt, E) ? none : std::make_pair(0, chunks_to(std::min(E, (qt + 1) * BM))); }},
        {"K7 extend, causal, window (#34462)", "extend_start = floor(max(m0-W,0)/BN)*BN", "tile_start - chunk_end <= W",
         BM, BN, W, true, E_rows, E_rows, extend_sees,
         [&](Expr c, Expr qt, Expr, Expr E, Expr W_eff, Expr U) { return extend_stage(c, qt, E, W_eff, U); },
         [&](int qt, int, int E) {
             return dead(qt, E) ? none : std::make_pair(window_start(qt), chunks_to(std::min(E, (qt + 1) * BM)));
         }},
        {"K7 extend, non-causal, window", "extend_start .. E (no upper bound)", "chunk_start - tile_end <= W", BM, BN, W,
         false, E_rows, E_rows, extend_sees,
         [&](Expr c, Expr qt, Expr, Expr E, Expr W_eff, Expr U) { return extend_stage(c, qt, E, W_eff, U); },
         [&](int qt, int, int E) { return dead(qt, E) ? none : std::make_pair(window_start(qt), chunks_to(E)); }},
        {"K7 prefix, window", "(none: 0 .. P)", "(P + tile_start) - chunk_end <= W", BM, BN, W, true, E_rows,
         of2([](auto P, auto) { return P; }), prefix_sees, prefix_stage,
         [&](int qt, int P, int E) { return dead(qt, E) ? none : std::make_pair(0, chunks_to(P)); }},
        {"K8 unified list, causal, window", "(none: 0 .. P + E)", "window and causal, over the list", BM, BN, W, true,
         E_rows, of2([](auto P, auto E) { return P + E; }), list_sees, list_stage,
         [&](int qt, int P, int E) { return dead(qt, E) ? none : std::make_pair(0, chunks_to(P + E)); }},
    };

    // A ragged batch: (prefix P, new tokens E) per request.
    const std::vector<std::pair<int, int>> batch = {{0, 300}, {700, 40}, {2000, 130}, {4000, 900}};
    const int B = int(batch.size());
    std::printf("Lesson 6: derived bounds vs SGLang's hand-written guards (W = %d, BLOCK_M %d, BLOCK_N %d;\n"
                "K1: one row per request, 128-column blocks). Batch (P, E): (0, 300) (700, 40) (2000, 130) (4000, 900).\n\n",
                W, BM, BN);
    std::printf("%-38s %-40s %-34s %s\n", "case", "SGLang's guard", "derived from", "chunks run: SGLang derived ideal");
    int not_ideal = 0, more_than_sglang = 0, wrong_sums = 0;
    for (const Case &c : cases) {
        // ---- the pipeline: out(qi, qt, b) = sum over the keys k row m = qt*BM + qi sees of (1 + 5k % 7) ----
        ImageParam prefix(Int(32), 1, "prefix"), extend(Int(32), 1, "extend");  // [B] P_b, E_b
        Param<int> max_chunks("max_chunks");                                      // chunks of the longest key list
        Param<int> window("window");                                              // W, or <= 0: off
        Param<bool> is_causal("is_causal");
        Var qi("qi"), qt("qt"), b("b");
        Expr P = prefix(b), E = extend(b);
        RDom r(0, c.block_n, 0, max_chunks, "r");  // r.x: key within a chunk, r.y: the chunk
        Expr m = qt * c.block_m + qi, k = r.y * c.block_n + r.x;
        const int big = 1 << 20;                                    // wider than any distance in the batch
        Expr W_eff = select(window > 0, window, big), U = select(is_causal, 0, W_eff);
        for (const Expr &p : c.chunk_predicates(r.y, qt, P, E, W_eff, U)) r.where(p);
        r.where(m < c.rows.halide(P, E) && k < c.keys.halide(P, E) && c.sees.halide(m, k, P, W_eff, U));
        Func out("out");  // (BM, tiles, B) int32
        out(qi, qt, b) = 0;
        out(qi, qt, b) += 1 + (5 * k) % 7;
        out.update().reorder(r.x, qi, r.y, qt, b);
        Pipeline p(out);
        p.add_custom_lowering_pass(new lesson::RecordTrips(out.name() + ".s1.r$y", out.name() + ".s1.b", out.name() + ".s1.qt"));

        Buffer<int32_t> P_buf(B), E_buf(B);
        int most_rows = 0, most_keys = 0;
        for (int i = 0; i < B; i++) {
            P_buf(i) = batch[i].first, E_buf(i) = batch[i].second;
            most_rows = std::max(most_rows, c.rows.cpp(P_buf(i), E_buf(i)));
            most_keys = std::max(most_keys, c.keys.cpp(P_buf(i), E_buf(i)));
        }
        prefix.set(P_buf);
        extend.set(E_buf);
        max_chunks.set((most_keys + c.block_n - 1) / c.block_n);
        window.set(c.window);
        is_causal.set(c.causal);
        const int w_eff = c.window > 0 ? c.window : big, u = c.causal ? 0 : w_eff;
        const int tiles = (most_rows + c.block_m - 1) / c.block_m;  // the grid's query-tile axis
        lesson::trips().clear();
        Buffer<int32_t> sums = p.realize({c.block_m, tiles, B});

        int sglang = 0, derived = 0, ideal = 0;
        for (int i = 0; i < B; i++) {
            const int Pi = P_buf(i), Ei = E_buf(i), rows = c.rows.cpp(Pi, Ei), keys = c.keys.cpp(Pi, Ei);
            for (int t = 0; t < tiles; t++) {
                const auto [first, end] = c.sglang_chunks(t, Pi, Ei);
                int ran = 0, needed = 0;
                for (const lesson::Trip &trip : lesson::trips()) ran += trip.outer == i && trip.middle == t;
                for (int ch = 0; ch * c.block_n < keys; ch++) {  // ideal: chunks holding a key some row sees
                    bool any = false;
                    for (int row = t * c.block_m; row < std::min(rows, (t + 1) * c.block_m) && !any; row++) {
                        for (int key = ch * c.block_n; key < std::min(keys, (ch + 1) * c.block_n) && !any; key++)
                            any = c.sees.cpp(row, key, Pi, w_eff, u);
                    }
                    needed += any;
                }
                for (int q = 0; q < c.block_m && t * c.block_m + q < rows; q++) {  // the plain C++ loop
                    int want = 0;
                    for (int key = 0; key < keys; key++) want += c.sees.cpp(t * c.block_m + q, key, Pi, w_eff, u) ? 1 + (5 * key) % 7 : 0;
                    wrong_sums += sums(q, t, i) != want;
                }
                sglang += std::max(end - first, 0), derived += ran, ideal += needed;
                not_ideal += ran != needed;
                more_than_sglang += ran > std::max(end - first, 0);
            }
        }
        std::printf("%-38s %-40s %-34s %17d %7d %5d\n", c.name, c.sglang_guard, c.derived_from, sglang, derived, ideal);
    }
    std::printf("\nchunks run: summed over every (request, query tile) of the grid, dead tiles included.\n\n");

    lesson::expect(more_than_sglang == 0, "in every case and tile the derived loop ran no more chunks than SGLang's");
    lesson::expect(not_ideal == 0, "in every case and tile it ran exactly the chunks holding a key the tile sees");
    lesson::expect(wrong_sums == 0, "every row's sum equals the plain C++ loop");
    return lesson::finish("lesson_06");
}
