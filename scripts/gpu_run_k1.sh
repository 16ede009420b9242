#!/usr/bin/env bash
# On the GPU machine (device tool), from the repository root, with gpu-bundle/ carried:
#   scripts/gpu_run_k1.sh <commit> <out-dir>
# Runs the CUDA tests (gtest XML + log), the demo (text and JSON), the K1 benchmark
# and, if present, the autotune sweep binaries; everything lands in <out-dir>.
set -uo pipefail
commit="$1"
out="$2"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt"
for t in gpu-bundle/tests/test_decode_metadata_*; do
    name="$(basename "$t")"
    "$t" --gtest_output="xml:$out/$name.xml" >"$out/$name.log" 2>&1
    echo "$name rc=$?" >>"$out/tests.txt"
done
gpu-bundle/livebound demo >"$out/demo.txt" 2>&1
gpu-bundle/livebound demo --json >"$out/demo.json" 2>&1
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
context=(--benchmark_context=date="$(date -u +%Y-%m-%d)" --benchmark_context=gpu="$gpu"
         --benchmark_context=driver="$driver" --benchmark_context=commit="$commit")
gpu-bundle/bench_decode_metadata --benchmark_format=json "${context[@]}" \
    --benchmark_context=command="gpu-bundle/bench_decode_metadata --benchmark_format=json" >"$out/bench_k1.json" 2>"$out/bench_k1.err"
for b in gpu-bundle/tune/*/bench_decode_metadata; do
    [[ -f "$b" ]] || continue
    tag="$(basename "$(dirname "$b")")"
    "$b" --benchmark_format=json --benchmark_filter='bounded|skip' "${context[@]}" \
        --benchmark_context=command="$b --benchmark_filter='bounded|skip'" >"$out/tune_$tag.json" 2>/dev/null
done
echo done >"$out/done.txt"
