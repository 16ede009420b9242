// Pools and tables past 2^31 elements (issue 11), for every kernel that reads one: K1, K2,
// K3 and K4 (req_to_token), K6 (the page table), K7 and K8 (k_buffer and v_buffer). K5's
// pages past 2^31 bytes have their own tests (tests/dsa_kv_gather, *LargeOffsets).
//
// One source, two executables: test_huge_pools_cpu (host memory) and test_huge_pools_cuda
// (the test device, LIVEBOUND_TEST_DEVICE, default 0; skipped without it). Each test runs
// one call twice on the same device: once with a compact pool, once with the same rows
// spread out so that the rows the call reads start past element 2^31 of the tensor (row
// stride ~ 2^31 / first_far_row). Every extent and stride stays below 2^31, as the
// validation requires; only the offsets grow.
// The outputs must be the same bits (or, where the spread pool makes CUDA take another
// kernel, the same values to bf16 rounding). A 32-bit offset anywhere would read the
// wrong row or fault.
//
// Memory: on the host the spread pool is reserved with MAP_NORESERVE and only the rows
// written are ever touched (a few MiB resident for spans of 7-34 GiB); on the device it is
// one cuMemAlloc of the whole span (up to 34 GiB, which the H200's 141 GB holds), of which
// only the used rows are uploaded.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "livebound/extend_attention.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

#ifndef LB_HUGE_ON_CUDA
#error "compile with -DLB_HUGE_ON_CUDA=0 (host memory) or 1 (the test CUDA device)"
#endif

