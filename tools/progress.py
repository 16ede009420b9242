#!/usr/bin/env python3
"""What the two commands show while they work (./run, scripts/setup.sh).

  progress.py build -- <build command...>
      Runs the build (Ninja through `cmake --build`) and shows its [n/N] progress: one
      updating line on a terminal, a plain line every 30 s otherwise (CI logs stay short).
      The whole output is kept and printed only when the build fails.

  progress.py test <ctest json-v1 file of every test> <log file> -- <ctest command...>
      Runs ctest (its own output kept in the log file), shows the same kind
      of progress, prints every failed test's output in full, then a summary a person reads
      at a glance -- tests run, passed, failed and skipped per label (cpu, filecheck, python,
      cuda), the skipped CUDA cases in one line with the reason -- and ends with ctest's own
      closing lines. Exits with ctest's status.

Python 3 standard library only.
"""
import json
import os
import re
import subprocess
import sys
import threading
import time

PLAIN_EVERY_S = 30.0


class Progress:
    """One updating line on a terminal; off a terminal a plain line every PLAIN_EVERY_S
    seconds, also while no step finishes (a timer: one build step may take minutes)."""

    def __init__(self, step):
        self.step = step
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.shown = False
        self.state = None  # (done, total) of the latest step
        self.lock = threading.Lock()
        self.stop = threading.Event()
        if not self.tty:
            threading.Thread(target=self._plain_lines, daemon=True).start()

    def elapsed(self):
        s = int(time.monotonic() - self.start)
        return f"{s // 60}m{s % 60:02d}s"

    def line(self):
        done, total = self.state
        return f"[{self.step}] {done}/{total} ({100 * done // max(total, 1)} %, {self.elapsed()})"

    def _plain_lines(self):
        while not self.stop.wait(PLAIN_EVERY_S):
            with self.lock:
                if self.state:
                    sys.stderr.write(self.line() + "\n")
                    sys.stderr.flush()

    def update(self, done, total, what=""):
        with self.lock:
            self.state = (done, total)
            if self.tty:
                width = os.get_terminal_size(sys.stderr.fileno()).columns
                sys.stderr.write("\r\033[K" + (self.line() + " " + what)[: max(width - 1, 20)])
                sys.stderr.flush()
                self.shown = True

    def finish(self, text):
        self.stop.set()
        with self.lock:
            if self.tty and self.shown:
                sys.stderr.write("\r\033[K")
            sys.stderr.write(f"[{self.step}] {text} ({self.elapsed()})\n")
            sys.stderr.flush()


def run_streaming(command, on_line, env=None):
    """Runs command, calling on_line for each line of its combined output; returns (status, lines)."""
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                          env=env) as proc:
        for line in proc.stdout:
            line = line.rstrip("\n")
            lines.append(line)
            on_line(line)
        status = proc.wait()
    return status, lines


# ---- build ----

NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]\s*(.*)$")


def build(command):
    progress = Progress("build")
    env = dict(os.environ, NINJA_STATUS="[%f/%t] ")

    def on_line(line):
        m = NINJA_STEP.match(line)
        if m:
            progress.update(int(m.group(1)), int(m.group(2)), m.group(3))

    status, lines = run_streaming(command, on_line, env)
    if status != 0:
        if progress.tty and progress.shown:
            sys.stderr.write("\r\033[K")
        sys.stderr.write("\n".join(lines) + "\n")
        progress.finish(f"FAILED (exit {status}); the build's output is above")
        return status
    steps = [NINJA_STEP.match(line) for line in lines]
    steps = [m for m in steps if m]
    if steps:
        progress.finish(f"built build/: {steps[-1].group(2)} steps")
    return 0


# ---- test ----

# "  12/3262 Test #3044: name ....   Passed    2.06 sec" (ctest's result line; the name may
# contain spaces and dots, " ..." where a long name is shortened included: it is matched
# greedily, up to the last run of dots; the status may carry a prefix such as "Subprocess
# aborted").
RESULT = re.compile(r"^\s*(\d+)/(\d+) Test\s+#(\d+): (.*) \.{3,}\s*(.*?)\s+([\d.]+) sec\s*$")
# A result whose status text runs over several lines ("***Failed  Required regular expression
# not found. Regex=[...", the time on a later line): its first line.
RESULT_OPEN = re.compile(r"^\s*(\d+)/(\d+) Test\s+#(\d+): (.*?) \.{3,}\s*\*\*\*(\S.*)$")
LABELS = ("cpu", "filecheck", "python", "cuda")


def status_of(text):
    if text == "Passed":
        return "passed"
    if "Skipped" in text or "Not Run" in text or "Disabled" in text:
        return "skipped"
    return "failed"


def test(json_file, command, log_path):
    with open(json_file) as f:
        listing = json.load(f)
    labels = {}
    names = {}  # ctest's test number (1-based, the listing's order) -> name
    for number, t in enumerate(listing.get("tests", []), start=1):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels[t["name"]] = props.get("LABELS", ["(none)"])
        names[number] = t["name"]
    progress = Progress("test")
    results = {}  # name -> status
    blocks = {}  # name of a failed test -> its output lines
    current = [None]

    def on_line(line):
        m = RESULT.match(line) or RESULT_OPEN.match(line)
        if m:
            # By number: ctest shortens a long name in its result line.
            name, status = names.get(int(m.group(3)), m.group(4)), status_of(m.group(5))
            results[name] = status
            current[0] = name if status == "failed" else None
            if current[0]:
                blocks[name] = [line]
            progress.update(int(m.group(1)), int(m.group(2)))
        elif re.match(r"^\s*Start\s+\d+: ", line):
            pass  # another test starting (ctest -j interleaves these)
        elif current[0] and not line.startswith("The following tests") and not re.match(r"^\s*\d+% tests passed", line):
            blocks[current[0]].append(line)
        elif re.match(r"^\s*\d+% tests passed", line):
            current[0] = None

    status, lines = run_streaming(command, on_line)
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    progress.finish(f"ran {len(results)} tests; ctest's whole output: {log_path}")

    out = sys.stdout
    failed = [n for n, s in results.items() if s == "failed"]
    for name in failed:
        out.write(f"\n==== FAILED: {name}\n")
        out.write("\n".join(blocks.get(name, [])) + "\n")

    counts = {}
    for name, s in results.items():
        for label in labels.get(name, ["(none)"]):
            c = counts.setdefault(label, {"run": 0, "passed": 0, "failed": 0, "skipped": 0})
            c[s] += 1
            if s != "skipped":
                c["run"] += 1
    order = [label for label in LABELS if label in counts] + sorted(set(counts) - set(LABELS))
    out.write("\nlabel        run   passed   failed  skipped\n")
    for label in order:
        c = counts[label]
        out.write(f"{label:10s} {c['run']:5d} {c['passed']:8d} {c['failed']:8d} {c['skipped']:8d}\n")
    cuda_skipped = counts.get("cuda", {}).get("skipped", 0)
    if cuda_skipped:
        out.write(f"no GPU: {cuda_skipped:,} CUDA cases skipped; run them on a machine with an NVIDIA GPU "
                  "(./run test -L cuda)\n")
    # ctest's own closing lines: the pass rate and the total time.
    for line in lines:
        if re.match(r"^\s*\d+% tests passed", line) or line.startswith("Total Test time"):
            out.write(line.strip() + "\n")
    out.flush()
    return status


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    head, command = argv[:split], argv[split + 1:]
    if head == ["build"]:
        return build(command)
    if len(head) == 3 and head[0] == "test":
        return test(head[1], command, head[2])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
