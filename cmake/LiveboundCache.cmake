# Build caches (issue 46): rebuilds in minutes.
#
# 1. The kernel cache: each variant's generator step together with its post-processing
#    (tools/ptx_link.py and ptxas for TENSOR_CORE / MAX_REGISTERS variants) is one custom
#    command running tools/kernel_cache.py, which looks the step up by a key of its
#    normalised inputs in $LIVEBOUND_CACHE_DIR (default ~/.cache/livebound, outside the build
#    tree, shared by every clone, build tree and `pip install .`) and on a hit copies the
#    stored outputs instead of running the generator and ptx_link. The generator's identity
#    in the key is its fingerprint (.lbfp next to the executable, written POST_BUILD by
#    livebound_generator_fingerprint(): preprocessed sources, compiler, flags, libHalide and
#    GenGen bytes), never its bytes (they embed the RUNPATH and Halide.h's __FILE__ paths).
#    add_halide_library has no launcher hook for C++ generators, so
#    livebound_cached_halide_library() below makes the command and the library target the way
#    Halide 21's add_halide_library does (same generator arguments, same targets). At build
#    time: LIVEBOUND_CACHE=off runs every step uncached, LIVEBOUND_CACHE=verify regenerates
#    every hit and fails on a difference, LIVEBOUND_CACHE_MAX_SIZE bounds the cache (4G).
#    The build ends with the line `livebound kernel cache: N hits, M misses; ... of 4.0 GiB`
#    (target livebound_kernel_cache_summary; also in build/kernel_cache/summary.txt, which
#    scripts/setup.sh prints). `tools/kernel_cache.py census` tabulates the variants and
#    their generation CPU-seconds per family.
# 2. ccache (LIVEBOUND_CCACHE, ON by default; Debian's ccache, which scripts/setup.sh
#    installs): CMAKE_<LANG>_COMPILER_LAUNCHER for every C and C++ compile, its directory
#    beside the kernel cache (<cache>/ccache, fixed when the build is configured), paths
#    under the source tree hashed relative to it, so another clone at another path hits.
# 3. Halide's HTML statements (LIVEBOUND_STMT_HTML, OFF by default: about 800 MB per build)
#    are built on request (-DLIVEBOUND_STMT_HTML=ON); their steps then run uncached.

option(LIVEBOUND_CCACHE "Compile C and C++ through ccache (when installed)" ON)
option(LIVEBOUND_STMT_HTML "Also emit Halide's HTML view of each variant's statement (<name>.stmt.html; uncached)" OFF)

set(LIVEBOUND_KERNEL_CACHE_TOOL "${PROJECT_SOURCE_DIR}/tools/kernel_cache.py")
set(LIVEBOUND_KERNEL_CACHE_STATS "${CMAKE_BINARY_DIR}/kernel_cache")

# livebound_cached_halide_library() mirrors Halide 21's add_halide_library (HalideGeneratorHelpers.cmake:
# the generator's arguments, outputs, library target and runtime targets); another Halide
# needs that checked first.
if (NOT Halide_VERSION_MAJOR EQUAL 21)
    message(FATAL_ERROR "livebound: cmake/LiveboundCache.cmake mirrors Halide 21's add_halide_library; Halide "
                        "${Halide_VERSION} found (requirements.txt pins halide==21.0.0)")
endif ()
find_package(Python3 REQUIRED COMPONENTS Interpreter)  # (the same call as LiveboundKernel.cmake's)