namespace livebound::testing {
namespace {

constexpr bool kOnCuda = LB_HUGE_ON_CUDA != 0;
// Suite names of their own per executable (CTest names tests by suite and test).
#if LB_HUGE_ON_CUDA
#define HugePools CudaHugePools
#define HugeCaches CudaHugeCaches
#endif
constexpr int64_t kTwo31 = int64_t{1} << 31;

size_t dtype_bytes(lb_dtype dt) {
    switch (dt) {
        case LB_UINT8:
        case LB_FLOAT8_E4M3FN: return 1;
        case LB_FLOAT16:
        case LB_BFLOAT16: return 2;
        case LB_INT64: return 8;
        default: return 4;
    }
}

// One allocation the kernels read or write: reserved host memory (MAP_NORESERVE: pages
// exist once touched) or device memory of the current context.
class Storage {
public:
    Storage() = default;
    Storage(const Storage &) = delete;
    Storage &operator=(const Storage &) = delete;
    ~Storage() {
        if (host_ != nullptr) munmap(host_, bytes_);
    }
    std::string allocate(size_t bytes) {
        bytes_ = std::max<size_t>(bytes, 64);
        if (kOnCuda) return device_.allocate(bytes_);
        void *p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return "mmap of " + std::to_string(bytes_) + " bytes (MAP_NORESERVE) failed";
        host_ = p;
        return {};
    }
    void *data() const { return kOnCuda ? device_.pointer() : host_; }
    std::string put(size_t offset, const void *src, size_t n) {
        if (!kOnCuda) {
            std::memcpy(static_cast<char *>(host_) + offset, src, n);
            return {};
        }
        return upload_bytes(device_.device() + offset, src, n);
    }
    std::string get(size_t offset, void *dst, size_t n) const {
        if (!kOnCuda) {
            std::memcpy(dst, static_cast<const char *>(host_) + offset, n);
            return {};
        }
        return cuda_error("cuMemcpyDtoH", cuda::driver()->cuMemcpyDtoH(dst, device_.device() + offset, n));
    }

private:
    size_t bytes_ = 0;
    void *host_ = nullptr;
    DeviceBuffer device_;
};

// A tensor of the call (row-major over `shape`) in a Storage of its own. Compact: the host
// bytes copied as they are. Spread: dimension 0's stride raised to `row_stride` elements,
// each row of the host bytes copied to its new place; the rest of the span never touched.
struct Placed {
    lb_tensor tensor{};
    std::unique_ptr<Storage> storage = std::make_unique<Storage>();
    size_t bytes = 0;
    std::string error;  // "" once allocated and filled
};

// Skips the test when a spread tensor could not be allocated (an address-space limit, a
// smaller GPU): the memory is the precondition, not the property under test.
#define SKIP_UNLESS_PLACED(placed)                                                                        \
    if (!(placed).error.empty()) GTEST_SKIP() << "cannot place a tensor spanning " << (placed).bytes << " bytes: " \
                                              << (placed).error

template <class T>
Placed place(const std::vector<T> &host, lb_dtype dt, std::vector<int64_t> shape, int64_t row_stride = 0) {
    Placed p;
    lb_tensor &t = p.tensor;
    t.dtype = dt;
    t.ndim = static_cast<int32_t>(shape.size());
    int64_t stride = 1;
    for (int d = t.ndim - 1; d >= 0; d--) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        stride *= shape[d];
    }
    const int64_t row = t.ndim > 1 ? t.strides[0] : 1, rows = shape[0];
    if (row_stride == 0) row_stride = row;
    t.strides[0] = row_stride;
    const size_t elem = dtype_bytes(dt);
    p.bytes = static_cast<size_t>(rows > 0 ? (rows - 1) * row_stride + row : 1) * elem;
    p.error = p.storage->allocate(p.bytes);
    for (int64_t r = 0; r < rows && p.error.empty(); r++) {
        p.error = p.storage->put(static_cast<size_t>(r * row_stride) * elem, reinterpret_cast<const char *>(host.data()) + r * row * elem,
                                 static_cast<size_t>(row) * elem);
    }
    if (row_stride == row) EXPECT_EQ(p.error, "") << "a compact tensor of " << p.bytes << " bytes";
    t.data = p.storage->data();
    return p;
}

// The bytes of a compact tensor (an output, after the call).
std::vector<uint8_t> fetch(const Placed &p) {
    std::vector<uint8_t> out(p.bytes);
    EXPECT_EQ(p.storage->get(0, out.data(), out.size()), "");
    return out;
}

// Row stride (elements, a multiple of 64) that starts row `first_far_row` past element 2^31.
int64_t far_stride(int64_t row_elements, int64_t first_far_row) {
    const int64_t s = std::max<int64_t>(row_elements, kTwo31 / first_far_row + 1);
    return (s + 63) / 64 * 64;
}

// Elements the spread tensor spans (what its Halide buffer covers).
int64_t span_elements(const Placed &p) { return static_cast<int64_t>(p.bytes / dtype_bytes(p.tensor.dtype)); }

uint16_t bf16_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);
}
float float_of_bf16(uint16_t h) {
    const uint32_t u = uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
std::vector<uint16_t> random_bf16(size_t n, std::mt19937 &rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<uint16_t> v(n);
    for (auto &x : v) x = bf16_of(u(rng));
    return v;
}
std::vector<int32_t> random_int32(size_t n, int32_t hi, std::mt19937 &rng) {
    std::uniform_int_distribution<int32_t> u(0, hi - 1);
    std::vector<int32_t> v(n);
    for (auto &x : v) x = u(rng);
    return v;
}

class HugePools : public CudaFixture {
protected:
    void SetUp() override {
        if (kOnCuda) CudaFixture::SetUp();
    }
    void TearDown() override {
        if (kOnCuda) CudaFixture::TearDown();
    }
    lb_device device() const { return kOnCuda ? lb_device{LB_DEVICE_CUDA, device_, stream_} : livebound::cpu(); }
    // After a call: its work done (CUDA), its status OK.
    void finish(lb_status status) {
        ASSERT_EQ(status, LB_OK) << lb_last_error();
        if (kOnCuda) ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    }
};

// ---- K1-K4: req_to_token [24 pool rows, 256 positions] int32, the live requests in
// rows 18-23 (past 2^31 elements once spread: row stride 119,304,704, span 11.4 GB) ----

constexpr int64_t kPoolRows = 24, kContext = 256, kFarRow = 18;
const std::vector<int64_t> kLiveRows = {23, 18, 21};

struct PoolCall {
    std::vector<int32_t> req_to_token;
    Placed compact, spread;
    explicit PoolCall(uint32_t seed) {
        std::mt19937 rng(seed);
        req_to_token = random_int32(kPoolRows * kContext, 1 << 20, rng);
        compact = place(req_to_token, LB_INT32, {kPoolRows, kContext});
        spread = place(req_to_token, LB_INT32, {kPoolRows, kContext}, far_stride(kContext, kFarRow));
        EXPECT_GT(kFarRow * spread.tensor.strides[0], kTwo31);
        EXPECT_GT(span_elements(spread), kTwo31);
    }
};

TEST_F(HugePools, K1ReqToTokenPast2To31) {
    PoolCall pool(11);
    SKIP_UNLESS_PLACED(pool.spread);
    const std::vector<int64_t> seq_lens = {200, 256, 17};
    const Placed lens = place(seq_lens, LB_INT64, {3}), rows = place(kLiveRows, LB_INT64, {3});
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        for (int32_t page_size : {1, 16}) {
            SCOPED_TRACE(std::string(variant == LB_BOUNDED ? "bounded" : "full width") + ", page_size " +
                         std::to_string(page_size));
            const int64_t pages = kContext / page_size;
            std::vector<std::vector<uint8_t>> results;
            for (const Placed *pool_tensor : {&pool.compact, &pool.spread}) {
                const std::vector<int32_t> poison(3 * pages + 8, -7);
                Placed cache = place(poison, LB_INT32, {3}), cu = place(poison, LB_INT32, {4}),
                       table = place(poison, LB_INT32, {3, pages});
                lb_decode_metadata_args a{};
                a.seq_lens = lens.tensor;
                a.req_pool_indices = rows.tensor;
                a.req_to_token = pool_tensor->tensor;
                a.cache_seqlens = cache.tensor;
                a.cu_seqlens_k = cu.tensor;
                a.page_table = table.tensor;
                a.max_seq_pages = pages;
                a.page_size = page_size;
                a.variant = variant;
                finish(lb_normal_decode_set_metadata(&a, device()));
                for (const Placed *out : {&cache, &cu, &table}) results.push_back(fetch(*out));
            }
            for (size_t i = 0; i < 3; i++) EXPECT_EQ(results[i], results[i + 3]) << "output " << i;
        }
    }
}

