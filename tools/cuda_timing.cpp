#include "cuda_timing.h"

#include <algorithm>
#include <vector>

namespace livebound::tools {
namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

#define LB_CU(call)                                                   \
    do {                                                              \
        cuda::CUresult r_ = (call);                                   \
        if (r_ != 0) {                                                \
            *error = cuda::describe(#call, r_);                       \
            return false;                                             \
        }                                                             \
    } while (0)

}  // namespace

bool time_graph_replay(const std::function<bool(cuda::CUstream)> &enqueue, cuda::CUstream stream,
                       int calls_per_graph, int replays, GraphTiming *out, std::string *error) {
    const cuda::Driver *d = cuda::driver();
    for (int i = 0; i < 3; i++) {
        if (!enqueue(stream)) return false;
    }
    LB_CU(d->cuStreamSynchronize(stream));
    cuda::CUgraph graph = nullptr;
    cuda::CUgraphExec exec = nullptr;
    LB_CU(d->cuStreamBeginCapture(stream, cuda::kStreamCaptureModeThreadLocal));
    bool captured = true;
    for (int i = 0; i < calls_per_graph && captured; i++) captured = enqueue(stream);
    cuda::CUresult end = d->cuStreamEndCapture(stream, &graph);
    if (!captured) return false;
    LB_CU(end);
    LB_CU(d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    cuda::CUevent start = nullptr, stop = nullptr;
    LB_CU(d->cuEventCreate(&start, 0));
    LB_CU(d->cuEventCreate(&stop, 0));
    for (int i = 0; i < 5; i++) LB_CU(d->cuGraphLaunch(exec, stream));  // warm replays
    std::vector<double> per_call;
    for (int i = 0; i < replays; i++) {
        LB_CU(d->cuEventRecord(start, stream));
        LB_CU(d->cuGraphLaunch(exec, stream));
        LB_CU(d->cuEventRecord(stop, stream));
        LB_CU(d->cuEventSynchronize(stop));
        float ms = 0;
        LB_CU(d->cuEventElapsedTime(&ms, start, stop));
        per_call.push_back(ms * 1000.0 / calls_per_graph);
    }
    d->cuEventDestroy(start);
    d->cuEventDestroy(stop);
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
    out->median_us_per_call = median(per_call);
    out->min_us_per_call = *std::min_element(per_call.begin(), per_call.end());
    out->calls_per_graph = calls_per_graph;
    out->replays = replays;
    return true;
}

bool time_eager(const std::function<bool(cuda::CUstream)> &enqueue, cuda::CUstream stream, int calls,
                int repetitions, double *median_us_per_call, std::string *error) {
    const cuda::Driver *d = cuda::driver();
    for (int i = 0; i < 3; i++) {
        if (!enqueue(stream)) return false;
    }
    cuda::CUevent start = nullptr, stop = nullptr;
    LB_CU(d->cuEventCreate(&start, 0));
    LB_CU(d->cuEventCreate(&stop, 0));
    std::vector<double> per_call;
    for (int r = 0; r < repetitions; r++) {
        LB_CU(d->cuEventRecord(start, stream));
        for (int i = 0; i < calls; i++) {
            if (!enqueue(stream)) return false;
        }
        LB_CU(d->cuEventRecord(stop, stream));
        LB_CU(d->cuEventSynchronize(stop));
        float ms = 0;
        LB_CU(d->cuEventElapsedTime(&ms, start, stop));
        per_call.push_back(ms * 1000.0 / calls);
    }
    d->cuEventDestroy(start);
    d->cuEventDestroy(stop);
    *median_us_per_call = median(per_call);
    return true;
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
    if (cuda::driver()->cuMemAlloc(&ptr_, bytes ? bytes : 4) != 0) ptr_ = 0;
}
DeviceBuffer::~DeviceBuffer() {
    if (ptr_) cuda::driver()->cuMemFree(ptr_);
}
bool DeviceBuffer::upload(const void *host, size_t bytes) {
    return ptr_ && cuda::driver()->cuMemcpyHtoD(ptr_, host, bytes) == 0;
}
bool DeviceBuffer::download(void *host, size_t bytes) const {
    return ptr_ && cuda::driver()->cuMemcpyDtoH(host, ptr_, bytes) == 0;
}

}  // namespace livebound::tools
