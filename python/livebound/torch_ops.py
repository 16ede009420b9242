"""livebound's kernels as PyTorch custom operators (``torch.ops.livebound.*``), so that
``torch.compile`` graphs and CUDA graphs hold them as single opaque nodes.

    import torch
    import livebound.torch_ops as lbt      # needs torch >= 2.4 and livebound.ffi

    lbt.normal_decode_set_metadata(cache_seqlens, cu_seqlens_k, page_table, req_to_token,
                                   req_pool_indices, max_seq_pages, seq_lens, 0, page_size)
    # the same call as an operator: torch.ops.livebound.normal_decode_set_metadata(...)

This module imports torch; ``import livebound`` never imports it (import this module
explicitly). Each kernel K1-K8 is one operator registered with ``torch.library.custom_op``
over the compiled binding ``livebound.ffi`` (Apache TVM FFI); there is no other back end,
so importing this module raises ImportError when torch is too old, the ``apache-tvm-ffi``
wheel is missing or liblivebound_ffi.so cannot be loaded ($LIVEBOUND_FFI_LIB, else the
build tree).

Every operator writes its outputs in place and returns None: the schema marks exactly
those outputs as mutated (``Tensor(a!)``), and the fake (meta) implementation returns
None, since nothing is allocated. The functions below keep SGLang's names, argument order
and defaults (those of ``livebound.ffi`` / ``livebound.kernels``) and call the operators;
they also turn what an operator cannot take into what it can: a ``variant`` given as
LB_BOUNDED / LB_FULL_WIDTH becomes its name, K1's ``token_to_kv_pool`` object becomes the
``full_to_swa`` tensor, K2/K3's ``real_page_table`` that is ``page_table_1`` itself
(real_page_size 1) becomes None (no two outputs alias), ``score_mod`` / ``aux_tensors``
must be None (ValueError), and
arguments livebound ignores are accepted and dropped. K5 and K6 return their output
tensors, as the other layers do (the operators themselves return None).

torch.compile: call the functions (or ``torch.ops.livebound.<name>``) inside the compiled
function; ``fullgraph=True`` works, since neither the functions nor the fake
implementations break the graph. Pass the outputs and inputs as tensors the compiled
function receives; scalars are Python numbers.

    @torch.compile(fullgraph=True)
    def step(cache_seqlens, cu_seqlens_k, page_table, req_to_token, rpi, seq_lens, q, ...):
        lbt.normal_decode_set_metadata(cache_seqlens, cu_seqlens_k, page_table, req_to_token,
                                       rpi, max_seq_pages, seq_lens, 0, page_size)
        lbt.extend_attention_fwd(q, k, v, o, k_buffer, v_buffer, qo_indptr, kv_indptr,
                                 kv_indices, None, True, None, max_len_extend)

CUDA graphs: the kernels never allocate or synchronise and run on torch's current stream
(livebound.ffi reads it per call), so an eager or compiled function that calls them can be
captured with ``torch.cuda.graph`` after one warm-up call outside capture (that call
JIT-compiles each kernel variant's PTX, and compiles the torch.compile graph). Change the
inputs in place between replays; scalars (max_seq_pages, page_size, max_len_extend, ...)
are baked into the capture.

    step(...)                                  # warm-up outside capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(...)
    seq_lens.copy_(new_lens); q.copy_(new_q)
    g.replay()

Defaults: an operator's arguments have defaults only after its last output. The
dispatcher drops trailing arguments equal to their defaults before it calls a Python
kernel, and torch 2.11's in-place bookkeeping for custom operators then indexes the
outputs by position past the end of what is left (IndexError; seen on the H200; torch
2.15 checks the position first). The functions below keep SGLang's defaults.

Units and layouts are the C ABI's (runtime/include/livebound/*.h); each operator's
arguments say them briefly below. Lengths and indices count tokens unless they say pages.
"""

from typing import Optional

try:
    import torch
except ImportError as _e:
    raise ImportError("livebound.torch_ops needs torch (>= 2.4): %s" % (_e,)) from _e

if not hasattr(torch.library, "custom_op") or not hasattr(torch.library, "register_fake"):
    raise ImportError(
        "livebound.torch_ops needs torch >= 2.4 (torch.library.custom_op); this is torch %s" % torch.__version__
    )