TEST_F(HugePools, K2ReqToTokenPast2To31) {
    PoolCall pool(12);
    SKIP_UNLESS_PLACED(pool.spread);
    const std::vector<int64_t> seq_lens = {300, 64, 255};  // 300 > the width: clipped to 256
    const Placed lens = place(seq_lens, LB_INT64, {3}), rows = place(kLiveRows, LB_INT64, {3});
    constexpr int32_t kRealPage = 64;
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        SCOPED_TRACE(variant == LB_BOUNDED ? "bounded" : "full width");
        std::vector<std::vector<uint8_t>> results;
        for (const Placed *pool_tensor : {&pool.compact, &pool.spread}) {
            const std::vector<int32_t> poison(3 * kContext + 8, -7);
            Placed cache = place(poison, LB_INT32, {3}), cu = place(poison, LB_INT32, {4}),
                   dsa_cache = place(poison, LB_INT32, {3}), dsa_cu = place(poison, LB_INT32, {4}),
                   table1 = place(poison, LB_INT32, {3, kContext}),
                   real = place(poison, LB_INT32, {3, kContext / kRealPage});
            lb_dsa_decode_metadata_args a{};
            a.seq_lens = lens.tensor;
            a.req_pool_indices = rows.tensor;
            a.req_to_token = pool_tensor->tensor;
            a.cache_seqlens = cache.tensor;
            a.cu_seqlens_k = cu.tensor;
            a.page_table_1 = table1.tensor;
            a.dsa_cache_seqlens = dsa_cache.tensor;
            a.dsa_cu_seqlens_k = dsa_cu.tensor;
            a.real_page_table = real.tensor;
            a.max_len = kContext;
            a.dsa_index_topk = 64;
            a.real_page_size = kRealPage;
            a.variant = variant;
            finish(lb_fused_dsa_decode_metadata(&a, device()));
            for (const Placed *out : {&cache, &cu, &dsa_cache, &dsa_cu, &table1, &real}) results.push_back(fetch(*out));
        }
        for (size_t i = 0; i < 6; i++) EXPECT_EQ(results[i], results[i + 6]) << "output " << i;
    }
}

