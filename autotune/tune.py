#!/usr/bin/env python3
"""autotune/tune.py: one schedule-search experiment, from candidates to records and a picture.

  autotune/tune.py <experiment>            build the candidates here, time them (CPU
                                           experiments: here, now), append the records,
                                           draw the picture
  autotune/tune.py <experiment> --bundle DIR
                                           CUDA experiments (this machine has no GPU): build,
                                           then copy the runner and a run script into DIR
  autotune/tune.py <experiment> --records FILE
                                           append the runner's output from the GPU machine
                                           (FILE: its JSON lines) and draw the picture
  autotune/tune.py <experiment> --draw     only the picture and its table, from the records

<experiment> is autotune/experiments/<name>.json (or its name): the kernel, its family, the
variants to tune, a grid of knob values and/or extra knob sets, and baselines (Halide's
autoschedulers), and optionally "workloads": a substring that picks the runner's workloads
(its names, e.g. "mla"; all of the kernel's when absent). Every candidate is checked against autotune/spaces.json (the legal range of
each knob). The candidates are built in one CMake tree, build-tune/<name>/, restricted to the
family's tuned variants (LIVEBOUND_ONLY_VARIANTS) with the candidates beside them
(LIVEBOUND_TUNE_FILE); Ninja builds them in parallel and keeps going past a candidate that
fails, whose error becomes its record. The runner (autotune/runner/) loads every candidate
into one process, checks each one's outputs against the reference before timing it, and
prints one JSON line per (candidate, workload).

Records: autotune/records/<name>.jsonl, one JSON object per line, append-only. Each holds
kernel, variant, candidate, knobs, workload, workload_class, target, halide, gpu, driver,
commit, date, and median_us / min_us / samples or an error. Resumable: a candidate whose
knobs already have a record at this commit for every workload is not built or run again.

Python 3 standard library only.
"""
import argparse
import datetime
import itertools
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUTOTUNE = os.path.join(ROOT, "autotune")
CPU_TARGET = "x86-64-linux-sse41-avx-f16c-fma-avx2"
CUDA_TARGET = CPU_TARGET + "-cuda-cuda_capability_86"


def say(msg):
    print(msg, flush=True)


def load_experiment(arg):
    path = arg if arg.endswith(".json") else os.path.join(AUTOTUNE, "experiments", arg + ".json")
    with open(path) as f:
        exp = json.load(f)
    exp["name"] = os.path.splitext(os.path.basename(path))[0]
    return exp


def legal(spec, value):
    """True when `value` (a string) is inside the knob's legal range."""
    allowed = spec["legal"]
    if all(isinstance(v, str) for v in allowed):
        return value in allowed
    try:
        v = int(value)
    except ValueError:
        return False
    if len(allowed) != 2:
        return v in allowed
    lo, hi = allowed
    if not lo <= v <= hi:
        return False
    if spec.get("pow2") and (v <= 0 or v & (v - 1)):
        return False
    if spec.get("step") and v % spec["step"] != 0:
        return False
    return True


def candidates(exp, space):
    """The experiment's knob sets, each a list of 'key=value', validated against the space."""
    sets = []
    grid = exp.get("grid", {})
    keys = sorted(grid)
    for key in keys:
        if key not in space:
            sys.exit(f"tune.py: knob '{key}' is not in autotune/spaces.json for this schedule")
    for values in itertools.product(*(grid[k] for k in keys)):
        knobs = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in zip(keys, values)]
        hand = all(str(space[k]["hand"]).lower() == str(v).lower() for k, v in zip(keys, values))
        if knobs and not hand:
            sets.append(knobs)
    for extra in exp.get("extra", []) + exp.get("baselines", []):
        sets.append(extra.split())
    unique = []
    for knobs in sets:
        if cand_id(knobs) not in {cand_id(u) for u in unique}:
            unique.append(knobs)  # (a knob set listed twice is built and timed once)
    sets = unique
    for knobs in sets:
        for knob in knobs:
            key, _, value = knob.partition("=")
            if key not in space:
                sys.exit(f"tune.py: knob '{key}' is not in autotune/spaces.json for this schedule")
            if not legal(space[key], value):
                sys.exit(f"tune.py: {knob} is outside the legal range {space[key]['legal']}")
    return sets


def cand_id(knobs):
    """A candidate's id: its knobs, as a C identifier."""
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(knobs)).strip("_")


