#!/usr/bin/env python3
"""The CPU-only autotune experiment, end to end (ctest autotune_cpu_experiment, CI):
autotune/tune.py k6-cpu in its own tree and records folder, then the checks that make it an
experiment rather than a script that ran: every candidate, the hand schedule and both
autoscheduler baselines have a record for every workload, each a time or an error; the
records carry their provenance; a second run resumes (builds and appends nothing); the
picture is a PNG; distill.py writes a tuned file; an illegal knob is refused.

  test_autotune.py <build dir>
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIELDS = ["kernel", "variant", "candidate", "knobs", "workload", "workload_class", "target", "halide", "gpu",
          "commit", "date", "device"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    build = os.path.abspath(sys.argv[1])
    python = sys.executable
    work = tempfile.mkdtemp(prefix="lb_autotune_")
    try:
        common = ["--tree", os.path.join(build, "tune", "k6-cpu"), "--records-dir", os.path.join(work, "records"),
                  "--picture", os.path.join(work, "k6-cpu.png"), "--livebound", os.path.join(build, "tools", "livebound")]
        run = [python, os.path.join(ROOT, "autotune", "tune.py"), "k6-cpu"] + common
        r = subprocess.run(run, capture_output=True, text=True)
        print(r.stdout[-3000:], r.stderr[-3000:])
        if r.returncode != 0:
            fail("tune.py k6-cpu exited with " + str(r.returncode))
        path = os.path.join(work, "records", "k6-cpu.jsonl")
        with open(path) as f:
            recs = [json.loads(line) for line in f]
        with open(os.path.join(ROOT, "autotune", "experiments", "k6-cpu.json")) as f:
            exp = json.load(f)
        expected_knobs = {"", "autoscheduler=Mullapudi2016", "autoscheduler=Adams2019"}
        for q in exp["grid"]["cpu_q_tile"]:
            for v in exp["grid"]["cpu_vector"]:
                if (q, v) != (16, 8):
                    expected_knobs.add(f"cpu_q_tile={q} cpu_vector={v}")
        workloads = {r["workload"] for r in recs}
        if len(workloads) != 3:
            fail(f"expected 3 workloads, got {sorted(workloads)}")
        for w in workloads:
            got = {r["knobs"] for r in recs if r["workload"] == w}
            if got != expected_knobs:
                fail(f"{w}: records for {sorted(got)}, expected {sorted(expected_knobs)}")
        for r in recs:
            missing = [k for k in FIELDS if k not in r]
            if missing:
                fail(f"record without {missing}: {r}")
            if "error" in r:
                fail(f"a CPU candidate failed: {r['knobs']}: {r['error']}")
            if not (r["median_us"] > 0 and 0 < r["min_us"] <= r["median_us"] and r["samples"] >= 5):
                fail(f"implausible timing: {r}")
            if r["halide"] != "21.0.0":
                fail(f"Halide version not recorded: {r['halide']}")
        with open(os.path.join(work, "k6-cpu.png"), "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail("the picture is not a PNG")
        # Resumable: everything is recorded at this commit, so nothing is built or appended.
        r = subprocess.run(run, capture_output=True, text=True)
        with open(path) as f:
            again = sum(1 for _ in f)
        if r.returncode != 0 or again != len(recs) or "already recorded" not in r.stdout:
            fail(f"the second run did not resume ({again} records, was {len(recs)}):\n{r.stdout}")
        # Distillation into a scratch folder.
        r = subprocess.run([python, os.path.join(ROOT, "autotune", "distill.py"), "k6-cpu", "--records-dir",
                            os.path.join(work, "records"), "--out", os.path.join(work, "tuned")],
                           capture_output=True, text=True)
        tuned = os.path.join(work, "tuned", "k6-cpu.cmake")
        if r.returncode != 0 or not os.path.exists(tuned):
            fail("distill.py failed:\n" + r.stdout + r.stderr)
        text = open(tuned).read()
        if "lb_k6_cpu_bounded_req" not in text or "commit" not in text:
            fail("the tuned file lacks the variant or the provenance:\n" + text)
        # An illegal knob is refused before anything is built.
        bad = os.path.join(work, "bad.json")
        with open(bad, "w") as f:
            json.dump(dict(exp, grid={"cpu_vector": [3]}, baselines=[]), f)
        r = subprocess.run([python, os.path.join(ROOT, "autotune", "tune.py"), bad] + common, capture_output=True,
                           text=True)
        if r.returncode == 0 or "outside the legal range" not in (r.stdout + r.stderr):
            fail("cpu_vector=3 was not refused:\n" + r.stdout + r.stderr)
        print(f"PASS: {len(recs)} records, resumed, picture, tuned file, illegal knob refused")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
