# K1 normal_decode_set_metadata: the variants of generator decode_metadata.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).

# Schedule knobs of the CUDA variants (GeneratorParams of schedules/decode_metadata/).
# The reviewed values are the defaults in schedules/decode_metadata/stages.h;
# autotune/ overrides them here in its own build directories.
set(LIVEBOUND_K1_CUDA_KNOBS "" CACHE STRING "Extra K1 CUDA GeneratorParams, e.g. col_groups=32")
set(LIVEBOUND_K1_CUDA_MAX_REGISTERS 32 CACHE STRING "Register cap of the K1 CUDA page-table kernels")
set(_lb_k1_table "")
set(_lb_k1_headers "")

# ---- K1 normal_decode_set_metadata (generator decode_metadata) ----
foreach (target IN LISTS LIVEBOUND_TARGETS)
    # Prefix-sum algorithm per target: serial recurrence on the CPU, blocked scan on the GPU
    # (schedules/decode_metadata/ says why) in blocks of 8 entries. The block size sets the
    # kernel's length: each thread unrolls one block total and one head (2 x scan_block
    # loads), and at small batches the riding block's time is mostly fetching that code
    # (ncu on the H200: stalls on instruction and constant-cache misses and on the
    # barriers waiting for it). Graph replay, us, scan_block 32 / 8 / 4 (2026-12-03,
    # bench/results/2026-12-03-nvidia-h200-scan-block.md): ps 1 bs 1 3.30 / 2.31 / 2.14,
    # bs 8 3.87 / 2.96 / 2.79, bs 64 4.16 / 3.76 / 3.70, bs 256 8.98 / 9.11 / 9.00;
    # ps 64 bs 64 3.94 / 3.29 / 3.24; the scan alone (skip_page_table) bs 256 2.49 / 2.11
    # / 2.27. 4 saves 0.1-0.2 us more at bs <= 8 and loses at bs 256 (each entry then
    # adds up to bs / 4 block totals serially).
    if (target STREQUAL "cuda")
        set(scan_block 8)
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K1_CUDA_KNOBS}")
        # The page-table kernel (the prefix sums riding on it) is capped at 32 registers a
        # thread, so all 2048 threads of an SM stay resident: its gather is bound by memory
        # latency. ptxas gives it 56 uncapped (the scan's unrolled loads), which halved its
        # speed on the H200 (every column live, ps 1, bs 64: 63.3 vs 25.7 us capped;
        # schedules/decode_metadata/cuda.h).
        set(gather_cap MAX_REGISTERS ${LIVEBOUND_K1_CUDA_MAX_REGISTERS})
    else ()
        set(scan_block 0)
        set(knobs "")
        set(gather_cap "")
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
                                         LARGE_BUFFERS ${gather_cap}
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

livebound_write_variant_file("${_lb_gen_dir}/k1_variants.inc" "${_lb_k1_table}")
livebound_write_variant_file("${_lb_gen_dir}/k1_headers.inc" "${_lb_k1_headers}")

