// Calibration probe (not part of the library): the CUDA-graph replay time of a kernel that
// makes `trips` dependent global loads, alone (plain) or with a barrier after each (sync),
// on 1 or 64 blocks: the per-node floor a metadata kernel is measured against.
// Build: nvcc -O2 -arch=sm_90 -o graph_floor bench/probes/graph_floor.cu
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
__global__ void chain(const int *p, int *out, int trips) {
    int idx = threadIdx.x;
    for (int t = 0; t < trips; t++) idx = p[idx];
    if (threadIdx.x == 0) out[blockIdx.x] = idx;
}
__global__ void chain_sync(const int *p, int *out, int trips) {
    __shared__ int s[256];
    int idx = threadIdx.x;
    for (int t = 0; t < trips; t++) { idx = p[idx]; s[threadIdx.x] = idx; __syncthreads(); idx = s[(threadIdx.x + 1) % blockDim.x]; __syncthreads(); }
    if (threadIdx.x == 0) out[blockIdx.x] = idx;
}
int main() {
    int *p, *out; cudaMalloc(&p, 4096 * 4); cudaMalloc(&out, 4096 * 4);
    std::vector<int> h(4096); for (int i = 0; i < 4096; i++) h[i] = (i * 7 + 3) % 256; cudaMemcpy(p, h.data(), 4096 * 4, cudaMemcpyHostToDevice);
    cudaStream_t s; cudaStreamCreate(&s);
    for (int kind = 0; kind < 2; kind++)
    for (int blocks : {1, 64}) for (int threads : {128, 256}) for (int trips : {0, 1, 2, 4, 8}) {
        const int calls = 30;
        cudaGraph_t g; cudaGraphExec_t ge;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
        for (int c = 0; c < calls; c++) { if (kind == 0) chain<<<blocks, threads, 0, s>>>(p, out, trips); else chain_sync<<<blocks, threads, 0, s>>>(p, out, trips); }
        cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&ge, g, 0);
        for (int w = 0; w < 3; w++) cudaGraphLaunch(ge, s);
        cudaStreamSynchronize(s);
        std::vector<float> v;
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        for (int r = 0; r < 50; r++) { cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms * 1000 / calls); }
        std::sort(v.begin(), v.end());
        printf("%s blocks %d threads %d trips %d: %.2f us/call (median)\n", kind ? "sync" : "plain", blocks, threads, trips, v[v.size() / 2]);
        cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
    }
    printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}
