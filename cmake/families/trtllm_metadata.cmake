# K4 update_trtllm_mha_graph_metadata: the variants of generator trtllm_metadata.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).
#
# Three parts per target, each an AOT pipeline (generators/trtllm_metadata_generator.cpp):
#   seqlens  seq_lens dtype x cu_seqlens_q mode (none | cumsum with int32/int64 qlens | strided)   8
#   pages    bounded/full x SWA x seq_lens dtype x req_pool_indices dtype (CPU)                    16
#   fused    seqlens + pages (+ swa_out with SWA) in one pipeline, one kernel launch (CUDA, in
#            place of pages): bounded/full x SWA x seq_lens dtype x req_pool_indices dtype x q mode 64
#   swa_out  one                                                                                     1
# The optional pieces add variants instead of multiplying them (but for the fused part, where
# one launch per call is worth the variants). Lengths, widths, page size, seqlen_offset,
# q_stride and bs stay runtime inputs.

# Schedule knobs of the CUDA variants (GeneratorParams of schedules/trtllm_metadata/).
set(LIVEBOUND_K4_CUDA_KNOBS "" CACHE STRING "Extra K4 CUDA GeneratorParams, e.g. col_threads=256")
# Register cap of the fused K4 kernels (0: none, the default). Unlike K1's 16 x 256-thread
# gather, K4's page tables (one block of 128 threads per request) gained nothing from a cap:
# none 3.12 / cap 32 4.00 us at noswa bs 64 on the H200 (schedules/trtllm_metadata/cuda.h).
set(LIVEBOUND_K4_CUDA_MAX_REGISTERS 0 CACHE STRING "Register cap of the fused K4 CUDA kernels (0: none)")
set(_lb_k4_table "")
set(_lb_k4_headers "")

foreach (target IN LISTS LIVEBOUND_TARGETS)
    # Prefix sums: serial recurrence on the CPU, blocked scan on the GPU in blocks of 8
    # entries (K1's choice and reason, cmake/families/decode_metadata.cmake). Fused kernel,
    # graph replay, us, scan_block 32 / 8 / 4 (H200, 2026-12-03): noswa bs 64 3.13 / 2.57 /
    # 2.49, bs 256 3.34 / 2.87 / 2.96; swa bs 64 3.84 / 3.22 / 3.17, bs 256 4.17 / 3.60 / 3.76.
    set(cap "")
    if (target STREQUAL "cuda")
        set(scan_block 8)
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K4_CUDA_KNOBS}")
        if (LIVEBOUND_K4_CUDA_MAX_REGISTERS GREATER 0)
            set(cap MAX_REGISTERS ${LIVEBOUND_K4_CUDA_MAX_REGISTERS} MAX_SPILL_BYTES 4096 THREADS_PER_BLOCK 128)
        endif ()
    else ()
        set(scan_block 0)
        set(knobs "")
    endif ()

    foreach (seq IN ITEMS int32 int64)
        string(REPLACE "int" "" s ${seq})
        # ---- seqlens part ----
        foreach (q IN ITEMS none cumsum32 cumsum64 strided)
            if (q MATCHES "^cumsum")
                set(q_mode cumsum)
                string(REPLACE "cumsum" "int" qlens ${q})
            else ()
                set(q_mode ${q})
                set(qlens none)
            endif ()
            set(name lb_k4_${target}_seqlens_s${s}_q${q})
            set(qparams q_mode=${q_mode})
            if (NOT qlens STREQUAL "none")
                list(APPEND qparams qlens_type=${qlens})
            endif ()
            livebound_add_kernel(${name} GENERATOR trtllm_metadata TARGET ${target}
                                 PARAMS part=seqlens seq_type=${seq} ${qparams} scan_block=${scan_block} ${knobs})
            string(APPEND _lb_k4_table "LB_K4_SEQLENS(${target}, ${seq}, ${q_mode}, ${qlens}, ${name})\n")
            string(APPEND _lb_k4_headers "#include \"${name}.h\"\n")
        endforeach ()

        # ---- pages part ----
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
                    if (target STREQUAL "cuda")
                        # ---- fused part (CUDA): one launch per call ----
                        foreach (q IN ITEMS none cumsum32 cumsum64 strided)
                            if (q MATCHES "^cumsum")
                                set(q_mode cumsum)
                                string(REPLACE "cumsum" "int" qlens ${q})
                                set(qparams q_mode=cumsum qlens_type=${qlens})
                            else ()
                                set(q_mode ${q})
                                set(qlens none)
                                set(qparams q_mode=${q})
                            endif ()
                            set(name lb_k4_${target}_${form}_${swa}_s${s}_i${i}_q${q})
                            # With SWA, two blocks per request (col_groups 2, knobs may override):
                            # the riders, swa_out_cache_loc's dependent loads among them, land on
                            # the second group, which at decode lengths (<= 128 live pages) has no
                            # live column, so they no longer follow a live gather in the same block;
                            # and an all-live row is split over twice the threads. H200, graph
                            # replay, us (col_groups 1 / 2): swa bs 64 4.12 / 3.85, bs 256 4.40 /
                            # 4.17, every page live 8.69 / 6.43; noswa bs 64 3.12 / 3.21, bs 256
                            # 3.35 / 3.42, so noswa keeps one (bench/results/2026-12-03-*-k4-*.md).
                            set(groups "")
                            if (with_swa)
                                set(groups col_groups=2)
                            endif ()
                            livebound_add_kernel(${name} GENERATOR trtllm_metadata TARGET ${target}
                                                 LARGE_BUFFERS ${cap}
                                                 PARAMS part=fused with_swa=${with_swa} bounded=${bounded}
                                                        seq_type=${seq} index_type=${idx} ${qparams}
                                                        scan_block=${scan_block} ${groups} ${knobs})
                            string(APPEND _lb_k4_table
                                   "LB_K4_FUSED(${target}, ${form}, ${swa}, ${seq}, ${idx}, ${q_mode}, ${qlens}, ${name})\n")
                            string(APPEND _lb_k4_headers "#include \"${name}.h\"\n")
                        endforeach ()
                        continue ()
                    endif ()
                    set(name lb_k4_${target}_${form}_${swa}_s${s}_i${i})
                    # req_to_token pools can pass 2^31 elements (a 1M-token context x 4096 rows).
                    livebound_add_kernel(${name} GENERATOR trtllm_metadata TARGET ${target}
                                         LARGE_BUFFERS
                                         PARAMS part=pages with_swa=${with_swa} bounded=${bounded}
                                                seq_type=${seq} index_type=${idx} ${knobs})
                    string(APPEND _lb_k4_table
                           "LB_K4_PAGES(${target}, ${form}, ${swa}, ${seq}, ${idx}, ${name})\n")
                    string(APPEND _lb_k4_headers "#include \"${name}.h\"\n")
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()

    # ---- swa_out part ----
    set(name lb_k4_${target}_swa_out)
    livebound_add_kernel(${name} GENERATOR trtllm_metadata TARGET ${target} LARGE_BUFFERS
                         PARAMS part=swa_out ${knobs})
    string(APPEND _lb_k4_table "LB_K4_SWA_OUT(${target}, ${name})\n")
    string(APPEND _lb_k4_headers "#include \"${name}.h\"\n")
endforeach ()

livebound_write_variant_file("${_lb_gen_dir}/k4_variants.inc" "${_lb_k4_table}")
livebound_write_variant_file("${_lb_gen_dir}/k4_headers.inc" "${_lb_k4_headers}")
