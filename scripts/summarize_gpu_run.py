#!/usr/bin/env python3
"""Turns the output of scripts/gpu_run_k1.sh (unpacked k1.tgz) into committed records:

  tests/results/<date>-<gpu>-k1.md     the CUDA/CPU/error test runs on the GPU machine
  bench/results/<date>-<gpu>-k1.json   Google Benchmark's JSON (date, GPU, commit, command inside)
  bench/results/<date>-<gpu>-k1.md     the table against SGLang's numbers (targets.md §D)

usage: scripts/summarize_gpu_run.py <results-dir> [--tag k1]
"""
import argparse
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ../shared/spec/targets.md §D: SGLang's kernel on the same H200, µs per call (graph replay).
SGLANG = {(1, 1): (1.40, 1.57), (1, 8): (3.76, 3.47), (1, 64): (28.85, 20.99),
          (1, 256): (109.96, 80.37), (64, 64): (5.56, 4.13)}
TARGETS = {(1, 64): 4.0, (1, 256): 10.0}


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def test_summary(res, context):
    lines = [f"# K1 tests on {context['gpu']} ({context['date']})", "",
             f"Commit `{context['commit']}`; driver {context['driver']}. Binaries built on the CPU "
             "build machine, run on the GPU machine by `scripts/gpu_run_k1.sh` "
             "(gtest XML reports parsed by `scripts/summarize_gpu_run.py`).", "",
             "| binary | tests | failures | errors | skipped | time (s) |", "|---|---|---|---|---|---|"]
    for name in sorted(os.listdir(res)):
        if not name.endswith(".xml"):
            continue
        root = ET.parse(os.path.join(res, name)).getroot()
        skipped = sum(1 for tc in root.iter("testcase") if tc.find("skipped") is not None)
        lines.append(f"| {name[:-4]} | {root.get('tests')} | {root.get('failures')} | "
                     f"{root.get('errors')} | {skipped} | {root.get('time')} |")
    lines += ["", "Skipped on the GPU machine: tests that need the absence of a device "
              "(they run in CI instead).", ""]
    return "\n".join(lines)


def bench_table(bench):
    med = {}
    for b in bench["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        m = re.match(r"K1/(bounded|full_width)/ps:(\d+)/bs:(\d+)", b["run_name"])
        s = re.match(r"K1/skip_page_table/bs:(\d+)", b["run_name"])
        if m:
            med[(m.group(1), int(m.group(2)), int(m.group(3)))] = b
        elif s:
            med[("scan", 1, int(s.group(1)))] = b
    c = bench["context"]
    out = [f"# K1 `normal_decode_set_metadata` on {c['gpu']} ({c['date']})", "",
           f"Commit `{c['commit']}`, driver {c['driver']}. Command: `{c.get('command', 'scripts/gpu_run_k1.sh ' + c['commit'] + ' OUT')}` (run by "
           "`scripts/gpu_run_k1.sh`). Width 131072 tokens, `seq_lens` uniform in [1024, 8192], "
           "`req_to_token` 512 x 131072, delta 0; µs per call, median of 5 repetitions of 30 "
           "CUDA-graph replays of 20 calls (targets.md §D method). `eager` = 20 back-to-back "
           "calls on a stream (host launch cost included).", "",
           "| page size | bs | livebound bounded | livebound full-width | bounded speed-up | "
           "SGLang full width | SGLang early exit | target | eager bounded |",
           "|---|---|---|---|---|---|---|---|---|"]
    for ps in (1, 64):
        for bs in (1, 8, 64, 256):
            bd, fw = med.get(("bounded", ps, bs)), med.get(("full_width", ps, bs))
            if not bd or not fw:
                continue
            sg = SGLANG.get((ps, bs))
            tgt = TARGETS.get((ps, bs))
            out.append(f"| {ps} | {bs} | {bd['real_time']:.2f} | {fw['real_time']:.2f} | "
                       f"{fw['real_time'] / bd['real_time']:.1f}x | "
                       f"{sg[0] if sg else '-'} | {sg[1] if sg else '-'} | "
                       f"{'<= %.0f' % tgt if tgt else '-'}"
                       f"{(' (met)' if bd['real_time'] <= tgt else ' (missed)') if tgt else ''} | "
                       f"{bd.get('eager_us', 0):.2f} |")
    scans = [(bs, med[("scan", 1, bs)]["real_time"]) for bs in (1, 64, 256) if ("scan", 1, bs) in med]
    if scans:
        out += ["", "The seqlen scan alone (`skip_page_table`: cache_seqlens + cu_seqlens_k, one "
                "kernel): " + ", ".join(f"bs {bs}: {t:.2f} µs" for bs, t in scans) + "."]
    out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--tag", default="k1")
    args = ap.parse_args()
    with open(os.path.join(args.results, "bench_k1.json")) as f:
        bench = json.load(f)
    c = bench["context"]
    base = f"{c['date']}-{slug(c['gpu'])}-{args.tag}"
    os.makedirs(os.path.join(ROOT, "tests", "results"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "tests", "results", base + ".md"), "w") as f:
        f.write(test_summary(args.results, c))
    shutil.copy(os.path.join(args.results, "bench_k1.json"), os.path.join(ROOT, "bench", "results", base + ".json"))
    with open(os.path.join(ROOT, "bench", "results", base + ".md"), "w") as f:
        f.write(bench_table(bench))
    print(base)


if __name__ == "__main__":
    main()
