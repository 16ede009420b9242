// fp16 / bf16 <-> fp32 conversions for the attention generators, and fp8 e4m3 -> fp32.
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

// The fp32 value of a float8 e4m3fn element given as its byte (Halide has no 8-bit float;
// torch.float8_e4m3fn): sign, 4 exponent bits (bias 7), 3 mantissa bits, no infinities,
// 0x7f / 0xff NaN. Exact, with integer operations: a normal byte's exponent and mantissa
// fields move into the fp32 word, the exponent rebiased by 127 - 7 = 120; a subnormal one
// (exponent 0) is mantissa * 2^-9 (no fp32 denormal is formed, so flush-to-zero targets
// agree).
inline Halide::Expr e4m3_to_float(const Halide::Expr &byte) {
    using namespace Halide;
    Expr bits = cast<uint32_t>(byte);
    Expr magnitude = bits & 0x7f, sign = (bits & 0x80) << 24;
    Expr normal = reinterpret<float>(sign | ((magnitude << 20) + Expr(uint32_t{120} << 23)));
    Expr subnormal = reinterpret<float>(sign | reinterpret<uint32_t>(cast<float>(magnitude) * (1.0f / 512.0f)));
    Expr nan = reinterpret<float>(Expr(uint32_t{0x7fc00000}));
    return select(magnitude == 0x7f, nan, magnitude < 8, subnormal, normal);
}

// Two float8 e4m3fn elements given as their little-endian byte pair (uint16) as a b32 pair of
// 16-bit elements of type `t` (float16 or bfloat16; byte 0 in the low half), each the e4m3
// value times 2^-8, exactly: the sign, exponent and mantissa fields move into fp16's, whose
// exponent bias is 15 = 7 + 8, so every e4m3 value (subnormals included) is an fp16 value
// times 2^8. bfloat16 goes through fp32 (exact: e4m3 has 4 significant bits). 0x7f / 0xff
// become NaN. The caller multiplies by 2^8 (e4m3_pair_scale), e.g. folded into a scale.
constexpr float e4m3_pair_scale = 256.0f;
inline Halide::Expr e4m3_pair_to_16bit_pair(const Halide::Type &t, const Halide::Expr &byte_pair) {
    using namespace Halide;
    Expr x = cast<uint32_t>(byte_pair);
    auto fp16_bits = [](const Expr &byte) {  // byte: a uint32 in [0, 255]
        Expr bits = ((byte & 0x80) << 8) | ((byte & 0x7f) << 7);
        return select((byte & 0x7f) == 0x7f, Expr(uint32_t{0x7e00}), bits);
    };
    Expr lo = fp16_bits(x & 0xff), hi = fp16_bits(x >> 8);
    if (t.is_bfloat()) {
        auto to_bf16 = [](const Expr &h) {
            return reinterpret<uint32_t>(cast<float>(reinterpret<float16_t>(cast<uint16_t>(h)))) >> 16;
        };
        lo = to_bf16(lo);
        hi = to_bf16(hi);
    }
    return lo | (hi << 16);
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
