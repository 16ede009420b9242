"""K7 extend_attention_fwd and K8 extend_attention_fwd_unified through the Python layer on
tiny CPU problems (numpy arrays; fp16 as numpy.float16, bf16 as uint16 bit patterns wrapped
with livebound.as_bfloat16), checked against a float64 numpy reference of the spec
(kernels.md §3.7 / §3.8) over the same rounded inputs: GQA (Hq = 2 Hkv), causal and not,
sliding window, sinks, scales, logit cap, xai temperature, a custom mask, LSE; rows outside
[qo_indptr[0], qo_indptr[B]) untouched; the bounded kernel bit-identical to its full-width
twin. Plus errors: the C ABI's message names the bad argument and nothing is written."""

import math
import unittest

from _common import livebound, needs_numpy, np

HQ, HKV, D = 4, 2, 64  # CPU builds have fp16 and bf16 for Lq = Lv = 64 with int64 kv_indices
ATOL = RTOL = 1e-2
O_POISON = 123.0  # exact in fp16 and bf16
LSE_POISON = -7777.0


# ---- 16-bit floats ---------------------------------------------------------------------------
def bf16_bits(x):
    """float values -> bfloat16 bit patterns (uint16), round to nearest even."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class Half:
    """One 16-bit dtype: store() rounds float values into the array livebound gets (and
    returns what the kernel sees, in float64); values() reads an array back."""

    def __init__(self, name):
        self.name = name

    def store(self, x):
        if self.name == "fp16":
            a = np.asarray(x, dtype=np.float16)
            return a, a.astype(np.float64)
        bits = bf16_bits(x)
        return bits, bf16_values(bits)

    def arg(self, a):
        return livebound.as_bfloat16(a) if self.name == "bf16" else a

    def values(self, a):
        return a.astype(np.float64) if self.name == "fp16" else bf16_values(a)

    def poisoned(self, shape):
        return self.store(np.full(shape, O_POISON))[0]


FP16, BF16 = Half("fp16"), Half("bf16")


# ---- the spec in float64 ---------------------------------------------------------------------
def _softmax_out(s, vis, vals, sink):
    """(o, lse) of one query row and head: scores s[keys], visible vis[keys], values
    vals[keys, Lv] (already scaled), optional sink logit."""
    terms = [s[vis]] + ([np.array([sink])] if sink is not None else [])
    allv = np.concatenate(terms)
    if allv.size == 0:
        return None, None
    M = allv.max()
    p = np.exp(s[vis] - M)
    den = p.sum() + (math.exp(sink - M) if sink is not None else 0.0)
    return (p[:, None] * vals[vis]).sum(0) / den, math.log(den) + M


def _cap(s, logit_cap):
    return logit_cap * np.tanh(s / logit_cap) if logit_cap > 0 else s


def reference_k7(p, causal, W, sm_scale, logit_cap, k_scale, v_scale, sinks, xai, mask=None, mask_indptr=None,
                 skip_prefix_mask=True):
    """Spec §3.7.2-3 (header extend_attention.h): o [T, Hq, D] and lse [T, Hq] for the rows
    of the requests (NaN elsewhere); a row that sees nothing and has no sink: o = 0, lse = -inf."""
    T = p.q.shape[0]
    o = np.full((T, HQ, D), np.nan)
    lse = np.full((T, HQ), np.nan)
    scale = sm_scale if sm_scale else 1.0 / math.sqrt(D)
    for b in range(len(p.E)):
        q0, E, k0, P = p.qo[b], p.E[b], p.kvp[b], p.P[b]
        slots = p.kvi[k0:k0 + P]
        for m in range(E):
            pos = P + m
            j = np.arange(P)
            n = np.arange(E)
            vis_p = np.ones(P, bool) if W <= 0 else (pos - j <= W)
            # (a custom mask replaces the causal rule)
            vis_e = (n <= m) if causal and mask is None else np.ones(E, bool)
            if W > 0:
                vis_e &= (m - n <= W) & (True if causal else (n - m <= W))
            if mask is not None:
                row = mask[mask_indptr[b] + m * (P + E): mask_indptr[b] + (m + 1) * (P + E)].astype(bool)
                if not skip_prefix_mask:
                    vis_p &= row[:P]
                vis_e &= row[P:]
            for h in range(HQ):
                kvh = h // (HQ // HKV)
                qv = p.qf[q0 + m, h]
                s_p = _cap(p.kbf[slots, kvh] @ qv * scale * k_scale, logit_cap)
                s_e = _cap(p.kef[q0:q0 + E, kvh] @ qv * scale, logit_cap)
                if xai > 0 and pos > xai:
                    f = math.log2(pos) / math.log2(xai)
                    s_p, s_e = s_p * f, s_e * f
                s = np.concatenate([s_p, s_e])
                vis = np.concatenate([vis_p, vis_e])
                vals = np.concatenate([p.vbf[slots, kvh] * v_scale, p.vef[q0:q0 + E, kvh]])
                got_o, got_lse = _softmax_out(s, vis, vals, None if sinks is None else float(sinks[h]))
                if got_o is None:
                    o[q0 + m, h], lse[q0 + m, h] = 0.0, -np.inf
                else:
                    o[q0 + m, h], lse[q0 + m, h] = got_o, got_lse
    return o, lse


def reference_k8(u, causal, W, sm_scale, logit_cap, k_scale, v_scale, sinks, xai, mask=None, mask_indptr=None):
    """Spec §3.8 (header extend_attention.h): o [T, Hq, D] for the rows of the requests."""
    T = u.q.shape[0]
    o = np.full((T, HQ, D), np.nan)
    scale = sm_scale if sm_scale else 1.0 / math.sqrt(D)
    for b in range(len(u.E)):
        q0, E, k0, P = u.qo[b], u.E[b], u.kvp[b], u.P[b]
        N = P + E
        slots = u.kvi[k0:k0 + N]
        n = np.arange(N)
        for m in range(E):
            pos = P + m
            if mask is not None:
                vis = mask[mask_indptr[b] + m * N: mask_indptr[b] + (m + 1) * N].astype(bool)
            else:
                vis = (n <= pos) if causal else np.ones(N, bool)
            if W > 0:
                vis = vis & (pos - n <= W) & (True if causal else (n - pos <= W))
            for h in range(HQ):
                kvh = h // (HQ // HKV)
                s = _cap(u.kbf[slots, kvh] @ u.qf[q0 + m, h] * (scale * k_scale), logit_cap)
                if xai > 0 and pos >= xai:
                    s = s * (xai / (pos + 1))
                got, _ = _softmax_out(s, vis, u.vbf[slots, kvh], None if sinks is None else float(sinks[h]))
                o[q0 + m, h] = got * v_scale
    return o


# ---- problems --------------------------------------------------------------------------------
class Problem:
    """K7: requests with prefix lengths P and extend lengths E; query rows start at row 1
    (row 0 and the last row belong to no request); prefix keys in shuffled cache slots."""

    def __init__(self, half, seed, P=(5, 0, 9, 3), E=(4, 3, 6, 0)):
        rng = np.random.default_rng(seed)
        self.half, self.P, self.E = half, list(P), list(E)
        B, T = len(P), sum(E) + 2
        self.qo = np.array([1] + list(1 + np.cumsum(E)), dtype=np.int32)
        self.kvp = np.array([0] + list(np.cumsum(P)), dtype=np.int32)
        num_slots = sum(P) + 7
        self.kvi = rng.permutation(num_slots)[: sum(P)].astype(np.int64)
        self.q, self.qf = half.store(rng.standard_normal((T, HQ, D)))
        self.ke, self.kef = half.store(rng.standard_normal((T, HKV, D)))
        self.ve, self.vef = half.store(rng.standard_normal((T, HKV, D)))
        self.kb, self.kbf = half.store(rng.standard_normal((num_slots, HKV, D)))
        self.vb, self.vbf = half.store(rng.standard_normal((num_slots, HKV, D)))
        self.max_len = max(E)
        self.B, self.T = B, T


class UnifiedProblem:
    """K8: every key in the cache; request b's list is its P prefix slots, then its E extend
    slots (shuffled slots, as build_unified_kv_indices would give for a paged cache)."""

    def __init__(self, half, seed, P=(5, 0, 9, 3), E=(4, 3, 6, 0)):
        rng = np.random.default_rng(seed)
        self.half, self.P, self.E = half, list(P), list(E)
        N = [p + e for p, e in zip(P, E)]
        T = sum(E) + 2
        self.qo = np.array([1] + list(1 + np.cumsum(E)), dtype=np.int32)
        self.kvp = np.array([0] + list(np.cumsum(N)), dtype=np.int32)
        self.prefix_lens = np.array(P, dtype=np.int32)
        num_slots = sum(N) + 5
        self.kvi = rng.permutation(num_slots)[: sum(N)].astype(np.int64)
        self.q, self.qf = half.store(rng.standard_normal((T, HQ, D)))
        self.kb, self.kbf = half.store(rng.standard_normal((num_slots, HKV, D)))
        self.vb, self.vbf = half.store(rng.standard_normal((num_slots, HKV, D)))
        self.max_len = max(E)
        self.B, self.T = len(P), T


def causal_mask(P, E, rng, keep=0.6):
    """A flat uint8 mask: request b's E x (P + E) block, random, never n > m in the extend
    part, the diagonal always visible (a tree mask's shape); and its int64 mask_indptr."""
    blocks, starts = [], [0]
    for p, e in zip(P, E):
        blk = (rng.random((e, p + e)) < keep).astype(np.uint8)
        for m in range(e):
            blk[m, p + m + 1:] = 0
            blk[m, p + m] = 1
        blocks.append(blk.ravel())
        starts.append(starts[-1] + blk.size)
    return np.concatenate(blocks + [np.zeros(3, np.uint8)]), np.array(starts, dtype=np.int64)


def span_mask(P, E, spans):
    """Gemma 4's image spans: request b's E x (P + E) block sees key position <= query
    position, or both in one of its spans (b, first position, length), keys above the
    diagonal included; and its int64 mask_indptr."""
    blocks, starts = [], [0]
    for b, (p, e) in enumerate(zip(P, E)):
        span = np.full(p + e, -1)
        for i, (sb, first, length) in enumerate(spans):
            if sb == b:
                span[first:first + length] = i
        qpos = p + np.arange(e)[:, None]
        kpos = np.arange(p + e)[None, :]
        blk = ((kpos <= qpos) | ((span[kpos] >= 0) & (span[kpos] == span[qpos]))).astype(np.uint8)
        blocks.append(blk.ravel())
        starts.append(starts[-1] + blk.size)
    return np.concatenate(blocks), np.array(starts, dtype=np.int64)


def _rows(p):
    rows = np.zeros(p.T, bool)
    rows[p.qo[0]:p.qo[-1]] = True
    return rows


@needs_numpy
class K7ExtendAttention(unittest.TestCase):
    CASES = [
        # (name, half, causal, W, sinks, sm_scale, logit_cap, k_scale, v_scale, xai, with_lse)
        ("fp16 causal", FP16, True, -1, False, None, 0.0, 1.0, 1.0, -1, True),
        ("bf16 causal window sinks scales cap xai", BF16, True, 3, True, 0.2, 5.0, 0.5, 1.5, 4, True),
        ("fp16 non-causal window, no lse", FP16, False, 2, False, None, 0.0, 1.0, 1.0, -1, False),
        ("bf16 non-causal sinks", BF16, False, -1, True, None, 0.0, 1.0, 1.0, -1, True),
    ]

    def run_case(self, p, variant, causal, W, sinks, sm_scale, logit_cap, k_scale, v_scale, xai, with_lse,
                 mask=None, mask_indptr=None, skip_prefix_mask=True):
        half = p.half
        o = half.poisoned((p.T, HQ, D))
        lse = np.full((p.T, HQ), LSE_POISON, dtype=np.float32) if with_lse else None
        ret = livebound.extend_attention_fwd(
            half.arg(p.q), half.arg(p.ke), half.arg(p.ve), half.arg(o), half.arg(p.kb), half.arg(p.vb),
            p.qo, p.kvp, p.kvi, mask, causal, mask_indptr, p.max_len, k_scale, v_scale,
            sm_scale=sm_scale, logit_cap=logit_cap, skip_prefix_custom_mask=skip_prefix_mask,
            sliding_window_size=W, sinks=sinks, xai_temperature_len=xai, lse_extend=lse, variant=variant)
        self.assertIsNone(ret)
        return o, lse

    def check(self, p, o, lse, want_o, want_lse):
        rows = _rows(p)
        got = p.half.values(o)
        np.testing.assert_allclose(got[rows], want_o[rows], atol=ATOL, rtol=RTOL)
        self.assertTrue((got[~rows] == O_POISON).all(), "a row outside the requests was written")
        if lse is not None:
            np.testing.assert_allclose(lse[rows], want_lse[rows], atol=ATOL, rtol=RTOL)
            self.assertTrue((lse[~rows] == LSE_POISON).all())

    def test_against_reference(self):
        for i, (name, half, causal, W, with_sinks, sm_scale, cap, ks, vs, xai, with_lse) in enumerate(self.CASES):
            with self.subTest(case=name):
                p = Problem(half, seed=70 + i)
                sinks = np.linspace(-1.0, 1.0, HQ).astype(np.float32) if with_sinks else None
                want_o, want_lse = reference_k7(p, causal, W, sm_scale, cap, ks, vs, sinks, xai)
                outs = {}
                for variant in ("bounded", "full_width"):
                    o, lse = self.run_case(p, variant, causal, W, sinks, sm_scale, cap, ks, vs, xai, with_lse)
                    self.check(p, o, lse, want_o, want_lse)
                    outs[variant] = (o, lse)
                np.testing.assert_array_equal(outs["bounded"][0], outs["full_width"][0], "bounded vs full width")
                if with_lse:
                    np.testing.assert_array_equal(outs["bounded"][1], outs["full_width"][1])

    def test_custom_mask(self):
        rng = np.random.default_rng(77)
        p = Problem(FP16, seed=78)
        mask, mask_indptr = causal_mask(p.P, p.E, rng)
        for skip_prefix_mask in (True, False):
            with self.subTest(skip_prefix_custom_mask=skip_prefix_mask):
                want_o, want_lse = reference_k7(p, True, -1, None, 0.0, 1.0, 1.0, None, -1, mask, mask_indptr,
                                                skip_prefix_mask)
                # a bool mask (torch passes bool) converts as uint8
                o, lse = self.run_case(p, "bounded", True, -1, None, None, 0.0, 1.0, 1.0, -1, True,
                                       mask.astype(bool), mask_indptr, skip_prefix_mask)
                self.check(p, o, lse, want_o, want_lse)

    def test_span_mask_decides_alone(self):
        # Keys above the diagonal inside a span are seen under is_causal (the mask replaces
        # the causal rule): the same output as is_causal=False; mask_indptr int32 or int64.
        p = Problem(FP16, seed=80)  # (fp16: the TVM-FFI suite reruns this test, and numpy has no bf16)
        spans = [(b, max(p.P[b] - 2, 0), 5) for b in range(p.B)]
        mask, mask_indptr = span_mask(p.P, p.E, spans)
        want_o, want_lse = reference_k7(p, True, -1, None, 0.0, 1.0, 1.0, None, -1, mask, mask_indptr, False)
        outs = []
        for causal in (True, False):
            for indptr in (mask_indptr, mask_indptr.astype(np.int32)):
                with self.subTest(is_causal=causal, mask_indptr=indptr.dtype.name):
                    o, lse = self.run_case(p, "bounded", causal, -1, None, None, 0.0, 1.0, 1.0, -1, True,
                                           mask, indptr, False)
                    self.check(p, o, lse, want_o, want_lse)
                    outs.append(o)
        for o in outs[1:]:
            np.testing.assert_array_equal(o, outs[0])

    def test_mask_indptr_ignored_without_mask(self):
        # SGLang's kernel ignores mask_indptr when custom_mask is None; so does the wrapper.
        p = Problem(FP16, seed=79)
        want_o, want_lse = reference_k7(p, True, -1, None, 0.0, 1.0, 1.0, None, -1)
        o, lse = self.run_case(p, "bounded", True, -1, None, None, 0.0, 1.0, 1.0, -1, True,
                               None, np.zeros(p.B + 1, np.int64))
        self.check(p, o, lse, want_o, want_lse)


@needs_numpy
class K8ExtendAttentionUnified(unittest.TestCase):
    CASES = [
        # (name, half, causal, W, sinks, sm_scale, logit_cap, k_scale, v_scale, xai)
        ("fp16 causal", FP16, True, -1, False, None, 0.0, 1.0, 1.0, -1),
        ("bf16 causal window sinks scales cap xai", BF16, True, 3, True, 0.2, 5.0, 0.5, 1.5, 6),
        ("fp16 non-causal window", FP16, False, 4, False, None, 0.0, 1.0, 1.0, -1),
    ]

    def run_case(self, u, variant, causal, W, sinks, sm_scale, logit_cap, k_scale, v_scale, xai,
                 mask=None, mask_indptr=None):
        half = u.half
        o = half.poisoned((u.T, HQ, D))
        ret = livebound.extend_attention_fwd_unified(
            half.arg(u.q), half.arg(o), half.arg(u.kb), half.arg(u.vb), k_scale, v_scale, u.qo, u.kvp, u.kvi,
            u.prefix_lens, u.max_len, custom_mask=mask, mask_indptr=mask_indptr, sm_scale=sm_scale,
            logit_cap=logit_cap, is_causal=causal, sliding_window_size=W, sinks=sinks, xai_temperature_len=xai,
            variant=variant)
        self.assertIsNone(ret)
        return o

    def check(self, u, o, want):
        rows = _rows(u)
        got = u.half.values(o)
        np.testing.assert_allclose(got[rows], want[rows], atol=ATOL, rtol=RTOL)
        self.assertTrue((got[~rows] == O_POISON).all(), "a row outside the requests was written")

    def test_against_reference(self):
        for i, (name, half, causal, W, with_sinks, sm_scale, cap, ks, vs, xai) in enumerate(self.CASES):
            with self.subTest(case=name):
                u = UnifiedProblem(half, seed=80 + i)
                sinks = np.linspace(-1.0, 1.0, HQ).astype(np.float32) if with_sinks else None
                want = reference_k8(u, causal, W, sm_scale, cap, ks, vs, sinks, xai)
                outs = {}
                for variant in ("bounded", "full_width"):
                    outs[variant] = self.run_case(u, variant, causal, W, sinks, sm_scale, cap, ks, vs, xai)
                    self.check(u, outs[variant], want)
                np.testing.assert_array_equal(outs["bounded"], outs["full_width"], "bounded vs full width")

    def test_custom_mask(self):
        rng = np.random.default_rng(88)
        u = UnifiedProblem(BF16, seed=89)
        mask, mask_indptr = causal_mask(u.P, u.E, rng)
        want = reference_k8(u, True, -1, None, 0.0, 1.0, 1.0, None, -1, mask, mask_indptr)
        o = self.run_case(u, "bounded", True, -1, None, None, 0.0, 1.0, 1.0, -1, mask, mask_indptr)
        self.check(u, o, want)


@needs_numpy
class AttentionErrors(unittest.TestCase):
    def k7(self, p, o, **over):
        kw = dict(q_extend=p.q, k_extend=p.ke, v_extend=p.ve, o_extend=o, k_buffer=p.kb, v_buffer=p.vb,
                  qo_indptr=p.qo, kv_indptr=p.kvp, kv_indices=p.kvi, custom_mask=None, is_causal=True,
                  mask_indptr=None, max_len_extend=p.max_len, k_scale=1.0, v_scale=1.0)
        kw.update(over)
        livebound.extend_attention_fwd(**kw)

    def test_k7_c_abi_names_the_argument(self):
        p = Problem(FP16, seed=90)
        o = FP16.poisoned((p.T, HQ, D))
        bad_indices = p.kvi.copy()
        bad_indices[2] = p.kb.shape[0]  # one past the cache
        for over, name in [
            (dict(sm_scale=-1.0), "sm_scale"),
            (dict(kv_indices=bad_indices), "kv_indices"),
            (dict(max_len_extend=p.max_len - 1), "max_len_extend"),
            (dict(k_extend=p.ke[:, :1].repeat(3, axis=1)), "k_extend"),  # Hkv = 3 does not divide Hq = 4
            (dict(q_extend=p.q.astype(np.float32)), "q_extend"),  # float32 converts; K7 wants fp16/bf16
            (dict(o_extend=livebound.as_bfloat16(BF16.poisoned((p.T, HQ, D)))), "o_extend"),  # dtype mismatch
        ]:
            with self.subTest(argument=name):
                with self.assertRaises(livebound.LbError) as cm:
                    self.k7(p, o, **over)
                e = cm.exception
                self.assertEqual(e.status, livebound.LB_ERROR_INVALID_ARGUMENT)
                self.assertIn(name, e.message)
                self.assertEqual(e.function, "lb_extend_attention_fwd")
                self.assertTrue((o == O_POISON).all(), "a rejected call wrote o_extend")

    def test_k8_prefix_lens_inconsistent(self):
        u = UnifiedProblem(FP16, seed=91)
        o = FP16.poisoned((u.T, HQ, D))
        bad = u.prefix_lens.copy()
        bad[0] += 1  # N_0 != P_0 + E_0
        with self.assertRaises(livebound.LbError) as cm:
            livebound.extend_attention_fwd_unified(u.q, o, u.kb, u.vb, 1.0, 1.0, u.qo, u.kvp, u.kvi, bad, u.max_len)
        self.assertIn("prefix_lens", cm.exception.message)
        self.assertEqual(cm.exception.function, "lb_extend_attention_fwd_unified")
        self.assertTrue((o == O_POISON).all())

    def test_python_side_errors(self):
        p = Problem(FP16, seed=92)
        o = FP16.poisoned((p.T, HQ, D))
        with self.assertRaises(TypeError) as cm:
            self.k7(p, o, q_extend=p.q.astype(np.float64))
        self.assertIn("'q_extend'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            self.k7(p, o, sm_scale="0.1")
        self.assertIn("'sm_scale'", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            self.k7(p, o, score_mod=lambda s: s)
        self.assertIn("'score_mod'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            self.k7(p, o, custom_mask=np.ones(4, dtype=np.float32) > 0, mask_indptr=np.zeros(p.B + 1, np.float64))
        self.assertIn("'mask_indptr'", str(cm.exception))
        with self.assertRaises(TypeError):
            livebound.as_bfloat16(np.zeros(3, np.float32))
        self.assertTrue((o == O_POISON).all())


if __name__ == "__main__":
    unittest.main()
