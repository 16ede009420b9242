# livebound_add_kernel(): one AOT variant (generator x target x params) of a kernel
# family, compiled into a static library that uses the one shared Halide runtime.
#
#   livebound_add_kernel(<name> GENERATOR <generator> TARGET cpu|cuda
#                        [PARAMS k=v ...] [LARGE_BUFFERS]
#                        [TENSOR_CORE [MAX_SPILL_BYTES <n>] [THREADS_PER_BLOCK <n>] [EXPECT_MMA <n>]]
#                        [MAX_REGISTERS <n>])
#
# Targets are named explicitly (never `host`: the build machine's CPU is not the
# user's): an x86-64 AVX2 baseline, plus for CUDA the highest capability Halide 21
# knows (8.6; the driver JIT-compiles its PTX for sm_90). Every variant gets
# `user_context`, through which each call carries the caller's device and stream.
# LARGE_BUFFERS adds `large_buffers` for buffers that can pass 2^31 elements.
#
# Each variant also emits its lowered statement (<name>.stmt next to the library), its
# conceptual statement (<name>.conceptual.stmt: the loop nest before device code
# generation, so that CUDA kernel loops and their derived bounds stay readable) for the
# FileCheck tests and for `livebound explain`, and with -DLIVEBOUND_STMT_HTML=ON Halide's
# HTML view of the lowered statement (<name>.stmt.html: the loops beside the device code
# and the assembly, for a browser; a file about the size of the .stmt; not for TENSOR_CORE
# variants, see below). Every variant is built through the kernel cache
# (cmake/LiveboundCache.cmake).
# `livebound explain --where <kernel>` lists them. The list of variants lands in the global
# property LIVEBOUND_KERNELS.
#
# TENSOR_CORE (CUDA only): the variant calls the extern device helpers of
# generators/common/mma_helpers.cu, so its embedded PTX cannot load as Halide wrote it.
# tools/ptx_link.py runs on <name>.o after every generator run: it inlines the helpers,
# lints the result (no call left, no local memory, some mma.sync, no branch on a
# lane-dependent predicate), compiles it with ptxas for sm_90 when a CUDA toolkit is
# found (failing on more than MAX_SPILL_BYTES of spills, default 0, or on registers x
# THREADS_PER_BLOCK > 65536, default 128 threads, or on a number of mma.sync other than
# EXPECT_MMA when given), and writes <name>.cubins.cpp, compiled
# into the variant's own library: the table lb_cubins_<name> of runtime/src/cubin_table.h
# that the runtime's cuModuleLoadDataEx hook (runtime/src/cubin_loader.cpp) looks up.
# Variants declared before runtime/ (cmake/kernels.cmake) are listed in the generated
# cubin_registry.cpp of the library; later ones (tests) register their table themselves
# (livebound::cubins::register_table). The generator executable also gets large stacks
# (generators/common/large_stack.cpp: head dim 256 overflows the default ones).
#
# MAX_REGISTERS (CUDA only): a register cap of the variant's own kernels (`.maxnreg` on each
# entry, tools/ptx_link.py), where the process-wide JIT cap (255, runtime/src/cubin_loader.cpp)
# would let ptxas take registers that cost the kernel occupancy. Without TENSOR_CORE the same
# link step runs in its plain form (nothing to inline, no tensor-core lint; ptxas compiles
# the capped PTX to a cubin when a toolkit is found, with THREADS_PER_BLOCK default 256 and
# MAX_SPILL_BYTES default 0 checked as for tensor-core variants).

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

# ---- tensor-core variants: the helper PTX and the link step (TENSOR_CORE) ----
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# A CUDA toolkit is optional: without nvcc the checked-in helper PTX is used, without
# ptxas the variants carry inlined PTX only (the driver JIT-compiles it on first use).
find_program(LIVEBOUND_NVCC nvcc HINTS ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin
             DOC "nvcc for generators/common/mma_helpers.cu (optional)")
find_program(LIVEBOUND_PTXAS ptxas HINTS ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin
             DOC "ptxas for the sm_90 cubins of tensor-core variants (optional)")
