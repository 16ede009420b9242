"""ctypes mirrors of the C ABI (runtime/include/livebound/*.h).

Field order and types are exactly those of the headers; C enums are ``int``-sized
(``ctypes.c_int``). ``python/tests/test_abi.py`` checks every struct's size, alignment and
field offsets against ``livebound_abi_sizes`` (python/abi_sizes.cpp), which prints what the
C++ compiler laid out.
"""

import ctypes

# lb_status
LB_OK = 0
LB_ERROR_INVALID_ARGUMENT = 1
LB_ERROR_UNSUPPORTED = 2
LB_ERROR_DEVICE = 3
LB_ERROR_KERNEL = 4

STATUS_NAMES = {
    LB_OK: "LB_OK",
    LB_ERROR_INVALID_ARGUMENT: "LB_ERROR_INVALID_ARGUMENT",
    LB_ERROR_UNSUPPORTED: "LB_ERROR_UNSUPPORTED",
    LB_ERROR_DEVICE: "LB_ERROR_DEVICE",
    LB_ERROR_KERNEL: "LB_ERROR_KERNEL",
}

# lb_dtype
LB_DTYPE_NONE = 0
LB_INT32 = 1
LB_INT64 = 2
LB_UINT8 = 3
LB_FLOAT16 = 16
LB_BFLOAT16 = 17
LB_FLOAT32 = 18
LB_FLOAT8_E4M3FN = 19  # torch.float8_e4m3fn: K7/K8 KV caches (k_buffer, v_buffer)

LB_MAX_DIMS = 4  # lb_tensor's shape/strides entries

# lb_device_type
LB_DEVICE_CPU = 0
LB_DEVICE_CUDA = 1

# lb_variant
LB_BOUNDED = 0
LB_FULL_WIDTH = 1

# K4 q_mode (trtllm_metadata.h; SGLang's Q_MODE_* constants)
LB_Q_MODE_NONE = 0
LB_Q_MODE_CUMSUM = 1
LB_Q_MODE_STRIDED = 2

c_enum = ctypes.c_int  # every lb_* enum


class lb_device(ctypes.Structure):
    _fields_ = [
        ("type", c_enum),  # lb_device_type
        ("index", ctypes.c_int32),
        ("stream", ctypes.c_void_p),  # CUstream; ignored on the CPU
    ]


