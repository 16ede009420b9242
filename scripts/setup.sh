#!/usr/bin/env bash
# Installs what is missing and builds livebound. Idempotent and quiet when done:
#   - Debian packages: compiler, ccache, Ninja, GoogleTest, Google Benchmark, LLVM's FileCheck, libpng
#     (for `livebound picture`'s PNG files, through Halide's image I/O)
#   - ./.venv with the pinned wheels of requirements.txt (Halide 21, CMake)
#   - configure (once) and build into ./build
# Used by ./run; not meant to be called by hand (but it may be).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { echo "[setup] $*" >&2; }

# ---- packages: Debian packages ----
packages=(g++ ccache ninja-build googletest libgtest-dev libbenchmark-dev llvm-14-tools libpng-dev python3 python3-venv)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3-venv is only needed when the interpreter on PATH lacks a working venv module.
if [[ " ${missing[*]} " == *" python3-venv "* ]] && python3 -c "import venv, ensurepip" 2>/dev/null; then
    missing=("${missing[@]/python3-venv}")
fi
if [[ " ${missing[*]} " == *" python3 "* ]] && command -v python3 >/dev/null; then
    missing=("${missing[@]/python3}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
    log "packages: installing ${missing[*]}"
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# ---- project-local virtual environment with the pinned wheels ----
stamp=".venv/.requirements.sha256"
want="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    log "venv: creating .venv with $(grep -v '^#' requirements.txt | tr '\n' ' ')(a few minutes: Halide's wheel)"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    echo "$want" >"$stamp"
fi

# ---- configure and build ----
halide_cmake="$(.venv/bin/python -c 'import halide, os; print(os.path.join(os.path.dirname(halide.__file__), "lib64", "cmake"))')"
if [[ ! -f build/build.ninja ]]; then
    log "configure: build/ (CMake, Ninja)"
    .venv/bin/cmake -S . -B build -G Ninja -Wno-dev \
        -DHalide_DIR="$halide_cmake/Halide" -DHalideHelpers_DIR="$halide_cmake/HalideHelpers" >/dev/null
fi
jobs="${LIVEBOUND_JOBS:-$(nproc)}"
# The build's [n/N] progress on one line (a line every 30 s when not on a terminal); its whole
# output only when it fails (tools/progress.py). A fresh build generates 400+ kernel variants:
# 20-30 minutes on 2 cores.
.venv/bin/python tools/progress.py build -- .venv/bin/cmake --build build -j "$jobs"
# The kernel cache's line (hits, misses, size; cmake/LiveboundCache.cmake), which progress.py
# keeps quiet with the rest of the build's output; nothing when no generator step ran.
if [[ -f build/kernel_cache/summary.txt ]] && ! grep -q "no generator step ran" build/kernel_cache/summary.txt; then
    while IFS= read -r line; do log "$line"; done <build/kernel_cache/summary.txt
fi
