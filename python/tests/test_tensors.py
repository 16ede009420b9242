"""Tensor conversion: numpy arrays become the right lb_tensor (pointer, dtype, shape,
element strides); livebound never imports torch itself; torch tensors (a stand-in module
when torch is not installed, the real one on CPU when it is) give the right descriptor,
device and stream, and one call never mixes devices."""

import ctypes
import os
import subprocess
import sys
import types
import unittest

from _common import POISON, livebound, needs_numpy, np, poisoned
from livebound import _abi
from livebound._tensor import Call


@needs_numpy
class NumpyDescriptors(unittest.TestCase):
    def test_contiguous_2d(self):
        a = np.zeros((3, 5), dtype=np.int32)
        t = Call("f").tensor("a", a)
        self.assertEqual(t.data, a.ctypes.data)
        self.assertEqual((t.dtype, t.ndim, list(t.shape[:2]), list(t.strides[:2])), (_abi.LB_INT32, 2, [3, 5], [5, 1]))

    def test_views_give_element_strides(self):
        base = np.zeros((4, 10), dtype=np.int64)
        t = Call("f").tensor("a", base[1:, 2:7])
        self.assertEqual(t.data, base[1:, 2:7].ctypes.data)
        self.assertEqual((t.dtype, list(t.shape[:2]), list(t.strides[:2])), (_abi.LB_INT64, [3, 5], [10, 1]))
        t = Call("f").tensor("b", np.zeros(9, dtype=np.uint8)[::3])
        self.assertEqual((t.dtype, t.ndim, t.shape[0], t.strides[0]), (_abi.LB_UINT8, 1, 3, 3))

    def test_four_dimensions_and_unused_entries_zero(self):
        # lb_tensor has LB_MAX_DIMS = 4 entries; those past ndim stay 0.
        a = np.zeros((2, 3, 4, 5), dtype=np.int32)
        t = Call("f").tensor("a", a)
        self.assertEqual((t.ndim, list(t.shape), list(t.strides)), (4, [2, 3, 4, 5], [60, 20, 5, 1]))
        t = Call("f").tensor("b", np.zeros((3, 5), dtype=np.int32))
        self.assertEqual((list(t.shape[2:]), list(t.strides[2:])), ([0, 0], [0, 0]))
        with self.assertRaises(ValueError) as cm:
            Call("f").tensor("c", np.zeros((1, 1, 1, 1, 1), dtype=np.int32))
        self.assertIn("'c'", str(cm.exception))

    def test_float_dtypes(self):
        for dtype, want in ((np.float16, _abi.LB_FLOAT16), (np.float32, _abi.LB_FLOAT32)):
            a = np.zeros((2, 3, 8), dtype=dtype)[:, 1:]
            t = Call("f").tensor("a", a)
            self.assertEqual((t.data, t.dtype, t.ndim, list(t.shape[:3]), list(t.strides[:3])),
                             (a.ctypes.data, want, 3, [2, 2, 8], [24, 8, 1]))

    def test_bfloat16_bits(self):
        bits = np.zeros((5, 2, 4), dtype=np.uint16)
        t = Call("f").tensor("q", livebound.as_bfloat16(bits[::2]))
        self.assertEqual((t.data, t.dtype, t.ndim, list(t.shape[:3]), list(t.strides[:3])),
                         (bits.ctypes.data, _abi.LB_BFLOAT16, 3, [3, 2, 4], [16, 4, 1]))
        for bad in (np.zeros(3, np.float16), np.zeros(3, np.int32), [1, 2]):
            with self.assertRaises(TypeError):
                livebound.as_bfloat16(bad)

    def test_bool_only_where_a_mask_is_taken(self):
        m = np.array([True, False, True])
        with self.assertRaises(TypeError) as cm:
            Call("f").tensor("seq_lens", m)
        self.assertIn("'seq_lens'", str(cm.exception))
        t = Call("f").tensor("custom_mask", m, bool_as_uint8=True)
        self.assertEqual((t.data, t.dtype, t.shape[0], t.strides[0]), (m.ctypes.data, _abi.LB_UINT8, 3, 1))

    def test_absent_optional(self):
        t = Call("f").tensor("opt", None, optional=True)
        self.assertEqual((t.data, t.ndim, t.dtype), (None, 0, 0))

    def test_misaligned_byte_strides(self):
        raw = np.zeros(64, dtype=np.uint8)
        odd = np.lib.stride_tricks.as_strided(raw.view(np.int32), shape=(3,), strides=(6,))
        with self.assertRaises(ValueError) as cm:
            Call("f").tensor("odd", odd)
        self.assertIn("'odd'", str(cm.exception))

    def test_negative_stride_goes_to_the_c_abi(self):
        # The Python layer converts; the C ABI rejects the stride and names the argument.
        seq = np.array([1, 2, 3], dtype=np.int64)[::-1]
        with self.assertRaises(livebound.LbError) as cm:
            livebound.normal_decode_set_metadata(poisoned(3), poisoned(4), poisoned((3, 4)),
                                                 np.zeros((3, 8), np.int32), np.arange(3), 4, seq, 0, 1)
        self.assertIn("seq_lens", cm.exception.message)

    def test_cpu_device(self):
        c = Call("f")
        c.tensor("a", np.zeros(2, np.int32))
        d = c.device()
        self.assertEqual((d.type, d.index, d.stream), (_abi.LB_DEVICE_CPU, 0, None))


