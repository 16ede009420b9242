// `livebound demo`, K7 (extend_attention_fwd, two-stage extend attention): an embedded
// windowed prefill-with-cache batch (4 ragged requests, one long, prefixes 0..256 tokens,
// sliding window 32, causal, bf16, Hq = 4 over Hkv = 1, head dim 64), bounded and
// full-width, on the CPU (no CUDA variant yet). Each result is checked against the fp64
// reference with the FlashAttention rule (error <= 2x that of the naive same-precision
// reference), and the bounded result against the full-width one bit for bit. The unit is
// (query tile, key chunk) pairs: the bounded variant visits the ideal pairs (what
// tests/extend_attention/test_tile_counts.cpp proves its derived loops do), the full-width
// twin every chunk of every tile of the grid.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "demo.h"
#include "extend_attention/cases.h"
#include "livebound/livebound.hpp"

namespace {

using livebound::demo::Row;
using livebound::testing::ExtendBuffers;
using livebound::testing::ExtendCase;

constexpr int64_t kBM = 32, kBN = 32;  // the CPU variants' tile (schedules/extend_attention/stages.h)

ExtendCase demo_case() {
    ExtendCase c{"demo", 2029, true, 4, 1, 64, 64, {128, 16, 3, 60}, {256, 0, 64, 100}};
    c.window = 32;
    return c;
}

struct Call {
    lb_extend_attention_args *args;
};

void k7_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    const ExtendCase c = demo_case();
    const livebound::reference::ExtendProblem p = livebound::testing::make_problem(c);
    const auto r64 = livebound::reference::reference_fp64(p);
    const auto r32 = livebound::reference::reference_naive_fp32(p);
    double err_naive = 0;
    for (size_t i = 0; i < r64.o.size(); i++) err_naive = std::max(err_naive, std::fabs(double(r32.o[i]) - r64.o[i]));

    int64_t max_e = 0;
    for (int64_t b = 0; b < p.B; b++) max_e = std::max(max_e, p.E(b));
    const int64_t tiles = (max_e + kBM - 1) / kBM;
    int64_t ideal = 0, full = 0;
    for (int64_t b = 0; b < p.B; b++) {
        for (int64_t qt = 0; qt < tiles; qt++) {
            full += (p.P(b) + kBN - 1) / kBN + (p.E(b) + kBN - 1) / kBN;
            if (qt * kBM >= p.E(b)) continue;
            for (int stage = 0; stage < 2; stage++) ideal += livebound::reference::ideal_chunk_count(p, b, stage, qt, kBM, kBN);
        }
    }

    std::vector<uint16_t> bounded_out;
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        ExtendBuffers buf;
        livebound::testing::make_args(p, c, v, &buf);
        Row r;
        r.kernel = "K7";
        r.batch = "extend bs=4 W=32 causal bf16 Hq=4/Hkv=1 d=64";
        r.device = "cpu";
        r.variant = v == LB_BOUNDED ? "bounded" : "full-width";
        r.unit = "tile-chunks (x Hq)";
        r.written = v == LB_BOUNDED ? ideal : full;
        r.full_width = full;
        if (lb_extend_attention_fwd(&buf.args, livebound::cpu()) != LB_OK) {
            r.mismatch = lb_last_error();
        } else {
            double err = 0;
            for (size_t i = 0; i < buf.o.size(); i++) err = std::max(err, std::fabs(double(p.to_f(buf.o[i])) - r64.o[i]));
            if (err > 2 * err_naive + 1e-5) r.mismatch = "error " + std::to_string(err) + " > 2x naive " + std::to_string(err_naive);
            if (v == LB_BOUNDED) bounded_out = buf.o;
            if (v == LB_FULL_WIDTH && std::memcmp(bounded_out.data(), buf.o.data(), buf.o.size() * 2) != 0) {
                r.mismatch = "full-width differs from bounded";
            }
            Call call{&buf.args};
            r.time_us = livebound::demo::cpu_median_us(
                [](void *a) {
                    livebound::check(lb_extend_attention_fwd(static_cast<Call *>(a)->args, livebound::cpu()));
                },
                &call, 5);
        }
        rows->push_back(r);
    }
    if (ctx.cuda) *note += "K7 on CUDA: no CUDA variant yet (CPU rows only)\n";
}

const bool registered = livebound::demo::register_demo("K7", k7_demo);

}  // namespace
