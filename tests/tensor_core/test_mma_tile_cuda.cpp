// End-to-end check of the tensor-core build-and-load machinery on the test CUDA device
// (LIVEBOUND_TEST_DEVICE, default 0; cuda_test_util.h), without attention: the smoke
// kernels of mma_tile_generator.cpp (C = A . B^T through the mma.sync helpers), built as
// TENSOR_CORE variants (tools/ptx_link.py: helpers inlined, linted, sm_90 cubin when ptxas
// was found) and loaded through the runtime's cuModuleLoadDataEx hook
// (runtime/src/cubin_loader.cpp).
//
//   (a) MmaTileCuda.Bf16Direct: bf16 A and B fragments loaded directly (lb_mma_bf16_elem);
//   (b) MmaTileCuda.Bf16PackMovmatrix: A given in fp32 and packed in the kernel
//       (lb_pack_bf16x2: round to nearest even, lower column in bits 0..15), B given as
//       B^T rows [K, N] and transposed into fragments by lb_movmatrix_trans;
//   (c) MmaTileCuda.Fp16PackMovmatrix: the same with fp16 (lb_mma_f16_elem, lb_pack_f16x2).
// Each compares C with an fp64 reference over the rounded inputs, within the fp32
// accumulation error (a wrong fragment layout, half order or rounding mode is far outside
// it), and checks how the module was loaded: from the sm_90 cubin on an sm_90 device when
// the build had ptxas, else from the inlined PTX (driver JIT). Skips without a driver or
// device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cubin_loader.h"
#include "cuda_driver.h"
#include "cuda_test_util.h"  // CudaFixture, DeviceBuffer, cuda_error
#include "errors.h"
#include "lb_test_mma_tile_bf16.h"
#include "lb_test_mma_tile_bf16_pack_movmatrix.h"
#include "lb_test_mma_tile_f16_pack_movmatrix.h"
#include "pipeline_call.h"
#include "reference/extend_attention_reference.h"  // bf16 / fp16 conversions

extern "C" const lb_cubin_entry lb_cubins_lb_test_mma_tile_bf16[];
extern "C" const lb_cubin_entry lb_cubins_lb_test_mma_tile_bf16_pack_movmatrix[];
extern "C" const lb_cubin_entry lb_cubins_lb_test_mma_tile_f16_pack_movmatrix[];

namespace livebound::testing {
namespace {

constexpr int kTileColumns = 4;        // the generator's n_tiles (cmake: PARAMS)
constexpr int kN = 8 * kTileColumns;   // columns of C

struct Variant {
    Pipeline pipeline;
    const lb_cubin_entry *table;
    bool fp16;       // else bf16
    bool pack_a;     // A given in fp32, packed in the kernel
    bool b_rows_k;   // B given as B^T [K, N] (movmatrix), else as B [N, K]
};

uint16_t to_half_bits(bool fp16, float f) { return fp16 ? reference::float_to_fp16(f) : reference::float_to_bf16(f); }
float from_half_bits(bool fp16, uint16_t h) { return fp16 ? reference::fp16_to_float(h) : reference::bf16_to_float(h); }

class MmaTileCuda : public CudaFixture {
protected:
    void SetUp() override {
        CudaFixture::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        for (const lb_cubin_entry *table : {lb_cubins_lb_test_mma_tile_bf16, lb_cubins_lb_test_mma_tile_bf16_pack_movmatrix,
                                            lb_cubins_lb_test_mma_tile_f16_pack_movmatrix}) {
            cubins::register_table(table);  // test kernels are not in the library's registry
        }
    }

