// What the K4 schedules act on: the generator's Funcs and Vars, and the named knobs.
#pragma once

#include "Halide.h"
#include "common/scan.h"

namespace livebound::trtllm_metadata {

// Schedule knobs. Defaults are the reviewed values; the CMake manifest (and autotune/)
// may override them per variant through GeneratorParams of the same names.
struct Knobs {
    // Page tables at production shapes: width 1024 pages (131072 tokens at ps 128), live
    // 8-64 pages. One block of 128 threads per request (col_groups = 1): a request's live
    // pages fit in one pass of its threads, and each thread's serial chunk loop is trimmed
    // to the live count, so dead chunks cost one loop-bound test. K1's 16 x 256 was tuned
    // for ps = 1 (131072 live-able columns); it would launch 4096 threads per request here.
    // The SWA fused variants take col_groups = 2 from the manifest (the riders, swa_out among
    // them, then sit on a block without live columns: cmake/families/trtllm_metadata.cmake).
    int col_threads = 128;  // CUDA: threads per block along the page-table columns
    int col_groups = 1;     // CUDA: blocks per request, column chunks interleaved
    int scan_threads = 256; // CUDA: threads per block of the seqlens / prefix-sum kernel
    int out_threads = 256;  // CUDA: threads per block of the swa_out_cache_loc kernel
    // CUDA (fused part): the 1-D outputs' loops run before the gather's in the fused block
    // (on in the tuned form from 32 requests: schedules/trtllm_metadata/tuned/).
    bool riders_first = false;
    // CUDA (fused part): the prefix sums entirely in each entry's thread, in registers
    // (schedules/common/scan_cuda.h, place_blocked_scan_in_registers): no shared memory, no
    // barrier. Faster below 32 requests (noswa bs 1: 2.21 -> 1.82 µs), slower from 64 (bs 64:
    // 2.53 -> 2.97): the tuned build runs it below 32 requests and this hand form from 32
    // (schedules/trtllm_metadata/tuned/).
    bool scan_in_registers = false;
};

struct Stages {
    Halide::Func kv_len;             // (b): L_b
    Halide::Func cache_seqlens;      // output (b), seqlens part
    Halide::Func cu_seqlens_k;       // output (b) = torch cu_seqlens_k[b + 1], seqlens part
    Halide::Func cu_seqlens_q;       // output (b) = torch cu_seqlens_q[b + 1], q modes 1/2 only
    scan::Blocked scan_k;            // blocked scan of cu_seqlens_k (undefined: serial)
    scan::Blocked scan_q;            // blocked scan of cu_seqlens_q (q mode 1 on CUDA only)
    Halide::Func page_table;         // output (column, b), pages part
    Halide::Func swa_page_table;     // output (column, b), pages part with SWA
    Halide::Func page_slot;          // (column, b): req_to_token slot of the page's first token
    Halide::Func request_row;        // (b): req_to_token row of request b (clamped)
    Halide::Func swa_out_cache_loc;  // output (k), swa_out part
    Halide::Var b, column;
};

}  // namespace livebound::trtllm_metadata
