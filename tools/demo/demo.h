// The demo registry: each kernel family contributes rows to `livebound demo` from its own
// file in tools/demo/ (an embedded workload, bounded and full-width, CPU and CUDA when a
// device is present, every result checked against the plain C++ reference).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace livebound::demo {

struct Row {
    std::string kernel;   // e.g. "K1"
    std::string batch;    // the workload, e.g. "decode bs=64 ps=1"
    std::string device;   // "cpu" or "cuda:0"
    std::string variant;  // "bounded" or "full-width"
    std::string mismatch; // "" when the result equals the reference, else the first difference
    int64_t written = 0;  // output elements (columns, rows, tokens) the variant wrote
    int64_t full_width = 0;
    double time_us = 0;   // CPU: median wall time; CUDA: median CUDA-graph replay time per call
    double eager_us = -1; // CUDA: back-to-back calls on a stream; -1 on the CPU
    std::string unit = "columns";
};

struct Context {
    bool cuda = false;  // CUDA device 0 usable
};

// Appends rows; may add a line to *note (e.g. why CUDA rows are missing).
using Fn = void (*)(const Context &, std::vector<Row> *rows, std::string *note);

// Registers a family's demo; call from a namespace-scope initializer in its file.
bool register_demo(const char *kernel, Fn fn);
const std::vector<std::pair<std::string, Fn>> &registered();

// The rows of one workload and variant: `run_cpu()` always, and `run_cuda(Row *, std::string
// *error)` when ctx.cuda; a CUDA failure adds "<kernel> on CUDA: <error>" to *note.
template <typename RunCpu, typename RunCuda>
std::vector<Row> cpu_and_cuda_rows(const Context &ctx, const std::string &kernel, RunCpu run_cpu, RunCuda run_cuda,
                                   std::string *note) {
    std::vector<Row> rows = {run_cpu()};
    if (ctx.cuda) {
        Row r;
        std::string error;
        if (run_cuda(&r, &error)) {
            rows.push_back(r);
        } else {
            *note += kernel + " on CUDA: " + error + "\n";
        }
    }
    return rows;
}

// Median of a few wall-clock timings of `call` on the CPU, in µs.
double cpu_median_us(void (*call)(void *), void *arg, int repetitions = 15);

}  // namespace livebound::demo
