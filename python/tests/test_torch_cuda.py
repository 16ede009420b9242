"""K1-K8 through the Python layer on torch CUDA tensors (for the GPU machine: python3 with
torch, liblivebound.so built with CUDA named by LIVEBOUND_LIB; no Halide needed).

K1:
  - eager calls on torch's current stream (and on an explicit side stream) against a torch
    reference: scalars in full, live prefix exact, every dead column still poisoned;
  - the full-width twin: same live prefix, every column below the width written;
  - torch.cuda.graph capture of one call, replayed with seq_lens (and req_pool_indices)
    changed in place between replays.
K7 extend_attention_fwd / K8 extend_attention_fwd_unified (bf16, head dim 128, int64
kv_indices: variants every CUDA build has):
  - eager calls against a float64 torch reference of the spec (causal, sliding window,
    sinks, GQA), rows outside the requests untouched, LSE; the full-width twin bit-identical;
  - a bad argument raises LbError naming it;
  - K7 under torch.cuda.graph capture, replayed after q_extend changed in place.
K2-K6: test_kernels.py's numpy tests again (Cuda<class>), every array copied to a tensor on
the test device for the call and back after it (on_device), so its numpy checks apply.

The device: LIVEBOUND_TEST_DEVICE (a CUDA ordinal, default 0; anything else is an error at
import) names the device every tensor lives on. The tests never make it torch's current
device: torch's current device stays cuda:0, so with LIVEBOUND_TEST_DEVICE=1 every call also
checks that the binding takes the device (index and current stream) from the tensors, not from
torch's current device. Streams, synchronisation and graph capture name the device explicitly.

Skips without torch or the test device (fewer than LIVEBOUND_TEST_DEVICE + 1 CUDA devices),
unless LIVEBOUND_REQUIRE_CUDA=1 (run_gpu_check.sh sets it), which turns the skip into a
failure.
"""

import os
import sys
import unittest

if os.environ.get("LIVEBOUND_TEST_INSTALLED") != "1":  # else the installed package (as _common.py)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import livebound  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

try:
    import numpy as np  # (K2-K6: test_kernels.py's numpy problems)
except ImportError:
    np = None

POISON = -7777
REQUIRE = os.environ.get("LIVEBOUND_REQUIRE_CUDA") == "1"


def _test_device_index():
    """LIVEBOUND_TEST_DEVICE as a CUDA ordinal: unset or empty is 0; anything but a decimal
    ordinal is an error (never a silent 0)."""
    text = os.environ.get("LIVEBOUND_TEST_DEVICE", "")
    if text == "":
        return 0
    if not text.isdigit() or int(text) >= 1024:
        raise ValueError("LIVEBOUND_TEST_DEVICE=%r is not a CUDA device ordinal (a decimal integer in [0, 1024); "
                         "unset means 0)" % text)
    return int(text)


TEST_DEVICE = _test_device_index()


def cuda_test_device():
    """torch.device of the test device (cuda:LIVEBOUND_TEST_DEVICE)."""
    return torch.device("cuda", TEST_DEVICE)


def _why_not(index=None):
    """Why CUDA device `index` (default: the test device) cannot be tested, or None."""
    index = TEST_DEVICE if index is None else index
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    if torch.cuda.device_count() <= index:
        return "needs %d CUDA device(s) for cuda:%d (LIVEBOUND_TEST_DEVICE), torch sees %d" % (
            index + 1, index, torch.cuda.device_count())
    if not livebound.cuda_device_available(index):
        return "liblivebound.so cannot use CUDA device %d (%s)" % (index, livebound.last_error())
    return None


def device_or_skip():
    """The test device for a class's setUpClass; skips the class when it cannot be tested
    (_why_not), or fails when LIVEBOUND_REQUIRE_CUDA=1."""
    why = _why_not()
    if why:
        if REQUIRE:
            raise RuntimeError("LIVEBOUND_REQUIRE_CUDA=1 but " + why)
        raise unittest.SkipTest(why)
    return cuda_test_device()


