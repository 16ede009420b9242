// K4 (lb_update_trtllm_mha_graph_metadata) on the CPU: bs (sometimes garbage), the index
// dtypes (seq_lens, req_pool_indices, qlens: int32 / int64 each), strides, q_mode (garbage
// too), seqlen_offset, page_size, max_seq_pages, skip_page_table, the optional tensors
// (swa_mapping, swa_page_table, out_cache_loc, swa_out_cache_loc, cu_seqlens_q given or not,
// in either combination), the pool / table / slot values, output sizes and the variant from
// the bytes. Accepted calls against reference::trtllm_metadata (exact), writing exactly:
//   cache_seqlens [0, bs); cu_seqlens_k [1, bs] (entry 0 untouched); cu_seqlens_q [1, bs]
//   in q modes 1 and 2 (untouched in mode 0); each page-table row's live prefix
//   (LB_FULL_WIDTH: every page < max_seq_pages of rows < bs, the gather wherever it is
//   defined); swa_page_table likewise when given; every swa_out_cache_loc entry; bs == 0
//   writes nothing; skip_page_table leaves the tables alone.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "reference/trtllm_metadata_reference.h"

namespace fuzz {

int fuzz_k4(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    const int64_t bs = in.u8() % 7;
    const int64_t bs_arg = in.one_in(40) ? in.value(-2, 9) : bs;
    const int64_t extra = in.u8() % 2;  // inputs may be longer than bs
    const bool seq64 = in.u8() & 1, idx64 = in.u8() & 1, q64 = in.u8() & 1;
    const int32_t q_mode = int32_t(in.value(0, 2));
    const int32_t page_size = in.pow2(5);
    const int32_t ps = page_size >= 1 ? page_size : 1;
    const int64_t pool_rows = 1 + in.u8() % 5, ctx = 1 + in.u8() % 64;
    const int64_t row_stride = ctx + in.u8() % 3;
    const int64_t max_seq_pages = in.value(0, 12);
    const int32_t offset = int32_t(in.value(-3, 3));
    const int32_t q_stride = int32_t(in.value(0, 8));
    const bool skip = in.one_in(8);
    const lb_variant variant = in.variant();
    const uint8_t opt = in.u8();
    const bool mapping_given = opt & 1;
    const bool swa_pt_given = (opt >> 1) & 1;  // (without a mapping: refused)
    const bool out_loc_given = (opt >> 2) & 1;
    const bool swa_out_given = (opt >> 3) & 1;
    const bool cu_q_given = q_mode == 1 || q_mode == 2 ? !in.one_in(24) : in.one_in(4);
    const bool qlens_given = q_mode == 1 ? !in.one_in(24) : in.one_in(4);
    const bool pt_given = !skip || !in.one_in(2);
    const int64_t swa_n = mapping_given ? in.u8() % 48 : 0;  // (0: an empty mapping, refused)
    const int64_t num_out = in.u8() % 6, swa_out_len = in.u8() % 6;

    std::vector<int64_t> seq_lens(static_cast<size_t>(bs + extra)), rows(static_cast<size_t>(bs + extra)), qlens(static_cast<size_t>(bs + extra));
    for (auto &s : seq_lens) s = in.value(0, ctx + ps);
    for (auto &r : rows) r = in.value(0, pool_rows - 1);
    for (auto &q : qlens) q = in.value(0, 9);
    Bulk bulk(in);
    std::vector<int32_t> req_to_token(static_cast<size_t>(pool_rows * row_stride));
    for (auto &t : req_to_token) t = int32_t(bulk.value(-1, std::max<int64_t>(swa_n, 1) - 1));
    std::vector<int64_t> mapping(static_cast<size_t>(swa_n)), out_loc(static_cast<size_t>(num_out));
    for (auto &m : mapping) m = bulk.value(-1, 4096);
    for (auto &l : out_loc) l = bulk.value(-1, std::max<int64_t>(swa_n, 1) - 1);

    // Outputs.
    const int64_t cols = std::clamp<int64_t>(max_seq_pages, 0, 12);
    Output<int32_t> cache_seqlens, cu_k, cu_q, pt, swa_pt;
    Output<int64_t> swa_out;
    cache_seqlens.make_1d(LB_INT32, out_len(in, bs), 1 + in.u8() % 2, kPoison);
    cu_k.make_1d(LB_INT32, out_len(in, bs + 1), 1 + in.u8() % 2, kPoison);
    cu_q.make_1d(LB_INT32, out_len(in, bs + 1), 1, kPoison);
    {
        const int64_t r = out_len(in, bs), c = out_len(in, cols, 32);
        const bool bad_col = in.one_in(48);
        const int64_t rs = std::max<int64_t>(c, 0) + in.u8() % 3 + (bad_col ? c : 0);
        pt.make_2d(LB_INT32, r, c, rs, column_stride(bad_col), kPoison);
        swa_pt.make_2d(LB_INT32, out_len(in, bs, 32), c, rs, 1, kPoison);
    }
    swa_out.make_1d(LB_INT64, swa_out_len, 1 + in.u8() % 2, kPoison64);
    IndexTensor seq(seq_lens, seq64, stride_1d(in)), pool(rows, idx64, stride_1d(in)), ql(qlens, q64, 1);
    IndexTensor map(mapping, true, 1 + in.u8() % 2), loc(out_loc, true, 1);
    if (in.one_in(32)) map.view.dtype = LB_INT32;  // (a wrong dtype: refused)

    lb_trtllm_mha_graph_metadata_args a{};
    a.req_pool_indices = pool.view;
    a.seq_lens = seq.view;
    a.req_to_token = lb_tensor{req_to_token.data(), LB_INT32, 2, {pool_rows, ctx}, {row_stride, 1}};
    if (mapping_given) a.swa_mapping = map.view;
    if (out_loc_given) a.out_cache_loc = loc.view;
    if (qlens_given) a.qlens = ql.view;
    a.cache_seqlens = cache_seqlens.view;
    a.cu_seqlens_k = cu_k.view;
    if (cu_q_given) a.cu_seqlens_q = cu_q.view;
    if (pt_given) a.page_table = pt.view;
    if (swa_pt_given) a.swa_page_table = swa_pt.view;
    if (swa_out_given) a.swa_out_cache_loc = swa_out.view;
    a.bs = bs_arg;
    a.max_seq_pages = max_seq_pages;
    a.seqlen_offset = offset;
    a.page_size = page_size;
    a.q_stride = q_stride;
    a.q_mode = q_mode;
    a.skip_page_table = skip;
    a.variant = variant;

    if (std::getenv("FUZZ_DEBUG")) {
        std::fprintf(stderr, "K4 bs %lld max_seq_pages %lld page_size %d q_mode %d skip %d page_table [%lld, %lld] strides {%lld, %lld} "
                     "swa %d/%d variant %d\n",
                     (long long)bs_arg, (long long)max_seq_pages, page_size, q_mode, skip, (long long)pt.view.shape[0],
                     (long long)pt.view.shape[1], (long long)pt.view.strides[0], (long long)pt.view.strides[1], mapping_given,
                     swa_pt_given, int(variant));
    }
    const lb_status status = lb_update_trtllm_mha_graph_metadata(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(4, status, message,
                      cache_seqlens.poisoned() && cu_k.poisoned() && cu_q.poisoned() && pt.poisoned() &&
                          swa_pt.poisoned() && swa_out.poisoned());
        return 0;
    }
    g_accepted[3]++;
    // (bs_arg may differ from the bs the tensors were sized for, within their slack.)
    const int64_t B = bs_arg;
    if (B < 0 || B > int64_t(seq_lens.size())) fail("an accepted bs its tensors do not have", std::to_string(B));
    const bool gather = !skip;
    const bool swa_pages = gather && swa_pt_given;
    if (B > 0) {
        // The reference over a compact copy of req_to_token, wide enough for every page below
        // max_seq_pages (columns past ctx: -1), with the entries no live page reads made
        // harmless: pool rows of requests without a live page set to 0, slots past the
        // mapping set to -1 (the live ones are checked by the call: it refuses them).
        livebound::reference::TrtllmMetadataInputs ref;
        ref.seq_lens.assign(seq_lens.begin(), seq_lens.begin() + B);
        ref.req_pool_indices.assign(rows.begin(), rows.begin() + B);
        if (q_mode == 1) ref.qlens.assign(qlens.begin(), qlens.begin() + B);
        const int64_t ref_cols = gather ? max_seq_pages : 0;
        const int64_t ctx_ref = std::max<int64_t>(ctx, ref_cols * ps);
        std::vector<int32_t> r2t(static_cast<size_t>(pool_rows * ctx_ref), -1);
        for (int64_t r = 0; r < pool_rows; r++) {
            for (int64_t c = 0; c < ctx; c++) {
                int32_t t = req_to_token[size_t(r * row_stride + c)];
                if (swa_pages && t >= swa_n) t = -1;
                r2t[size_t(r * ctx_ref + c)] = t;
            }
        }
        std::vector<bool> row_ok(static_cast<size_t>(B));
        for (int64_t i = 0; i < B; i++) {
            row_ok[size_t(i)] = rows[size_t(i)] >= 0 && rows[size_t(i)] < pool_rows;
            if (!row_ok[size_t(i)]) ref.req_pool_indices[size_t(i)] = 0;
        }
        ref.req_to_token = r2t.data();
        ref.pool_rows = pool_rows;
        ref.ctx = ctx_ref;
        if (mapping_given) ref.swa_mapping = mapping;
        ref.has_out_cache_loc = swa_out_given && out_loc_given;
        if (ref.has_out_cache_loc) ref.out_cache_loc = out_loc;
        ref.swa_out_len = swa_out_given ? swa_out_len : 0;
        ref.max_seq_pages = ref_cols;
        ref.seqlen_offset = offset;
        ref.page_size = ps;
        ref.q_mode = q_mode;
        ref.q_stride = q_stride;
        ref.with_swa_pages = swa_pages;
        livebound::reference::TrtllmMetadataExpected want;
        try {
            want = livebound::reference::trtllm_metadata(ref);
        } catch (const std::exception &e) {
            fail("an accepted call the reference cannot compute (a value check is missing)", e.what());
        }
        for (int64_t i = 0; i < B; i++) {
            if (want.live_pages[size_t(i)] > 0 && !row_ok[size_t(i)] && gather) {
                fail("an accepted call with a live page in an invalid pool row", std::to_string(i));
            }
            cache_seqlens.expect1(i, want.cache_seqlens[size_t(i)]);
            cu_k.expect1(i + 1, want.cu_seqlens_k[size_t(i)]);
            if (q_mode == 1 || q_mode == 2) cu_q.expect1(i + 1, want.cu_seqlens_q[size_t(i)]);
        }
        const bool full = variant == LB_FULL_WIDTH;
        for (int64_t i = 0; gather && i < B; i++) {
            const int64_t r = rows[size_t(i)];
            for (int64_t p = 0; p < max_seq_pages; p++) {
                const bool live = p < want.live_pages[size_t(i)];
                // Where the full-width twin's gather is defined (else it reads clamped entries).
                const bool defined = row_ok[size_t(i)] && p * ps < ctx;
                const int32_t t = defined ? req_to_token[size_t(r * row_stride + p * ps)] : 0;
                // Live pages: the reference. The twin's other pages: the header's gather formula
                // over the unsanitized slot (the reference's copy has slots past the mapping as -1).
                if (live) {
                    pt.expect2(i, p, want.page_rows[size_t(i)][size_t(p)]);
                } else if (full && defined) {
                    pt.expect2(i, p, t / ps);
                } else if (full) {
                    pt.may2(i, p);
                }
                if (!swa_pages) continue;
                if (live) {
                    swa_pt.expect2(i, p, want.swa_page_rows[size_t(i)][size_t(p)]);
                } else if (full && defined && t < swa_n) {
                    const int64_t m = t >= 0 ? mapping[size_t(t)] : -1;
                    swa_pt.expect2(i, p, m < 0 ? -1 : int32_t(m / ps));
                } else if (full) {
                    swa_pt.may2(i, p);
                }
            }
        }
        for (int64_t k = 0; swa_out_given && k < swa_out_len; k++) swa_out.expect1(k, want.swa_out_cache_loc[size_t(k)]);
    }
    cache_seqlens.verify("cache_seqlens");
    cu_k.verify("cu_seqlens_k");
    cu_q.verify("cu_seqlens_q");
    pt.verify("page_table");
    swa_pt.verify("swa_page_table");
    swa_out.verify("swa_out_cache_loc");
    return 0;
}

}  // namespace fuzz