set(LIVEBOUND_MMA_HELPERS_CU "${PROJECT_SOURCE_DIR}/generators/common/mma_helpers.cu")
set(LIVEBOUND_MMA_HELPERS_PTX_CHECKED_IN "${PROJECT_SOURCE_DIR}/generators/common/mma_helpers.ptx")
if (LIVEBOUND_NVCC)
    # The flags are those the checked-in PTX was made with (tests/tensor_core compares them).
    set(LIVEBOUND_MMA_HELPERS_PTX "${CMAKE_BINARY_DIR}/generated/mma_helpers.ptx")
    add_custom_command(OUTPUT "${LIVEBOUND_MMA_HELPERS_PTX}"
                       COMMAND "${LIVEBOUND_NVCC}" -arch=sm_90 -rdc=true -O3 -ptx "${LIVEBOUND_MMA_HELPERS_CU}"
                               -o "${LIVEBOUND_MMA_HELPERS_PTX}"
                       DEPENDS "${LIVEBOUND_MMA_HELPERS_CU}"
                       COMMENT "nvcc: tensor-core helper PTX"
                       VERBATIM)
else ()
    set(LIVEBOUND_MMA_HELPERS_PTX "${LIVEBOUND_MMA_HELPERS_PTX_CHECKED_IN}")
endif ()
# A target for the PTX, so that link steps in any directory can order themselves after it.
add_custom_target(livebound_mma_helpers_ptx DEPENDS "${LIVEBOUND_MMA_HELPERS_PTX}")

# ---- Tuned schedules, autotune candidates and the variant filter (autotune/README.md) ----
# A variant's knobs come from the hand schedule (its family file's PARAMS) unless
# schedules/<family>/tuned/*.cmake (written by autotune/distill.py, reviewed like any source)
# sets LIVEBOUND_TUNED_<variant>: then those knobs replace the hand ones of the same name.
# A knob is a GeneratorParam `key=value`, or one of two build facts: `max_registers=<n>`
# (the variant's MAX_REGISTERS; 0: none) and `autoscheduler=<Name>` (Halide's autoscheduler
# plugin Halide::<Name> schedules the algorithm instead of schedules/; a baseline).
option(LIVEBOUND_USE_TUNED "Build the variants with the knobs of schedules/<family>/tuned/*.cmake" ON)
# An autotune tree (autotune/tune.py) builds only the variants it tunes, and beside each
# one its candidates: LIVEBOUND_TUNE_FILE defines LIVEBOUND_TUNE_CANDIDATES_<variant> (ids) and
# LIVEBOUND_TUNE_KNOBS_<variant>_<id> (knobs); candidate <id> of <variant> is the library
# <variant>__<id>, listed in generated/livebound/tune_candidates.inc for the runner.
set(LIVEBOUND_ONLY_VARIANTS "" CACHE STRING "Build only the variants whose name matches this regex (autotune trees)")
set(LIVEBOUND_TUNE_FILE "" CACHE FILEPATH "Candidates of an autotune experiment (autotune/tune.py writes it)")

# Sets <out>_params, <out>_max_registers (unset: keep) and <out>_autoscheduler from `knobs`
# applied over `params`.
function(_lb_apply_knobs out params knobs)
    set(max_registers "")
    set(autoscheduler "")
    foreach (knob IN LISTS knobs)
        if (NOT knob MATCHES "^([A-Za-z0-9_.]+)=(.*)$")
            message(FATAL_ERROR "livebound: a knob is key=value, not '${knob}'")
        endif ()
        set(key "${CMAKE_MATCH_1}")
        set(value "${CMAKE_MATCH_2}")
        if (key STREQUAL "max_registers")
            set(max_registers "${value}")
        elseif (key STREQUAL "autoscheduler")
            set(autoscheduler "${value}")
        else ()
            string(REPLACE "." "\\." key_re "${key}")
            list(FILTER params EXCLUDE REGEX "^${key_re}=")
            list(APPEND params "${key}=${value}")
        endif ()
    endforeach ()
    set(${out}_params ${params} PARENT_SCOPE)
    set(${out}_max_registers "${max_registers}" PARENT_SCOPE)
    set(${out}_autoscheduler "${autoscheduler}" PARENT_SCOPE)
endfunction()

