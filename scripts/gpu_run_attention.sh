#!/usr/bin/env bash
# On the GPU machine (device tool), from the repository root, with gpu-bundle/ carried:
#   scripts/gpu_run_attention.sh <commit> <out-dir> [bench-filter]
# The attention subset of scripts/gpu_run.sh, for tensor-core work on a short device budget:
# the tensor-core smoke test, the K7/K8 CUDA suites (gtest XML + log), the Python torch check
# (with gpu-bundle/lib/liblivebound.so), compute-sanitizer
# memcheck and racecheck over one accuracy case per tensor-core variant (racecheck and
# synccheck over the MLA cases), and the attention
# benchmark (JSON with date, GPU, driver, commit and command in its context).
set -uo pipefail
commit="$1"
out="$2"
filter="${3:-.}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv >"$out/gpu.txt"
for t in test_mma_tile_cuda test_extend_attention_cuda test_extend_attention_unified_cuda; do
    gpu-bundle/tests/$t --gtest_output="xml:$out/$t.xml" >"$out/$t.log" 2>&1
    echo "$t rc=$?" >>"$out/tests.txt"
    if [[ "$(nvidia-smi --list-gpus | wc -l)" -ge 2 ]]; then  # again on the second GPU
        LIVEBOUND_TEST_DEVICE=1 gpu-bundle/tests/$t --gtest_output="xml:$out/$t.device1.xml" >"$out/$t.device1.log" 2>&1
        echo "$t (cuda:1) rc=$?" >>"$out/tests.txt"
    fi
done
# The Python layer on torch CUDA tensors (K7/K8 reach the tensor-core kernels through it),
# when the bundle has the shared library.
if [[ -f gpu-bundle/lib/liblivebound.so ]]; then
    python/run_gpu_check.sh "$PWD/gpu-bundle/lib/liblivebound.so" >"$out/python_torch_cuda.log" 2>&1
    echo "python/run_gpu_check.sh rc=$?" >>"$out/tests.txt"
fi
# Sanitizers: the tensor-core kernels on a few accuracy cases (every stage, masks, GQA,
# head dims 64, 80 (padded), 96, 128, 192/128 and 256, int32 indices, fp8 caches).
sanitize_filter='Cases/CudaExtendAccuracy.*/span_*:CudaExtendSpanMask.*:Cases/CudaExtendAccuracy.*/uneven_causal:Cases/CudaExtendAccuracy.*/window_small:Cases/CudaExtendAccuracy.*/mask_causal:Cases/CudaExtendAccuracy.*/bf16_d64_gqa4:Cases/CudaExtendAccuracy.*/fp16_d64_gqa8_cap_sinks:Cases/CudaExtendAccuracy.*/int32_contiguous_sinks:Cases/CudaExtendAccuracy.*/cuda_bf16_d256*:Cases/CudaExtendAccuracy.*/*head_dim*:Cases/CudaExtendAccuracy.*/cuda_fp8_bf16_d128*:Cases/CudaExtendTwin.*'
for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --print-limit 20 gpu-bundle/tests/test_extend_attention_cuda \
        --gtest_filter="$sanitize_filter" >"$out/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool rc=$?" >>"$out/tests.txt"
done
# MLA's 576/512 cases of both suites under racecheck and synccheck: their warps exchange S
# through shared memory between two block barriers per key tile (tc_share_s).
for t in test_extend_attention_cuda test_extend_attention_unified_cuda; do
    for tool in racecheck synccheck; do
        compute-sanitizer --tool "$tool" --print-limit 20 gpu-bundle/tests/$t --gtest_filter='*576*:*mla*' \
            >"$out/sanitizer_${tool}_mla_$t.log" 2>&1
        echo "compute-sanitizer $tool ($t, MLA) rc=$?" >>"$out/tests.txt"
    done
done
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
gpu-bundle/bench/bench_extend_attention --benchmark_format=json --benchmark_filter="$filter" \
    --benchmark_context=date="$(date -u +%Y-%m-%d)" --benchmark_context=gpu="$gpu" \
    --benchmark_context=driver="$driver" --benchmark_context=commit="$commit" \
    --benchmark_context=command="scripts/gpu_run_attention.sh $commit" >"$out/bench_extend_attention.json" \
    2>"$out/bench_extend_attention.err"
echo "bench rc=$?" >>"$out/tests.txt"
cat "$out/tests.txt"
grep -H "ERROR SUMMARY\|RACECHECK SUMMARY" "$out"/sanitizer_*.log
