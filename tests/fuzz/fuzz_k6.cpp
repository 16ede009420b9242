// K6 (lb_transform_index_page_table_prefill) on the CPU: the requests' extend lengths and
// cu_seqlens_q (any stride; sometimes broken: cu[0] != 0, decreasing, cu[bs] != num_tokens),
// num_tokens, max_extend_len, T (topk_indices rows) and output_num_tokens (sometimes off by
// one), topk, page_table_is_expanded, the page table's shape / row stride / values, the top-k
// indices (negative = empty, sometimes past the row), page_size (1, sometimes not), result's
// size and row stride, and the variant from the bytes. Accepted calls against
// reference::transform_index (exact): every element of result[0:output_num_tokens, 0:topk]
// written, nothing else.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "reference/transform_index_reference.h"

namespace fuzz {

int fuzz_k6(const uint8_t *data, size_t size) {
    Bytes in{data, size};
    const int64_t bs = in.u8() % 5;
    std::vector<int64_t> cu(static_cast<size_t>(bs + 1), 0);
    int64_t longest = 0;
    for (int64_t i = 0; i < bs; i++) {
        const int64_t e = in.u8() % 5;
        cu[size_t(i + 1)] = cu[size_t(i)] + e;
        longest = std::max(longest, e);
    }
    const int64_t n = cu[size_t(bs)];
    if (in.one_in(16)) {  // a broken cu_seqlens_q
        const size_t at = size_t(in.u8() % (bs + 1));
        cu[at] = in.value(cu[at] - 2, cu[at] + 2);
    }
    const int64_t num_tokens = in.one_in(24) ? in.value(n - 1, n + 1) : n;
    const uint8_t mel = in.u8();  // (as K5's max_seq_len: never a huge valid grid)
    const int64_t max_extend_len = mel < 8 ? longest - 1 : mel < 12 ? (mel % 2 ? -1 : int64_t{1} << 31) : longest + mel % 3;
    const int64_t T = std::max<int64_t>(n + (in.one_in(24) ? -1 : in.u8() % 3), 0);
    const int64_t output_num_tokens = in.one_in(24) ? T - 1 : T + in.u8() % 3;
    const int64_t topk = in.u8() % 6;
    const bool expanded = in.u8() & 1;
    const int64_t width = in.one_in(32) ? 0 : 1 + in.u8() % 12;  // max_seqlen_k
    const int64_t pt_rows = std::max<int64_t>((expanded ? n : bs) + (in.one_in(24) ? -1 : in.u8() % 2), 0);
    const int64_t pt_stride = std::max<int64_t>(width, 1) + in.u8() % 3;
    const int32_t page_size = in.one_in(32) ? int32_t(in.value(0, 4)) : 1;
    const lb_variant variant = in.variant();
    const int64_t topk_stride = std::max<int64_t>(topk, 1) + in.u8() % 2;
    Bulk bulk(in);
    std::vector<int32_t> page_table(size_t(std::max<int64_t>(pt_rows * pt_stride, 1)));
    for (auto &x : page_table) x = int32_t(bulk.value(-3, 100000));
    std::vector<int32_t> topk_indices(size_t(std::max<int64_t>(T * topk_stride, 1)));
    for (auto &x : topk_indices) x = int32_t(bulk.value(-2, std::max<int64_t>(width, 1) - 1));
    Output<int32_t> result;
    {
        const int64_t rows = out_len(in, std::clamp<int64_t>(output_num_tokens, 0, 64));
        const int64_t cols = out_len(in, topk, 32);
        result.make_2d(LB_INT32, rows, cols, std::max<int64_t>(cols, 0) + in.u8() % 3, 1, kPoison);
    }
    IndexTensor cu_t(cu, false, stride_1d(in));

    lb_transform_index_args a{};
    a.page_table = lb_tensor{page_table.data(), LB_INT32, 2, {pt_rows, width}, {pt_stride, 1}};
    a.topk_indices = lb_tensor{topk_indices.data(), LB_INT32, 2, {T, topk}, {topk_stride, 1}};
    a.cu_seqlens_q = cu_t.view;
    a.result = result.view;
    a.num_tokens = num_tokens;
    a.max_extend_len = max_extend_len;
    a.output_num_tokens = output_num_tokens;
    a.page_size = page_size;
    a.page_table_is_expanded = expanded;
    a.variant = variant;

    const lb_status status = lb_transform_index_page_table_prefill(&a, lb_device{LB_DEVICE_CPU, 0, nullptr});
    const std::string message = lb_last_error();
    if (status != LB_OK) {
        check_refused(6, status, message, result.poisoned());
        return 0;
    }
    g_accepted[5]++;
    livebound::reference::TransformIndexInputs ref;
    ref.page_table = page_table.data();
    ref.page_table_rows = pt_rows;
    ref.max_seqlen_k = width;
    ref.page_table_row_stride = pt_stride;
    ref.topk_indices = topk_indices.data();
    ref.num_rows = T;
    ref.topk = topk;
    ref.topk_row_stride = topk_stride;
    ref.cu_seqlens_q = cu;
    ref.page_table_is_expanded = expanded;
    ref.output_num_tokens = output_num_tokens;
    std::vector<std::vector<int32_t>> want;
    try {
        if (cu[size_t(bs)] != num_tokens) fail("an accepted num_tokens other than cu_seqlens_q[bs]", std::to_string(num_tokens));
        want = livebound::reference::transform_index(ref);
    } catch (const std::exception &e) {
        fail("an accepted call the reference cannot compute (a value check is missing)", e.what());
    }
    for (int64_t t = 0; t < output_num_tokens; t++) {
        for (int64_t j = 0; j < topk; j++) result.expect2(t, j, want[size_t(t)][size_t(j)]);
    }
    result.verify("result");
    return 0;
}

}  // namespace fuzz
