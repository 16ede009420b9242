#!/usr/bin/env bash
# Runs python/tests/test_torch_cuda.py (K1, K7 and K8 through the Python layer on torch CUDA
# tensors, eager and under CUDA-graph capture/replay, against torch references) on the GPU
# machine: python3 with torch, no Halide or build tools needed, only liblivebound.so (built
# with CUDA) copied over. With LIVEBOUND_FFI_LIB set (liblivebound_ffi.so, and tvm_ffi on
# PYTHONPATH) also test_ffi_torch_cuda.py (the compiled binding) and test_torch_ops_cuda.py
# (the torch.library ops: eager, torch.compile, CUDA graphs, opcheck). K2-K6 run in each of
# them too (test_kernels.py's problems on the device), and test_multi_gpu_cuda.py (tensors on
# cuda:1 with cuda:0 current, a stream of another device refused; skipped with one GPU).
#
# Two passes when torch sees 2 or more GPUs: every module on cuda:0, then the per-device
# modules again on cuda:1 (LIVEBOUND_TEST_DEVICE=1; torch's current device stays cuda:0).
# The exit status is non-zero when either pass failed.
#
#   LIVEBOUND_LIB=/path/to/liblivebound.so python/run_gpu_check.sh
#   python/run_gpu_check.sh /path/to/liblivebound.so
#
# A missing torch or CUDA device is a failure here (LIVEBOUND_REQUIRE_CUDA=1); set
# LIVEBOUND_REQUIRE_CUDA=0 to let the test skip instead. PYTHON selects the interpreter.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -ge 1 ]]; then
    export LIVEBOUND_LIB="$1"
fi
if [[ -z "${LIVEBOUND_LIB:-}" || ! -f "${LIVEBOUND_LIB}" ]]; then
    echo "run_gpu_check.sh: set LIVEBOUND_LIB (or pass the path) to liblivebound.so; got '${LIVEBOUND_LIB:-}'" >&2
    exit 2
fi
export LIVEBOUND_LIB="$(cd "$(dirname "$LIVEBOUND_LIB")" && pwd)/$(basename "$LIVEBOUND_LIB")"
export LIVEBOUND_REQUIRE_CUDA="${LIVEBOUND_REQUIRE_CUDA:-1}"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
py="${PYTHON:-python3}"
"$py" -c 'import torch, livebound; print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count(), "| livebound", livebound.version(), "from", livebound.load_library()._livebound_path)' || true
modules=(test_torch_cuda)
if [[ -n "${LIVEBOUND_FFI_LIB:-}" ]]; then
    modules+=(test_ffi_torch_cuda test_torch_ops_cuda)
fi
cd "$here/tests"
devices="$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)"
status=0
echo "== pass 1: cuda:0 (LIVEBOUND_TEST_DEVICE=0)"
LIVEBOUND_TEST_DEVICE=0 "$py" -m unittest -v "${modules[@]}" test_multi_gpu_cuda || status=1
if [[ "$devices" -ge 2 ]]; then
    echo "== pass 2: cuda:1 (LIVEBOUND_TEST_DEVICE=1; $devices devices)"
    LIVEBOUND_TEST_DEVICE=1 "$py" -m unittest -v "${modules[@]}" || status=1
else
    echo "== no pass on cuda:1: torch sees $devices CUDA device(s)"
fi
exit "$status"
