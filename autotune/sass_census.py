#!/usr/bin/env python3
"""SASS census of a tensor-core variant's key loops (compile-only schedule experiments).

Usage:
  ptxas -arch=sm_90 -o v.cubin build/<variant>.inlined.ptx      # the PTX ptx_link wrote
  nvdisasm -c v.cubin > v.sass          # nvdisasm: PyPI nvidia-cuda-nvdisasm (bin/nvdisasm)
  autotune/sass_census.py v.sass

Prints one line per loop (a backward branch to a label) that holds HMMA instructions: its
address range, instructions, HMMA, instructions per HMMA, global loads (LDG) and spill
traffic (LDL/STL). The key-tile loops of a K7 tensor-core kernel are the ones with
BN/8 x D/16 + D/8 x BN/16 (+1) HMMA; the specialised common case comes first.
Records in autotune/records/extend_attention.jsonl cite these numbers.
"""
import re
import sys


def parse(path):
    labels, seq = {}, []
    pending = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"^\s*(\.L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*)", line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        for label in pending:
            labels[label] = addr
        pending = []
        seq.append((addr, m.group(2)))
    return labels, seq


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    labels, seq = parse(sys.argv[1])
    for addr, text in seq:
        m = re.search(r"\bBRA\b.*`\((\.L_x_\d+)\)", text)
        if not m or labels.get(m.group(1), addr + 1) > addr:
            continue
        lo = labels[m.group(1)]
        body = [t for a, t in seq if lo <= a <= addr]
        hmma = sum("HMMA" in t for t in body)
        if hmma == 0:
            continue
        ldg = sum("LDG" in t for t in body)
        spill = sum(("LDL" in t or "STL" in t) for t in body)
        print(f"loop {lo:#x}-{addr:#x}: {len(body)} instructions, {hmma} HMMA, "
              f"{len(body) / hmma:.2f} per HMMA, {ldg} LDG, {spill} LDL/STL")


if __name__ == "__main__":
    main()