TEST_F(HugePools, K3ReqToTokenPast2To31) {
    PoolCall pool(13);
    SKIP_UNLESS_PLACED(pool.spread);
    const std::vector<int64_t> seq_lens = {250, 64, 100};  // + next_n 2: 252, 66, 102 live tokens
    const Placed lens = place(seq_lens, LB_INT64, {3}), rows = place(kLiveRows, LB_INT64, {3});
    constexpr int32_t kNextN = 2, kRealPage = 64;
    constexpr int64_t kExpanded = 3 * kNextN;
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        SCOPED_TRACE(variant == LB_BOUNDED ? "bounded" : "full width");
        std::vector<std::vector<uint8_t>> results;
        for (const Placed *pool_tensor : {&pool.compact, &pool.spread}) {
            const std::vector<int32_t> poison(kExpanded * kContext + 8, -7);
            Placed cache = place(poison, LB_INT32, {3}), cu = place(poison, LB_INT32, {4}),
                   expanded = place(poison, LB_INT32, {kExpanded}), dsa_cache = place(poison, LB_INT32, {kExpanded}),
                   dsa_cu = place(poison, LB_INT32, {kExpanded + 1}), ctx = place(poison, LB_INT32, {3, kNextN}),
                   table1 = place(poison, LB_INT32, {kExpanded, kContext}),
                   real = place(poison, LB_INT32, {kExpanded, kContext / kRealPage});
            lb_dsa_target_verify_metadata_args a{};
            a.seq_lens = lens.tensor;
            a.req_pool_indices = rows.tensor;
            a.req_to_token = pool_tensor->tensor;
            a.cache_seqlens = cache.tensor;
            a.cu_seqlens_k = cu.tensor;
            a.page_table_1 = table1.tensor;
            a.seqlens_expanded = expanded.tensor;
            a.dsa_cache_seqlens = dsa_cache.tensor;
            a.dsa_cu_seqlens_k = dsa_cu.tensor;
            a.real_page_table = real.tensor;
            a.paged_mqa_ctx_lens_2d = ctx.tensor;
            a.max_seqlen_k = kContext;
            a.dsa_index_topk = 64;
            a.real_page_size = kRealPage;
            a.next_n = kNextN;
            a.variant = variant;
            finish(lb_fused_dsa_target_verify_metadata(&a, device()));
            for (const Placed *out : {&cache, &cu, &expanded, &dsa_cache, &dsa_cu, &ctx, &table1, &real}) {
                results.push_back(fetch(*out));
            }
        }
        for (size_t i = 0; i < 8; i++) EXPECT_EQ(results[i], results[i + 8]) << "output " << i;
    }
}

TEST_F(HugePools, K4ReqToTokenPast2To31) {
    PoolCall pool(14);
    SKIP_UNLESS_PLACED(pool.spread);
    const std::vector<int32_t> seq_lens = {100, 250, 1};
    const Placed lens = place(seq_lens, LB_INT32, {3}), rows = place(kLiveRows, LB_INT64, {3});
    constexpr int32_t kPage = 16;
    constexpr int64_t kPages = kContext / kPage;
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        SCOPED_TRACE(variant == LB_BOUNDED ? "bounded" : "full width");
        std::vector<std::vector<uint8_t>> results;
        for (const Placed *pool_tensor : {&pool.compact, &pool.spread}) {
            const std::vector<int32_t> poison(3 * kPages + 8, -7);
            Placed cache = place(poison, LB_INT32, {3}), cu = place(poison, LB_INT32, {4}),
                   table = place(poison, LB_INT32, {3, kPages});
            lb_trtllm_mha_graph_metadata_args a{};
            a.req_pool_indices = rows.tensor;
            a.seq_lens = lens.tensor;
            a.req_to_token = pool_tensor->tensor;
            a.cache_seqlens = cache.tensor;
            a.cu_seqlens_k = cu.tensor;
            a.page_table = table.tensor;
            a.bs = 3;
            a.max_seq_pages = kPages;
            a.page_size = kPage;
            a.q_mode = LB_Q_MODE_NONE;
            a.variant = variant;
            finish(lb_update_trtllm_mha_graph_metadata(&a, device()));
            for (const Placed *out : {&cache, &cu, &table}) results.push_back(fetch(*out));
        }
        for (size_t i = 0; i < 3; i++) EXPECT_EQ(results[i], results[i + 3]) << "output " << i;
    }
}

// ---- K6: the page table [24 requests, 256 kv positions], requests 18-23 extending ----

