// Estimates for Halide's autoschedulers, which schedule a generator's algorithm in place of
// schedules/ when autotune/ asks for a baseline (knob autoscheduler=<Name>; the generator's
// schedule() then sets these and returns). They describe one typical call of the family
// (autotune/README.md); they are not bounds and change no output.
#pragma once

#include <cstdint>
#include <vector>

#include "Halide.h"

namespace livebound::autoschedule {

// A buffer's estimated extents, innermost dimension first. A flat view with fewer
// dimensions than `extents` gets the product of the remaining ones in its last dimension.
template <typename Buffer>
void buffer(Buffer *b, const std::vector<int64_t> &extents) {
    if (b == nullptr) return;
    const int dims = b->dimensions();
    Halide::Region region;
    for (int i = 0; i < dims; i++) {
        int64_t extent = i < int(extents.size()) ? extents[size_t(i)] : 1;
        for (size_t j = size_t(dims); i == dims - 1 && j < extents.size(); j++) extent *= extents[j];
        region.push_back({0, int(extent)});
    }
    b->set_estimates(region);
}

template <typename Scalar, typename T>
void scalar(Scalar *s, T value) {
    if (s != nullptr) s->set_estimate(value);
}

}  // namespace livebound::autoschedule
