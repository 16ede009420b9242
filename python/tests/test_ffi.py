"""The compiled binding (livebound.ffi, liblivebound_ffi.so on Apache TVM FFI) through the
same K1 and K7 tests as the ctypes layer: test_k1's K1Reference and test_attention's
K7ExtendAttention run again with livebound.normal_decode_set_metadata and
livebound.extend_attention_fwd replaced by livebound.ffi's. numpy arrays travel by DLPack,
which has no bfloat16 for numpy: the K7 cases here are the fp16 ones (bf16 runs with torch
on the GPU, python/tests/test_torch_cuda.py). Skipped without tvm_ffi or the built library."""

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

needs_ffi = unittest.skipIf(_FFI_ERROR is not None, "livebound.ffi unavailable: %s" % _FFI_ERROR)


class _ThroughFfi:
    """livebound with K1 and K7 taken from livebound.ffi (everything else unchanged)."""

    def __init__(self):
        self.normal_decode_set_metadata = ffi.normal_decode_set_metadata
        self.extend_attention_fwd = ffi.extend_attention_fwd

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