TEST_F(HugePools, K6PageTablePast2To31) {
    std::mt19937 rng(16);
    const std::vector<int32_t> page_table = random_int32(kPoolRows * kContext, 1 << 20, rng);
    const Placed compact = place(page_table, LB_INT32, {kPoolRows, kContext});
    const Placed spread = place(page_table, LB_INT32, {kPoolRows, kContext}, far_stride(kContext, kFarRow));
    SKIP_UNLESS_PLACED(spread);
    EXPECT_GT(span_elements(spread), kTwo31);
    // Requests 0-17 extend by nothing, 18-23 by 2 tokens each: 12 query tokens.
    std::vector<int32_t> cu(kPoolRows + 1, 0);
    for (int64_t i = 0; i < kPoolRows; i++) cu[i + 1] = cu[i] + (i >= kFarRow ? 2 : 0);
    constexpr int64_t kTokens = 12, kTopk = 8;
    std::vector<int32_t> topk = random_int32(kTokens * kTopk, kContext, rng);
    topk[3] = -1;  // an empty entry
    const Placed cu_q = place(cu, LB_INT32, {kPoolRows + 1}), topk_t = place(topk, LB_INT32, {kTokens, kTopk});
    for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
        SCOPED_TRACE(variant == LB_BOUNDED ? "bounded" : "full width");
        std::vector<std::vector<uint8_t>> results;
        for (const Placed *table : {&compact, &spread}) {
            const std::vector<int32_t> poison(kTokens * kTopk, -7);
            Placed result = place(poison, LB_INT32, {kTokens, kTopk});
            lb_transform_index_args a{};
            a.page_table = table->tensor;
            a.topk_indices = topk_t.tensor;
            a.cu_seqlens_q = cu_q.tensor;
            a.result = result.tensor;
            a.num_tokens = kTokens;
            a.max_extend_len = 2;
            a.output_num_tokens = kTokens;
            a.page_size = 1;
            a.variant = variant;
            finish(lb_transform_index_page_table_prefill(&a, device()));
            results.push_back(fetch(result));
        }
        EXPECT_EQ(results[0], results[1]);
    }
}

// ---- K7, K8: k_buffer / v_buffer [64 slots, 2 heads, 128] bf16, every key slot the calls
// read in [far_row, 64) ----

struct CacheCase {
    int64_t far_row;
    // On CUDA the tensor-core kernel flattens the cache into 32-bit pairs (at most 2^31 - 1
    // of them): a span past 2^32 elements runs the SIMT kernel instead, whose bits differ
    // from the compact call's tensor-core ones. Then the values are compared to bf16 rounding.
    bool same_kernel_on_cuda;
};
void PrintTo(const CacheCase &c, std::ostream *os) { *os << "far_row " << c.far_row; }

class HugeCaches : public HugePools, public ::testing::WithParamInterface<CacheCase> {
protected:
    static constexpr int64_t kSlots = 64, kHq = 4, kHkv = 2, kDim = 128, kT = 8;  // kT: query tokens
    std::mt19937 rng{17};
    std::vector<uint16_t> k_cache = random_bf16(kSlots * kHkv * kDim, rng), v_cache = random_bf16(kSlots * kHkv * kDim, rng);

    // The two caches, compact [0] and spread [1].
    std::vector<Placed> caches(const std::vector<uint16_t> &host) {
        std::vector<Placed> out;
        out.push_back(place(host, LB_BFLOAT16, {kSlots, kHkv, kDim}));
        out.push_back(place(host, LB_BFLOAT16, {kSlots, kHkv, kDim}, far_stride(kHkv * kDim, GetParam().far_row)));
        EXPECT_GT(span_elements(out[1]), kTwo31);
        return out;
    }
    std::vector<int32_t> far_slots(size_t n) {
        std::uniform_int_distribution<int32_t> u(static_cast<int32_t>(GetParam().far_row), kSlots - 1);
        std::vector<int32_t> v(n);
        for (auto &x : v) x = u(rng);
        return v;
    }
    // Runs `call(k_buffer, v_buffer, o, variant)` (a K7 or K8 call over kT tokens writing o)
    // with the compact and the spread caches, bounded and full width, and compares the outputs.
    using CacheCall = std::function<lb_status(const lb_tensor &, const lb_tensor &, const lb_tensor &, lb_variant)>;
    void run_on_both_spans(const CacheCall &call) {
        const std::vector<Placed> kb = caches(k_cache), vb = caches(v_cache);
        SKIP_UNLESS_PLACED(kb[1]);
        SKIP_UNLESS_PLACED(vb[1]);
        for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
            SCOPED_TRACE(variant == LB_BOUNDED ? "bounded" : "full width");
            std::vector<std::vector<uint8_t>> results;
            for (int which : {0, 1}) {
                const std::vector<uint16_t> poison(kT * kHq * kDim, 0x7e5a);
                Placed o = place(poison, LB_BFLOAT16, {kT, kHq, kDim});
                const lb_status status = call(kb[which].tensor, vb[which].tensor, o.tensor, variant);
                if (status == LB_ERROR_UNSUPPORTED && variant == LB_FULL_WIDTH && kOnCuda) {
                    GTEST_SKIP() << "no CUDA full-width variant for this shape: " << lb_last_error();
                }
                finish(status);
                results.push_back(fetch(o));
            }
            expect_same(results[0], results[1]);
        }
    }
    void expect_same(const std::vector<uint8_t> &compact, const std::vector<uint8_t> &spread) {
        if (!kOnCuda || GetParam().same_kernel_on_cuda) {
            EXPECT_EQ(compact, spread);
            return;
        }
        ASSERT_EQ(compact.size(), spread.size());
        double worst = 0;
        for (size_t i = 0; i + 1 < compact.size(); i += 2) {
            uint16_t a, b;
            std::memcpy(&a, &compact[i], 2);
            std::memcpy(&b, &spread[i], 2);
            worst = std::max(worst, double(std::fabs(float_of_bf16(a) - float_of_bf16(b))));
        }
        EXPECT_LE(worst, 1.0 / 64) << "largest difference between the tensor-core and SIMT outputs";
    }
};

