"""One Python function per kernel (K1-K8). Keyword arguments follow SGLang's Python entry
points (spec §3) as far as the C ABI allows; the differences are listed per function.

Common to all of them:
  - Tensors are torch.Tensor (CPU or CUDA) or numpy.ndarray (CPU), int32 / int64 / uint8,
    and for the attention kernels K7/K8 float16 / bfloat16 / float32 (numpy has no
    bfloat16: wrap uint16 bit patterns with livebound.as_bfloat16).
    Every tensor of one call is on one device; CUDA calls run on ``stream`` (default
    torch.cuda.current_stream(device)), so they can be captured in a CUDA graph (after one
    warm-up call per kernel variant and process, which JIT-compiles the kernel).
  - Outputs are preallocated by the caller and written in place; livebound never allocates.
  - Nothing is checked here beyond converting types: the C ABI validates every argument
    before anything runs, and a bad one raises LbError whose message names it.
  - ``variant="bounded"`` (the product) or ``"full_width"`` (the twin without the derived
    bound, for tests and benchmarks).
"""

import sys

from . import _abi
from ._lib import call
from ._tensor import Call, is_torch_tensor

Q_MODE_NONE = _abi.LB_Q_MODE_NONE
Q_MODE_CUMSUM = _abi.LB_Q_MODE_CUMSUM
Q_MODE_STRIDED = _abi.LB_Q_MODE_STRIDED


def _first_rows(c, name, t, bs):
    """Describes only the first ``bs`` entries of 1-D tensor ``t`` (SGLang's separate ``bs``
    argument; the C ABI takes bs from the tensor's length)."""
    if bs is None:
        return
    bs = c.integer("bs", bs, "int64")
    if t.ndim >= 1 and not 0 <= bs <= t.shape[0]:
        raise ValueError(
            "livebound.%s: argument 'bs': %d is outside [0, %d], the length of '%s'" % (c.function, bs, t.shape[0], name)
        )
    if t.ndim >= 1:
        t.shape[0] = bs


