"""Errors: the C ABI's rejections come back as LbError (status + lb_last_error(), which
names the argument) with nothing written; conversions the Python layer cannot make
(dtype, device type, rank, non-integer or out-of-range scalars) raise TypeError /
ValueError / OverflowError naming the argument before the library is called."""

import unittest

from _common import POISON, livebound, needs_numpy, np, poisoned


@needs_numpy
class K1Errors(unittest.TestCase):
    def setUp(self):
        self.seq_lens = np.array([3, 9, 1], dtype=np.int64)
        self.rpi = np.array([1, 0, 2], dtype=np.int64)
        self.r2t = np.arange(3 * 32, dtype=np.int32).reshape(3, 32)
        self.cache = poisoned(3)
        self.cu = poisoned(4)
        self.pt = poisoned((3, 8))

    def call(self, **over):
        kw = dict(cache_seqlens_int32=self.cache, cu_seqlens_k=self.cu, page_table=self.pt, req_to_token=self.r2t,
                  req_pool_indices=self.rpi, max_seq_pages=8, seq_lens=self.seq_lens, seq_len_delta=0, page_size=4)
        kw.update(over)
        livebound.normal_decode_set_metadata(**kw)

    def assert_untouched(self):
        for out in (self.cache, self.cu, self.pt):
            self.assertTrue((out == POISON).all(), "an output was written by a rejected call")

    def test_valid_baseline(self):
        self.call()
        self.assertEqual(list(self.cu), [0, 3, 12, 13])

    def test_bad_page_size(self):
        with self.assertRaises(livebound.LbError) as cm:
            self.call(page_size=3)
        e = cm.exception
        self.assertEqual(e.status, livebound.LB_ERROR_INVALID_ARGUMENT)
        self.assertEqual(e.status_name, "LB_ERROR_INVALID_ARGUMENT")
        self.assertIn("page_size", e.message)
        self.assertIn("page_size", str(e))
        self.assertEqual(e.function, "lb_normal_decode_set_metadata")
        self.assertEqual(livebound.last_error(), e.message)
        self.assertIsInstance(e, RuntimeError)
        self.assert_untouched()

    def test_last_error_cleared_by_success(self):
        with self.assertRaises(livebound.LbError):
            self.call(page_size=0)
        self.call()
        self.assertEqual(livebound.last_error(), "")

    def test_last_variant_names_what_ran(self):
        self.call()
        self.assertTrue(livebound.last_variant().startswith("lb_k1_cpu_bounded"), livebound.last_variant())
        with self.assertRaises(livebound.LbError):
            self.call(page_size=0)
        self.assertEqual(livebound.last_variant(), "")

    def test_shape_error_names_page_table(self):
        with self.assertRaises(livebound.LbError) as cm:
            self.call(page_table=poisoned((3, 5)))  # narrower than max_seq_pages
        self.assertIn("page_table", cm.exception.message)
        self.assert_untouched()

    def test_c_abi_dtype_error_names_argument(self):
        # uint8 converts, but K1's req_to_token must be int32: the C ABI says so.
        with self.assertRaises(livebound.LbError) as cm:
            self.call(req_to_token=self.r2t.astype(np.uint8))
        self.assertIn("req_to_token", cm.exception.message)
        self.assert_untouched()

    def test_unsupported_dtype_rejected_in_python(self):
        for dtype in (np.float64, np.int16, np.uint32, np.bool_):
            with self.subTest(dtype=dtype):
                with self.assertRaises(TypeError) as cm:
                    self.call(seq_lens=self.seq_lens.astype(dtype))
                self.assertIn("'seq_lens'", str(cm.exception))
                self.assertIn("int32, int64, uint8", str(cm.exception))
        self.assert_untouched()

    def test_float_dtype_goes_to_the_c_abi(self):
        # float16/float32 convert (the attention kernels take them); K1 rejects them by name.
        for dtype in (np.float16, np.float32):
            with self.subTest(dtype=dtype):
                with self.assertRaises(livebound.LbError) as cm:
                    self.call(seq_lens=self.seq_lens.astype(dtype))
                self.assertIn("seq_lens", cm.exception.message)
        self.assert_untouched()

    def test_non_native_byte_order(self):
        with self.assertRaises(TypeError) as cm:
            self.call(req_pool_indices=self.rpi.astype(">i8"))
        self.assertIn("'req_pool_indices'", str(cm.exception))

    def test_not_a_tensor(self):
        with self.assertRaises(TypeError) as cm:
            self.call(seq_lens=[3, 9, 1])
        self.assertIn("'seq_lens'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            self.call(cu_seqlens_k=None)
        self.assertIn("'cu_seqlens_k'", str(cm.exception))

    def test_three_dimensions(self):
        # lb_tensor carries up to 4 dimensions: a 3-D page table converts, and K1's C ABI
        # rejects it (it wants 2), naming the argument.
        with self.assertRaises(livebound.LbError) as cm:
            self.call(page_table=poisoned((3, 8, 1)))
        self.assertIn("page_table", cm.exception.message)
        self.assert_untouched()

    def test_five_dimensions_rejected_in_python(self):
        with self.assertRaises(ValueError) as cm:
            self.call(page_table=poisoned((3, 8, 1, 1, 1)))
        self.assertIn("'page_table'", str(cm.exception))

    def test_scalar_conversion(self):
        with self.assertRaises(TypeError) as cm:
            self.call(page_size=4.0)
        self.assertIn("'page_size'", str(cm.exception))
        with self.assertRaises(OverflowError) as cm:
            self.call(page_size=2**32 + 4)  # ctypes would silently wrap to 4
        self.assertIn("'page_size'", str(cm.exception))
        self.call(page_size=np.int64(4), max_seq_pages=np.int32(8))  # numpy integers convert

    def test_variant(self):
        with self.assertRaises(ValueError) as cm:
            self.call(variant="wide")
        self.assertIn("'variant'", str(cm.exception))
        with self.assertRaises(ValueError):
            self.call(variant=7)
        self.assert_untouched()


@needs_numpy
class OtherKernelErrors(unittest.TestCase):
    def test_k6_page_size_must_be_1(self):
        result = poisoned((2, 2))
        with self.assertRaises(livebound.LbError) as cm:
            livebound.transform_index_page_table_prefill(
                np.zeros((1, 4), np.int32), np.zeros((2, 2), np.int32), [2], page_size=2, result=result)
        self.assertIn("page_size", cm.exception.message)
        self.assertTrue((result == POISON).all())

    def test_k2_bs_past_seq_lens(self):
        with self.assertRaises(ValueError) as cm:
            livebound.fused_dsa_decode_metadata(
                np.ones(2, np.int64), np.zeros(2, np.int64), np.zeros((1, 8), np.int32), poisoned(2), poisoned(3),
                poisoned((2, 8)), poisoned(2), poisoned(3), None, 3, 8, 4, 1)
        self.assertIn("'bs'", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
