// The derived chunk loops visit exactly the chunks that hold a visible element.
//
// Tests link no libHalide, so a loop-counting lowering pass is not available. Instead the
// manifest builds CPU-only instrumented variants (count_tiles=true, two BM x BN configs,
// bounded and full-width): counts(stage, qt, h, b) += 1 over chunk RDoms whose predicates
// come from the same code as the real kernel's (chunk_predicates in the generator). This
// test sweeps W, causality, lengths and prefix lengths and asserts
//   bounded:     counts == ideal (chunks with >= 1 visible (live row, key) pair; 0 for dead tiles)
//   full-width:  counts == every chunk of the request's prefix / extend chunk, for every tile
// The lowered statements (FileCheck, k7_cpu_bounded.check / k7_count_bounded.check) show
// that the chunk loops of the real kernel and of the counter are trimmed from these
// predicates (derived new_min / new_max lets), so the counts are the derived trip counts.
//
// K8 (unified, one stage over the list of N = P + E keys, BM = BN = 32): the bounded
// counter == reference::ideal_unified_chunk_count (chunks of the list with a key visible
// to a live row of the tile: causal n <= P + m, window (P + m) - n <= W, non-causal also
// n - (P + m) <= W; 0 for a dead tile), the full-width one == every chunk of N for every
// tile of the grid.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "cases.h"
#include "livebound/k7_headers.inc"
#include "reference/extend_attention_reference.h"
#include "unified_cases.h"

