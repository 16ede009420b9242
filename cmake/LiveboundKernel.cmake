# livebound_add_kernel(): one AOT variant (generator x target x params) of a kernel
# family, compiled into a static library that uses the one shared Halide runtime.
#
#   livebound_add_kernel(<name> GENERATOR <generator> TARGET cpu|cuda
#                        [PARAMS k=v ...] [LARGE_BUFFERS])
#
# Targets are named explicitly (never `host`: the build machine's CPU is not the
# user's): an x86-64 AVX2 baseline, plus for CUDA the highest capability Halide 21
# knows (8.6; the driver JIT-compiles its PTX for sm_90). Every variant gets
# `user_context`, through which each call carries the caller's device and stream.
# LARGE_BUFFERS adds `large_buffers` for buffers that can pass 2^31 elements.
#
# Each variant also emits its lowered statement (<name>.stmt next to the library)
# and its conceptual statement (<name>.conceptual.stmt: the loop nest before device
# code generation, so that CUDA kernel loops and their derived bounds stay readable)
# for the FileCheck tests and for `livebound explain`; the list of variants lands in
# the global property LIVEBOUND_KERNELS.

set(LIVEBOUND_CPU_TARGET "x86-64-linux-sse41-avx-f16c-fma-avx2"
    CACHE STRING "Halide CPU baseline of every variant")
set(LIVEBOUND_CUDA_FEATURES "cuda-cuda_capability_86"
    CACHE STRING "Halide CUDA features of the CUDA variants")

# The one Halide runtime of the library: host code plus the CUDA device interface.
if (LIVEBOUND_CUDA)
    set(_lb_runtime_target "${LIVEBOUND_CPU_TARGET}-${LIVEBOUND_CUDA_FEATURES}-user_context")
else ()
    set(_lb_runtime_target "${LIVEBOUND_CPU_TARGET}-user_context")
endif ()
add_halide_runtime(livebound_halide_runtime TARGETS ${_lb_runtime_target})

function(livebound_add_kernel name)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "LARGE_BUFFERS" "GENERATOR;TARGET" "PARAMS")
    if (ARG_TARGET STREQUAL "cuda")
        set(target "${LIVEBOUND_CPU_TARGET}-${LIVEBOUND_CUDA_FEATURES}")
    elseif (ARG_TARGET STREQUAL "cpu")
        set(target "${LIVEBOUND_CPU_TARGET}")
    else ()
        message(FATAL_ERROR "livebound_add_kernel(${name}): TARGET must be cpu or cuda")
    endif ()
    set(features user_context)
    if (ARG_LARGE_BUFFERS)
        list(APPEND features large_buffers)
    endif ()
    add_halide_library(${name} FROM ${LIVEBOUND_GENERATOR_EXE}
                       GENERATOR ${ARG_GENERATOR}
                       TARGETS ${target}
                       FEATURES ${features}
                       PARAMS ${ARG_PARAMS}
                       USE_RUNTIME livebound_halide_runtime
                       STMT ${name}_stmt
                       CONCEPTUAL_STMT ${name}_conceptual_stmt)
    set_property(GLOBAL APPEND PROPERTY LIVEBOUND_KERNELS ${name})
    set(${name}_stmt "${${name}_stmt}" PARENT_SCOPE)
endfunction()
