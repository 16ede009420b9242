"""livebound's compiled binding: SGLang-named functions over liblivebound_ffi.so (Apache
TVM FFI), for engines where the ctypes layer (livebound.kernels) costs too much host time.

    import livebound.ffi as lb
    lb.normal_decode_set_metadata(cache_seqlens, cu_seqlens_k, page_table, req_to_token,
                                  req_pool_indices, max_seq_pages, seq_lens, 0, page_size)

Tensors are anything that speaks DLPack (torch.Tensor on the CPU or CUDA, numpy arrays);
they are passed without a copy. A CUDA call runs on torch's current stream of the tensors'
device (TVM FFI reads it from torch for the call). The library is loaded on first use from
$LIVEBOUND_FFI_LIB, else from inside the package (an installed wheel), else from the build
tree (<repo>/build/python/ffi/liblivebound_ffi.so); it finds liblivebound.so next to itself
or where it was built. A refused call raises
ValueError (a bad argument, named) or RuntimeError (device, unsupported form, kernel).
Needs the ``apache-tvm-ffi`` wheel (requirements.txt); torch is never imported here.

Every kernel K1-K8, with livebound.kernels' signatures (SGLang's names and keywords, the
same differences from SGLang), except that ``stream`` is not an argument (torch's current
stream is used).
"""

import os

import tvm_ffi

from ._abi import LB_BOUNDED as _BOUNDED
from ._tensor import VARIANTS
from .kernels import Q_MODE_NONE, _no_hook, _swa_mapping, _transform_index_host_args

_module = None


