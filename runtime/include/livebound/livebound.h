/* livebound: the plain C ABI.
 *
 * Every entry point takes tensor descriptors (raw pointer, dtype, shape, strides in
 * elements, row-major like torch), a few host scalars, and a device: the CPU, or a
 * CUDA device index plus the caller's stream (a CUstream; NULL is the legacy default
 * stream). CUDA calls run on the device's primary context (the one PyTorch and the
 * CUDA runtime use), so the stream must be one of that context (or NULL,
 * CU_STREAM_LEGACY, CU_STREAM_PER_THREAD): a stream of another device or context is
 * refused, naming 'stream'. CUDA calls never allocate, never synchronise, and are
 * CUDA-graph capturable after one warm-up call per kernel variant and process (the
 * first call JIT-compiles the kernel's PTX).
 *
 * Every argument is validated before anything runs. A bad one returns a non-zero
 * lb_status and writes nothing; lb_last_error() then names the argument and says
 * what is wrong with it.
 */
#ifndef LIVEBOUND_LIVEBOUND_H
#define LIVEBOUND_LIVEBOUND_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LB_API __attribute__((visibility("default")))

typedef enum lb_status {
    LB_OK = 0,
    LB_ERROR_INVALID_ARGUMENT = 1, /* an argument is wrong: the message names it */
    LB_ERROR_UNSUPPORTED = 2,      /* valid, but this build has no variant for it (e.g. no CUDA) */
    LB_ERROR_DEVICE = 3,           /* the CUDA driver or device failed or is absent */
    LB_ERROR_KERNEL = 4            /* the kernel itself reported an error */
} lb_status;

/* Element types: the index types of the metadata kernels, and the floating-point types of
 * the attention tensors (K7, K8). */
typedef enum lb_dtype {
    LB_DTYPE_NONE = 0,
    LB_INT32 = 1,
    LB_INT64 = 2,
    LB_UINT8 = 3,
    LB_FLOAT16 = 16,
    LB_BFLOAT16 = 17,
    LB_FLOAT32 = 18,
    LB_FLOAT8_E4M3FN = 19, /* torch.float8_e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits, no
                            * infinities, 0x7f / 0xff NaN; K7/K8 KV caches (k_buffer, v_buffer) */
    /* Not a dtype. The C ABI's enums take any int32 a caller stores (wrong values are refused
     * by name); this enumerator makes every int32 a value of the type in C++ too, where
     * reading one outside the enumerators' range would be undefined behaviour. */
    LB_DTYPE_INT32_RANGE_ = -2147483647 - 1
} lb_dtype;

typedef enum lb_device_type {
    LB_DEVICE_CPU = 0,
    LB_DEVICE_CUDA = 1,
    LB_DEVICE_TYPE_INT32_RANGE_ = -2147483647 - 1 /* not a device type (see lb_dtype) */
} lb_device_type;

typedef struct lb_device {
    lb_device_type type;
    int32_t index;  /* CUDA device ordinal; 0 for the CPU */
    void *stream;   /* CUstream of device `index`'s primary context for CUDA calls; ignored on the CPU */
} lb_device;

/* A strided view of caller memory, up to 4 dimensions. shape/strides are row-major (torch
 * order), strides in elements, >= 1; entries at and past ndim are ignored. 1-D tensors may
 * have any stride; tensors of 2 or more dimensions need a last-dimension stride of 1 (any
 * other stride). An absent optional tensor is all zeros (data NULL, ndim 0). */
#define LB_MAX_DIMS 4
typedef struct lb_tensor {
    void *data;
    lb_dtype dtype;
    int32_t ndim;
    int64_t shape[LB_MAX_DIMS];
    int64_t strides[LB_MAX_DIMS];
} lb_tensor;

/* Which form of a kernel runs. LB_BOUNDED is the product: Halide derived the loop
 * bounds from the live-length predicates. LB_FULL_WIDTH is its twin built from the
 * same algorithm with the bound switched off (every column below the full width is
 * written), for tests and benchmarks. */
typedef enum lb_variant {
    LB_BOUNDED = 0,
    LB_FULL_WIDTH = 1,
    LB_VARIANT_INT32_RANGE_ = -2147483647 - 1 /* not a variant (see lb_dtype) */
} lb_variant;

/* K1, SGLang's normal_decode_set_metadata (spec §3.1). Per batch entry b:
 *   L_b = int32(seq_lens[b]) + seq_len_delta              -> cache_seqlens[b]
 *   cu_seqlens_k[0] = 0, cu_seqlens_k[b+1] = cu_seqlens_k[b] + L_b
 *   live_pages_b = min(cdiv(L_b, page_size), max_seq_pages)
 *   for k < live_pages_b:  t = req_to_token[req_pool_indices[b], k * page_size]
 *       page_table[b, k] = t >> log2(page_size)
 *       swa_page_table[b, k] = full_to_swa[t] >> log2(page_size)      (SWA only)
 * Columns k >= live_pages_b are not written (LB_BOUNDED). */
typedef struct lb_decode_metadata_args {
    lb_tensor seq_lens;          /* [bs] int32 | int64: kv length before delta */
    lb_tensor req_pool_indices;  /* [bs] int32 | int64: request-pool row of entry b */
    lb_tensor req_to_token;      /* [pool_rows, ctx] int32: KV slot of each token position */
    lb_tensor full_to_swa;       /* optional, [full_slots] int64: full slot -> SWA slot */
    lb_tensor cache_seqlens;     /* out, [>= bs] int32: entries [0, bs) written */
    lb_tensor cu_seqlens_k;      /* out, [>= bs + 1] int32: entries [0, bs] written */
    lb_tensor page_table;        /* out, [>= bs, >= max_seq_pages] int32, any row stride */
    lb_tensor swa_page_table;    /* out, same shape rules; required iff full_to_swa */
    int64_t max_seq_pages;       /* page-table columns the launch covers (the full width) */
    int32_t seq_len_delta;       /* added to every seq_lens[b] */
    int32_t page_size;           /* tokens per page, a power of two in [1, 2^20] */
    int32_t skip_page_table;     /* non-zero: only cache_seqlens and cu_seqlens_k are written */
    lb_variant variant;
} lb_decode_metadata_args;

LB_API lb_status lb_normal_decode_set_metadata(const lb_decode_metadata_args *args, lb_device device);

/* The message of the last failed call on this thread ("" after a success). */
LB_API const char *lb_last_error(void);

/* The AOT variant the last call on this thread ran, by its generated function's name (e.g.
 * "lb_k7_cuda_tc_bounded_bf16_d576_512_vk_nolse"; a call of two launches names the second),
 * or "" after a failed call. Which form the runtime picked for the call's facts: for
 * engine builders checking their inputs reach the kernel they expect, and for teaching. */
LB_API const char *lb_last_variant(void);

/* 1 when CUDA device `index` can run livebound's CUDA variants, else 0. */
LB_API int lb_cuda_device_available(int32_t index);

/* Number of CUDA devices the driver reports (0 without a driver or device). */
LB_API int32_t lb_cuda_device_count(void);

LB_API const char *lb_version(void);

#ifdef __cplusplus
}
#endif

/* The other kernel families (each header declares its argument block and entry point). */
#include "livebound/dsa_metadata.h"    /* K2, K3 */
#include "livebound/trtllm_metadata.h" /* K4 */
#include "livebound/dsa_kv_gather.h"   /* K5 */
#include "livebound/transform_index.h" /* K6 */
#include "livebound/extend_attention.h" /* K7, K8 */

#endif /* LIVEBOUND_LIVEBOUND_H */
