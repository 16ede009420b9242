// Linked into the generator executables of tensor-core variants (livebound_add_kernel
// TENSOR_CORE): gives the generator large stacks before main runs, because head dim 256
// overflows them in Halide's deeply recursive passes (SIGSEGV; the tensorize probe needed
// `ulimit -s unlimited`). add_halide_library runs a generator target as its own command,
// with no hook for a launcher or a shell, so the executable raises its limits itself:
//   * Halide 21 lowers and generates code on a side stack of HL_COMPILER_STACK_SIZE bytes
//     (32 MiB by default, mmap'd, so untouched pages cost nothing): raised to 1 GiB unless
//     the caller set it;
//   * everything else runs on the main thread's stack, whose size the kernel fixes from
//     RLIMIT_STACK at exec: the soft limit is raised to the hard one (usually unlimited,
//     as `ulimit -s unlimited`) and the generator re-executes itself once.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

#include "Halide.h"

namespace {

constexpr size_t kCompilerStackBytes = size_t(1) << 30;
constexpr const char *kReexecutedMarker = "LIVEBOUND_GENERATOR_STACK_RAISED";

// glibc calls constructors of the executable with (argc, argv, envp), after libHalide's.
__attribute__((constructor)) void raise_generator_stacks(int /*argc*/, char **argv, char ** /*envp*/) {
    if (std::getenv("HL_COMPILER_STACK_SIZE") == nullptr) Halide::set_compiler_stack_size(kCompilerStackBytes);
    if (std::getenv(kReexecutedMarker) != nullptr) return;
    rlimit limit{};
    if (getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= limit.rlim_max) {
        return;  // already unlimited, or the hard limit allows no more
    }
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_STACK, &limit) != 0) return;
    setenv(kReexecutedMarker, "1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: go on with the old main stack
}

}  // namespace
