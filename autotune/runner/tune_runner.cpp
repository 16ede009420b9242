// livebound_tune_runner: times every candidate of an autotune experiment in one process.
//
//   livebound_tune_runner --kernel K2 --device cuda|cpu [--workloads SUBSTRING]
//                         [--replays N] [--cpu-repeats N] [--rounds N] [--driver TEXT]
//                         [--exclude ID,ID]   (candidates left out: run.sh's restart after a crash)
//
// For each variant of the kernel that has candidates (generated tune_candidates.inc), each
// workload, and each candidate with the hand schedule first: the variant's calls are routed
// to the candidate (set_pipeline_override), the outputs poisoned, one call made (on CUDA
// the first call JIT-loads the candidate's module: the warm-up), its outputs checked, and
// only then timed, in --rounds rounds (3), each in another order -- CUDA: CUDA-graph replays
// of 20 calls timed with events (the median per call over 30 replays); CPU: the median wall
// time of 21 single calls. A schedule's time is the median of its rounds' medians.
// A workload that never reaches the variant is skipped. One JSON object per line on stdout
// (autotune/tune.py appends them to the experiment's records), progress on stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "cuda_timing.h"
#include "livebound/livebound.hpp"
#include "pipeline_call.h"
#include "runner.h"

#include "livebound/tune_headers.inc"  // generated: every candidate's and tuned variant's header