class NoTorchImport(unittest.TestCase):
    @needs_numpy
    def test_numpy_calls_do_not_import_torch(self):
        code = (
            "import sys, numpy as np, livebound\n"
            "cache, cu, pt = np.zeros(2, np.int32), np.zeros(3, np.int32), np.zeros((2, 4), np.int32)\n"
            "livebound.normal_decode_set_metadata(cache, cu, pt, np.zeros((2, 8), np.int32),\n"
            "    np.arange(2), 4, np.array([3, 5]), 0, 2)\n"
            "assert list(cu) == [0, 3, 8], cu\n"
            "print('torch' in sys.modules)\n"
        )
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "False")


def _fake_torch():
    """A stand-in for the parts of torch livebound touches (the real one is not needed
    to test the conversion)."""
    torch = types.ModuleType("torch")
    for name in ("int32", "int64", "uint8", "float16", "bfloat16", "float32", "float8_e4m3fn", "float64", "bool"):
        setattr(torch, name, "torch." + name)

    class device:
        def __init__(self, type, index=None):
            self.type, self.index = type, index

        def __str__(self):
            return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    class Tensor:
        def __init__(self, ptr, dtype, shape, stride, dev):
            self._ptr, self.dtype, self.shape, self._stride, self.device = ptr, dtype, shape, stride, dev

        def data_ptr(self):
            return self._ptr

        def stride(self):
            return self._stride

    class _Stream:
        def __init__(self, handle):
            self.cuda_stream = handle

    cuda = types.SimpleNamespace(current_device=lambda: 0, current_stream=lambda index=None: _Stream(0x5000 + index))
    torch.device, torch.Tensor, torch.cuda, torch._Stream = device, Tensor, cuda, _Stream
    return torch