try:
    from . import ffi as _ffi
except ImportError as _e:
    raise ImportError(
        "livebound.torch_ops needs livebound.ffi (the apache-tvm-ffi wheel of requirements.txt): %s" % (_e,)
    ) from _e

try:
    _ffi.module()
except Exception as _e:  # tvm_ffi raises its own error types for a missing or broken library
    raise ImportError(
        "livebound.torch_ops: cannot load liblivebound_ffi.so from %s (set LIVEBOUND_FFI_LIB): %s"
        % (_ffi.library_path(), _e)
    ) from _e

from ._abi import LB_BOUNDED, LB_FULL_WIDTH
from .kernels import Q_MODE_CUMSUM, Q_MODE_NONE, Q_MODE_STRIDED, _swa_mapping, _transform_index_host_args

Tensor = torch.Tensor

# The dispatch keys the operators are registered for: the CPU and CUDA builds of the kernels.
DEVICE_TYPES = ("cpu", "cuda")

__all__ = [
    "DEVICE_TYPES",
    "OPS",
    "Q_MODE_NONE",
    "Q_MODE_CUMSUM",
    "Q_MODE_STRIDED",
    "normal_decode_set_metadata",
    "fused_dsa_decode_metadata",
    "fused_dsa_target_verify_metadata",
    "update_trtllm_mha_graph_metadata",
    "get_k_and_s",
    "transform_index_page_table_prefill",
    "extend_attention_fwd",
    "extend_attention_fwd_unified",
]


def _no_outputs(*args, **kwargs):
    """The fake (meta) implementation of every operator: they write preallocated outputs in
    place and return nothing, so there is no output metadata to compute."""
    return None


def _variant_name(function, variant):
    """A variant as the operators take it: its name. LB_BOUNDED / LB_FULL_WIDTH map to
    'bounded' / 'full_width'; strings pass unchanged (livebound.ffi refuses unknown ones)."""
    if isinstance(variant, str):
        return variant
    if isinstance(variant, int) and not isinstance(variant, bool):
        if variant == LB_BOUNDED:
            return "bounded"
        if variant == LB_FULL_WIDTH:
            return "full_width"
    raise ValueError(
        "livebound.torch_ops.%s: argument 'variant': must be 'bounded' or 'full_width', got %r" % (function, variant)
    )


def _none_only(function, **hooks):
    """SGLang's score_mod / aux_tensors: livebound has no such hook (as livebound.kernels)."""
    for name, value in hooks.items():
        if value is not None:
            raise ValueError("livebound.torch_ops.%s: argument '%s': not supported (must be None)" % (function, name))


def _unaliased(page_table_1, real_page_table, real_page_size):
    """K2/K3's real_page_table as the operator takes it: None when it is page_table_1 itself
    at real_page_size 1 (SGLang's call; the C ABI treats absent and identical alike there)."""
    if real_page_table is not None and real_page_table is page_table_1 and real_page_size == 1:
        return None
    return real_page_table


