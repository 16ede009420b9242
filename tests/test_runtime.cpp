// The runtime's guard around every C entry point, what the runtime must not do to the
// host process, and the binding of a call's arguments to an AOT pipeline's argv through
// the metadata Halide generated for it. CPU only (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>

#include "decode_metadata_cases.h"
#include "errors.h"
#include "lb_k1_cpu_scan_s32.h"  // K1's CPU scan variant: seq_lens, seq_len_delta -> cache_seqlens, cu_seqlens_k
#include "pipeline_call.h"
#include "livebound/livebound.h"
#include "livebound/livebound.hpp"

namespace livebound::testing {
namespace {

DecodeMetadataCase small_case() {
    DecodeMetadataCase c;
    c.name = "runtime_B4_len64_ps16";
    c.batch_size = 4;
    c.max_seq_len = 64;
    c.page_size = 16;
    c.seed = 99;
    return c;
}

lb_status run_guarded(void (*body)(const void *)) { return livebound::guarded_call("lb_test", body, nullptr); }

TEST(GuardedCall, FailureKeepsItsStatusAndMessage) {
    const lb_status status = run_guarded(
        [](const void *) { livebound::bad_argument("page_table", "expected int32, got int64"); });
    EXPECT_EQ(status, LB_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(lb_last_error()), "lb_test: argument 'page_table': expected int32, got int64");
}

TEST(GuardedCall, StdExceptionIsAnInternalError) {
    EXPECT_EQ(run_guarded([](const void *) { throw std::logic_error("boom"); }), LB_ERROR_KERNEL);
    EXPECT_EQ(std::string(lb_last_error()), "lb_test: internal error: boom");
}

TEST(GuardedCall, AnyOtherExceptionIsAnInternalErrorNotACrash) {
    EXPECT_EQ(run_guarded([](const void *) { throw 42; }), LB_ERROR_KERNEL);
    EXPECT_NE(std::string(lb_last_error()).find("lb_test: internal error"), std::string::npos) << lb_last_error();
}

TEST(GuardedCall, SuccessClearsTheLastError) {
    run_guarded([](const void *) { throw 1; });
    EXPECT_EQ(run_guarded([](const void *) {}), LB_OK);
    EXPECT_STREQ(lb_last_error(), "");
}

// The runtime used to set HL_CUDA_JIT_MAX_REGISTERS with setenv on its first call, which
// races with the host's threads reading the environment. It now passes the cap with each
// module load (runtime/src/cubin_loader.cpp) and leaves the environment alone.
TEST(ProcessHygiene, ACallLeavesTheEnvironmentAlone) {
    ASSERT_EQ(unsetenv("HL_CUDA_JIT_MAX_REGISTERS"), 0);
    DecodeMetadataProblem problem = make_problem(small_case(), LB_INT64, LB_INT64);
    const lb_decode_metadata_args args = problem.args(LB_BOUNDED);
    ASSERT_EQ(lb_normal_decode_set_metadata(&args, livebound::cpu()), LB_OK) << lb_last_error();
    EXPECT_EQ(std::getenv("HL_CUDA_JIT_MAX_REGISTERS"), nullptr);
}

// PipelineCall::run binds arguments by the generator's names and checks each against the
// pipeline's metadata; the K1 CPU scan variant (5 arguments) stands in for every variant.
class PipelineBinding : public ::testing::Test {
protected:
    static constexpr int kBs = 4;
    int32_t seq_lens_[kBs] = {5, 0, 17, 2};  // [bs] int32, live kv lengths
    int32_t cache_seqlens_[kBs];             // [bs] int32, out: seq_lens + delta
    int32_t cu_seqlens_k_[kBs + 1];          // [bs + 1] int32, out: prefix sums, [0] = 0
    int32_t delta_ = 1;                      // seq_len_delta
    const Pipeline scan_ = LB_PIPELINE(lb_k1_cpu_scan_s32);

