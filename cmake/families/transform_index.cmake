# K6 transform_index_page_table_prefill: the variants of generator transform_index.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).
#
# Variants per target: the fill-only pipeline (every row -1: the num_tokens == 0 call),
# and bounded / full-width x page-table layout (a row per request, or per query token:
# `page_table_is_expanded`). Lengths, topk, widths and batch size stay runtime inputs.

# Schedule knobs (GeneratorParams of schedules/transform_index/); the reviewed values are
# the defaults in schedules/transform_index/stages.h.
set(LIVEBOUND_K6_CUDA_KNOBS "" CACHE STRING "Extra K6 CUDA GeneratorParams, e.g. q_tile=8")
set(LIVEBOUND_K6_CPU_KNOBS "" CACHE STRING "Extra K6 CPU GeneratorParams, e.g. cpu_q_tile=32")
set(_lb_k6_table "")
set(_lb_k6_headers "")

foreach (target IN LISTS LIVEBOUND_TARGETS)
    if (target STREQUAL "cuda")
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K6_CUDA_KNOBS}")
    else ()
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K6_CPU_KNOBS}")
    endif ()
    set(name lb_k6_${target}_fill)
    livebound_add_kernel(${name} GENERATOR transform_index TARGET ${target}
                         PARAMS gather=false ${knobs})
    string(APPEND _lb_k6_table "LB_K6_FILL(${target}, ${name})\n")
    string(APPEND _lb_k6_headers "#include \"${name}.h\"\n")
    foreach (layout IN ITEMS req expanded)
        if (layout STREQUAL "expanded")
            set(expanded true)
        else ()
            set(expanded false)
        endif ()
        foreach (form IN ITEMS bounded full)
            if (form STREQUAL "bounded")
                set(bounded true)
            else ()
                set(bounded false)
            endif ()
            set(name lb_k6_${target}_${form}_${layout})
            # The bounded CUDA variants are the row form (schedules/transform_index/cuda.h
            # R1-R3): one kernel per call. The CPU keeps the grid form and its derived bound.
            set(rows "")
            if (target STREQUAL "cuda" AND bounded)
                set(rows row_grid=true)
            endif ()
            # An expanded page table ([T, max_seqlen_k]) passes 2^31 elements at
            # T = 32768 tokens x 65536 kv positions: 64-bit offsets.
            livebound_add_kernel(${name} GENERATOR transform_index TARGET ${target}
                                 LARGE_BUFFERS
                                 PARAMS gather=true expanded=${expanded} bounded=${bounded} ${rows} ${knobs})
            string(APPEND _lb_k6_table "LB_K6_GATHER(${target}, ${form}, ${layout}, ${name})\n")
            string(APPEND _lb_k6_headers "#include \"${name}.h\"\n")
        endforeach ()
    endforeach ()
endforeach ()

livebound_write_variant_file("${_lb_gen_dir}/k6_variants.inc" "${_lb_k6_table}")
livebound_write_variant_file("${_lb_gen_dir}/k6_headers.inc" "${_lb_k6_headers}")
