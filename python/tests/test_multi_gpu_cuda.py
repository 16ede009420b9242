"""Two CUDA devices through the Python layers (issue 14), for the GPU machine (run_gpu_check.sh):

  - tensors on cuda:1 while torch's current device is cuda:0: K1, K7 and K8 through the
    ctypes layer (livebound), and through livebound.ffi and livebound.torch_ops when they
    load, run on cuda:1 and match test_torch_cuda's references: each binding takes the device
    index from the tensors;
  - the same while cuda:0's current stream is a side stream (torch.cuda.stream on cuda:0):
    each binding passes cuda:1's current stream, not the current device's (which the runtime
    would refuse);
  - an explicit stream of cuda:0 (livebound.*'s ``stream=`` argument, a torch.cuda.Stream or
    a raw CUstream) with tensors on cuda:1 is refused: LbError, LB_ERROR_INVALID_ARGUMENT,
    the message naming 'stream' and both devices, nothing written.

Skips (even with LIVEBOUND_REQUIRE_CUDA=1) with fewer than 2 CUDA devices; without torch,
like test_torch_cuda.
"""

import os
import sys
import unittest

if os.environ.get("LIVEBOUND_TEST_INSTALLED") != "1":  # else the installed package (as _common.py)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # test_torch_cuda

import test_torch_cuda as base  # noqa: E402
from test_torch_cuda import torch  # noqa: E402

import livebound  # noqa: E402

TENSORS, CURRENT = 1, 0  # the tensors' device and torch's current device


def _bindings():
    """{name: module with normal_decode_set_metadata, extend_attention_fwd(_unified)}: the
    ctypes layer always; livebound.ffi and livebound.torch_ops when they load."""
    out = {"ctypes": livebound}
    try:
        import livebound.ffi as ffi

        if os.path.exists(ffi.library_path()):
            out["ffi"] = ffi
    except ImportError:
        pass
    try:
        import livebound.torch_ops as ops

        out["torch_ops"] = ops
    except ImportError:
        pass
    return out


class _Through:
    """test_torch_cuda's `livebound`, with K1, K7 and K8 taken from `binding`."""

    def __init__(self, real, binding):
        self._real = real
        for name in ("normal_decode_set_metadata", "extend_attention_fwd", "extend_attention_fwd_unified"):
            setattr(self, name, getattr(binding, name))

    def __getattr__(self, name):
        return getattr(self._real, name)


class TwoDevices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = base._why_not(0)
        if why is None and torch.cuda.device_count() < 2:
            why = "needs 2 CUDA devices, torch sees %d" % torch.cuda.device_count()
        why = why or base._why_not(TENSORS)
        if why:
            if base.REQUIRE and (torch is None or not torch.cuda.is_available()):
                raise RuntimeError("LIVEBOUND_REQUIRE_CUDA=1 but " + why)
            raise unittest.SkipTest(why)
        cls.dev = torch.device("cuda", TENSORS)
        cls.bindings = _bindings()

    def setUp(self):
        # Torch's current device is cuda:0 for every test, whatever ran before.
        self._current = torch.cuda.current_device()
        torch.cuda.set_device(CURRENT)
        self.addCleanup(torch.cuda.set_device, self._current)
        self._saved = base.livebound
        self.addCleanup(setattr, base, "livebound", self._saved)

    def helpers(self):
        k1 = base.K1TorchCuda("check")
        k1.dev = self.dev
        att = base.AttentionTorchCuda("check")
        att.dev = self.dev
        return k1, att

    def run_k1_k7_k8(self, seed):
        """K1, K7 and K8 on cuda:1 through test_torch_cuda's `livebound`, checked."""
        k1, att = self.helpers()
        p = k1.make(seed=seed)
        k1.call(p)
        k1.check(p)
        t = att.tensors(seed=seed + 1, unified=False)
        want_o, want_lse = att.reference(t, True, 16, t.sinks, unified=False)
        att.k7(t, True, 16, t.sinks, t.lse)
        att.check(t, t.o, want_o, t.lse, want_lse)
        u = att.tensors(seed=seed + 2, unified=True)
        want_o8, _ = att.reference(u, True, 16, u.sinks, unified=True)
        att.k8(u, True, 16, u.sinks)
        att.check(u, u.o, want_o8)

    def test_tensors_on_cuda1_while_cuda0_is_current(self):
        for name, binding in self.bindings.items():
            with self.subTest(binding=name):
                base.livebound = _Through(self._saved, binding)
                self.assertEqual(torch.cuda.current_device(), CURRENT)
                self.run_k1_k7_k8(seed=200)

    def test_current_stream_of_the_current_device_is_not_used(self):
        # cuda:0's current stream a side stream (not the NULL stream, which any device takes):
        # a binding that passed it would be refused by the runtime (a stream of another
        # device), so calls that succeed and match the references ran on cuda:1's stream.
        side0 = torch.cuda.Stream(device=CURRENT)
        for name, binding in self.bindings.items():
            with self.subTest(binding=name):
                base.livebound = _Through(self._saved, binding)
                with torch.cuda.stream(side0):  # cuda:0's current stream, and cuda:0 current
                    self.assertEqual(torch.cuda.current_device(), CURRENT)
                    self.run_k1_k7_k8(seed=300)

    def test_explicit_stream_of_another_device_is_refused(self):
        k1, att = self.helpers()
        s0 = torch.cuda.Stream(device=CURRENT)
        for form, stream in (("torch.cuda.Stream", s0), ("raw CUstream", s0.cuda_stream)):
            with self.subTest(stream=form):
                p = k1.make(seed=400)
                with self.assertRaises(livebound.LbError) as cm:
                    livebound.normal_decode_set_metadata(p.cache, p.cu, p.pt, p.r2t, p.rpi, p.max_pages, p.seq_lens, 0,
                                                         p.ps, stream=stream)
                self.assert_refused(cm.exception)
                base.synchronize(self.dev)
                self.assertTrue(bool((p.cache == base.POISON).all()) and bool((p.cu == base.POISON).all()))
                self.assertTrue(bool((p.pt_buf == base.POISON).all()))
                t = att.tensors(seed=401, unified=False)
                with self.assertRaises(livebound.LbError) as cm:
                    att.k7(t, True, 16, t.sinks, t.lse, stream=stream)
                self.assert_refused(cm.exception)
                u = att.tensors(seed=402, unified=True)
                with self.assertRaises(livebound.LbError) as cm:
                    att.k8(u, True, 16, u.sinks, stream=stream)
                self.assert_refused(cm.exception)
                base.synchronize(self.dev)
                self.assertTrue(bool((t.o == base.O_POISON).all()) and bool((t.lse == base.LSE_POISON).all()))
                self.assertTrue(bool((u.o == base.O_POISON).all()))

    def assert_refused(self, error):
        self.assertEqual(error.status_name, "LB_ERROR_INVALID_ARGUMENT", error)
        self.assertIn("argument 'stream'", error.message)
        self.assertIn("belongs to CUDA device %d, but the call runs on device %d" % (CURRENT, TENSORS), error.message)


if __name__ == "__main__":
    unittest.main()