# ---- K1 ---------------------------------------------------------------------------------------
@torch.library.custom_op(
    "livebound::normal_decode_set_metadata",
    mutates_args=("cache_seqlens_int32", "cu_seqlens_k", "page_table", "swa_page_table"),
    device_types=DEVICE_TYPES,
)
def _normal_decode_set_metadata_op(
    cache_seqlens_int32: Tensor,  # out [>= bs] int32: L_b = seq_lens[b] + seq_len_delta (tokens), [0, bs) written
    cu_seqlens_k: Tensor,  # out [>= bs + 1] int32: exclusive prefix sums of L_b, [0, bs] written
    page_table: Optional[Tensor],  # out [>= bs, >= max_seq_pages] int32 page ids, any row stride; live prefix
    req_to_token: Tensor,  # [pool_rows, ctx] int32: KV slot of each token position
    req_pool_indices: Tensor,  # [bs] int32 | int64: request-pool row of entry b
    max_seq_pages: int,  # page-table columns the launch covers (the full width), in pages
    seq_lens: Tensor,  # [bs] int32 | int64: kv length in tokens before seq_len_delta; bs = len(seq_lens)
    seq_len_delta: int,  # tokens added to every seq_lens[b]
    page_size: int,  # tokens per page, a power of two in [1, 2^20]
    swa_page_table: Optional[Tensor],  # out, page_table's shape rules: SWA page ids; needs full_to_swa
    skip_page_table: bool = False,  # True: only cache_seqlens_int32 and cu_seqlens_k are written
    full_to_swa: Optional[Tensor] = None,  # [full_slots] int64: full KV slot -> SWA slot (SGLang's pool mapping)
    variant: str = "bounded",  # 'bounded' (derived loop bounds) or 'full_width' (the twin)
) -> None:
    """K1 (spec §3.1): decode attention metadata; page-table columns past the live page count
    are not written ('bounded')."""
    _ffi.normal_decode_set_metadata(
        cache_seqlens_int32, cu_seqlens_k, page_table, req_to_token, req_pool_indices, max_seq_pages, seq_lens,
        seq_len_delta, page_size, swa_page_table, None, skip_page_table, full_to_swa=full_to_swa, variant=variant)


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
    """K1 through torch.ops.livebound.normal_decode_set_metadata, with SGLang's signature
    (livebound.ffi's): the SWA mapping is ``full_to_swa=`` or
    ``token_to_kv_pool.full_to_swa_index_mapping``, used when swa_page_table is given."""
    full_to_swa = _swa_mapping("torch_ops.normal_decode_set_metadata", swa_page_table, full_to_swa, token_to_kv_pool)
    torch.ops.livebound.normal_decode_set_metadata(
        cache_seqlens_int32, cu_seqlens_k, page_table, req_to_token, req_pool_indices, max_seq_pages, seq_lens,
        seq_len_delta, page_size, swa_page_table, bool(skip_page_table), full_to_swa,
        _variant_name("normal_decode_set_metadata", variant))


# ---- K2 ---------------------------------------------------------------------------------------
@torch.library.custom_op(
    "livebound::fused_dsa_decode_metadata",
    mutates_args=("cache_seqlens", "cu_seqlens_k", "page_table_1", "dsa_cache_seqlens", "dsa_cu_seqlens_k",
                  "real_page_table"),
    device_types=DEVICE_TYPES,
)
def _fused_dsa_decode_metadata_op(
    seq_lens: Tensor,  # [>= bs] int64 | int32: kv length s_b in tokens
    req_pool_indices: Tensor,  # [>= bs] seq_lens' dtype: request-pool row of request b
    req_to_token: Tensor,  # [pool_rows, >= max_len] int32: token slot of each position
    cache_seqlens: Tensor,  # out [>= bs] int32: s_b
    cu_seqlens_k: Tensor,  # out [>= bs + 1] int32: exclusive prefix sums of s_b
    page_table_1: Optional[Tensor],  # out [>= bs, >= max_len] int32 token slots (page size 1); live prefix
    dsa_cache_seqlens: Tensor,  # out [>= bs] int32: s_b clamped to the indexer top-k (kpool-rounded)
    dsa_cu_seqlens_k: Tensor,  # out [>= bs + 1] int32: exclusive prefix sums of dsa_cache_seqlens
    real_page_table: Optional[Tensor],  # out [>= bs, >= cdiv(max_len, real_page_size)] int32 page ids
    bs: Optional[int],  # requests: the first bs entries of seq_lens / req_pool_indices (None: all)
    max_len: int,  # width of page_table_1 in tokens (the static graph width), in [1, 2^30]
    dsa_index_topk: int,  # indexer top-k, >= 0
    real_page_size: int,  # tokens per page of real_page_table, a power of two in [1, 2^20]
    index_kpool: int = 1,  # 0 or 1: no rounding; P > 1: SGLang's kpool rounding
    variant: str = "bounded",  # 'bounded' or 'full_width'
) -> None:
    """K2 (spec §3.2): DeepSeek sparse attention decode metadata."""
    _ffi.fused_dsa_decode_metadata(
        seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1, dsa_cache_seqlens,
        dsa_cu_seqlens_k, real_page_table, bs, max_len, dsa_index_topk, real_page_size, index_kpool, variant=variant)


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
    """K2 through torch.ops.livebound.fused_dsa_decode_metadata (livebound.ffi's signature).
    With real_page_size == 1, SGLang passes page_table_1 again as real_page_table: the
    operator then gets None there (the kernel writes page_table_1 only either way), so that
    no two mutated arguments alias."""
    real_page_table = _unaliased(page_table_1, real_page_table, real_page_size)
    torch.ops.livebound.fused_dsa_decode_metadata(
        seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1, dsa_cache_seqlens,
        dsa_cu_seqlens_k, real_page_table, bs, max_len, dsa_index_topk, real_page_size, index_kpool,
        _variant_name("fused_dsa_decode_metadata", variant))


