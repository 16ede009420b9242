// K2 / K3 argument validation (dsa_metadata.h: every argument is validated before anything
// runs; a bad one returns a non-zero lb_status, writes nothing, and lb_last_error() names it).
// Each test breaks exactly one argument of an otherwise valid CPU call and asserts the status,
// that the message names the argument, and that every output still holds the poison.
#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <string>
#include <vector>

#include "cases.h"

namespace livebound::dsa_testing {
namespace {

// Valid K2 call: bs 4, max_len 64, rps 16 (both tables), topk 8, kpool 1, int64.
DsaCase k2_baseline() {
    DsaCase c;
    c.name = "errors_k2_bs4_width64_rps16";
    c.seq_lens = {10, 64, 0, 33};
    c.width = 64;
    c.topk = 8;
    c.rps = 16;
    return c;
}
// Valid K3 call: bs 3, next_n 2, max_seqlen_k 64, rps 16, paged_mqa_ctx_lens_2d given.
DsaCase k3_baseline() {
    DsaCase c = k2_baseline();
    c.name = "errors_k3_bs3_next_n2_width64_rps16_ctx";
    c.seq_lens = {10, 62, 0};
    c.next_n = 2;
    c.ctx_lens = true;
    return c;
}

bool names_argument(const std::string &message, const std::string &name) {
    auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    for (size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
        const size_t end = at + name.size();
        if ((at == 0 || !ident(message[at - 1])) && (end == message.size() || !ident(message[end]))) return true;
    }
    return false;
}

template <class Args>
struct Bad {
    std::string test_name;
    std::string name;  // the argument lb_last_error() must name
    lb_status status = LB_ERROR_INVALID_ARGUMENT;
    std::function<void(Args &, DsaProblem &)> apply;
    lb_device device = livebound::cpu();  // the device the call runs on (rows breaking the device)
    lb_status also = LB_OK;               // a second accepted status (LB_OK: none)
};
template <class Args>
void PrintTo(const Bad<Args> &b, std::ostream *os) { *os << b.test_name; }

// Breaks for any tensor field of either argument block.
template <class Args>
void add_tensor_breaks(std::vector<Bad<Args>> &list, const char *name, lb_tensor Args::*m, bool required) {
    auto add = [&](const std::string &what, std::function<void(Args &, DsaProblem &)> f) {
        list.push_back({what + "_" + name, name, LB_ERROR_INVALID_ARGUMENT, std::move(f)});
    };
    add("NullData", [m](Args &a, DsaProblem &) { (a.*m).data = nullptr; });
    add("NdimThree", [m](Args &a, DsaProblem &) { (a.*m).ndim = 3; });
    add("DtypeNone", [m](Args &a, DsaProblem &) { (a.*m).dtype = LB_DTYPE_NONE; });
    add("NegativeExtent", [m](Args &a, DsaProblem &) { (a.*m).shape[(a.*m).ndim - 1] = -1; });
    add("TooShort", [m](Args &a, DsaProblem &) { (a.*m).shape[0] = 0; });
    if (required) add("Absent", [m](Args &a, DsaProblem &) { a.*m = lb_tensor{}; });
}

template <class Args>
void add_common_breaks(std::vector<Bad<Args>> &list, int64_t Args::*width, const char *width_name) {
    auto add = [&](const std::string &test, const std::string &name, std::function<void(Args &, DsaProblem &)> f,
                   lb_status status = LB_ERROR_INVALID_ARGUMENT) {
        list.push_back({test, name, status, std::move(f)});
    };
    add("VariantOutOfRange", "variant", [](Args &a, DsaProblem &) { a.variant = static_cast<lb_variant>(7); });
    add("WidthZero", width_name, [width](Args &a, DsaProblem &) { a.*width = 0; });
    add("WidthAbove2Pow30", width_name, [width](Args &a, DsaProblem &) { a.*width = (int64_t{1} << 30) + 1; });
    add("ReqToTokenNarrowerThanWidth", "req_to_token", [](Args &a, DsaProblem &) { a.req_to_token.shape[1] = 63; });
    add("ReqToTokenInt64", "req_to_token", [](Args &a, DsaProblem &) { a.req_to_token.dtype = LB_INT64; });
    add("TableColumnStride2", "page_table_1", [](Args &a, DsaProblem &) { a.page_table_1.strides[1] = 2; });
    add("TopkNegative", "dsa_index_topk", [](Args &a, DsaProblem &) { a.dsa_index_topk = -1; });
    add("KpoolNegative", "index_kpool", [](Args &a, DsaProblem &) { a.index_kpool = -2; });
    add("RealPageSizeZero", "real_page_size", [](Args &a, DsaProblem &) { a.real_page_size = 0; });
    add("RealPageSizeNotPow2", "real_page_size", [](Args &a, DsaProblem &) { a.real_page_size = 48; });
    add("RealPageSizeAbove2Pow20", "real_page_size", [](Args &a, DsaProblem &) { a.real_page_size = 1 << 21; });
    add("RealTableTooNarrow", "real_page_table", [](Args &a, DsaProblem &) { a.real_page_table.shape[1] = 3; });
    add("RealAbsentWithRps16", "real_page_table", [](Args &a, DsaProblem &) { a.real_page_table = lb_tensor{}; });
    add("Rps1WithDistinctRealTable", "real_page_table", [](Args &a, DsaProblem &) { a.real_page_size = 1; });
    add("Rps1WithoutPageTable1", "page_table_1", [](Args &a, DsaProblem &) {
        a.real_page_size = 1;
        a.page_table_1 = lb_tensor{};
        a.real_page_table = lb_tensor{};
    });
    add("PageTable1TooNarrow", "page_table_1", [](Args &a, DsaProblem &) { a.page_table_1.shape[1] = 63; });
    add("RpiLengthNotBs", "req_pool_indices", [](Args &a, DsaProblem &) { a.req_pool_indices.shape[0] -= 1; });
    add("RpiRowPastPool", "req_pool_indices", [](Args &, DsaProblem &p) { p.req_pool_indices.store(1, p.pool_rows); });
    add("RpiRowNegative", "req_pool_indices", [](Args &, DsaProblem &p) { p.req_pool_indices.store(0, -1); });
    // ---- strides outside [1, 2^31) (refused before anything is read) ----
    add("StrideZero_seq_lens", "seq_lens", [](Args &a, DsaProblem &) { a.seq_lens.strides[0] = 0; });
    add("Stride2pow31_cu_seqlens_k", "cu_seqlens_k",
        [](Args &a, DsaProblem &) { a.cu_seqlens_k.strides[0] = int64_t{1} << 31; });
    // (data at the view's far end, so that every element of the view is inside the storage.)
    add("RowStrideNegative_req_to_token", "req_to_token", [](Args &a, DsaProblem &) {
        a.req_to_token.data =
            static_cast<int32_t *>(a.req_to_token.data) + (a.req_to_token.shape[0] - 1) * a.req_to_token.strides[0];
        a.req_to_token.strides[0] = -a.req_to_token.strides[0];
    });
    // ---- an extent of 2^31: an output that need only be at least bs + 1 long ----
    add("Extent2pow31_dsa_cu_seqlens_k", "dsa_cu_seqlens_k",
        [](Args &a, DsaProblem &) { a.dsa_cu_seqlens_k.shape[0] = int64_t{1} << 31; });
    // ---- the device (the call's other arguments are the valid CPU ones, in host memory) ----
    auto noop = [](Args &, DsaProblem &) {};
    list.push_back({"UnknownDeviceType", "device", LB_ERROR_INVALID_ARGUMENT, noop,
                    lb_device{static_cast<lb_device_type>(5), 0, nullptr}});
    // As K1's DecodeMetadataBadDevice.CudaIndex*: LB_ERROR_DEVICE (no driver: "CUDA is not
    // available"; with one: "CUDA device n does not exist").
    list.push_back({"CudaIndexMinus1", "device", LB_ERROR_INVALID_ARGUMENT, noop, livebound::cuda_device(-1, nullptr),
                    LB_ERROR_DEVICE});
    list.push_back({"CudaIndex999", "device", LB_ERROR_INVALID_ARGUMENT, noop, livebound::cuda_device(999, nullptr),
                    LB_ERROR_DEVICE});
}

std::vector<Bad<lb_dsa_decode_metadata_args>> k2_bad() {
    using A = lb_dsa_decode_metadata_args;
    std::vector<Bad<A>> list;
    add_tensor_breaks<A>(list, "seq_lens", &A::seq_lens, true);
    add_tensor_breaks<A>(list, "req_pool_indices", &A::req_pool_indices, true);
    add_tensor_breaks<A>(list, "req_to_token", &A::req_to_token, true);
    add_tensor_breaks<A>(list, "cache_seqlens", &A::cache_seqlens, true);
    add_tensor_breaks<A>(list, "cu_seqlens_k", &A::cu_seqlens_k, true);
    add_tensor_breaks<A>(list, "dsa_cache_seqlens", &A::dsa_cache_seqlens, true);
    add_tensor_breaks<A>(list, "dsa_cu_seqlens_k", &A::dsa_cu_seqlens_k, true);
    add_tensor_breaks<A>(list, "page_table_1", &A::page_table_1, false);
    add_tensor_breaks<A>(list, "real_page_table", &A::real_page_table, false);
    add_common_breaks<A>(list, &A::max_len, "max_len");
    // seq_lens' own extent sets bs: a too-short seq_lens is valid (smaller batch) unless ...
    // it is 0 with a 4-entry req_pool_indices, caught as req_pool_indices' length.
    for (auto &b : list) {
        if (b.test_name == "TooShort_seq_lens") b.name = "req_pool_indices";
        if (b.test_name == "TooShort_req_pool_indices") b.name = "req_pool_indices";
    }
    list.push_back({"CuSeqlensOneShort", "cu_seqlens_k", LB_ERROR_INVALID_ARGUMENT, [](A &a, DsaProblem &) { a.cu_seqlens_k.shape[0] = 4; }});
    list.push_back({"DsaCuSeqlensOneShort", "dsa_cu_seqlens_k", LB_ERROR_INVALID_ARGUMENT, [](A &a, DsaProblem &) { a.dsa_cu_seqlens_k.shape[0] = 4; }});
    list.push_back({"PageTable1TooFewRows", "page_table_1", LB_ERROR_INVALID_ARGUMENT, [](A &a, DsaProblem &) { a.page_table_1.shape[0] = 3; }});
    return list;
}

std::vector<Bad<lb_dsa_target_verify_metadata_args>> k3_bad() {
    using A = lb_dsa_target_verify_metadata_args;
    std::vector<Bad<A>> list;
    add_tensor_breaks<A>(list, "seq_lens", &A::seq_lens, true);
    add_tensor_breaks<A>(list, "req_pool_indices", &A::req_pool_indices, true);
    add_tensor_breaks<A>(list, "req_to_token", &A::req_to_token, true);
    add_tensor_breaks<A>(list, "cache_seqlens", &A::cache_seqlens, true);
    add_tensor_breaks<A>(list, "cu_seqlens_k", &A::cu_seqlens_k, true);
    add_tensor_breaks<A>(list, "seqlens_expanded", &A::seqlens_expanded, true);
    add_tensor_breaks<A>(list, "dsa_cache_seqlens", &A::dsa_cache_seqlens, true);
    add_tensor_breaks<A>(list, "dsa_cu_seqlens_k", &A::dsa_cu_seqlens_k, true);
    add_tensor_breaks<A>(list, "page_table_1", &A::page_table_1, false);
    add_tensor_breaks<A>(list, "real_page_table", &A::real_page_table, false);
    add_tensor_breaks<A>(list, "paged_mqa_ctx_lens_2d", &A::paged_mqa_ctx_lens_2d, false);
    add_common_breaks<A>(list, &A::max_seqlen_k, "max_seqlen_k");
    for (auto &b : list) {
        if (b.test_name == "TooShort_seq_lens") b.name = "req_pool_indices";
        if (b.test_name == "TooShort_req_pool_indices") b.name = "req_pool_indices";
    }
    auto add = [&](const std::string &test, const std::string &name, std::function<void(A &, DsaProblem &)> f) {
        list.push_back({test, name, LB_ERROR_INVALID_ARGUMENT, std::move(f)});
    };
    add("NextNZero", "next_n", [](A &a, DsaProblem &) { a.next_n = 0; });
    add("NextNAbove1024", "next_n", [](A &a, DsaProblem &) { a.next_n = 1025; });
    add("SeqlensExpandedOneShort", "seqlens_expanded", [](A &a, DsaProblem &) { a.seqlens_expanded.shape[0] = 5; });
    add("DsaCacheOneShort", "dsa_cache_seqlens", [](A &a, DsaProblem &) { a.dsa_cache_seqlens.shape[0] = 5; });
    add("DsaCuOneShort", "dsa_cu_seqlens_k", [](A &a, DsaProblem &) { a.dsa_cu_seqlens_k.shape[0] = 6; });
    add("CtxLensTooNarrow", "paged_mqa_ctx_lens_2d", [](A &a, DsaProblem &) { a.paged_mqa_ctx_lens_2d.shape[1] = 1; });
    add("CtxLensTooFewRows", "paged_mqa_ctx_lens_2d", [](A &a, DsaProblem &) { a.paged_mqa_ctx_lens_2d.shape[0] = 2; });
    add("PageTable1FewerRowsThanE", "page_table_1", [](A &a, DsaProblem &) { a.page_table_1.shape[0] = 5; });
    add("RealTableFewerRowsThanE", "real_page_table", [](A &a, DsaProblem &) { a.real_page_table.shape[0] = 5; });
    // bs * next_n + 1 past 2^31 - 1. Only the shapes of seq_lens and req_pool_indices say bs:
    // they keep pointing at the baseline's 3-entry storage, which is never read (the check
    // comes before every value check and before the outputs' extents are compared with bs).
    auto with_bs = [](A &a, int64_t bs, int32_t next_n) {
        a.seq_lens.shape[0] = bs;
        a.req_pool_indices.shape[0] = bs;
        a.next_n = next_n;
    };
    // 2^21 * 1024 + 1 = 2^31 + 1.
    add("BsTimesNextNPlus1Above2pow31_next_n", "next_n", [with_bs](A &a, DsaProblem &) { with_bs(a, int64_t{1} << 21, 1024); });
    // The boundary: (2^31 - 1) * 1 + 1 = 2^31, one past INT32_MAX.
    add("BsTimesNextNPlus1Equals2pow31_next_n", "next_n",
        [with_bs](A &a, DsaProblem &) { with_bs(a, (int64_t{1} << 31) - 1, 1); });
    return list;
}

template <class Args>
void expect_rejected(const Bad<Args> &bad, const DsaCase &baseline) {
    DsaProblem p = make_problem(baseline, LB_INT64);
    const std::string context = p.describe(LB_BOUNDED, "cpu") + ", broken: " + bad.test_name;
    const lb_device device = bad.device;
    lb_status status;
    if constexpr (std::is_same_v<Args, lb_dsa_decode_metadata_args>) {
        Args a = p.k2_args(LB_BOUNDED, host_ptr);
        bad.apply(a, p);
        status = lb_fused_dsa_decode_metadata(&a, device);
    } else {
        Args a = p.k3_args(LB_BOUNDED, host_ptr);
        bad.apply(a, p);
        status = lb_fused_dsa_target_verify_metadata(&a, device);
    }
    const std::string message = lb_last_error();
    ::testing::Test::RecordProperty("lb_last_error", message);
    EXPECT_TRUE(status == bad.status || (bad.also != LB_OK && status == bad.also))
        << context << "\nstatus " << status << ", want " << bad.status
        << (bad.also != LB_OK ? " or " + std::to_string(bad.also) : std::string()) << "\nlb_last_error(): " << message;
    EXPECT_TRUE(names_argument(message, bad.name)) << context << "\nlb_last_error() must name '" << bad.name
                                                   << "': " << message;
    EXPECT_TRUE(outputs_untouched(p, context));
}

class K2Errors : public ::testing::TestWithParam<Bad<lb_dsa_decode_metadata_args>> {};
TEST_P(K2Errors, RejectedByNameAndNothingWritten) { expect_rejected(GetParam(), k2_baseline()); }
INSTANTIATE_TEST_SUITE_P(Bad, K2Errors, ::testing::ValuesIn(k2_bad()),
                         [](const auto &info) { return info.param.test_name; });

class K3Errors : public ::testing::TestWithParam<Bad<lb_dsa_target_verify_metadata_args>> {};
TEST_P(K3Errors, RejectedByNameAndNothingWritten) { expect_rejected(GetParam(), k3_baseline()); }
INSTANTIATE_TEST_SUITE_P(Bad, K3Errors, ::testing::ValuesIn(k3_bad()),
                         [](const auto &info) { return info.param.test_name; });

// The baselines themselves are valid (so that every rejection above is the broken argument's).
TEST(DsaMetadataErrorsBaseline, BaselinesSucceed) {
    for (const DsaCase &c : {k2_baseline(), k3_baseline()}) {
        DsaProblem p = make_problem(c, LB_INT64);
        const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
        ASSERT_EQ(p.call(LB_BOUNDED, host_ptr, livebound::cpu()), LB_OK) << lb_last_error();
        EXPECT_TRUE(check_outputs(p, want, LB_BOUNDED, p.describe(LB_BOUNDED, "cpu")));
    }
}

// A K2 request with seq_len 0 has no live column: its row is never read, so its
// req_pool_indices entry may be garbage. The CPU accepts it as CUDA does (issue 11), and a
// live request's garbage row is still refused by name. (K3 reads every request's row:
// live = min(s_r + next_n, max_seqlen_k) >= 1.)
TEST(DsaMetadataErrorsBaseline, DeadRequestWithGarbagePoolRowIsAccepted) {
    DsaProblem p = make_problem(k2_baseline(), LB_INT64);  // seq_lens {10, 64, 0, 33}
    // The reference (which also computes the full-width rows) sees the valid row; the bounded
    // outputs do not depend on it.
    const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
    p.req_pool_indices.store(2, 1000000007);
    ASSERT_EQ(p.call(LB_BOUNDED, host_ptr, livebound::cpu()), LB_OK) << lb_last_error();
    EXPECT_TRUE(check_outputs(p, want, LB_BOUNDED, p.describe(LB_BOUNDED, "cpu") + " req_pool_indices[2] = 1000000007"));
    p.set_seq_lens({10, 64, 1, 33});
    EXPECT_EQ(p.call(LB_BOUNDED, host_ptr, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lb_last_error()).find("req_pool_indices[2] = 1000000007"), std::string::npos)
        << lb_last_error();
}

// seq_lens and req_pool_indices may differ in dtype, as K1 and K4 accept (issue 11): the
// outputs equal the same-dtype call's (the int64 one is read as its low words).
TEST(DsaMetadataErrorsBaseline, MixedIndexDtypesEqualSameDtype) {
    for (const DsaCase &c : {k2_baseline(), k3_baseline()}) {
        for (lb_dtype seq : {LB_INT32, LB_INT64}) {
            const lb_dtype rpi = seq == LB_INT32 ? LB_INT64 : LB_INT32;
            DsaProblem p = make_problem(c, seq);
            DsaProblem rows = make_problem(c, rpi);  // the same values in the other dtype
            const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
            const std::string context = p.describe(LB_BOUNDED, "cpu") + " with req_pool_indices " +
                                        (rpi == LB_INT32 ? "int32" : "int64");
            lb_status status;
            if (p.verify()) {
                lb_dsa_target_verify_metadata_args a = p.k3_args(LB_BOUNDED, host_ptr);
                a.req_pool_indices = rows.req_pool_indices.tensor(host_ptr(rows.req_pool_indices));
                status = lb_fused_dsa_target_verify_metadata(&a, livebound::cpu());
            } else {
                lb_dsa_decode_metadata_args a = p.k2_args(LB_BOUNDED, host_ptr);
                a.req_pool_indices = rows.req_pool_indices.tensor(host_ptr(rows.req_pool_indices));
                status = lb_fused_dsa_decode_metadata(&a, livebound::cpu());
            }
            ASSERT_EQ(status, LB_OK) << context << "\n" << lb_last_error();
            EXPECT_TRUE(check_outputs(p, want, LB_BOUNDED, context));
        }
    }
}

TEST(DsaMetadataErrorsNull, NullArgsNamed) {
    EXPECT_EQ(lb_fused_dsa_decode_metadata(nullptr, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(names_argument(lb_last_error(), "args")) << lb_last_error();
    EXPECT_EQ(lb_fused_dsa_target_verify_metadata(nullptr, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(names_argument(lb_last_error(), "args")) << lb_last_error();
}

}  // namespace
}  // namespace livebound::dsa_testing
