"""The picture of an autotune experiment: per workload, each schedule's time (the latest
record of each candidate at the newest commit that has records), the hand schedule, the
best candidate and the autoscheduler baselines marked, drawn by `livebound chart` (the
project's PNG writer, tools/picture/). Also prints the same table. Standard library only."""
import os
import subprocess
import tempfile


def latest(records):
    """The records of the newest commit, the last one per (candidate, workload)."""
    if not records:
        return []
    commit = records[-1].get("commit")
    keep = {}
    for r in records:
        if r.get("commit") == commit:
            keep[(r.get("variant"), r.get("candidate"), r.get("workload"))] = r
    return list(keep.values())


def label(r):
    return "hand schedule" if r["candidate"] == "hand" else r.get("knobs") or r["candidate"]


def kind(r, best):
    if "error" in r:
        return 4
    if r["candidate"] == "hand":
        return 0
    if "autoscheduler=" in (r.get("knobs") or ""):
        return 3
    return 2 if r is best else 1


def draw(exp, records, out, cli):
    recs = latest(records)
    workloads = []
    for r in recs:
        if r["workload"] != "(build)" and r["workload"] not in workloads:
            workloads.append(r["workload"])
    build_errors = [r for r in recs if r["workload"] == "(build)"]
    lines = [f"title\t{exp['name']}: {exp['kernel']} {', '.join(exp['variants'])} ({exp['device']}, "
             f"{recs[0].get('gpu') if recs and exp['device'] == 'cuda' else 'cpu'}, commit "
             f"{recs[0].get('commit') if recs else '?'})", "unit\tus, median"]
    print(f"{'workload':<34} {'hand us':>9} {'best us':>9}  best knobs")
    for w in workloads:
        rows = [r for r in recs if r["workload"] == w] + build_errors
        timed = [r for r in rows if "median_us" in r and "autoscheduler=" not in (r.get("knobs") or "")]
        best = min(timed, key=lambda r: r["median_us"]) if timed else None
        hand = next((r for r in rows if r["candidate"] == "hand" and "median_us" in r), None)
        rows.sort(key=lambda r: (r["candidate"] != "hand", "autoscheduler=" in (r.get("knobs") or ""), label(r)))
        lines.append(f"group\t{w}")
        for r in rows:
            lines.append(f"bar\t{kind(r, best)}\t{r.get('median_us', 0)}\t{label(r)}")
        if hand and best:
            print(f"{w:<34} {hand['median_us']:>9.3f} {best['median_us']:>9.3f}  {label(best)}")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if not os.path.exists(cli):
        print(f"(no picture: {cli} is not built; `./run test` builds it)")
        return
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        spec = f.name
    try:
        subprocess.run([cli, "chart", spec, "--out", out], check=True)
    finally:
        os.unlink(spec)
