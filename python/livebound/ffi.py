"""livebound's compiled binding: SGLang-named functions over liblivebound_ffi.so (Apache
TVM FFI), for engines where the ctypes layer (livebound.kernels) costs too much host time.

    import livebound.ffi as lb
    lb.normal_decode_set_metadata(cache_seqlens, cu_seqlens_k, page_table, req_to_token,
                                  req_pool_indices, max_seq_pages, seq_lens, 0, page_size)

Tensors are anything that speaks DLPack (torch.Tensor on the CPU or CUDA, numpy arrays);
they are passed without a copy. A CUDA call runs on torch's current stream of the tensors'
device (TVM FFI reads it from torch for the call). The library is loaded on first use from
$LIVEBOUND_FFI_LIB, else from the build tree (<repo>/build/python/ffi/liblivebound_ffi.so);
it finds liblivebound.so next to itself or where it was built. A refused call raises
ValueError (a bad argument, named) or RuntimeError (device, unsupported form, kernel).
Needs the ``apache-tvm-ffi`` wheel (requirements.txt); torch is never imported here.

Differences from livebound.kernels' signatures: none for the arguments kept;
``token_to_kv_pool`` (K1) and the ignored SGLang extras of K7 (page_size, score_mod,
aux_tensors, extend_seq_lens_cpu, identity_kv_indices) are accepted as there, ``stream`` is
not an argument (torch's current stream is used).
"""

import os

import tvm_ffi

_BOUNDED, _FULL_WIDTH = 0, 1
_module = None


def library_path():
    """Where liblivebound_ffi.so is loaded from."""
    env = os.environ.get("LIVEBOUND_FFI_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "build", "python", "ffi", "liblivebound_ffi.so")


def module():
    """The loaded tvm_ffi module (loaded once)."""
    global _module
    if _module is None:
        _module = tvm_ffi.load_module(library_path())
    return _module


def _variant(variant):
    """'bounded' / 'full_width' (or LB_BOUNDED / LB_FULL_WIDTH) as the C ABI's lb_variant."""
    if variant == "bounded":
        return _BOUNDED
    if variant == "full_width":
        return _FULL_WIDTH
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
    if swa_page_table is not None and full_to_swa is None and token_to_kv_pool is not None:
        full_to_swa = token_to_kv_pool.full_to_swa_index_mapping
    (_module or module()).normal_decode_set_metadata(
        seq_lens,
        req_pool_indices,
        req_to_token,
        full_to_swa if swa_page_table is not None else None,
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
    if score_mod is not None or aux_tensors is not None:
        raise NotImplementedError("livebound.ffi.extend_attention_fwd: score_mod / aux_tensors must be None")
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
        sliding_window_size,
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