def side_stream(dev):
    """A new torch stream on `dev` that waits for dev's current stream."""
    s = torch.cuda.Stream(device=dev)
    s.wait_stream(torch.cuda.current_stream(dev))
    return s


def synchronize(dev):
    """torch.cuda.synchronize of `dev` (a no-op on the CPU, for the CPU runs of these classes)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def reference(seq_lens, rpi, r2t, max_pages, delta, ps, width):
    """torch reference of spec §3.1 on the same device: (cache, cu, page_table [bs, width])
    with POISON in every column livebound does not write."""
    shift = ps.bit_length() - 1
    L = seq_lens.to(torch.int32) + delta
    zero = torch.zeros(1, dtype=torch.int64, device=L.device)
    cu = torch.cat([zero, torch.cumsum(L, 0, dtype=torch.int64)]).to(torch.int32)
    live = torch.clamp((L + ps - 1) >> shift, min=0, max=max_pages)
    cols = torch.arange(width, device=L.device)
    slots = r2t[rpi.long()][:, torch.clamp(cols, max=max_pages - 1) * ps] >> shift
    pt = torch.where(cols[None, :] < live[:, None], slots, torch.full_like(slots, POISON))
    return L, cu, pt


class K1TorchCuda(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = device_or_skip()

    def make(self, bs=6, ps=16, max_pages=32, seed=0, pool_rows=11):
        g = torch.Generator().manual_seed(seed)
        p = type("P", (), {})()
        p.bs, p.ps, p.max_pages, p.width = bs, ps, max_pages, max_pages + 3
        ctx = max_pages * ps
        p.r2t = torch.randint(0, 1 << 20, (pool_rows, ctx), generator=g, dtype=torch.int32).to(self.dev)
        p.rpi = torch.randperm(pool_rows, generator=g)[:bs].to(torch.int64).to(self.dev)
        lens = torch.randint(0, ctx, (bs,), generator=g, dtype=torch.int64)
        lens[0] = 0
        lens[1] = ctx + 100  # past the full width: clamped to max_pages
        p.seq_lens = lens.to(self.dev)
        p.cache = torch.full((bs + 1,), POISON, dtype=torch.int32, device=self.dev)
        p.cu = torch.full((bs + 2,), POISON, dtype=torch.int32, device=self.dev)
        # the page table is a column slice of a wider buffer (row stride > width)
        p.pt_buf = torch.full((bs + 2, p.width + 5), POISON, dtype=torch.int32, device=self.dev)
        p.pt = p.pt_buf[:, : p.width]
        return p

    def poison(self, p):
        p.cache.fill_(POISON)
        p.cu.fill_(POISON)
        p.pt_buf.fill_(POISON)

    def call(self, p, **kw):
        livebound.normal_decode_set_metadata(p.cache, p.cu, p.pt, p.r2t, p.rpi, p.max_pages, p.seq_lens, 0, p.ps,
                                             **kw)

    def check(self, p, full_width=False):
        synchronize(self.dev)
        L, cu, pt = reference(p.seq_lens, p.rpi, p.r2t, p.max_pages, 0, p.ps, p.width)
        bs = p.bs
        self.assertTrue(torch.equal(p.cache[:bs], L), "cache_seqlens %s vs %s" % (p.cache[:bs], L))
        self.assertTrue(torch.equal(p.cu[: bs + 1], cu), "cu_seqlens_k %s vs %s" % (p.cu[: bs + 1], cu))
        self.assertTrue(bool((p.cache[bs:] == POISON).all()) and bool((p.cu[bs + 1:] == POISON).all()))
        live = pt != POISON
        got = p.pt_buf[:bs, : p.width]
        self.assertTrue(torch.equal(got[live], pt[live]), "live prefix differs")
        if full_width:
            self.assertTrue(bool((got[:, : p.max_pages] != POISON).all()), "full width left a column unwritten")
            self.assertTrue(bool((got[:, p.max_pages:] == POISON).all()), "wrote past max_seq_pages")
        else:
            self.assertTrue(bool((got[~live] == POISON).all()), "a dead column was written")
        self.assertTrue(bool((p.pt_buf[bs:] == POISON).all()) and bool((p.pt_buf[:, p.width:] == POISON).all()))

    def test_eager_current_stream(self):
        for ps in (1, 16, 64):
            with self.subTest(page_size=ps):
                p = self.make(ps=ps, seed=ps)
                self.call(p)
                self.check(p)

    def test_eager_side_stream(self):
        p = self.make(seed=3)
        s = side_stream(self.dev)
        with torch.cuda.stream(s):  # livebound picks up torch's current stream of the tensors' device = s
            self.call(p)
        s.synchronize()
        self.check(p)
        self.poison(p)
        synchronize(self.dev)
        self.call(p, stream=s)  # explicit stream argument
        s.synchronize()
        self.check(p)

    def test_full_width_twin(self):
        p = self.make(seed=4)
        self.call(p, variant="full_width")
        self.check(p, full_width=True)

    def test_bad_argument_raises(self):
        p = self.make(seed=5)
        with self.assertRaises(livebound.LbError) as cm:
            livebound.normal_decode_set_metadata(p.cache, p.cu, p.pt, p.r2t, p.rpi, p.max_pages, p.seq_lens, 0, 3)
        self.assertIn("page_size", cm.exception.message)

    def test_cuda_graph_capture_and_replay(self):
        p = self.make(bs=8, ps=16, max_pages=64, seed=6)
        # Warm-up outside capture (the first call per variant JIT-compiles the PTX).
        self.call(p)
        self.check(p)
        g = torch.cuda.CUDAGraph()
        self.poison(p)
        synchronize(self.dev)
        # The capture stream on the tensors' device (torch.cuda.graph's default capture stream
        # is made once per process on whatever device was current then).
        with torch.cuda.graph(g, stream=side_stream(self.dev)):  # the capture stream is torch's current stream
            self.call(p)
        gen = torch.Generator().manual_seed(7)
        ctx = p.max_pages * p.ps
        for step in range(5):
            # change the inputs in place (the graph captured their addresses)
            new_lens = torch.randint(0, ctx + 40, (p.bs,), generator=gen, dtype=torch.int64)
            if step == 1:
                new_lens.zero_()
            if step == 2:
                new_lens.fill_(ctx + 1000)
            p.seq_lens.copy_(new_lens)
            p.rpi.copy_(torch.randperm(p.r2t.shape[0], generator=gen)[: p.bs])
            self.poison(p)
            g.replay()
            with self.subTest(step=step, seq_lens=new_lens.tolist()):
                self.check(p)



# ---- K7 / K8 -----------------------------------------------------------------------------------
HQ, HKV, HD = 4, 2, 128
O_POISON, LSE_POISON = 123.0, -7777.0


def attention_reference(q, keys, vals, qpos, kpos, causal, window, sinks):
    """float64 softmax attention of one request in position space (spec §3.7.2 / §3.8 without
    a custom mask): q [E, Hq, D], keys/vals [N, Hkv, D]; key at position kp is visible to the
    query at position qp iff (not causal or kp <= qp) and (window <= 0 or |qp - kp| <= window,
    the upper side only for non-causal). Returns o [E, Hq, D] and lse [E, Hq]."""
    group = q.shape[1] // keys.shape[1]
    k = keys.double().repeat_interleave(group, dim=1)
    v = vals.double().repeat_interleave(group, dim=1)
    s = torch.einsum("mhd,nhd->hmn", q.double(), k) / (q.shape[2] ** 0.5)
    diff = qpos[:, None] - kpos[None, :]
    vis = torch.ones_like(diff, dtype=torch.bool)
    if causal:
        vis &= diff >= 0
    if window > 0:
        vis &= diff <= window
        if not causal:
            vis &= -diff <= window
    s = s.masked_fill(~vis[None], float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.double()[:, None, None].expand(-1, s.shape[1], 1)], dim=-1)
    lse = torch.logsumexp(s, dim=-1)  # [Hq, E]
    p = torch.exp(s - lse[..., None])[..., : keys.shape[0]]
    return torch.einsum("hmn,nhd->mhd", p, v), lse.transpose(0, 1)


class AttentionTorchCuda(unittest.TestCase):
    P = [5, 0, 70, 3]  # prefix lengths (request 2 spans several 32-key tiles)
    E = [4, 3, 40, 0]  # extend lengths (request 3 has no query row)

    @classmethod
    def setUpClass(cls):
        cls.dev = device_or_skip()

    def tensors(self, seed, unified):
        """One problem: query rows start at row 1 (row 0 and the last row belong to no
        request); keys in shuffled cache slots. unified: every request's list is its P
        prefix slots then its E extend slots, all in the cache (K8)."""
        g = torch.Generator().manual_seed(seed)
        d, bf = self.dev, torch.bfloat16
        P, E = self.P, self.E
        n_list = [p + e for p, e in zip(P, E)] if unified else P
        T, slots_used = sum(E) + 2, sum(n_list)
        num_slots = slots_used + 9
        t = type("Problem", (), {})()
        t.T = T
        t.qo = torch.tensor([1] + [1 + sum(E[: b + 1]) for b in range(len(E))], dtype=torch.int32, device=d)
        t.kvp = torch.tensor([0] + [sum(n_list[: b + 1]) for b in range(len(n_list))], dtype=torch.int32, device=d)
        t.kvi = torch.randperm(num_slots, generator=g)[:slots_used].to(torch.int64).to(d)
        t.q = torch.randn(T, HQ, HD, generator=g).to(d, bf)
        t.ke = torch.randn(T, HKV, HD, generator=g).to(d, bf)
        t.ve = torch.randn(T, HKV, HD, generator=g).to(d, bf)
        t.kb = torch.randn(num_slots, HKV, HD, generator=g).to(d, bf)
        t.vb = torch.randn(num_slots, HKV, HD, generator=g).to(d, bf)
        t.prefix_lens = torch.tensor(P, dtype=torch.int32, device=d)
        t.sinks = torch.linspace(-1.0, 1.0, HQ, dtype=torch.float32, device=d)
        t.o = torch.full((T, HQ, HD), O_POISON, dtype=bf, device=d)
        t.lse = torch.full((T, HQ), LSE_POISON, dtype=torch.float32, device=d)
        return t

    def reference(self, t, causal, window, sinks, unified):
        o = torch.full((t.T, HQ, HD), float("nan"), dtype=torch.float64, device=self.dev)
        lse = torch.full((t.T, HQ), float("nan"), dtype=torch.float64, device=self.dev)
        qo, kvp = t.qo.tolist(), t.kvp.tolist()
        for b, (P, E) in enumerate(zip(self.P, self.E)):
            if E == 0:
                continue
            q0, k0 = qo[b], kvp[b]
            if unified:
                slots = t.kvi[k0: k0 + P + E]
                keys, vals = t.kb[slots], t.vb[slots]
            else:
                slots = t.kvi[k0: k0 + P]
                keys = torch.cat([t.kb[slots], t.ke[q0: q0 + E]])
                vals = torch.cat([t.vb[slots], t.ve[q0: q0 + E]])
            qpos = torch.arange(P, P + E, device=self.dev)
            kpos = torch.arange(P + E, device=self.dev)
            o[q0: q0 + E], lse[q0: q0 + E] = attention_reference(t.q[q0: q0 + E], keys, vals, qpos, kpos, causal,
                                                                 window, sinks)
        return o, lse

    def check(self, t, o, want_o, lse=None, want_lse=None):
        synchronize(self.dev)
        rows = torch.zeros(t.T, dtype=torch.bool, device=self.dev)
        rows[t.qo[0].item(): t.qo[-1].item()] = True
        got = o.double()
        err = (got[rows] - want_o[rows]).abs().max().item()
        self.assertTrue(torch.allclose(got[rows], want_o[rows], atol=2e-2, rtol=2e-2), "o: max error %g" % err)
        self.assertTrue(bool((o[~rows] == O_POISON).all()), "a row outside the requests was written")
        if lse is not None:
            err = (lse.double()[rows] - want_lse[rows]).abs().max().item()
            self.assertTrue(torch.allclose(lse.double()[rows], want_lse[rows], atol=2e-2, rtol=2e-2),
                            "lse: max error %g" % err)
            self.assertTrue(bool((lse[~rows] == LSE_POISON).all()))

    def k7(self, t, causal, window, sinks, lse, **kw):
        livebound.extend_attention_fwd(t.q, t.ke, t.ve, t.o, t.kb, t.vb, t.qo, t.kvp, t.kvi, None, causal, None,
                                       max(self.E), 1.0, 1.0, sliding_window_size=window, sinks=sinks,
                                       lse_extend=lse, **kw)

    def k8(self, t, causal, window, sinks, **kw):
        livebound.extend_attention_fwd_unified(t.q, t.o, t.kb, t.vb, 1.0, 1.0, t.qo, t.kvp, t.kvi, t.prefix_lens,
                                               max(self.E), is_causal=causal, sliding_window_size=window,
                                               sinks=sinks, **kw)

    def test_k7_eager(self):
        for causal, window, with_sinks in ((True, -1, False), (True, 16, True)):
            with self.subTest(causal=causal, window=window, sinks=with_sinks):
                t = self.tensors(seed=20 + window, unified=False)
                sinks = t.sinks if with_sinks else None
                want_o, want_lse = self.reference(t, causal, window, sinks, unified=False)
                self.k7(t, causal, window, sinks, t.lse)
                self.check(t, t.o, want_o, t.lse, want_lse)
                bounded_o, bounded_lse = t.o.clone(), t.lse.clone()
                t.o.fill_(O_POISON)
                t.lse.fill_(LSE_POISON)
                self.k7(t, causal, window, sinks, t.lse, variant="full_width")
                synchronize(self.dev)
                self.assertTrue(torch.equal(t.o, bounded_o), "full width differs from bounded (o)")
                self.assertTrue(torch.equal(t.lse, bounded_lse), "full width differs from bounded (lse)")

    def test_k8_eager(self):
        for causal, window, with_sinks in ((True, -1, False), (True, 16, True)):
            with self.subTest(causal=causal, window=window, sinks=with_sinks):
                t = self.tensors(seed=40 + window, unified=True)
                sinks = t.sinks if with_sinks else None
                want_o, _ = self.reference(t, causal, window, sinks, unified=True)
                self.k8(t, causal, window, sinks)
                self.check(t, t.o, want_o)
                bounded_o = t.o.clone()
                t.o.fill_(O_POISON)
                self.k8(t, causal, window, sinks, variant="full_width")
                synchronize(self.dev)
                self.assertTrue(torch.equal(t.o, bounded_o), "full width differs from bounded")

    def test_bad_argument_raises(self):
        t = self.tensors(seed=60, unified=False)
        with self.assertRaises(livebound.LbError) as cm:
            self.k7(t, True, -1, None, None, sm_scale=-1.0)
        self.assertIn("sm_scale", cm.exception.message)
        u = self.tensors(seed=61, unified=True)
        with self.assertRaises(livebound.LbError) as cm:
            self.k8(u, True, -1, None, sm_scale=-1.0)
        self.assertIn("sm_scale", cm.exception.message)
        synchronize(self.dev)
        self.assertTrue(bool((t.o == O_POISON).all()) and bool((u.o == O_POISON).all()))

    def test_k7_cuda_graph(self):
        t = self.tensors(seed=70, unified=False)
        self.k7(t, True, 16, t.sinks, t.lse)  # warm-up outside capture (JIT-compiles the PTX)
        synchronize(self.dev)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=side_stream(self.dev)):
            self.k7(t, True, 16, t.sinks, t.lse)
        gen = torch.Generator().manual_seed(71)
        for step in range(2):
            t.q.copy_(torch.randn(t.q.shape, generator=gen).to(self.dev, torch.bfloat16))
            t.o.fill_(O_POISON)
            t.lse.fill_(LSE_POISON)
            g.replay()
            want_o, want_lse = self.reference(t, True, 16, t.sinks, unified=False)
            with self.subTest(step=step):
                self.check(t, t.o, want_o, t.lse, want_lse)


# ---- K2-K6 on the test device: test_kernels.py's numpy tests, every array on the GPU --------
K2_K6 = ("fused_dsa_decode_metadata", "fused_dsa_target_verify_metadata", "update_trtllm_mha_graph_metadata",
         "get_k_and_s", "transform_index_page_table_prefill")


def on_device(fn, dev):
    """fn (a K2-K6 function of one of the bindings) called with every numpy array argument
    copied to a torch tensor on `dev` (one tensor per array, so that an array passed twice stays
    one tensor), every tensor copied back into its array after the call (the kernel's writes
    land in the arrays, as on the CPU), and a returned tensor given back as its array. With a
    CPU `dev` each tensor is torch.from_numpy of its array, the same memory."""

    def call(*args, **kwargs):
        made = {}

        def tensor(x):
            if np is not None and isinstance(x, np.ndarray):
                if id(x) not in made:
                    made[id(x)] = (x, torch.from_numpy(x).to(dev))
                return made[id(x)][1]
            return x

        result = fn(*[tensor(a) for a in args], **{k: tensor(v) for k, v in kwargs.items()})
        if dev.type != "cpu":  # (on the CPU each tensor is its array's memory: nothing to copy)
            synchronize(dev)
            for array, t in made.values():
                array[...] = t.cpu().numpy()
        array_of = {id(t): a for a, t in made.values()}
        if isinstance(result, tuple):
            return tuple(array_of.get(id(r), r) for r in result)
        return array_of.get(id(result), result)

    return call


class _KernelsOnDevice:
    """test_kernels' `livebound`, with K2-K6 taken from `functions` and run on `dev`."""

    def __init__(self, real, functions, dev):
        self._real = real
        for name in K2_K6:
            setattr(self, name, on_device(functions[name], dev))

    def __getattr__(self, name):
        return getattr(self._real, name)


