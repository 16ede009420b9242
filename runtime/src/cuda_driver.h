// The CUDA driver API, loaded at run time from libcuda.so.1 (never linked, so that
// the library, its tests and its tools load and run on machines without a driver).
// Internal to livebound; tests, tools and benchmarks use it for device memory,
// streams, events and graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace livebound::cuda {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUstream = void *;
using CUevent = void *;
using CUgraph = void *;
using CUgraphExec = void *;
using CUgraphNode = void *;
using CUdeviceptr = unsigned long long;

struct Driver {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuCtxPushCurrent)(CUcontext);
    CUresult (*cuCtxPopCurrent)(CUcontext *);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxGetCurrent)(CUcontext *);
    CUresult (*cuCtxGetDevice)(CUdevice *);  // of the current context
    // Tests only (a context that is not the primary one): cuCtxCreate_v2 / cuCtxDestroy_v2.
    CUresult (*cuCtxCreate)(CUcontext *, unsigned, CUdevice);
    CUresult (*cuCtxDestroy)(CUcontext);
    CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
    CUresult (*cuPointerGetAttributes)(unsigned, int *, void **, CUdeviceptr);
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*cuStreamCreate)(CUstream *, unsigned);
    CUresult (*cuStreamDestroy)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamGetCtx)(CUstream, CUcontext *);  // legal during stream capture
    CUresult (*cuEventCreate)(CUevent *, unsigned);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*cuStreamBeginCapture)(CUstream, int);
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
    CUresult (*cuGraphExecDestroy)(CUgraphExec);
    CUresult (*cuGraphDestroy)(CUgraph);
    CUresult (*cuGraphGetNodes)(CUgraph, CUgraphNode *, size_t *);
    CUresult (*cuGraphNodeGetType)(CUgraphNode, int *);
    CUresult (*cuGetErrorString)(CUresult, const char **);
};

// Attribute / enum values used by livebound (from cuda.h, CUDA 12/13).
constexpr int kPointerAttributeMemoryType = 2;      // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kPointerAttributeDeviceOrdinal = 9;   // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr int kMemoryTypeHost = 1, kMemoryTypeDevice = 2, kMemoryTypeUnified = 4;
constexpr int kStreamNonBlocking = 1;                // CU_STREAM_NON_BLOCKING
// The special stream handles: the legacy default stream and the per-thread default stream
// of whatever context is current (NULL is the legacy one too). Not streams of a context:
// cuStreamGetCtx is not asked about them.
constexpr uintptr_t kStreamLegacy = 0x1;             // CU_STREAM_LEGACY
constexpr uintptr_t kStreamPerThread = 0x2;          // CU_STREAM_PER_THREAD
constexpr int kStreamCaptureModeThreadLocal = 1;     // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
constexpr int kGraphNodeTypeKernel = 0;              // CU_GRAPH_NODE_TYPE_KERNEL
constexpr int kDeviceAttributeComputeCapabilityMajor = 75;
constexpr int kDeviceAttributeComputeCapabilityMinor = 76;
constexpr int kDeviceAttributeMultiprocessorCount = 16;

// The driver, loaded and cuInit-ed once; nullptr when libcuda.so.1 is absent or
// cuInit fails (why_unavailable() says which).
const Driver *driver();
std::string why_unavailable();

// Number of devices (0 without a driver).
int device_count();

// The retained primary context of `device` (retained once per process, never
// released: Halide's runtime unloads its modules through it at exit).
// nullptr plus *error on failure. After the first call for a device, one atomic load.
CUcontext primary_context(int device, std::string *error);

// The device ordinal of context `ctx` (any context, e.g. the one a stream belongs to), or -1
// plus *error. Pushes `ctx` on this thread for one query (cuCtxGetDevice) and pops it.
int context_device(CUcontext ctx, std::string *error);

// "cuXxx failed: CUDA_ERROR_... (code)".
std::string describe(const char *call, CUresult result);

// Makes the device's primary context current on this thread for the scope.
class ScopedContext {
public:
    explicit ScopedContext(int device);
    ~ScopedContext();
    bool ok() const { return ok_; }
    const std::string &error() const { return error_; }

private:
    bool ok_ = false;
    std::string error_;
};

}  // namespace livebound::cuda
