#!/usr/bin/env python3
"""Turns one Google Benchmark JSON result into tuning records, one JSON line each:
kernel, benchmark (variant and shape), knobs, target, Halide version, GPU, driver,
commit, date and the median/min times per call in microseconds. Printed to stdout;
callers append them to autotune/records/<kernel>.jsonl (never rewrite it)."""
import argparse
import json
import subprocess


def gpu_facts():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
        name, driver = [x.strip() for x in out.split(",")]
        return name, driver
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown", "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knobs", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--target", default="x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86")
    ap.add_argument("--halide", default="21.0.0")
    ap.add_argument("result")
    args = ap.parse_args()
    with open(args.result) as f:
        result = json.load(f)
    gpu, driver = gpu_facts()
    gpu = result["context"].get("gpu", gpu)
    rows = {}
    for b in result["benchmarks"]:
        if b.get("run_type") != "aggregate":
            continue
        name = b["run_name"]
        row = rows.setdefault(name, {"kernel": args.kernel, "benchmark": name, "knobs": args.knobs,
                                     "target": args.target, "halide": args.halide, "gpu": gpu,
                                     "driver": result["context"].get("driver", driver),
                                     "commit": result["context"].get("commit", "unknown"),
                                     "date": result["context"]["date"]})
        agg = b["aggregate_name"]
        if agg == "cv":
            row["cv"] = round(b["real_time"], 4)  # a ratio, not a time
        else:
            row[agg + "_us"] = round(b["real_time"], 3)
    for row in rows.values():
        print(json.dumps(row, sort_keys=True))


if __name__ == "__main__":
    main()
