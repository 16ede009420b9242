"""K1 through the Python layer on torch CUDA tensors (for the GPU machine: python3 with
torch, liblivebound.so built with CUDA named by LIVEBOUND_LIB; no Halide needed).

  - eager calls on torch's current stream (and on an explicit side stream) against a torch
    reference: scalars in full, live prefix exact, every dead column still poisoned;
  - the full-width twin: same live prefix, every column below the width written;
  - torch.cuda.graph capture of one call, replayed with seq_lens (and req_pool_indices)
    changed in place between replays.

Skips without torch or a CUDA device, unless LIVEBOUND_REQUIRE_CUDA=1 (run_gpu_check.sh
sets it), which turns the skip into a failure.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import livebound  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

POISON = -7777
REQUIRE = os.environ.get("LIVEBOUND_REQUIRE_CUDA") == "1"


def _why_not():
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    if not livebound.cuda_device_available(torch.cuda.current_device()):
        return "liblivebound.so cannot use CUDA device %d (%s)" % (torch.cuda.current_device(), livebound.last_error())
    return None


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
        why = _why_not()
        if why:
            if REQUIRE:
                raise RuntimeError("LIVEBOUND_REQUIRE_CUDA=1 but " + why)
            raise unittest.SkipTest(why)
        cls.dev = torch.device("cuda", torch.cuda.current_device())

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
        torch.cuda.synchronize()
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
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # livebound picks up torch's current stream = s
            self.call(p)
        s.synchronize()
        self.check(p)
        self.poison(p)
        torch.cuda.synchronize()
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
        torch.cuda.synchronize()
        with torch.cuda.graph(g):  # capture runs on a side stream: torch's current stream
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


if __name__ == "__main__":
    unittest.main()
