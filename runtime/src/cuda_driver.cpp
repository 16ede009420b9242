#include "cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

namespace livebound::cuda {
namespace {

struct Loaded {
    Driver api{};
    bool ok = false;
    std::string why;
    std::mutex context_mutex;
    std::vector<CUcontext> primary;  // index: device ordinal
};

template<typename T>
bool resolve(void *lib, const char *name, T &fn, std::string &missing) {
    fn = reinterpret_cast<T>(dlsym(lib, name));
    if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
    return fn != nullptr;
}

Loaded &loaded() {
    static Loaded *state = [] {
        auto *s = new Loaded();  // never destroyed: Halide's runtime uses it at exit
        // The versioned name exists wherever a driver is installed; the unversioned
        // symlink only where a developer package added it.
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            s->why = std::string("cannot load libcuda.so.1: ") + dlerror();
            return s;
        }
        std::string missing;
        Driver &d = s->api;
        resolve(lib, "cuInit", d.cuInit, missing);
        resolve(lib, "cuDriverGetVersion", d.cuDriverGetVersion, missing);
        resolve(lib, "cuDeviceGetCount", d.cuDeviceGetCount, missing);
        resolve(lib, "cuDeviceGet", d.cuDeviceGet, missing);
        resolve(lib, "cuDeviceGetName", d.cuDeviceGetName, missing);
        resolve(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, missing);
        resolve(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, missing);
        resolve(lib, "cuCtxPushCurrent_v2", d.cuCtxPushCurrent, missing);
        resolve(lib, "cuCtxPopCurrent_v2", d.cuCtxPopCurrent, missing);
        resolve(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, missing);
        resolve(lib, "cuCtxGetCurrent", d.cuCtxGetCurrent, missing);
        resolve(lib, "cuPointerGetAttribute", d.cuPointerGetAttribute, missing);
        resolve(lib, "cuPointerGetAttributes", d.cuPointerGetAttributes, missing);
        resolve(lib, "cuMemAlloc_v2", d.cuMemAlloc, missing);
        resolve(lib, "cuMemFree_v2", d.cuMemFree, missing);
        resolve(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, missing);
        resolve(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, missing);
        resolve(lib, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync, missing);
        resolve(lib, "cuMemsetD32Async", d.cuMemsetD32Async, missing);
        resolve(lib, "cuStreamCreate", d.cuStreamCreate, missing);
        resolve(lib, "cuStreamDestroy_v2", d.cuStreamDestroy, missing);
        resolve(lib, "cuStreamSynchronize", d.cuStreamSynchronize, missing);
        resolve(lib, "cuEventCreate", d.cuEventCreate, missing);
        resolve(lib, "cuEventDestroy_v2", d.cuEventDestroy, missing);
        resolve(lib, "cuEventRecord", d.cuEventRecord, missing);
        resolve(lib, "cuEventSynchronize", d.cuEventSynchronize, missing);
        resolve(lib, "cuEventElapsedTime", d.cuEventElapsedTime, missing);
        resolve(lib, "cuStreamBeginCapture_v2", d.cuStreamBeginCapture, missing);
        resolve(lib, "cuStreamEndCapture", d.cuStreamEndCapture, missing);
        resolve(lib, "cuGraphInstantiateWithFlags", d.cuGraphInstantiateWithFlags, missing);
        resolve(lib, "cuGraphLaunch", d.cuGraphLaunch, missing);
        resolve(lib, "cuGraphExecDestroy", d.cuGraphExecDestroy, missing);
        resolve(lib, "cuGraphDestroy", d.cuGraphDestroy, missing);
        resolve(lib, "cuGraphGetNodes", d.cuGraphGetNodes, missing);
        resolve(lib, "cuGraphNodeGetType", d.cuGraphNodeGetType, missing);
        resolve(lib, "cuGetErrorString", d.cuGetErrorString, missing);
        if (!missing.empty()) {
            s->why = "libcuda.so.1 lacks " + missing;
            return s;
        }
        CUresult r = d.cuInit(0);
        if (r != 0) {
            s->why = describe("cuInit", r);
            return s;
        }
        int count = 0;
        d.cuDeviceGetCount(&count);
        s->primary.assign(count > 0 ? count : 0, nullptr);
        s->ok = true;
        return s;
    }();
    return *state;
}

}  // namespace

const Driver *driver() {
    Loaded &s = loaded();
    return s.ok ? &s.api : nullptr;
}

std::string why_unavailable() { return loaded().why; }

int device_count() {
    Loaded &s = loaded();
    return s.ok ? static_cast<int>(s.primary.size()) : 0;
}

std::string describe(const char *call, CUresult result) {
    const char *text = nullptr;
    Loaded &s = loaded();
    if (s.api.cuGetErrorString) s.api.cuGetErrorString(result, &text);
    return std::string(call) + " failed: " + (text ? text : "unknown CUDA error") + " (" +
           std::to_string(result) + ")";
}

CUcontext primary_context(int device, std::string *error) {
    Loaded &s = loaded();
    if (!s.ok) {
        *error = s.why;
        return nullptr;
    }
    if (device < 0 || device >= static_cast<int>(s.primary.size())) {
        *error = "CUDA device " + std::to_string(device) + " does not exist (" +
                 std::to_string(s.primary.size()) + " present)";
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(s.context_mutex);
    if (!s.primary[device]) {
        CUdevice dev = 0;
        CUresult r = s.api.cuDeviceGet(&dev, device);
        if (r == 0) r = s.api.cuDevicePrimaryCtxRetain(&s.primary[device], dev);
        if (r != 0) {
            *error = describe("cuDevicePrimaryCtxRetain", r);
            return nullptr;
        }
    }
    return s.primary[device];
}

ScopedContext::ScopedContext(int device) {
    CUcontext ctx = primary_context(device, &error_);
    if (!ctx) return;
    CUresult r = driver()->cuCtxPushCurrent(ctx);
    if (r != 0) {
        error_ = describe("cuCtxPushCurrent", r);
        return;
    }
    ok_ = true;
}

ScopedContext::~ScopedContext() {
    if (ok_) {
        CUcontext popped = nullptr;
        driver()->cuCtxPopCurrent(&popped);
    }
}

}  // namespace livebound::cuda
