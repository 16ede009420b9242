"""livebound's torch.library custom operators (livebound.torch_ops), for the GPU machine,
with a CPU part that runs wherever torch, tvm_ffi and the libraries are:

  (a) eager: the K1, K7 and K8 tests of test_torch_cuda.py run again with livebound's
      functions replaced by livebound.torch_ops' (each call goes through
      torch.ops.livebound.*), against that file's torch references; on CUDA that includes
      its CUDA-graph capture/replay tests of K1 and K7 (eager operators captured);
  (b) torch.compile(fullgraph=True) of one function calling K1, K7 and K8 (backends
      aot_eager and inductor): outputs bit-identical to the same function run eagerly, and
      correct against the references;
  (c) CUDA only: that function, eager and compiled (inductor), captured in a
      torch.cuda.CUDAGraph and replayed with seq_lens, req_pool_indices and q changed in
      place between replays, checked against the references after every replay;
  (d) torch.library.opcheck of K1, K7 and K8 (schema, autograd registration, fake tensor,
      AOT dispatch static and dynamic: every check of opcheck; all are valid for operators
      that mutate their arguments and return nothing);
  and K2-K6: test_kernels.py's numpy smoke tests through the operators, on the CPU (each
  array passed as torch.from_numpy, the same memory) and on the test device (each array
  copied to a CUDA tensor and back: test_torch_cuda.on_device).

Problems, references and checks are test_torch_cuda.py's (make / tensors / check /
reference) and test_kernels.py's; nothing is restated here. The CPU classes run the same
tests on CPU tensors (test_torch_cuda's synchronize, which its checks call, is a no-op for
them, and torch.cuda.synchronize is patched to one).

Skips, naming the reason, without torch, tvm_ffi (apache-tvm-ffi), liblivebound_ffi.so or
a CUDA device (CUDA classes only); LIVEBOUND_REQUIRE_CUDA=1 turns a missing torch,
livebound.torch_ops or CUDA device into a failure, as in test_torch_cuda.py. Needs
LIVEBOUND_FFI_LIB (or the build tree) and, for the CUDA classes, a CUDA build of
liblivebound.so. The CUDA classes run on test_torch_cuda's device (LIVEBOUND_TEST_DEVICE,
default 0), with torch's current device left at cuda:0.
"""

import os
import sys
import unittest
from unittest import mock

_TESTS = os.path.dirname(os.path.abspath(__file__))
# livebound (unless LIVEBOUND_TEST_INSTALLED=1: the installed package, as _common.py), and
# test_torch_cuda from any working directory
sys.path[:0] = ([] if os.environ.get("LIVEBOUND_TEST_INSTALLED") == "1" else [os.path.dirname(_TESTS)]) + [_TESTS]

import test_torch_cuda as base  # noqa: E402
from test_torch_cuda import torch  # noqa: E402


def _load_ops():
    if torch is None:
        return None, "torch is not installed"
    try:
        import livebound.torch_ops as ops
    except ImportError as e:  # old torch, no apache-tvm-ffi, or liblivebound_ffi.so not loadable
        return None, str(e)
    return ops, None


ops, _WHY = _load_ops()
if _WHY is not None and base.REQUIRE:
    raise RuntimeError("LIVEBOUND_REQUIRE_CUDA=1 but livebound.torch_ops is unavailable: " + _WHY)
needs_ops = unittest.skipIf(_WHY is not None, "livebound.torch_ops unavailable: %s" % _WHY)
cuda_only = unittest.skip("CUDA only (streams and CUDA graphs)")

K1_K7_K8 = ("normal_decode_set_metadata", "extend_attention_fwd", "extend_attention_fwd_unified")


class _ThroughOps:
    """test_torch_cuda's `livebound`, with K1, K7 and K8 taken from livebound.torch_ops."""

    def __init__(self, real):
        self._real = real
        for name in K1_K7_K8:
            setattr(self, name, getattr(ops, name))

    def __getattr__(self, name):
        return getattr(self._real, name)


class _Swap:
    def setUp(self):
        super().setUp()
        self._saved = base.livebound
        base.livebound = _ThroughOps(self._saved)

    def tearDown(self):
        base.livebound = self._saved
        super().tearDown()