# Link options of a variant built with other knobs than its manifest's (tuned, a batch
# alternate): the mma count is the manifest's knobs' (dropped) and a tensor-core block holds
# 32 x tc_warps threads; the spill allowance stays.
function(_lb_retuned_options out options tensor_core params)
    set(kept "")
    set(skip 0)
    foreach (item IN LISTS options)
        if (skip)
            set(skip 0)
        elseif (item STREQUAL "EXPECT_MMA" OR item STREQUAL "THREADS_PER_BLOCK")
            set(skip 1)
        else ()
            list(APPEND kept ${item})
        endif ()
    endforeach ()
    if (tensor_core)
        set(threads 128)
        foreach (p IN LISTS params)
            if (p MATCHES "^tc_warps=([0-9]+)$")
                math(EXPR threads "32 * ${CMAKE_MATCH_1}")
            endif ()
        endforeach ()
        list(APPEND kept THREADS_PER_BLOCK ${threads})
    endif ()
    set(${out} ${kept} PARENT_SCOPE)
endfunction()

# livebound_write_variant_file(<file> <content>): a family's generated dispatch table or
# header list. In a filtered tree (LIVEBOUND_ONLY_VARIANTS) only the lines of variants that
# were built are kept (a line's variant: its last lb_* identifier).
function(livebound_write_variant_file file content)
    if (NOT LIVEBOUND_ONLY_VARIANTS STREQUAL "")
        get_property(built GLOBAL PROPERTY LIVEBOUND_KERNELS)
        string(REPLACE "\n" ";" lines "${content}")
        set(content "")
        foreach (line IN LISTS lines)
            string(REGEX MATCHALL "lb_[A-Za-z0-9_]+" ids "${line}")
            list(LENGTH ids n)
            if (n GREATER 0)
                list(GET ids -1 id)
                if (id IN_LIST built)
                    string(APPEND content "${line}\n")
                endif ()
            endif ()
        endforeach ()
    endif ()
    file(CONFIGURE OUTPUT "${file}" CONTENT "${content}")
endfunction()

