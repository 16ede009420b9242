"""The compiled binding (livebound.ffi) on torch CUDA tensors, for the GPU machine: the K1, K7
and K8 tests of test_torch_cuda.py (and its K2-K6 ones, test_kernels.py's on the device) run
again with livebound's kernels replaced by livebound.ffi's (eager on torch's current stream and on a side stream, the full-width twin,
CUDA-graph capture and replay, fp64/torch references). livebound.ffi has no `stream`
argument (torch's current stream is the call's) and raises ValueError: those two tests are
restated here. Needs tvm_ffi and LIVEBOUND_FFI_LIB; skips like test_torch_cuda otherwise. The
device is test_torch_cuda's (LIVEBOUND_TEST_DEVICE, default 0; torch's current device stays
cuda:0, so that the binding must take the device and its current stream from the tensors)."""

import os
import sys
import unittest

if os.environ.get("LIVEBOUND_TEST_INSTALLED") != "1":  # else the installed package (as _common.py)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import test_torch_cuda as base  # noqa: E402
from test_torch_cuda import torch  # noqa: E402

try:
    import livebound.ffi as ffi
except ImportError as e:  # no apache-tvm-ffi in this Python
    ffi = None
    _WHY = str(e)
else:
    _WHY = None if os.path.exists(ffi.library_path()) else "no " + ffi.library_path()
if _WHY is not None and base.REQUIRE:
    raise RuntimeError("livebound.ffi unavailable: " + _WHY)
needs_ffi = unittest.skipIf(_WHY is not None, "livebound.ffi unavailable: %s" % _WHY)


class _ThroughFfi:
    def __init__(self, real):
        self._real = real
        for name in ("normal_decode_set_metadata", "extend_attention_fwd", "extend_attention_fwd_unified"):
            setattr(self, name, getattr(ffi, name))

    def __getattr__(self, name):
        return getattr(self._real, name)


class _Swap:
    def setUp(self):
        super().setUp()
        self._saved = base.livebound
        base.livebound = _ThroughFfi(self._saved)

    def tearDown(self):
        base.livebound = self._saved
        super().tearDown()


@needs_ffi
class FfiK1TorchCuda(_Swap, base.K1TorchCuda):
    def test_eager_side_stream(self):
        p = self.make(seed=3)
        s = base.side_stream(self.dev)
        with torch.cuda.stream(s):  # the binding runs on torch's current stream of the tensors' device = s
            self.call(p)
        s.synchronize()
        self.check(p)

    def test_bad_argument_raises(self):
        p = self.make(seed=5)
        with self.assertRaisesRegex(ValueError, "page_size"):
            ffi.normal_decode_set_metadata(p.cache, p.cu, p.pt, p.r2t, p.rpi, p.max_pages, p.seq_lens, 0, 3)


@needs_ffi
class FfiAttentionTorchCuda(_Swap, base.AttentionTorchCuda):
    def test_bad_argument_raises(self):
        t = self.tensors(seed=60, unified=False)
        with self.assertRaisesRegex(ValueError, "sm_scale"):
            self.k7(t, True, -1, None, None, sm_scale=-1.0)
        u = self.tensors(seed=61, unified=True)
        with self.assertRaisesRegex(ValueError, "sm_scale"):
            self.k8(u, True, -1, None, sm_scale=-1.0)
        base.synchronize(self.dev)
        self.assertTrue(bool((t.o == base.O_POISON).all()) and bool((u.o == base.O_POISON).all()))


# K2-K6: test_kernels.py's tests through livebound.ffi on the test device (FfiCudaK2..., as
# test_torch_cuda's CudaK2... for the ctypes layer).
globals().update(base.kernel_classes_on_test_device("FfiCuda", lambda: {name: getattr(ffi, name) for name in base.K2_K6},
                                                    needs_ffi, __name__))


if __name__ == "__main__":
    unittest.main()