class _OnCpu:
    """Runs a CUDA test class of test_torch_cuda.py on the CPU."""

    @classmethod
    def setUpClass(cls):
        cls.dev = torch.device("cpu")

    def setUp(self):
        super().setUp()
        patcher = mock.patch.object(torch.cuda, "synchronize", lambda *args, **kwargs: None)
        patcher.start()
        self.addCleanup(patcher.stop)


class _OnCuda:
    @classmethod
    def setUpClass(cls):
        cls.dev = base.device_or_skip()


# ---- (a) eager: test_torch_cuda's tests through the operators -------------------------------
class _K1Overrides:
    def test_bad_argument_raises(self):
        p = self.make(seed=5)
        with self.assertRaisesRegex(ValueError, "page_size"):
            ops.normal_decode_set_metadata(p.cache, p.cu, p.pt, p.r2t, p.rpi, p.max_pages, p.seq_lens, 0, 3)
        self.check_untouched(p)

    def check_untouched(self, p):
        base.synchronize(self.dev)
        self.assertTrue(bool((p.cache == base.POISON).all()) and bool((p.cu == base.POISON).all()))
        self.assertTrue(bool((p.pt_buf == base.POISON).all()))


class _AttentionOverrides:
    def test_bad_argument_raises(self):
        t = self.tensors(seed=60, unified=False)
        with self.assertRaisesRegex(ValueError, "sm_scale"):
            self.k7(t, True, -1, None, None, sm_scale=-1.0)
        u = self.tensors(seed=61, unified=True)
        with self.assertRaisesRegex(ValueError, "sm_scale"):
            self.k8(u, True, -1, None, sm_scale=-1.0)
        with self.assertRaisesRegex(ValueError, "score_mod"):
            self.k7(t, True, -1, None, None, score_mod=lambda s: s)
        with self.assertRaisesRegex(ValueError, "aux_tensors"):
            self.k8(u, True, -1, None, aux_tensors=[t.q])
        base.synchronize(self.dev)
        self.assertTrue(bool((t.o == base.O_POISON).all()) and bool((u.o == base.O_POISON).all()))


@needs_ops
class OpsK1TorchCuda(_Swap, _K1Overrides, base.K1TorchCuda):
    def test_eager_side_stream(self):
        p = self.make(seed=3)
        s = base.side_stream(self.dev)
        with torch.cuda.stream(s):  # the operator runs on torch's current stream of the tensors' device = s
            self.call(p)
        s.synchronize()
        self.check(p)


@needs_ops
class OpsAttentionTorchCuda(_Swap, _AttentionOverrides, base.AttentionTorchCuda):
    pass


@needs_ops
class OpsK1TorchCpu(_Swap, _OnCpu, _K1Overrides, base.K1TorchCuda):
    test_eager_side_stream = cuda_only(base.K1TorchCuda.test_eager_side_stream)
    test_cuda_graph_capture_and_replay = cuda_only(base.K1TorchCuda.test_cuda_graph_capture_and_replay)


@needs_ops
class OpsAttentionTorchCpu(_Swap, _OnCpu, _AttentionOverrides, base.AttentionTorchCuda):
    test_k7_cuda_graph = cuda_only(base.AttentionTorchCuda.test_k7_cuda_graph)


# ---- (a) K2-K6 on the CPU: test_kernels.py's numpy smoke tests through the operators ----------
# (test_torch_cuda's on_device on the CPU: each array goes in as torch.from_numpy, the same memory.)
def _op_functions():
    return {name: getattr(ops, name) for name in base.K2_K6}


globals().update(base.kernel_classes_on("Ops", _op_functions, lambda: torch.device("cpu"), needs_ops, __name__))
# ... and on the test device (test_torch_cuda's on_device: each array copied to a CUDA tensor).
globals().update(base.kernel_classes_on_test_device("OpsCuda", _op_functions, needs_ops, __name__))


# ---- (b) torch.compile, (c) CUDA graphs, (d) opcheck --------------------------------------------
WINDOW = 16  # K7 / K8 sliding window of the combined step, with sinks


def _helper(cls, dev):
    """An instance of a test_torch_cuda class used for its problem builders and checks."""
    h = cls("check")
    h.dev = dev
    return h


