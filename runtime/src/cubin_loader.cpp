#include "cubin_loader.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace livebound::cubins {
namespace {

// cuModuleLoadDataEx(CUmodule *, const void *image, unsigned n, CUjit_option *, void **);
// CUjit_option is a C enum (int-sized), CUmodule a pointer.
using ModuleLoadDataEx = int (*)(void **module, const void *image, unsigned num_options, int *options,
                                 void **option_values);

std::atomic<ModuleLoadDataEx> g_driver_load{nullptr};
std::atomic<uint64_t> g_cubin_loads{0}, g_ptx_loads{0};

std::mutex &extra_tables_mutex() {
    static std::mutex mutex;
    return mutex;
}
std::vector<const lb_cubin_entry *> &extra_tables() {
    static std::vector<const lb_cubin_entry *> tables;
    return tables;
}

const lb_cubin_entry *find_in(const lb_cubin_entry *table, uint64_t key) {
    for (; table->ptx != nullptr; table++) {
        if (table->ptx_fnv1a64 == key) return table;
    }
    return nullptr;
}

// The entry for `image` when it is PTX text of a variant with a cubin table (tensor-core
// or register-capped, tools/ptx_link.py), else nullptr.
const lb_cubin_entry *find_entry(const void *image) {
    const char *text = static_cast<const char *>(image);
    // Halide passes NUL-terminated PTX text, which starts with LLVM's "//" header; an ELF
    // cubin (0x7f 'E') or a fatbinary is never ours.
    if (text == nullptr || text[0] != '/') return nullptr;
    const uint64_t key = fnv1a64(text, std::strlen(text));
    for (const lb_cubin_entry *const *table = lb_builtin_cubin_tables; *table != nullptr; table++) {
        if (const lb_cubin_entry *entry = find_in(*table, key)) return entry;
    }
    std::lock_guard<std::mutex> lock(extra_tables_mutex());
    for (const lb_cubin_entry *table : extra_tables()) {
        if (const lb_cubin_entry *entry = find_in(table, key)) return entry;
    }
    return nullptr;
}

// CUjit_option CU_JIT_MAX_REGISTERS (cuda.h).
constexpr int kJitMaxRegisters = 0;
// The JIT register cap of every module livebound loads as PTX. Halide's CUDA runtime asks
// for 64 registers per thread unless HL_CUDA_JIT_MAX_REGISTERS is set; the attention
// kernels hold a query row's Lv + 2 fp32 softmax state per thread: capped at 64 they
// spill, at 255 they run 1.4-1.65x faster on the H200 (K7, cases A-C,
// docs/extend_attention.md). A kernel that must stay small carries its own `.maxnreg`
// (MAX_REGISTERS, cmake/LiveboundKernel.cmake), which the JIT honours under this cap. The
// cap is passed here, per module load, rather than by setting the environment variable:
// setenv from a library races with the host's threads (issue 11). A value the caller put
// in the environment is kept (Halide has read it).
constexpr uintptr_t kDefaultMaxRegisters = 255;

// Every module but one with a cubin table is loaded as Halide passes it, with the register
// cap above. For those: the cubin with no JIT options (a cubin ignores them); if the driver
// refuses it (another GPU architecture than sm_90: CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
// CUDA_ERROR_INVALID_IMAGE = 200, ...) or there is none, the table's PTX (helpers inlined,
// `.maxnreg` applied) with the same options. Halide's own PTX of a tensor-core variant
// would fail to link.
int load_module(void **module, const void *image, unsigned num_options, int *options, void **option_values) {
    const ModuleLoadDataEx driver_load = g_driver_load.load();
    // Halide passes one option (CU_JIT_MAX_REGISTERS); any others pass through unchanged.
    int jit_options[8];
    void *jit_values[8];
    if (num_options > 8) return driver_load(module, image, num_options, options, option_values);
    const bool caller_cap = std::getenv("HL_CUDA_JIT_MAX_REGISTERS") != nullptr;
    for (unsigned i = 0; i < num_options; i++) {
        jit_options[i] = options[i];
        jit_values[i] = option_values[i];
        if (options[i] == kJitMaxRegisters && !caller_cap) {
            jit_values[i] = reinterpret_cast<void *>(kDefaultMaxRegisters);
        }
    }
    const lb_cubin_entry *entry = find_entry(image);
    if (entry == nullptr) return driver_load(module, image, num_options, jit_options, jit_values);
    if (entry->cubin != nullptr && driver_load(module, entry->cubin, 0, nullptr, nullptr) == 0) {
        g_cubin_loads++;
        return 0;
    }
    const int status = driver_load(module, entry->ptx, num_options, jit_options, jit_values);
    if (status == 0) g_ptx_loads++;
    return status;
}

}  // namespace

void *wrap_module_load(void *driver_entry) {
    g_driver_load.store(reinterpret_cast<ModuleLoadDataEx>(driver_entry));
    return reinterpret_cast<void *>(&load_module);
}

void register_table(const lb_cubin_entry *table) {
    std::lock_guard<std::mutex> lock(extra_tables_mutex());
    for (const lb_cubin_entry *known : extra_tables()) {
        if (known == table) return;
    }
    extra_tables().push_back(table);
}

LoadCounts load_counts() { return {g_cubin_loads.load(), g_ptx_loads.load()}; }

uint64_t fnv1a64(const void *data, size_t bytes) {
    const auto *p = static_cast<const unsigned char *>(data);
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < bytes; i++) hash = (hash ^ p[i]) * 0x100000001b3ull;
    return hash;
}

}  // namespace livebound::cubins

// The host side of a helper: Halide hoists loop-invariant expressions of a kernel's
// parameters out of the kernel into the host code (the xai temperature's log2(L) of the
// tensor-core attention kernels), which then calls the helper by name on the CPU. Only
// lb_log2_approx takes no per-lane value; the warp-collective helpers never run here.
extern "C" float lb_log2_approx(float x) { return std::log2(x); }
