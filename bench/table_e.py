#!/usr/bin/env python3
"""Prints livebound's K1-K6 benchmark medians next to SGLang's figures on the same H200
(../shared/spec/targets.md: table E, SGLang's newest kernels side by side in one process, and
table D for K1 cases table E does not list), as a Markdown table.

    bench/table_e.py DIR      # DIR holds bench_<family>.json (Google Benchmark JSON output)

Columns: livebound bounded and full-width medians (graph replay, µs per call), their ratio,
SGLang's figure, livebound / SGLang, and the kernel launches of one bounded call (counted by
the CUDA suites' graph tests: tests/*/test_*_cuda.cpp)."""
import json
import pathlib
import re
import sys

# SGLang's device time per call, µs (graph replay), keyed by livebound's benchmark name
# without its /bounded or /full_width part.
SGLANG_US = {
    # K1, table E (side by side) where it has the case, else table D (early exit)
    "K1/ps:1/bs:1": 1.57,
    "K1/ps:1/bs:8": 3.47,
    "K1/ps:1/bs:64": 21.3,
    "K1/ps:1/bs:256": 80.6,
    "K1/ps:64/bs:64": 4.29,
    "K1/swa/ps:1/bs:256": 165.0,
    # K2-K6, table E
    "K2/skip/width:16384/seq:1024/bs:1": 1.66,
    "K2/skip/width:16384/seq:1024/bs:8": 1.94,
    "K2/skip/width:16384/seq:1024/bs:64": 6.24,
    "K2/half_live/width:16384/seq:8192/bs:8": 2.19,
    "K2/noskip/width:16384/seq:16384/bs:64": 7.71,
    "K3/skip/width:16384/seq:1024/bs:1": 1.78,
    "K3/skip/width:16384/seq:1024/bs:8": 3.73,
    "K3/skip/width:16384/seq:1024/bs:64": 6.29,
    "K4/noswa/bs:64": 1.70,
    "K4/noswa/bs:256": 1.92,
    "K4/swa/bs:64": 2.21,
    "K4/swa/bs:256": 2.61,
    "K4/noskip/swa/bs:64": 4.51,
    "K5/prefill_bs8_32k/max_seq_len:8192": 3.58,
    "K5/prefill_bs8_32k/max_seq_len:16384": 4.01,
    "K5/prefill_bs1_16k/max_seq_len:16384": 2.71,
    "K5/prefill_bs32_32k/max_seq_len:16384": 4.12,
    "K6/ragged": 112.15,
    "K6/ragged16": 118.38,
    "K6/uniform": 109.58,
    "K6/single": 104.96,
}

# Kernel launches of one bounded CUDA call at the bench shapes (the graph tests assert them).
# K2/K3: one since 2026-12-04 (the tuned forms, schedules/dsa_metadata/tuned/); two only from
# 4096 prefix-sum entries, where the hand schedule runs (no bench shape is that large).
LAUNCHES = {"K1": 1, "K2": 1, "K3": 1, "K4": 1, "K5": 1, "K6": 1}


FAMILIES = ["decode_metadata", "dsa_metadata", "trtllm_metadata", "dsa_kv_gather", "transform_index"]


def medians(path):
    out = {}
    for b in json.loads(path.read_text())["benchmarks"]:
        if b.get("aggregate_name") == "median":
            out[b["run_name"].split("/iterations")[0]] = b["real_time"]
    return out


def key_of(name):
    """(case key, form) of a benchmark name; form is 'bounded', 'full_width' or None."""
    form = None
    for f in ("bounded", "full_width"):
        if "/" + f + "/" in name or name.endswith("/" + f):
            form = f
            name = name.replace("/" + f, "", 1)
    name = re.sub(r"/next_n:\d+", "", name)
    return name, form


def main():
    folder = pathlib.Path(sys.argv[1])
    times = {}
    for family in FAMILIES:
        path = folder / f"bench_{family}.json"
        if not path.exists():
            continue
        for name, t in medians(path).items():
            key, form = key_of(name)
            times.setdefault(key, {})[form or "bounded"] = t
    print("| case | bounded µs | full width µs | full / bounded | SGLang µs | bounded / SGLang | launches |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(times, key=lambda k: (k.split("/")[0], k)):
        row = times[key]
        b, f = row.get("bounded"), row.get("full_width")
        s = SGLANG_US.get(key)
        fam = key.split("/")[0]
        launches = LAUNCHES.get(fam)
        if "skip_page_table" in key:
            launches = 1  # the lengths / prefix-sum kernel alone
        cells = [key, f"{b:.2f}" if b else "-", f"{f:.2f}" if f else "-",
                 f"{f / b:.2f}x" if b and f else "-", f"{s:.2f}" if s else "-",
                 f"{b / s:.2f}x" if b and s else "-", str(launches) if launches else "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