if (LIVEBOUND_CCACHE)
    find_program(LIVEBOUND_CCACHE_PROGRAM ccache DOC "ccache for C and C++ compiles (LIVEBOUND_CCACHE)")
    if (LIVEBOUND_CCACHE_PROGRAM)
        if (DEFINED ENV{LIVEBOUND_CACHE_DIR} AND NOT "$ENV{LIVEBOUND_CACHE_DIR}" STREQUAL "")
            set(_lb_ccache_dir "$ENV{LIVEBOUND_CACHE_DIR}/ccache")
        else ()
            set(_lb_ccache_dir "$ENV{HOME}/.cache/livebound/ccache")
        endif ()
        foreach (lang IN ITEMS C CXX)
            if (NOT CMAKE_${lang}_COMPILER_LAUNCHER)
                # NOHASHDIR: the build directory's path does not enter the hash (-g is off in
                # Release, and paths under BASEDIR are made relative).
                set(CMAKE_${lang}_COMPILER_LAUNCHER env "CCACHE_DIR=${_lb_ccache_dir}"
                    "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=1 "${LIVEBOUND_CCACHE_PROGRAM}")
            endif ()
        endforeach ()
        message(STATUS "livebound: compiling through ccache (${_lb_ccache_dir})")
    else ()
        message(STATUS "livebound: no ccache found: compiling without it (LIVEBOUND_CCACHE)")
    endif ()
endif ()

# Paths that the key names by role (@SRC, @BUILD, @HALIDE), not by where the clone, the
# build tree or the Halide wheel lives. (HALIDE: the wheel's package directory, lib64/..)
set(_lb_cache_roots
    --root "SRC=${PROJECT_SOURCE_DIR}"
    --root "BUILD=${CMAKE_BINARY_DIR}"
    --root "HALIDE=$<PATH:GET_PARENT_PATH,$<TARGET_FILE_DIR:Halide::Halide>>")

# livebound_generator_fingerprint(<generator target>): write <generator>.lbfp after every
# link of the generator (POST_BUILD: in the link's own build step, so before any step that
# runs the generator). It never fails the link: a generator it cannot fingerprint has its
# kernels built uncached, saying why. Call it in the generator's own directory: every
# generator that livebound_cached_halide_library() runs needs it.
function(livebound_generator_fingerprint generator)
    set_property(TARGET ${generator} PROPERTY EXPORT_COMPILE_COMMANDS ON)
    string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
    add_custom_command(TARGET ${generator} POST_BUILD
                       COMMAND Python3::Interpreter "${LIVEBOUND_KERNEL_CACHE_TOOL}" fingerprint
                               --exe "$<TARGET_FILE:${generator}>" --out "$<TARGET_FILE:${generator}>.lbfp"
                               --compile-commands "${CMAKE_BINARY_DIR}/compile_commands.json"
                               --object-dir "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${generator}.dir"
                               ${_lb_cache_roots}
                               --link-input "$<TARGET_FILE:Halide::Halide>"
                               --link-input "$<TARGET_LINKER_FILE:Halide::GenGen>"
                               --fact "halide=${Halide_VERSION}"
                               --fact "link_flags=${CMAKE_EXE_LINKER_FLAGS} ${CMAKE_EXE_LINKER_FLAGS_${config}}"
                       VERBATIM)
endfunction()

# livebound_cached_halide_library(<name> FROM <generator> GENERATOR <g> TARGET <halide target>
#     [FEATURES f...] [PARAMS k=v...] [AUTOSCHEDULER Halide::<Name>] USE_RUNTIME <runtime>
#     [STMT_HTML] [POST <script.py> args...] [POST_OUTPUTS file...] [POST_DEPENDS dep...]
#     [VERSION_OF tool...])
# add_halide_library(<name> FROM <generator> GENERATOR <g> TARGETS <t> FEATURES ... PARAMS ...
# USE_RUNTIME <runtime> STMT CONCEPTUAL_STMT [STMT_HTML]) as one cached step, with POST (a
# Python script run after the generator in the same directory: ptx_link.py) in the same
# cache entry. Arguments of POST are relative to the variant's binary directory, or absolute
# files (their content enters the key, not their path). Sets <name>_stmt in the caller.
function(livebound_cached_halide_library name)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "STMT_HTML" "FROM;GENERATOR;TARGET;AUTOSCHEDULER;USE_RUNTIME"
                          "FEATURES;PARAMS;POST;POST_OUTPUTS;POST_DEPENDS;VERSION_OF")
    set(dir "${CMAKE_CURRENT_BINARY_DIR}")
    # Targets as add_halide_library writes them: <t>-<features>, then -no_runtime.
    set(target "${ARG_TARGET}")
    if (ARG_FEATURES)
        list(JOIN ARG_FEATURES "-" features)
        string(APPEND target "-${features}")
    endif ()
    string(APPEND target "-no_runtime")
    set(params ${ARG_PARAMS})
    set(plugin_args "")
    if (ARG_AUTOSCHEDULER)
        string(REGEX REPLACE ".*::(.*)" "\\1" scheduler "${ARG_AUTOSCHEDULER}")
        list(PREPEND params "autoscheduler=${scheduler}")
        set(plugin_args -p "$<TARGET_FILE:${ARG_AUTOSCHEDULER}>")
    endif ()
    # Outputs in Halide's order (-e: c_header, object, then the extra outputs in its table's order).
    set(emit c_header object conceptual_stmt stmt)
    set(outputs ${name}.h ${name}.o ${name}.conceptual.stmt ${name}.stmt)
    set(uncached "")
    if (ARG_STMT_HTML)
        list(APPEND emit stmt_html)
        list(APPEND outputs ${name}.stmt.html)
        set(uncached "${CMAKE_COMMAND}" -E env LIVEBOUND_CACHE=off)  # (on request; not worth 800 MB of cache)
    endif ()
    list(APPEND outputs ${ARG_POST_OUTPUTS})
    list(JOIN emit "," emit)
    set(declared "")
    foreach (out IN LISTS outputs)
        list(APPEND declared --output ${out})
    endforeach ()
    set(version_of "")
    foreach (tool IN LISTS ARG_VERSION_OF)
        list(APPEND version_of --version-of "${tool}")
    endforeach ()
    set(post "")
    if (ARG_POST)
        set(post ---then ${ARG_POST})
    endif ()
    set(keep_identical "")
    if (CMAKE_GENERATOR MATCHES "Ninja")
        set(keep_identical --keep-identical)  # Ninja's restat: unchanged outputs rebuild nothing
    endif ()
    list(TRANSFORM outputs PREPEND "${dir}/" OUTPUT_VARIABLE output_paths)
    add_custom_command(OUTPUT ${output_paths}
                       COMMAND ${uncached} "$<TARGET_FILE:Python3::Interpreter>" "${LIVEBOUND_KERNEL_CACHE_TOOL}" run
                               --name ${name} --out-dir "${dir}"
                               --fingerprint "$<TARGET_FILE:${ARG_FROM}>.lbfp"
                               --stats-dir "${LIVEBOUND_KERNEL_CACHE_STATS}"
                               ${_lb_cache_roots} ${keep_identical} ${declared} ${version_of}
                               -- "$<TARGET_FILE:${ARG_FROM}>"
                               -n ${name} -d 0 -g ${ARG_GENERATOR} -f ${name} -e ${emit} ${plugin_args}
                               -o . "target=${target}" ${params}
                               ${post}
                       DEPENDS ${ARG_FROM} ${ARG_AUTOSCHEDULER} ${ARG_POST_DEPENDS}
                       WORKING_DIRECTORY "${dir}"
                       COMMENT "Generating ${name} (kernel cache)"
                       VERBATIM)

    # The library, as _Halide_library_from_generator makes it (TYPE object).
    add_library(${name} STATIC "${dir}/${name}.o")
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON LINKER_LANGUAGE CXX)
    if (NOT Halide_NO_DEFAULT_FLAGS)
        target_compile_options(${name} PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Wno-psabi>)
    endif ()
    add_custom_target(${name}.update DEPENDS ${output_paths})
    add_dependencies(${name} ${name}.update)
    target_link_libraries(${name} INTERFACE ${ARG_USE_RUNTIME})
    add_dependencies(${name} ${ARG_USE_RUNTIME})
    # The runtime's targets, in add_halide_library's order (its _Halide_add_targets_to_runtime
    # calls: the bare target, then the library's), so the runtime's command is unchanged.
    set_property(TARGET ${ARG_USE_RUNTIME} APPEND PROPERTY Halide_RT_TARGETS "${ARG_TARGET}")
    set_property(TARGET ${ARG_USE_RUNTIME} APPEND PROPERTY Halide_RT_TARGETS "${target}")
    target_sources(${name} INTERFACE FILE_SET HEADERS BASE_DIRS "${dir}" FILES "${dir}/${name}.h")
    set_property(TARGET ${name} PROPERTY Halide_LIBRARY_RUNTIME_TARGET "${ARG_USE_RUNTIME}")
    set_property(TARGET ${name} PROPERTY Halide_LIBRARY_FUNCTION_NAME "${name}")
    set(${name}_stmt "${dir}/${name}.stmt" PARENT_SCOPE)
    # Its row of the variant list: build/kernel_cache/variants.tsv (`kernel_cache.py census`)
    # and generated/livebound/variant_list.inc (`livebound list`).
    set(kind cpu)
    if (target MATCHES "-cuda")
        set(kind cuda)
    endif ()
    if (ARG_POST)
        list(FIND ARG_POST "--helpers" helpers)
        if (helpers GREATER -1)
            set(kind cuda_tensor_core)
        else ()
            set(kind cuda_capped)
        endif ()
    endif ()
    list(JOIN params " " param_text)
    set_property(GLOBAL APPEND PROPERTY LIVEBOUND_VARIANT_ROWS "${name}\t${ARG_FROM}\t${ARG_GENERATOR}\t${kind}\t${param_text}")