# ---- K3 ---------------------------------------------------------------------------------------
@torch.library.custom_op(
    "livebound::fused_dsa_target_verify_metadata",
    mutates_args=("cache_seqlens", "cu_seqlens_k", "page_table_1", "seqlens_expanded", "dsa_cache_seqlens",
                  "dsa_cu_seqlens_k", "real_page_table", "paged_mqa_ctx_lens_2d"),
    device_types=DEVICE_TYPES,
)
def _fused_dsa_target_verify_metadata_op(
    seq_lens: Tensor,  # [>= bs] int64 | int32: kv length s_r in tokens before the draft tokens
    req_pool_indices: Tensor,  # [>= bs] seq_lens' dtype: request-pool row of request r
    req_to_token: Tensor,  # [pool_rows, >= max_seqlen_k] int32: token slots
    cache_seqlens: Tensor,  # out [>= bs] int32: s_r + next_n
    cu_seqlens_k: Tensor,  # out [>= bs + 1] int32: exclusive prefix sums of cache_seqlens
    page_table_1: Optional[Tensor],  # out [>= E, >= max_seqlen_k] int32 token slots, E = bs * next_n rows
    seqlens_expanded: Tensor,  # out [>= E] int32: s_r + d + 1 for draft offset d
    dsa_cache_seqlens: Tensor,  # out [>= E] int32: seqlens_expanded clamped to the top-k (kpool-rounded)
    dsa_cu_seqlens_k: Tensor,  # out [>= E + 1] int32: exclusive prefix sums of dsa_cache_seqlens
    real_page_table: Optional[Tensor],  # out [>= E, >= cdiv(max_seqlen_k, real_page_size)] int32 page ids
    bs: Optional[int],  # requests: the first bs entries of seq_lens / req_pool_indices (None: all)
    max_seqlen_k: int,  # width of page_table_1 in tokens, in [1, 2^30]
    dsa_index_topk: int,  # indexer top-k, >= 0
    real_page_size: int,  # tokens per page of real_page_table, a power of two in [1, 2^20]
    next_n: int,  # draft tokens per request, in [1, 1024]
    paged_mqa_ctx_lens_2d: Optional[Tensor],  # out [>= bs, >= next_n] int32: s_r + next_n, any strides
    index_kpool: int = 1,  # 0 or 1: no rounding; P > 1: SGLang's kpool rounding
    variant: str = "bounded",  # 'bounded' or 'full_width'
) -> None:
    """K3 (spec §3.3): DeepSeek sparse attention target-verify metadata."""
    _ffi.fused_dsa_target_verify_metadata(
        seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1, seqlens_expanded,
        dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, bs, max_seqlen_k, dsa_index_topk, real_page_size,
        next_n, paged_mqa_ctx_lens_2d, index_kpool, variant=variant)


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
    """K3 through torch.ops.livebound.fused_dsa_target_verify_metadata (livebound.ffi's
    signature; real_page_table is page_table_1 with real_page_size == 1 as in K2)."""
    real_page_table = _unaliased(page_table_1, real_page_table, real_page_size)
    torch.ops.livebound.fused_dsa_target_verify_metadata(
        seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1, seqlens_expanded,
        dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, bs, max_seqlen_k, dsa_index_topk, real_page_size,
        next_n, paged_mqa_ctx_lens_2d, index_kpool, _variant_name("fused_dsa_target_verify_metadata", variant))


