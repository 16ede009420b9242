# K7 extend_attention_fwd: the variants of generator extend_attention.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).
#
# Variant facts: dtype (bf16, fp16) x head dims (Lq/Lv = 128/128, 64/64; 576/512 for bf16) x bounded / full-width
# twin, kv_indices int64 everywhere and int32 too for the main shape (bf16, 128/128). The LSE
# output is always produced (the runtime hands a scratch row block when the caller passes
# none). Window, causality, sinks, scales, lengths stay runtime inputs. Plus the CPU-only
# count_tiles instrumented variants (two tile configurations, bounded and full-width) that
# tests/extend_attention/test_tile_counts.cpp compares with the ideal chunk count.
set(_lb_k7_table "")
set(_lb_k7_headers "")

foreach (target IN LISTS LIVEBOUND_TARGETS)
    # CUDA schedule: next session. Only CPU variants exist for now.
    if (NOT target STREQUAL "cpu")
        continue ()
    endif ()
    foreach (dt IN ITEMS bf16 fp16)
        if (dt STREQUAL "bf16")
            set(halide_type bfloat16)
        else ()
            set(halide_type float16)
        endif ()
        # MLA-absorbed Lq != Lv (576/512) for bf16 only.
        set(all_dims 128_128 64_64)
        if (dt STREQUAL "bf16")
            list(APPEND all_dims 576_512)
        endif ()
        foreach (dims IN LISTS all_dims)
            string(REPLACE "_" ";" dl "${dims}")
            list(GET dl 0 dqk)
            list(GET dl 1 dv)
            if (dt STREQUAL "bf16" AND dims STREQUAL "128_128")
                set(index_types int32 int64)
            else ()
                set(index_types int64)
            endif ()
            foreach (idx IN LISTS index_types)
                string(REPLACE "int" "" i ${idx})
                foreach (form IN ITEMS bounded full)
                    if (form STREQUAL "bounded")
                        set(bounded true)
                    else ()
                        set(bounded false)
                    endif ()
                    set(name lb_k7_${target}_${form}_${dt}_d${dqk}_${dv}_i${i})
                    # KV pools pass 2^31 elements (num_slots x Hkv x Lq).
                    livebound_add_kernel(${name} GENERATOR extend_attention TARGET ${target} LARGE_BUFFERS
                                         PARAMS dtype=${halide_type} index_type=${idx} head_dim_qk=${dqk}
                                                head_dim_v=${dv} bounded=${bounded})
                    string(APPEND _lb_k7_table
                           "LB_K7_ATTN(${target}, ${form}, ${dt}, ${dqk}, ${dv}, ${idx}, ${name})\n")
                    string(APPEND _lb_k7_headers "#include \"${name}.h\"\n")
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()
    # The instrumented chunk counters (block_m x block_n configurations).
    foreach (tiles IN ITEMS 32_32 16_64)
        string(REPLACE "_" ";" tl "${tiles}")
        list(GET tl 0 bm)
        list(GET tl 1 bn)
        foreach (form IN ITEMS bounded full)
            if (form STREQUAL "bounded")
                set(bounded true)
            else ()
                set(bounded false)
            endif ()
            set(name lb_k7_${target}_count_${form}_m${bm}_n${bn})
            livebound_add_kernel(${name} GENERATOR extend_attention TARGET ${target}
                                 PARAMS count_tiles=true dtype=bfloat16 index_type=int32 head_dim_qk=64
                                        head_dim_v=64 bounded=${bounded} block_m=${bm} block_n=${bn})
            string(APPEND _lb_k7_table "LB_K7_COUNT(${target}, ${form}, ${bm}, ${bn}, ${name})\n")
            string(APPEND _lb_k7_headers "#include \"${name}.h\"\n")
        endforeach ()
    endforeach ()
endforeach ()

file(CONFIGURE OUTPUT "${_lb_gen_dir}/k7_variants.inc" CONTENT "${_lb_k7_table}")
file(CONFIGURE OUTPUT "${_lb_gen_dir}/k7_headers.inc" CONTENT "${_lb_k7_headers}")