def _swa_mapping(function, swa_page_table, full_to_swa, token_to_kv_pool):
    """K1's full_to_swa as a call passes it: None without swa_page_table; else full_to_swa=,
    or SGLang's token_to_kv_pool.full_to_swa_index_mapping (shared by livebound.ffi)."""
    if swa_page_table is None:
        return None
    if full_to_swa is None and token_to_kv_pool is not None:
        try:
            full_to_swa = token_to_kv_pool.full_to_swa_index_mapping
        except AttributeError:
            raise TypeError(
                "livebound.%s: argument 'token_to_kv_pool': has no attribute 'full_to_swa_index_mapping'" % function
            ) from None
    return full_to_swa


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
    stream=None,
):
    """K1, SGLang's normal_decode_set_metadata (spec §3.1); lb_normal_decode_set_metadata.

    Writes cache_seqlens_int32[0:bs], cu_seqlens_k[0:bs+1] and the live prefix
    page_table[b, 0:min(cdiv(L_b, page_size), max_seq_pages)] (and swa_page_table), nothing
    else. bs = len(seq_lens).

    SWA: ``token_to_kv_pool.full_to_swa_index_mapping`` (as in SGLang) or ``full_to_swa=``
    directly (int64 [full_slots]); the mapping is used when ``swa_page_table`` is given."""
    c = Call("normal_decode_set_metadata")
    a = _abi.lb_decode_metadata_args()
    full_to_swa = _swa_mapping("normal_decode_set_metadata", swa_page_table, full_to_swa, token_to_kv_pool)
    a.seq_lens = c.tensor("seq_lens", seq_lens)
    a.req_pool_indices = c.tensor("req_pool_indices", req_pool_indices)
    a.req_to_token = c.tensor("req_to_token", req_to_token)
    a.full_to_swa = c.tensor("full_to_swa", full_to_swa, optional=True)
    a.cache_seqlens = c.tensor("cache_seqlens_int32", cache_seqlens_int32)
    a.cu_seqlens_k = c.tensor("cu_seqlens_k", cu_seqlens_k)
    a.page_table = c.tensor("page_table", page_table, optional=True)
    a.swa_page_table = c.tensor("swa_page_table", swa_page_table, optional=True)
    a.max_seq_pages = c.integer("max_seq_pages", max_seq_pages, "int64")
    a.seq_len_delta = c.integer("seq_len_delta", seq_len_delta)
    a.page_size = c.integer("page_size", page_size)
    a.skip_page_table = c.flag("skip_page_table", skip_page_table)
    a.variant = c.variant(variant)
    call("lb_normal_decode_set_metadata", a, c.device(stream))


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
    stream=None,
):
    """K2, SGLang's fused_dsa_decode_metadata (spec §3.2); lb_fused_dsa_decode_metadata.

    ``bs`` selects the first bs entries of seq_lens and req_pool_indices (the C ABI takes
    bs from their length; None = all). page_table_1 may be None when real_page_size > 1;
    with real_page_size == 1 pass the same tensor for both tables (or None as
    real_page_table)."""
    c = Call("fused_dsa_decode_metadata")
    a = _abi.lb_dsa_decode_metadata_args()
    a.seq_lens = c.tensor("seq_lens", seq_lens)
    a.req_pool_indices = c.tensor("req_pool_indices", req_pool_indices)
    _first_rows(c, "seq_lens", a.seq_lens, bs)
    _first_rows(c, "req_pool_indices", a.req_pool_indices, bs)
    a.req_to_token = c.tensor("req_to_token", req_to_token)
    a.cache_seqlens = c.tensor("cache_seqlens", cache_seqlens)
    a.cu_seqlens_k = c.tensor("cu_seqlens_k", cu_seqlens_k)
    a.page_table_1 = c.tensor("page_table_1", page_table_1, optional=True)
    a.dsa_cache_seqlens = c.tensor("dsa_cache_seqlens", dsa_cache_seqlens)
    a.dsa_cu_seqlens_k = c.tensor("dsa_cu_seqlens_k", dsa_cu_seqlens_k)
    a.real_page_table = c.tensor("real_page_table", real_page_table, optional=True)
    a.max_len = c.integer("max_len", max_len, "int64")
    a.dsa_index_topk = c.integer("dsa_index_topk", dsa_index_topk)
    a.real_page_size = c.integer("real_page_size", real_page_size)
    a.index_kpool = c.integer("index_kpool", index_kpool)
    a.variant = c.variant(variant)
    call("lb_fused_dsa_decode_metadata", a, c.device(stream))


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
    stream=None,
):
    """K3, SGLang's fused_dsa_target_verify_metadata (spec §3.3);
    lb_fused_dsa_target_verify_metadata. ``bs`` as in fused_dsa_decode_metadata."""
    c = Call("fused_dsa_target_verify_metadata")
    a = _abi.lb_dsa_target_verify_metadata_args()
    a.seq_lens = c.tensor("seq_lens", seq_lens)
    a.req_pool_indices = c.tensor("req_pool_indices", req_pool_indices)
    _first_rows(c, "seq_lens", a.seq_lens, bs)
    _first_rows(c, "req_pool_indices", a.req_pool_indices, bs)
    a.req_to_token = c.tensor("req_to_token", req_to_token)
    a.cache_seqlens = c.tensor("cache_seqlens", cache_seqlens)
    a.cu_seqlens_k = c.tensor("cu_seqlens_k", cu_seqlens_k)
    a.page_table_1 = c.tensor("page_table_1", page_table_1, optional=True)
    a.seqlens_expanded = c.tensor("seqlens_expanded", seqlens_expanded)
    a.dsa_cache_seqlens = c.tensor("dsa_cache_seqlens", dsa_cache_seqlens)
    a.dsa_cu_seqlens_k = c.tensor("dsa_cu_seqlens_k", dsa_cu_seqlens_k)
    a.real_page_table = c.tensor("real_page_table", real_page_table, optional=True)
    a.paged_mqa_ctx_lens_2d = c.tensor("paged_mqa_ctx_lens_2d", paged_mqa_ctx_lens_2d, optional=True)
    a.max_seqlen_k = c.integer("max_seqlen_k", max_seqlen_k, "int64")
    a.dsa_index_topk = c.integer("dsa_index_topk", dsa_index_topk)
    a.real_page_size = c.integer("real_page_size", real_page_size)
    a.next_n = c.integer("next_n", next_n)
    a.index_kpool = c.integer("index_kpool", index_kpool)
    a.variant = c.variant(variant)
    call("lb_fused_dsa_target_verify_metadata", a, c.device(stream))


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
    stream=None,
):
    """K4, SGLang's update_trtllm_mha_graph_metadata (spec §3.4), keyword-only as there;
    lb_update_trtllm_mha_graph_metadata. cu_seqlens_k[0] is not written (as in SGLang);
    page_table may be None with skip_page_table."""
    c = Call("update_trtllm_mha_graph_metadata")
    a = _abi.lb_trtllm_mha_graph_metadata_args()
    a.req_pool_indices = c.tensor("req_pool_indices", req_pool_indices)
    a.seq_lens = c.tensor("seq_lens", seq_lens)
    a.req_to_token = c.tensor("req_to_token", req_to_token)
    a.swa_mapping = c.tensor("swa_mapping", swa_mapping, optional=True)
    a.out_cache_loc = c.tensor("out_cache_loc", out_cache_loc, optional=True)
    a.qlens = c.tensor("qlens", qlens, optional=True)
    a.cache_seqlens = c.tensor("cache_seqlens", cache_seqlens)
    a.cu_seqlens_k = c.tensor("cu_seqlens_k", cu_seqlens_k)
    a.cu_seqlens_q = c.tensor("cu_seqlens_q", cu_seqlens_q, optional=True)
    a.page_table = c.tensor("page_table", page_table, optional=True)
    a.swa_page_table = c.tensor("swa_page_table", swa_page_table, optional=True)
    a.swa_out_cache_loc = c.tensor("swa_out_cache_loc", swa_out_cache_loc, optional=True)
    a.bs = c.integer("bs", bs, "int64")
    a.max_seq_pages = c.integer("max_seq_pages", max_seq_pages, "int64")
    a.seqlen_offset = c.integer("seqlen_offset", seqlen_offset)
    a.page_size = c.integer("page_size", page_size)
    a.q_stride = c.integer("q_stride", q_stride)
    a.q_mode = c.integer("q_mode", q_mode)
    a.skip_page_table = c.flag("skip_page_table", skip_page_table)
    a.variant = c.variant(variant)
    call("lb_update_trtllm_mha_graph_metadata", a, c.device(stream))


