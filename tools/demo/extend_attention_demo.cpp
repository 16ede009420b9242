// `livebound demo`, K7 (extend_attention_fwd, two-stage extend attention) and K8
// (extend_attention_fwd_unified, the same batch with prefix and extend keys in the cache,
// one unified index list): an embedded windowed prefill-with-cache batch (4 ragged requests,
// one long, prefixes 0..256 tokens, sliding window 32, causal, bf16, Hq = 4 over Hkv = 1,
// head dim 128), bounded and
// full-width, on the CPU and (with a device) on CUDA device 0, on caller device memory and a
// caller stream (time: CUDA-graph replay). Each result is checked against the fp64
// reference with the FlashAttention rule (error <= 2x that of the naive same-precision
// reference), and the bounded result against the full-width one bit for bit. The unit is
// (query tile, key chunk) pairs: the bounded variant visits the ideal pairs (what
// tests/extend_attention/test_tile_counts.cpp proves its derived loops do), the full-width
// twin every chunk of every tile of the grid.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "demo.h"
#include "extend_attention/cases.h"
#include "extend_attention/unified_cases.h"
#include "livebound/livebound.hpp"

namespace {

using livebound::demo::Row;
using livebound::tools::DeviceBuffer;
using livebound::testing::ExtendBuffers;
using livebound::testing::ExtendCase;

constexpr int64_t kBM = 32, kBN = 32;  // the CPU variants' tile (schedules/extend_attention/stages.h)

ExtendCase demo_case() {
    ExtendCase c{"demo", 2029, true, 4, 1, 128, 128, {128, 16, 3, 60}, {256, 0, 64, 100}};
    c.window = 32;
    return c;
}

// The demo's checks of one output (whole storage, 16-bit elements): the FlashAttention rule
// (error <= 2x the naive same-precision reference's, + 1e-5) against the fp64 reference,
// and, for a full-width row, the bounded row's bits.
struct Check {
    Check(livebound::reference::Result<double> exact, const livebound::reference::Result<float> &naive)
        : r64(std::move(exact)) {
        for (size_t i = 0; i < r64.o.size(); i++) err_naive = std::max(err_naive, std::fabs(double(naive.o[i]) - r64.o[i]));
    }
    template <class Problem>
    void row(const Problem &p, Row *r, const std::vector<uint16_t> &o, const std::vector<uint16_t> &bounded) const {
        double err = 0;
        for (size_t i = 0; i < o.size(); i++) err = std::max(err, std::fabs(double(p.to_f(o[i])) - r64.o[i]));
        if (err > 2 * err_naive + 1e-5) r->mismatch = "error " + std::to_string(err) + " > 2x naive " + std::to_string(err_naive);
        if (!bounded.empty() && std::memcmp(bounded.data(), o.data(), o.size() * 2) != 0) {
            r->mismatch = "full-width differs from bounded";
        }
    }
    livebound::reference::Result<double> r64;
    double err_naive = 0;
};

// Runs `host` (the CPU row's arguments) on CUDA device 0 through `fn`: device copies of the
// tensors `members`, a non-blocking stream, the output `out` downloaded into `o`; then
// times CUDA-graph replays.
template <class Args>
bool run_cuda(lb_status (*fn)(const Args *, lb_device), const Args &host, std::initializer_list<lb_tensor Args::*> members,
              lb_tensor Args::*out, std::vector<uint16_t> *o, Row *r, std::string *error) {
    namespace cuda = livebound::cuda;
    cuda::ScopedContext scope(0);
    if (!scope.ok()) {
        *error = scope.error();
        return false;
    }
    Args args = host;
    std::vector<std::unique_ptr<DeviceBuffer>> copies;
    const DeviceBuffer *o_copy = nullptr;
    for (lb_tensor Args::*m : members) {
        lb_tensor *t = &(args.*m);
        const size_t bytes = livebound::testing::tensor_bytes(*t);
        if (bytes == 0) continue;
        copies.push_back(std::make_unique<DeviceBuffer>(bytes));
        if (!copies.back()->upload(t->data, bytes)) {
            *error = "device allocation or copy failed";
            return false;
        }
        t->data = copies.back()->get();
        if (m == out) o_copy = copies.back().get();
    }
    cuda::CUstream stream = nullptr;
    cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto enqueue = [&](cuda::CUstream st) {
        if (fn(&args, livebound::cuda_device(0, st)) == LB_OK) return true;
        *error = lb_last_error();
        return false;
    };
    bool ok = enqueue(stream) && cuda::driver()->cuStreamSynchronize(stream) == 0 &&
              o_copy->download(o->data(), o->size() * 2);
    if (ok) {
        livebound::tools::GraphTiming graph;
        ok = livebound::tools::time_graph_replay(enqueue, stream, 5, 20, &graph, error) &&
             livebound::tools::time_eager(enqueue, stream, 5, 5, &r->eager_us, error);
        r->time_us = graph.median_us_per_call;
    }
    cuda::driver()->cuStreamDestroy(stream);
    return ok;
}

void k7_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    const ExtendCase c = demo_case();
    const livebound::reference::ExtendProblem p = livebound::testing::make_problem(c);
    const Check check(livebound::reference::reference_fp64(p), livebound::reference::reference_naive_fp32(p));

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