# ---- K4 ---------------------------------------------------------------------------------------
@torch.library.custom_op(
    "livebound::update_trtllm_mha_graph_metadata",
    mutates_args=("cache_seqlens", "cu_seqlens_k", "page_table", "swa_page_table", "swa_out_cache_loc",
                  "cu_seqlens_q"),
    device_types=DEVICE_TYPES,
)
def _update_trtllm_mha_graph_metadata_op(
    req_pool_indices: Tensor,  # [>= bs] int32 | int64: request-pool row of entry i
    seq_lens: Tensor,  # [>= bs] int32 | int64: kv lengths in tokens
    req_to_token: Tensor,  # [pool_rows, ctx] int32: KV slot of each token position, -1 allowed
    cache_seqlens: Tensor,  # out [>= bs] int32: seq_lens[i] + seqlen_offset
    cu_seqlens_k: Tensor,  # out [>= bs + 1] int32: entries [1, bs] written, entry 0 untouched
    page_table: Optional[Tensor],  # out [>= bs, >= max_seq_pages] int32 page ids, any row stride; live prefix
    bs: int,  # batch size: requests [0, bs)
    seqlen_offset: int,  # tokens added to every seq_lens[i]
    max_seq_pages: int,  # page-table columns the launch covers, in pages
    page_size: int,  # tokens per page, a power of two in [1, 2^20]
    swa_mapping: Optional[Tensor],  # [n] int64: full slot -> SWA slot, -1 = none
    swa_page_table: Optional[Tensor],  # out, page_table's shape rules: SWA page ids (needs swa_mapping)
    out_cache_loc: Optional[Tensor],  # [num_out] int64: full slots written this step, -1 = none
    swa_out_cache_loc: Optional[Tensor],  # out [swa_out_len] int64: every entry written (needs swa_mapping)
    cu_seqlens_q: Optional[Tensor],  # out, q_mode 1/2: [>= bs + 1] int32, entries [1, bs] written
    qlens: Optional[Tensor] = None,  # q_mode 1: [>= bs] int32 | int64 query lengths in tokens
    q_stride: int = 0,  # q_mode 2: query tokens per request
    q_mode: int = Q_MODE_NONE,  # Q_MODE_NONE | Q_MODE_CUMSUM | Q_MODE_STRIDED
    skip_page_table: bool = False,  # True: page tables neither read nor written
    variant: str = "bounded",  # 'bounded' or 'full_width' (the page tables' form)
) -> None:
    """K4 (spec §3.4): TRT-LLM MHA CUDA-graph metadata."""
    _ffi.update_trtllm_mha_graph_metadata(
        req_pool_indices=req_pool_indices, seq_lens=seq_lens, req_to_token=req_to_token, cache_seqlens=cache_seqlens,
        cu_seqlens_k=cu_seqlens_k, page_table=page_table, bs=bs, seqlen_offset=seqlen_offset,
        max_seq_pages=max_seq_pages, page_size=page_size, swa_mapping=swa_mapping, swa_page_table=swa_page_table,
        out_cache_loc=out_cache_loc, swa_out_cache_loc=swa_out_cache_loc, cu_seqlens_q=cu_seqlens_q, qlens=qlens,
        q_stride=q_stride, q_mode=q_mode, skip_page_table=skip_page_table, variant=variant)


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
    """K4 through torch.ops.livebound.update_trtllm_mha_graph_metadata, keyword-only as in
    SGLang and livebound.ffi."""
    torch.ops.livebound.update_trtllm_mha_graph_metadata(
        req_pool_indices, seq_lens, req_to_token, cache_seqlens, cu_seqlens_k, page_table, bs, seqlen_offset,
        max_seq_pages, page_size, swa_mapping, swa_page_table, out_cache_loc, swa_out_cache_loc, cu_seqlens_q, qlens,
        q_stride, q_mode, bool(skip_page_table), _variant_name("update_trtllm_mha_graph_metadata", variant))


