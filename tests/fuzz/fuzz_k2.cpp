// K2 (lb_fused_dsa_decode_metadata) on the CPU: batch, pool and table shapes, index dtypes
// (seq_lens / req_pool_indices int32 or int64, mixed too), strides, lengths, pool rows, slots,
// max_len, dsa_index_topk, real_page_size, index_kpool, which tables are given (page_table_1
// optional when real_page_size > 1; real_page_table absent, identical to page_table_1 or a
// different tensor when real_page_size == 1), output sizes and the variant from the bytes.
// Accepted calls against reference::dsa_metadata (exact): the lengths and prefix sums
// (entries [0, bs) / [0, bs]), each table's live prefix (page_table_1[b, c] for
// c < min(s_b, max_len), real_page_table[b, j] for j * rps < that); the bounded form writes
// nothing else, the full-width twin also the columns below max_len (cdiv(max_len, rps)) of
// rows < bs, with the gathered values wherever the pool row is valid.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "reference/dsa_metadata_reference.h"

namespace fuzz {

int fuzz_k2(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    const int64_t bs = in.u8() % 7;
    const bool seq64 = in.u8() & 1;
    const uint8_t mix = in.u8();
    const bool idx64 = mix < 32 ? !seq64 : seq64;  // mostly the same dtype (both are accepted)
    const int64_t pool_rows = 1 + in.u8() % 5;
    const int64_t max_len = in.value(1, 40);
    const int64_t ctx = std::clamp<int64_t>(max_len, 1, 48) + (in.one_in(24) ? -1 : in.u8() % 3);
    const int64_t row_stride = std::max<int64_t>(ctx, 1) + in.u8() % 3;
    const int32_t rps = in.pow2(3);
    const int32_t topk = int32_t(in.value(0, 48));
    const int32_t kpool = int32_t(in.value(0, 6));
    const lb_variant variant = in.variant();
    std::vector<int64_t> seq_lens(static_cast<size_t>(bs)), rows(static_cast<size_t>(bs));
    for (auto &s : seq_lens) s = in.value(0, std::clamp<int64_t>(max_len, 1, 48) + 8);
    for (auto &r : rows) r = in.value(0, pool_rows - 1);
    std::mt19937 rng(in.u32());
    std::vector<int32_t> req_to_token(static_cast<size_t>(pool_rows * row_stride));
    for (auto &t : req_to_token) t = int32_t(rng() % 5000) - 3;
    // Tables: which are given.
    const uint8_t tables = in.u8();
    const bool pt1_given = rps == 1 ? tables % 16 != 0 : tables % 4 != 0;
    // real_page_size == 1: 0 absent, 1 identical to page_table_1, 2 another tensor (refused);
    // > 1: given unless tables % 16 == 1.
    const int real_mode = rps == 1 ? (tables / 16 % 8 == 0 ? 2 : tables / 16 % 2) : (tables % 16 == 1 ? 0 : 2);
    // Outputs.
    const int64_t width = std::clamp<int64_t>(max_len, 1, 48);
    const int64_t real_cols = rps >= 1 ? (width + rps - 1) / rps : width;
    Output<int32_t> cache_seqlens, cu_seqlens_k, dsa_cache_seqlens, dsa_cu_seqlens_k, pt1, real;
    cache_seqlens.make_1d(LB_INT32, out_len(in, bs), 1 + in.u8() % 2, kPoison);
    cu_seqlens_k.make_1d(LB_INT32, out_len(in, bs + 1), 1 + in.u8() % 2, kPoison);
    dsa_cache_seqlens.make_1d(LB_INT32, out_len(in, bs), 1, kPoison);
    dsa_cu_seqlens_k.make_1d(LB_INT32, out_len(in, bs + 1), 1, kPoison);
    {
        const int64_t r = out_len(in, bs), c = out_len(in, width, 32);
        const bool bad_col = in.one_in(48);
        pt1.make_2d(LB_INT32, r, c, std::max<int64_t>(c, 0) + in.u8() % 3 + (bad_col ? c : 0), column_stride(bad_col), kPoison);
        const int64_t rr = out_len(in, bs), rc = out_len(in, real_cols, 32);
        real.make_2d(LB_INT32, rr, rc, std::max<int64_t>(rc, 0) + in.u8() % 3, 1, kPoison);
    }
    IndexTensor seq(seq_lens, seq64, stride_1d(in)), pool(rows, idx64, stride_1d(in));

    lb_dsa_decode_metadata_args a{};
    a.seq_lens = seq.view;
    a.req_pool_indices = pool.view;
    a.req_to_token = lb_tensor{req_to_token.data(), LB_INT32, 2, {pool_rows, ctx}, {row_stride, 1}};
    a.cache_seqlens = cache_seqlens.view;
    a.cu_seqlens_k = cu_seqlens_k.view;
    a.dsa_cache_seqlens = dsa_cache_seqlens.view;
    a.dsa_cu_seqlens_k = dsa_cu_seqlens_k.view;
    if (pt1_given) a.page_table_1 = pt1.view;
    if (real_mode == 1) a.real_page_table = a.page_table_1;
    if (real_mode == 2) a.real_page_table = real.view;
    a.max_len = max_len;
    a.dsa_index_topk = topk;
    a.real_page_size = rps;
    a.index_kpool = kpool;
    a.variant = variant;

    if (std::getenv("FUZZ_DEBUG")) {
        std::fprintf(stderr, "K2 bs %lld max_len %lld rps %d pt1 %d [%lld, %lld] strides {%lld, %lld} real_mode %d variant %d\n",
                     (long long)bs, (long long)max_len, rps, pt1_given, (long long)pt1.view.shape[0], (long long)pt1.view.shape[1],
                     (long long)pt1.view.strides[0], (long long)pt1.view.strides[1], real_mode, int(variant));
    }
    const lb_status status = lb_fused_dsa_decode_metadata(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(2, status, message,
                      cache_seqlens.poisoned() && cu_seqlens_k.poisoned() && dsa_cache_seqlens.poisoned() &&
                          dsa_cu_seqlens_k.poisoned() && pt1.poisoned() && real.poisoned());
        return 0;
    }
    g_accepted[1]++;
    // The reference, with the pool row of every request whose rows have no live column set
    // to 0 (those entries are never read: garbage allowed there).
    livebound::reference::DsaMetadataInputs ref;
    ref.seq_lens = seq_lens;
    ref.req_pool_indices = rows;
    std::vector<bool> row_ok(static_cast<size_t>(bs));
    for (int64_t b = 0; b < bs; b++) {
        const int64_t live = std::min<int64_t>(int32_t(seq_lens[size_t(b)]), max_len);
        row_ok[size_t(b)] = rows[size_t(b)] >= 0 && rows[size_t(b)] < pool_rows;
        if (live <= 0 && !row_ok[size_t(b)]) ref.req_pool_indices[size_t(b)] = 0;
    }
    ref.req_to_token = req_to_token.data();
    ref.pool_rows = pool_rows;
    ref.ctx = ctx;
    ref.row_stride = row_stride;
    ref.width = max_len;
    ref.topk = topk;
    ref.real_page_size = rps;
    ref.index_kpool = kpool;
    livebound::reference::DsaMetadataExpected want;
    try {
        want = livebound::reference::dsa_metadata(ref);
    } catch (const std::exception &e) {
        fail("an accepted call the reference cannot compute (a value check is missing)", e.what());
    }
    for (int64_t b = 0; b < bs; b++) {
        cache_seqlens.expect1(b, want.cache_seqlens[size_t(b)]);
        dsa_cache_seqlens.expect1(b, want.dsa_cache_seqlens[size_t(b)]);
    }
    for (int64_t b = 0; b <= bs; b++) {
        cu_seqlens_k.expect1(b, want.cu_seqlens_k[size_t(b)]);
        dsa_cu_seqlens_k.expect1(b, want.dsa_cu_seqlens_k[size_t(b)]);
    }
    const bool full = variant == LB_FULL_WIDTH;
    for (int64_t b = 0; b < bs; b++) {
        // page_table_1 (written unless real_page_size > 1 without it).
        if (pt1_given) {
            for (int64_t c = 0; c < max_len; c++) {
                if (c < want.live_tokens[size_t(b)] || (full && row_ok[size_t(b)])) {
                    pt1.expect2(b, c, want.page_table_1[size_t(b)][size_t(c)]);
                } else if (full) {
                    pt1.may2(b, c);
                }
            }
        }
        if (rps > 1) {
            for (int64_t j = 0; j < want.real_columns; j++) {
                if (j < want.live_pages[size_t(b)] || (full && row_ok[size_t(b)])) {
                    real.expect2(b, j, want.real_page_table[size_t(b)][size_t(j)]);
                } else if (full) {
                    real.may2(b, j);
                }
            }
        }
    }
    cache_seqlens.verify("cache_seqlens");
    cu_seqlens_k.verify("cu_seqlens_k");
    dsa_cache_seqlens.verify("dsa_cache_seqlens");
    dsa_cu_seqlens_k.verify("dsa_cu_seqlens_k");
    pt1.verify("page_table_1");
    real.verify("real_page_table");
    return 0;
}

}  // namespace fuzz
