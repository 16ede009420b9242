// A libFuzzer target over the C ABI: every kernel (K1..K8) on the CPU. The first input byte
// selects the kernel (byte % 8: 0 -> K1 lb_normal_decode_set_metadata, 1 -> K2
// lb_fused_dsa_decode_metadata, 2 -> K3 lb_fused_dsa_target_verify_metadata, 3 -> K4
// lb_update_trtllm_mha_graph_metadata, 4 -> K5 lb_get_k_and_s, 5 -> K6
// lb_transform_index_page_table_prefill, 6 -> K7 lb_extend_attention_fwd, 7 -> K8
// lb_extend_attention_fwd_unified); the rest of the input is that kernel's harness's
// (fuzz_k1.cpp .. fuzz_k8.cpp): shapes, dtypes, strides, values, flags, optional tensors and
// output sizes read from the bytes (an exhausted input reads zeros). Built two ways
// (tests/fuzz/CMakeLists.txt): as a libFuzzer binary with clang (-DLIVEBOUND_LIBFUZZER=ON),
// and as the replay driver CI runs (replay_main.cpp: the committed corpus plus seeded random
// inputs, against the sanitized runtime; its --kernel kN prepends the selector byte, so the
// corpus files under corpus/kN hold no selector byte). Every input must hold:
//   - no crash and no sanitizer report;
//   - a refused call returns INVALID_ARGUMENT or UNSUPPORTED, lb_last_error() names an
//     argument, and every output element keeps its poison;
//   - an accepted call equals the plain C++ reference (tests/reference/): integer kernels
//     exactly, K7 / K8 against the fp64 reference within the suites' tolerances, and
//     writes nothing outside what the kernel's header says it writes (live prefixes of the
//     bounded forms, the full width of the twins, never past a view, never a gap of a
//     strided view).
// A broken property calls abort(): libFuzzer and the replay driver report the input.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

namespace fuzz {
int64_t g_accepted[kKernels] = {}, g_refused[kKernels] = {};
}  // namespace fuzz

// Calls accepted and refused so far, all kernels (the replay driver prints them).
extern "C" void fuzz_c_abi_counts(int64_t *accepted, int64_t *refused) {
    *accepted = *refused = 0;
    for (int k = 0; k < fuzz::kKernels; k++) {
        *accepted += fuzz::g_accepted[k];
        *refused += fuzz::g_refused[k];
    }
}

// The same for kernel k (1..8: K1..K8).
extern "C" void fuzz_c_abi_kernel_counts(int k, int64_t *accepted, int64_t *refused) {
    *accepted = k >= 1 && k <= fuzz::kKernels ? fuzz::g_accepted[k - 1] : 0;
    *refused = k >= 1 && k <= fuzz::kKernels ? fuzz::g_refused[k - 1] : 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return fuzz::fuzz_k1(data, 0);
    using Harness = int (*)(const uint8_t *, size_t);
    static const Harness kHarness[fuzz::kKernels] = {fuzz::fuzz_k1, fuzz::fuzz_k2, fuzz::fuzz_k3, fuzz::fuzz_k4,
                                                     fuzz::fuzz_k5, fuzz::fuzz_k6, fuzz::fuzz_k7, fuzz::fuzz_k8};
    return kHarness[data[0] % fuzz::kKernels](data + 1, size - 1);
}
