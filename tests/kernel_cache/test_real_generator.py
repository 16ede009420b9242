#!/usr/bin/env python3
"""One real generator step through tools/kernel_cache.py (ctest kernel_cache_real_generator):
with a cache of its own, the step misses in one directory, hits in another, and runs
uncached (LIVEBOUND_CACHE=off) in a third; the three sets of outputs must be byte-identical
(a hit is a miss's bytes, and running in the tool's staging directory changes nothing).

  test_real_generator.py --tool T --generator G --work DIR --name N --generator-name GN
                         --target TARGET -- PARAMS...
G must have been fingerprinted by the build (G.lbfp, cmake/LiveboundCache.cmake)."""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
for opt in ("--tool", "--generator", "--work", "--name", "--generator-name", "--target"):
    ap.add_argument(opt, required=True)
ap.add_argument("params", nargs="*")
a = ap.parse_args()

shutil.rmtree(a.work, ignore_errors=True)
cache, stats = os.path.join(a.work, "cache"), os.path.join(a.work, "stats")
emit = ["c_header", "object", "conceptual_stmt", "stmt", "stmt_html"]
exts = [".h", ".o", ".conceptual.stmt", ".stmt", ".stmt.html"]
outputs = [a.name + e for e in exts]


def step(where, mode):
    out = os.path.join(a.work, where)
    os.makedirs(out)
    argv = [sys.executable, a.tool, "run", "--name", a.name, "--out-dir", out,
            "--fingerprint", a.generator + ".lbfp", "--stats-dir", stats, "--keep-identical"]
    for o in outputs:
        argv += ["--output", o]
    argv += ["--", a.generator, "-n", a.name, "-d", "0", "-g", a.generator_name, "-f", a.name,
             "-e", ",".join(emit), "-o", ".", "target=" + a.target] + a.params
    env = dict(os.environ, LIVEBOUND_CACHE_DIR=cache, LIVEBOUND_CACHE=mode)
    env = {k: v for k, v in env.items() if not k.startswith("HL_")}
    done = subprocess.run(argv, cwd=out, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{where}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    return out


fp = json.load(open(a.generator + ".lbfp"))
if fp.get("uncacheable"):
    sys.exit(f"the build could not fingerprint {a.generator}: {fp['uncacheable']}")
dirs = [step("miss", "on"), step("hit", "on"), step("uncached", "off")]
events = [json.loads(line)["event"] for line in open(os.path.join(stats, "events.jsonl"))]
if events != ["miss", "hit", "off"]:
    sys.exit(f"expected a miss, a hit and an uncached run, got {events}")
for o in outputs:
    for d in dirs[1:]:
        if not filecmp.cmp(os.path.join(dirs[0], o), os.path.join(d, o), shallow=False):
            sys.exit(f"{o} differs between {dirs[0]} and {d}")
print(f"kernel_cache_real_generator: {a.name}: miss, hit and uncached outputs byte-identical ({len(outputs)} files)")