namespace livebound::testing {
namespace {

struct Counter {
    const char *name;
    bool bounded;
    int bm, bn;
    int (*fn)(void **);
};

const Counter kCounters[] = {
#define LB_K7_ATTN(target, form, dt, dqk, dv, idx, lse, name)
#define LB_K7_COUNT(target, form, bm, bn, name) {#name, std::string(#form) == "bounded", bm, bn, name##_argv},
#include "livebound/k7_variants.inc"
#undef LB_K7_ATTN
#undef LB_K7_COUNT
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

std::vector<int32_t> run_counter(const Counter &k, const ExtendProblem &p, int64_t max_len_extend) {
    const halide_type_t bf(halide_type_bfloat, 16), i32(halide_type_int, 32), f32(halide_type_float, 32);
    const int32_t T = int32_t(std::max<int64_t>(p.T, 1)), Hq = int32_t(p.Hq), Hkv = int32_t(p.Hkv), L = 64;
    std::vector<uint16_t> q(size_t(T * Hq * L)), kv(size_t(T * Hkv * L)), cache(size_t(p.num_slots * Hkv * L));
    std::vector<int32_t> idx(p.kv_indices.begin(), p.kv_indices.end());
    if (idx.empty()) idx.push_back(0);
    std::vector<float> sinks(size_t(Hq), 0.0f);
    HBuf hq(q.data(), bf, {{L, 1}, {Hq, L}, {T, Hq * L}});
    HBuf hk(kv.data(), bf, {{L, 1}, {Hkv, L}, {T, Hkv * L}});
    HBuf hv(kv.data(), bf, {{L, 1}, {Hkv, L}, {T, Hkv * L}});
    HBuf hkb(cache.data(), bf, {{L, 1}, {Hkv, L}, {int32_t(p.num_slots), Hkv * L}});
    HBuf hvb(cache.data(), bf, {{L, 1}, {Hkv, L}, {int32_t(p.num_slots), Hkv * L}});
    std::vector<int32_t> qo = p.qo_indptr, kvp = p.kv_indptr;
    HBuf hqo(qo.data(), i32, {{int32_t(qo.size()), 1}});
    HBuf hkvp(kvp.data(), i32, {{int32_t(kvp.size()), 1}});
    HBuf hidx(idx.data(), i32, {{int32_t(idx.size()), 1}});
    HBuf hs(sinks.data(), f32, {{Hq, 1}});
    const int32_t nqt = int32_t((max_len_extend + k.bm - 1) / k.bm), B = int32_t(p.B);
    std::vector<int32_t> counts(size_t(2 * std::max(nqt, 1) * Hq * std::max(B, 1)), -1);
    HBuf hc(counts.data(), i32, {{2, 1}, {nqt, 2}, {Hq, 2 * nqt}, {B, 2 * nqt * Hq}});
    bool has_sinks = false, causal = p.causal;
    int32_t window = p.window, max_len = int32_t(max_len_extend);
    float sm = 0, cap = 0, ks = 1, vs = 1;
    void *uc = nullptr;
    std::vector<void *> argv = {&uc, &hq.buf, &hk.buf, &hv.buf, &hkb.buf, &hvb.buf, &hqo.buf, &hkvp.buf, &hidx.buf,
                                &hs.buf, &has_sinks, &causal, &window, &max_len, &sm, &cap, &ks, &vs, &hc.buf};
    EXPECT_EQ(k.fn(argv.data()), 0) << k.name;
    counts.resize(size_t(2 * nqt * Hq * B));
    return counts;
}

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
        for (const Shape &sh : shapes) {
            for (int32_t W : windows) {
                for (bool causal : {true, false}) {
                    ExtendCase c{"counts", 3, true, 2, 1, 64, 64, sh.E, sh.P};
                    c.causal = causal;
                    c.window = W;
                    const ExtendProblem p = make_problem(c);
                    int64_t max_e = 0;
                    for (auto e : sh.E) max_e = std::max(max_e, e);
                    const int64_t max_len = max_e + sh.extra;
                    const std::vector<int32_t> got = run_counter(k, p, max_len);
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

const Counter kUnifiedCounters[] = {
#define LB_K8_ATTN(target, form, dt, dqk, dv, idx, name)
#define LB_K8_COUNT(target, form, bm, bn, name) {#name, std::string(#form) == "bounded", bm, bn, name##_argv},
#include "livebound/k8_variants.inc"
#undef LB_K8_ATTN
#undef LB_K8_COUNT
};

// The K8 counter: (q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens,
// sinks, has_sinks, is_causal, sliding_window, max_len_extend, sm_scale, logit_cap, k_scale,
// v_scale) -> counts(2, num_q_tiles, Hq, B), stage 0 used.
std::vector<int32_t> run_unified_counter(const Counter &k, const reference::UnifiedProblem &p, int64_t max_len_extend) {
    const halide_type_t bf(halide_type_bfloat, 16), i32(halide_type_int, 32), f32(halide_type_float, 32);
    const int32_t T = int32_t(std::max<int64_t>(p.T, 1)), Hq = int32_t(p.Hq), Hkv = int32_t(p.Hkv), L = 64;
    const int32_t slots = int32_t(std::max<int64_t>(p.num_slots, 1));
    std::vector<uint16_t> q(size_t(T * Hq * L)), cache(size_t(slots * Hkv * L));
    std::vector<int32_t> idx(p.kv_indices.begin(), p.kv_indices.end());
    if (idx.empty()) idx.push_back(0);
    std::vector<int32_t> pl = p.prefix_lens;
    if (pl.empty()) pl.push_back(0);
    std::vector<float> sinks(size_t(Hq), 0.0f);
    HBuf hq(q.data(), bf, {{L, 1}, {Hq, L}, {T, Hq * L}});
    HBuf hkb(cache.data(), bf, {{L, 1}, {Hkv, L}, {slots, Hkv * L}});
    HBuf hvb(cache.data(), bf, {{L, 1}, {Hkv, L}, {slots, Hkv * L}});
    std::vector<int32_t> qo = p.qo_indptr, kvp = p.kv_indptr;
    HBuf hqo(qo.data(), i32, {{int32_t(qo.size()), 1}});
    HBuf hkvp(kvp.data(), i32, {{int32_t(kvp.size()), 1}});
    HBuf hidx(idx.data(), i32, {{int32_t(idx.size()), 1}});
    HBuf hpl(pl.data(), i32, {{int32_t(p.B), 1}});
    HBuf hs(sinks.data(), f32, {{Hq, 1}});
    const int32_t nqt = int32_t((max_len_extend + k.bm - 1) / k.bm), B = int32_t(p.B);
    std::vector<int32_t> counts(size_t(2 * std::max(nqt, 1) * Hq * std::max(B, 1)), -1);
    HBuf hc(counts.data(), i32, {{2, 1}, {nqt, 2}, {Hq, 2 * nqt}, {B, 2 * nqt * Hq}});
    bool has_sinks = false, causal = p.causal;
    int32_t window = p.window, max_len = int32_t(max_len_extend);
    float sm = 0, cap = 0, ks = 1, vs = 1;
    void *uc = nullptr;
    std::vector<void *> argv = {&uc,     &hq.buf, &hkb.buf,   &hvb.buf, &hqo.buf, &hkvp.buf, &hidx.buf, &hpl.buf, &hs.buf,
                                &has_sinks, &causal, &window, &max_len, &sm,     &cap,      &ks,       &vs,      &hc.buf};
    EXPECT_EQ(k.fn(argv.data()), 0) << k.name;
    counts.resize(size_t(2 * nqt * Hq * B));
    return counts;
}

TEST(TileCounts, UnifiedDerivedChunkLoopsVisitExactlyTheIdealChunks) {
    ASSERT_EQ(std::size(kUnifiedCounters), 4u) << "expected the bounded and full-width K8 counters (32 x 32, 16 x 32)";
    const std::vector<Shape> shapes = {
        {{150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}, 0},
        {{130, 7, 65}, {90, 300, 0}, 31},
        {{1, 2, 31, 32, 33, 97}, {0, 1, 64, 63, 65, 129}, 0},
        {{257}, {500}, 16},
        {{0, 40}, {5, 31}, 40},
    };
    const std::vector<int32_t> windows = {-1, 1, 31, 32, 33, 100};
    int64_t checked = 0, ideal_total = 0, full_total = 0;
    for (const Counter &k : kUnifiedCounters) {
        for (const Shape &sh : shapes) {
            for (int32_t W : windows) {
                for (bool causal : {true, false}) {
                    UnifiedCase c{"unified_counts", 4, true, 2, 1, 64, 64, sh.E, sh.P};
                    c.causal = causal;
                    c.window = W;
                    const reference::UnifiedProblem p = make_unified_problem(c);
                    const int64_t max_len = max_extend(p) + sh.extra;
                    const std::vector<int32_t> got = run_unified_counter(k, p, max_len);
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
