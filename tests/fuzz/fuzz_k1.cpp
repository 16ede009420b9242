// K1 (lb_normal_decode_set_metadata) on the CPU, its shapes, strides, dtypes, lengths,
// indices, flags and output sizes read from the input bytes (the input after the selector
// byte; an exhausted input reads zeros). The properties (tests/fuzz/fuzz_c_abi.cpp):
//   - a refused call returns INVALID_ARGUMENT or UNSUPPORTED, lb_last_error() names an
//     argument, and every output element keeps its poison;
//   - an accepted call equals the plain C++ reference (tests/reference/): cache_seqlens,
//     cu_seqlens_k, the live prefix of each page-table row; the bounded form writes nothing
//     past it (columns >= live_pages(b) untouched), and nothing past the views either.
// (The byte layout is the one corpus/k1 was made for: keep it.)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "livebound/livebound.h"
#include "reference/decode_metadata_reference.h"

namespace fuzz {
namespace {

bool poisoned(const std::vector<int32_t> &v) {
    for (int32_t x : v) {
        if (x != kPoison) return false;
    }
    return true;
}

}  // namespace

int fuzz_k1(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    // ---- the problem ----
    const int64_t bs = in.u8() % 9;
    const uint8_t ps_byte = in.u8();
    const int32_t page_size = ps_byte < 240 ? int32_t{1} << (ps_byte % 8) : int32_t(ps_byte) - 250;  // rarely not 2^k
    const int64_t pool_rows = 1 + in.u8() % 6, ctx = 1 + in.u8() % 96;
    const int64_t row_stride = ctx + in.u8() % 4;
    const bool swa = in.u8() & 1, seq64 = in.u8() & 1, idx64 = in.u8() & 1;
    const int64_t full_slots = 1 + in.u8() % 128;
    const int64_t max_seq_pages = in.value(0, 24);
    const int32_t delta = int32_t(in.value(-3, 3));
    const bool skip_page_table = in.u8() % 8 == 0;
    const uint8_t variant_byte = in.u8();
    const lb_variant variant = variant_byte < 250 ? lb_variant(variant_byte & 1) : lb_variant(int32_t(variant_byte));
    std::vector<int64_t> seq_lens(static_cast<size_t>(bs)), rows(static_cast<size_t>(bs));
    for (auto &s : seq_lens) s = in.value(0, ctx + 2 * page_size);
    for (auto &r : rows) r = in.value(0, pool_rows - 1);
    std::vector<int32_t> req_to_token(static_cast<size_t>(pool_rows * row_stride));
    for (auto &t : req_to_token) t = int32_t(in.value(0, full_slots - 1));
    std::vector<int64_t> full_to_swa(static_cast<size_t>(full_slots));
    for (auto &m : full_to_swa) m = in.value(0, 4096);
    // Outputs: sized from the problem, now and then one short (refused) or with slack.
    const int64_t short_by = in.u8() % 16 == 0 ? 1 : 0, slack = in.u8() % 3;
    const int64_t out_rows = std::max<int64_t>(bs + slack - short_by, 0);
    // (At most 64 + slack columns: a garbage max_seq_pages above that meets a table too narrow.)
    const int64_t out_cols = std::clamp<int64_t>(max_seq_pages, 0, 64) + slack, out_stride = out_cols + in.u8() % 3;
    std::vector<int32_t> cache_seqlens(size_t(std::max<int64_t>(bs + slack, 1)), kPoison);
    std::vector<int32_t> cu_seqlens_k(static_cast<size_t>(bs + 1 + slack), kPoison);
    std::vector<int32_t> page_table(size_t(std::max<int64_t>(out_rows * out_stride, 1)), kPoison);
    std::vector<int32_t> swa_page_table(page_table.size(), kPoison);

    IndexTensor seq(seq_lens, seq64, 1 + in.u8() % 2), pool(rows, idx64, 1 + in.u8() % 2);
    lb_decode_metadata_args a{};
    a.seq_lens = seq.view;
    a.req_pool_indices = pool.view;
    a.req_to_token = lb_tensor{req_to_token.data(), LB_INT32, 2, {pool_rows, ctx}, {row_stride, 1}};
    if (swa) a.full_to_swa = lb_tensor{full_to_swa.data(), LB_INT64, 1, {full_slots}, {1}};
    a.cache_seqlens = lb_tensor{cache_seqlens.data(), LB_INT32, 1, {int64_t(cache_seqlens.size())}, {1}};
    a.cu_seqlens_k = lb_tensor{cu_seqlens_k.data(), LB_INT32, 1, {int64_t(cu_seqlens_k.size())}, {1}};
    a.page_table = lb_tensor{page_table.data(), LB_INT32, 2, {out_rows, out_cols}, {out_stride, 1}};
    if (swa) a.swa_page_table = lb_tensor{swa_page_table.data(), LB_INT32, 2, {out_rows, out_cols}, {out_stride, 1}};
    a.max_seq_pages = max_seq_pages;
    a.seq_len_delta = delta;
    a.page_size = page_size;
    a.skip_page_table = skip_page_table;
    a.variant = variant;

    // ---- the call and its properties ----
    const lb_status status = lb_normal_decode_set_metadata(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(1, status, message,
                      poisoned(cache_seqlens) && poisoned(cu_seqlens_k) && poisoned(page_table) && poisoned(swa_page_table));
        return 0;
    }
    g_accepted[0]++;
    livebound::reference::DecodeMetadataInputs ref;
    ref.seq_lens = seq_lens;
    ref.req_pool_indices = rows;
    ref.req_to_token = req_to_token.data();
    ref.pool_rows = pool_rows;
    ref.ctx = ctx;
    ref.req_to_token_row_stride = row_stride;
    if (swa) {
        ref.full_to_swa = full_to_swa.data();
        ref.full_slots = full_slots;
    }
    ref.max_seq_pages = skip_page_table ? 0 : max_seq_pages;
    ref.seq_len_delta = delta;
    ref.page_size = skip_page_table ? 1 : page_size;  // (skip_page_table: page_size is not read, nor checked)
    livebound::reference::DecodeMetadataExpected want;
    try {
        want = livebound::reference::decode_metadata(ref);
    } catch (const std::exception &e) {
        fail("an accepted call the reference cannot compute (a value check is missing)", e.what());
    }
    for (int64_t b = 0; b < bs; b++) {
        if (cache_seqlens[size_t(b)] != want.cache_seqlens[size_t(b)]) fail("cache_seqlens differs", std::to_string(b));
    }
    for (int64_t b = 0; b <= bs; b++) {
        if (cu_seqlens_k[size_t(b)] != want.cu_seqlens_k[size_t(b)]) fail("cu_seqlens_k differs", std::to_string(b));
    }
    for (size_t i = size_t(bs); i < cache_seqlens.size(); i++) {
        if (cache_seqlens[i] != kPoison) fail("cache_seqlens written past bs", std::to_string(i));
    }
    for (size_t i = size_t(bs + 1); i < cu_seqlens_k.size(); i++) {
        if (cu_seqlens_k[i] != kPoison) fail("cu_seqlens_k written past bs", std::to_string(i));
    }
    for (const std::vector<int32_t> *table : {&page_table, &swa_page_table}) {
        const bool is_swa = table == &swa_page_table;
        for (int64_t r = 0; r < out_rows; r++) {
            for (int64_t c = 0; c < out_stride; c++) {
                const int32_t got = (*table)[size_t(r * out_stride + c)];
                const bool live = !skip_page_table && (!is_swa || swa) && r < bs && c < want.live_pages[size_t(r)];
                if (live) {
                    const int32_t expect = (is_swa ? want.swa_page_rows : want.page_rows)[size_t(r)][size_t(c)];
                    if (got != expect) fail("page table differs", std::to_string(r) + ", " + std::to_string(c));
                } else {
                    // Past the live prefix: the bounded form writes nothing; the full-width twin
                    // may write the columns below max_seq_pages of rows < bs.
                    const bool twin_may = variant == LB_FULL_WIDTH && !skip_page_table && (!is_swa || swa) && r < bs &&
                                          c < max_seq_pages;
                    if (!twin_may && got != kPoison) {
                        fail("page table written outside the live prefix", std::to_string(r) + ", " + std::to_string(c));
                    }
                }
            }
        }
    }
    return 0;
}

}  // namespace fuzz
