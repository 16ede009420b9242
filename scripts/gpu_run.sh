#!/usr/bin/env bash
# On the GPU machine (device tool), from the repository root, with gpu-bundle/ carried:
#   scripts/gpu_run.sh <commit> <out-dir> [bench-filter]
# Runs every test binary (gtest XML + log), the demo (text and JSON), every family's
# benchmark and, if present, the autotune sweep binaries; everything lands in
# <out-dir>/gpu_run.tgz (the device tool returns few files). With 2 or more GPUs every
# test binary runs a second time on cuda:1 (LIVEBOUND_TEST_DEVICE=1: <name>.device1.xml/.log),
# and python/run_gpu_check.sh adds its cuda:1 pass.
set -uo pipefail
commit="$1"
final="$2"
filter="${3:-.}"
out="$(mktemp -d)/gpu_run"
mkdir -p "$out" "$final"
export LD_LIBRARY_PATH="$PWD/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt"
for t in gpu-bundle/tests/test_*; do
    name="$(basename "$t")"
    "$t" --gtest_output="xml:$out/$name.xml" >"$out/$name.log" 2>&1
    echo "$name rc=$?" >>"$out/tests.txt"
done
gpus="$(nvidia-smi --list-gpus | wc -l)"
if [[ "$gpus" -ge 2 ]]; then
    # The same suites on the second GPU (tests/cuda_test_util.h: test_device()).
    for t in gpu-bundle/tests/test_*; do
        name="$(basename "$t")"
        LIVEBOUND_TEST_DEVICE=1 "$t" --gtest_output="xml:$out/$name.device1.xml" >"$out/$name.device1.log" 2>&1
        echo "$name (cuda:1) rc=$?" >>"$out/tests.txt"
    done
fi
gpu-bundle/livebound demo >"$out/demo.txt" 2>&1
gpu-bundle/livebound demo --json >"$out/demo.json" 2>&1
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
context=(--benchmark_context=date="$(date -u +%Y-%m-%d)" --benchmark_context=gpu="$gpu"
         --benchmark_context=driver="$driver" --benchmark_context=commit="$commit")
# (Google Benchmark drops context values that contain '=': the command is named plainly.)
for b in gpu-bundle/bench/bench_*; do
    name="$(basename "$b")"
    "$b" --benchmark_format=json --benchmark_filter="$filter" "${context[@]}" \
        --benchmark_context=command="scripts/gpu_run.sh $commit" >"$out/$name.json" 2>"$out/$name.err"
done
for b in gpu-bundle/tune/*/bench_decode_metadata; do
    [[ -f "$b" ]] || continue
    tag="$(basename "$(dirname "$b")")"
    # A knob set that changes the kernels' structure brings its CUDA tests along.
    if [[ -x "gpu-bundle/tune/$tag/test_decode_metadata_cuda" ]]; then
        "gpu-bundle/tune/$tag/test_decode_metadata_cuda" --gtest_output="xml:$out/tune_$tag.cuda.xml" >"$out/tune_$tag.cuda.log" 2>&1
        echo "tune $tag test_decode_metadata_cuda rc=$?" >>"$out/tests.txt"
    fi
    "$b" --benchmark_format=json --benchmark_filter='bounded|skip' "${context[@]}" \
        --benchmark_context=command="scripts/gpu_run.sh $commit (tune $tag)" >"$out/tune_$tag.json" 2>/dev/null
done
# python/ on torch tensors (torch ships on the GPU machine).
LIVEBOUND_LIB="$PWD/gpu-bundle/lib/liblivebound.so" python/run_gpu_check.sh >"$out/python_torch.log" 2>&1
echo "python/run_gpu_check.sh rc=$?" >>"$out/tests.txt"
echo done >"$out/done.txt"
tar -C "$(dirname "$out")" -czf "$final/gpu_run.tgz" gpu_run
cat "$out/tests.txt" "$out/demo.txt"
