// K2 / K3 on the test CUDA device (LIVEBOUND_TEST_DEVICE, default 0; cuda_test_util.h), on
// caller-owned device memory (cuMemAlloc in the primary context) and a caller-created
// non-blocking stream, against the plain C++ reference. Same cases and
// checks as the CPU suite (cases.h): device outputs are poisoned by uploading the poisoned
// host storage and downloaded whole (guards included) after the call. Also: the legacy
// default stream, CUDA-graph capture and replay with lengths changing between replays, a
// host pointer rejected by name, and garbage pool rows / seq_lens / token slots in device
// memory staying in bounds. Skips, saying why, without a driver or device.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cases.h"
#include "cuda_driver.h"
#include "cuda_test_util.h"  // DeviceCopies, CudaFixture, cuda_error

namespace livebound::dsa_testing {
namespace {

using livebound::testing::CapturedNodes;
using livebound::testing::count_graph_nodes;
using livebound::testing::cuda_error;
using livebound::testing::CudaFixture;

// Device copies of every present buffer of a DsaProblem (whole storage, guards included).
using Mirror = livebound::testing::DeviceCopies<Buf>;

DsaProblem::PtrFn ptr_fn(const Mirror &m) {
    return [&m](Buf &b) { return m.device_pointer(b); };
}

// CudaFixture (the test device's primary context and a non-blocking stream, or skipped) + K2/K3 runs.
class CudaBase : public CudaFixture {
protected:
    // Mirrors p, runs it on `stream`, synchronises and downloads every output into p.
    ::testing::AssertionResult run_on_device(DsaProblem &p, lb_variant variant, cuda::CUstream stream) {
        Mirror m;
        std::string e = m.mirror(p);
        if (!e.empty()) return ::testing::AssertionFailure() << e;
        const lb_status status = p.call(variant, ptr_fn(m), livebound::cuda_device(device_, stream));
        if (status != LB_OK) return ::testing::AssertionFailure() << "status " << status << ": " << lb_last_error();
        e = cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream));
        if (e.empty()) e = m.download_outputs(p);
        if (!e.empty()) return ::testing::AssertionFailure() << e;
        return ::testing::AssertionSuccess();
    }
};

// ---- every case x dtype x form ----

using Param = std::tuple<DsaCase, lb_dtype, lb_variant>;
class CudaDsaMetadata : public CudaBase, public ::testing::WithParamInterface<Param> {};

TEST_P(CudaDsaMetadata, MatchesReferenceAndWritesOnlyTheLivePrefix) {
    const auto &[spec, dtype, variant] = GetParam();
    DsaProblem p = make_problem(spec, dtype);
    const std::string context = p.describe(variant, cuda_label());
    SCOPED_TRACE(context);
    const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
    ASSERT_TRUE(run_on_device(p, variant, stream_)) << context;
    EXPECT_TRUE(check_outputs(p, want, variant, context));
}

