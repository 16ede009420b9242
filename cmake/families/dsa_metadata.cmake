# K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata: the variants of
# generators dsa_decode_metadata and dsa_target_verify_metadata.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).
#
# Variant axes (compile-time facts only; lengths, widths, top-k, real_page_size, next_n and
# index_kpool are runtime inputs):
#   target    cpu | cuda
#   form      bounded | full (the full-width twin)
#   tables    pt1  (page_table_1 only: real_page_size == 1, the real table IS page_table_1)
#             both (page_table_1 and real_page_table)
#             real (real_page_table only: page_table_1 absent, real_page_size > 1)
#   ctx       K3 only: noctx | ctx (paged_mqa_ctx_lens_2d written)
#   dtype     i32 | i64: seq_lens and req_pool_indices (one dtype for both)
# Every variant gets LARGE_BUFFERS: req_to_token pools of 1M-token rows pass 2^31 elements.

# Schedule knobs for every CUDA variant (schedules/dsa_metadata/stages.h), e.g.
# "col_groups=4 stage_totals=true"; a scan_block=N here replaces the default 16.
set(LIVEBOUND_K2_CUDA_KNOBS "" CACHE STRING "Extra K2/K3 CUDA GeneratorParams, e.g. col_groups=32")
# Register cap of the K2/K3 CUDA kernels (0: none, the default). For experiments with the
# one-launch schedule (knob riding_grid=true, schedules/dsa_metadata/stages.h), whose gather
# wants every thread of an SM resident and whose riding scans want registers; measured on
# the H200 with caps 32 / 48 / none, all slower than the two launches.
set(LIVEBOUND_K2_CUDA_MAX_REGISTERS 0 CACHE STRING "Register cap of the K2/K3 CUDA kernels (0: none)")
set(_lb_k2_table "")
set(_lb_k2_headers "")

# The tuned knobs (schedules/dsa_metadata/tuned/) were measured on the variants of SGLang's
# production calls: both tables, int64 indices (K2), and with paged_mqa_ctx_lens_2d (K3).
# Their CUDA siblings (another table set, int32 indices, no ctx lens, the full-width twin)
# are the same kernels with fewer outputs or narrower index loads: they take the measured
# variant's knobs and batch alternate, unless a tuned file names them. So every K2/K3 CUDA
# call gets the same placement (one launch at every batch size).
# Past 4096 prefix-sum entries (bs + 1 for K2, bs * next_n + 1 for K3's longer scan) those
# calls run the hand schedule instead (two launches): the tuned large-batch form stages every
# term of both scans in shared memory, ~8.5 bytes per entry, and its launch fails past the
# 48 KiB a kernel gets (~5,700 entries; CUDA_ERROR_INVALID_VALUE at K2 bs 16384 on the H200);
# the hand form's shared memory is per block.
macro(_lb_dsa_inherit_tuned name measured)
    if (NOT DEFINED LIVEBOUND_TUNED_${name} AND DEFINED LIVEBOUND_TUNED_${measured})
        set(LIVEBOUND_TUNED_${name} ${LIVEBOUND_TUNED_${measured}})
    endif ()
    if (NOT DEFINED LIVEBOUND_TUNED_BATCH_${name} AND DEFINED LIVEBOUND_TUNED_BATCH_${measured})
        set(LIVEBOUND_TUNED_BATCH_${name} ${LIVEBOUND_TUNED_BATCH_${measured}})
    endif ()
    if (DEFINED LIVEBOUND_TUNED_${name} OR DEFINED LIVEBOUND_TUNED_BATCH_${name})
        set(LIVEBOUND_LARGE_ENTRIES_${name} 4096)
    endif ()
endmacro()