def make_step(max_pages, page_size, max_len_extend):
    """One decode-metadata + attention step through the wrappers (scalars baked in, as a
    CUDA graph bakes them): K1, then K7 (with sinks and LSE), then K8."""

    def step(cache, cu, pt, r2t, rpi, seq_lens, q, ke, ve, o, kb, vb, qo, kvp, kvi, sinks, lse, q8, o8, kb8, vb8,
             qo8, kvp8, kvi8, prefix_lens, sinks8):
        ops.normal_decode_set_metadata(cache, cu, pt, r2t, rpi, max_pages, seq_lens, 0, page_size)
        ops.extend_attention_fwd(q, ke, ve, o, kb, vb, qo, kvp, kvi, None, True, None, max_len_extend, 1.0, 1.0,
                                 sliding_window_size=WINDOW, sinks=sinks, lse_extend=lse)
        ops.extend_attention_fwd_unified(q8, o8, kb8, vb8, 1.0, 1.0, qo8, kvp8, kvi8, prefix_lens, max_len_extend,
                                         is_causal=True, sliding_window_size=WINDOW, sinks=sinks8)

    return step


class _Combined:
    """The step's problems (K1, K7, K8), built and checked with test_torch_cuda's helpers."""

    def setUp(self):
        super().setUp()
        self.k1 = _helper(base.K1TorchCuda, self.dev)
        self.att = _helper(base.AttentionTorchCuda, self.dev)
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def problem(self, seed):
        p = self.k1.make(bs=8, ps=16, max_pages=64, seed=seed)
        t = self.att.tensors(seed=seed + 1, unified=False)
        u = self.att.tensors(seed=seed + 2, unified=True)
        return p, t, u

    def step_for(self, p):
        return make_step(p.max_pages, p.ps, max(self.att.E))

    @staticmethod
    def args(p, t, u):
        return (p.cache, p.cu, p.pt, p.r2t, p.rpi, p.seq_lens, t.q, t.ke, t.ve, t.o, t.kb, t.vb, t.qo, t.kvp, t.kvi,
                t.sinks, t.lse, u.q, u.o, u.kb, u.vb, u.qo, u.kvp, u.kvi, u.prefix_lens, u.sinks)

    @staticmethod
    def poison(p, t, u):
        p.cache.fill_(base.POISON)
        p.cu.fill_(base.POISON)
        p.pt_buf.fill_(base.POISON)
        t.o.fill_(base.O_POISON)
        t.lse.fill_(base.LSE_POISON)
        u.o.fill_(base.O_POISON)

    def check_against_references(self, p, t, u):
        self.k1.check(p)
        want_o, want_lse = self.att.reference(t, True, WINDOW, t.sinks, unified=False)
        self.att.check(t, t.o, want_o, t.lse, want_lse)
        want_o8, _ = self.att.reference(u, True, WINDOW, u.sinks, unified=True)
        self.att.check(u, u.o, want_o8)

    def assert_same_outputs(self, a, b):
        (pa, ta, ua), (pb, tb, ub) = a, b
        for name, x, y in (("cache_seqlens", pa.cache, pb.cache), ("cu_seqlens_k", pa.cu, pb.cu),
                           ("page_table (whole buffer)", pa.pt_buf, pb.pt_buf), ("o_extend", ta.o, tb.o),
                           ("lse_extend", ta.lse, tb.lse), ("o (K8)", ua.o, ub.o)):
            self.assertTrue(torch.equal(x, y), "%s differs between compiled and eager" % name)

    # (b)
    def test_compile_fullgraph_matches_eager(self):
        for backend in ("aot_eager", "inductor"):
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                eager = self.problem(seed=80)
                compiled = self.problem(seed=80)
                step = self.step_for(eager[0])
                step(*self.args(*eager))
                torch.compile(step, fullgraph=True, backend=backend)(*self.args(*compiled))
                base.synchronize(self.dev)
                self.assert_same_outputs(eager, compiled)
                self.check_against_references(*compiled)

    def test_compile_full_width_variant(self):
        """A variant keyword traced into the graph: the full-width twin, K1's every column."""
        p = self.k1.make(seed=85)

        def k1_full(cache, cu, pt, r2t, rpi, seq_lens):
            ops.normal_decode_set_metadata(cache, cu, pt, r2t, rpi, p.max_pages, seq_lens, 0, p.ps,
                                           variant="full_width")

        torch.compile(k1_full, fullgraph=True, backend="aot_eager")(p.cache, p.cu, p.pt, p.r2t, p.rpi, p.seq_lens)
        self.k1.check(p, full_width=True)

    # (d)
    def opcheck(self, op, args, kwargs=None):
        """Every check of torch.library.opcheck; the operators mutate outputs and return
        None, which each of these handles: test_schema compares every argument before and
        after against the (a!) annotations, test_autograd_registration has no input that
        requires grad to check, test_faketensor runs the fake kernel, and
        test_aot_dispatch_static / _dynamic trace the call with functionalization (the
        mutation becomes a copy back) and compare with eager."""
        utils = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
                 "test_aot_dispatch_dynamic")
        result = torch.library.opcheck(op, args, kwargs, test_utils=utils)
        self.assertEqual(set(result), set(utils))
        self.assertTrue(all(v == "SUCCESS" for v in result.values()), result)

    def test_opcheck_k1(self):
        p = self.k1.make(seed=90)
        self.opcheck(torch.ops.livebound.normal_decode_set_metadata.default,
                     (p.cache, p.cu, p.pt, p.r2t, p.rpi, p.max_pages, p.seq_lens, 0, p.ps, None))

    def test_opcheck_k7(self):
        t = self.att.tensors(seed=91, unified=False)
        self.opcheck(torch.ops.livebound.extend_attention_fwd.default,
                     (t.q, t.ke, t.ve, t.o, t.kb, t.vb, t.qo, t.kvp, t.kvi, None, True, None, max(self.att.E), 1.0,
                      1.0, None, 0.0, True, WINDOW, t.sinks, None, -1, t.lse))

    def test_opcheck_k8(self):
        u = self.att.tensors(seed=92, unified=True)
        self.opcheck(torch.ops.livebound.extend_attention_fwd_unified.default,
                     (u.q, u.o, u.kb, u.vb, 1.0, 1.0, u.qo, u.kvp, u.kvi, u.prefix_lens, max(self.att.E)),
                     {"sliding_window_size": WINDOW, "sinks": u.sinks})


