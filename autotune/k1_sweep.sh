#!/usr/bin/env bash
# K1 CUDA schedule sweep, in three steps (the GPU machine has no Halide):
#   autotune/k1_sweep.sh build            here: one build directory per knob set (bench only)
#   scripts/gpu_bundle.sh; then on the GPU: scripts/gpu_run.sh <commit> <out>
#                                          runs every knob set's bench into <out>/tune_<tag>.json
#   autotune/k1_sweep.sh records <out>    here: append one record per (knob set, benchmark)
# Knob sets are the lines of autotune/k1_knobs.txt. Records are appended (never
# rewritten) to autotune/records/k1.jsonl by autotune/records.py.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
phase="${1:?usage: k1_sweep.sh build | records <results-dir>}"
mapfile -t knob_sets < <(grep -v '^#' autotune/k1_knobs.txt | sed '/^$/d')
tag() { echo "$1" | tr ' =' '_-'; }
case "$phase" in
build)
    halide_cmake="$(.venv/bin/python -c 'import halide, os; print(os.path.join(os.path.dirname(halide.__file__), "lib64", "cmake"))')"
    for knobs in "${knob_sets[@]}"; do
        dir="build-tune/$(tag "$knobs")"
        [[ -f "$dir/build.ninja" ]] || .venv/bin/cmake -S . -B "$dir" -G Ninja -Wno-dev -DLIVEBOUND_TESTS=OFF -DLIVEBOUND_FAMILIES=decode_metadata \
            -DHalide_DIR="$halide_cmake/Halide" -DHalideHelpers_DIR="$halide_cmake/HalideHelpers" \
            -DLIVEBOUND_K1_CUDA_KNOBS="$knobs" >/dev/null
        ninja -C "$dir" bench_decode_metadata >/dev/null
        echo "$dir/bench/bench_decode_metadata"
    done
    ;;
records)
    results="${2:?results directory of scripts/gpu_run.sh}"
    for knobs in "${knob_sets[@]}"; do
        f="$results/tune_$(tag "$knobs").json"
        [[ -s "$f" ]] && python3 autotune/records.py --knobs "$knobs" --kernel K1 "$f" >>autotune/records/k1.jsonl
    done
    ;;
esac
