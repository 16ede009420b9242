#!/usr/bin/env python3
"""Turns the output of scripts/gpu_run.sh (unpacked gpu_run.tgz) into committed records:

  tests/results/<date>-<gpu>.md              every test binary run on the GPU machine
  bench/results/<date>-<gpu>-<family>.json   Google Benchmark's JSON (date, GPU, commit, command inside)
  bench/results/<date>-<gpu>-<family>.md     a table; K1's against SGLang's numbers (targets.md §D)

usage: scripts/summarize_gpu_run.py <results-dir> [--tag suffix]
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
    lines = [f"# Tests on {context['gpu']} ({context['date']})", "",
             f"Commit `{context['commit']}`; driver {context['driver']}. Binaries built on the CPU "
             "build machine, run on the GPU machine by `scripts/gpu_run.sh` "
             "(gtest XML reports parsed by `scripts/summarize_gpu_run.py`).", "",
             "| binary | tests | failures | errors | skipped | time (s) |", "|---|---|---|---|---|---|"]
    for name in sorted(os.listdir(res)):
        if not name.endswith(".xml"):
            continue
        root = ET.parse(os.path.join(res, name)).getroot()
        skipped = sum(1 for tc in root.iter("testcase") if tc.find("skipped") is not None)
        lines.append(f"| {name[:-4]} | {root.get('tests')} | {root.get('failures')} | "
                     f"{root.get('errors')} | {skipped} | {root.get('time')} |")
    torch_log = os.path.join(res, "python_torch.log")
    if os.path.exists(torch_log):
        with open(torch_log) as f:
            text = f.read()
        # One "Ran N tests" per pass of run_gpu_check.sh (cuda:0, and cuda:1 with 2 GPUs).
        ran = [int(n) for n in re.findall(r"^Ran (\d+) tests?", text, re.M)]
        ok = ran and not re.search(r"^FAILED", text, re.M) and len(re.findall(r"^OK", text, re.M)) == len(ran)
        verdict = "OK" if ok else "FAILED"
        lines += ["", f"python/tests/test_torch_cuda.py and the other torch modules (python/ on torch CUDA tensors, "
                  f"incl. torch.cuda.graph capture/replay; {len(ran)} pass(es)): "
                  f"{sum(ran) if ran else '?'} tests, {verdict}."]
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
        n = re.match(r"K1/noskip/(bounded|full_width)/ps:(\d+)/bs:(\d+)", b["run_name"])
        if n:
            med[("noskip_" + n.group(1), int(n.group(2)), int(n.group(3)))] = b
            continue
        if m:
            med[(m.group(1), int(m.group(2)), int(m.group(3)))] = b
        elif s:
            med[("scan", 1, int(s.group(1)))] = b
    c = bench["context"]
    out = [f"# K1 `normal_decode_set_metadata` on {c['gpu']} ({c['date']})", "",
           f"Commit `{c['commit']}`, driver {c['driver']}. Command: `{c.get('command', 'scripts/gpu_run.sh ' + c['commit'])}` "
           "on the GPU machine. Width 131072 tokens, `seq_lens` uniform in [1024, 8192], "
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
    nos = [(ps, med[("noskip_bounded", ps, 64)]["real_time"], med[("noskip_full_width", ps, 64)]["real_time"])
           for ps in (1, 64) if ("noskip_bounded", ps, 64) in med and ("noskip_full_width", ps, 64) in med]
    if nos:
        out += ["", "No dead column (NOSKIP: every kv length = the full width, bs = 64): the bound's own cost. " +
                ", ".join(f"page size {ps}: bounded {b:.2f} µs vs full-width {f:.2f} µs "
                          f"({100 * (b - f) / f:+.1f}%)" for ps, b, f in nos) + "."]
    out.append("")
    return "\n".join(out)


def generic_table(bench, family):
    c = bench["context"]
    out = [f"# `{family}` on {c['gpu']} ({c['date']})", "",
           f"Commit `{c['commit']}`, driver {c['driver']}. Command: `{c.get('command', 'scripts/gpu_run.sh')}` "
           "on the GPU machine; µs per call, median over repetitions (see the benchmark's source for the method).", "",
           "| benchmark | median (µs) | min (µs) | counters |", "|---|---|---|---|"]
    rows = {}
    for b in bench["benchmarks"]:
        if b.get("run_type") != "aggregate":
            continue
        r = rows.setdefault(b["run_name"], {})
        r[b["aggregate_name"]] = b
    skip = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
            "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit",
            "repetition_index", "label", "error_occurred", "error_message"}
    for name, r in rows.items():
        med = r.get("median")
        if not med:
            continue
        mn = r.get("min")
        counters = ", ".join(f"{k}={v:.4g}" for k, v in med.items() if k not in skip and isinstance(v, (int, float)))
        out.append(f"| {name.replace('/iterations:', ' it:').split('/repeats')[0]} | {med['real_time']:.2f} | "
                   f"{mn['real_time']:.2f} | {counters} |" if mn else
                   f"| {name} | {med['real_time']:.2f} | - | {counters} |")
    out.append("")
    return "\n".join(out)


def attention_table(bench):
    """K7: bounded and full-width per case of targets.md §A-C, against SGLang's Triton figures."""
    c = bench["context"]
    cases = {}
    for b in bench["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        m = re.match(r"K7/(.+)/(bounded|full_width)/", b["run_name"])
        if m:
            cases.setdefault(m.group(1), {})[m.group(2)] = b
    out = [f"# K7 `extend_attention_fwd` on {c['gpu']} ({c['date']})", "",
           f"Commit `{c['commit']}`, driver {c['driver']}. Command: `{c.get('command', 'scripts/gpu_run.sh')}` "
           "on the GPU machine (bench/bench_extend_attention.cpp: bf16, int64 kv_indices, no LSE; one warm-up "
           "call, then CUDA-event timing of each call). Useful TFLOP/s as targets.md defines it. Triton = "
           "SGLang's kernels on the same H200 (targets.md §A-C): `Triton` is the bounded kernel's figure "
           "(window bound / early exit), the speed-up column the table's bounded / unbounded ratio.", "",
           "| case | bounded ms | full-width ms | bounded / full | Triton's ratio | useful TFLOP/s | "
           "Triton ms (TFLOP/s) | livebound / Triton time |",
           "|---|---|---|---|---|---|---|---|"]
    for name, v in cases.items():
        bd, fw = v.get("bounded"), v.get("full_width")
        if not bd:
            continue
        ms_b = bd["ms"] if "ms" in bd else bd["real_time"]
        ms_f = (fw["ms"] if "ms" in fw else fw["real_time"]) if fw else None
        tri_ms, tri_tf = bd.get("triton_ms", 0), bd.get("triton_TFLOP_s", 0)
        ratio = bd.get("triton_speedup", 0)
        full_cols = (f"{ms_f:.3f} | {ms_f / ms_b:.2f}x | {('%.2fx' % ratio) if ratio else '-'}" if ms_f
                     else "- | - | -")
        triton_cols = (f"{tri_ms:.3f} ({tri_tf:.0f}) | {ms_b / tri_ms:.1f}x" if tri_ms else "- | -")
        out.append(f"| {name} | {ms_b:.3f} | {full_cols} | {bd.get('useful_TFLOP_s', 0):.2f} | {triton_cols} |")
    out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    benches = sorted(f for f in os.listdir(args.results) if f.startswith("bench_") and f.endswith(".json"))
    contexts = []
    os.makedirs(os.path.join(ROOT, "tests", "results"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    for f in benches:
        path = os.path.join(args.results, f)
        if os.path.getsize(path) == 0:
            continue
        with open(path) as fh:
            bench = json.load(fh)
        c = bench["context"]
        contexts.append(c)
        family = f[len("bench_"):-len(".json")]
        base = f"{c['date']}-{slug(c['gpu'])}-{family}{args.tag}"
        shutil.copy(path, os.path.join(ROOT, "bench", "results", base + ".json"))
        with open(os.path.join(ROOT, "bench", "results", base + ".md"), "w") as fh:
            if family == "decode_metadata":
                fh.write(bench_table(bench))
            elif family == "extend_attention":
                fh.write(attention_table(bench))
            else:
                fh.write(generic_table(bench, family))
        print(base)
    c = contexts[0]
    base = f"{c['date']}-{slug(c['gpu'])}{args.tag}"
    with open(os.path.join(ROOT, "tests", "results", base + ".md"), "w") as fh:
        fh.write(test_summary(args.results, c))
    print("tests/results/" + base + ".md")


if __name__ == "__main__":
    main()
