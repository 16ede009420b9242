# K1 normal_decode_set_metadata: the variants of generator decode_metadata.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).

# Schedule knobs of the CUDA variants (GeneratorParams of schedules/decode_metadata/).
# The reviewed values are the defaults in schedules/decode_metadata/stages.h;
# autotune/ overrides them here in its own build directories.
set(LIVEBOUND_K1_CUDA_KNOBS "" CACHE STRING "Extra K1 CUDA GeneratorParams, e.g. col_groups=32")
set(_lb_k1_table "")
set(_lb_k1_headers "")

# ---- K1 normal_decode_set_metadata (generator decode_metadata) ----
foreach (target IN LISTS LIVEBOUND_TARGETS)
    # Prefix-sum algorithm per target: serial recurrence on the CPU, blocked scan
    # (32-entry blocks) on the GPU. schedules/decode_metadata/ says why.
    if (target STREQUAL "cuda")
        set(scan_block 32)
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K1_CUDA_KNOBS}")
    else ()
        set(scan_block 0)
        set(knobs "")
    endif ()
    foreach (seq IN ITEMS int32 int64)
        string(REPLACE "int" "" s ${seq})
        set(name lb_k1_${target}_scan_s${s})
        livebound_add_kernel(${name} GENERATOR decode_metadata TARGET ${target}
                             PARAMS gather_pages=false seq_lens.type=${seq} scan_block=${scan_block} ${knobs})
        string(APPEND _lb_k1_table "LB_K1_SCAN(${target}, ${seq}, ${name})\n")
        string(APPEND _lb_k1_headers "#include \"${name}.h\"\n")
        foreach (idx IN ITEMS int32 int64)
            string(REPLACE "int" "" i ${idx})
            foreach (swa IN ITEMS noswa swa)
                if (swa STREQUAL "swa")
                    set(with_swa true)
                else ()
                    set(with_swa false)
                endif ()
                foreach (form IN ITEMS bounded full)
                    if (form STREQUAL "bounded")
                        set(bounded true)
                    else ()
                        set(bounded false)
                    endif ()
                    set(name lb_k1_${target}_${form}_${swa}_s${s}_i${i})
                    # req_to_token pools can pass 2^31 elements (512 rows x 131072 tokens
                    # is 2^26; a 1M-token context x 4096 rows is not).
                    livebound_add_kernel(${name} GENERATOR decode_metadata TARGET ${target}
                                         LARGE_BUFFERS
                                         PARAMS gather_pages=true with_swa=${with_swa}
                                                bounded=${bounded} seq_lens.type=${seq}
                                                index_type=${idx} scan_block=${scan_block} ${knobs})
                    string(APPEND _lb_k1_table
                           "LB_K1_GATHER(${target}, ${form}, ${swa}, ${seq}, ${idx}, ${name})\n")
                    string(APPEND _lb_k1_headers "#include \"${name}.h\"\n")
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()

file(CONFIGURE OUTPUT "${_lb_gen_dir}/k1_variants.inc" CONTENT "${_lb_k1_table}")
file(CONFIGURE OUTPUT "${_lb_gen_dir}/k1_headers.inc" CONTENT "${_lb_k1_headers}")

