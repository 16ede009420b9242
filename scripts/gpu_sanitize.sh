#!/usr/bin/env bash
# On the GPU machine (device tool), from the repository root, with gpu-bundle/ carried
# (scripts/gpu_bundle.sh):
#   scripts/gpu_sanitize.sh <out-dir> [tool...]     tools: memcheck racecheck synccheck (default all)
#   SANITIZE_TIMEOUT=<s> (default 1200): the limit per (tool, suite) run
#   SANITIZE_ATTENTION_FILTER=<gtest filter>: the attention suites' tests (default below)
#   SANITIZE_SUITES=<glob> (default test_*_cuda): which suites
# Runs the CUDA suites under NVIDIA's compute-sanitizer, one log per (tool, suite), and
# writes <out-dir>/<SANITIZE_TAG or sanitize>.tgz with summary.txt: per run the exit status, the sanitizer's
# error count line and the gtest result line.
#
# Which tests: memcheck runs every metadata / gather suite whole; the attention suites
# (minutes of kernels each, 10-100x slower under memcheck) run the tests that reach every
# tensor-core and SIMT form the suites' graph, edge and MLA tests use, and the broken-input
# paths: errors, edges, graphs, the garbage-index tests and MLA. racecheck and synccheck (shared memory and barriers: the
# scans of K1-K4 use them, the attention kernels do not) run the metadata suites whole and
# the same attention subset.
#
# Expected API errors: the wrong-memory tests hand host pointers to CUDA calls on purpose;
# the runtime's cuPointerGetAttribute then returns an error, which compute-sanitizer
# reports as a CUDA API error (--report-api-errors explicit). summary.txt counts them apart
# from memory errors: "api errors" lines that name cuPointerGetAttribute only.
set -uo pipefail
final="$1"
shift
tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(memcheck racecheck synccheck)
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
out="$(mktemp -d)/sanitize"
tag="${SANITIZE_TAG:-sanitize}"
mkdir -p "$out" "$final"
export LD_LIBRARY_PATH="$PWD/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt"
"$sanitizer" --version | tail -1 >>"$out/gpu.txt"

attention_filter="${SANITIZE_ATTENTION_FILTER:-*Errors*:*Edges*:*Graph*:*Garbage*:*Mla*:*mla*}"
filter_for() {
    case "$1" in
    test_extend_attention_cuda | test_extend_attention_unified_cuda) echo "$attention_filter" ;;
    *) echo '*' ;;
    esac
}

for tool in "${tools[@]}"; do
    for t in gpu-bundle/tests/${SANITIZE_SUITES:-test_*_cuda}; do
        name="$(basename "$t")"
        log="$out/$tool.$name.log"
        timeout "${SANITIZE_TIMEOUT:-1200}" "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 \
            "$t" --gtest_filter="$(filter_for "$name")" >"$log" 2>&1
        rc=$?
        errors="$(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tail -1)"
        api="$(grep -c 'Program hit .* on CUDA API call to' "$log")"
        api_other="$(grep 'Program hit .* on CUDA API call to' "$log" | grep -vc cuPointerGetAttribute)"
        tests="$(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | tr '\n' ' ')"
        echo "$tool $name rc=$rc | ${errors:-no summary} | api errors: $api ($api_other not cuPointerGetAttribute) | $tests" >>"$out/summary.txt"
    done
done
tar -C "$(dirname "$out")" -czf "$final/$tag.tgz" sanitize
cat "$out/gpu.txt" "$out/summary.txt"
