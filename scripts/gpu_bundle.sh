#!/usr/bin/env bash
# Collects the binaries a GPU machine needs (it has no Halide and no build tools) into
# the git-ignored gpu-bundle/, which the device tool carries:
#   gpu-bundle/livebound, gpu-bundle/bench/bench_<family>, gpu-bundle/tests/test_*_cuda,
#   gpu-bundle/lib/liblivebound.so (for python/),
#   gpu-bundle/tune/<knobs>/{bench_decode_metadata,test_decode_metadata_cuda}, gpu-bundle/lib
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf gpu-bundle && mkdir -p gpu-bundle/tests gpu-bundle/bench gpu-bundle/tune gpu-bundle/lib
cp build/tools/livebound gpu-bundle/
find build/bench -maxdepth 1 -type f -name 'bench_*' -perm -u+x -exec cp {} gpu-bundle/bench/ \;
# The CUDA suites (the CPU and error suites run in CI on every commit).
find build/tests -maxdepth 2 -type f -name 'test_*_cuda' -perm -u+x -exec cp {} gpu-bundle/tests/ \;
# python/ travels with the working tree; its library does not.
cp build/runtime/liblivebound.so gpu-bundle/lib/
# Debian ships Google Benchmark as a shared library only; the GPU machine lacks it.
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian gpu-bundle/lib/
for b in build-tune/*/bench/bench_decode_metadata; do
    [[ -f "$b" ]] || continue
    tag="$(basename "$(dirname "$(dirname "$b")")")"
    mkdir -p "gpu-bundle/tune/$tag" && cp "$b" "gpu-bundle/tune/$tag/"
    t="build-tune/$tag/tests/test_decode_metadata_cuda"
    [[ -f "$t" ]] && cp "$t" "gpu-bundle/tune/$tag/"
done
# Symbols are not needed there and the device tool carries at most 64 MiB.
find gpu-bundle -type f -perm -u+x -exec strip --strip-unneeded {} \;
du -sh gpu-bundle