def get_k_and_s(
    buf,
    page_indices,
    seq_lens,
    seq_len_sum,
    max_seq_len,
    page_size,
    index_head_dim,
    *,
    k_out,
    s_out,
    variant="bounded",
    stream=None,
):
    """K5, SGLang's _get_k_and_s_triton (spec §3.5); lb_get_k_and_s.

    Unlike SGLang, which allocates and returns k_out / s_out, the caller passes them
    (uint8 [>= seq_len_sum, index_head_dim] and [>= seq_len_sum, 4]); rows
    [0, seq_len_sum) are written and (k_out, s_out) returned."""
    c = Call("get_k_and_s")
    a = _abi.lb_dsa_kv_gather_args()
    a.buf = c.tensor("buf", buf)
    a.page_indices = c.tensor("page_indices", page_indices)
    a.seq_lens = c.tensor("seq_lens", seq_lens)
    a.k_out = c.tensor("k_out", k_out)
    a.s_out = c.tensor("s_out", s_out)
    a.seq_len_sum = c.integer("seq_len_sum", seq_len_sum, "int64")
    a.max_seq_len = c.integer("max_seq_len", max_seq_len, "int64")
    a.page_size = c.integer("page_size", page_size)
    a.index_head_dim = c.integer("index_head_dim", index_head_dim)
    a.variant = c.variant(variant)
    call("lb_get_k_and_s", a, c.device(stream))
    return k_out, s_out


def _build_cu_seqlens_q(page_table, extend_lens):
    """[0] + cumsum(extend_lens) as int32, on page_table's device (allocates: not for
    CUDA-graph capture; pass cu_seqlens_q there)."""
    cu = [0]
    for n in extend_lens:
        cu.append(cu[-1] + int(n))
    if is_torch_tensor(page_table):
        torch = sys.modules["torch"]
        return torch.tensor(cu, dtype=torch.int32, device=page_table.device)
    import numpy

    return numpy.asarray(cu, dtype=numpy.int32)


