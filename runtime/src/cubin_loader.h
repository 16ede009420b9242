// Loading tensor-core and register-capped variants (cubin_table.h), and the JIT register
// cap of every module: a wrapper for the driver's
// cuModuleLoadDataEx that halide_cuda_get_symbol (halide_glue.cpp) hands to Halide's CUDA
// runtime. Halide loads each pipeline's PTX through it, once per pipeline and context.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cubin_table.h"

namespace livebound::cubins {

// The wrapper to give Halide in place of the driver's cuModuleLoadDataEx `driver_entry`.
void *wrap_module_load(void *driver_entry);

// Adds a table of variants outside the library's registry (e.g. a test's own kernels);
// kept for the life of the process. Thread-safe.
void register_table(const lb_cubin_entry *table);

// Modules loaded from a cubin, and from inlined PTX (JIT), since the process started.
struct LoadCounts {
    uint64_t cubin = 0;
    uint64_t inlined_ptx = 0;
};
LoadCounts load_counts();

// FNV-1a 64 of `bytes` bytes (the key of cubin_table.h; tools/ptx_link.py computes the same).
uint64_t fnv1a64(const void *data, size_t bytes);

}  // namespace livebound::cubins
