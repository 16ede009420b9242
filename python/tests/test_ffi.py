"""The compiled binding (livebound.ffi, liblivebound_ffi.so on Apache TVM FFI) through the
same tests as the ctypes layer: test_k1's K1Reference, test_kernels' K2-K6 classes and
test_attention's K7 and K8 classes run again with livebound's functions replaced by
livebound.ffi's. numpy arrays travel by DLPack, which has no bfloat16 for numpy: the K7/K8
cases here are the fp16 ones (bf16 runs with torch on the GPU,
python/tests/test_ffi_torch_cuda.py). Skipped without tvm_ffi or the built library."""

import os
import unittest

from _common import livebound, needs_numpy, np

try:
    import livebound.ffi as ffi

    _FFI_ERROR = None if os.path.exists(ffi.library_path()) else "no " + ffi.library_path()
except ImportError as e:  # no apache-tvm-ffi in this Python
    ffi, _FFI_ERROR = None, str(e)

import test_attention  # noqa: E402
import test_k1  # noqa: E402
import test_kernels  # noqa: E402

needs_ffi = unittest.skipIf(_FFI_ERROR is not None, "livebound.ffi unavailable: %s" % _FFI_ERROR)


_KERNELS = ("normal_decode_set_metadata", "fused_dsa_decode_metadata", "fused_dsa_target_verify_metadata",
            "update_trtllm_mha_graph_metadata", "get_k_and_s", "transform_index_page_table_prefill",
            "extend_attention_fwd", "extend_attention_fwd_unified")


class _ThroughFfi:
    """livebound with the kernels K1-K8 taken from livebound.ffi (everything else unchanged)."""

    def __init__(self):
        for name in _KERNELS:
            setattr(self, name, getattr(ffi, name))

    def __getattr__(self, name):
        return getattr(livebound, name)


class _FfiMixin:
    modules = ()

    def setUp(self):
        self._saved = [(m, m.livebound) for m in self.modules]
        for m in self.modules:
            m.livebound = _ThroughFfi()

    def tearDown(self):
        for m, saved in self._saved:
            m.livebound = saved


@needs_numpy
@needs_ffi
class FfiK1Reference(_FfiMixin, test_k1.K1Reference):
    modules = (test_k1,)


@needs_numpy
@needs_ffi
class FfiK7ExtendAttention(_FfiMixin, test_attention.K7ExtendAttention):
    modules = (test_attention,)
    CASES = [c for c in test_attention.K7ExtendAttention.CASES if c[1] is test_attention.FP16]


@needs_numpy
@needs_ffi
class FfiK8ExtendAttentionUnified(_FfiMixin, test_attention.K8ExtendAttentionUnified):
    modules = (test_attention,)
    CASES = [c for c in test_attention.K8ExtendAttentionUnified.CASES if c[1] is test_attention.FP16]

    def test_custom_mask(self):  # (the ctypes test's is bf16)
        rng = np.random.default_rng(90)
        u = test_attention.UnifiedProblem(test_attention.FP16, seed=91)
        mask, mask_indptr = test_attention.causal_mask(u.P, u.E, rng)
        want = test_attention.reference_k8(u, True, -1, None, 0.0, 1.0, 1.0, None, -1, mask, mask_indptr)
        o = self.run_case(u, "bounded", True, -1, None, None, 0.0, 1.0, 1.0, -1, mask.astype(bool), mask_indptr)
        self.check(u, o, want)


def _kernel_classes():
    """test_kernels' K2-K6 test classes, each run again through the binding."""
    out = {}
    for name in dir(test_kernels):
        cls = getattr(test_kernels, name)
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase) and name[:2] in ("K2", "K3", "K4", "K5", "K6"):
            out["Ffi" + name] = needs_numpy(needs_ffi(type("Ffi" + name, (_FfiMixin, cls), {"modules": (test_kernels,)})))
    return out


globals().update(_kernel_classes())


@needs_numpy
@needs_ffi
class FfiErrors(unittest.TestCase):
    def test_bad_argument_raises_value_error_naming_it(self):
        p = test_k1.Problem(seed=9, bs=3, page_size=4, max_seq_pages=5)
        with self.assertRaisesRegex(ValueError, "argument 'page_table'"):
            ffi.normal_decode_set_metadata(p.cache_seqlens, p.cu_seqlens_k, p.page_table[:, :2], p.req_to_token,
                                           p.req_pool_indices, p.max_seq_pages, p.seq_lens, 0, p.page_size)
        self.assertTrue((p.cache_seqlens == test_k1.POISON).all(), "a refused call wrote cache_seqlens")

    def test_unsupported_dtype_is_named(self):
        p = test_k1.Problem(seed=10, bs=3, page_size=4, max_seq_pages=5)
        with self.assertRaisesRegex(ValueError, "argument 'seq_lens'"):
            ffi.normal_decode_set_metadata(p.cache_seqlens, p.cu_seqlens_k, p.page_table, p.req_to_token,
                                           p.req_pool_indices, p.max_seq_pages, p.seq_lens.astype(np.float32), 0,
                                           p.page_size)

    def test_bad_variant(self):
        p = test_k1.Problem(seed=11, bs=2, page_size=4, max_seq_pages=5)
        with self.assertRaisesRegex(ValueError, "argument 'variant'"):
            ffi.normal_decode_set_metadata(p.cache_seqlens, p.cu_seqlens_k, p.page_table, p.req_to_token,
                                           p.req_pool_indices, p.max_seq_pages, p.seq_lens, 0, p.page_size,
                                           variant="widest")


if __name__ == "__main__":
    unittest.main()
