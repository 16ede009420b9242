#!/usr/bin/env python3
"""autotune/distill.py: an experiment's records -> the tuned knobs the build uses.

  autotune/distill.py <experiment> [--margin M] [--out DIR]

For each (variant, workload class) of the experiment's newest records (one commit, one GPU
or CPU), every candidate timed on all of the class's workloads that the hand schedule was
timed on is compared with the hand schedule: the geometric mean of its time ratios over
those workloads. The best candidate becomes the variant's tuned knobs only when it is at
least `margin` faster on that mean (the experiment's "margin": 0.05 on a shared CPU, 0.02
on the H200, whose graph-replay medians repeat within 0.5 %) and not slower than the hand schedule on any one
workload (by more than the margin's half); otherwise the hand schedule stays (no set()).
Autoscheduler baselines and candidates with an error never qualify; workloads named
*/check/* are correctness gates and do not count.

Writes <out>/<experiment>.cmake (default schedules/<family>/tuned/): reviewed source, with
the provenance (records file, commit, GPU, driver, Halide, date) and the per-workload times
as comments, and `set(LIVEBOUND_TUNED_<variant> <knobs>)` for each tuned variant, which
cmake/LiveboundKernel.cmake applies over the hand knobs (LIVEBOUND_USE_TUNED, default ON).
An experiment may define its own workload classes ("classes": name -> workloads, replacing the
runner's labels) and name the one the variant itself serves in "build_class"; a class with
"min_batch" B becomes, when a candidate wins it, `set(LIVEBOUND_TUNED_BATCH_<variant> B
<knobs>)`: a second AOT variant with those knobs that the runtime runs for calls of batch
>= B (only the families whose entry points ask for it: K2 and K3 today).
Standard library only.
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "autotune"))
import picture  # noqa: E402  (latest())
import tune  # noqa: E402  (load_experiment, read_records)


def distill(exp, records, margin):
    """[(variant, class, chosen record knobs or None, lines of evidence)]."""
    recs = picture.latest(records)
    # The experiment's own classes ("classes": name -> workloads) replace the runner's labels.
    relabel = {w: name for name, c in exp.get("classes", {}).items() for w in c["workloads"]}
    recs = [dict(r, workload_class=relabel.get(r.get("workload"), r.get("workload_class", ""))) for r in recs]
    out = []
    for variant in exp["variants"]:
        vrecs = [r for r in recs if r.get("variant") == variant and r.get("workload") != "(build)"]
        classes = sorted({r.get("workload_class", "") for r in vrecs})
        for cls in classes:
            crecs = [r for r in vrecs if r.get("workload_class", "") == cls]
            # Workloads named */check/* are correctness gates (small batches against the fp64
            # reference), not what the schedule is tuned for.
            hand = {r["workload"]: r["median_us"] for r in crecs
                    if r["candidate"] == "hand" and "median_us" in r and "/check/" not in r["workload"]}
            if not hand:
                out.append((variant, cls, None, ["no timed hand-schedule record: nothing to compare"]))
                continue
            # A candidate with an error anywhere for this variant (a */check/* gate included) never
            # qualifies.
            failed = {r["candidate"] for r in vrecs if "error" in r}
            by_cand = {}
            for r in crecs:
                if r["candidate"] == "hand" or "autoscheduler=" in (r.get("knobs") or "") or r["candidate"] in failed:
                    continue
                by_cand.setdefault(r["candidate"], []).append(r)
            best, best_mean, evidence = None, 1.0, []
            for cand, rs in sorted(by_cand.items()):
                times = {r["workload"]: r.get("median_us") for r in rs}
                if any(times.get(w) is None for w in hand):
                    continue  # an error or a workload it was not timed on
                ratios = [times[w] / hand[w] for w in hand]
                mean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
                worst = max(ratios)
                if mean <= 1 - margin and worst <= 1 + margin / 2 and mean < best_mean:
                    best, best_mean = rs[0], mean
            for w in hand:
                line = f"{w}: hand {hand[w]:.3f} us"
                if best:
                    t = next(r["median_us"] for r in by_cand[best["candidate"]] if r["workload"] == w)
                    line += f", tuned {t:.3f} us ({t / hand[w]:.3f}x)"
                evidence.append(line)
            if best:
                evidence.insert(0, f"tuned: {best['knobs']} (geometric mean {best_mean:.3f}x the hand schedule's time)")
            else:
                evidence.insert(0, f"hand schedule kept: no candidate {margin:.0%} faster on the geometric mean "
                                   f"and at most {margin / 2:.0%} slower on every workload")
            out.append((variant, cls, best["knobs"] if best else None, evidence))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment")
    ap.add_argument("--margin", type=float, help="default: the experiment's \"margin\", else 0.05")
    ap.add_argument("--records-dir", default=os.path.join(ROOT, "autotune", "records"))
    ap.add_argument("--out", help="folder of the tuned file (default schedules/<family>/tuned)")
    args = ap.parse_args()
    exp = tune.load_experiment(args.experiment)
    records_path = os.path.join(args.records_dir, exp["name"] + ".jsonl")
    records = tune.read_records(records_path)
    if not records:
        sys.exit(f"distill.py: no records in {records_path}")
    newest = picture.latest(records)
    head = newest[0]
    if args.margin is None:
        args.margin = exp.get("margin", 0.05)
    results = distill(exp, records, args.margin)
    classes = sorted({c for _, c, _, _ in results})
    build_class = exp.get("build_class") or (classes[0] if len(classes) == 1 else None)
    if build_class is None:
        sys.exit(f"distill.py: the experiment has classes {classes}: name the one the build serves in build_class")
    where = head.get("gpu") if head.get("device") == "cuda" else head.get("cpu", "cpu")
    lines = [
        f"# Tuned knobs of experiment {exp['name']} (autotune/experiments/{exp['name']}.json), written by",
        f"# autotune/distill.py --margin {args.margin} from {os.path.relpath(records_path, ROOT)}: review before committing.",
        f"# Measured on {where} (driver {head.get('driver') or '-'}), target {head.get('target')}, Halide",
        f"# {head.get('halide')}, commit {head.get('commit')}, {head.get('date')}. The build applies each set() over the",
        "# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.",
    ]
    batch_classes = {name: c["min_batch"] for name, c in exp.get("classes", {}).items() if "min_batch" in c}
    for variant, cls, knobs, evidence in results:
        lines.append("")
        role = "the build's class" if cls == build_class else (
            f"calls of batch >= {batch_classes[cls]}" if cls in batch_classes else "not used by the build")
        lines.append(f"# {variant}, workload class '{cls}' ({role})")
        lines += [f"#   {e}" for e in evidence]
        if knobs and cls == build_class:
            lines.append(f"set(LIVEBOUND_TUNED_{variant} {knobs})")
        elif knobs and cls in batch_classes:
            # A second AOT variant with these knobs, which the runtime runs for calls of
            # batch >= min_batch (cmake/LiveboundKernel.cmake, runtime/src/pipeline_call.h).
            lines.append(f"set(LIVEBOUND_TUNED_BATCH_{variant} {batch_classes[cls]} {knobs})")
    out_dir = args.out or os.path.join(ROOT, "schedules", exp["family"], "tuned")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, exp["name"] + ".cmake")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwrote {os.path.relpath(path, ROOT) if path.startswith(ROOT) else path}")


if __name__ == "__main__":
    main()