function(livebound_add_kernel name)
    if (NOT LIVEBOUND_ONLY_VARIANTS STREQUAL "" AND NOT name MATCHES "${LIVEBOUND_ONLY_VARIANTS}")
        return()
    endif ()
    cmake_parse_arguments(PARSE_ARGV 1 ARG "LARGE_BUFFERS;TENSOR_CORE"
                          "GENERATOR;TARGET;MAX_SPILL_BYTES;THREADS_PER_BLOCK;EXPECT_MMA;MAX_REGISTERS" "PARAMS")
    set(flags "")
    foreach (flag LARGE_BUFFERS TENSOR_CORE)
        if (ARG_${flag})
            list(APPEND flags ${flag})
        endif ()
    endforeach ()
    set(options "")
    foreach (opt MAX_SPILL_BYTES THREADS_PER_BLOCK EXPECT_MMA)
        if (DEFINED ARG_${opt})
            list(APPEND options ${opt} ${ARG_${opt}})
        endif ()
    endforeach ()
    set(max_registers "${ARG_MAX_REGISTERS}")
    set(params ${ARG_PARAMS})
    set(autoscheduler "")
    set(variant_options ${options})
    if (LIVEBOUND_USE_TUNED AND DEFINED LIVEBOUND_TUNED_${name})
        _lb_apply_knobs(tuned "${params}" "${LIVEBOUND_TUNED_${name}}")
        set(params ${tuned_params})
        if (NOT tuned_max_registers STREQUAL "")
            set(max_registers "${tuned_max_registers}")
        endif ()
        set(autoscheduler "${tuned_autoscheduler}")
        _lb_retuned_options(variant_options "${options}" "${ARG_TENSOR_CORE}" "${params}")
        # For the tests: which knobs the variant was built with (generated/livebound/tuned_variants.inc).
        string(REPLACE ";" " " tuned_text "${LIVEBOUND_TUNED_${name}}")
        set_property(GLOBAL APPEND_STRING PROPERTY LIVEBOUND_TUNED_ROWS "LB_TUNED_VARIANT(${name}, \"${tuned_text}\")\n")
    endif ()
    _lb_add_kernel(${name} "${ARG_GENERATOR}" "${ARG_TARGET}" "${flags}" "${variant_options}" "${max_registers}"
                   "${autoscheduler}" "${params}")
    set(${name}_stmt "${${name}_stmt}" PARENT_SCOPE)
    # Alternates the runtime picks by the call's size (livebound::for_batch,
    # runtime/src/pipeline_call.h; generated/livebound/batch_alternates.inc): the same facts
    # with other knobs (over the hand knobs: experiments compare with the hand schedule),
    # checked in this order, the first that applies runs:
    #   LIVEBOUND_LARGE_ENTRIES_<variant> = <min entries> <knobs>, built as <variant>__e<min>:
    #     a family manifest's form for calls whose longest prefix sum has >= min entries,
    #     where the tuned forms stop fitting (their shared memory grows with the entries);
    #   LIVEBOUND_TUNED_BATCH_<variant> = <min batch> <knobs>, built as <variant>__b<min>: the
    #     knobs that won an experiment's large-batch class, for calls of batch >= min batch.
    foreach (kind IN ITEMS LARGE_ENTRIES TUNED_BATCH)
        if (NOT LIVEBOUND_USE_TUNED OR NOT DEFINED LIVEBOUND_${kind}_${name})
            continue()
        endif ()
        if (kind STREQUAL "LARGE_ENTRIES")
            set(suffix e)
            set(macro LB_ENTRIES_ALTERNATE)
        else ()
            set(suffix b)
            set(macro LB_BATCH_ALTERNATE)
        endif ()
        set(spec ${LIVEBOUND_${kind}_${name}})
        list(POP_FRONT spec min_size)
        _lb_apply_knobs(alt "${ARG_PARAMS}" "${spec}")
        set(alt_registers "${ARG_MAX_REGISTERS}")
        if (NOT alt_max_registers STREQUAL "")
            set(alt_registers "${alt_max_registers}")
        endif ()
        _lb_retuned_options(alt_options "${options}" "${ARG_TENSOR_CORE}" "${alt_params}")
        set(alt_name ${name}__${suffix}${min_size})
        _lb_add_kernel(${alt_name} "${ARG_GENERATOR}" "${ARG_TARGET}" "${flags}" "${alt_options}"
                       "${alt_registers}" "${alt_autoscheduler}" "${alt_params}")
        string(REPLACE ";" " " knob_text "${spec}")
        set_property(GLOBAL APPEND_STRING PROPERTY LIVEBOUND_BATCH_ROWS
                     "${macro}(${name}, ${min_size}, ${alt_name}, \"${knob_text}\")\n")
        set_property(GLOBAL APPEND_STRING PROPERTY LIVEBOUND_BATCH_HEADERS
                     "#include \"${name}.h\"\n#include \"${alt_name}.h\"\n")
    endforeach ()
    # The experiment's candidates of this variant: the same facts, other knobs. Their device
    # code is linked as the variant's is, but without the mma count and with any spills
    # allowed (a candidate's knobs change both; the runner times what results).
    if (DEFINED LIVEBOUND_TUNE_CANDIDATES_${name})
        set_property(GLOBAL APPEND_STRING PROPERTY LIVEBOUND_TUNE_HEADERS "#include \"${name}.h\"\n")
    endif ()
    foreach (id IN LISTS LIVEBOUND_TUNE_CANDIDATES_${name})
        set(knobs "${LIVEBOUND_TUNE_KNOBS_${name}_${id}}")
        _lb_apply_knobs(cand "${params}" "${knobs}")
        set(cand_registers "${max_registers}")
        if (NOT cand_max_registers STREQUAL "")
            set(cand_registers "${cand_max_registers}")
        endif ()
        _lb_retuned_options(cand_options "" "${ARG_TENSOR_CORE}" "${cand_params}")
        if (ARG_TENSOR_CORE OR (NOT cand_registers STREQUAL "" AND NOT cand_registers EQUAL 0))
            list(APPEND cand_options MAX_SPILL_BYTES 1000000)
        endif ()
        _lb_add_kernel(${name}__${id} "${ARG_GENERATOR}" "${ARG_TARGET}" "${flags}" "${cand_options}"
                       "${cand_registers}" "${cand_autoscheduler}" "${cand_params}")
        string(REPLACE ";" " " knob_text "${knobs}")
        set_property(GLOBAL APPEND_STRING PROPERTY LIVEBOUND_TUNE_ROWS
                     "LB_TUNE_CANDIDATE(${name}, \"${id}\", \"${knob_text}\", ${name}__${id})\n")
        set_property(GLOBAL APPEND_STRING PROPERTY LIVEBOUND_TUNE_HEADERS "#include \"${name}__${id}.h\"\n")
    endforeach ()
