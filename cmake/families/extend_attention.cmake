# K7 extend_attention_fwd: the variants of generator extend_attention.
# Included by cmake/kernels.cmake (LIVEBOUND_TARGETS and _lb_gen_dir are set there).
#
# Variant facts: dtype (bf16, fp16) x KV cache (the model dtype, or fp8 e4m3: dtypes
# bf16_e4m3 / fp16_e4m3) x head-dim bucket x bounded / full-width twin. No index dtype: every
# variant reads its index inputs as int32 with any stride, and the runtime passes an int64
# tensor as the view of its low 32-bit words. CPU variants always produce the LSE (the
# runtime hands a scratch row block when the caller passes none). Window, causality, sinks,
# scales, lengths stay runtime inputs. (The test-only chunk counters are built by
# tests/extend_attention/CMakeLists.txt.)
#
# CUDA SIMT variants (BLOCK_M = BLOCK_N = 32, one thread per query row holding Lv + 2 fp32
# state registers, so head dims up to 256; no 576/512): bounded for bf16 64/64, 128/128,
# 256/256 and fp16 64/64, 128/128, each with and without the LSE output (no scratch can be
# handed to a device kernel without allocating); the full-width twin for bf16 128/128 (with
# and without LSE: tests, benchmark cases B and C) and bf16 256/256 without LSE (benchmark
# case A); the same forms with fp8 caches but the full-width 256/256 and the full-width
# 128/128 without LSE. Each CUDA variant takes 40-100 s to compile (2 cores), hence the short
# list.
set(_lb_k7_table "")
set(_lb_k7_headers "")

# Sets halide_type, bounded, fp8 (true | false), dt16 (bf16 | fp16) and cache (model |
# e4m3) in the caller from a variant's form (bounded | full) and dtype (bf16 | fp16, with
# an fp8 e4m3 KV cache bf16_e4m3 | fp16_e4m3).
macro(_lb_attention_facts form dt)
    string(REGEX REPLACE "_e4m3$" "" dt16 "${dt}")
    if ("${dt16}" STREQUAL "${dt}")
        set(fp8 false)
        set(cache model)
    else ()
        set(fp8 true)
        set(cache e4m3)
    endif ()
    if ("${dt16}" STREQUAL "bf16")
        set(halide_type bfloat16)
    else ()
        set(halide_type float16)
    endif ()
    if ("${form}" STREQUAL "bounded")
        set(bounded true)
    else ()
        set(bounded false)
    endif ()
endmacro()

# Sets lse_tag (lse | nolse) and with_lse (true | false) in the caller from a 1 / 0 flag.
macro(_lb_lse_facts lse)
    if (${lse})
        set(lse_tag lse)
        set(with_lse true)
    else ()
        set(lse_tag nolse)
        set(with_lse false)
    endif ()
endmacro()

# Head-dim buckets. A CPU/SIMT variant's head_dim_qk / head_dim_v are the largest dims it
# serves: a call with lq <= Lq and lv <= Lv, both multiples of the variant's vector width
# (cpu_vector), runs it with the lanes past its dims masked (generator: in_row). Entries are
# <Lq>_<Lv>_<vector>. The runtime picks the smallest bucket that serves the call
# (docs/extend_attention.md, "Head dims"). CPU: every SGLang head dim --
#   32_32_1: any dims up to 32, not multiples of 8 included (SGLang's test dim 13), scalar;
#   64_64_8, 96_96_8 (80, 96), 128_128_8 (112, 128), 192_128_8 (Lq != Lv, 192/128),
#   256_256_8 (160 .. 256), 576_512_8 (MLA absorbed, 576/512).
set(LIVEBOUND_K7_CPU_BUCKETS 32_32_1 64_64_8 96_96_8 128_128_8 192_128_8 256_256_8 576_512_8)

