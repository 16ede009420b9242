#!/usr/bin/env bash
# Collects the binaries a GPU machine needs (it has no Halide and no build tools) into
# the git-ignored gpu-bundle/, which the device tool carries:
#   gpu-bundle/livebound, gpu-bundle/bench/bench_<family>, gpu-bundle/tests/test_*,
#   gpu-bundle/tune/<knobs>/{bench_decode_metadata,test_decode_metadata_cuda}, gpu-bundle/lib
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf gpu-bundle && mkdir -p gpu-bundle/tests gpu-bundle/bench gpu-bundle/tune gpu-bundle/lib
cp build/tools/livebound gpu-bundle/
find build/bench -maxdepth 1 -type f -name 'bench_*' -perm -u+x -exec cp {} gpu-bundle/bench/ \;
find build/tests -maxdepth 2 -type f -name 'test_*' -perm -u+x -exec cp {} gpu-bundle/tests/ \;
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
