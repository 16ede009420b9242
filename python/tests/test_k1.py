"""K1 normal_decode_set_metadata on numpy arrays against a numpy reference of spec §3.1:
scalars in full, the live prefix exact, and everything livebound promises not to write
(columns past the live prefix, rows >= bs, columns >= max_seq_pages, entries past bs /
bs + 1) still poisoned."""

import unittest

from _common import POISON, livebound, needs_numpy, np, poisoned


def reference(seq_lens, req_pool_indices, req_to_token, max_seq_pages, seq_len_delta, page_size, full_to_swa=None):
    """(cache_seqlens, cu_seqlens_k, {(b, k): page}, {(b, k): swa page}) of spec §3.1."""
    shift = page_size.bit_length() - 1
    lens = seq_lens.astype(np.int32) + np.int32(seq_len_delta)
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    pages, swa = {}, {}
    for b, L in enumerate(lens):
        live = min(max(0, (int(L) + page_size - 1) >> shift), max_seq_pages)
        for k in range(live):
            t = int(req_to_token[req_pool_indices[b], k * page_size])
            pages[(b, k)] = t >> shift
            if full_to_swa is not None:
                swa[(b, k)] = int(full_to_swa[t]) >> shift
    return lens, cu, pages, swa


class Problem:
    def __init__(self, seed, bs, page_size, max_seq_pages, swa=False, lens_dtype="int64", rpi_dtype="int64",
                 extra_rows=2, extra_cols=3, delta=0):
        rng = np.random.default_rng(seed)
        self.bs, self.page_size, self.max_seq_pages, self.delta = bs, page_size, max_seq_pages, delta
        ctx = max_seq_pages * page_size + page_size
        pool_rows = bs + 3
        self.full_slots = 4096
        # seq_lens: one empty request, one past the full width, the rest random.
        lens = rng.integers(1, max_seq_pages * page_size, size=bs)
        lens[0] = 0
        if bs > 2:
            lens[2] = ctx - page_size + 5  # more pages than max_seq_pages: clamped
        self.seq_lens = lens.astype(lens_dtype)
        self.req_pool_indices = rng.permutation(pool_rows)[:bs].astype(rpi_dtype)
        self.req_to_token = rng.integers(0, self.full_slots, size=(pool_rows, ctx)).astype(np.int32)
        self.full_to_swa = rng.integers(0, 1 << 20, size=self.full_slots).astype(np.int64) if swa else None
        self.cache_seqlens = poisoned(bs + 2)
        self.cu_seqlens_k = poisoned(bs + 3)
        # page tables are column slices of wider arrays: row stride > width
        self._pt = poisoned((bs + extra_rows, max_seq_pages + extra_cols + 5))
        self.page_table = self._pt[:, : max_seq_pages + extra_cols]
        self._swa = poisoned(self._pt.shape) if swa else None
        self.swa_page_table = self._swa[:, : max_seq_pages + extra_cols] if swa else None

    def run(self, **kw):
        livebound.normal_decode_set_metadata(
            self.cache_seqlens, self.cu_seqlens_k, self.page_table, self.req_to_token, self.req_pool_indices,
            self.max_seq_pages, self.seq_lens, self.delta, self.page_size,
            swa_page_table=self.swa_page_table, full_to_swa=self.full_to_swa, **kw)

    def reference(self):
        return reference(self.seq_lens, self.req_pool_indices, self.req_to_token, self.max_seq_pages, self.delta,
                         self.page_size, self.full_to_swa)


@needs_numpy
class K1Reference(unittest.TestCase):
    def check(self, p, full_width=False):
        lens, cu, pages, swa = p.reference()
        bs = p.bs
        np.testing.assert_array_equal(p.cache_seqlens[:bs], lens)
        self.assertTrue((p.cache_seqlens[bs:] == POISON).all(), "cache_seqlens past bs written")
        np.testing.assert_array_equal(p.cu_seqlens_k[: bs + 1], cu)
        self.assertTrue((p.cu_seqlens_k[bs + 1:] == POISON).all(), "cu_seqlens_k past bs + 1 written")
        tables = [(p._pt, pages)] + ([(p._swa, swa)] if p._swa is not None else [])
        for table, want in tables:
            for b in range(table.shape[0]):
                for k in range(table.shape[1]):
                    got = int(table[b, k])
                    if (b, k) in want:
                        self.assertEqual(got, want[(b, k)], "row %d column %d (live)" % (b, k))
                    elif full_width and b < bs and k < p.max_seq_pages:
                        pass  # the full-width twin writes every column below the width
                    else:
                        self.assertEqual(got, POISON, "row %d column %d must be untouched" % (b, k))

    def test_page_size_1(self):
        p = Problem(seed=1, bs=5, page_size=1, max_seq_pages=40)
        p.run()
        self.check(p)

    def test_page_size_16_int32_lengths_and_delta(self):
        p = Problem(seed=2, bs=6, page_size=16, max_seq_pages=9, lens_dtype="int32", rpi_dtype="int32", delta=1)
        p.run()
        self.check(p)

    def test_swa(self):
        p = Problem(seed=3, bs=4, page_size=8, max_seq_pages=7, swa=True)
        p.run()
        self.check(p)

    def test_swa_through_token_to_kv_pool(self):
        p = Problem(seed=4, bs=4, page_size=4, max_seq_pages=6, swa=True)

        class Pool:
            full_to_swa_index_mapping = p.full_to_swa

        livebound.normal_decode_set_metadata(
            p.cache_seqlens, p.cu_seqlens_k, p.page_table, p.req_to_token, p.req_pool_indices, p.max_seq_pages,
            p.seq_lens, p.delta, p.page_size, p.swa_page_table, Pool())
        self.check(p)

    def test_strided_1d_inputs(self):
        p = Problem(seed=5, bs=5, page_size=2, max_seq_pages=12)
        wide = np.full(2 * p.bs, 12345, dtype=np.int64)
        wide[::2] = p.seq_lens
        p.seq_lens = wide[::2]  # element stride 2
        p.run()
        self.check(p)

    def test_full_width_twin_same_live_prefix(self):
        p = Problem(seed=6, bs=5, page_size=4, max_seq_pages=10)
        p.run(variant="full_width")
        self.check(p, full_width=True)
        q = Problem(seed=6, bs=5, page_size=4, max_seq_pages=10)
        q.run(variant=livebound.LB_BOUNDED)
        self.check(q)
        _, _, pages, _ = q.reference()
        for (b, k) in pages:
            self.assertEqual(p._pt[b, k], q._pt[b, k])
        # the twin wrote past the live prefix of row 1 (a short request), the product did not
        self.assertTrue((p._pt[: p.bs, : p.max_seq_pages] != POISON).all())

    def test_skip_page_table(self):
        p = Problem(seed=7, bs=3, page_size=1, max_seq_pages=8)
        p.run(skip_page_table=True)
        lens, cu, _, _ = p.reference()
        np.testing.assert_array_equal(p.cache_seqlens[:3], lens)
        np.testing.assert_array_equal(p.cu_seqlens_k[:4], cu)
        self.assertTrue((p._pt == POISON).all(), "skip_page_table wrote the page table")


if __name__ == "__main__":
    unittest.main()
