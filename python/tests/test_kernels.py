"""One smoke call per kernel K2-K6 on tiny CPU numpy inputs, each checking at least one
property against numpy (K1 has its own module, test_k1)."""

import unittest

from _common import POISON, livebound, needs_numpy, np, poisoned


@needs_numpy
class K2FusedDsaDecodeMetadata(unittest.TestCase):
    def test_scans_and_tables(self):
        rng = np.random.default_rng(12)
        seq_lens = np.array([5, 0, 19, 9], dtype=np.int64)
        rpi = np.array([2, 0, 3, 1], dtype=np.int64)
        max_len, topk, rps = 16, 8, 4
        r2t = rng.integers(0, 1000, size=(4, 20)).astype(np.int32)
        cache, cu, dcache, dcu = poisoned(4), poisoned(5), poisoned(4), poisoned(5)
        pt1, real = poisoned((4, max_len)), poisoned((4, max_len // rps))
        livebound.fused_dsa_decode_metadata(seq_lens, rpi, r2t, cache, cu, pt1, dcache, dcu, real,
                                            bs=4, max_len=max_len, dsa_index_topk=topk, real_page_size=rps)
        np.testing.assert_array_equal(cache, seq_lens)
        np.testing.assert_array_equal(cu, np.concatenate([[0], np.cumsum(seq_lens)]))
        np.testing.assert_array_equal(dcache, np.minimum(seq_lens, topk))
        np.testing.assert_array_equal(dcu, np.concatenate([[0], np.cumsum(np.minimum(seq_lens, topk))]))
        for b in range(4):
            live = min(int(seq_lens[b]), max_len)
            np.testing.assert_array_equal(pt1[b, :live], r2t[rpi[b], :live], "row %d" % b)
            self.assertTrue((pt1[b, live:] == POISON).all(), "row %d past the live prefix" % b)
            for j in range(max_len // rps):
                want = r2t[rpi[b], j * rps] // rps if j * rps < live else POISON
                self.assertEqual(real[b, j], want, "real_page_table[%d, %d]" % (b, j))

    def test_bs_selects_a_prefix(self):
        seq_lens = np.array([3, 4, 99], dtype=np.int32)  # a padded graph buffer: entry 2 unused
        rpi = np.array([0, 1, 7], dtype=np.int32)
        r2t = np.arange(2 * 8, dtype=np.int32).reshape(2, 8)
        cache, cu, dcache, dcu, pt1 = poisoned(3), poisoned(4), poisoned(3), poisoned(4), poisoned((3, 8))
        livebound.fused_dsa_decode_metadata(seq_lens, rpi, r2t, cache, cu, pt1, dcache, dcu, pt1, 2, 8, 64, 1)
        self.assertEqual(list(cu), [0, 3, 7, POISON])
        self.assertTrue((pt1[2] == POISON).all())


@needs_numpy
class K3FusedDsaTargetVerifyMetadata(unittest.TestCase):
    def test_expanded_lengths(self):
        bs, next_n, width = 3, 2, 12
        seq_lens = np.array([4, 0, 7], dtype=np.int64)
        rpi = np.array([1, 2, 0], dtype=np.int64)
        r2t = np.arange(3 * width, dtype=np.int32).reshape(3, width)
        E = bs * next_n
        cache, cu = poisoned(bs), poisoned(bs + 1)
        pt1, sexp, dcache, dcu = poisoned((E, width)), poisoned(E), poisoned(E), poisoned(E + 1)
        ctx2d = poisoned((bs, next_n))
        livebound.fused_dsa_target_verify_metadata(
            seq_lens, rpi, r2t, cache, cu, pt1, sexp, dcache, dcu, None, bs, width, 3, 1, next_n,
            paged_mqa_ctx_lens_2d=ctx2d)
        np.testing.assert_array_equal(cache, seq_lens + next_n)
        want_exp = np.array([s + d + 1 for s in seq_lens for d in range(next_n)])
        np.testing.assert_array_equal(sexp, want_exp)
        np.testing.assert_array_equal(dcache, np.minimum(want_exp, 3))
        np.testing.assert_array_equal(ctx2d, np.repeat((seq_lens + next_n)[:, None], next_n, axis=1))
        for e in range(E):
            r = e // next_n
            live = min(int(seq_lens[r]) + next_n, width)
            np.testing.assert_array_equal(pt1[e, :live], r2t[rpi[r], :live])
            self.assertTrue((pt1[e, live:] == POISON).all())


@needs_numpy
class K4UpdateTrtllmMhaGraphMetadata(unittest.TestCase):
    def test_page_table_and_cumsum(self):
        rng = np.random.default_rng(44)
        bs, ps, max_pages = 3, 4, 5
        seq_lens = np.array([6, 1, 30], dtype=np.int32)
        rpi = np.array([2, 0, 1], dtype=np.int32)
        r2t = rng.integers(0, 512, size=(3, ps * max_pages + 8)).astype(np.int32)
        qlens = np.array([1, 2, 3], dtype=np.int32)
        cache, cu_k, cu_q, pt = poisoned(bs), poisoned(bs + 1), poisoned(bs + 1), poisoned((bs, max_pages))
        livebound.update_trtllm_mha_graph_metadata(
            req_pool_indices=rpi, seq_lens=seq_lens, req_to_token=r2t, cache_seqlens=cache, cu_seqlens_k=cu_k,
            page_table=pt, bs=bs, seqlen_offset=1, max_seq_pages=max_pages, page_size=ps,
            cu_seqlens_q=cu_q, qlens=qlens, q_mode=livebound.Q_MODE_CUMSUM)
        L = seq_lens + 1
        np.testing.assert_array_equal(cache, L)
        self.assertEqual(cu_k[0], POISON, "cu_seqlens_k[0] is not written (SGLang's contract)")
        np.testing.assert_array_equal(cu_k[1:], np.cumsum(L))
        np.testing.assert_array_equal(cu_q[1:], np.cumsum(qlens))
        for i in range(bs):
            live = min(-(-int(L[i]) // ps), max_pages)
            for p in range(max_pages):
                want = r2t[rpi[i], p * ps] // ps if p < live else POISON
                self.assertEqual(pt[i, p], want, "page_table[%d, %d]" % (i, p))


@needs_numpy
class K5GetKAndS(unittest.TestCase):
    def test_gather(self):
        rng = np.random.default_rng(55)
        D, ps, num_pages = 128, 4, 6
        seq_lens = np.array([3, 0, 6], dtype=np.int64)
        total = int(seq_lens.sum())
        page_indices = np.array([[5, 0], [1, 1], [2, 4]], dtype=np.int32)
        buf = rng.integers(0, 256, size=(num_pages, ps * (D + 4))).astype(np.uint8)
        k_out = np.full((total + 2, D), 0xAB, dtype=np.uint8)
        s_out = np.full((total + 2, 4), 0xAB, dtype=np.uint8)
        got = livebound.get_k_and_s(buf, page_indices, seq_lens, total, 8, ps, D, k_out=k_out, s_out=s_out)
        self.assertIs(got[0], k_out)
        self.assertIs(got[1], s_out)
        row = 0
        for b, n in enumerate(seq_lens):
            for t in range(int(n)):
                pg, j = page_indices[b, t // ps], t % ps
                np.testing.assert_array_equal(k_out[row], buf[pg, j * D:(j + 1) * D], "k row %d" % row)
                np.testing.assert_array_equal(s_out[row], buf[pg, ps * D + 4 * j: ps * D + 4 * j + 4])
                row += 1
        self.assertTrue((k_out[total:] == 0xAB).all() and (s_out[total:] == 0xAB).all())


@needs_numpy
class K6TransformIndexPageTablePrefill(unittest.TestCase):
    def reference(self, page_table, topk, extend_lens, out_rows, expanded=False):
        want = np.full((out_rows, topk.shape[1]), -1, dtype=np.int32)
        t = 0
        for i, n in enumerate(extend_lens):
            for _ in range(n):
                row = t if expanded else i
                idx = topk[t]
                want[t] = np.where(idx >= 0, page_table[row, np.maximum(idx, 0)], -1)
                t += 1
        return want

    def test_transform(self):
        rng = np.random.default_rng(66)
        page_table = rng.integers(0, 10000, size=(2, 10)).astype(np.int32)
        extend_lens = [2, 3]
        topk = rng.integers(-1, 10, size=(5, 3)).astype(np.int32)
        result = poisoned((7, 4))
        got = livebound.transform_index_page_table_prefill(page_table, topk, extend_lens, output_num_tokens=6,
                                                           result=result)
        self.assertIs(got, result)
        np.testing.assert_array_equal(result[:6, :3], self.reference(page_table, topk, extend_lens, 6))
        self.assertTrue((result[6] == POISON).all() and (result[:, 3] == POISON).all())

    def test_expanded_with_explicit_cu_seqlens_q(self):
        rng = np.random.default_rng(67)
        page_table = rng.integers(0, 10000, size=(4, 6)).astype(np.int32)
        topk = rng.integers(-1, 6, size=(4, 2)).astype(np.int32)
        cu = np.array([0, 1, 4], dtype=np.int32)
        result = poisoned((4, 2))
        livebound.transform_index_page_table_prefill(page_table, topk, None, page_table_is_expanded=True,
                                                     cu_seqlens_q=cu, result=result, num_tokens=4, max_extend_len=3)
        np.testing.assert_array_equal(result, self.reference(page_table, topk, [1, 3], 4, expanded=True))


if __name__ == "__main__":
    unittest.main()