def _transform_index_host_args(function, page_table, extend_lens_cpu, num_tokens, max_extend_len, cu_seqlens_q):
    """K6's (num_tokens, max_extend_len, cu_seqlens_q): each given, or made from the host list
    extend_lens_cpu (sum, max, [0] + cumsum: the latter allocates). Shared by livebound.ffi."""
    if extend_lens_cpu is not None:
        lens = [int(n) for n in extend_lens_cpu]
        if num_tokens is None:
            num_tokens = sum(lens)
        if max_extend_len is None:
            max_extend_len = max(lens, default=0)
    if num_tokens is None or max_extend_len is None:
        raise TypeError(
            "livebound.%s: argument 'extend_lens_cpu': required unless num_tokens= and max_extend_len= are given"
            % function
        )
    if cu_seqlens_q is None:
        if extend_lens_cpu is None:
            raise TypeError("livebound.%s: argument 'cu_seqlens_q': required when extend_lens_cpu is not given" % function)
        cu_seqlens_q = _build_cu_seqlens_q(page_table, lens)
    return num_tokens, max_extend_len, cu_seqlens_q


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
    stream=None,
):
    """K6, SGLang's transform_index_page_table_prefill (spec §3.6);
    lb_transform_index_page_table_prefill. Returns ``result``.

    Differences from SGLang: the caller passes ``result`` (int32 [>= output_num_tokens,
    >= topk]); rows >= num_tokens are filled with -1 by the kernel. From the host list
    ``extend_lens_cpu`` come num_tokens = sum and max_extend_len = max (either may be given
    as a keyword instead, e.g. a CUDA graph bucket's max_extend_len); output_num_tokens
    defaults to topk_indices.shape[0]. cu_seqlens_q (int32 [bs + 1] on the call's device)
    is built from extend_lens_cpu when None -- an allocation (and a host-to-device copy on
    CUDA), so pass it explicitly inside CUDA-graph capture."""
    c = Call("transform_index_page_table_prefill")
    num_tokens, max_extend_len, cu_seqlens_q = _transform_index_host_args(
        "transform_index_page_table_prefill", page_table, extend_lens_cpu, num_tokens, max_extend_len, cu_seqlens_q)
    a = _abi.lb_transform_index_args()
    a.page_table = c.tensor("page_table", page_table)
    a.topk_indices = c.tensor("topk_indices", topk_indices)
    a.cu_seqlens_q = c.tensor("cu_seqlens_q", cu_seqlens_q)
    a.result = c.tensor("result", result)
    if output_num_tokens is None:
        output_num_tokens = a.topk_indices.shape[0] if a.topk_indices.ndim >= 1 else 0
    a.num_tokens = c.integer("num_tokens", num_tokens, "int64")
    a.max_extend_len = c.integer("max_extend_len", max_extend_len, "int64")
    a.output_num_tokens = c.integer("output_num_tokens", output_num_tokens, "int64")
    a.page_size = c.integer("page_size", page_size)
    a.page_table_is_expanded = c.flag("page_table_is_expanded", page_table_is_expanded)
    a.variant = c.variant(variant)
    call("lb_transform_index_page_table_prefill", a, c.device(stream))
    return result


def _no_hook(function, name, value):
    if value is not None:
        raise ValueError("livebound.%s: argument '%s': not supported (must be None)" % (function, name))


