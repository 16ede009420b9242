// The runtime's guard around every C entry point, and what the runtime must not do to the
// host process. CPU only (CI).
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "decode_metadata_cases.h"
#include "errors.h"
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

}  // namespace
}  // namespace livebound::testing