endfunction()

# The end-of-build line. The target is in ALL and depends on every
# other target of ALL, so it runs last. A pip build builds only pyproject.toml's
# build.targets, which do not name it, so there the counts stay in build/kernel_cache/events.jsonl.
# Deferred to the end of the top-level CMakeLists.txt.
function(_lb_collect_targets dir out)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach (sub IN LISTS subdirs)
        _lb_collect_targets("${sub}" sub_targets)
        list(APPEND targets ${sub_targets})
    endforeach ()
    set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(_lb_kernel_cache_summary_target)
    get_property(rows GLOBAL PROPERTY LIVEBOUND_VARIANT_ROWS)
    set(tsv "variant\tgenerator_target\tgenerator\tkind\tparams\n")
    set(inc "// Generated by cmake/LiveboundCache.cmake: every variant of this build (livebound list).\n")
    foreach (row IN LISTS rows)
        string(APPEND tsv "${row}\n")
        string(REPLACE "\t" "\", \"" quoted "${row}")
        string(APPEND inc "LB_VARIANT_ROW(\"${quoted}\")\n")
    endforeach ()
    file(CONFIGURE OUTPUT "${LIVEBOUND_KERNEL_CACHE_STATS}/variants.tsv" CONTENT "${tsv}")
    file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/generated/livebound/variant_list.inc" CONTENT "${inc}")
    add_custom_target(livebound_kernel_cache_summary ALL
                      COMMAND Python3::Interpreter "${LIVEBOUND_KERNEL_CACHE_TOOL}" summary
                              --stats-dir "${LIVEBOUND_KERNEL_CACHE_STATS}"
                              --write "${LIVEBOUND_KERNEL_CACHE_STATS}/summary.txt"
                      COMMENT "livebound kernel cache"
                      VERBATIM)
    _lb_collect_targets("${PROJECT_SOURCE_DIR}" all)
    set(before "")
    foreach (t IN LISTS all)
        get_target_property(type ${t} TYPE)
        get_target_property(excluded ${t} EXCLUDE_FROM_ALL)
        if (NOT t STREQUAL "livebound_kernel_cache_summary" AND NOT type STREQUAL "INTERFACE_LIBRARY"
            AND NOT excluded)
            list(APPEND before ${t})
        endif ()
    endforeach ()
    if (before)
        add_dependencies(livebound_kernel_cache_summary ${before})
    endif ()
endfunction()
cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL _lb_kernel_cache_summary_target)
