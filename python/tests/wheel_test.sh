#!/usr/bin/env bash
# The pip route (issue 12), as a test: build livebound's wheel through pyproject.toml
# (scikit-build-core), install it into a scratch directory, and run the K1, K7/K8 and
# compiled-binding tests against the installed package alone: no build tree, no
# LIVEBOUND_LIB / LIVEBOUND_FFI_LIB, the libraries loaded from inside the package.
#
#   wheel_test.sh PYTHON SOURCE_DIR BUILD_DIR WORK_DIR
#
# The wheel is built in BUILD_DIR, the project's own build tree (scikit-build-core's
# build-dir): its kernels are already compiled, so the test costs a configure, an install
# and the zip, not a second 40-minute build. A pip user's `pip install .` does the whole
# build in a fresh tree instead (docs/development.md, "pip").
set -euo pipefail
python="$1" source_dir="$2" build_dir="$3" work="$4"
rm -rf "$work" && mkdir -p "$work/dist" "$work/site"

# The same generator as the tree (scripts/setup.sh configures it with Ninja).
generator="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build_dir/CMakeCache.txt")"
CMAKE_GENERATOR="$generator" "$python" -m pip wheel --no-build-isolation --no-deps --no-cache-dir \
    --disable-pip-version-check -q -C build-dir="$build_dir" -w "$work/dist" "$source_dir"
wheel="$(ls "$work"/dist/livebound-*.whl)"
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$python" -m zipfile -l "$wheel" | awk 'NR > 1 {print "  " $1}' | grep -E "\.so$|__init__\.py$|ffi\.py$"

"$python" -m pip install --no-deps --no-index --disable-pip-version-check -q --target "$work/site" "$wheel"
cd "$source_dir/python/tests"
env -u LIVEBOUND_LIB -u LIVEBOUND_FFI_LIB PYTHONPATH="$work/site" LIVEBOUND_TEST_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1 \
    "$python" - <<'PY'
import os, sys
import livebound, livebound._lib as lib, livebound.ffi as ffi
package = os.path.dirname(os.path.abspath(livebound.__file__))
for what, path in (("livebound", livebound.__file__), ("liblivebound.so", lib.library_path()),
                   ("liblivebound_ffi.so", ffi.library_path())):
    print("%-20s %s" % (what, path))
    if not os.path.abspath(path).startswith(package + os.sep) and what != "livebound":
        sys.exit("%s is not loaded from the installed package %s" % (what, package))
PY
env -u LIVEBOUND_LIB -u LIVEBOUND_FFI_LIB PYTHONPATH="$work/site" LIVEBOUND_TEST_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1 \
    "$python" -m unittest test_k1 test_attention test_ffi 2>&1 | tail -4