@needs_ops
class OpsCompileCuda(_OnCuda, _Combined, unittest.TestCase):
    # (c)
    def capture_and_replay(self, fn):
        p, t, u = self.problem(seed=100)
        args = self.args(p, t, u)
        fn(*args)  # warm-up outside capture: JIT-compiles the PTX (and the torch.compile graph)
        self.check_against_references(p, t, u)
        self.poison(p, t, u)
        base.synchronize(self.dev)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=base.side_stream(self.dev)):  # capture on the tensors' device
            fn(*args)
        gen = torch.Generator().manual_seed(101)
        ctx = p.max_pages * p.ps
        for step in range(3):
            # change the inputs in place (the graph captured their addresses)
            new_lens = torch.randint(0, ctx + 40, (p.bs,), generator=gen, dtype=torch.int64)
            if step == 1:
                new_lens.zero_()
            p.seq_lens.copy_(new_lens)
            p.rpi.copy_(torch.randperm(p.r2t.shape[0], generator=gen)[: p.bs])
            for x in (t, u):
                x.q.copy_(torch.randn(x.q.shape, generator=gen).to(self.dev, x.q.dtype))
            self.poison(p, t, u)
            g.replay()
            with self.subTest(step=step, seq_lens=new_lens.tolist()):
                self.check_against_references(p, t, u)

    def test_cuda_graph_eager_ops(self):
        p = self.k1.make(bs=8, ps=16, max_pages=64, seed=100)
        self.capture_and_replay(self.step_for(p))

    def test_cuda_graph_compiled(self):
        p = self.k1.make(bs=8, ps=16, max_pages=64, seed=100)
        self.capture_and_replay(torch.compile(self.step_for(p), fullgraph=True))


@needs_ops
class OpsCompileCpu(_OnCpu, _Combined, unittest.TestCase):
    pass


if __name__ == "__main__":
    unittest.main()
