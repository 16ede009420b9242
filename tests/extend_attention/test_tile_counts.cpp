// The derived chunk loops visit exactly the chunks that hold a visible element.
//
// Tests link no libHalide, so a loop-counting lowering pass is not available. Instead the
// tests build their own chunk counters (tools/instruments/chunk_instruments_generator.cpp,
// several BM x BN configs, bounded and full-width; never part of the library):
// counts(stage, qt, h, b) += 1 over chunk RDoms whose predicates, request ranges and window
// limits come from the header the attention generator builds its key loops from (generators/common/extend_attention_tiles.h).
// This test sweeps W, causality (and under is_causal a custom mask, which replaces the causal
// rule), lengths and prefix lengths and asserts
//   bounded:     counts == ideal (chunks with >= 1 visible (live row, key) pair; 0 for dead tiles)
//   full-width:  counts == every chunk of the request's prefix / extend chunk, for every tile
// The lowered statements (FileCheck, k7_cpu_bounded.check / k7_count_bounded.check) show
// that the chunk loops of the real kernel and of the counter are trimmed from these
// predicates (derived new_min / new_max lets), so the counts are the derived trip counts.
//
// K8 (unified, one stage over the list of N = P + E keys, BM = BN = 32): the bounded
// counter == reference::ideal_unified_chunk_count (chunks of the list with a key visible
// to a live row of the tile: causal n <= P + m unless masked, window (P + m) - n <= W,
// non-causal also n - (P + m) <= W; 0 for a dead tile), the full-width one == every chunk
// of N for every tile of the grid.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "HalideRuntime.h"
#include "cases.h"
#include "reference/extend_attention_reference.h"
#include "tile_counter_headers.inc"
#include "unified_cases.h"