# ---- K5 ---------------------------------------------------------------------------------------
@torch.library.custom_op("livebound::get_k_and_s", mutates_args=("k_out", "s_out"), device_types=DEVICE_TYPES)
def _get_k_and_s_op(
    buf: Tensor,  # [num_pages, page_size * (index_head_dim + 4)] uint8: per page, FP8 keys then FP32 scales
    page_indices: Tensor,  # [B, max_pages] int32 | int64, any row stride: page id of each page of request b
    seq_lens: Tensor,  # [B] int64 | int32: tokens per request
    seq_len_sum: int,  # == sum(seq_lens) in tokens: rows of k_out / s_out written
    max_seq_len: int,  # >= every seq_lens[b], in tokens
    page_size: int,  # tokens per page, in [1, 2^20] (SGLang: 64)
    index_head_dim: int,  # D, key bytes per token (this build: 128)
    k_out: Tensor,  # out [>= seq_len_sum, index_head_dim] uint8: the gathered FP8 keys, request-major
    s_out: Tensor,  # out [>= seq_len_sum, 4] uint8: the gathered FP32 scales' bytes
    variant: str = "bounded",  # 'bounded' or 'full_width'
) -> None:
    """K5 (spec §3.5): the DSA indexer's K and scale gather."""
    _ffi.get_k_and_s(buf, page_indices, seq_lens, seq_len_sum, max_seq_len, page_size, index_head_dim, k_out=k_out,
                     s_out=s_out, variant=variant)


def get_k_and_s(buf, page_indices, seq_lens, seq_len_sum, max_seq_len, page_size, index_head_dim, *, k_out, s_out,
                variant="bounded"):
    """K5 through torch.ops.livebound.get_k_and_s; the caller passes k_out and s_out and gets
    (k_out, s_out) back (as livebound.ffi)."""
    torch.ops.livebound.get_k_and_s(buf, page_indices, seq_lens, seq_len_sum, max_seq_len, page_size, index_head_dim,
                                    k_out, s_out, _variant_name("get_k_and_s", variant))
    return k_out, s_out


# ---- K6 ---------------------------------------------------------------------------------------
@torch.library.custom_op(
    "livebound::transform_index_page_table_prefill", mutates_args=("result",), device_types=DEVICE_TYPES
)
def _transform_index_page_table_prefill_op(
    page_table: Tensor,  # [bs, max_seqlen_k] int32 token slots (page size 1); [>= N, ...] when expanded
    topk_indices: Tensor,  # [T, topk] int32, any row stride: kv positions per query token, -1 = none
    cu_seqlens_q: Tensor,  # [bs + 1] int32 on the call's device: [0] + cumsum of the extend lengths (tokens)
    result: Tensor,  # out [>= output_num_tokens, >= topk] int32: KV slots; rows [N, output_num_tokens) -1
    num_tokens: int,  # N = cu_seqlens_q[bs], query tokens (host value)
    max_extend_len: int,  # >= every extend length, in tokens (host value)
    output_num_tokens: int,  # rows of result written, N <= T <= output_num_tokens
    page_size: int = 1,  # must be 1 (as SGLang's transform)
    page_table_is_expanded: bool = False,  # True: page_table row = query token, else request
    variant: str = "bounded",  # 'bounded' or 'full_width' (identical values)
) -> None:
    """K6 (spec §3.6): top-k kv positions to KV slots for prefill."""
    _ffi.transform_index_page_table_prefill(
        page_table, topk_indices, None, page_size, output_num_tokens, page_table_is_expanded, cu_seqlens_q,
        result=result, num_tokens=num_tokens, max_extend_len=max_extend_len, variant=variant)


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
    """K6 through torch.ops.livebound.transform_index_page_table_prefill (livebound.ffi's
    signature); returns ``result``. Inside a compiled function or a CUDA graph pass
    cu_seqlens_q, num_tokens and max_extend_len: building cu_seqlens_q from extend_lens_cpu
    allocates and copies host to device."""
    num_tokens, max_extend_len, cu_seqlens_q = _transform_index_host_args(
        "torch_ops.transform_index_page_table_prefill", page_table, extend_lens_cpu, num_tokens, max_extend_len,
        cu_seqlens_q)
    if output_num_tokens is None:
        output_num_tokens = topk_indices.shape[0]
    torch.ops.livebound.transform_index_page_table_prefill(
        page_table, topk_indices, cu_seqlens_q, result, num_tokens, max_extend_len, output_num_tokens, page_size,
        bool(page_table_is_expanded), _variant_name("transform_index_page_table_prefill", variant))
    return result


