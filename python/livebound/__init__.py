"""livebound: Python bindings (ctypes) over liblivebound.so's C ABI.

    import livebound
    livebound.normal_decode_set_metadata(cache_seqlens, cu_seqlens_k, page_table,
        req_to_token, req_pool_indices, max_seq_pages, seq_lens, 0, page_size)

The library is loaded on first use from $LIVEBOUND_LIB, else from the build tree next to
this package (<repo>/build/runtime/liblivebound.so); load_library(path) loads it
explicitly. Tensors: torch.Tensor (CPU or CUDA) or numpy.ndarray (CPU; bfloat16 as
as_bfloat16(uint16 bits)); torch is never imported by livebound. See docs/python.md.
"""

from ._abi import (
    LB_BOUNDED,
    LB_DEVICE_CPU,
    LB_DEVICE_CUDA,
    LB_DTYPE_NONE,
    LB_ERROR_DEVICE,
    LB_ERROR_INVALID_ARGUMENT,
    LB_ERROR_KERNEL,
    LB_ERROR_UNSUPPORTED,
    LB_BFLOAT16,
    LB_FLOAT16,
    LB_FLOAT32,
    LB_FULL_WIDTH,
    LB_INT32,
    LB_INT64,
    LB_OK,
    LB_UINT8,
)
from ._lib import (
    LbError,
    cuda_device_available,
    cuda_device_count,
    last_error,
    last_variant,
    library_path,
    load_library,
    version,
)
from ._tensor import BFloat16Array, as_bfloat16
from .kernels import (
    Q_MODE_CUMSUM,
    Q_MODE_NONE,
    Q_MODE_STRIDED,
    extend_attention_fwd,
    extend_attention_fwd_unified,
    fused_dsa_decode_metadata,
    fused_dsa_target_verify_metadata,
    get_k_and_s,
    normal_decode_set_metadata,
    transform_index_page_table_prefill,
    update_trtllm_mha_graph_metadata,
)

__all__ = [
    "LbError",
    "load_library",
    "library_path",
    "last_error",
    "last_variant",
    "version",
    "cuda_device_count",
    "cuda_device_available",
    "normal_decode_set_metadata",
    "fused_dsa_decode_metadata",
    "fused_dsa_target_verify_metadata",
    "update_trtllm_mha_graph_metadata",
    "get_k_and_s",
    "transform_index_page_table_prefill",
    "extend_attention_fwd",
    "extend_attention_fwd_unified",
    "as_bfloat16",
    "BFloat16Array",
    "Q_MODE_NONE",
    "Q_MODE_CUMSUM",
    "Q_MODE_STRIDED",
    "LB_OK",
    "LB_ERROR_INVALID_ARGUMENT",
    "LB_ERROR_UNSUPPORTED",
    "LB_ERROR_DEVICE",
    "LB_ERROR_KERNEL",
    "LB_BOUNDED",
    "LB_FULL_WIDTH",
    "LB_DTYPE_NONE",
    "LB_INT32",
    "LB_INT64",
    "LB_UINT8",
    "LB_FLOAT16",
    "LB_BFLOAT16",
    "LB_FLOAT32",
    "LB_DEVICE_CPU",
    "LB_DEVICE_CUDA",
]
