#include "cuda_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <memory>
#include <mutex>

namespace livebound::cuda {
namespace {

struct Loaded {
    Driver api{};
    bool ok = false;
    std::string why;
    int device_count = 0;
    std::mutex context_mutex;  // serialises the retains (the first call per device)
    // index: device ordinal; nullptr until retained, then never changed. Read without the
    // lock: every call of every kernel asks for its device's context, on any thread.
    std::unique_ptr<std::atomic<CUcontext>[]> primary;
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
        resolve(lib, "cuCtxGetDevice", d.cuCtxGetDevice, missing);
        resolve(lib, "cuCtxCreate_v2", d.cuCtxCreate, missing);
        resolve(lib, "cuCtxDestroy_v2", d.cuCtxDestroy, missing);
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
        resolve(lib, "cuStreamGetCtx", d.cuStreamGetCtx, missing);
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
        s->device_count = count > 0 ? count : 0;
        s->primary.reset(new std::atomic<CUcontext>[s->device_count]);
        for (int i = 0; i < s->device_count; i++) s->primary[i].store(nullptr, std::memory_order_relaxed);
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
    return s.ok ? s.device_count : 0;
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
    if (device < 0 || device >= s.device_count) {
        *error = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(s.device_count) +
                 " present)";
        return nullptr;
    }
    CUcontext ctx = s.primary[device].load(std::memory_order_acquire);
    if (ctx) return ctx;
    std::lock_guard<std::mutex> lock(s.context_mutex);
    ctx = s.primary[device].load(std::memory_order_relaxed);
    if (!ctx) {
        CUdevice dev = 0;
        CUresult r = s.api.cuDeviceGet(&dev, device);
        if (r == 0) r = s.api.cuDevicePrimaryCtxRetain(&ctx, dev);
        if (r != 0) {
            *error = describe("cuDevicePrimaryCtxRetain", r);
            return nullptr;
        }
        s.primary[device].store(ctx, std::memory_order_release);
    }
    return ctx;
}

int context_device(CUcontext ctx, std::string *error) {
    Loaded &s = loaded();
    if (!s.ok) {
        *error = s.why;
        return -1;
    }
    CUresult r = s.api.cuCtxPushCurrent(ctx);
    if (r != 0) {
        *error = describe("cuCtxPushCurrent", r);
        return -1;
    }
    CUdevice dev = -1;
    r = s.api.cuCtxGetDevice(&dev);
    CUcontext popped = nullptr;
    s.api.cuCtxPopCurrent(&popped);
    if (r != 0) {
        *error = describe("cuCtxGetDevice", r);
        return -1;
    }
    // A CUdevice is a handle; the ordinal is the index cuDeviceGet maps to it.
    for (int ordinal = 0; ordinal < s.device_count; ordinal++) {
        CUdevice candidate = -1;
        if (s.api.cuDeviceGet(&candidate, ordinal) == 0 && candidate == dev) return ordinal;
    }
    *error = "cuCtxGetDevice returned device handle " + std::to_string(dev) + ", which no ordinal maps to";
    return -1;
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