namespace livebound::autotune {

std::vector<KernelWorkloads> &registry() {
    static std::vector<KernelWorkloads> r;
    return r;
}
bool register_kernel(const KernelWorkloads &k) {
    registry().push_back(k);
    return true;
}
const std::vector<KernelWorkloads> &kernels() { return registry(); }

namespace {

struct Candidate {
    const char *variant;
    const char *id;
    const char *knobs;
    Pipeline pipeline;
    Pipeline variant_pipeline;
};

const Candidate kCandidates[] = {
#define LB_TUNE_CANDIDATE(variant, id, knobs, candidate) {#variant, id, knobs, LB_PIPELINE(candidate), LB_PIPELINE(variant)},
#include "livebound/tune_candidates.inc"
#undef LB_TUNE_CANDIDATE
};

std::string json_escape(const std::string &s) {
    std::string out;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (static_cast<unsigned char>(ch) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", ch);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out;
}

struct Options {
    std::string kernel, device = "cpu", workloads, driver, exclude;
    int replays = 30, cpu_repeats = 21, rounds = 3;
};

bool parse(int argc, char **argv, Options *o) {
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&](std::string *out) {
            if (i + 1 >= argc) return false;
            *out = argv[++i];
            return true;
        };
        std::string v;
        if (a == "--kernel" && value(&o->kernel)) continue;
        if (a == "--device" && value(&o->device)) continue;
        if (a == "--workloads" && value(&o->workloads)) continue;
        if (a == "--driver" && value(&o->driver)) continue;
        if (a == "--exclude" && value(&o->exclude)) continue;
        if (a == "--replays" && value(&v)) {
            o->replays = std::max(1, std::atoi(v.c_str()));
            continue;
        }
        if (a == "--rounds" && value(&v)) {
            o->rounds = std::max(1, std::atoi(v.c_str()));
            continue;
        }
        if (a == "--cpu-repeats" && value(&v)) {
            o->cpu_repeats = std::max(1, std::atoi(v.c_str()));
            continue;
        }
        std::fprintf(stderr, "livebound_tune_runner: unknown or incomplete argument '%s'\n", a.c_str());
        return false;
    }
    if (o->kernel.empty() || (o->device != "cpu" && o->device != "cuda")) {
        std::fprintf(stderr, "usage: livebound_tune_runner --kernel K --device cpu|cuda [--workloads S] [--replays N] "
                             "[--cpu-repeats N] [--rounds N] [--driver TEXT] [--exclude ID,ID]\n");
        return false;
    }
    return true;
}

struct Timing {
    double median_us = 0, min_us = 0;
    int samples = 0;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace
}  // namespace livebound::autotune

int main(int argc, char **argv) {
    using namespace livebound;
    using namespace livebound::autotune;
    Options opt;
    if (!parse(argc, argv, &opt)) return 2;
    const KernelWorkloads *kernel = nullptr;
    for (const KernelWorkloads &k : kernels()) {
        if (opt.kernel == k.kernel) kernel = &k;
    }
    if (kernel == nullptr) {
        std::fprintf(stderr, "livebound_tune_runner: no workloads for kernel %s in this runner\n", opt.kernel.c_str());
        return 2;
    }
    const bool on_cuda = opt.device == "cuda";
    std::unique_ptr<cuda::ScopedContext> scope;
    cuda::CUstream stream = nullptr;
    std::string gpu = "none", driver = opt.driver;
    if (on_cuda) {
        if (lb_cuda_device_count() == 0) {
            std::fprintf(stderr, "livebound_tune_runner: --device cuda but no CUDA device\n");
            return 3;
        }
        scope = std::make_unique<cuda::ScopedContext>(0);
        char name[256] = {0};
        cuda::CUdevice dev = 0;
        cuda::driver()->cuDeviceGet(&dev, 0);
        cuda::driver()->cuDeviceGetName(name, sizeof name, dev);
        gpu = name;
        if (driver.empty()) {
            int v = 0;
            cuda::driver()->cuDriverGetVersion(&v);
            driver = "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
        }
        cuda::driver()->cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    }
    const lb_device device = on_cuda ? cuda_device(0, stream) : lb_device{LB_DEVICE_CPU, 0, nullptr};

    // The variants of this kernel with candidates, in table order, each with its candidates.
    std::vector<std::string> variants;
    std::map<std::string, std::vector<const Candidate *>> by_variant;
    for (const Candidate &c : kCandidates) {
        const std::string v = c.variant;
        if (v.rfind(kernel->variant_prefix, 0) != 0) continue;
        if (("," + opt.exclude + ",").find("," + std::string(c.id) + ",") != std::string::npos) continue;
        if (!by_variant.count(v)) variants.push_back(v);
        by_variant[v].push_back(&c);
    }
    if (variants.empty()) {
        std::fprintf(stderr, "livebound_tune_runner: no candidates of %s in this build (LIVEBOUND_TUNE_FILE)\n",
                     opt.kernel.c_str());
        return 2;
    }
    WorkloadList workloads = kernel->make(on_cuda);
    size_t total = 0, done = 0;
    for (const auto &v : variants) total += (by_variant[v].size() + 1) * workloads.size();

    for (const std::string &variant : variants) {
        const std::vector<const Candidate *> &cands = by_variant[variant];
        for (auto &w : workloads) {
            if (!opt.workloads.empty() && w->name().find(opt.workloads) == std::string::npos) {
                done += cands.size() + 1;
                continue;
            }
            const std::string prepared = w->prepare(on_cuda);
            // Every schedule of this workload: the hand schedule (the variant itself) first,
            // then each candidate.
            struct Entry {
                std::string id, knobs, error;
                Pipeline pipeline;
                std::vector<Timing> rounds;
            };
            std::vector<Entry> entries;
            entries.push_back({"hand", "", prepared, cands[0]->variant_pipeline, {}});
            for (const Candidate *c : cands) entries.push_back({c->id, c->knobs, prepared, c->pipeline, {}});
            const auto route = [&](const Entry &e) { set_pipeline_override(cands[0]->variant_pipeline.argv, e.pipeline); };
            // 1. The gate: outputs poisoned, one call (on CUDA it JIT-loads the module: the
            //    warm-up), outputs checked. Only a schedule that passes is timed.
            bool unused = false;
            for (Entry &e : entries) {
                std::fprintf(stderr, "[%zu/%zu] %s %s %s\n", ++done, total, variant.c_str(), e.id.c_str(),
                             w->name().c_str());
                if (!e.error.empty() || unused) continue;
                route(e);
                const uint64_t hits = pipeline_override_hits();
                if (!w->poison()) e.error = "poisoning the outputs failed";
                if (e.error.empty() && w->call(device) != LB_OK) e.error = std::string("call failed: ") + lb_last_error();
                if (e.error.empty() && on_cuda && cuda::driver()->cuStreamSynchronize(stream) != 0) {
                    e.error = "the call's stream failed";
                }
                if (e.error.empty() && pipeline_override_hits() == hits) unused = true;
                if (e.error.empty() && !unused) {
                    const std::string bad = w->check(e.id == "hand");
                    if (!bad.empty()) e.error = "output check failed: " + bad;
                }
            }
            set_pipeline_override(nullptr, Pipeline{nullptr, nullptr});
            if (unused) {
                std::fprintf(stderr, "    %s does not run %s: skipped\n", w->name().c_str(), variant.c_str());
                continue;
            }
            // 2. Timing in rounds, each round in another order (rotated by one), so that a
            //    drift of the machine or a first-timed effect does not favour one schedule;
            //    each schedule's time is the median of its rounds' medians.
            for (int round = 0; round < opt.rounds; round++) {
                for (size_t k = 0; k < entries.size(); k++) {
                    Entry &e = entries[(k + size_t(round)) % entries.size()];
                    if (!e.error.empty()) continue;
                    // (The same fields as the gate's lines: run.sh names a crash's schedule from them.)
                    std::fprintf(stderr, "[t%d] %s %s %s\n", round + 1, variant.c_str(), e.id.c_str(), w->name().c_str());
                    route(e);
                    Timing t;
                    if (on_cuda) {
                        tools::GraphTiming g;
                        std::string terr;
                        auto enqueue = [&](cuda::CUstream s) {
                            if (w->call(cuda_device(0, s)) == LB_OK) return true;
                            terr = lb_last_error();
                            return false;
                        };
                        if (tools::time_graph_replay(enqueue, stream, 20, opt.replays, &g, &terr)) {
                            t = {g.median_us_per_call, g.min_us_per_call, g.replays};
                        } else {
                            e.error = "timing failed: " + terr;
                        }
                    } else {
                        std::vector<double> us;
                        w->call(device);  // warm-up
                        for (int r = 0; r < opt.cpu_repeats; r++) {
                            const auto t0 = std::chrono::steady_clock::now();
                            w->call(device);
                            const auto t1 = std::chrono::steady_clock::now();
                            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                        }
                        t = {median(us), *std::min_element(us.begin(), us.end()), int(us.size())};
                    }
                    if (e.error.empty()) e.rounds.push_back(t);
                }
            }
            set_pipeline_override(nullptr, Pipeline{nullptr, nullptr});
            for (const Entry &e : entries) {
                std::printf("{\"kernel\": \"%s\", \"variant\": \"%s\", \"candidate\": \"%s\", \"knobs\": \"%s\", "
                            "\"workload\": \"%s\", \"workload_class\": \"%s\", \"device\": \"%s\", \"gpu\": \"%s\", "
                            "\"driver\": \"%s\", ",
                            kernel->kernel, variant.c_str(), e.id.c_str(), json_escape(e.knobs).c_str(),
                            json_escape(w->name()).c_str(), json_escape(w->workload_class()).c_str(),
                            opt.device.c_str(), json_escape(gpu).c_str(), json_escape(driver).c_str());
                if (e.error.empty()) {
                    std::vector<double> medians;
                    double min_us = e.rounds.front().min_us;
                    int samples = 0;
                    std::string list;
                    for (const Timing &t : e.rounds) {
                        medians.push_back(t.median_us);
                        min_us = std::min(min_us, t.min_us);
                        samples += t.samples;
                        char buf[32];
                        std::snprintf(buf, sizeof buf, "%s%.3f", list.empty() ? "" : ", ", t.median_us);
                        list += buf;
                    }
                    std::printf("\"median_us\": %.3f, \"min_us\": %.3f, \"samples\": %d, \"round_medians_us\": [%s], "
                                "\"method\": \"%s\"}\n",
                                median(medians), min_us, samples, list.c_str(),
                                on_cuda ? "median of rounds (rotated order) of CUDA-graph replays of 20 calls, events; per call"
                                        : "median of rounds (rotated order) of the wall time of one call");
                } else {
                    std::printf("\"error\": \"%s\"}\n", json_escape(e.error).c_str());
                    std::fprintf(stderr, "    %s: %s\n", e.id.c_str(), e.error.c_str());
                }
            }
            std::fflush(stdout);
        }
    }
    if (stream != nullptr) cuda::driver()->cuStreamDestroy(stream);
    return 0;
}