    void SetUp() override {
        std::fill(std::begin(cache_seqlens_), std::end(cache_seqlens_), -7);
        std::fill(std::begin(cu_seqlens_k_), std::end(cu_seqlens_k_), -7);
    }
    static lb_tensor vector(int32_t *data, int64_t n) { return lb_tensor{data, LB_INT32, 1, {n}, {1}}; }
    // Runs the scan with `edit` applied to the correct argument list; returns the failure
    // text ("" when it ran).
    template <typename Edit>
    std::string run(Edit edit) {
        PipelineCall call(lb_device{LB_DEVICE_CPU, 0, nullptr});
        std::vector<PipelineArg> args = {
            in("seq_lens", call.wrap_1d(vector(seq_lens_, kBs), "seq_lens", kBs)),
            scalar("seq_len_delta", &delta_),
            out("cache_seqlens", call.wrap_1d(vector(cache_seqlens_, kBs), "cache_seqlens", kBs)),
            out("cu_seqlens_k", call.wrap_1d(vector(cu_seqlens_k_, kBs + 1), "cu_seqlens_k", kBs + 1))};
        edit(args);
        try {
            call.run(scan_, args);
        } catch (const Failure &failure) {
            EXPECT_EQ(failure.status, LB_ERROR_KERNEL);
            return failure.what();
        }
        return "";
    }
    bool outputs_untouched() const {
        return std::all_of(std::begin(cache_seqlens_), std::end(cache_seqlens_), [](int32_t x) { return x == -7; }) &&
               std::all_of(std::begin(cu_seqlens_k_), std::end(cu_seqlens_k_), [](int32_t x) { return x == -7; });
    }
};

TEST_F(PipelineBinding, MetadataNamesTheGeneratorsArgumentsInArgvOrder) {
    const halide_filter_metadata_t *md = scan_.metadata();
    ASSERT_EQ(md->num_arguments, 5);
    const char *const names[5] = {"__user_context", "seq_lens", "seq_len_delta", "cache_seqlens", "cu_seqlens_k"};
    for (int i = 0; i < 5; i++) EXPECT_STREQ(md->arguments[i].name, names[i]) << i;
}

TEST_F(PipelineBinding, ArgumentsBindByNameInAnyOrder) {
    EXPECT_EQ(run([](std::vector<PipelineArg> &args) { std::reverse(args.begin(), args.end()); }), "");
    const int32_t want_cache[kBs] = {6, 1, 18, 3}, want_cu[kBs + 1] = {0, 6, 7, 25, 28};
    for (int b = 0; b < kBs; b++) EXPECT_EQ(cache_seqlens_[b], want_cache[b]) << b;
    for (int b = 0; b <= kBs; b++) EXPECT_EQ(cu_seqlens_k_[b], want_cu[b]) << b;
}

TEST_F(PipelineBinding, AMissingArgumentIsNamedAndNothingRuns) {
    const std::string error = run([](std::vector<PipelineArg> &args) { args.erase(args.begin() + 1); });
    EXPECT_NE(error.find("argument 'seq_len_delta': AOT pipeline lb_k1_cpu_scan_s32 takes it as scalar int32, but it is not passed"),
              std::string::npos)
        << error;
    EXPECT_TRUE(outputs_untouched());
}

TEST_F(PipelineBinding, AScalarOfAnotherTypeIsNamed) {
    int64_t wide_delta = 1;
    const std::string error = run([&](std::vector<PipelineArg> &args) { args[1] = scalar("seq_len_delta", &wide_delta); });
    EXPECT_NE(error.find("argument 'seq_len_delta': AOT pipeline lb_k1_cpu_scan_s32 takes it as scalar int32, but it is "
                         "passed as scalar int64"),
              std::string::npos)
        << error;
    EXPECT_TRUE(outputs_untouched());
}

TEST_F(PipelineBinding, AnInputPassedAsAnOutputIsNamed) {
    const std::string error = run([](std::vector<PipelineArg> &args) { args[0].kind = halide_argument_kind_output_buffer; });
    EXPECT_NE(error.find("argument 'seq_lens': AOT pipeline lb_k1_cpu_scan_s32 takes it as input buffer int32 1-D, but "
                         "it is passed as output buffer int32 1-D"),
              std::string::npos)
        << error;
    EXPECT_TRUE(outputs_untouched());
}

TEST_F(PipelineBinding, ABufferOfAnotherRankIsNamed) {
    const std::string error = run([](std::vector<PipelineArg> &args) { args[2].dimensions = 2; });
    EXPECT_NE(error.find("argument 'cache_seqlens'"), std::string::npos) << error;
    EXPECT_NE(error.find("output buffer int32 2-D"), std::string::npos) << error;
    EXPECT_TRUE(outputs_untouched());
}

TEST_F(PipelineBinding, AnExtraOrRepeatedArgumentIsNamed) {
    int32_t page_shift = 0;
    std::string error = run([&](std::vector<PipelineArg> &args) { args.push_back(scalar("page_shift", &page_shift)); });
    EXPECT_NE(error.find("argument 'page_shift': AOT pipeline lb_k1_cpu_scan_s32 does not take it"), std::string::npos)
        << error;
    error = run([](std::vector<PipelineArg> &args) { args.push_back(args[1]); });
    EXPECT_NE(error.find("argument 'seq_len_delta': AOT pipeline lb_k1_cpu_scan_s32 is passed it twice"),
              std::string::npos)
        << error;
    EXPECT_TRUE(outputs_untouched());
}

}  // namespace
}  // namespace livebound::testing
