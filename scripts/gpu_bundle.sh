#!/usr/bin/env bash
# Collects the binaries a GPU machine needs (it has no Halide and no build tools) into
# the git-ignored gpu-bundle/, which the device tool carries:
#   gpu-bundle/{livebound, bench_decode_metadata, tests/*, tune/<knobs>/bench_decode_metadata}
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf gpu-bundle && mkdir -p gpu-bundle/tests gpu-bundle/tune
cp build/tools/livebound build/bench/bench_decode_metadata gpu-bundle/
# Debian ships Google Benchmark as a shared library only; the GPU machine lacks it.
mkdir -p gpu-bundle/lib && cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian gpu-bundle/lib/
cp build/tests/test_decode_metadata_* gpu-bundle/tests/ 2>/dev/null || true
rm -f gpu-bundle/tests/*.cmake
for b in build-tune/*/bench/bench_decode_metadata; do
    [[ -f "$b" ]] || continue
    tag="$(basename "$(dirname "$(dirname "$b")")")"
    mkdir -p "gpu-bundle/tune/$tag" && cp "$b" "gpu-bundle/tune/$tag/"
    t="build-tune/$tag/tests/test_decode_metadata_cuda"
    [[ -f "$t" ]] && cp "$t" "gpu-bundle/tune/$tag/"
done
du -sh gpu-bundle