foreach (target IN LISTS LIVEBOUND_TARGETS)
    # Prefix sums: serial recurrence on the CPU, blocked scan on the GPU in blocks of 16
    # entries (shorter unrolled code, K1's reason: cmake/families/decode_metadata.cmake).
    # Graph replay on the H200, us, scan_block 32 / 16 / 8 (2026-12-03): K2 skip bs 1 4.48 /
    # 4.44 / 4.32, bs 8 4.61 / 4.56 / 5.20, bs 64 7.48 / 6.55 / 6.19, half_live 4.88 / 4.82
    # / 5.46; K3 skip bs 8 7.80 / 6.64 / 6.36, bs 64 10.08 / 8.64 / 8.02. 16 is never worse
    # than 32; 8 loses at bs 8.
    if (target STREQUAL "cuda")
        separate_arguments(knobs UNIX_COMMAND "${LIVEBOUND_K2_CUDA_KNOBS}")
        if (knobs MATCHES "(^|;)scan_block=")
            set(scan_block "")
        else ()
            set(scan_block scan_block=16)
        endif ()
    else ()
        set(scan_block scan_block=0)
        set(knobs "")
    endif ()
    set(cap "")
    if (target STREQUAL "cuda" AND LIVEBOUND_K2_CUDA_MAX_REGISTERS GREATER 0)
        set(cap MAX_REGISTERS ${LIVEBOUND_K2_CUDA_MAX_REGISTERS} MAX_SPILL_BYTES 4096)
    endif ()
    # K3 on CUDA: 4 column groups per table row (schedules/dsa_metadata/stages.h, measured:
    # 16.3 -> 10.1 µs at bs 64 on the H200), unless the knobs above set col_groups.
    set(k3_knobs "")
    if (target STREQUAL "cuda" AND NOT knobs MATCHES "(^|;)col_groups=")
        set(k3_knobs col_groups=4)
    endif ()
    foreach (dtype IN ITEMS int32 int64)
        string(REPLACE "int" "i" d ${dtype})
        foreach (tables IN ITEMS pt1 both real)
            if (tables STREQUAL "pt1")
                set(tp with_page_table_1=true with_real_page_table=false)
            elseif (tables STREQUAL "both")
                set(tp with_page_table_1=true with_real_page_table=true)
            else ()
                set(tp with_page_table_1=false with_real_page_table=true)
            endif ()
            foreach (form IN ITEMS bounded full)
                if (form STREQUAL "bounded")
                    set(bounded true)
                else ()
                    set(bounded false)
                endif ()
                set(common ${tp} bounded=${bounded} seq_lens.type=${dtype} req_pool_indices.type=${dtype}
                           ${scan_block} ${knobs})
                # K2
                set(name lb_k2_${target}_${form}_${tables}_${d})
                if (target STREQUAL "cuda")
                    _lb_dsa_inherit_tuned(${name} lb_k2_cuda_bounded_both_i64)
                endif ()
                livebound_add_kernel(${name} GENERATOR dsa_decode_metadata TARGET ${target} LARGE_BUFFERS ${cap}
                                     PARAMS ${common})
                string(APPEND _lb_k2_table "LB_K2(${target}, ${form}, ${tables}, ${dtype}, ${name})\n")
                string(APPEND _lb_k2_headers "#include \"${name}.h\"\n")
                # K3
                foreach (ctx IN ITEMS noctx ctx)
                    if (ctx STREQUAL "ctx")
                        set(with_ctx true)
                    else ()
                        set(with_ctx false)
                    endif ()
                    set(name lb_k3_${target}_${form}_${tables}_${ctx}_${d})
                    if (target STREQUAL "cuda")
                        _lb_dsa_inherit_tuned(${name} lb_k3_cuda_bounded_both_ctx_i64)
                    endif ()
                    livebound_add_kernel(${name} GENERATOR dsa_target_verify_metadata TARGET ${target} LARGE_BUFFERS ${cap}
                                         PARAMS ${common} with_ctx_lens=${with_ctx} ${k3_knobs})
                    string(APPEND _lb_k2_table "LB_K3(${target}, ${form}, ${tables}, ${ctx}, ${dtype}, ${name})\n")
                    string(APPEND _lb_k2_headers "#include \"${name}.h\"\n")
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()

livebound_write_variant_file("${_lb_gen_dir}/dsa_metadata_variants.inc" "${_lb_k2_table}")
livebound_write_variant_file("${_lb_gen_dir}/dsa_metadata_headers.inc" "${_lb_k2_headers}")
