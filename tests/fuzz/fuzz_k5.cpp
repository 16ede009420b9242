// K5 (lb_get_k_and_s, the DSA indexer K + scale gather) on the CPU: batch, lengths
// (seq_lens int32 / int64, any stride), page_size (not only powers of two), index_head_dim
// (the build's 128, sometimes another), the page table (int32 / int64, row stride, ids),
// buf's pages and row stride (sometimes not a multiple of 4, or a misaligned pointer),
// seq_len_sum and max_seq_len (sometimes off by one or garbage), k_out / s_out sizes and row
// strides, and the variant from the bytes. Accepted calls against reference::get_k_and_s
// (exact bytes): rows [0, seq_len_sum) of k_out (D bytes) and s_out (4 bytes) written,
// nothing else (rows past seq_len_sum, row padding and the bytes past the views keep their
// poison).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "reference/dsa_kv_gather_reference.h"

namespace fuzz {

int fuzz_k5(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    const int64_t bs = in.u8() % 5;
    const bool seq64 = in.u8() & 1, idx64 = in.u8() & 1;
    const int32_t page_size = int32_t(in.value(1, 8));
    const int32_t ps = std::clamp<int32_t>(page_size, 1, 8);  // (what buf is sized for)
    const uint8_t dim_byte = in.u8();
    const int32_t head_dim = dim_byte < 240 ? 128 : dim_byte < 248 ? int32_t(dim_byte - 240) * 16 : int32_t(dim_byte) - 250;
    const int32_t D = head_dim >= 4 && head_dim <= 256 ? head_dim : 128;
    const int64_t num_pages = in.u8() % 6;  // (0: no pages, refused once a token needs one)
    const lb_variant variant = in.variant();
    std::vector<int64_t> seq_lens(static_cast<size_t>(bs));
    int64_t sum = 0, longest = 0;
    for (auto &s : seq_lens) {
        s = in.value(0, 12);
        sum += s;
        longest = std::max(longest, s);
    }
    const int64_t max_pages =
        std::clamp<int64_t>((std::clamp<int64_t>(longest, 0, 12) + ps - 1) / ps + (in.one_in(24) ? -1 : in.u8() % 2), 0, 16);
    Bulk bulk(in);
    std::vector<std::vector<int64_t>> pages(static_cast<size_t>(bs), std::vector<int64_t>(size_t(max_pages)));
    for (auto &row : pages) {
        for (auto &p : row) p = bulk.value(0, std::max<int64_t>(num_pages, 1) - 1);
    }
    const int64_t seq_len_sum = in.one_in(24) ? in.value(sum - 1, sum + 1) : sum;
    // max_seq_len: >= the longest, now and then one short or out of [0, 2^31) (never a huge
    // valid value: the full-width twin visits every t < max_seq_len, which would only be slow).
    const uint8_t msl = in.u8();
    const int64_t max_seq_len = msl < 8 ? longest - 1 : msl < 12 ? (msl % 2 ? -1 : int64_t{1} << 31) : longest + msl % 3;

    // buf: [num_pages, ps * (D + 4)] bytes, row stride page_bytes (+4, or +1: refused).
    const int64_t page_bytes = int64_t{ps} * (D + 4);
    const uint8_t buf_layout = in.u8();
    const int64_t buf_stride = page_bytes + (buf_layout % 16 == 0 ? 1 : 4 * (buf_layout % 2));
    const int64_t buf_offset = buf_layout >= 248 ? 1 + buf_layout % 3 : 0;  // misaligned pointer: refused
    std::vector<uint32_t> buf_words(size_t((num_pages * buf_stride + buf_offset + 3) / 4 + 1));
    for (auto &w : buf_words) w = bulk.raw();
    uint8_t *buf = reinterpret_cast<uint8_t *>(buf_words.data()) + buf_offset;
    // page_indices [bs, max_pages] at row stride max_pages (+1).
    const int64_t pi_stride = std::max<int64_t>(max_pages, 1) + in.u8() % 2;
    std::vector<int32_t> pi32(size_t(std::max<int64_t>(bs * pi_stride, 1)), -7);
    std::vector<int64_t> pi64(pi32.size(), -7);
    for (int64_t b = 0; b < bs; b++) {
        for (int64_t k = 0; k < max_pages; k++) {
            pi32[size_t(b * pi_stride + k)] = int32_t(pages[size_t(b)][size_t(k)]);
            pi64[size_t(b * pi_stride + k)] = pages[size_t(b)][size_t(k)];
        }
    }
    // Outputs (word-aligned storage: 4-byte words).
    const int64_t out_rows = out_len(in, std::clamp<int64_t>(seq_len_sum, 0, 64));
    const int64_t k_stride = D + 4 * (in.u8() % 2);
    const int64_t s_stride = 4 * (1 + in.u8() % 2);
    Output<uint8_t> k_out, s_out;
    k_out.make_2d(LB_UINT8, out_rows, head_dim, k_stride, 1, kPoison8, 8);
    s_out.make_2d(LB_UINT8, out_rows, 4, s_stride, 1, kPoison8, 8);
    IndexTensor seq(seq_lens, seq64, stride_1d(in));

    lb_dsa_kv_gather_args a{};
    // (Sized for ps and D: a page_size or index_head_dim other than those meets a buf whose
    // row is not page_size * (index_head_dim + 4) bytes, refused.)
    a.buf = lb_tensor{buf, LB_UINT8, 2, {num_pages, page_bytes}, {buf_stride, 1}};
    a.page_indices = lb_tensor{idx64 ? static_cast<void *>(pi64.data()) : static_cast<void *>(pi32.data()),
                               idx64 ? LB_INT64 : LB_INT32, 2, {bs, max_pages}, {pi_stride, 1}};
    a.seq_lens = seq.view;
    a.k_out = k_out.view;
    a.s_out = s_out.view;
    a.seq_len_sum = seq_len_sum;
    a.max_seq_len = max_seq_len;
    a.page_size = page_size;
    a.index_head_dim = head_dim;
    a.variant = variant;
    // k_out / s_out storage must stay 4-byte aligned (vector data is).
    if (reinterpret_cast<uintptr_t>(k_out.data.data()) % 4 != 0 || reinterpret_cast<uintptr_t>(s_out.data.data()) % 4 != 0) {
        fail("harness", "unaligned output storage");
    }

    const lb_status status = lb_get_k_and_s(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(5, status, message, k_out.poisoned() && s_out.poisoned());
        return 0;
    }
    g_accepted[4]++;
    livebound::reference::KvGatherInputs ref;
    ref.buf = buf;
    ref.num_pages = num_pages;
    ref.buf_row_stride = buf_stride;
    ref.seq_lens = seq_lens;
    ref.page_indices = pages;
    ref.page_size = page_size;
    ref.head_dim = head_dim;
    livebound::reference::KvGatherExpected want;
    try {
        want = livebound::reference::get_k_and_s(ref);
    } catch (const std::exception &e) {
        fail("an accepted call the reference cannot compute (a value check is missing)", e.what());
    }
    if (want.seq_len_sum != seq_len_sum) fail("an accepted seq_len_sum that is not sum(seq_lens)", std::to_string(seq_len_sum));
    for (int64_t r = 0; r < seq_len_sum; r++) {
        for (int64_t d = 0; d < head_dim; d++) k_out.expect2(r, d, want.k_rows[size_t(r * head_dim + d)]);
        for (int64_t d = 0; d < 4; d++) s_out.expect2(r, d, want.s_rows[size_t(r * 4 + d)]);
    }
    k_out.verify("k_out");
    s_out.verify("s_out");
    return 0;
}

}  // namespace fuzz
