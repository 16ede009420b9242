// K3 (lb_fused_dsa_target_verify_metadata) on the CPU: as K2 (fuzz_k2.cpp) plus next_n, the
// expanded outputs (seqlens_expanded, dsa_cache_seqlens, dsa_cu_seqlens_k over E = bs * next_n
// rows) and the optional paged_mqa_ctx_lens_2d (row-major or a transposed view). Accepted
// calls against reference::dsa_metadata (exact): cache_seqlens [0, bs), cu_seqlens_k [0, bs],
// seqlens_expanded / dsa_cache_seqlens [0, E), dsa_cu_seqlens_k [0, E], ctx_lens [bs, next_n],
// and each table row e's live prefix (kv = s_r + next_n); the bounded form writes nothing
// else, the full-width twin also the columns below max_seqlen_k of rows < E.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "reference/dsa_metadata_reference.h"

namespace fuzz {

int fuzz_k3(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    const int64_t bs = in.u8() % 6;
    const int32_t next_n = int32_t(in.value(1, 4));
    const int64_t nn = std::clamp<int64_t>(next_n, 1, 4);  // (what the outputs are sized for)
    const bool seq64 = in.u8() & 1;
    const uint8_t mix = in.u8();
    const bool idx64 = mix < 32 ? !seq64 : seq64;
    const int64_t pool_rows = 1 + in.u8() % 5;
    const int64_t max_len = in.value(1, 40);
    const int64_t ctx = std::clamp<int64_t>(max_len, 1, 48) + (in.one_in(24) ? -1 : in.u8() % 3);
    const int64_t row_stride = std::max<int64_t>(ctx, 1) + in.u8() % 3;
    const int32_t rps = in.pow2(3);
    const int32_t topk = int32_t(in.value(0, 48));
    const int32_t kpool = int32_t(in.value(0, 6));
    const lb_variant variant = in.variant();
    std::vector<int64_t> seq_lens(static_cast<size_t>(bs)), rows(static_cast<size_t>(bs));
    for (auto &s : seq_lens) s = in.value(-4, std::clamp<int64_t>(max_len, 1, 48) + 4);
    for (auto &r : rows) r = in.value(0, pool_rows - 1);
    std::mt19937 rng(in.u32());
    std::vector<int32_t> req_to_token(static_cast<size_t>(pool_rows * row_stride));
    for (auto &t : req_to_token) t = int32_t(rng() % 5000) - 3;
    const uint8_t tables = in.u8();
    const bool pt1_given = rps == 1 ? tables % 16 != 0 : tables % 4 != 0;
    const int real_mode = rps == 1 ? (tables / 16 % 8 == 0 ? 2 : tables / 16 % 2) : (tables % 16 == 1 ? 0 : 2);
    const uint8_t ctx_mode = in.u8() % 4;  // 0 absent, 1 row-major, 2 transposed, 3 row-major padded
    const int64_t E = bs * nn;
    const int64_t width = std::clamp<int64_t>(max_len, 1, 48);
    const int64_t real_cols = rps >= 1 ? (width + rps - 1) / rps : width;
    Output<int32_t> cache_seqlens, cu_seqlens_k, expanded, dsa_cache_seqlens, dsa_cu_seqlens_k, ctx_lens, pt1, real;
    cache_seqlens.make_1d(LB_INT32, out_len(in, bs), 1 + in.u8() % 2, kPoison);
    cu_seqlens_k.make_1d(LB_INT32, out_len(in, bs + 1), 1, kPoison);
    expanded.make_1d(LB_INT32, out_len(in, E), 1 + in.u8() % 2, kPoison);
    dsa_cache_seqlens.make_1d(LB_INT32, out_len(in, E), 1, kPoison);
    dsa_cu_seqlens_k.make_1d(LB_INT32, out_len(in, E + 1), 1, kPoison);
    {
        const int64_t r = out_len(in, bs), c = out_len(in, nn, 32);
        const int64_t rr = std::max<int64_t>(r, 0), cc = std::max<int64_t>(c, 0);
        if (ctx_mode == 2) {
            ctx_lens.make_2d(LB_INT32, r, c, 1, std::max<int64_t>(rr, 1), kPoison);  // a transposed view
        } else {
            ctx_lens.make_2d(LB_INT32, r, c, cc + (ctx_mode == 3 ? 2 : 0), 1, kPoison);
        }
    }
    {
        const int64_t r = out_len(in, E), c = out_len(in, width, 32);
        const bool bad_col = in.one_in(48);
        pt1.make_2d(LB_INT32, r, c, std::max<int64_t>(c, 0) + in.u8() % 3 + (bad_col ? c : 0), column_stride(bad_col), kPoison);
        const int64_t rr = out_len(in, E), rc = out_len(in, real_cols, 32);
        real.make_2d(LB_INT32, rr, rc, std::max<int64_t>(rc, 0) + in.u8() % 3, 1, kPoison);
    }
    IndexTensor seq(seq_lens, seq64, stride_1d(in)), pool(rows, idx64, stride_1d(in));

    lb_dsa_target_verify_metadata_args a{};
    a.seq_lens = seq.view;
    a.req_pool_indices = pool.view;
    a.req_to_token = lb_tensor{req_to_token.data(), LB_INT32, 2, {pool_rows, ctx}, {row_stride, 1}};
    a.cache_seqlens = cache_seqlens.view;
    a.cu_seqlens_k = cu_seqlens_k.view;
    a.seqlens_expanded = expanded.view;
    a.dsa_cache_seqlens = dsa_cache_seqlens.view;
    a.dsa_cu_seqlens_k = dsa_cu_seqlens_k.view;
    if (pt1_given) a.page_table_1 = pt1.view;
    if (real_mode == 1) a.real_page_table = a.page_table_1;
    if (real_mode == 2) a.real_page_table = real.view;
    if (ctx_mode != 0) a.paged_mqa_ctx_lens_2d = ctx_lens.view;
    a.max_seqlen_k = max_len;
    a.dsa_index_topk = topk;
    a.real_page_size = rps;
    a.next_n = next_n;
    a.index_kpool = kpool;
    a.variant = variant;

    const lb_status status = lb_fused_dsa_target_verify_metadata(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(3, status, message,
                      cache_seqlens.poisoned() && cu_seqlens_k.poisoned() && expanded.poisoned() &&
                          dsa_cache_seqlens.poisoned() && dsa_cu_seqlens_k.poisoned() && ctx_lens.poisoned() &&
                          pt1.poisoned() && real.poisoned());
        return 0;
    }
    g_accepted[2]++;
    livebound::reference::DsaMetadataInputs ref;
    ref.seq_lens = seq_lens;
    ref.req_pool_indices = rows;
    std::vector<bool> row_ok(static_cast<size_t>(bs));
    for (int64_t r = 0; r < bs; r++) {
        const int64_t live = std::min<int64_t>(int64_t{int32_t(seq_lens[size_t(r)])} + next_n, max_len);
        row_ok[size_t(r)] = rows[size_t(r)] >= 0 && rows[size_t(r)] < pool_rows;
        if (live <= 0 && !row_ok[size_t(r)]) ref.req_pool_indices[size_t(r)] = 0;
    }
    ref.req_to_token = req_to_token.data();
    ref.pool_rows = pool_rows;
    ref.ctx = ctx;
    ref.row_stride = row_stride;
    ref.width = max_len;
    ref.topk = topk;
    ref.real_page_size = rps;
    ref.index_kpool = kpool;
    ref.next_n = next_n;
    livebound::reference::DsaMetadataExpected want;
    try {
        want = livebound::reference::dsa_metadata(ref);
    } catch (const std::exception &e) {
        fail("an accepted call the reference cannot compute (a value check is missing)", e.what());
    }
    for (int64_t r = 0; r < bs; r++) cache_seqlens.expect1(r, want.cache_seqlens[size_t(r)]);
    for (int64_t r = 0; r <= bs; r++) cu_seqlens_k.expect1(r, want.cu_seqlens_k[size_t(r)]);
    for (int64_t e = 0; e < E; e++) {
        expanded.expect1(e, want.seqlens_expanded[size_t(e)]);
        dsa_cache_seqlens.expect1(e, want.dsa_cache_seqlens[size_t(e)]);
    }
    for (int64_t e = 0; e <= E; e++) dsa_cu_seqlens_k.expect1(e, want.dsa_cu_seqlens_k[size_t(e)]);
    if (ctx_mode != 0) {
        for (int64_t r = 0; r < bs; r++) {
            for (int64_t d = 0; d < next_n; d++) ctx_lens.expect2(r, d, want.ctx_lens_2d[size_t(r)][size_t(d)]);
        }
    }
    const bool full = variant == LB_FULL_WIDTH;
    for (int64_t e = 0; e < E; e++) {
        const bool ok = row_ok[size_t(e / next_n)];
        if (pt1_given) {
            for (int64_t c = 0; c < max_len; c++) {
                if (c < want.live_tokens[size_t(e)] || (full && ok)) {
                    pt1.expect2(e, c, want.page_table_1[size_t(e)][size_t(c)]);
                } else if (full) {
                    pt1.may2(e, c);
                }
            }
        }
        if (rps > 1) {
            for (int64_t j = 0; j < want.real_columns; j++) {
                if (j < want.live_pages[size_t(e)] || (full && ok)) {
                    real.expect2(e, j, want.real_page_table[size_t(e)][size_t(j)]);
                } else if (full) {
                    real.may2(e, j);
                }
            }
        }
    }
    cache_seqlens.verify("cache_seqlens");
    cu_seqlens_k.verify("cu_seqlens_k");
    expanded.verify("seqlens_expanded");
    dsa_cache_seqlens.verify("dsa_cache_seqlens");
    dsa_cu_seqlens_k.verify("dsa_cu_seqlens_k");
    ctx_lens.verify("paged_mqa_ctx_lens_2d");
    pt1.verify("page_table_1");
    real.verify("real_page_table");
    return 0;
}

}  // namespace fuzz