# ---- K7 ---------------------------------------------------------------------------------------
@torch.library.custom_op(
    "livebound::extend_attention_fwd", mutates_args=("o_extend", "lse_extend"), device_types=DEVICE_TYPES
)
def _extend_attention_fwd_op(
    q_extend: Tensor,  # [T, Hq, Lq] float16 | bfloat16: queries of all extend tokens
    k_extend: Tensor,  # [T, Hkv, Lq] q's dtype: keys of the extend tokens (Hq % Hkv == 0)
    v_extend: Tensor,  # [T, Hkv, Lv] q's dtype: values of the extend tokens
    o_extend: Tensor,  # out [T, Hq, Lv] q's dtype: rows [qo_indptr[0], qo_indptr[B]) written
    k_buffer: Tensor,  # [num_slots, Hkv, Lq] q's dtype or float8_e4m3fn: KV cache keys (prefix)
    v_buffer: Tensor,  # [num_slots, Hkv, Lv] k_buffer's dtype: KV cache values (prefix)
    qo_indptr: Tensor,  # [B + 1] int32 | int64: request b's query rows [qo_indptr[b], qo_indptr[b+1])
    kv_indptr: Tensor,  # [B + 1] int32 | int64: request b's prefix keys in kv_indices
    kv_indices: Tensor,  # [>= kv_indptr[B]] int32 | int64: cache slot of each prefix key
    custom_mask: Optional[Tensor],  # [n] uint8 | bool, flat: request b's E x (P + E + wko) mask at mask_indptr[b]
    is_causal: bool,  # causal masking inside the extend chunk
    mask_indptr: Optional[Tensor],  # [B + 1] int32 | int64, required iff custom_mask (ignored without it)
    max_len_extend: int,  # >= every request's extend length E_b, in tokens
    k_scale: float,  # dequant scale of the cache keys (prefix only); 1 = none
    v_scale: float,  # dequant scale of the cache values (prefix only); 1 = none
    sm_scale: Optional[float],  # softmax scale; None: 1 / sqrt(Lq)
    logit_cap: float,  # > 0: tanh soft cap of the logits; 0 off
    skip_prefix_custom_mask: bool,  # True: the custom mask does not apply to prefix keys
    sliding_window_size: int,  # W in tokens; <= 0 off
    sinks: Optional[Tensor],  # [Hq] float32: per-head sink logit
    window_kv_offsets: Optional[Tensor],  # [B] int32 | int64: mask column offset (custom mask and W > 0)
    xai_temperature_len: int,  # L in tokens; <= 0 off
    lse_extend: Optional[Tensor],  # out [T, Hq] float32: natural-log LSE, o_extend's rows
    skip_prefix: bool = False,  # True: prefix keys contribute nothing
    skip_extend: bool = False,  # True: extend keys contribute nothing
    variant: str = "bounded",  # 'bounded' or 'full_width' (bit-identical results)
) -> None:
    """K7 (spec §3.7): extend (prefill) attention over cached prefix keys and the new keys."""
    _ffi.extend_attention_fwd(
        q_extend, k_extend, v_extend, o_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, custom_mask,
        is_causal, mask_indptr, max_len_extend, k_scale, v_scale, sm_scale, logit_cap, skip_prefix_custom_mask,
        sliding_window_size, sinks, window_kv_offsets, xai_temperature_len, lse_extend, skip_prefix, skip_extend,
        variant=variant)


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
    """K7 through torch.ops.livebound.extend_attention_fwd, with SGLang's signature
    (livebound.ffi's). page_size, extend_seq_lens_cpu and identity_kv_indices are accepted
    and ignored (as there); score_mod and aux_tensors must be None."""
    _none_only("extend_attention_fwd", score_mod=score_mod, aux_tensors=aux_tensors)
    torch.ops.livebound.extend_attention_fwd(
        q_extend, k_extend, v_extend, o_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, custom_mask,
        bool(is_causal), mask_indptr, max_len_extend, 1.0 if k_scale is None else float(k_scale),
        1.0 if v_scale is None else float(v_scale), None if sm_scale is None else float(sm_scale), float(logit_cap),
        bool(skip_prefix_custom_mask), -1 if sliding_window_size is None else sliding_window_size, sinks,
        window_kv_offsets, xai_temperature_len, lse_extend, bool(skip_prefix), bool(skip_extend),
        _variant_name("extend_attention_fwd", variant))