auto name_of = [](const ::testing::TestParamInfo<Param> &info) {
    return param_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
};
INSTANTIATE_TEST_SUITE_P(Cases, CudaDsaMetadata,
                         ::testing::Combine(::testing::ValuesIn(all_cases()), ::testing::Values(LB_INT64, LB_INT32),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         name_of);
INSTANTIATE_TEST_SUITE_P(LargeShape, CudaDsaMetadata,
                         ::testing::Combine(::testing::ValuesIn(large_shape_cases()), ::testing::Values(LB_INT64),
                                            ::testing::Values(LB_BOUNDED, LB_FULL_WIDTH)),
                         name_of);

// ---- the legacy default stream (stream NULL) ----

using CudaDsaMetadataDefaultStream = CudaBase;
TEST_F(CudaDsaMetadataDefaultStream, NullStreamIsTheLegacyDefaultStream) {
    for (const DsaCase &c : {decode_cases()[3], verify_cases()[1]}) {
        DsaProblem p = make_problem(c, LB_INT64);
        const std::string context = p.describe(LB_BOUNDED, cuda_label(" stream NULL"));
        const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
        ASSERT_TRUE(run_on_device(p, LB_BOUNDED, nullptr)) << context;
        EXPECT_TRUE(check_outputs(p, want, LB_BOUNDED, context));
    }
}

// ---- CUDA-graph capture and replay with changing seq_lens ----

// The alternates the build made (schedules/<family>/tuned/, and the large-entries forms of
// cmake/families/dsa_metadata.cmake), in the runtime's order.
struct BuiltAlternate {
    const char *variant;
    int64_t min_size;
    bool by_entries;  // min_size counts prefix-sum entries (bs + 1, or E + 1 for K3)
    const char *knobs;
};
const BuiltAlternate kBuiltAlternates[] = {
#define LB_ENTRIES_ALTERNATE(variant, min_entries, alternate, knobs) {#variant, min_entries, true, knobs},
#define LB_BATCH_ALTERNATE(variant, min_batch, alternate, knobs) {#variant, min_batch, false, knobs},
#include "livebound/batch_alternates.inc"
#undef LB_BATCH_ALTERNATE
#undef LB_ENTRIES_ALTERNATE
};

// The variants built with tuned knobs (schedules/dsa_metadata/tuned/, and the siblings that
// inherit them: cmake/families/dsa_metadata.cmake).
struct BuiltTuned {
    const char *variant;
    const char *knobs;
};
const BuiltTuned kBuiltTuned[] = {
#define LB_TUNED_VARIANT(variant, knobs) {#variant, knobs},
#include "livebound/tuned_variants.inc"
#undef LB_TUNED_VARIANT
};

bool rides(const char *knobs) { return std::string(knobs).find("riding_grid=true") != std::string::npos; }

// Launches one bounded CUDA call of case `c` makes: 1 when the pipeline it runs (the batch
// alternate at its batch, else the variant as built) puts the prefix sums on the gather grid
// (riding_grid=true), else 2 (the hand schedule: lengths kernel, then gather).
size_t expected_launches(const DsaCase &c, lb_dtype dtype) {
    const char *tables = c.rps == 1 ? "pt1" : (c.page_table_1 ? "both" : "real");
    const std::string dt = dtype == LB_INT64 ? "i64" : "i32";
    const std::string variant = c.next_n == 0 ? std::string("lb_k2_cuda_bounded_") + tables + "_" + dt
                                              : std::string("lb_k3_cuda_bounded_") + tables + "_" +
                                                    (c.ctx_lens ? "ctx" : "noctx") + "_" + dt;
    const int64_t bs = int64_t(c.seq_lens.size());
    const int64_t entries = (c.next_n == 0 ? bs : bs * c.next_n) + 1;
    for (const BuiltAlternate &a : kBuiltAlternates) {
        if (variant == a.variant && (a.by_entries ? entries : bs) >= a.min_size) return rides(a.knobs) ? 1 : 2;
    }
    for (const BuiltTuned &t : kBuiltTuned) {
        if (variant == t.variant) return rides(t.knobs) ? 1 : 2;
    }
    return 2;
}

using GraphParam = std::tuple<DsaCase, lb_dtype>;
class CudaDsaMetadataGraph : public CudaBase, public ::testing::WithParamInterface<GraphParam> {};

TEST_P(CudaDsaMetadataGraph, ReplaysFollowUpdatedSeqLens) {
    const auto &[spec, dtype] = GetParam();
    const cuda::Driver *d = cuda::driver();
    DsaProblem p = make_problem(spec, dtype);
    const std::string context = p.describe(LB_BOUNDED, cuda_label(" graph"));
    SCOPED_TRACE(context);
    Mirror m;
    ASSERT_EQ(m.mirror(p), "");
    const lb_device device = livebound::cuda_device(device_, stream_);

    // Warm-up (JIT-compiles the variant's PTX), outside the capture.
    ASSERT_EQ(p.call(LB_BOUNDED, ptr_fn(m), device), LB_OK) << lb_last_error();
    ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "");

    ASSERT_EQ(cuda_error("cuStreamBeginCapture", d->cuStreamBeginCapture(stream_, cuda::kStreamCaptureModeThreadLocal)), "");
    const lb_status captured = p.call(LB_BOUNDED, ptr_fn(m), device);
    const std::string captured_message = lb_last_error();
    cuda::CUgraph graph = nullptr;
    const std::string end_error = cuda_error("cuStreamEndCapture", d->cuStreamEndCapture(stream_, &graph));
    ASSERT_EQ(captured, LB_OK) << "call during capture: " << captured_message;
    ASSERT_EQ(end_error, "") << "the call did something a capture forbids (sync, allocation, ...)";
    {
        // Kernel launches per call: one where the pipeline the call runs has the riding grid
        // (the tuned forms, schedules/dsa_metadata/tuned/: every K2/K3 CUDA variant of a
        // default build), else the hand schedule's two (lengths, then gather). Nothing else.
        const CapturedNodes nodes = count_graph_nodes(graph);
        EXPECT_EQ(nodes.error, "");
        EXPECT_EQ(nodes.kernels, expected_launches(spec, dtype)) << context;
        // A build with the tuned files (the default) runs every K2/K3 call of fewer than 4096
        // prefix-sum entries as one launch.
        const int64_t entries = int64_t(spec.seq_lens.size()) * (spec.next_n == 0 ? 1 : spec.next_n) + 1;
        if (sizeof(kBuiltTuned) > 0 && entries < 4096) EXPECT_EQ(nodes.kernels, 1u) << context;
        EXPECT_EQ(nodes.total, nodes.kernels) << "a node that is not a kernel";
    }
    cuda::CUgraphExec exec = nullptr;
    const std::string inst = cuda_error("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (!inst.empty()) d->cuGraphDestroy(graph);
    ASSERT_EQ(inst, "");

    std::mt19937 rng(spec.seed + 1000);
    std::uniform_int_distribution<int64_t> length(0, spec.width + 20);
    for (int replay = 0; replay < 3; ++replay) {
        // New lengths (shorter and longer than the captured ones, 0 included), outputs re-poisoned.
        std::vector<int64_t> lengths;
        for (int64_t b = 0; b < p.bs; ++b) lengths.push_back(length(rng));
        lengths[replay % p.bs] = 0;
        if (replay == 2) lengths[(replay + 1) % p.bs] = spec.width;  // a fully live row
        p.set_seq_lens(lengths);
        p.poison_outputs();
        ASSERT_EQ(m.upload(p.seq_lens), "");
        for (Buf *b : p.outputs()) {
            if (b->present) {
                ASSERT_EQ(m.upload(*b), "");
            }
        }
        const std::string replay_context = context + " replay " + std::to_string(replay);
        const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
        ASSERT_EQ(cuda_error("cuGraphLaunch", d->cuGraphLaunch(exec, stream_)), "") << replay_context;
        ASSERT_EQ(cuda_error("cuStreamSynchronize", d->cuStreamSynchronize(stream_)), "") << replay_context;
        ASSERT_EQ(m.download_outputs(p), "") << replay_context;
        EXPECT_TRUE(check_outputs(p, want, LB_BOUNDED, replay_context));
    }
    d->cuGraphExecDestroy(exec);
    d->cuGraphDestroy(graph);
}

std::vector<DsaCase> graph_cases() {
    const auto dec = decode_cases();
    const auto ver = verify_cases();
    return {dec[5] /* bs65 rps64 */, dec[8] /* no page_table_1 */, ver[3] /* bs63 rps64 ctx */, ver[4] /* bs128 rps1 */};
}
INSTANTIATE_TEST_SUITE_P(Cases, CudaDsaMetadataGraph,
                         ::testing::Combine(::testing::ValuesIn(graph_cases()), ::testing::Values(LB_INT32, LB_INT64)),
                         [](const ::testing::TestParamInfo<GraphParam> &info) {
                             return std::get<0>(info.param).name + "_" + dtype_tag(std::get<1>(info.param));
                         });

// ---- the empty batch: two memsets on the caller's stream, nothing else ----

using CudaDsaMetadataEmpty = CudaBase;
TEST_F(CudaDsaMetadataEmpty, WritesOnlyTheFirstPrefixSums) {
    for (const DsaCase &c : empty_cases()) {
        DsaProblem p = make_problem(c, LB_INT64);
        const std::string context = p.describe(LB_BOUNDED, cuda_label());
        ASSERT_TRUE(run_on_device(p, LB_BOUNDED, stream_)) << context;
        EXPECT_EQ(p.cu_seqlens_k.load(0), 0) << context;
        EXPECT_EQ(p.dsa_cu_seqlens_k.load(0), 0) << context;
        p.cu_seqlens_k.store(0, kPoison);
        p.dsa_cu_seqlens_k.store(0, kPoison);
        EXPECT_TRUE(outputs_untouched(p, context + " (besides the two first prefix sums)"));
    }
}

// ---- a host pointer where device memory is required ----

using CudaDsaMetadataWrongMemory = CudaBase;
TEST_F(CudaDsaMetadataWrongMemory, HostRealPageTableIsRejectedByName) {
    DsaProblem p = make_problem(decode_cases()[3], LB_INT64);
    const std::string context = p.describe(LB_BOUNDED, cuda_label()) + " real_page_table in host memory";
    Mirror m;
    ASSERT_EQ(m.mirror(p), "");
    lb_dsa_decode_metadata_args a = p.k2_args(LB_BOUNDED, ptr_fn(m));
    a.real_page_table.data = p.real_page_table.data();
    const lb_status status = lb_fused_dsa_decode_metadata(&a, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << status << ": " << message;
    EXPECT_NE(message.find("real_page_table"), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(outputs_untouched(p, context + " (host buffers)"));
    ASSERT_EQ(m.download_outputs(p), "");
    EXPECT_TRUE(outputs_untouched(p, context + " (device outputs)"));
}

// K3: a K3-only output (seqlens_expanded) in host memory.
TEST_F(CudaDsaMetadataWrongMemory, K3HostSeqlensExpandedIsRejectedByName) {
    DsaProblem p = make_problem(verify_cases()[1], LB_INT64);
    ASSERT_TRUE(p.verify());
    const std::string context = p.describe(LB_BOUNDED, cuda_label()) + " seqlens_expanded in host memory";
    Mirror m;
    ASSERT_EQ(m.mirror(p), "");
    lb_dsa_target_verify_metadata_args a = p.k3_args(LB_BOUNDED, ptr_fn(m));
    a.seqlens_expanded.data = p.seqlens_expanded.data();
    const lb_status status = lb_fused_dsa_target_verify_metadata(&a, livebound::cuda_device(device_, stream_));
    const std::string message = lb_last_error();
    EXPECT_TRUE(status == LB_ERROR_INVALID_ARGUMENT || status == LB_ERROR_DEVICE) << status << ": " << message;
    EXPECT_NE(message.find("argument 'seqlens_expanded'"), std::string::npos) << message;
    ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
    EXPECT_TRUE(outputs_untouched(p, context + " (host buffers)"));
    ASSERT_EQ(m.download_outputs(p), "");
    EXPECT_TRUE(outputs_untouched(p, context + " (device outputs)"));
}

// K2 and K3 with every tensor on the test device and the call on another: the first tensor
// checked for residency, seq_lens, is refused by name, nothing written. Needs two devices.
TEST_F(CudaDsaMetadataWrongMemory, TensorsOnAnotherDeviceAreRejectedByName) {
    const int other = other_device();
    if (other < 0) GTEST_SKIP() << "needs 2 CUDA devices, " << lb_cuda_device_count() << " present";
    for (const DsaCase &c : {decode_cases()[3], verify_cases()[1]}) {
        DsaProblem p = make_problem(c, LB_INT64);
        const std::string context =
            p.describe(LB_BOUNDED, livebound::testing::cuda_label(other)) + " every tensor on " + cuda_label();
        Mirror m;
        ASSERT_EQ(m.mirror(p), "") << context;
        const lb_status status = p.call(LB_BOUNDED, ptr_fn(m), livebound::cuda_device(other, nullptr));
        const std::string message = lb_last_error();
        EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT) << context << ": " << message;
        EXPECT_NE(message.find("argument 'seq_lens'"), std::string::npos) << context << ": " << message;
        EXPECT_NE(message.find(tensor_on_test_device_text(other)), std::string::npos)
            << context << ": " << message;
        ASSERT_EQ(cuda_error("cuStreamSynchronize(legacy stream)", cuda::driver()->cuStreamSynchronize(nullptr)), "");
        ASSERT_EQ(m.download_outputs(p), "") << context;
        EXPECT_TRUE(outputs_untouched(p, context + " (device outputs)"));
    }
}

// ---- device-held garbage: clamped, memory-safe ----
// Contract. On the CPU the pool row req_pool_indices names for every request with a live
// column is checked, and a call with one outside [0, req_to_token rows) is refused
// (LB_ERROR_INVALID_ARGUMENT naming the first bad req_pool_indices[b] and its value). On
// CUDA the values live in device memory and are not checked (that would need a sync):
// the kernels clamp the pool row into req_to_token and the live prefix into [0, width], so
// the call returns LB_OK, reads and writes nothing out of bounds, and garbage shows only in
// the garbage request's own outputs: a garbage pool row in its table rows (within its live
// prefix, which its clean seq_len still sets). seq_lens are refused on neither device (the
// live prefix is min(s, width), at least 0); a garbage one (negative, 2^30, INT32_MAX /
// INT32_MIN, 2^40 - 1) is held here only to memory safety: it may show in its request's
// table rows and lengths and in the prefix-sum entries after it. Token slots (req_to_token
// values) are data, not indices: copied through exactly (real_page_table = slot / rps,
// rounded toward zero), whatever their value.
using CudaDsaMetadataGarbage = CudaBase;
TEST_F(CudaDsaMetadataGarbage, GarbageValuesStayInBounds) {
    const auto dec = decode_cases();
    const auto ver = verify_cases();
    for (const DsaCase &spec : {dec[3] /* bs7 rps64 */, dec[2] /* bs7 rps1 */, ver[1] /* bs5 rps64 ctx */}) {
        for (lb_dtype dtype : {LB_INT64, LB_INT32}) {
            const bool wide = dtype == LB_INT64;
            for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
                for (int k = 0; k < 5; ++k) {
                    DsaProblem p = make_problem(spec, dtype);
                    const int64_t per = p.verify() ? p.c.next_n : 1;  // table rows per request
                    // Requests 0 .. bs-4 stay clean; bs-3 gets a garbage pool row, bs-2 garbage
                    // token slots, bs-1 (last: only the prefix sums' last entries follow it) a
                    // garbage seq_len.
                    const int64_t g_row = p.bs - 3, g_slot = p.bs - 2, g_len = p.bs - 1;
                    std::vector<int64_t> lens = p.c.seq_lens;
                    lens[g_row] = spec.width - 5;  // live: the garbage row is read
                    lens[g_slot] = spec.width;
                    p.set_seq_lens(lens);
                    const int64_t slot_row = p.req_pool_indices.load(g_slot);
                    const int64_t slot_columns[] = {0, 1, 64, 65, 200};
                    const int64_t slots[] = {-1, INT32_MAX, INT32_MIN, int64_t{1} << 30, -(int64_t{1} << 30) - 3};
                    for (int i = 0; i < 5; ++i) {
                        p.req_to_token.v32[slot_row * p.ctx + slot_columns[i]] = static_cast<int32_t>(slots[i]);
                    }
                    // The reference of the clean pool rows and lengths (it would refuse the garbage).
                    reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
                    const int64_t rows[] = {-1, p.pool_rows, int64_t{1} << 30, INT32_MAX,
                                            wide ? int64_t{1} << 40 : int64_t{INT32_MIN}};
                    const int64_t lengths[] = {-5, INT32_MAX, int64_t{1} << 30, INT32_MIN,
                                               wide ? (int64_t{1} << 40) - 1 : int64_t{INT32_MAX} - 1};
                    p.req_pool_indices.store(g_row, rows[k]);
                    p.seq_lens.store(g_len, lengths[k]);
                    const std::string context = p.describe(variant, cuda_label()) + " with req_pool_indices[" +
                                                std::to_string(g_row) + "] = " + std::to_string(rows[k]) + ", seq_lens[" +
                                                std::to_string(g_len) + "] = " + std::to_string(lengths[k]) +
                                                ", garbage token slots in request " + std::to_string(g_slot);
                    ASSERT_TRUE(run_on_device(p, variant, stream_)) << context;  // LB_OK, and the stream completes

                    // Unspecified values, taken from the device: the table rows of the garbage-row
                    // and garbage-length requests (the bounded form's live-prefix rule still holds
                    // for the garbage-row one, whose seq_len is clean), the garbage-length
                    // request's lengths and the prefix sums after it. check_outputs checks the
                    // rest: the clean requests exact, every element outside the written region
                    // still the poison.
                    auto adopt_rows = [](std::vector<std::vector<int32_t>> &w, const Buf &got, int64_t r0, int64_t r1) {
                        if (!got.present) return;
                        for (int64_t r = r0; r < r1; ++r) {
                            for (size_t col = 0; col < w[r].size(); ++col) {
                                w[r][col] = static_cast<int32_t>(got.load(r * got.stride0 + static_cast<int64_t>(col)));
                            }
                        }
                    };
                    auto adopt_tail = [](std::vector<int32_t> &w, const Buf &got, int64_t from) {
                        if (!got.present) return;
                        for (int64_t e = from; e < static_cast<int64_t>(w.size()); ++e) w[e] = static_cast<int32_t>(got.load(e));
                    };
                    for (int64_t g : {g_row, g_len}) {
                        adopt_rows(want.page_table_1, p.page_table_1, g * per, (g + 1) * per);
                        adopt_rows(want.real_page_table, p.real_page_table, g * per, (g + 1) * per);
                    }
                    for (int64_t r = g_len * per; r < (g_len + 1) * per; ++r) {
                        want.live_tokens[r] = spec.width;  // its live prefix is garbage too: any in-view column
                        want.live_pages[r] = p.real_columns;
                    }
                    adopt_tail(want.cache_seqlens, p.cache_seqlens, g_len);
                    adopt_tail(want.cu_seqlens_k, p.cu_seqlens_k, g_len + 1);
                    adopt_tail(want.seqlens_expanded, p.seqlens_expanded, g_len * per);
                    adopt_tail(want.dsa_cache_seqlens, p.dsa_cache_seqlens, g_len * per);
                    adopt_tail(want.dsa_cu_seqlens_k, p.dsa_cu_seqlens_k, g_len * per + 1);
                    if (p.ctx_lens_2d.present) adopt_rows(want.ctx_lens_2d, p.ctx_lens_2d, g_len, g_len + 1);
                    EXPECT_TRUE(check_outputs(p, want, variant, context));
                }
            }
        }
    }
}

// ---- seq_lens and req_pool_indices of different dtypes (as on the CPU) ----

// The outputs equal the reference (the same-dtype call's): the int64 one is read as its low
// words on CUDA as on the CPU (DsaMetadataErrorsBaseline.MixedIndexDtypesEqualSameDtype).
TEST_F(CudaBase, MixedIndexDtypesEqualSameDtype) {
    for (const DsaCase &c : {decode_cases()[3], verify_cases()[1]}) {
        for (lb_dtype seq : {LB_INT32, LB_INT64}) {
            for (lb_variant variant : {LB_BOUNDED, LB_FULL_WIDTH}) {
                const lb_dtype rpi = seq == LB_INT32 ? LB_INT64 : LB_INT32;
                DsaProblem p = make_problem(c, seq);
                DsaProblem rows = make_problem(c, rpi);  // the same values in the other dtype
                const reference::DsaMetadataExpected want = reference::dsa_metadata(p.reference_inputs());
                const std::string context = p.describe(variant, cuda_label()) + " with req_pool_indices " +
                                            (rpi == LB_INT32 ? "int32" : "int64");
                Mirror m, m_rows;
                ASSERT_EQ(m.mirror(p), "") << context;
                ASSERT_EQ(m_rows.mirror(rows), "") << context;
                const lb_tensor rows_tensor = rows.req_pool_indices.tensor(m_rows.device_pointer(rows.req_pool_indices));
                lb_status status;
                if (p.verify()) {
                    lb_dsa_target_verify_metadata_args a = p.k3_args(variant, ptr_fn(m));
                    a.req_pool_indices = rows_tensor;
                    status = lb_fused_dsa_target_verify_metadata(&a, livebound::cuda_device(device_, stream_));
                } else {
                    lb_dsa_decode_metadata_args a = p.k2_args(variant, ptr_fn(m));
                    a.req_pool_indices = rows_tensor;
                    status = lb_fused_dsa_decode_metadata(&a, livebound::cuda_device(device_, stream_));
                }
                ASSERT_EQ(status, LB_OK) << context << "\n" << lb_last_error();
                ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
                ASSERT_EQ(m.download_outputs(p), "") << context;
                EXPECT_TRUE(check_outputs(p, want, variant, context));
            }
        }
    }
}

}  // namespace
}  // namespace livebound::dsa_testing
