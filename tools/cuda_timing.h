// Timing of livebound calls on a CUDA stream, the way engines run them: CUDA-graph
// replay (the decode loop) and eager back-to-back calls. Used by `livebound demo` and
// bench/. CUDA events measure device time; medians over repetitions.
#pragma once

#include <functional>
#include <string>

#include "cuda_driver.h"

namespace livebound::tools {

struct GraphTiming {
    double median_us_per_call = 0;  // device time per call, graph replay
    double min_us_per_call = 0;
    int calls_per_graph = 0;
    int replays = 0;
};

// `enqueue` issues one call on `stream` and returns false on failure (error in *error).
// Warm-up (the first call JIT-compiles PTX), then capture `calls_per_graph` calls into
// one graph and time `replays` replays of it with events.
bool time_graph_replay(const std::function<bool(cuda::CUstream)> &enqueue, cuda::CUstream stream,
                       int calls_per_graph, int replays, GraphTiming *out, std::string *error);

// Eager: `calls` back-to-back calls between two events, repeated `repetitions` times;
// returns the median device time per call (host overhead included when it dominates).
bool time_eager(const std::function<bool(cuda::CUstream)> &enqueue, cuda::CUstream stream, int calls,
                int repetitions, double *median_us_per_call, std::string *error);

// RAII device allocation in the current context.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    void *get() const { return reinterpret_cast<void *>(ptr_); }
    bool upload(const void *host, size_t bytes);
    bool download(void *host, size_t bytes) const;

private:
    cuda::CUdeviceptr ptr_ = 0;
};

}  // namespace livebound::tools