def library_path():
    """Where liblivebound_ffi.so is loaded from: $LIVEBOUND_FFI_LIB, else inside the package
    (an installed wheel), else the build tree."""
    env = os.environ.get("LIVEBOUND_FFI_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(here, "liblivebound_ffi.so")
    if os.path.exists(packaged):
        return packaged
    return os.path.join(here, "..", "..", "build", "python", "ffi", "liblivebound_ffi.so")


def module():
    """The loaded tvm_ffi module (loaded once)."""
    global _module
    if _module is None:
        _module = tvm_ffi.load_module(library_path())
    return _module


def _variant(variant):
    """'bounded' / 'full_width' (or LB_BOUNDED / LB_FULL_WIDTH) as the C ABI's lb_variant."""
    if isinstance(variant, str) and variant in VARIANTS:
        return VARIANTS[variant]
    if isinstance(variant, int) and not isinstance(variant, bool):
        return variant  # (the C ABI refuses any other value by name)
    raise ValueError("argument 'variant': must be 'bounded' or 'full_width', got %r" % (variant,))


def normal_decode_set_metadata(
    cache_seqlens_int32,
    cu_seqlens_k,
    page_table,
    req_to_token,
    req_pool_indices,
    max_seq_pages,
    seq_lens,
    seq_len_delta,
    page_size,
    swa_page_table=None,
    token_to_kv_pool=None,
    skip_page_table=False,
    *,
    full_to_swa=None,
    variant="bounded",
):
    """K1 (spec §3.1), as livebound.kernels.normal_decode_set_metadata."""
    (_module or module()).normal_decode_set_metadata(
        seq_lens,
        req_pool_indices,
        req_to_token,
        _swa_mapping("ffi.normal_decode_set_metadata", swa_page_table, full_to_swa, token_to_kv_pool),
        cache_seqlens_int32,
        cu_seqlens_k,
        page_table,
        swa_page_table,
        max_seq_pages,
        seq_len_delta,
        page_size,
        bool(skip_page_table),
        _BOUNDED if variant == "bounded" else _variant(variant),
    )


def _first(t, bs):
    """The first ``bs`` entries (SGLang's separate bs argument; None: all)."""
    return t if bs is None or bs == t.shape[0] else t[:bs]


def fused_dsa_decode_metadata(
    seq_lens,
    req_pool_indices,
    req_to_token,
    cache_seqlens,
    cu_seqlens_k,
    page_table_1,
    dsa_cache_seqlens,
    dsa_cu_seqlens_k,
    real_page_table,
    bs,
    max_len,
    dsa_index_topk,
    real_page_size,
    index_kpool=1,
    *,
    variant="bounded",
):
    """K2 (spec §3.2), as livebound.kernels.fused_dsa_decode_metadata."""
    (_module or module()).fused_dsa_decode_metadata(
        _first(seq_lens, bs), _first(req_pool_indices, bs), req_to_token, cache_seqlens, cu_seqlens_k, page_table_1,
        dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, max_len, dsa_index_topk, real_page_size, index_kpool,
        _BOUNDED if variant == "bounded" else _variant(variant))


def fused_dsa_target_verify_metadata(
    seq_lens,
    req_pool_indices,
    req_to_token,
    cache_seqlens,
    cu_seqlens_k,
    page_table_1,
    seqlens_expanded,
    dsa_cache_seqlens,
    dsa_cu_seqlens_k,
    real_page_table,
    bs,
    max_seqlen_k,
    dsa_index_topk,
    real_page_size,
    next_n,
    paged_mqa_ctx_lens_2d=None,
    index_kpool=1,
    *,
    variant="bounded",
):
    """K3 (spec §3.3), as livebound.kernels.fused_dsa_target_verify_metadata."""
    (_module or module()).fused_dsa_target_verify_metadata(
        _first(seq_lens, bs), _first(req_pool_indices, bs), req_to_token, cache_seqlens, cu_seqlens_k, page_table_1,
        seqlens_expanded, dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, paged_mqa_ctx_lens_2d, max_seqlen_k,
        dsa_index_topk, real_page_size, next_n, index_kpool, _BOUNDED if variant == "bounded" else _variant(variant))


def update_trtllm_mha_graph_metadata(
    *,
    req_pool_indices,
    seq_lens,
    req_to_token,
    cache_seqlens,
    cu_seqlens_k,
    page_table,
    bs,
    seqlen_offset,
    max_seq_pages,
    page_size,
    swa_mapping=None,
    swa_page_table=None,
    out_cache_loc=None,
    swa_out_cache_loc=None,
    cu_seqlens_q=None,
    qlens=None,
    q_stride=0,
    q_mode=Q_MODE_NONE,
    skip_page_table=False,
    variant="bounded",
):
    """K4 (spec §3.4), keyword-only as livebound.kernels.update_trtllm_mha_graph_metadata."""
    (_module or module()).update_trtllm_mha_graph_metadata(
        req_pool_indices, seq_lens, req_to_token, swa_mapping, out_cache_loc, qlens, cache_seqlens, cu_seqlens_k,
        cu_seqlens_q, page_table, swa_page_table, swa_out_cache_loc, bs, max_seq_pages, seqlen_offset, page_size,
        q_stride, q_mode, bool(skip_page_table), _BOUNDED if variant == "bounded" else _variant(variant))


def get_k_and_s(buf, page_indices, seq_lens, seq_len_sum, max_seq_len, page_size, index_head_dim, *, k_out, s_out,
                variant="bounded"):
    """K5 (spec §3.5), as livebound.kernels.get_k_and_s; returns (k_out, s_out)."""
    (_module or module()).get_k_and_s(buf, page_indices, seq_lens, k_out, s_out, seq_len_sum, max_seq_len, page_size,
                                      index_head_dim, _BOUNDED if variant == "bounded" else _variant(variant))
    return k_out, s_out


def transform_index_page_table_prefill(
    page_table,
    topk_indices,
    extend_lens_cpu=None,
    page_size=1,
    output_num_tokens=None,
    page_table_is_expanded=False,
    cu_seqlens_q=None,
    *,
    result,
    num_tokens=None,
    max_extend_len=None,
    variant="bounded",
):
    """K6 (spec §3.6), as livebound.kernels.transform_index_page_table_prefill; returns
    ``result``. Pass cu_seqlens_q, num_tokens and max_extend_len for no host work (building
    cu_seqlens_q from extend_lens_cpu allocates)."""
    num_tokens, max_extend_len, cu_seqlens_q = _transform_index_host_args(
        "ffi.transform_index_page_table_prefill", page_table, extend_lens_cpu, num_tokens, max_extend_len, cu_seqlens_q)
    if output_num_tokens is None:
        output_num_tokens = topk_indices.shape[0]
    (_module or module()).transform_index_page_table_prefill(
        page_table, topk_indices, cu_seqlens_q, result, num_tokens, max_extend_len, output_num_tokens, page_size,
        bool(page_table_is_expanded), _BOUNDED if variant == "bounded" else _variant(variant))
    return result


def extend_attention_fwd(
    q_extend,
    k_extend,
    v_extend,
    o_extend,
    k_buffer,
    v_buffer,
    qo_indptr,
    kv_indptr,
    kv_indices,
    custom_mask,
    is_causal,
    mask_indptr,
    max_len_extend,
    k_scale=1.0,
    v_scale=1.0,
    sm_scale=None,
    logit_cap=0.0,
    skip_prefix_custom_mask=True,
    sliding_window_size=-1,
    sinks=None,
    window_kv_offsets=None,
    xai_temperature_len=-1,
    lse_extend=None,
    skip_prefix=False,
    skip_extend=False,
    page_size=1,
    score_mod=None,
    aux_tensors=None,
    extend_seq_lens_cpu=None,
    identity_kv_indices=False,
    *,
    variant="bounded",
):
    """K7 (spec §3.7), as livebound.kernels.extend_attention_fwd."""
    _no_hook("ffi.extend_attention_fwd", "score_mod", score_mod)
    _no_hook("ffi.extend_attention_fwd", "aux_tensors", aux_tensors)
    if custom_mask is None:
        mask_indptr = window_kv_offsets = None
    (_module or module()).extend_attention_fwd(
        q_extend,
        k_extend,
        v_extend,
        o_extend,
        k_buffer,
        v_buffer,
        qo_indptr,
        kv_indptr,
        kv_indices,
        sinks,
        lse_extend,
        custom_mask,
        mask_indptr,
        window_kv_offsets,
        max_len_extend,
        bool(is_causal),
        -1 if sliding_window_size is None else sliding_window_size,
        0.0 if sm_scale is None else sm_scale,
        logit_cap,
        1.0 if k_scale is None else k_scale,
        1.0 if v_scale is None else v_scale,
        bool(skip_prefix_custom_mask),
        xai_temperature_len,
        bool(skip_prefix),
        bool(skip_extend),
        _BOUNDED if variant == "bounded" else _variant(variant),
    )


def extend_attention_fwd_unified(
    q,
    o,
    k_buffer,
    v_buffer,
    k_scale,
    v_scale,
    qo_indptr,
    kv_indptr,
    kv_indices,
    prefix_lens,
    max_len_extend,
    custom_mask=None,
    mask_indptr=None,
    sm_scale=None,
    logit_cap=0.0,
    is_causal=True,
    sliding_window_size=-1,
    sinks=None,
    window_start_pos=None,
    xai_temperature_len=-1,
    page_size=1,
    score_mod=None,
    aux_tensors=None,
    *,
    variant="bounded",
):
    """K8 (spec §3.8), as livebound.kernels.extend_attention_fwd_unified."""
    _no_hook("ffi.extend_attention_fwd_unified", "score_mod", score_mod)
    _no_hook("ffi.extend_attention_fwd_unified", "aux_tensors", aux_tensors)
    if custom_mask is None:
        mask_indptr = None
    (_module or module()).extend_attention_fwd_unified(
        q, o, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, sinks, custom_mask, mask_indptr,
        max_len_extend, bool(is_causal), -1 if sliding_window_size is None else sliding_window_size,
        0.0 if sm_scale is None else sm_scale, logit_cap, 1.0 if k_scale is None else k_scale,
        1.0 if v_scale is None else v_scale, xai_temperature_len,
        _BOUNDED if variant == "bounded" else _variant(variant))