def git_commit():
    def out(*cmd):
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip()

    commit = out("git", "rev-parse", "--short", "HEAD") or "unknown"
    dirty = out("git", "status", "--porcelain", "--untracked-files=no", "--", "generators", "schedules", "cmake",
                "runtime", "autotune/runner")
    return commit + ("+" if dirty else "")


def halide_version(python):
    r = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('halide'))"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def read_records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def build(exp, sets, tree, python, jobs):
    """Configures and builds the tree; returns {id: error} for the candidates that failed."""
    os.makedirs(tree, exist_ok=True)
    tune_file = os.path.join(tree, "candidates.cmake")

    def write(ids):
        lines = ["# Written by autotune/tune.py for experiment " + exp["name"] + ": do not edit."]
        for variant in exp["variants"]:
            chosen = [(cand_id(k), k) for k in sets if cand_id(k) in ids]
            lines.append(f"set(LIVEBOUND_TUNE_CANDIDATES_{variant} {' '.join(i for i, _ in chosen)})")
            for i, k in chosen:
                lines.append(f'set(LIVEBOUND_TUNE_KNOBS_{variant}_{i} {" ".join(k)})')
        with open(tune_file, "w") as f:
            f.write("\n".join(lines) + "\n")

    halide_cmake = subprocess.run(
        [python, "-c", "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'lib64', 'cmake'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    cmake = os.path.join(ROOT, ".venv", "bin", "cmake")
    if not os.path.exists(cmake):
        cmake = "cmake"
    only = "^(" + "|".join(re.escape(v) for v in exp["variants"]) + ")$"

    def configure():
        cmd = [cmake, "-S", ROOT, "-B", tree, "-G", "Ninja", "-Wno-dev", "-DCMAKE_BUILD_TYPE=Release",
               f"-DLIVEBOUND_FAMILIES={exp['family']}", f"-DLIVEBOUND_ONLY_VARIANTS={only}",
               f"-DLIVEBOUND_TUNE_FILE={tune_file}", "-DLIVEBOUND_USE_TUNED=OFF", "-DLIVEBOUND_TESTS=OFF",
               "-DLIVEBOUND_BENCH=OFF", f"-DLIVEBOUND_CUDA={'ON' if exp['device'] == 'cuda' else 'OFF'}",
               f"-DHalide_DIR={halide_cmake}/Halide", f"-DHalideHelpers_DIR={halide_cmake}/HalideHelpers"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("tune.py: configuring " + tree + " failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])

    ids = {cand_id(k) for k in sets}
    write(ids)
    configure()
    targets = [f"{v}__{i}" for v in exp["variants"] for i in sorted(ids)] + list(exp["variants"])
    say(f"building {len(targets)} libraries ({len(ids)} candidates x {len(exp['variants'])} variants + the hand "
        f"schedules) in {os.path.relpath(tree, ROOT)} with {jobs} jobs")
    ninja = shutil.which("ninja") or "ninja"
    proc = subprocess.Popen([ninja, "-C", tree, "-k", "0", f"-j{jobs}"] + targets, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    log, shown = [], -1
    for line in proc.stdout:
        log.append(line)
        m = re.match(r"\[(\d+)/(\d+)\]", line)
        if m:
            step, steps = int(m.group(1)), int(m.group(2))
            if sys.stdout.isatty():
                sys.stdout.write(f"\r  [{step}/{steps}] build steps")
                sys.stdout.flush()
            elif step * 4 // steps != shown:  # off a terminal: a line per quarter
                shown = step * 4 // steps
                say(f"  [{step}/{steps}] build steps")
    proc.wait()
    if sys.stdout.isatty():
        sys.stdout.write("\n")
    failed = {}
    for v in exp["variants"]:
        for i in sorted(ids):
            if not os.path.exists(os.path.join(tree, f"lib{v}__{i}.a")):
                # The generator's or the link step's own words: the target alone, again.
                r = subprocess.run([ninja, "-C", tree, f"{v}__{i}"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                words = [ln.strip() for ln in r.stdout.splitlines()
                         if ln.strip() and not ln.startswith(("[", "FAILED", "ninja:")) and " && " not in ln]
                failed[(v, i)] = ("build failed: " + " | ".join(words[-6:]))[:1200]
    if any(not os.path.exists(os.path.join(tree, f"lib{v}.a")) for v in exp["variants"]):
        sys.exit("tune.py: the hand schedule itself failed to build:\n" + "".join(log)[-4000:])
    if failed:
        say(f"  {len(failed)} candidate(s) failed to build; their errors become records")
        write(ids - {i for _, i in failed})  # (one candidates file for all variants)
        configure()
    r = subprocess.run([ninja, "-C", tree, f"-j{jobs}", "livebound_tune_runner"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("tune.py: building the runner failed:\n" + r.stdout[-4000:])
    return failed


# The GPU side of a CUDA experiment. A schedule that kills the runner (an illegal address
# leaves the CUDA context unusable; Halide aborts) is recorded as a crash and the runner
# restarts without it: at most 5 restarts; the complete run's lines are the records. Any
# other failure (no GPU, no candidates, a crash in the hand schedule) stops the script.
RUN_SH = r"""#!/bin/sh
# On the GPU machine: ./run.sh OUT_DIR (then tune.py <experiment> --records OUT_DIR/records.jsonl)
here="$(cd "$(dirname "$0")" && pwd)"; out="${1:-.}"; mkdir -p "$out"
cp "$here/tune_meta.json" "$out/"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
exclude=""; : > "$out/crashed.jsonl"
for attempt in 1 2 3 4 5 6; do
  "$here/livebound_tune_runner" --kernel @KERNEL@ --device cuda --driver "$driver" --exclude "$exclude" \
      --workloads "@WORKLOADS@" \
      > "$out/run.jsonl" 2> "$out/stderr.log"
  rc=$?
  [ $rc -eq 0 ] && break
  last="$(grep '^\[' "$out/stderr.log" | tail -1)"
  variant="$(echo "$last" | awk '{print $2}')"; cand="$(echo "$last" | awk '{print $3}')"
  # Only a crash (a signal) in a candidate is restarted; any other failure stops here.
  if [ $rc -lt 128 ] || [ -z "$cand" ] || [ "$cand" = hand ] || [ $attempt -eq 6 ]; then
    echo "run.sh: the runner failed (exit $rc) at: $last" >&2; cat "$out/stderr.log" >&2; exit 1
  fi
  workload="$(echo "$last" | awk '{print $4}')"
  echo "{\"variant\": \"$variant\", \"candidate\": \"$cand\", \"workload\": \"$workload\", \"device\": \"cuda\", \"driver\": \"$driver\", \"error\": \"the runner died (exit $rc) in this schedule's first call or check; restarted without it\"}" >> "$out/crashed.jsonl"
  cp "$out/stderr.log" "$out/stderr.crash$attempt.log"
  exclude="$exclude,$cand"
done
cat "$out/crashed.jsonl" "$out/run.jsonl" > "$out/records.jsonl"
"""


def annotate(rec, exp, commit, halide):
    rec = dict(rec)
    rec["experiment"] = exp["name"]
    rec["target"] = CUDA_TARGET if exp["device"] == "cuda" else CPU_TARGET
    rec["halide"] = halide
    rec["commit"] = commit
    rec["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if exp["device"] == "cpu":
        rec["gpu"] = "none"
        rec["cpu"] = cpu_name()
    return rec


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} threads)"
    except OSError:
        pass
    return "unknown"


def append(path, recs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment")
    ap.add_argument("--bundle", help="CUDA: copy the runner and its run script into this folder")
    ap.add_argument("--records", help="append the runner output (JSON lines) from the GPU machine")
    ap.add_argument("--draw", action="store_true", help="only draw the picture (and its table) from the records")
    ap.add_argument("--records-dir", default=os.path.join(AUTOTUNE, "records"))
    ap.add_argument("--tree", help="the build tree (default build-tune/<experiment>)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--picture", help="PNG path (default autotune/pictures/<experiment>.png)")
    ap.add_argument("--livebound", help="the livebound CLI that draws the picture (default build/tools/livebound)")
    args = ap.parse_args()

    exp = load_experiment(args.experiment)
    with open(os.path.join(AUTOTUNE, "spaces.json")) as f:
        space = json.load(f)[exp["family"]][exp["space"]]
    python = os.path.join(ROOT, ".venv", "bin", "python")
    if not os.path.exists(python):
        python = sys.executable
    commit, halide = git_commit(), halide_version(python)
    records_path = os.path.join(args.records_dir, exp["name"] + ".jsonl")
    tree = args.tree or os.path.join(ROOT, "build-tune", exp["name"])

    if args.draw:
        draw(exp, records_path, args)
        return
    if args.records:
        with open(args.records) as f:
            recs = [json.loads(line) for line in f if line.strip().startswith("{")]
        meta = {}
        meta_path = os.path.join(os.path.dirname(args.records), "tune_meta.json")
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                meta = json.load(f)
        built_commit = meta.get("commit", commit)
        with open(os.path.join(AUTOTUNE, "spaces.json")) as f:
            knobs_of = {cand_id(k): " ".join(k) for k in candidates(exp, json.load(f)[exp["family"]][exp["space"]])}
        for r in recs:  # a crash record (run.sh) names only the candidate
            r.setdefault("kernel", exp["kernel"])
            r.setdefault("knobs", knobs_of.get(r["candidate"], ""))
            r.setdefault("workload_class", "")
            r.setdefault("gpu", next((x.get("gpu") for x in recs if x.get("gpu")), ""))
        out = [annotate(r, exp, built_commit, halide) for r in recs]
        for extra in meta.get("build_errors", []):
            out.append(annotate(extra, exp, built_commit, halide))
        append(records_path, out)
        say(f"appended {len(out)} records to {os.path.relpath(records_path, ROOT)}")
        draw(exp, records_path, args)
        return

    sets = candidates(exp, space)
    done = {}
    for r in read_records(records_path):
        if r.get("commit") == commit:
            done.setdefault(r.get("candidate"), set()).add(r.get("workload"))
    # Done: recorded at this commit for every workload the hand schedule was recorded for (or
    # as a build error). A partial resume re-times the hand schedule in the new process.
    hand_done = done.get("hand", set())
    todo = [k for k in sets
            if not done.get(cand_id(k)) or ("(build)" not in done[cand_id(k)] and not hand_done <= done[cand_id(k)])]
    say(f"experiment {exp['name']}: {exp['kernel']} {', '.join(exp['variants'])} on {exp['device']}; "
        f"{len(sets)} candidates + the hand schedule, {len(sets) - len(todo)} already recorded at {commit}")
    if not todo and done.get("hand"):
        draw(exp, records_path, args)
        return
    if not todo:
        todo = sets  # only the hand schedule's records are missing: rebuild them all (one tree)
    failed = build(exp, todo, tree, python, args.jobs)
    errors = [{"kernel": exp["kernel"], "variant": v, "candidate": i,
               "knobs": " ".join(next(k for k in todo if cand_id(k) == i)), "workload": "(build)",
               "workload_class": "", "device": exp["device"], "error": e}
              for (v, i), e in failed.items()]
    runner = os.path.join(tree, "autotune", "runner", "livebound_tune_runner")
    if exp["device"] == "cuda":
        bundle = args.bundle or os.path.join(ROOT, "gpu-bundle", "tune", exp["name"])
        os.makedirs(bundle, exist_ok=True)
        shutil.copy2(runner, os.path.join(bundle, "livebound_tune_runner"))
        with open(os.path.join(bundle, "tune_meta.json"), "w") as f:
            json.dump({"commit": commit, "experiment": exp["name"], "build_errors": errors}, f, indent=1)
        with open(os.path.join(bundle, "run.sh"), "w") as f:
            f.write(RUN_SH.replace("@KERNEL@", exp["kernel"]).replace("@WORKLOADS@", exp.get("workloads", "")))
        os.chmod(os.path.join(bundle, "run.sh"), 0o755)
        say(f"CUDA experiment: bundle in {os.path.relpath(bundle, ROOT)}; on the GPU run {os.path.basename(bundle)}/run.sh "
            f"OUT, then: autotune/tune.py {exp['name']} --records OUT/records.jsonl")
        return
    say("running the candidates (hand schedule first per workload)")
    r = subprocess.run([runner, "--kernel", exp["kernel"], "--device", "cpu", "--workloads", exp.get("workloads", "")],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"tune.py: the runner failed ({r.returncode})")
    recs = [annotate(json.loads(line), exp, commit, halide) for line in r.stdout.splitlines() if line.startswith("{")]
    recs += [annotate(e, exp, commit, halide) for e in errors]
    append(records_path, recs)
    say(f"appended {len(recs)} records to {os.path.relpath(records_path, ROOT)}")
    draw(exp, records_path, args)


def draw(exp, records_path, args):
    """The experiment's picture (autotune/picture.py), and the summary it prints."""
    sys.path.insert(0, AUTOTUNE)
    import picture  # noqa: E402

    out = args.picture or os.path.join(AUTOTUNE, "pictures", exp["name"] + ".png")
    cli = args.livebound or os.path.join(ROOT, "build", "tools", "livebound")
    picture.draw(exp, read_records(records_path), out, cli)


if __name__ == "__main__":
    main()
