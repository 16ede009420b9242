// K1 argument validation (livebound.h: "Every argument is validated before anything runs.
// A bad one returns a non-zero lb_status and writes nothing; lb_last_error() then names the
// argument"). Each test breaks exactly one argument of an otherwise valid CPU call and
// asserts the status, that the message names the argument, and that every output still
// holds the poison.
#include <gtest/gtest.h>

#include <cctype>
#include <climits>
#include <ostream>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "decode_metadata_cases.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing {
namespace {

// The valid call every test starts from: bs = 4, max_seq_len 64, ps 16, SWA on,
// 7 pool rows with a shuffled req_pool_indices, int64 seq_lens and req_pool_indices.
// Shapes: seq_lens [4] int64, req_pool_indices [4] int64, req_to_token [7, 128] int32,
// full_to_swa [10000] int64, cache_seqlens [6] int32, cu_seqlens_k [7] int32,
// page_table / swa_page_table [6, max_seq_pages + 10] int32 (row stride = width).
DecodeMetadataCase baseline_case() {
    DecodeMetadataCase c;
    c.name = "errors_baseline_B4_len64_ps16_swa";
    c.batch_size = 4;
    c.max_seq_len = 64;
    c.page_size = 16;
    c.with_swa = true;
    c.pool = PoolLayout::kShuffledLargerPool;
    c.seed = 4242;
    return c;
}

const char *status_name(lb_status s) {
    switch (s) {
    case LB_OK: return "LB_OK";
    case LB_ERROR_INVALID_ARGUMENT: return "LB_ERROR_INVALID_ARGUMENT";
    case LB_ERROR_UNSUPPORTED: return "LB_ERROR_UNSUPPORTED";
    case LB_ERROR_DEVICE: return "LB_ERROR_DEVICE";
    case LB_ERROR_KERNEL: return "LB_ERROR_KERNEL";
    }
    return "unknown lb_status";
}

// The call failed with one of `statuses` and its message names one of `names`.
::testing::AssertionResult rejected(lb_status status, const std::vector<lb_status> &statuses,
                                    const std::vector<std::string> &names) {
    const std::string message = lb_last_error();
    // In --gtest_output=xml reports: the message each rejection produced.
    ::testing::Test::RecordProperty("lb_last_error", message);
    bool status_ok = false;
    for (lb_status s : statuses) status_ok = status_ok || s == status;
    bool named = false;
    for (const std::string &n : names) named = named || names_argument(message, n);
    if (status_ok && named) return ::testing::AssertionSuccess();
    ::testing::AssertionResult r = ::testing::AssertionFailure();
    r << "status " << status_name(status) << " (want";
    for (lb_status s : statuses) r << " " << status_name(s);
    r << "), lb_last_error() = \"" << message << "\" (must name";
    for (const std::string &n : names) r << " '" << n << "'";
    r << ")";
    return r;
}

// One bad argument: how to break the baseline call, and what the rejection must say.
struct BadArgument {
    std::string test_name;             // gtest name: what is wrong
    std::vector<std::string> names;    // lb_last_error() must name one of these
    std::vector<lb_status> statuses;   // acceptable statuses
    // Breaks the call. `args` points at `problem`'s buffers; changing the problem's input
    // values changes what the call sees.
    std::function<void(lb_decode_metadata_args &, DecodeMetadataProblem &)> apply;
};

void PrintTo(const BadArgument &bad, std::ostream *os) { *os << bad.test_name; }

const std::vector<lb_status> kInvalid = {LB_ERROR_INVALID_ARGUMENT};
const std::vector<lb_status> kInvalidOrDevice = {LB_ERROR_INVALID_ARGUMENT, LB_ERROR_DEVICE};

using Member = lb_tensor lb_decode_metadata_args::*;
struct NamedTensor {
    const char *name;
    Member member;
};
const NamedTensor kTensors[] = {
    {"seq_lens", &lb_decode_metadata_args::seq_lens},
    {"req_pool_indices", &lb_decode_metadata_args::req_pool_indices},
    {"req_to_token", &lb_decode_metadata_args::req_to_token},
    {"full_to_swa", &lb_decode_metadata_args::full_to_swa},
    {"cache_seqlens", &lb_decode_metadata_args::cache_seqlens},
    {"cu_seqlens_k", &lb_decode_metadata_args::cu_seqlens_k},
    {"page_table", &lb_decode_metadata_args::page_table},
    {"swa_page_table", &lb_decode_metadata_args::swa_page_table},
};

// A 1-D tensor seen as [n, 1] (ndim 2), a 2-D one as its first row (ndim 1).
void change_ndim(lb_tensor &t) {
    if (t.ndim == 1) {
        t.ndim = 2;
        t.shape[1] = 1;
        t.strides[1] = 1;
    } else {
        t.ndim = 1;
        t.shape[0] = t.shape[1];
        t.strides[0] = t.strides[1];
        t.shape[1] = 0;
        t.strides[1] = 0;
    }
}

std::vector<BadArgument> bad_arguments() {
    std::vector<BadArgument> list;
    auto add = [&](std::string test, std::vector<std::string> names, std::vector<lb_status> statuses,
                   std::function<void(lb_decode_metadata_args &, DecodeMetadataProblem &)> apply) {
        list.push_back({std::move(test), std::move(names), std::move(statuses), std::move(apply)});
    };

    // ---- per tensor: null data with a non-zero shape, wrong ndim, absent ----
    for (const NamedTensor &t : kTensors) {
        const Member m = t.member;
        add(std::string("NullDataNonEmpty_") + t.name, {t.name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { (a.*m).data = nullptr; });
        add(std::string("WrongNdim_") + t.name, {t.name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { change_ndim(a.*m); });
        add(std::string("NdimThree_") + t.name, {t.name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { (a.*m).ndim = 3; });
        add(std::string("DtypeNone_") + t.name, {t.name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { (a.*m).dtype = LB_DTYPE_NONE; });
        add(std::string("DtypeUnknownEnum_") + t.name, {t.name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { (a.*m).dtype = static_cast<lb_dtype>(9); });
        add(std::string("NegativeExtent_") + t.name, {t.name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { (a.*m).shape[(a.*m).ndim - 1] = -1; });
    }
    // Required tensors passed as absent (all-zero descriptors). full_to_swa and
    // swa_page_table are optional as a pair (tested below).
    for (const NamedTensor &t : kTensors) {
        const std::string name = t.name;
        if (name == "full_to_swa" || name == "swa_page_table") continue;
        const Member m = t.member;
        add("Absent_" + name, {name}, kInvalid,
            [m](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.*m = lb_tensor{}; });
    }

    // ---- wrong dtypes (each tensor's other integer type, where only one is allowed) ----
    add("DtypeInt64_req_to_token", {"req_to_token"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.req_to_token.dtype = LB_INT64; });
    add("DtypeInt32_full_to_swa", {"full_to_swa"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.full_to_swa.dtype = LB_INT32; });
    add("DtypeInt64_cache_seqlens", {"cache_seqlens"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.cache_seqlens.dtype = LB_INT64; });
    add("DtypeInt64_cu_seqlens_k", {"cu_seqlens_k"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.cu_seqlens_k.dtype = LB_INT64; });
    add("DtypeInt64_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.page_table.dtype = LB_INT64; });
    add("DtypeInt64_swa_page_table", {"swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.swa_page_table.dtype = LB_INT64; });

    // ---- shapes that do not fit bs / max_seq_pages ----
    add("LengthBsPlus1_req_pool_indices", {"req_pool_indices"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.req_pool_indices.shape[0] += 1; });
    add("LengthBsMinus1_req_pool_indices", {"req_pool_indices"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.req_pool_indices.shape[0] -= 1; });
    add("ShorterThanBs_cache_seqlens", {"cache_seqlens"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) { a.cache_seqlens.shape[0] = p.bs - 1; });
    add("ShorterThanBsPlus1_cu_seqlens_k", {"cu_seqlens_k"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) { a.cu_seqlens_k.shape[0] = p.bs; });
    add("FewerRowsThanBs_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) { a.page_table.shape[0] = p.bs - 1; });
    add("FewerColumnsThanMaxSeqPages_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) { a.page_table.shape[1] = p.max_seq_pages - 1; });
    add("FewerRowsThanBs_swa_page_table", {"swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) { a.swa_page_table.shape[0] = p.bs - 1; });
    add("FewerColumnsThanMaxSeqPages_swa_page_table", {"swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) {
            a.swa_page_table.shape[1] = p.max_seq_pages - 1;
        });

    // ---- scalars ----
    for (int32_t ps : {0, 3, -16, 1 << 21, INT32_MIN, 24}) {
        const std::string tag = ps < 0 ? "Minus" + std::to_string(-static_cast<int64_t>(ps)) : std::to_string(ps);
        add("PageSize" + tag, {"page_size"}, kInvalid,
            [ps](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.page_size = ps; });
    }
    add("MaxSeqPagesMinus1", {"max_seq_pages"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.max_seq_pages = -1; });
    add("MaxSeqPagesInt64Min", {"max_seq_pages"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.max_seq_pages = INT64_MIN; });
    // Past INT32_MAX; the page tables keep their (narrower) width, so a message about that
    // relation names max_seq_pages as well.
    add("MaxSeqPagesAboveInt32Max", {"max_seq_pages"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.max_seq_pages = int64_t{INT32_MAX} + 1; });
    add("UnknownVariant", {"variant"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.variant = static_cast<lb_variant>(7); });

    // ---- strides: livebound.h wants strides >= 1 and a column stride of 1 for 2-D tables
    // (zero or negative output strides would alias or leave the view) ----
    // A negative stride is given with a data pointer at the view's far end, so that every
    // element of the view is inside the allocation even if a runtime accepted it.
    add("ColumnStrideZero_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.page_table.strides[1] = 0; });
    add("RowStrideZero_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.page_table.strides[0] = 0; });
    add("RowStrideNegative_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) {
            a.page_table.data = static_cast<int32_t *>(a.page_table.data) + (a.page_table.shape[0] - 1) * a.page_table.strides[0];
            a.page_table.strides[0] = -a.page_table.strides[0];
        });
    add("ColumnStride2_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) {
            a.page_table.strides[1] = 2;  // every other element of each row: still >= max_seq_pages columns
            a.page_table.shape[1] /= 2;
        });
    add("ColumnStride2_req_to_token", {"req_to_token"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) {
            a.req_to_token.strides[1] = 2;  // every other token: still wide enough for the live reads
            a.req_to_token.shape[1] /= 2;
        });
    add("ColumnStrideZero_swa_page_table", {"swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.swa_page_table.strides[1] = 0; });
    add("RowStrideZero_swa_page_table", {"swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.swa_page_table.strides[0] = 0; });
    add("StrideZero_cache_seqlens", {"cache_seqlens"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.cache_seqlens.strides[0] = 0; });
    add("StrideZero_cu_seqlens_k", {"cu_seqlens_k"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.cu_seqlens_k.strides[0] = 0; });
    add("StrideNegative_cu_seqlens_k", {"cu_seqlens_k"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) {
            a.cu_seqlens_k.data = static_cast<int32_t *>(a.cu_seqlens_k.data) + (a.cu_seqlens_k.shape[0] - 1);
            a.cu_seqlens_k.strides[0] = -1;
        });
    add("StrideNegative_seq_lens", {"seq_lens"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) {
            a.seq_lens.data = static_cast<int64_t *>(a.seq_lens.data) + (a.seq_lens.shape[0] - 1);
            a.seq_lens.strides[0] = -1;
        });
    add("RowStrideNegative_req_to_token", {"req_to_token"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) {
            a.req_to_token.data =
                static_cast<int32_t *>(a.req_to_token.data) + (a.req_to_token.shape[0] - 1) * a.req_to_token.strides[0];
            a.req_to_token.strides[0] = -a.req_to_token.strides[0];
        });

    // ---- index values (the CPU path reads and validates them) ----
    add("ValueEqualsPoolRows_req_pool_indices", {"req_pool_indices"}, kInvalid,
        [](lb_decode_metadata_args &, DecodeMetadataProblem &p) { p.req_pool_indices.store(1, p.pool_rows); });
    add("ValueMinus1_req_pool_indices", {"req_pool_indices"}, kInvalid,
        [](lb_decode_metadata_args &, DecodeMetadataProblem &p) { p.req_pool_indices.store(0, -1); });
    // int64 row 2^32 + 1: an int32 truncation would turn it into the valid row 1.
    add("Int64ValueAbove2pow32_req_pool_indices", {"req_pool_indices"}, kInvalid,
        [](lb_decode_metadata_args &, DecodeMetadataProblem &p) {
            p.req_pool_indices.store(2, (int64_t{1} << 32) + 1);
        });
    // The last live page of entry 2 starts at column ctx: one past req_to_token's width.
    // max_seq_pages is widened to the page tables' width so that it does not clamp the read.
    add("LivePagesReadPastContext_seq_lens", {"seq_lens", "req_to_token"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) {
            a.max_seq_pages = p.page_table.shape[1];
            p.seq_lens.store(p.seq_lens.offset(2), p.ctx + 1);
        });
    // Same read past the context, reached through seq_len_delta.
    add("LivePagesReadPastContextThroughDelta_seq_lens", {"seq_lens", "req_to_token", "seq_len_delta"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &p) {
            a.max_seq_pages = p.page_table.shape[1];
            p.seq_lens.store(p.seq_lens.offset(2), p.ctx);
            a.seq_len_delta = 1;
        });

    // ---- req_to_token and full_to_swa must not be empty when bs > 0 ----
    add("NoRow_req_to_token", {"req_to_token"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.req_to_token.shape[0] = 0; });
    add("NoColumn_req_to_token", {"req_to_token"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.req_to_token.shape[1] = 0; });
    add("Empty_full_to_swa", {"full_to_swa"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.full_to_swa.shape[0] = 0; });

    // ---- an extent of 2^31 (the upper bound of [0, 2^31)): page_table's columns only need
    // to be at least max_seq_pages, so only the range check refuses it. The shape is never
    // used to read or write: the check comes first. ----
    add("Extent2pow31_page_table", {"page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.page_table.shape[1] = int64_t{1} << 31; });

    // ---- SWA (CPU): a token slot read at a live page must index full_to_swa ----
    // The first request with live pages gets slot len(full_to_swa) (or -1) at its first
    // live column, [its pool row, 0].
    for (const int64_t slot : {int64_t{kFullPoolSlots}, int64_t{-1}}) {
        add(std::string("LiveSlot") + (slot < 0 ? "Minus1" : "EqualsLenFullToSwa") + "_req_to_token", {"req_to_token"},
            kInvalid, [slot](lb_decode_metadata_args &a, DecodeMetadataProblem &p) {
                for (int64_t b = 0; b < p.bs; ++b) {
                    if (p.seq_len_values[b] + a.seq_len_delta <= 0) continue;  // no live page: never read
                    p.req_to_token.store(p.req_to_token.offset(p.pool_row_of[b], 0), slot);
                    return;
                }
                ADD_FAILURE() << "the baseline has no request with a live page";
            });
    }

    // ---- the SWA pair ----
    add("SwaPageTableWithoutFullToSwa", {"full_to_swa", "swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.full_to_swa = lb_tensor{}; });
    add("FullToSwaWithoutSwaPageTable", {"full_to_swa", "swa_page_table"}, kInvalid,
        [](lb_decode_metadata_args &a, DecodeMetadataProblem &) { a.swa_page_table = lb_tensor{}; });
    return list;
}

class DecodeMetadataBadArgument : public ::testing::TestWithParam<BadArgument> {};

TEST_P(DecodeMetadataBadArgument, IsRejectedByNameAndWritesNothing) {
    const BadArgument &bad = GetParam();
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    const std::string context = problem.describe(LB_BOUNDED) + " broken: " + bad.test_name;
    SCOPED_TRACE(context);
    lb_decode_metadata_args args = problem.args(LB_BOUNDED);
    bad.apply(args, problem);

    const lb_status status = lb_normal_decode_set_metadata(&args, livebound::cpu());
    EXPECT_TRUE(rejected(status, bad.statuses, bad.names));
    EXPECT_TRUE(outputs_untouched(problem, context));
}

INSTANTIATE_TEST_SUITE_P(Cpu, DecodeMetadataBadArgument, ::testing::ValuesIn(bad_arguments()),
                         [](const ::testing::TestParamInfo<BadArgument> &info) { return info.param.test_name; });

// The baseline itself is valid: without this, every rejection above could be an accident.
TEST(DecodeMetadataErrors, BaselineCallSucceeds) {
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    const lb_decode_metadata_args args = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_normal_decode_set_metadata(&args, livebound::cpu()), LB_OK) << lb_last_error();
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());
    EXPECT_TRUE(check_seqlens(problem, expected, problem.describe(LB_BOUNDED)));
}

// Spec §3.1: a request with no live page has its row never read, so its req_pool_indices
// entry may be garbage. The CPU accepts it as CUDA does (issue 11: the devices disagreed),
// writes the request's lengths and leaves its page-table row alone.
TEST(DecodeMetadataErrors, DeadRequestWithGarbagePoolRowIsAccepted) {
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    problem.set_seq_lens({0, problem.seq_len_values[1], problem.seq_len_values[2], problem.seq_len_values[3]});
    problem.pool_row_of[0] = 1000000007;
    problem.req_pool_indices.store(0, 1000000007);
    const std::string context = problem.describe(LB_BOUNDED) + " seq_lens[0] = 0, req_pool_indices[0] = 1000000007";
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());
    const lb_decode_metadata_args args = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_normal_decode_set_metadata(&args, livebound::cpu()), LB_OK) << context << "\n" << lb_last_error();
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, PageTableExpectation::kBounded, context));
    // A live request's garbage row is still refused by name.
    problem.set_seq_lens({1, problem.seq_len_values[1], problem.seq_len_values[2], problem.seq_len_values[3]});
    const lb_decode_metadata_args live_args = problem.args(LB_BOUNDED);
    EXPECT_EQ(lb_normal_decode_set_metadata(&live_args, livebound::cpu()), LB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lb_last_error()).find("req_pool_indices[0] = 1000000007"), std::string::npos)
        << lb_last_error();
}

// The boundary of the read-past-context check: a last live page starting at column
// ctx - page_size (seq_len == ctx) is inside req_to_token and must be accepted.
TEST(DecodeMetadataErrors, LivePagesEndingExactlyAtContextAreAccepted) {
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    problem.max_seq_pages = problem.page_table.shape[1];  // wide enough not to clamp
    problem.set_seq_lens({problem.seq_len_values[0], problem.seq_len_values[1], problem.ctx, problem.seq_len_values[3]});
    const std::string context = problem.describe(LB_BOUNDED) + " seq_lens[2] == ctx";
    const reference::DecodeMetadataExpected expected = reference::decode_metadata(problem.reference_inputs());
    const lb_decode_metadata_args args = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_normal_decode_set_metadata(&args, livebound::cpu()), LB_OK) << context << "\n" << lb_last_error();
    EXPECT_TRUE(check_seqlens(problem, expected, context));
    EXPECT_TRUE(check_page_tables(problem, expected, PageTableExpectation::kBounded, context));
}

TEST(DecodeMetadataErrors, NullArgsPointer) {
    const lb_status status = lb_normal_decode_set_metadata(nullptr, livebound::cpu());
    EXPECT_TRUE(rejected(status, kInvalid, {"args"}));
}

// ---- devices ----

class DecodeMetadataBadDevice : public ::testing::Test {
protected:
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);

    void expect_rejected(lb_device device, const std::vector<lb_status> &statuses, const std::string &what) {
        const std::string context = problem.describe(LB_BOUNDED, "bad") + " " + what;
        SCOPED_TRACE(context);
        const lb_decode_metadata_args args = problem.args(LB_BOUNDED);
        const lb_status status = lb_normal_decode_set_metadata(&args, device);
        EXPECT_TRUE(rejected(status, statuses, {"device"}));
        EXPECT_TRUE(outputs_untouched(problem, context));
    }
};

TEST_F(DecodeMetadataBadDevice, UnknownDeviceType) {
    expect_rejected(lb_device{static_cast<lb_device_type>(7), 0, nullptr}, kInvalid, "device type 7");
}

TEST_F(DecodeMetadataBadDevice, CudaIndexMinus1) {
    expect_rejected(livebound::cuda_device(-1, nullptr), kInvalidOrDevice, "CUDA device -1");
}

TEST_F(DecodeMetadataBadDevice, CudaIndex999) {
    expect_rejected(livebound::cuda_device(999, nullptr), kInvalidOrDevice, "CUDA device 999");
}

// Without a driver or device, a CUDA call fails cleanly (no GPU on this machine: this is
// the path CI takes); with a device, the wrong-memory test lives in the CUDA suite.
TEST_F(DecodeMetadataBadDevice, CudaWithoutDeviceFailsAndWritesNothing) {
    if (lb_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present; see test_decode_metadata_cuda";
    const std::string context = problem.describe(LB_BOUNDED, "cuda:0") + " (no CUDA device)";
    const lb_decode_metadata_args args = problem.args(LB_BOUNDED);
    const lb_status status = lb_normal_decode_set_metadata(&args, livebound::cuda_device(0, nullptr));
    EXPECT_TRUE(status == LB_ERROR_DEVICE || status == LB_ERROR_UNSUPPORTED)
        << context << ": status " << status_name(status) << ", lb_last_error() = \"" << lb_last_error() << "\"";
    EXPECT_STRNE(lb_last_error(), "") << context;
    EXPECT_EQ(lb_cuda_device_available(0), 0);
    EXPECT_TRUE(outputs_untouched(problem, context));
}

// ---- lb_last_error() lifecycle ----

TEST(DecodeMetadataLastError, SuccessAfterFailureClearsTheMessage) {
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    lb_decode_metadata_args bad = problem.args(LB_BOUNDED);
    bad.page_size = 3;
    ASSERT_NE(lb_normal_decode_set_metadata(&bad, livebound::cpu()), LB_OK);
    ASSERT_STRNE(lb_last_error(), "");

    const lb_decode_metadata_args good = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_normal_decode_set_metadata(&good, livebound::cpu()), LB_OK) << lb_last_error();
    EXPECT_STREQ(lb_last_error(), "");
}

TEST(DecodeMetadataLastError, MessageIsPerThread) {
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    lb_decode_metadata_args bad = problem.args(LB_BOUNDED);
    bad.page_size = 3;
    ASSERT_NE(lb_normal_decode_set_metadata(&bad, livebound::cpu()), LB_OK);
    const std::string before = lb_last_error();
    ASSERT_TRUE(names_argument(before, "page_size")) << before;

    // Another thread's success (which clears its own message) leaves this thread's alone.
    DecodeMetadataProblem other = make_problem(baseline_case(), LB_INT64, LB_INT64);
    lb_status other_status = LB_ERROR_KERNEL;
    std::string other_message = "unset";
    std::thread worker([&] {
        const lb_decode_metadata_args good = other.args(LB_BOUNDED);
        other_status = lb_normal_decode_set_metadata(&good, livebound::cpu());
        other_message = lb_last_error();
    });
    worker.join();
    EXPECT_EQ(other_status, LB_OK) << other_message;
    EXPECT_EQ(other_message, "");
    EXPECT_EQ(std::string(lb_last_error()), before);
}

// The C++ wrapper throws livebound::Error with the status and the message.
TEST(DecodeMetadataLastError, CppWrapperThrowsWithStatusAndMessage) {
    DecodeMetadataProblem problem = make_problem(baseline_case(), LB_INT64, LB_INT64);
    lb_decode_metadata_args bad = problem.args(LB_BOUNDED);
    bad.page_size = 0;
    try {
        livebound::normal_decode_set_metadata(bad, livebound::cpu());
        ADD_FAILURE() << "no exception for page_size 0";
    } catch (const livebound::Error &e) {
        EXPECT_EQ(e.status(), LB_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(names_argument(e.what(), "page_size")) << e.what();
    }
    EXPECT_TRUE(outputs_untouched(problem, problem.describe(LB_BOUNDED)));
}

}  // namespace
}  // namespace livebound::testing