namespace livebound::testing {
namespace {

struct Counter {
    const char *name;
    bool bounded;
    int bm, bn;
    int (*fn)(void **);
};

// The counters (tests/extend_attention/CMakeLists.txt), K7's and K8's.
#define LB_TILE_COUNTER(kernel, form, bm, bn, name) \
    const Counter kernel##_##form##_##bm##_##bn = {#name, std::string(#form) == "bounded", bm, bn, name##_argv};
#include "tile_counters.inc"
#undef LB_TILE_COUNTER
const std::vector<Counter> kCounters = {
#define LB_TILE_COUNTER(kernel, form, bm, bn, name) kernel##_##form##_##bm##_##bn,
#include "tile_counters.inc"
#undef LB_TILE_COUNTER
};

// A halide_buffer_t over host memory; dims given innermost first.
struct HBuf {
    halide_dimension_t dims[4];
    halide_buffer_t buf{};
    HBuf(void *data, halide_type_t type, std::vector<std::pair<int32_t, int32_t>> extent_stride) {
        for (size_t i = 0; i < extent_stride.size(); i++) {
            dims[i] = halide_dimension_t(0, extent_stride[i].first, extent_stride[i].second);
        }
        buf.host = static_cast<uint8_t *>(data);
        buf.type = type;
        buf.dimensions = int32_t(extent_stride.size());
        buf.dim = dims;
    }
};

// What a counter reads of an attention call: the requests' ranges and the predicates'
// scalars. prefix_lens: K8's (empty for K7).
struct CounterCall {
    std::vector<int32_t> qo_indptr, kv_indptr, prefix_lens;
    int64_t T, num_indices, Hq;
    bool causal;
    int32_t window;
    int64_t max_len_extend;
    bool has_mask;  // a custom mask replaces the causal rule
};

// (qo_indptr, kv_indptr, prefix_lens, is_causal, sliding_window, max_len_extend, has_mask,
// num_tokens, num_indices) -> counts(2, num_q_tiles, Hq, B), as the test reads them:
// [b][h][qt][stage].
std::vector<int32_t> run_counter(const Counter &k, const CounterCall &call) {
    const halide_type_t i32(halide_type_int, 32);
    std::vector<int32_t> qo = call.qo_indptr, kvp = call.kv_indptr, pl = call.prefix_lens;
    if (pl.empty()) pl.push_back(0);
    const int32_t B = int32_t(qo.size()) - 1, Hq = int32_t(call.Hq);
    HBuf hqo(qo.data(), i32, {{int32_t(qo.size()), 1}});
    HBuf hkvp(kvp.data(), i32, {{int32_t(kvp.size()), 1}});
    HBuf hpl(pl.data(), i32, {{int32_t(pl.size()), 1}});
    const int32_t nqt = int32_t((call.max_len_extend + k.bm - 1) / k.bm);
    std::vector<int32_t> counts(size_t(2 * std::max(nqt, 1) * Hq * std::max(B, 1)), -1);
    HBuf hc(counts.data(), i32, {{2, 1}, {nqt, 2}, {Hq, 2 * nqt}, {B, 2 * nqt * Hq}});
    bool causal = call.causal, has_mask = call.has_mask;
    int32_t window = call.window, max_len = int32_t(call.max_len_extend);
    int32_t T = int32_t(std::max<int64_t>(call.T, 1)), num_indices = int32_t(std::max<int64_t>(call.num_indices, 1));
    void *uc = nullptr;
    std::vector<void *> argv = {&uc,     &hqo.buf,  &hkvp.buf, &hpl.buf, &causal, &window,
                                &max_len, &has_mask, &T,        &num_indices, &hc.buf};
    EXPECT_EQ(k.fn(argv.data()), 0) << k.name;
    counts.resize(size_t(2 * nqt * Hq * B));
    return counts;
}

// (is_causal, custom mask) of the sweeps: a custom mask changes the bounds under is_causal
// only, where it replaces the causal rule (the keys after the query are then the mask's).
const std::pair<bool, bool> kCausalMasked[] = {{true, false}, {false, false}, {true, true}};

bool is_unified(const Counter &k) { return std::string(k.name).rfind("lb_k8_", 0) == 0; }

struct Shape {
    std::vector<int64_t> E, P;
    int64_t extra;  // max_len_extend - max(E): dead tiles beyond every request
};

TEST(TileCounts, DerivedChunkLoopsVisitExactlyTheIdealChunks) {
    const std::vector<Shape> shapes = {
        {{150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}, 0},
        {{130, 7, 65}, {90, 300, 0}, 31},
        {{1, 2, 31, 32, 33, 97}, {0, 1, 64, 63, 65, 129}, 0},
        {{257}, {500}, 16},
    };
    const std::vector<int32_t> windows = {-1, 0, 1, 5, 15, 16, 17, 31, 32, 33, 63, 64, 100, 257, 1000};
    int64_t checked = 0, ideal_total = 0, full_total = 0;
    for (const Counter &k : kCounters) {
        if (is_unified(k)) continue;
        for (const Shape &sh : shapes) {
            for (int32_t W : windows) {
                for (auto [causal, masked] : kCausalMasked) {
                    ExtendCase c{"counts", 3, true, 2, 1, 64, 64, sh.E, sh.P};
                    c.causal = causal;
                    c.window = W;
                    c.custom_mask = masked;
                    const ExtendProblem p = make_problem(c);
                    int64_t max_e = 0;
                    for (auto e : sh.E) max_e = std::max(max_e, e);
                    const int64_t max_len = max_e + sh.extra;
                    const std::vector<int32_t> got = run_counter(
                        k, {p.qo_indptr, p.kv_indptr, {}, p.T, int64_t(p.kv_indices.size()), p.Hq, p.causal, p.window, max_len, masked});
                    const int64_t nqt = (max_len + k.bm - 1) / k.bm;
                    for (int64_t b = 0; b < p.B; b++) {
                        for (int64_t h = 0; h < p.Hq; h++) {
                            for (int64_t qt = 0; qt < nqt; qt++) {
                                for (int stage = 0; stage < 2; stage++) {
                                    const int64_t len = stage == 0 ? p.P(b) : p.E(b);
                                    const int32_t want =
                                        k.bounded ? (qt * k.bm < p.E(b) ? reference::ideal_chunk_count(p, b, stage, qt, k.bm, k.bn) : 0)
                                                  : int32_t((len + k.bn - 1) / k.bn);
                                    const int32_t have = got[size_t(((b * p.Hq + h) * nqt + qt) * 2 + stage)];
                                    ASSERT_EQ(have, want) << k.name << " stage " << stage << " b " << b << " h " << h
                                                          << " qt " << qt << "\n" << c << " max_len_extend " << max_len;
                                    checked++;
                                    (k.bounded ? ideal_total : full_total) += have;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    EXPECT_GT(checked, 1000);
    std::printf("checked %lld (tile, stage) counts; bounded visits %lld chunks, full-width %lld\n",
                static_cast<long long>(checked), static_cast<long long>(ideal_total), static_cast<long long>(full_total));
}

// ---- K8 ----

TEST(TileCounts, UnifiedDerivedChunkLoopsVisitExactlyTheIdealChunks) {
    int unified_counters = 0;
    for (const Counter &k : kCounters) unified_counters += is_unified(k);
    ASSERT_EQ(unified_counters, 4) << "expected the bounded and full-width K8 counters (32 x 32, 16 x 32)";
    const std::vector<Shape> shapes = {
        {{150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}, 0},
        {{130, 7, 65}, {90, 300, 0}, 31},
        {{1, 2, 31, 32, 33, 97}, {0, 1, 64, 63, 65, 129}, 0},
        {{257}, {500}, 16},
        {{0, 40}, {5, 31}, 40},
    };
    const std::vector<int32_t> windows = {-1, 1, 31, 32, 33, 100};
    int64_t checked = 0, ideal_total = 0, full_total = 0;
    for (const Counter &k : kCounters) {
        if (!is_unified(k)) continue;
        for (const Shape &sh : shapes) {
            for (int32_t W : windows) {
                for (auto [causal, masked] : kCausalMasked) {
                    UnifiedCase c{"unified_counts", 4, true, 2, 1, 64, 64, sh.E, sh.P};
                    c.causal = causal;
                    c.window = W;
                    c.custom_mask = masked;
                    c.mask_future = true;
                    const reference::UnifiedProblem p = make_unified_problem(c);
                    const int64_t max_len = max_extend(p) + sh.extra;
                    const std::vector<int32_t> got = run_counter(k, {p.qo_indptr, p.kv_indptr, p.prefix_lens, p.T,
                                                                     int64_t(p.kv_indices.size()), p.Hq, p.causal, p.window,
                                                                     max_len, masked});
                    const int64_t nqt = (max_len + k.bm - 1) / k.bm;
                    for (int64_t b = 0; b < p.B; b++) {
                        for (int64_t h = 0; h < p.Hq; h++) {
                            for (int64_t qt = 0; qt < nqt; qt++) {
                                const int32_t want =
                                    k.bounded ? (qt * k.bm < p.E(b) ? reference::ideal_unified_chunk_count(p, b, qt, k.bm, k.bn) : 0)
                                              : int32_t((p.N(b) + k.bn - 1) / k.bn);
                                const int32_t have = got[size_t(((b * p.Hq + h) * nqt + qt) * 2)];
                                ASSERT_EQ(have, want) << k.name << " b " << b << " (P " << p.P(b) << ", E " << p.E(b)
                                                      << ", N " << p.N(b) << ") h " << h << " qt " << qt << "\n"
                                                      << c << " max_len_extend " << max_len;
                                checked++;
                                (k.bounded ? ideal_total : full_total) += have;
                            }
                        }
                    }
                }
            }
        }
    }
    EXPECT_GT(checked, 1000);
    std::printf("K8: checked %lld tile counts; bounded visits %lld chunks, full-width %lld\n",
                static_cast<long long>(checked), static_cast<long long>(ideal_total), static_cast<long long>(full_total));
}

}  // namespace
}  // namespace livebound::testing