endfunction()

# One variant as named: the body of livebound_add_kernel once the knobs are settled.
function(_lb_add_kernel name generator target_kind flags options max_registers autoscheduler params)
    cmake_parse_arguments(ARG "LARGE_BUFFERS;TENSOR_CORE" "MAX_SPILL_BYTES;THREADS_PER_BLOCK;EXPECT_MMA" ""
                          ${flags} ${options})
    set(ARG_GENERATOR "${generator}")
    set(ARG_TARGET "${target_kind}")
    set(ARG_PARAMS ${params})
    unset(ARG_MAX_REGISTERS)  # (not the caller's: max_registers 0 means no cap)
    if (NOT max_registers STREQUAL "" AND NOT max_registers EQUAL 0)
        set(ARG_MAX_REGISTERS ${max_registers})
    endif ()
    set(as "")
    if (NOT autoscheduler STREQUAL "")
        set(as AUTOSCHEDULER Halide::${autoscheduler})
    endif ()
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
    # Halide's HTML view on request (LIVEBOUND_STMT_HTML), except for the tensor-core variants:
    # Halide 21's StmtToHTML stops on their device code with "Internal error at
    # /project/src/StmtToHTML.cpp:853 Condition failed: current_id != -1" (while generating the
    # device AssemblyInfo; measured on lb_k7_cuda_tc_bounded_bf16_d128_lse). Their .stmt holds
    # the loops and the PTX.
    set(html "")
    if (LIVEBOUND_STMT_HTML AND NOT ARG_TENSOR_CORE)
        set(html STMT_HTML)
    endif ()
    # The CUDA link step (see the top of this file): tensor_core, plain (MAX_REGISTERS only) or none.
    set(link "")
    set(link_mma "${ARG_EXPECT_MMA}")
    if (ARG_TENSOR_CORE)
        if (NOT ARG_TARGET STREQUAL "cuda")
            message(FATAL_ERROR "livebound_add_kernel(${name}): TENSOR_CORE needs TARGET cuda")
        endif ()
        set(link tensor_core)
        # Large stacks for the generator (once per generator executable).
        get_property(has_large_stack TARGET ${LIVEBOUND_GENERATOR_EXE} PROPERTY LIVEBOUND_LARGE_STACK)
        if (NOT has_large_stack)
            target_sources(${LIVEBOUND_GENERATOR_EXE} PRIVATE "${PROJECT_SOURCE_DIR}/generators/common/large_stack.cpp")
            set_property(TARGET ${LIVEBOUND_GENERATOR_EXE} PROPERTY LIVEBOUND_LARGE_STACK ON)
        endif ()
    elseif (DEFINED ARG_MAX_REGISTERS)
        if (NOT ARG_TARGET STREQUAL "cuda")
            message(FATAL_ERROR "livebound_add_kernel(${name}): MAX_REGISTERS needs TARGET cuda")
        endif ()
        set(link plain)
        set(link_mma "")
    elseif (DEFINED ARG_MAX_SPILL_BYTES OR DEFINED ARG_THREADS_PER_BLOCK OR DEFINED ARG_EXPECT_MMA)
        message(FATAL_ERROR "livebound_add_kernel(${name}): MAX_SPILL_BYTES, THREADS_PER_BLOCK and EXPECT_MMA need TENSOR_CORE or MAX_REGISTERS")
    endif ()
    # One cached step (cmake/LiveboundCache.cmake): the generator run and its link step.
    set(post "")
    if (link)
        _lb_link_args(${name} ${link} "${ARG_MAX_SPILL_BYTES}" "${ARG_THREADS_PER_BLOCK}" "${link_mma}"
                      "${ARG_MAX_REGISTERS}")
        set(post POST "${PROJECT_SOURCE_DIR}/tools/ptx_link.py" ${link_args}
                 POST_OUTPUTS ${name}.cubins.cpp ${name}.inlined.ptx
                 POST_DEPENDS "${PROJECT_SOURCE_DIR}/tools/ptx_link.py" ${link_depends})
        if (LIVEBOUND_PTXAS)
            list(APPEND post VERSION_OF "${LIVEBOUND_PTXAS}")
        endif ()
    endif ()
    livebound_cached_halide_library(${name} FROM ${LIVEBOUND_GENERATOR_EXE}
                                    GENERATOR ${ARG_GENERATOR}
                                    TARGET ${target}
                                    FEATURES ${features}
                                    PARAMS ${ARG_PARAMS}
                                    ${as}
                                    USE_RUNTIME livebound_halide_runtime
                                    ${html}
                                    ${post})
    set_property(GLOBAL APPEND PROPERTY LIVEBOUND_KERNELS ${name})
    set(${name}_stmt "${${name}_stmt}" PARENT_SCOPE)
    if (link)
        target_sources(${name} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/${name}.cubins.cpp")
        target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/runtime/src")  # cubin_table.h
        set_property(TARGET ${name} PROPERTY LIVEBOUND_CUBINS ON)
    endif ()
endfunction()

# The arguments of tools/ptx_link.py for a CUDA variant's link step (see the top of this file),
# in the caller's link_args and its extra dependencies in link_depends: `kind` is tensor_core
# (helpers inlined and linted) or plain (MAX_REGISTERS only). File names are relative: the
# kernel cache runs the step in a directory of its own.
macro(_lb_link_args name kind max_spill_bytes threads_per_block expect_mma max_registers)
    set(_lb_spill "${max_spill_bytes}")
    set(_lb_threads "${threads_per_block}")
    set(_lb_mma "${expect_mma}")
    set(_lb_cap "${max_registers}")
    if (_lb_spill STREQUAL "")
        set(_lb_spill 0)
    endif ()
    if (_lb_cap STREQUAL "")
        set(_lb_cap 0)
    endif ()
    if (LIVEBOUND_PTXAS)
        set(_lb_ptxas "${LIVEBOUND_PTXAS}")
    else ()
        set(_lb_ptxas none)
    endif ()
    if ("${kind}" STREQUAL "tensor_core")
        if (_lb_threads STREQUAL "")
            set(_lb_threads 128)
        endif ()
        if (_lb_mma STREQUAL "")
            set(_lb_mma -1)
        endif ()
        set(_lb_mode --helpers "${LIVEBOUND_MMA_HELPERS_PTX}" --expect-mma ${_lb_mma})
        set(link_depends "${LIVEBOUND_MMA_HELPERS_PTX}" livebound_mma_helpers_ptx)
    else ()
        if (_lb_threads STREQUAL "")
            set(_lb_threads 256)
        endif ()
        set(_lb_mode --plain)
        set(link_depends "")
    endif ()
    set(link_args ${_lb_mode}
                  --object ${name}.o --output ${name}.cubins.cpp --variant ${name}
                  --ptx-dir . --ptxas "${_lb_ptxas}"
                  --max-spill-bytes ${_lb_spill} --threads-per-block ${_lb_threads}
                  --max-registers ${_lb_cap})
endmacro()

# livebound_write_cubin_registry(<file> <variant>...): the generated source listing the
# cubin tables of the TENSOR_CORE and MAX_REGISTERS variants among <variant>s, nullptr-terminated, as
# `lb_builtin_cubin_tables` (runtime/src/cubin_table.h). The runtime references it, so a
# static link keeps every table. Rewritten only when its content changes.
function(livebound_write_cubin_registry file)
    set(declarations "")
    set(entries "")
    foreach (variant IN LISTS ARGN)
        get_property(has_cubins TARGET ${variant} PROPERTY LIVEBOUND_CUBINS)
        if (has_cubins)
            string(APPEND declarations "extern \"C\" const lb_cubin_entry lb_cubins_${variant}[];\n")
            string(APPEND entries "    lb_cubins_${variant},\n")
        endif ()
    endforeach ()
    file(CONFIGURE OUTPUT "${file}" CONTENT [=[
// Generated by livebound_write_cubin_registry (cmake/LiveboundKernel.cmake): do not edit.
// The cubin tables of the library's tensor-core and register-capped variants (tools/ptx_link.py).
#include "cubin_table.h"

@declarations@
extern "C" const lb_cubin_entry *const lb_builtin_cubin_tables[] = {
@entries@    nullptr,
};
]=] @ONLY)
endfunction()