    std::vector<uint16_t> bounded_out, bounded_cuda;
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        ExtendBuffers buf;
        livebound::testing::make_args(p, c, v, &buf);
        Row r;
        r.kernel = "K7";
        r.batch = "extend bs=4 W=32 causal bf16 Hq=4/Hkv=1 d=128";
        r.device = "cpu";
        r.variant = v == LB_BOUNDED ? "bounded" : "full-width";
        r.unit = "tile-chunks (x Hq)";
        r.written = v == LB_BOUNDED ? ideal : full;
        r.full_width = full;
        const std::vector<uint16_t> poisoned = buf.o;
        if (lb_extend_attention_fwd(&buf.args, livebound::cpu()) != LB_OK) {
            r.mismatch = lb_last_error();
        } else {
            check.row(p, &r, buf.o, v == LB_BOUNDED ? std::vector<uint16_t>{} : bounded_out);
            if (v == LB_BOUNDED) bounded_out = buf.o;
            r.time_us = livebound::demo::cpu_median_us(
                [](void *a) {
                    livebound::check(lb_extend_attention_fwd(static_cast<const lb_extend_attention_args *>(a), livebound::cpu()));
                },
                &buf.args, 5);
        }
        rows->push_back(r);
        if (ctx.cuda) {
            // The same call on CUDA device 0 (the host tensors mirrored, o poisoned again).
            Row rc = r;
            rc.device = "cuda:0";
            rc.mismatch.clear();
            rc.time_us = 0;
            buf.o = poisoned;
            std::vector<uint16_t> o(buf.o.size());
            std::string error;
            using A = lb_extend_attention_args;
            if (run_cuda(lb_extend_attention_fwd, buf.args,
                         {&A::q_extend, &A::k_extend, &A::v_extend, &A::o_extend, &A::k_buffer, &A::v_buffer, &A::qo_indptr,
                          &A::kv_indptr, &A::kv_indices, &A::sinks, &A::lse_extend},
                         &A::o_extend, &o, &rc, &error)) {
                check.row(p, &rc, o, v == LB_BOUNDED ? std::vector<uint16_t>{} : bounded_cuda);
                if (v == LB_BOUNDED) bounded_cuda = o;
                rows->push_back(rc);
            } else {
                *note += "K7 on CUDA: " + error + "\n";
            }
        }
    }
}