    // C [M, N] = A [M, K] . B^T for random inputs; compares with fp64 and checks the load path.
    void check(const Variant &v, int M, int K, uint32_t seed) {
        SCOPED_TRACE("M=" + std::to_string(M) + " K=" + std::to_string(K));
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> value(-1.0f, 1.0f);
        // The values the tensor cores multiply (rounded to 16 bits), row-major.
        std::vector<float> a(size_t(M) * K), b(size_t(kN) * K);  // A [M][K], B [N][K]
        std::vector<float> a_input(size_t(M) * K);                 // pack_a: fp32, not rounded
        std::vector<uint16_t> a_bits(size_t(M) * K), b_input_bits(size_t(kN) * K);
        for (size_t i = 0; i < a.size(); i++) {
            a_input[i] = value(rng);
            a_bits[i] = to_half_bits(v.fp16, a_input[i]);
            a[i] = from_half_bits(v.fp16, a_bits[i]);
        }
        for (int n = 0; n < kN; n++) {
            for (int k = 0; k < K; k++) {
                const uint16_t bits = to_half_bits(v.fp16, value(rng));
                b[size_t(n) * K + k] = from_half_bits(v.fp16, bits);
                // B [N][K] as given, or B^T [K][N].
                b_input_bits[v.b_rows_k ? size_t(k) * kN + n : size_t(n) * K + k] = bits;
            }
        }

        DeviceBuffer a_device, b_device, c_device;
        const size_t a_bytes = v.pack_a ? a_input.size() * 4 : a_bits.size() * 2;
        ASSERT_EQ(a_device.allocate(a_bytes), "");
        ASSERT_EQ(a_device.upload(v.pack_a ? static_cast<const void *>(a_input.data()) : a_bits.data(), a_bytes), "");
        ASSERT_EQ(b_device.allocate(b_input_bits.size() * 2), "");
        ASSERT_EQ(b_device.upload(b_input_bits.data(), b_input_bits.size() * 2), "");
        std::vector<float> c(size_t(M) * kN, std::nanf(""));  // poison: every element must be written
        ASSERT_EQ(c_device.allocate(c.size() * 4), "");
        ASSERT_EQ(c_device.upload(c.data(), c.size() * 4), "");

        // Halide views (innermost first): pairs of 16-bit values as uint32 (see the generator).
        const halide_type_t u32{halide_type_uint, 32, 1}, f32{halide_type_float, 32, 1};
        halide_dimension_t a_view[2], b_view[2], c_view[4];
        if (v.pack_a) {
            a_view[0] = {0, K, 1, 0};
            a_view[1] = {0, M, K, 0};
        } else {
            a_view[0] = {0, K / 2, 1, 0};
            a_view[1] = {0, M, K / 2, 0};
        }
        if (v.b_rows_k) {
            b_view[0] = {0, kN / 2, 1, 0};
            b_view[1] = {0, K, kN / 2, 0};
        } else {
            b_view[0] = {0, K / 2, 1, 0};
            b_view[1] = {0, kN, K / 2, 0};
        }
        c_view[0] = {0, 8, 1, 0};
        c_view[1] = {0, kTileColumns, 8, 0};
        c_view[2] = {0, 8, kN, 0};
        c_view[3] = {0, M / 8, 8 * kN, 0};

        const cubins::LoadCounts before = cubins::load_counts();
        try {
            PipelineCall call(lb_device{LB_DEVICE_CUDA, device_, stream_});
            lb_tensor a_tensor{}, b_tensor{}, c_tensor{};
            a_tensor.data = a_device.pointer();
            b_tensor.data = b_device.pointer();
            c_tensor.data = c_device.pointer();
            halide_buffer_t *a_buffer = call.wrap(a_tensor, "a", v.pack_a ? f32 : u32, 2, a_view);
            halide_buffer_t *b_buffer = call.wrap(b_tensor, "b", u32, 2, b_view);
            halide_buffer_t *c_buffer = call.wrap(c_tensor, "c", f32, 4, c_view);
            call.run(v.pipeline, {in("a", a_buffer), in("b", b_buffer), out("c", c_buffer)});
        } catch (const Failure &failure) {
            FAIL() << failure.what();
        }
        ASSERT_EQ(cuda_error("cuStreamSynchronize", cuda::driver()->cuStreamSynchronize(stream_)), "");
        ASSERT_EQ(c_device.download(c.data(), c.size() * 4), "");

        int mismatches = 0;
        for (int m = 0; m < M; m++) {
            for (int n = 0; n < kN; n++) {
                double exact = 0.0, magnitude = 0.0;
                for (int k = 0; k < K; k++) {
                    const double product = double(a[size_t(m) * K + k]) * double(b[size_t(n) * K + k]);
                    exact += product;
                    magnitude += std::fabs(product);
                }
                // 4x the worst-case error of fp32 summation of K exact products (K * 2^-24 of
                // their magnitude); a 16-bit rounding error of the inputs is ~2^-9 of it.
                const double tolerance = K * 0x1p-22 * magnitude + 1e-6;
                const float got = c[size_t(m) * kN + n];
                if (!(std::fabs(got - exact) <= tolerance) && mismatches++ < 8) {
                    ADD_FAILURE() << "C[" << m << "][" << n << "] = " << got << ", expected " << exact << " +- "
                                  << tolerance;
                }
            }
        }
        EXPECT_EQ(mismatches, 0);

        // How the module was loaded (only a first call per process loads it).
        const cubins::LoadCounts after = cubins::load_counts();
        int major = 0, minor = 0;
        cuda::CUdevice device = 0;
        ASSERT_EQ(cuda::driver()->cuDeviceGet(&device, 0), 0);
        cuda::driver()->cuDeviceGetAttribute(&major, 75, device);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        cuda::driver()->cuDeviceGetAttribute(&minor, 76, device);  // ..._MINOR
        EXPECT_GE(after.cubin + after.inlined_ptx, 1u) << "no tensor-core module went through the cubin table";
        const uint64_t cubin_loads = after.cubin - before.cubin, ptx_loads = after.inlined_ptx - before.inlined_ptx;
        if (cubin_loads + ptx_loads > 0) {
            if (v.table[0].cubin != nullptr && major == 9 && minor == 0) {
                EXPECT_EQ(cubin_loads, 1u) << "sm_90 device, cubin built: it should have loaded";
            } else {
                EXPECT_EQ(ptx_loads, 1u) << "no usable cubin: the inlined PTX should have been JIT-compiled";
            }
        }
    }
};

TEST_F(MmaTileCuda, Bf16Direct) {
    const Variant v{LB_PIPELINE(lb_test_mma_tile_bf16), lb_cubins_lb_test_mma_tile_bf16, false, false, false};
    check(v, 16, 16, 1);
    check(v, 48, 128, 2);
}

TEST_F(MmaTileCuda, Bf16PackMovmatrix) {
    const Variant v{LB_PIPELINE(lb_test_mma_tile_bf16_pack_movmatrix), lb_cubins_lb_test_mma_tile_bf16_pack_movmatrix, false, true,
                    true};
    check(v, 16, 16, 3);
    check(v, 32, 256, 4);
}

TEST_F(MmaTileCuda, Fp16PackMovmatrix) {
    const Variant v{LB_PIPELINE(lb_test_mma_tile_f16_pack_movmatrix), lb_cubins_lb_test_mma_tile_f16_pack_movmatrix, true, true,
                    true};
    check(v, 16, 16, 5);
    check(v, 64, 64, 6);
}

}  // namespace
}  // namespace livebound::testing