# ---- K8 ---------------------------------------------------------------------------------------
@torch.library.custom_op("livebound::extend_attention_fwd_unified", mutates_args=("o",), device_types=DEVICE_TYPES)
def _extend_attention_fwd_unified_op(
    q: Tensor,  # [T, Hq, Lq] float16 | bfloat16: queries of all extend tokens
    o: Tensor,  # out [T, Hq, Lv] q's dtype: rows [qo_indptr[0], qo_indptr[B]) written
    k_buffer: Tensor,  # [num_slots >= 1, Hkv, Lq] q's dtype or float8_e4m3fn: KV cache keys (Hq % Hkv == 0)
    v_buffer: Tensor,  # [num_slots, Hkv, Lv] k_buffer's dtype: KV cache values
    k_scale: float,  # scale of every key (None in the wrapper: 1)
    v_scale: float,  # scale of the output (None in the wrapper: 1)
    qo_indptr: Tensor,  # [B + 1] int32 | int64: request b's query rows
    kv_indptr: Tensor,  # [B + 1] int32 | int64: request b's unified key list (P prefix then E extend slots)
    kv_indices: Tensor,  # [>= kv_indptr[B]] int32 | int64: cache slots
    prefix_lens: Tensor,  # [B] int32 | int64: P_b in tokens
    max_len_extend: int,  # >= every E_b, in tokens
    custom_mask: Optional[Tensor] = None,  # [n] uint8 | bool, flat: request b's E x (P + E) mask at mask_indptr[b]
    mask_indptr: Optional[Tensor] = None,  # [B + 1] int32 | int64, required iff custom_mask (ignored without it)
    sm_scale: Optional[float] = None,  # softmax scale; None: 1 / sqrt(Lq)
    logit_cap: float = 0.0,  # > 0: tanh soft cap; 0 off
    is_causal: bool = True,  # key n visible to query m iff n <= P + m (without a custom mask)
    sliding_window_size: int = -1,  # W in tokens; <= 0 off
    sinks: Optional[Tensor] = None,  # [Hq] float32: per-head sink logit
    xai_temperature_len: int = -1,  # L in tokens; <= 0 off
    variant: str = "bounded",  # 'bounded' or 'full_width' (bit-identical results)
) -> None:
    """K8 (spec §3.8): extend attention over one unified key list per request (no LSE)."""
    _ffi.extend_attention_fwd_unified(
        q, o, k_buffer, v_buffer, k_scale, v_scale, qo_indptr, kv_indptr, kv_indices, prefix_lens, max_len_extend,
        custom_mask, mask_indptr, sm_scale, logit_cap, is_causal, sliding_window_size, sinks, None,
        xai_temperature_len, variant=variant)


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
    """K8 through torch.ops.livebound.extend_attention_fwd_unified, with SGLang's signature
    (livebound.ffi's). window_start_pos and page_size are accepted and ignored (as there);
    score_mod and aux_tensors must be None."""
    _none_only("extend_attention_fwd_unified", score_mod=score_mod, aux_tensors=aux_tensors)
    torch.ops.livebound.extend_attention_fwd_unified(
        q, o, k_buffer, v_buffer, 1.0 if k_scale is None else float(k_scale),
        1.0 if v_scale is None else float(v_scale), qo_indptr, kv_indptr, kv_indices, prefix_lens, max_len_extend,
        custom_mask, mask_indptr,
        None if sm_scale is None else float(sm_scale), float(logit_cap), bool(is_causal),
        -1 if sliding_window_size is None else sliding_window_size, sinks, xai_temperature_len,
        _variant_name("extend_attention_fwd_unified", variant))


# Every operator, by SGLang name (torch.ops.livebound.<name> is the same OpOverloadPacket).
OPS = {
    "normal_decode_set_metadata": _normal_decode_set_metadata_op,
    "fused_dsa_decode_metadata": _fused_dsa_decode_metadata_op,
    "fused_dsa_target_verify_metadata": _fused_dsa_target_verify_metadata_op,
    "update_trtllm_mha_graph_metadata": _update_trtllm_mha_graph_metadata_op,
    "get_k_and_s": _get_k_and_s_op,
    "transform_index_page_table_prefill": _transform_index_page_table_prefill_op,
    "extend_attention_fwd": _extend_attention_fwd_op,
    "extend_attention_fwd_unified": _extend_attention_fwd_unified_op,
}
for _op in OPS.values():
    _op.register_fake(_no_outputs)
del _op
