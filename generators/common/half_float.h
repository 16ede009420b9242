// fp16 / bf16 <-> fp32 conversions for the attention generators.
//
// Halide 21's PTX backend aborts on bfloat16 casts (LLVM: "Invalid cast!" in
// CastInst::Create while compiling a CUDA variant that reads or writes bf16), so bfloat16
// is converted with integer operations, on every target (one algorithm): widening is exact
// (the bf16 bits are the high half of the fp32 word), narrowing rounds to nearest even and
// keeps NaN a (quiet) NaN. float16 uses Halide's casts.
#pragma once

#include "Halide.h"

namespace livebound {

// The fp32 value of a float16 or bfloat16 element.
inline Halide::Expr widen_to_float(const Halide::Expr &e) {
    using namespace Halide;
    if (e.type().is_bfloat()) {
        return reinterpret<float>(cast<uint32_t>(reinterpret<uint16_t>(e)) << 16);
    }
    return cast<float>(e);
}

// `f` (fp32) as an element of type `t` (float16 or bfloat16), round to nearest even.
inline Halide::Expr narrow_from_float(const Halide::Type &t, const Halide::Expr &f) {
    using namespace Halide;
    if (t.is_bfloat()) {
        Expr bits = reinterpret<uint32_t>(f);
        Expr rounded = (bits + (((bits >> 16) & 1) + 0x7fff)) >> 16;
        Expr is_nan = (bits & 0x7fffffff) > 0x7f800000;
        Expr half = select(is_nan, (bits >> 16) | 0x40, rounded);
        return reinterpret(t, cast<uint16_t>(half));
    }
    return cast(t, f);
}

}  // namespace livebound
