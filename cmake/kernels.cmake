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

# Tuned knobs (schedules/<family>/tuned/*.cmake, autotune/distill.py) and an autotune
# experiment's candidates (LIVEBOUND_TUNE_FILE): cmake/LiveboundKernel.cmake applies them.
foreach (family IN LISTS LIVEBOUND_BUILT_FAMILIES)
    file(GLOB tuned_files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/schedules/${family}/tuned/*.cmake")
    foreach (tuned IN LISTS tuned_files)
        include("${tuned}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${tuned}")
    endforeach ()
endforeach ()
if (NOT LIVEBOUND_TUNE_FILE STREQUAL "")
    include("${LIVEBOUND_TUNE_FILE}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${LIVEBOUND_TUNE_FILE}")
endif ()

foreach (family IN LISTS LIVEBOUND_BUILT_FAMILIES)
    # livebound_add_kernel() runs the family's own generator executable (generators/).
    set(LIVEBOUND_GENERATOR_EXE livebound_generator_${family})
    include("${CMAKE_CURRENT_LIST_DIR}/families/${family}.cmake")
endforeach ()

get_property(LIVEBOUND_KERNELS GLOBAL PROPERTY LIVEBOUND_KERNELS)
# The candidates of an autotune experiment, for its runner (autotune/runner/):
# LB_TUNE_CANDIDATE(<variant>, "<id>", "<knobs>", <candidate function>) rows.
get_property(_lb_tune_rows GLOBAL PROPERTY LIVEBOUND_TUNE_ROWS)
get_property(_lb_tune_headers GLOBAL PROPERTY LIVEBOUND_TUNE_HEADERS)
file(CONFIGURE OUTPUT "${_lb_gen_dir}/tune_candidates.inc" CONTENT "${_lb_tune_rows}")
file(CONFIGURE OUTPUT "${_lb_gen_dir}/tune_headers.inc" CONTENT "${_lb_tune_headers}")
# Tuned batch alternates (schedules/<family>/tuned/, LIVEBOUND_TUNED_BATCH_<variant>), for
# the runtime: LB_ENTRIES_ALTERNATE / LB_BATCH_ALTERNATE(<variant>, <min size>, <alternate>,
# "<knobs>") rows, a variant's entries rows first (cmake/LiveboundKernel.cmake).
get_property(_lb_batch_rows GLOBAL PROPERTY LIVEBOUND_BATCH_ROWS)
get_property(_lb_batch_headers GLOBAL PROPERTY LIVEBOUND_BATCH_HEADERS)
file(CONFIGURE OUTPUT "${_lb_gen_dir}/batch_alternates.inc" CONTENT "${_lb_batch_rows}")
file(CONFIGURE OUTPUT "${_lb_gen_dir}/batch_alternates_headers.inc" CONTENT "${_lb_batch_headers}")
# The variants built with tuned knobs, for the tests: LB_TUNED_VARIANT(<variant>, "<knobs>") rows.
get_property(_lb_tuned_rows GLOBAL PROPERTY LIVEBOUND_TUNED_ROWS)
file(CONFIGURE OUTPUT "${_lb_gen_dir}/tuned_variants.inc" CONTENT "${_lb_tuned_rows}")
add_library(livebound_kernels INTERFACE)
target_link_libraries(livebound_kernels INTERFACE ${LIVEBOUND_KERNELS} livebound_halide_runtime)
target_include_directories(livebound_kernels INTERFACE "${CMAKE_BINARY_DIR}/generated")
