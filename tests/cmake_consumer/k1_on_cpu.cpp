// K1 (normal_decode_set_metadata) on the CPU through the installed headers and library:
// two requests, page size 4, every output compared with values worked out by hand.
#include <cstdio>
#include <vector>

#include "livebound/livebound.hpp"

int main() {
    using namespace livebound;
    // req_to_token: [3 pool rows, 16 positions] int32, row r position p holds slot 100 * r + p.
    std::vector<int32_t> req_to_token(3 * 16);
    for (int r = 0; r < 3; r++) {
        for (int p = 0; p < 16; p++) req_to_token[r * 16 + p] = 100 * r + p;
    }
    std::vector<int64_t> seq_lens = {9, 4};          // 3 and 1 live pages of 4 tokens
    std::vector<int64_t> req_pool_indices = {2, 1};
    std::vector<int32_t> cache_seqlens(2, -1), cu_seqlens_k(3, -1), page_table(2 * 4, -1);

    lb_decode_metadata_args a{};
    a.seq_lens = i64(seq_lens.data(), 2);
    a.req_pool_indices = i64(req_pool_indices.data(), 2);
    a.req_to_token = tensor_2d(req_to_token.data(), LB_INT32, 3, 16);
    a.cache_seqlens = i32(cache_seqlens.data(), 2);
    a.cu_seqlens_k = i32(cu_seqlens_k.data(), 3);
    a.page_table = tensor_2d(page_table.data(), LB_INT32, 2, 4);
    a.max_seq_pages = 4;
    a.page_size = 4;
    a.variant = LB_BOUNDED;
    try {
        normal_decode_set_metadata(a, cpu());
    } catch (const Error &e) {
        std::fprintf(stderr, "livebound error %d: %s\n", int(e.status()), e.what());
        return 1;
    }
    // Page k of request b is slot req_to_token[row, 4k] >> 2; columns past the live pages untouched.
    const std::vector<int32_t> want_cache = {9, 4}, want_cu = {0, 9, 13};
    const std::vector<int32_t> want_table = {50, 51, 52, -1, 25, -1, -1, -1};
    const bool ok = cache_seqlens == want_cache && cu_seqlens_k == want_cu && page_table == want_table;
    std::printf("livebound %s, K1 on the CPU: cache_seqlens {%d, %d}, cu_seqlens_k {%d, %d, %d}, page_table rows "
                "{%d, %d, %d, %d} {%d, %d, %d, %d}: %s\n",
                lb_version(), cache_seqlens[0], cache_seqlens[1], cu_seqlens_k[0], cu_seqlens_k[1], cu_seqlens_k[2],
                page_table[0], page_table[1], page_table[2], page_table[3], page_table[4], page_table[5], page_table[6],
                page_table[7], ok ? "as expected" : "WRONG");
    return ok ? 0 : 1;
}