def kernel_classes_on(prefix, functions, device, decorate=lambda cls: cls, module=__name__):
    """test_kernels' K2-K6 classes again, named <prefix><class>, each kernel taken from
    `functions` (a callable returning {name: function}, called in setUp) and run on_device on
    `device()` (called in setUpClass; it may skip the class). `module`: the name of the module
    whose globals take them (their __module__, which unittest reports)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import test_kernels  # its numpy problems and checks

    out = {}

    @classmethod
    def setUpClass(cls):
        cls.dev = device()

    def setUp(self):
        saved = test_kernels.livebound
        test_kernels.livebound = _KernelsOnDevice(saved, functions(), self.dev)
        self.addCleanup(setattr, test_kernels, "livebound", saved)

    for name in dir(test_kernels):
        cls = getattr(test_kernels, name)
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase) and name[:2] in ("K2", "K3", "K4", "K5", "K6"):
            made = type(prefix + name, (cls,), {"setUpClass": setUpClass, "setUp": setUp, "__module__": module})
            out[prefix + name] = decorate(test_kernels.needs_numpy(made))
    return out


def kernel_classes_on_test_device(prefix, functions, decorate=lambda cls: cls, module=__name__):
    """kernel_classes_on the test device, skipped like the classes above."""
    return kernel_classes_on(prefix, functions, device_or_skip, decorate, module)


globals().update(kernel_classes_on_test_device("Cuda", lambda: {name: getattr(livebound, name) for name in K2_K6}))


if __name__ == "__main__":
    unittest.main()
