// Interface conventions shared by the generators.
#pragma once

#include "Halide.h"

namespace livebound::interface {

// Every buffer a livebound pipeline is called with starts at index 0: the runtime hands
// Halide views of the caller's tensors (runtime/src/validate.cpp, halide_dims_*), never a
// buffer with a nonzero min. Saying so makes each min a constant: the kernels lose one
// parameter and one subtraction per buffer dimension. On CUDA every parameter is read from
// the constant bank, whose misses at kernel entry were the largest stall of the small
// metadata kernels (bench/results/2026-12-03-nvidia-h200-scan-block.md). K1 and K4 on the
// H200, graph replay, us, before / after: K1 ps 1 bs 1 2.31 / 2.18, bs 64 3.77 / 3.37,
// bs 256 9.10 / 7.79, ps 64 bs 64 3.30 / 2.99; K4 swa bs 64 3.23 / 2.93 (38 -> 29 kernel
// parameters; bench/results/2026-12-03-nvidia-h200-zero-mins.md).
template <typename... Buffers>
void index_from_zero(Buffers *...buffers) {
    auto one = [](auto *buffer) {
        if (!buffer) return;
        for (int d = 0; d < buffer->dimensions(); d++) buffer->dim(d).set_min(0);
    };
    (one(buffers), ...);
}

}  // namespace livebound::interface