def _attention_scalars(c, a, max_len_extend, is_causal, sliding_window_size, sm_scale, logit_cap, k_scale, v_scale):
    """The scalar fields K7 and K8 share, SGLang's defaults mapped: sliding_window_size None
    or <= 0 is off (-1), sm_scale None is 0 (1/sqrt(Lq)), k_scale / v_scale None are 1."""
    a.max_len_extend = c.integer("max_len_extend", max_len_extend, "int64")
    a.is_causal = c.flag("is_causal", is_causal)
    a.sliding_window_size = -1 if sliding_window_size is None else c.integer("sliding_window_size", sliding_window_size)
    a.sm_scale = 0.0 if sm_scale is None else c.real("sm_scale", sm_scale)
    a.logit_cap = c.real("logit_cap", logit_cap)
    a.k_scale = 1.0 if k_scale is None else c.real("k_scale", k_scale)
    a.v_scale = 1.0 if v_scale is None else c.real("v_scale", v_scale)


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
    stream=None,
):
    """K7, SGLang's extend_attention_fwd (spec §3.7); lb_extend_attention_fwd. Returns None;
    writes o_extend (and lse_extend when given) rows [qo_indptr[0], qo_indptr[B]).

    Tensors: q/k/v_extend, o_extend, k/v_buffer float16 or bfloat16 (3-D, one dtype);
    qo_indptr, kv_indptr int32; kv_indices int32 / int64; sinks and lse_extend float32;
    custom_mask uint8 or bool (flat); mask_indptr and window_kv_offsets int32 or int64.
    k_scale, v_scale (None: 1), sm_scale (None or 0: 1/sqrt(Lq)) and logit_cap are host
    numbers (a CUDA 0-d tensor works but float() of it synchronises: pass Python floats).

    Differences from SGLang: mask_indptr (and window_kv_offsets) are ignored when
    custom_mask is None, as the Triton kernel ignores them; k_buffer / v_buffer must be
    3-D [num_slots, Hkv, L], so page_size has no effect (a 3-D buffer is addressed by slot
    whatever the page size); extend_seq_lens_cpu (HIP compact grid) and
    identity_kv_indices (same math) are accepted and ignored; score_mod / aux_tensors must
    be None; FP8 caches are not supported."""
    fn = "extend_attention_fwd"
    _no_hook(fn, "score_mod", score_mod)
    _no_hook(fn, "aux_tensors", aux_tensors)
    c = Call(fn)
    a = _abi.lb_extend_attention_args()
    if custom_mask is None:
        mask_indptr = window_kv_offsets = None
    a.q_extend = c.tensor("q_extend", q_extend)
    a.k_extend = c.tensor("k_extend", k_extend)
    a.v_extend = c.tensor("v_extend", v_extend)
    a.o_extend = c.tensor("o_extend", o_extend)
    a.k_buffer = c.tensor("k_buffer", k_buffer)
    a.v_buffer = c.tensor("v_buffer", v_buffer)
    a.qo_indptr = c.tensor("qo_indptr", qo_indptr)
    a.kv_indptr = c.tensor("kv_indptr", kv_indptr)
    a.kv_indices = c.tensor("kv_indices", kv_indices)
    a.sinks = c.tensor("sinks", sinks, optional=True)
    a.lse_extend = c.tensor("lse_extend", lse_extend, optional=True)
    a.custom_mask = c.tensor("custom_mask", custom_mask, optional=True, bool_as_uint8=True)
    a.mask_indptr = c.tensor("mask_indptr", mask_indptr, optional=True)
    a.window_kv_offsets = c.tensor("window_kv_offsets", window_kv_offsets, optional=True)
    _attention_scalars(c, a, max_len_extend, is_causal, sliding_window_size, sm_scale, logit_cap, k_scale, v_scale)
    a.skip_prefix_custom_mask = c.flag("skip_prefix_custom_mask", skip_prefix_custom_mask)
    a.xai_temperature_len = c.integer("xai_temperature_len", xai_temperature_len)
    a.skip_prefix = c.flag("skip_prefix", skip_prefix)
    a.skip_extend = c.flag("skip_extend", skip_extend)
    a.variant = c.variant(variant)
    call("lb_extend_attention_fwd", a, c.device(stream))


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
    stream=None,
):
    """K8, SGLang's extend_attention_fwd_unified (spec §3.8); lb_extend_attention_fwd_unified.
    Returns None; writes o rows [qo_indptr[0], qo_indptr[B]).

    Tensors: q, o, k_buffer, v_buffer float16 or bfloat16 (3-D, one dtype); qo_indptr,
    kv_indptr, prefix_lens int32; kv_indices int32 / int64 (request b's P_b prefix slots,
    then its E_b extend slots, all already in the cache); sinks float32; custom_mask uint8
    or bool (flat, E x N per request); mask_indptr int32 or int64.

    Differences from SGLang: mask_indptr is ignored when custom_mask is None;
    window_start_pos is accepted and ignored (it cancels out of the window test);
    page_size has no effect (3-D buffers); score_mod / aux_tensors must be None."""
    fn = "extend_attention_fwd_unified"
    _no_hook(fn, "score_mod", score_mod)
    _no_hook(fn, "aux_tensors", aux_tensors)
    c = Call(fn)
    a = _abi.lb_extend_attention_unified_args()
    if custom_mask is None:
        mask_indptr = None
    a.q = c.tensor("q", q)
    a.o = c.tensor("o", o)
    a.k_buffer = c.tensor("k_buffer", k_buffer)
    a.v_buffer = c.tensor("v_buffer", v_buffer)
    a.qo_indptr = c.tensor("qo_indptr", qo_indptr)
    a.kv_indptr = c.tensor("kv_indptr", kv_indptr)
    a.kv_indices = c.tensor("kv_indices", kv_indices)
    a.prefix_lens = c.tensor("prefix_lens", prefix_lens)
    a.sinks = c.tensor("sinks", sinks, optional=True)
    a.custom_mask = c.tensor("custom_mask", custom_mask, optional=True, bool_as_uint8=True)
    a.mask_indptr = c.tensor("mask_indptr", mask_indptr, optional=True)
    _attention_scalars(c, a, max_len_extend, is_causal, sliding_window_size, sm_scale, logit_cap, k_scale, v_scale)
    a.xai_temperature_len = c.integer("xai_temperature_len", xai_temperature_len)
    a.variant = c.variant(variant)
    call("lb_extend_attention_fwd_unified", a, c.device(stream))