# Sets dqk, dv and vec in the caller from a bucket entry.
macro(_lb_bucket_facts bucket)
    string(REPLACE "_" ";" _lb_b "${bucket}")
    list(GET _lb_b 0 dqk)
    list(GET _lb_b 1 dv)
    list(GET _lb_b 2 vec)
endmacro()

# The dims part of a variant name: d<Lq>_<Lv>, or s<Lq>_<Lv> for a scalar (vector 1) bucket.
function(_lb_bucket_name dqk dv vec out)
    if (vec EQUAL 1)
        set(${out} s${dqk}_${dv} PARENT_SCOPE)
    else ()
        set(${out} d${dqk}_${dv} PARENT_SCOPE)
    endif ()
endfunction()

# livebound_k7_simt(<target> <form> <dt> <dqk> <dv> <vec> <lse>): one CPU/SIMT attention
# variant of head-dim bucket dqk/dv. CPU variants always have the LSE output (the runtime
# hands a scratch block when the caller passes none; lse is 1 there and not in the name);
# a device kernel cannot get scratch without allocating, so CUDA builds both forms.
function(livebound_k7_simt target form dt dqk dv vec lse)
    _lb_attention_facts(${form} ${dt})
    _lb_lse_facts(${lse})
    _lb_bucket_name(${dqk} ${dv} ${vec} dims)
    set(name lb_k7_${target}_${form}_${dt}_${dims})
    if (target STREQUAL "cuda")
        set(name ${name}_${lse_tag})
    endif ()
    # (The CUDA variants keep the default vector width 8, the CPU ones the default LSE on.)
    set(params dtype=${halide_type} fp8_kv_cache=${fp8} head_dim_qk=${dqk} head_dim_v=${dv})
    if (target STREQUAL "cuda")
        # Vector width 8 (the default), or 1 for the scalar bucket of dims up to 32.
        if (NOT vec EQUAL 8 AND NOT vec EQUAL 1)
            message(FATAL_ERROR "livebound_k7_simt: CUDA variants use vector width 8 or 1")
        endif ()
        list(APPEND params bounded=${bounded} with_lse=${with_lse})
        if (vec EQUAL 1)
            list(APPEND params cpu_vector=1)
        endif ()
    else ()
        list(APPEND params cpu_vector=${vec} bounded=${bounded})
    endif ()
    # KV pools pass 2^31 elements (num_slots x Hkv x Lq).
    livebound_add_kernel(${name} GENERATOR extend_attention TARGET ${target} LARGE_BUFFERS PARAMS ${params})
    set(_lb_k7_table
        "${_lb_k7_table}LB_K7_ATTN(${target}, ${form}, ${dt16}, ${cache}, ${dqk}, ${dv}, ${vec}, ${with_lse}, ${name})\n"
        PARENT_SCOPE)
    set(_lb_k7_headers "${_lb_k7_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
endfunction()

# Tensor-core CUDA variants (generator tensor_core=true; schedules/extend_attention/
# cuda_tensor_core.h): one warp per 16-row q tile (block_m 16), key tiles of block_n keys,
# mma.sync through the helpers of generators/common/mma_helpers.cu, linked by
# tools/ptx_link.py (TENSOR_CORE). The runtime picks one before the SIMT variant of the same
# facts when q/k/v have its layout (runtime/src/extend_attention.cpp, pair_view).
# Key tile (block_n) and ptxas spill allowance per head dim, from ptxas -v of the K7 variant
# (255 registers per thread, 128 threads per block; autotune/records/extend_attention.jsonl):
#   head dim 64: 64 keys, 0 bytes (K7) and 28 (K8 bounded): allowed up to 64;
#   head dim 128: 64 keys spill 5152 bytes (V fragments of the whole tile are 128 registers
#   next to 64 of O); 32 keys spill 0 bytes (K7 bounded) to 48 (K8 bounded): allowed up
#   to 64;
#   head dim 256: one warp per q tile spilled 4504 bytes at 32 keys (O alone is 128
#   registers); with O split over two warps (o_split 2: each owns 128 columns of O and
#   computes the tile's S itself, Q K^T twice) 32 keys spill 64 bytes (K7 bounded, no LSE;
#   72 since kv_indices are read as int32): allowed up to 96.
set(_lb_k7_tc_table "")
set(_lb_k8_tc_table "")
#   Lq != Lv (192/128, MLA's 576/512): S over Lq, O over Lv. 192/128 as 128 (O is 64
#   registers). 576/512: O split over four warps (128 columns each, as at 128), 32 keys:
#   255 registers, 64 spill bytes (K7 bounded bf16 with the LSE). 16 keys put the key
#   tile's cache slots and V fragments in local memory (their index kept the tile loop's
#   symbolic minimum). Each warp computes S over all 576 dims, so 39 % of the mma work is
#   useful ((576 + 512) of (4 x 576 + 512) per key and row). The generator knob tc_share_s
#   shares S between the warps through shared memory instead (each warp a quarter of the
#   reduction, all of the mma useful): LIVEBOUND_TC_SHARE_S picks it for every 576/512
#   variant (autotune/experiments/k7-mla-share-h200.json: 37 % less time for K7 on an H100;
#   ptxas 0 spill bytes with Q re-read per key tile). With S shared, tc_share_v_first
#   orders the key tile's V loads before the exchange, so they overlap the exchange and
#   the softmax instead of following them (autotune/records/k7-mla-share-bn-h200.jsonl:
#   10-11 % less K7 time on an H100). K7 only: K8 (one key stage) measured 0.8-1.3 % more
#   time with it (H100, 2026-12-06, one call, three alternating rounds each:
#   bench/results/2026-12-06-nvidia-h100-extend_attention-k8-vfirst-ab.md), so K8 keeps V
#   after the softmax. With S shared, both kernels also take tc_q_stage (each thread's Q
#   fragments stored once in the helpers' shared array lb_q_stage, reloaded from there per
#   key tile instead of from global memory) and tc_share_wide (8-byte exchange accesses):
#   autotune/records/k7-mla-q-stage-h200.jsonl, K7 on an H100: 11-14 % less time (15,051 /
#   11,969 against 16,999 / 13,856 us, ragged bs 8 / causal 8192), 2 % of it the wide
#   exchange's. The library's benchmark, one H100 call against 69ffa71: K7 -11 / -14 %, K8
#   -10 / -10 % (bench/results/2026-12-06-nvidia-h100-extend_attention-161df1b.md).
#   Both take tc_share_scatter (the reduce-scatter exchange: K7 3.1-3.4 % less time in the
#   tuning runner, H100, autotune/records/k7-mla-exchange-h200.jsonl; K8 2.6-3.0 % in the
#   library's benchmark). With LIVEBOUND_MLA_VALUES_IN_KEYS (on) each 576/512 variant has a
#   twin for MLA's absorbed layout (VALUES_IN_KEYS, _lb_tc_options).
# _lb_tc_tiles(<dqk> <dv> <bn> <o_split> <spill> <share>) sets these per head dim; the
# generator gets them as block_n, tc_o_split and tc_share_s (and tc_share_v_first, tc_share_wide, tc_q_stage,
# tc_share_scatter), ptx_link
# the spill allowance and the mma count.
option(LIVEBOUND_TC_SHARE_S "576/512 tensor-core variants: S shared between the warps of a q tile (tc_share_s)" ON)
# _vk twins: on. H100, one call, the library's benchmark at 24344ce built with them: K7 MLA
# 15.3 / 16.4 % less time than 766271c's form that loads V (causal 8192 / ragged bs 8), K8
# 17.2 / 17.1 %; tests and racecheck pass
# (bench/results/2026-12-07-nvidia-h100-extend_attention-24344ce-vk.md).
option(LIVEBOUND_MLA_VALUES_IN_KEYS
       "with LIVEBOUND_TC_SHARE_S: each 576/512 tensor-core variant also in MLA's absorbed layout (values_in_keys, _vk)" ON)
# _vkl twins (K7, V from K in the list stage only, for calls whose v_extend is a copy): off.
# Same call: 15.62 ms on ragged bs 8 with v_extend a copy, against 14.59 ms for the form that
# loads V (766271c); the extend stage's 8-byte V loads cost more than the list stage saves.
option(LIVEBOUND_MLA_VALUES_IN_LIST_KEYS
       "with LIVEBOUND_MLA_VALUES_IN_KEYS: K7's 576/512 variants also with V from K in the list stage only (_vkl)" OFF)
if (NOT LIVEBOUND_TC_SHARE_S)
    set(LIVEBOUND_MLA_VALUES_IN_KEYS OFF)
endif ()
if (NOT LIVEBOUND_MLA_VALUES_IN_KEYS)
    set(LIVEBOUND_MLA_VALUES_IN_LIST_KEYS OFF)
endif ()
function(_lb_tc_tiles dqk dv block_n_out o_split_out spill_out share_out)
    set(${share_out} false PARENT_SCOPE)
    if (dqk GREATER 64)
        set(${block_n_out} 32 PARENT_SCOPE)
    else ()
        set(${block_n_out} 64 PARENT_SCOPE)
    endif ()
    if (dv GREATER 256)
        set(${o_split_out} 4 PARENT_SCOPE)
        set(${spill_out} 96 PARENT_SCOPE)
        if (LIVEBOUND_TC_SHARE_S)
            set(${share_out} true PARENT_SCOPE)
        endif ()
    elseif (dv GREATER 128)
        set(${o_split_out} 2 PARENT_SCOPE)
        set(${spill_out} 96 PARENT_SCOPE)
    else ()
        set(${o_split_out} 1 PARENT_SCOPE)
        set(${spill_out} 64 PARENT_SCOPE)
    endif ()
endfunction()
# _lb_tc_dims(<d>): dqk and dv in the caller from "<d>" (Lq = Lv) or "<dqk>_<dv>".
macro(_lb_tc_dims d)
    string(REPLACE "_" ";" _lb_dims "${d}")
    list(GET _lb_dims 0 dqk)
    list(LENGTH _lb_dims _lb_n)
    if (_lb_n GREATER 1)
        list(GET _lb_dims 1 dv)
    else ()
        set(dv ${dqk})
    endif ()
endmacro()
# The mma.sync a variant's PTX holds (ptx_link EXPECT_MMA): per key tile of bn keys, S = Q K^T
# takes bn/8 x Lq/16 m16n8k16 steps and O += P V (Lv/o_split)/8 x bn/16 (a warp's part of O),
# each 4 "elem" helper calls; the key-tile body appears twice per stage (the common-case
# specialisation).
function(_lb_tc_expected_mma dqk dv bn o_split share stages out)
    math(EXPR ds "${dv} / ${o_split}")
    set(s_part 1)
    if (share)
        set(s_part ${o_split})  # shared S: a warp takes 1 / o_split of S's steps
    endif ()
    math(EXPR per_tile "4 * ((${bn} / 8) * (${dqk} / 16) / ${s_part} + (${ds} / 8) * (${bn} / 16))")
    math(EXPR total "${per_tile} * ${stages} * 2")
    set(${out} ${total} PARENT_SCOPE)
endfunction()
# _lb_tc_padding(<padded> <d>): dims (d<d> exact, p<d> padded: any multiple of 8 up to d) and
# padded_param (true | false) in the caller.
macro(_lb_tc_padding padded d)
    if ("${padded}" STREQUAL "PADDED")
        set(dims p${d})
        set(padded_param true)
    else ()
        set(dims d${d})
        set(padded_param false)
    endif ()
endmacro()
# _lb_tc_options(<share> <options>...): VALUES_IN_KEYS or VALUES_IN_LIST_KEYS among
# a variant's options sets vk_param (how much of a call's values it takes from its keys: 0
# none, 1 the list stage's (v_buffer a view of k_buffer; K7's extend stage loads v_extend), 2
# every stage's) and vk_tag ("", "_vkl", "_vk") in the caller, the other options in
# tc_options, and share_params, the generator params only shared-S variants name: with S
# shared, the reduce-scatter exchange (tc_share_scatter, K7 and K8: H100, one call each, K7 in
# the tuning runner 3.1 / 3.4 % less time, causal 8192 / ragged bs 8,
# autotune/records/k7-mla-exchange-h200.jsonl; K8 in the library's benchmark 2.6 / 3.0 %,
# bench/results/2026-12-07-nvidia-h100-extend_attention-24344ce-vk.md), and
# values_in_keys(_list_only).
macro(_lb_tc_options share)
    set(tc_options ${ARGN})
    set(vk_param 0)
    set(vk_tag "")
    set(share_params "")
    if (${share})
        set(share_params tc_share_scatter=true)
    endif ()
    if ("VALUES_IN_KEYS" IN_LIST tc_options)
        list(REMOVE_ITEM tc_options VALUES_IN_KEYS)
        set(vk_param 2)
        set(vk_tag _vk)
        list(APPEND share_params values_in_keys=true)
    elseif ("VALUES_IN_LIST_KEYS" IN_LIST tc_options)
        list(REMOVE_ITEM tc_options VALUES_IN_LIST_KEYS)
        set(vk_param 1)
        set(vk_tag _vkl)
        list(APPEND share_params values_in_keys=true values_in_keys_list_only=true)
    endif ()
endmacro()
# livebound_k7_tc(<form> <dt> <d> <lse> [PADDED] [VALUES_IN_KEYS | VALUES_IN_LIST_KEYS]): one K7 tensor-core
# variant, of head dim d exactly (d: "<Lq>" or "<Lq>_<Lv>") or (PADDED) of any multiple of 8
# up to d (dt bf16_e4m3 / fp16_e4m3: an fp8 cache); VALUES_IN_KEYS: for calls whose values
# are views of their keys' first Lv dims (generator values_in_keys; name ..._vk);
# VALUES_IN_LIST_KEYS: for calls whose v_buffer is such a view of k_buffer, whatever v_extend
# is (values_in_keys_list_only; name ..._vkl).
function(livebound_k7_tc form dt d lse)
    _lb_attention_facts(${form} ${dt})
    _lb_tc_dims(${d})
    _lb_tc_tiles(${dqk} ${dv} bn os spill share)
    _lb_tc_options(${share} ${ARGN})
    if (form STREQUAL "full")
        # The full-width twins (tests, and the benchmarks' unbounded reference): 100 bytes
        # (fp8); 112 for bf16 d128 with the LSE since the custom mask replaces the causal
        # rule in K7 (issue 50; 32-48 before), where the bounded form has 0.
        set(spill 128)
    endif ()
    _lb_tc_expected_mma(${dqk} ${dv} ${bn} ${os} ${share} 2 mma)
    _lb_lse_facts(${lse})
    _lb_tc_padding("${tc_options}" ${d})
    set(name lb_k7_cuda_tc_${form}_${dt}_${dims}${vk_tag}_${lse_tag})
    livebound_add_kernel(${name} GENERATOR extend_attention TARGET cuda TENSOR_CORE MAX_SPILL_BYTES ${spill} EXPECT_MMA ${mma}
                         PARAMS tensor_core=true dtype=${halide_type} fp8_kv_cache=${fp8} head_dim_qk=${dqk} head_dim_v=${dv}
                                bounded=${bounded} with_lse=${with_lse} block_m=16 block_n=${bn} tc_o_split=${os}
                                tc_share_s=${share} tc_share_v_first=${share} tc_share_wide=${share} tc_q_stage=${share}
                                ${share_params}
                                tc_padded_head_dim=${padded_param})
    set(_lb_k7_tc_table
        "${_lb_k7_tc_table}LB_K7_TC(${form}, ${dt16}, ${cache}, ${dqk}, ${dv}, ${padded_param}, ${with_lse}, ${vk_param}, ${name})\n"
        PARENT_SCOPE)
    set(_lb_k7_headers "${_lb_k7_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
endfunction()
function(livebound_k8_tc form dt d)
    _lb_attention_facts(${form} ${dt})
    _lb_tc_dims(${d})
    _lb_tc_tiles(${dqk} ${dv} bn os spill share)
    _lb_tc_options(${share} ${ARGN})
    _lb_tc_expected_mma(${dqk} ${dv} ${bn} ${os} ${share} 1 mma)
    if (fp8 AND dqk EQUAL 128)
        # One m16n8k16 step of a key-tile body is computed twice in the PTX of the fp8 K8
        # kernels at d 128 (132 instead of 128 mma in one straight-line body: a duplicated S
        # element LLVM does not merge; 3 % more mma there; not at 576/512). Counted here so
        # any other change fails.
        math(EXPR mma "${mma} + 4")
    endif ()
    _lb_tc_padding("${tc_options}" ${d})
    set(name lb_k8_cuda_tc_${form}_${dt}_${dims}${vk_tag})
    livebound_add_kernel(${name} GENERATOR extend_attention TARGET cuda TENSOR_CORE MAX_SPILL_BYTES ${spill} EXPECT_MMA ${mma}
                         PARAMS tensor_core=true unified=true with_lse=false dtype=${halide_type} fp8_kv_cache=${fp8}
                                head_dim_qk=${dqk} head_dim_v=${dv} bounded=${bounded} block_m=16 block_n=${bn}
                                tc_o_split=${os} tc_share_s=${share} tc_share_v_first=false tc_share_wide=${share} tc_q_stage=${share}
                                ${share_params}
                                tc_padded_head_dim=${padded_param})
    set(_lb_k8_tc_table "${_lb_k8_tc_table}LB_K8_TC(${form}, ${dt16}, ${cache}, ${dqk}, ${dv}, ${padded_param}, ${vk_param}, ${name})\n"
        PARENT_SCOPE)
    set(_lb_k7_headers "${_lb_k7_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
endfunction()
if ("cuda" IN_LIST LIVEBOUND_TARGETS)
    # The SIMT set below, on tensor cores where it has a tensor-core form.
    foreach (lse IN ITEMS 1 0)
        livebound_k7_tc(bounded bf16 128 ${lse})
        livebound_k7_tc(full bf16 128 ${lse})
        livebound_k7_tc(bounded fp16 128 ${lse})
        livebound_k7_tc(bounded bf16 64 ${lse})
        livebound_k7_tc(bounded fp16 64 ${lse})
    endforeach ()
    # Head dims other than 64 / 128 / 256 (bf16 bounded): 96 exactly, and padded variants of
    # 96 for 72-88 (SGLang's 80) -- a padded variant serves any multiple of 8 up to its head
    # dim at 6-8 % more SASS per HMMA in the key loop than an exact one. Other dims run the
    # SIMT buckets.
    foreach (lse IN ITEMS 1 0)
        livebound_k7_tc(bounded bf16 96 ${lse})
        livebound_k7_tc(bounded bf16 96 ${lse} PADDED)
    endforeach ()
    # Head dim 256 (bf16, as the SIMT set): O split over two warps per q tile.
    livebound_k7_tc(bounded bf16 256 1)
    livebound_k7_tc(bounded bf16 256 0)
    livebound_k7_tc(full bf16 256 0)
    # Lq != Lv, bounded: 192/128 (bf16) and MLA's 576/512 (bf16 and fp16, each with a
    # 16-bit and an fp8 cache), the only CUDA variants for 576/512 (a SIMT thread would hold
    # 514 state registers), so every dtype SGLang passes has one.
    # Each 576/512 variant also in MLA's absorbed layout (VALUES_IN_KEYS: V fragments taken
    # from K's, no V loads), which the runtime picks when v_buffer (and K7's v_extend) are
    # views of their keys' first 512 dims; K7's also with V from K in the list stage only
    # (VALUES_IN_LIST_KEYS), for calls whose v_extend is a copy (SGLang's K7 call).
    foreach (lse IN ITEMS 1 0)
        livebound_k7_tc(bounded bf16 192_128 ${lse})
        foreach (dt IN ITEMS bf16 fp16 bf16_e4m3 fp16_e4m3)
            livebound_k7_tc(bounded ${dt} 576_512 ${lse})
            if (LIVEBOUND_MLA_VALUES_IN_KEYS)
                livebound_k7_tc(bounded ${dt} 576_512 ${lse} VALUES_IN_KEYS)
            endif ()
            if (LIVEBOUND_MLA_VALUES_IN_LIST_KEYS)
                livebound_k7_tc(bounded ${dt} 576_512 ${lse} VALUES_IN_LIST_KEYS)
            endif ()
        endforeach ()
    endforeach ()
    livebound_k8_tc(bounded bf16 192_128)
    foreach (dt IN ITEMS bf16 fp16 bf16_e4m3 fp16_e4m3)
        livebound_k8_tc(bounded ${dt} 576_512)
        if (LIVEBOUND_MLA_VALUES_IN_KEYS)
            livebound_k8_tc(bounded ${dt} 576_512 VALUES_IN_KEYS)
        endif ()
    endforeach ()
    livebound_k8_tc(bounded bf16 128)
    livebound_k8_tc(full bf16 128)
    livebound_k8_tc(bounded fp16 128)
    livebound_k8_tc(bounded bf16 64)
    livebound_k8_tc(bounded bf16 96)
    livebound_k8_tc(bounded bf16 96 PADDED)
    # FP8 e4m3 caches (bf16 128): 8-byte fragment loads of byte pairs decoded to bf16 pairs
    # (e4m3_pair_to_16bit_pair; ptxas 255 registers, 0 spill bytes for the bounded K7 with
    # LSE), the bounded K7 with and without LSE and its full-width twin with, K8 bounded and
    # full-width.
    livebound_k7_tc(bounded bf16_e4m3 128 1)
    livebound_k7_tc(bounded bf16_e4m3 128 0)
    livebound_k7_tc(full bf16_e4m3 128 1)
    livebound_k8_tc(bounded bf16_e4m3 128)
    livebound_k8_tc(full bf16_e4m3 128)
endif ()

foreach (target IN LISTS LIVEBOUND_TARGETS)
    if (target STREQUAL "cuda")
        foreach (lse IN ITEMS 1 0)
            # (A 16-bit cache, then the same forms with an fp8 cache.)
            foreach (cache_tag IN ITEMS "" "_e4m3")
                # (32_32_1: the scalar bucket, any dims up to 32, SGLang's test dim 13 among
                # them; a few seconds to build.)
                foreach (dims IN ITEMS 32_32_1 64_64_8 128_128_8 256_256_8)
                    string(REPLACE "_" ";" dl "${dims}")
                    list(GET dl 0 dqk)
                    list(GET dl 1 dv)
                    list(GET dl 2 vec)
                    livebound_k7_simt(cuda bounded bf16${cache_tag} ${dqk} ${dv} ${vec} ${lse})
                    livebound_k7_simt(cuda bounded fp16${cache_tag} ${dqk} ${dv} ${vec} ${lse})
                endforeach ()
                # (fp8: the full-width twin with the LSE only, the tensor-core twin's form:
                # the twin tests compare it bit for bit with the bounded tensor-core kernel.)
                if (cache_tag STREQUAL "" OR lse)
                    livebound_k7_simt(cuda full bf16${cache_tag} 128 128 8 ${lse})
                endif ()
            endforeach ()
        endforeach ()
        livebound_k7_simt(cuda full bf16 256 256 8 0)
        continue ()
    endif ()
    foreach (dt IN ITEMS bf16 fp16 bf16_e4m3 fp16_e4m3)
        foreach (bucket IN LISTS LIVEBOUND_K7_CPU_BUCKETS)
            _lb_bucket_facts(${bucket})
            foreach (form IN ITEMS bounded full)
                livebound_k7_simt(cpu ${form} ${dt} ${dqk} ${dv} ${vec} 1)
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()

# K8 extend_attention_fwd_unified: the same generator with unified=true (one stage over the
# unified kv_indices list, no LSE). CPU: bf16/fp16, 16-bit or fp8 caches x every head-dim
# bucket of K7's, bounded and full-width. CUDA: bounded bf16 64/64, 128/128 and fp16
# 128/128, full-width bf16 128/128 (head-dim buckets as K7's CUDA ones), each with a 16-bit
# and an fp8 cache.
set(_lb_k8_table "")
function(livebound_k8 target form dt dqk dv vec)
    _lb_attention_facts(${form} ${dt})
    _lb_bucket_name(${dqk} ${dv} ${vec} dims)
    set(name lb_k8_${target}_${form}_${dt}_${dims})
    livebound_add_kernel(${name} GENERATOR extend_attention TARGET ${target} LARGE_BUFFERS
                         PARAMS unified=true with_lse=false dtype=${halide_type} fp8_kv_cache=${fp8}
                                head_dim_qk=${dqk} head_dim_v=${dv} cpu_vector=${vec} bounded=${bounded})
    set(_lb_k8_table "${_lb_k8_table}LB_K8_ATTN(${target}, ${form}, ${dt16}, ${cache}, ${dqk}, ${dv}, ${vec}, ${name})\n"
        PARENT_SCOPE)
    set(_lb_k7_headers "${_lb_k7_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
endfunction()
foreach (target IN LISTS LIVEBOUND_TARGETS)
    if (target STREQUAL "cpu")
        foreach (form IN ITEMS bounded full)
            foreach (dt IN ITEMS bf16 fp16 bf16_e4m3 fp16_e4m3)
                foreach (bucket IN LISTS LIVEBOUND_K7_CPU_BUCKETS)
                    _lb_bucket_facts(${bucket})
                    livebound_k8(cpu ${form} ${dt} ${dqk} ${dv} ${vec})
                endforeach ()
            endforeach ()
        endforeach ()
    else ()
        foreach (cache_tag IN ITEMS "" "_e4m3")
            livebound_k8(cuda bounded bf16${cache_tag} 32 32 1)
            livebound_k8(cuda bounded fp16${cache_tag} 32 32 1)
            livebound_k8(cuda bounded bf16${cache_tag} 128 128 8)
            livebound_k8(cuda bounded bf16${cache_tag} 64 64 8)
            livebound_k8(cuda bounded fp16${cache_tag} 128 128 8)
            livebound_k8(cuda bounded bf16${cache_tag} 256 256 8)
            livebound_k8(cuda bounded fp16${cache_tag} 256 256 8)
            livebound_k8(cuda full bf16${cache_tag} 128 128 8)
        endforeach ()
    endif ()
endforeach ()

livebound_write_variant_file("${_lb_gen_dir}/k7_variants.inc" "${_lb_k7_table}")
livebound_write_variant_file("${_lb_gen_dir}/k8_variants.inc" "${_lb_k8_table}")
livebound_write_variant_file("${_lb_gen_dir}/k7_tc_variants.inc" "${_lb_k7_tc_table}")
livebound_write_variant_file("${_lb_gen_dir}/k8_tc_variants.inc" "${_lb_k8_tc_table}")
livebound_write_variant_file("${_lb_gen_dir}/k7_headers.inc" "${_lb_k7_headers}")