// K8: the K7 batch with every key in the cache (unified_from_extend), one stage.
void k8_demo(const livebound::demo::Context &ctx, std::vector<Row> *rows, std::string *note) {
    namespace ref = livebound::reference;
    const ExtendCase c7 = demo_case();
    const ref::UnifiedProblem p = ref::unified_from_extend(livebound::testing::make_problem(c7));
    livebound::testing::UnifiedCase c;
    c.name = "demo";
    c.Hq = p.Hq;
    c.Hkv = p.Hkv;
    c.Lq = p.Lq;
    c.Lv = p.Lv;
    const Check check(ref::reference_unified_fp64(p), ref::reference_unified_naive_fp32(p));
    int64_t max_e = 0;
    for (int64_t b = 0; b < p.B; b++) max_e = std::max<int64_t>(max_e, p.qo_indptr[b + 1] - p.qo_indptr[b]);
    const int64_t tiles = (max_e + kBM - 1) / kBM;
    int64_t ideal = 0, full = 0;
    for (int64_t b = 0; b < p.B; b++) {
        const int64_t E = p.qo_indptr[b + 1] - p.qo_indptr[b], N = p.kv_indptr[b + 1] - p.kv_indptr[b];
        for (int64_t qt = 0; qt < tiles; qt++) {
            full += (N + kBN - 1) / kBN;
            if (qt * kBM < E) ideal += ref::ideal_unified_chunk_count(p, b, qt, kBM, kBN);
        }
    }
    std::vector<uint16_t> bounded_cpu, bounded_cuda;
    for (lb_variant v : {LB_BOUNDED, LB_FULL_WIDTH}) {
        livebound::testing::UnifiedBuffers buf;
        livebound::testing::make_unified_args(p, c, v, &buf);
        const std::vector<uint16_t> poisoned = buf.o;
        Row r;
        r.kernel = "K8";
        r.batch = "unified bs=4 W=32 causal bf16 Hq=4/Hkv=1 d=128";
        r.device = "cpu";
        r.variant = v == LB_BOUNDED ? "bounded" : "full-width";
        r.unit = "tile-chunks (x Hq)";
        r.written = v == LB_BOUNDED ? ideal : full;
        r.full_width = full;
        if (lb_extend_attention_fwd_unified(&buf.args, livebound::cpu()) != LB_OK) {
            r.mismatch = lb_last_error();
        } else {
            check.row(p, &r, buf.o, v == LB_BOUNDED ? std::vector<uint16_t>{} : bounded_cpu);
            if (v == LB_BOUNDED) bounded_cpu = buf.o;
            r.time_us = livebound::demo::cpu_median_us(
                [](void *a) {
                    livebound::check(lb_extend_attention_fwd_unified(static_cast<const lb_extend_attention_unified_args *>(a),
                                                                     livebound::cpu()));
                },
                &buf.args, 5);
        }
        rows->push_back(r);
        if (!ctx.cuda) continue;
        Row rc = r;
        rc.device = "cuda:0";
        rc.mismatch.clear();
        rc.time_us = 0;
        buf.o = poisoned;
        std::vector<uint16_t> o(buf.o.size());
        std::string error;
        using A = lb_extend_attention_unified_args;
        if (run_cuda(lb_extend_attention_fwd_unified, buf.args,
                     {&A::q, &A::o, &A::k_buffer, &A::v_buffer, &A::qo_indptr, &A::kv_indptr, &A::kv_indices,
                      &A::prefix_lens, &A::sinks},
                     &A::o, &o, &rc, &error)) {
            check.row(p, &rc, o, v == LB_BOUNDED ? std::vector<uint16_t>{} : bounded_cuda);
            if (v == LB_BOUNDED) bounded_cuda = o;
            rows->push_back(rc);
        } else {
            *note += "K8 on CUDA: " + error + "\n";
        }
    }
}

const bool registered = livebound::demo::register_demo("K7", k7_demo);
const bool registered_k8 = livebound::demo::register_demo("K8", k8_demo);

}  // namespace