// Two requests: prefix 20 and 13 cache keys, extends of 5 and 3 tokens, causal.
TEST_P(HugeCaches, K7KvCachePast2To31) {
    const std::vector<uint16_t> q = random_bf16(kT * kHq * kDim, rng), k = random_bf16(kT * kHkv * kDim, rng),
                                v = random_bf16(kT * kHkv * kDim, rng);
    const Placed qt = place(q, LB_BFLOAT16, {kT, kHq, kDim}), kt = place(k, LB_BFLOAT16, {kT, kHkv, kDim}),
                 vt = place(v, LB_BFLOAT16, {kT, kHkv, kDim});
    const std::vector<int32_t> qo = {0, 5, 8}, kv = {0, 20, 33}, slots = far_slots(33);
    const Placed qo_t = place(qo, LB_INT32, {3}), kv_t = place(kv, LB_INT32, {3}), slots_t = place(slots, LB_INT32, {33});
    run_on_both_spans([&](const lb_tensor &k_buffer, const lb_tensor &v_buffer, const lb_tensor &o, lb_variant variant) {
        lb_extend_attention_args a{};
        a.q_extend = qt.tensor;
        a.k_extend = kt.tensor;
        a.v_extend = vt.tensor;
        a.o_extend = o;
        a.k_buffer = k_buffer;
        a.v_buffer = v_buffer;
        a.qo_indptr = qo_t.tensor;
        a.kv_indptr = kv_t.tensor;
        a.kv_indices = slots_t.tensor;
        a.max_len_extend = 5;
        a.is_causal = 1;
        a.k_scale = a.v_scale = 1.0f;
        a.variant = variant;
        return lb_extend_attention_fwd(&a, device());
    });
}

// Two requests: unified lists of 20 + 5 and 13 + 3 cache slots, causal.
TEST_P(HugeCaches, K8KvCachePast2To31) {
    const std::vector<uint16_t> q = random_bf16(kT * kHq * kDim, rng);
    const Placed qt = place(q, LB_BFLOAT16, {kT, kHq, kDim});
    const std::vector<int32_t> qo = {0, 5, 8}, kv = {0, 25, 41}, prefix = {20, 13}, slots = far_slots(41);
    const Placed qo_t = place(qo, LB_INT32, {3}), kv_t = place(kv, LB_INT32, {3}), prefix_t = place(prefix, LB_INT32, {2}),
                 slots_t = place(slots, LB_INT32, {41});
    run_on_both_spans([&](const lb_tensor &k_buffer, const lb_tensor &v_buffer, const lb_tensor &o, lb_variant variant) {
        lb_extend_attention_unified_args a{};
        a.q = qt.tensor;
        a.o = o;
        a.k_buffer = k_buffer;
        a.v_buffer = v_buffer;
        a.qo_indptr = qo_t.tensor;
        a.kv_indptr = kv_t.tensor;
        a.kv_indices = slots_t.tensor;
        a.prefix_lens = prefix_t.tensor;
        a.max_len_extend = 5;
        a.is_causal = 1;
        a.k_scale = a.v_scale = 1.0f;
        a.variant = variant;
        return lb_extend_attention_fwd_unified(&a, device());
    });
}

// far_row 40: a span of 3.4G elements (6.9 GB per cache), 1.7G pairs: tensor cores on CUDA.
// far_row 16: 8.6G elements (17 GB per cache), past 2^31 pairs: SIMT on CUDA.
INSTANTIATE_TEST_SUITE_P(Spans, HugeCaches, ::testing::Values(CacheCase{40, true}, CacheCase{16, false}),
                         [](const ::testing::TestParamInfo<CacheCase> &info) {
                             return "far_row_" + std::to_string(info.param.far_row);
                         });

}  // namespace
}  // namespace livebound::testing