class lb_tensor(ctypes.Structure):
    """All zeros (data NULL, ndim 0) = an absent optional tensor."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", c_enum),  # lb_dtype
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * LB_MAX_DIMS),
        ("strides", ctypes.c_int64 * LB_MAX_DIMS),  # in elements
    ]


class lb_decode_metadata_args(ctypes.Structure):  # K1
    _fields_ = [
        ("seq_lens", lb_tensor),
        ("req_pool_indices", lb_tensor),
        ("req_to_token", lb_tensor),
        ("full_to_swa", lb_tensor),
        ("cache_seqlens", lb_tensor),
        ("cu_seqlens_k", lb_tensor),
        ("page_table", lb_tensor),
        ("swa_page_table", lb_tensor),
        ("max_seq_pages", ctypes.c_int64),
        ("seq_len_delta", ctypes.c_int32),
        ("page_size", ctypes.c_int32),
        ("skip_page_table", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_dsa_decode_metadata_args(ctypes.Structure):  # K2
    _fields_ = [
        ("seq_lens", lb_tensor),
        ("req_pool_indices", lb_tensor),
        ("req_to_token", lb_tensor),
        ("cache_seqlens", lb_tensor),
        ("cu_seqlens_k", lb_tensor),
        ("page_table_1", lb_tensor),
        ("dsa_cache_seqlens", lb_tensor),
        ("dsa_cu_seqlens_k", lb_tensor),
        ("real_page_table", lb_tensor),
        ("max_len", ctypes.c_int64),
        ("dsa_index_topk", ctypes.c_int32),
        ("real_page_size", ctypes.c_int32),
        ("index_kpool", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_dsa_target_verify_metadata_args(ctypes.Structure):  # K3
    _fields_ = [
        ("seq_lens", lb_tensor),
        ("req_pool_indices", lb_tensor),
        ("req_to_token", lb_tensor),
        ("cache_seqlens", lb_tensor),
        ("cu_seqlens_k", lb_tensor),
        ("page_table_1", lb_tensor),
        ("seqlens_expanded", lb_tensor),
        ("dsa_cache_seqlens", lb_tensor),
        ("dsa_cu_seqlens_k", lb_tensor),
        ("real_page_table", lb_tensor),
        ("paged_mqa_ctx_lens_2d", lb_tensor),
        ("max_seqlen_k", ctypes.c_int64),
        ("dsa_index_topk", ctypes.c_int32),
        ("real_page_size", ctypes.c_int32),
        ("next_n", ctypes.c_int32),
        ("index_kpool", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_trtllm_mha_graph_metadata_args(ctypes.Structure):  # K4
    _fields_ = [
        ("req_pool_indices", lb_tensor),
        ("seq_lens", lb_tensor),
        ("req_to_token", lb_tensor),
        ("swa_mapping", lb_tensor),
        ("out_cache_loc", lb_tensor),
        ("qlens", lb_tensor),
        ("cache_seqlens", lb_tensor),
        ("cu_seqlens_k", lb_tensor),
        ("cu_seqlens_q", lb_tensor),
        ("page_table", lb_tensor),
        ("swa_page_table", lb_tensor),
        ("swa_out_cache_loc", lb_tensor),
        ("bs", ctypes.c_int64),
        ("max_seq_pages", ctypes.c_int64),
        ("seqlen_offset", ctypes.c_int32),
        ("page_size", ctypes.c_int32),
        ("q_stride", ctypes.c_int32),
        ("q_mode", ctypes.c_int32),
        ("skip_page_table", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_dsa_kv_gather_args(ctypes.Structure):  # K5
    _fields_ = [
        ("buf", lb_tensor),
        ("page_indices", lb_tensor),
        ("seq_lens", lb_tensor),
        ("k_out", lb_tensor),
        ("s_out", lb_tensor),
        ("seq_len_sum", ctypes.c_int64),
        ("max_seq_len", ctypes.c_int64),
        ("page_size", ctypes.c_int32),
        ("index_head_dim", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_transform_index_args(ctypes.Structure):  # K6
    _fields_ = [
        ("page_table", lb_tensor),
        ("topk_indices", lb_tensor),
        ("cu_seqlens_q", lb_tensor),
        ("result", lb_tensor),
        ("num_tokens", ctypes.c_int64),
        ("max_extend_len", ctypes.c_int64),
        ("output_num_tokens", ctypes.c_int64),
        ("page_size", ctypes.c_int32),
        ("page_table_is_expanded", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_extend_attention_args(ctypes.Structure):  # K7
    _fields_ = [
        ("q_extend", lb_tensor),
        ("k_extend", lb_tensor),
        ("v_extend", lb_tensor),
        ("o_extend", lb_tensor),
        ("k_buffer", lb_tensor),
        ("v_buffer", lb_tensor),
        ("qo_indptr", lb_tensor),
        ("kv_indptr", lb_tensor),
        ("kv_indices", lb_tensor),
        ("sinks", lb_tensor),
        ("lse_extend", lb_tensor),
        ("custom_mask", lb_tensor),
        ("mask_indptr", lb_tensor),
        ("window_kv_offsets", lb_tensor),
        ("max_len_extend", ctypes.c_int64),
        ("is_causal", ctypes.c_int32),
        ("sliding_window_size", ctypes.c_int32),
        ("sm_scale", ctypes.c_float),
        ("logit_cap", ctypes.c_float),
        ("k_scale", ctypes.c_float),
        ("v_scale", ctypes.c_float),
        ("skip_prefix_custom_mask", ctypes.c_int32),
        ("xai_temperature_len", ctypes.c_int32),
        ("skip_prefix", ctypes.c_int32),
        ("skip_extend", ctypes.c_int32),
        ("variant", c_enum),
    ]


class lb_extend_attention_unified_args(ctypes.Structure):  # K8
    _fields_ = [
        ("q", lb_tensor),
        ("o", lb_tensor),
        ("k_buffer", lb_tensor),
        ("v_buffer", lb_tensor),
        ("qo_indptr", lb_tensor),
        ("kv_indptr", lb_tensor),
        ("kv_indices", lb_tensor),
        ("prefix_lens", lb_tensor),
        ("sinks", lb_tensor),
        ("custom_mask", lb_tensor),
        ("mask_indptr", lb_tensor),
        ("max_len_extend", ctypes.c_int64),
        ("is_causal", ctypes.c_int32),
        ("sliding_window_size", ctypes.c_int32),
        ("sm_scale", ctypes.c_float),
        ("logit_cap", ctypes.c_float),
        ("k_scale", ctypes.c_float),  # C: float k_scale, v_scale;
        ("v_scale", ctypes.c_float),
        ("xai_temperature_len", ctypes.c_int32),
        ("variant", c_enum),
    ]


# Every struct of the C ABI, by its C name (the ABI layout test walks this).
STRUCTS = {
    cls.__name__: cls
    for cls in (
        lb_device,
        lb_tensor,
        lb_decode_metadata_args,
        lb_dsa_decode_metadata_args,
        lb_dsa_target_verify_metadata_args,
        lb_trtllm_mha_graph_metadata_args,
        lb_dsa_kv_gather_args,
        lb_transform_index_args,
        lb_extend_attention_args,
        lb_extend_attention_unified_args,
    )
}

# Entry points: C name -> (restype, argtypes). Every LB_API function of the headers.
FUNCTIONS = {
    "lb_normal_decode_set_metadata": (c_enum, [ctypes.POINTER(lb_decode_metadata_args), lb_device]),
    "lb_fused_dsa_decode_metadata": (c_enum, [ctypes.POINTER(lb_dsa_decode_metadata_args), lb_device]),
    "lb_fused_dsa_target_verify_metadata": (
        c_enum,
        [ctypes.POINTER(lb_dsa_target_verify_metadata_args), lb_device],
    ),
    "lb_update_trtllm_mha_graph_metadata": (
        c_enum,
        [ctypes.POINTER(lb_trtllm_mha_graph_metadata_args), lb_device],
    ),
    "lb_get_k_and_s": (c_enum, [ctypes.POINTER(lb_dsa_kv_gather_args), lb_device]),
    "lb_transform_index_page_table_prefill": (c_enum, [ctypes.POINTER(lb_transform_index_args), lb_device]),
    "lb_extend_attention_fwd": (c_enum, [ctypes.POINTER(lb_extend_attention_args), lb_device]),
    "lb_extend_attention_fwd_unified": (
        c_enum,
        [ctypes.POINTER(lb_extend_attention_unified_args), lb_device],
    ),
    "lb_last_error": (ctypes.c_char_p, []),
    "lb_last_variant": (ctypes.c_char_p, []),
    "lb_cuda_device_available": (ctypes.c_int, [ctypes.c_int32]),
    "lb_cuda_device_count": (ctypes.c_int32, []),
    "lb_version": (ctypes.c_char_p, []),
}