class TorchDescriptors(unittest.TestCase):
    def setUp(self):
        self._saved = sys.modules.get("torch")
        self.real = self._saved is not None and hasattr(self._saved, "from_numpy")
        if not self.real:
            sys.modules["torch"] = _fake_torch()
        self.torch = sys.modules["torch"]

    def tearDown(self):
        if not self.real:
            if self._saved is None:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = self._saved

    def cuda_tensor(self, index, dtype="torch.int32", shape=(4, 6), stride=(8, 1), ptr=0x7000):
        return self.torch.Tensor(ptr, dtype, shape, stride, self.torch.device("cuda", index))

    def test_cuda_descriptor_and_current_stream(self):
        if self.real:
            self.skipTest("real torch: covered by test_torch_cuda.py on the GPU machine")
        c = Call("f")
        t = c.tensor("page_table", self.cuda_tensor(1))
        self.assertEqual((t.data, t.dtype, t.ndim, list(t.shape[:2]), list(t.strides[:2])),
                         (0x7000, _abi.LB_INT32, 2, [4, 6], [8, 1]))
        d = c.device()
        self.assertEqual((d.type, d.index, d.stream), (_abi.LB_DEVICE_CUDA, 1, 0x5001))
        self.assertEqual(c.device(stream=self.torch._Stream(0x1234)).stream, 0x1234)
        self.assertEqual(c.device(stream=0).stream, None)  # the legacy default stream
        self.assertEqual(c.device(stream=0xABC).stream, 0xABC)

    def test_one_device_per_call(self):
        if self.real:
            self.skipTest("real torch: covered by test_torch_cuda.py on the GPU machine")
        c = Call("normal_decode_set_metadata")
        c.tensor("seq_lens", self.cuda_tensor(0, shape=(4,), stride=(1,)))
        with self.assertRaises(ValueError) as cm:
            c.tensor("page_table", self.cuda_tensor(1))
        self.assertIn("'page_table'", str(cm.exception))
        self.assertIn("'seq_lens'", str(cm.exception))
        if np is not None:
            with self.assertRaises(ValueError):
                c.tensor("req_to_token", np.zeros((2, 2), np.int32))

    def test_unsupported_torch_dtype(self):
        if self.real:
            x = self.torch.zeros(3, dtype=self.torch.float64)
        else:
            x = self.torch.Tensor(0x10, "torch.float64", (3,), (1,), self.torch.device("cpu"))
        with self.assertRaises(TypeError) as cm:
            Call("f").tensor("seq_lens", x)
        self.assertIn("'seq_lens'", str(cm.exception))

    def test_torch_float_and_bool_dtypes(self):
        def tensor(dtype):
            if self.real:
                return self.torch.empty(3, dtype=getattr(self.torch, dtype))  # (float8 has few kernels: no fill)
            return self.torch.Tensor(0x10, "torch." + dtype, (3,), (1,), self.torch.device("cpu"))

        for dtype, want in (("float16", _abi.LB_FLOAT16), ("bfloat16", _abi.LB_BFLOAT16), ("float32", _abi.LB_FLOAT32),
                            ("float8_e4m3fn", _abi.LB_FLOAT8_E4M3FN)):
            if not hasattr(self.torch, dtype):  # a real torch older than 2.1 has no float8
                continue
            self.assertEqual(Call("f").tensor("q", tensor(dtype)).dtype, want, dtype)
        self.assertEqual(Call("f").tensor("custom_mask", tensor("bool"), bool_as_uint8=True).dtype, _abi.LB_UINT8)
        with self.assertRaises(TypeError) as cm:
            Call("f").tensor("seq_lens", tensor("bool"))
        self.assertIn("'seq_lens'", str(cm.exception))

    @needs_numpy
    def test_k1_on_cpu_torch_tensors(self):
        if not self.real:
            self.skipTest("torch is not installed")
        torch = self.torch
        cache, cu = torch.full((3,), POISON, dtype=torch.int32), torch.full((4,), POISON, dtype=torch.int32)
        pt = torch.full((3, 4), POISON, dtype=torch.int32)
        r2t = torch.arange(24, dtype=torch.int32).reshape(3, 8)
        livebound.normal_decode_set_metadata(cache, cu, pt, r2t, torch.tensor([2, 0, 1]), 4,
                                             torch.tensor([3, 0, 8]), 0, 2)
        self.assertEqual(cu.tolist(), [0, 3, 3, 11])
        self.assertEqual(pt[0].tolist(), [16 >> 1, 18 >> 1, POISON, POISON])


if __name__ == "__main__":
    unittest.main()
