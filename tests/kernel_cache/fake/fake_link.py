#!/usr/bin/env python3
"""A stand-in for tools/ptx_link.py (tests/kernel_cache): reads --object, writes --output
from it and the --helpers file, and <variant>.inlined.ptx (+ <variant>_1.inlined.ptx with
--modules 2) in --ptx-dir; runs `--ptxas` with --version if given (a fake ptxas)."""
import argparse
import os
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--object")
ap.add_argument("--output")
ap.add_argument("--variant")
ap.add_argument("--helpers")
ap.add_argument("--ptx-dir")
ap.add_argument("--ptxas", default="none")
ap.add_argument("--modules", type=int, default=1)
ap.add_argument("--max-registers", default="0")
a = ap.parse_args()
with open(a.object, "rb") as f:
    obj = f.read()
helpers = b""
if a.helpers:
    with open(a.helpers, "rb") as f:
        helpers = f.read()
ptxas = b"none"
if a.ptxas != "none":
    ptxas = subprocess.run([a.ptxas, "--version"], capture_output=True).stdout
with open(a.output, "wb") as f:
    f.write(b"// cubins of " + a.variant.encode() + b"\n" + obj[::-1][:200] + helpers + ptxas + a.max_registers.encode())
for k in range(a.modules):
    with open(os.path.join(a.ptx_dir, a.variant + (f"_{k}" if k else "") + ".inlined.ptx"), "wb") as f:
        f.write(b"ptx %d " % k + helpers)
print(f"fake_link {a.variant}: ok")
