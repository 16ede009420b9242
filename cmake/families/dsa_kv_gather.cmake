# K5 _get_k_and_s_triton (DSA indexer K + scale gather): the variants of generator
# dsa_kv_gather. Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are
# set there).
#
# Variants: target x index_head_dim x bounded/full-width x seq_lens dtype x page_indices
# dtype, plus the CUDA bounded row grid (same axes). D (index_head_dim) is compile time:
# 128 (SGLang's DeepSeek-V3.2 indexer; the names carry no suffix), 64 and 256 (`_d64`,
# `_d256`: other DSA indexer configurations); the runtime refuses others by name.
# page_size, max_seq_len and every length stay runtime inputs.

# Schedule knobs of the CUDA variants (GeneratorParams of schedules/dsa_kv_gather/).
# The reviewed values are the defaults in schedules/dsa_kv_gather/stages.h.
set(LIVEBOUND_K5_CUDA_KNOBS "" CACHE STRING "Extra K5 CUDA GeneratorParams, e.g. chunks_per_thread=4")
set(_lb_k5_table "")
set(_lb_k5_headers "")

foreach (target IN LISTS LIVEBOUND_TARGETS)
    # off_b: serial recurrence on the CPU, blocked scan on the GPU in blocks of 16 entries.
    # Graph replay on the H200, us, scan_block 32 / 16 / 8 (2026-12-03): bs8_32k ms 8k 4.21
    # / 4.19 / 4.46, ms 16k 4.14 / 4.12 / 4.40, bs1_16k 2.92 / 2.90 / 2.87, bs32_32k 5.16 /
    # 4.83 / 4.68. 16 is never worse than 32; 8 loses at bs 8.
    if (target STREQUAL "cuda")
        set(scan_block 16)
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K5_CUDA_KNOBS}")
    else ()
        set(scan_block 0)
        set(knobs "")
    endif ()
    foreach (head_dim IN ITEMS 128 64 256)
        if (head_dim EQUAL 128)
            set(dsuffix "")
        else ()
            set(dsuffix _d${head_dim})
        endif ()
        foreach (seq IN ITEMS int32 int64)
            string(REPLACE "int" "" s ${seq})
            foreach (idx IN ITEMS int32 int64)
                string(REPLACE "int" "" i ${idx})
                foreach (form IN ITEMS bounded full)
                    if (form STREQUAL "bounded")
                        set(bounded true)
                    else ()
                        set(bounded false)
                    endif ()
                    set(name lb_k5_${target}_${form}_s${s}_i${i}${dsuffix})
                    # buf passes 2^31 bytes at 254,201 pages of 8448 bytes (D = 128, ps = 64):
                    # every offset into it is 64-bit (spec §1.4).
                    livebound_add_kernel(${name} GENERATOR dsa_kv_gather TARGET ${target}
                                         LARGE_BUFFERS
                                         PARAMS head_dim=${head_dim} bounded=${bounded} seq_lens.type=${seq}
                                                page_indices.type=${idx} scan_block=${scan_block} ${knobs})
                    string(APPEND _lb_k5_table "LB_K5_GATHER(${target}, ${form}, scatter, ${seq}, ${idx}, ${head_dim}, ${name})\n")
                    string(APPEND _lb_k5_headers "#include \"${name}.h\"\n")
                    # The row grid (schedules/dsa_kv_gather/cuda.h R1-R5): the bounded CUDA form
                    # the runtime prefers. Not LARGE_BUFFERS: Halide's alignment analysis stops at
                    # the 64-bit index casts, and the 16-byte accesses need it, so this form serves
                    # buffers below 2^31 words (8 GiB of buf); the runtime sends larger ones to the
                    # scatter form above.
                    if (target STREQUAL "cuda" AND form STREQUAL "bounded")
                        set(name lb_k5_${target}_rows_s${s}_i${i}${dsuffix})
                        livebound_add_kernel(${name} GENERATOR dsa_kv_gather TARGET ${target}
                                             PARAMS head_dim=${head_dim} bounded=true row_grid=true seq_lens.type=${seq}
                                                    page_indices.type=${idx} scan_block=${scan_block} ${knobs})
                        string(APPEND _lb_k5_table "LB_K5_GATHER(${target}, ${form}, rows, ${seq}, ${idx}, ${head_dim}, ${name})\n")
                        string(APPEND _lb_k5_headers "#include \"${name}.h\"\n")
                    endif ()
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()

livebound_write_variant_file("${_lb_gen_dir}/k5_variants.inc" "${_lb_k5_table}")
livebound_write_variant_file("${_lb_gen_dir}/k5_headers.inc" "${_lb_k5_headers}")
