# The variant manifest. Every AOT library of every kernel family is declared in
# cmake/families/<family>.cmake and nowhere else; runtime/ includes the dispatch table
# each family file generates from that same list.
#
# Compile-time facts become variants (target, dtype, SWA on/off, bounded vs
# full-width twin); lengths, widths, page size and batch size stay runtime inputs.

set(LIVEBOUND_TARGETS cpu)
if (LIVEBOUND_CUDA)
    list(APPEND LIVEBOUND_TARGETS cuda)
endif ()

set(_lb_gen_dir "${CMAKE_BINARY_DIR}/generated/livebound")

foreach (family IN LISTS LIVEBOUND_BUILT_FAMILIES)
    # livebound_add_kernel() runs the family's own generator executable (generators/).
    set(LIVEBOUND_GENERATOR_EXE livebound_generator_${family})
    include("${CMAKE_CURRENT_LIST_DIR}/families/${family}.cmake")
endforeach ()

get_property(LIVEBOUND_KERNELS GLOBAL PROPERTY LIVEBOUND_KERNELS)
add_library(livebound_kernels INTERFACE)
target_link_libraries(livebound_kernels INTERFACE ${LIVEBOUND_KERNELS} livebound_halide_runtime)
target_include_directories(livebound_kernels INTERFACE "${CMAKE_BINARY_DIR}/generated")
