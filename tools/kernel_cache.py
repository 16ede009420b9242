#!/usr/bin/env python3
"""Content-addressed cache of generated kernels (issue 46): ccache for Halide generator steps.

One cache entry is one variant's whole generator step: the generator run (object, header,
.stmt, .conceptual.stmt, .stmt.html, ...) together with its post-processing (tools/ptx_link.py
and ptxas for tensor-core and register-capped variants: <name>.cubins.cpp, inlined PTX). A hit
reruns neither; it copies the stored files into place.

  kernel_cache.py run --name N --out-dir D --fingerprint G.lbfp --stats-dir S [options]
                      -- GENERATOR ARGS... [---then SCRIPT.py ARGS...]...
      what cmake/LiveboundCache.cmake's custom command runs for each variant. Every command
      runs in a fresh directory inside D (so the relative `-o .`, `--object <name>.o` of the
      commands land there); the files they write are the step's outputs.
  kernel_cache.py fingerprint --exe G --out G.lbfp --compile-commands C --object-dir O ...
      POST_BUILD of each generator executable: the normalised identity of the generator
      (its preprocessed sources, compiler, flags, libHalide and GenGen bytes), never its own
      bytes (they embed the RUNPATH and Halide.h's __FILE__ paths, so differ per checkout).
  kernel_cache.py summary --stats-dir S [--write FILE]
      the end-of-build line: hits, misses, corrupt entries, bypasses, cache size.
  kernel_cache.py census [--build build] [--variants]
      every variant of a build per kernel and kind (CPU, CUDA, CUDA register-capped, CUDA
      tensor-core), what needs it (the runtime's dispatch tables, the full-width form only,
      or a test or tool) and its generation CPU-seconds (from its cache entry).
  kernel_cache.py clear | size
      empty the cache / print its size.

The key (sha256 of canonical JSON; the components are written to <stats-dir>/keys/<name>.json
for comparing two builds' keys) holds: KEY_SCHEMA (bump it when what enters the key or an
entry's layout changes; the tool's own bytes do not enter, so editing it keeps the cache); the generator
fingerprint; every generator argument (name, generator, function, emitted outputs, plugins,
target and features, params) with absolute file arguments replaced by basename + content
hash (autoscheduler plugins, helper PTX, ptxas) and the build's roots replaced by @NAME;
the post-processing commands likewise, with the interpreter as python<major>.<minor>;
`--version-of` tools' version output (ptxas --version); the HL_* environment variables;
the declared outputs.

Environment (read at build time):
  LIVEBOUND_CACHE           on (default) | off (run the commands, touch no cache) |
                            verify (on a hit, also regenerate and fail on any difference)
  LIVEBOUND_CACHE_DIR       the cache (default ~/.cache/livebound)
  LIVEBOUND_CACHE_MAX_SIZE  its bound, bytes with an optional K/M/G/T suffix (default 4G);
                            least recently used entries are evicted past it

Safe under concurrent builds: entries are staged under <cache>/tmp and renamed into place
(a key's first complete entry wins); eviction holds <cache>/lock; a hit verifies the sha256
of every copied file against the entry's manifest, so a corrupt or half-evicted entry is
dropped and regenerated, never installed. Never stored under a key that does not describe
them: outputs whose file inputs changed while the step ran (the key is computed again
after it), outputs of a generator whose sources changed between its compile and its
fingerprint (it is not fingerprinted), outputs that embed a path of the build. Whatever
goes wrong with the cache itself (unreadable key inputs, a full or read-only cache, a
corrupt entry, malformed settings) runs the step uncached or leaves it unstored, never fails
the build (a difference found by LIVEBOUND_CACHE=verify does, on purpose). Python 3 standard
library only (tested with 3.11, the python3 of Debian 12).
"""
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

KEY_SCHEMA = 1
ENTRY_DIR = "v1"          # <cache>/v1/<key[:2]>/<key>/{manifest.json, files/...}
DEFAULT_MAX_SIZE = "4G"
EVICT_TO = 0.9            # evict down to 90 % of the bound (not on every store)
STALE_TMP_SECONDS = 24 * 3600
MEMO_MIN_AGE_S = 2.0      # files changed this recently are hashed, never memoised


# ---- settings ----

def warn(message):
    print(f"kernel_cache: {message}", file=sys.stderr)


def mode():
    value = os.environ.get("LIVEBOUND_CACHE", "on").strip().lower()
    if value in ("off", "0", "false", "no", "disabled"):
        return "off"
    if value == "verify":
        return "verify"
    if value not in ("", "on", "1", "true", "yes"):
        warn(f"LIVEBOUND_CACHE={value!r} is none of on, off, verify: taken as on")
    return "on"


def cache_dir():
    return os.path.abspath(os.path.expanduser(os.environ.get("LIVEBOUND_CACHE_DIR") or "~/.cache/livebound"))


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([kKmMgGtT]?)i?[bB]?\s*", text)
    if not m:
        raise ValueError(f"LIVEBOUND_CACHE_MAX_SIZE: not a size: {text!r}")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def max_size():
    """The bound; a malformed LIVEBOUND_CACHE_MAX_SIZE falls back to the default with a warning
    (a typo in a variable must not fail a generator step after its outputs were made)."""
    text = os.environ.get("LIVEBOUND_CACHE_MAX_SIZE") or DEFAULT_MAX_SIZE
    try:
        return parse_size(text)
    except ValueError as e:
        warn(f"{e}; using {DEFAULT_MAX_SIZE}")
        return parse_size(DEFAULT_MAX_SIZE)


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024.0


# ---- hashing ----

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_text(text):
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def memo_sha256(path, cache=None):
    """sha256 of a file's bytes, memoised under <cache>/memo by its stat (size, mtime, ctime,
    inode, device): libHalide (165 MB), the compiler, ptxas are hashed once, not per variant."""
    real = os.path.realpath(path)
    st = os.stat(real)
    sig = f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"
    memo = None
    if cache is not None:
        memo = os.path.join(cache, "memo", sha256_text(real)[:32])
        try:
            with open(memo) as f:
                line_sig, digest = f.read().split("\n")[:2]
            if line_sig == sig and re.fullmatch(r"[0-9a-f]{64}", digest):
                return digest
        except (OSError, ValueError):
            pass
    digest = sha256_file(real)
    newest = max(st.st_mtime_ns, st.st_ctime_ns) / 1e9
    if memo is not None and time.time() - newest > MEMO_MIN_AGE_S:
        try:
            atomic_write(memo, f"{sig}\n{digest}\n")
        except OSError:
            pass
    return digest


def atomic_write(path, text):
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp.", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


# ---- normalisation ----

def parse_roots(items):
    """--root NAME=PATH, longest path first (a build tree inside the source tree)."""
    roots = []
    for item in items or []:
        name, _, path = item.partition("=")
        if path:
            roots.append((name, os.path.realpath(path)))
            if os.path.abspath(path) != os.path.realpath(path):
                roots.append((name, os.path.abspath(path)))
    return sorted(roots, key=lambda r: -len(r[1]))


def replace_roots(text, roots):
    for name, path in roots:
        text = text.replace(path, "@" + name)
    return text


def norm_token(tok, roots, cache):
    """An argument as it enters the key: an absolute path to a file becomes its basename and
    content hash (wherever it lives); comma lists and key=value are split; any other mention
    of a root becomes @NAME."""
    if os.path.isabs(tok) and os.path.isfile(tok):
        return f"file:{os.path.basename(tok)}:{memo_sha256(tok, cache)}"
    if "," in tok and all(os.path.isabs(p) and os.path.isfile(p) for p in tok.split(",")):
        return ",".join(norm_token(p, roots, cache) for p in tok.split(","))
    key, eq, value = tok.partition("=")
    if eq and os.path.isabs(value) and os.path.isfile(value):
        return f"{key}={norm_token(value, roots, cache)}"
    return replace_roots(tok, roots)


def tool_version(path):
    """`<tool> --version`, asked on every step, never memoised: the tool's bytes are in the key
    already (as a file argument); its version output is there for what its bytes do not show,
    a wrapper script whose tool behind it changed. (ptxas: ~10 ms, TENSOR_CORE and
    MAX_REGISTERS variants only.) Undecodable bytes are replaced, not an error."""
    done = subprocess.run([path, "--version"], capture_output=True)
    return (done.stdout + done.stderr).decode(errors="replace").strip()


# ---- the cache ----

def entry_path(cache, key):
    return os.path.join(cache, ENTRY_DIR, key[:2], key)


def iter_entries(cache):
    root = os.path.join(cache, ENTRY_DIR)
    if not os.path.isdir(root):
        return
    for shard in os.listdir(root):
        shard_dir = os.path.join(root, shard)
        if not os.path.isdir(shard_dir):
            continue
        for key in os.listdir(shard_dir):
            yield os.path.join(shard_dir, key)


def entry_size(entry):
    try:
        with open(os.path.join(entry, "manifest.json")) as f:
            return int(json.load(f)["bytes"]), os.stat(os.path.join(entry, "manifest.json")).st_mtime
    except (OSError, ValueError, KeyError, TypeError):
        # An incomplete or corrupt entry: its real size, and evicted first.
        total = 0
        for dirpath, _, files in os.walk(entry):
            for name in files:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    pass
        return total, 0.0


def cache_size(cache):
    return sum(entry_size(e)[0] for e in iter_entries(cache))


def remove_entry(cache, entry):
    """Rename out of the way first (atomic for readers), then delete."""
    trash = os.path.join(cache, "tmp", f"trash.{os.getpid()}.{time.monotonic_ns()}")
    try:
        os.makedirs(os.path.dirname(trash), exist_ok=True)
        os.rename(entry, trash)
    except OSError:
        return False
    shutil.rmtree(trash, ignore_errors=True)
    return True


class Lock:
    def __init__(self, cache):
        os.makedirs(cache, exist_ok=True)
        self.fd = os.open(os.path.join(cache, "lock"), os.O_RDWR | os.O_CREAT, 0o644)

    def __enter__(self):
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def read_size_estimate(cache):
    try:
        with open(os.path.join(cache, "size")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def account(cache, added, limit, stats=None):
    """After a store: the running size estimate (<cache>/size, under the lock) grows by `added`;
    only when it passes the bound is every entry read (the real size) and the least recently
    used evicted (a hit touches manifest.json) down to EVICT_TO x limit. Stale staging
    directories of killed builds go then too. So a cold build of 650 variants does not read
    650 manifests per store."""
    with Lock(cache):
        estimate = read_size_estimate(cache)
        if estimate is not None and estimate + added <= limit:
            atomic_write(os.path.join(cache, "size"), str(estimate + added))
            return 0
        evicted, total = evict_locked(cache, limit)
        atomic_write(os.path.join(cache, "size"), str(total))
    if evicted and stats:
        stats.event("evict", count=evicted)
    return evicted


def evict_locked(cache, limit):
    entries = [(mtime, size, e) for e in iter_entries(cache) for size, mtime in [entry_size(e)]]
    total = sum(size for _, size, _ in entries)
    evicted = 0
    if total > limit:
        for mtime, size, e in sorted(entries):
            if total <= limit * EVICT_TO:
                break
            if remove_entry(cache, e):
                total -= size
                evicted += 1
    tmp = os.path.join(cache, "tmp")
    if os.path.isdir(tmp):
        now = time.time()
        for name in os.listdir(tmp):
            path = os.path.join(tmp, name)
            try:
                if now - os.lstat(path).st_mtime > STALE_TMP_SECONDS:
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                pass
    return evicted, total


# ---- stats ----

class Stats:
    def __init__(self, stats_dir, name):
        self.dir, self.name = stats_dir, name

    def event(self, kind, **fields):
        if not self.dir:
            return
        record = dict(event=kind, name=self.name, time=round(time.time(), 3), **fields)
        line = (json.dumps(record, sort_keys=True) + "\n").encode()
        try:
            os.makedirs(self.dir, exist_ok=True)
            fd = os.open(os.path.join(self.dir, "events.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)  # one write(2) with O_APPEND (local file system): lines never interleave
            finally:
                os.close(fd)
        except OSError:
            pass


# ---- the run command ----

def split_commands(argv):
    """Options before `--`; after it the generator command, then `---then` commands."""
    if "--" not in argv:
        raise SystemExit("kernel_cache.py run: missing `-- GENERATOR ARGS...`")
    cut = argv.index("--")
    options, rest = argv[:cut], argv[cut + 1:]
    commands, current = [], []
    for tok in rest:
        if tok == "---then":
            commands.append(current)
            current = []
        else:
            current.append(tok)
    commands.append(current)
    if not commands[0] or any(not c for c in commands):
        raise SystemExit("kernel_cache.py run: an empty command")
    return options, commands


def parse_run_options(options):
    import argparse
    ap = argparse.ArgumentParser(prog="kernel_cache.py run")
    ap.add_argument("--name", required=True, help="the variant (for messages and stats)")
    ap.add_argument("--out-dir", required=True, help="where the outputs go (the custom command's directory)")
    ap.add_argument("--fingerprint", help="the generator's .lbfp (kernel_cache.py fingerprint); none: not cached")
    ap.add_argument("--stats-dir", help="the build's stats (events.jsonl, keys/)")
    ap.add_argument("--root", action="append", default=[], help="NAME=PATH: a path replaced by @NAME in the key")
    ap.add_argument("--output", action="append", default=[], help="a declared output (must be produced)")
    ap.add_argument("--version-of", action="append", default=[], help="a tool whose --version enters the key")
    ap.add_argument("--keep-identical", action="store_true",
                    help="leave an output whose bytes are unchanged untouched (Ninja's restat then skips "
                         "its dependents)")
    return ap.parse_args(options)


def resolve_command(cmd):
    """(argv to run, interpreter tag or None): a Python script runs with this interpreter, which
    enters the key as python<major>.<minor> (not its path: the venv's and a pip build
    environment's share entries)."""
    if cmd[0].endswith(".py"):
        return [sys.executable] + cmd, f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return cmd, None


def generator_identity(fp_path, exe):
    """The fingerprint of `exe`, or (None, reason) when it cannot be trusted."""
    if not fp_path:
        return None, "no fingerprint"
    unreadable = f"no readable fingerprint {os.path.basename(fp_path)}"
    try:
        with open(fp_path) as f:
            fp = json.load(f)
    except (OSError, ValueError):
        return None, unreadable
    if not isinstance(fp, dict) or not isinstance(fp.get("exe"), dict):
        return None, unreadable
    try:
        st = os.stat(exe)
    except OSError:
        return None, f"no generator {exe}"
    # The fingerprint describes this very executable (written POST_BUILD of its link), not
    # an earlier one: a generator relinked without its fingerprint step is never trusted.
    if fp["exe"].get("size") != st.st_size or fp["exe"].get("mtime_ns") != st.st_mtime_ns:
        return None, "fingerprint older than the generator"
    if fp.get("uncacheable"):
        return None, f"generator not fingerprinted: {fp['uncacheable']}"
    if not isinstance(fp.get("fingerprint"), str):
        return None, unreadable
    try:
        for item in fp.get("link_inputs", []):
            try:
                lst = os.stat(item["path"])
            except OSError:
                return None, f"link input gone: {item['path']}"
            if (lst.st_size, lst.st_mtime_ns) != (item["size"], item["mtime_ns"]):
                return None, f"link input changed since the generator was linked: {item['path']}"
    except (KeyError, TypeError):
        return None, unreadable
    return fp["fingerprint"], None


def compute_key(a, commands, roots, cache):
    gen_fp, reason = generator_identity(a.fingerprint, commands[0][0])
    if gen_fp is None:
        return None, None, reason
    post = []
    for cmd in commands[1:]:
        _, interpreter = resolve_command(cmd)
        post.append(([interpreter] if interpreter else []) + [norm_token(t, roots, cache) for t in cmd])
    components = {
        "schema": KEY_SCHEMA,
        "generator": gen_fp,
        "generator_args": [norm_token(t, roots, cache) for t in commands[0][1:]],
        "post": post,
        "versions": {os.path.basename(p): tool_version(p) for p in a.version_of if p and p != "none"},
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("HL_")},
        "outputs": sorted(a.output),
    }
    key = sha256_text(json.dumps(components, sort_keys=True, separators=(",", ":")))
    return key, components, None


def compute_key_or_reason(a, commands, roots, cache):
    """compute_key(), with an unreadable input (a file gone, a tool that does not run, bytes
    that do not decode) as the reason the step runs uncached, never as a failed build."""
    try:
        return compute_key(a, commands, roots, cache)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        return None, None, f"key inputs unreadable: {e}"


def children_cpu_seconds():
    """User + system CPU seconds of this process's finished children (the generator and the
    post-processing: what a variant costs a build, whatever the build's parallelism)."""
    t = os.times()
    return t.children_user + t.children_system


def run_commands(commands, cwd):
    for cmd in commands:
        argv, _ = resolve_command(cmd)
        sys.stdout.flush()
        rc = subprocess.call(argv, cwd=cwd)
        if rc != 0:
            return rc
    return 0


def list_files(root):
    out = []
    for dirpath, _, files in os.walk(root):
        for name in files:
            out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def same_bytes(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
    except OSError:
        return False
    return sha256_file(a) == sha256_file(b)


def install(staging, files, out_dir, keep_identical):
    """Move the staged outputs into place (rename: readers never see a partial file)."""
    for rel in files:
        src, dst = os.path.join(staging, rel), os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if keep_identical and same_bytes(src, dst):
            continue
        os.replace(src, dst)


def embedded_roots(staging, files, roots):
    """The roots whose path some output embeds (such an output is not cacheable: a hit in
    another checkout would carry this checkout's path)."""
    found = set()
    for rel in files:
        with open(os.path.join(staging, rel), "rb") as f:
            data = f.read()
        for name, path in roots:
            if path.encode() in data:
                found.add(f"{name} ({rel})")
    return sorted(found)


def store(cache, key, components, staging, files, seconds, cpu, name):
    """The staged outputs as the entry of `key`; its size in bytes, or 0 when another build
    stored the key first."""
    entry = entry_path(cache, key)
    if os.path.exists(os.path.join(entry, "manifest.json")):
        return 0
    tmp_root = os.path.join(cache, "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    stage = tempfile.mkdtemp(prefix=f"{key[:16]}.", dir=tmp_root)
    try:
        manifest = {"key": key, "name": name, "created": time.time(), "seconds": round(seconds, 3),
                    "cpu_seconds": round(cpu, 3), "files": {}, "bytes": 0, "key_inputs": components}
        for rel in files:
            dst = os.path.join(stage, "files", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(staging, rel), dst)
            size = os.path.getsize(dst)
            manifest["files"][rel] = {"sha256": sha256_file(dst), "size": size}
            manifest["bytes"] += size
        with open(os.path.join(stage, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        try:
            os.rename(stage, entry)  # atomic; fails if a concurrent build stored the key first
        except OSError:
            return 0
        return manifest["bytes"]
    finally:
        if os.path.exists(stage):
            shutil.rmtree(stage, ignore_errors=True)


def fetch(cache, key, staging):
    """Copy an entry into `staging`, each file verified; (manifest, None) or (None, problem)."""
    entry = entry_path(cache, key)
    manifest_path = os.path.join(entry, "manifest.json")
    if not os.path.exists(manifest_path):
        # Entries appear and disappear whole (rename), so a directory without its manifest
        # is damage from outside; reported as corrupt, it is removed (else the key could
        # never be stored again: store()'s rename onto a non-empty directory fails).
        return None, ("entry without a manifest" if os.path.isdir(entry) else None)
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
            return None, "manifest of the wrong shape"
        if manifest.get("key") != key:
            return None, "manifest of another key"
        for rel, meta in manifest["files"].items():
            if os.path.isabs(rel) or ".." in rel.split(os.sep):
                return None, f"bad file name {rel!r}"
            dst = os.path.join(staging, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(entry, "files", rel), dst)
            if os.path.getsize(dst) != meta["size"] or sha256_file(dst) != meta["sha256"]:
                return None, f"{rel} does not match its manifest"
    except FileNotFoundError as e:
        if not os.path.exists(manifest_path):
            return None, None  # evicted while we read it: a plain miss
        return None, f"missing file: {e.filename}"
    except (OSError, ValueError, KeyError, TypeError) as e:
        return None, f"unreadable entry: {e}"
    try:
        os.utime(manifest_path)  # last use, for eviction
    except OSError:
        pass
    return manifest, None


def cmd_run(argv):
    options, commands = split_commands(argv)
    a = parse_run_options(options)
    out_dir = os.path.abspath(a.out_dir)
    os.makedirs(out_dir, exist_ok=True)
    stats = Stats(a.stats_dir, a.name)
    m = mode()
    if m == "off":
        stats.event("off")
        return run_commands(commands, out_dir)
    cache = cache_dir()
    roots = parse_roots(a.root)
    key, components, reason = compute_key_or_reason(a, commands, roots, cache)
    if key is None:
        print(f"kernel_cache: {a.name}: not cached ({reason})", file=sys.stderr)
        stats.event("bypass", reason=reason)
        return run_commands(commands, out_dir)
    if a.stats_dir:
        try:
            atomic_write(os.path.join(a.stats_dir, "keys", a.name + ".json"),
                         json.dumps({"key": key, "components": components}, indent=1, sort_keys=True))
        except OSError:
            pass

    staging = tempfile.mkdtemp(prefix=f".{a.name}.kcache.", dir=out_dir)
    try:
        manifest, problem = fetch(cache, key, staging)
        if manifest is not None and all(o in manifest["files"] for o in a.output):
            files = sorted(manifest["files"])
            if m == "verify":
                return verify(a, commands, staging, files, out_dir, stats)
            install(staging, files, out_dir, a.keep_identical)
            stats.event("hit", key=key, saved=manifest.get("seconds", 0), cpu=manifest.get("cpu_seconds"))
            return 0
        if problem or manifest is not None:
            problem = problem or "declared outputs missing from the entry"
            print(f"kernel_cache: {a.name}: corrupt cache entry {key[:16]} ({problem}): regenerating",
                  file=sys.stderr)
            stats.event("corrupt", key=key, problem=problem)
            remove_entry(cache, entry_path(cache, key))
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)

        start, cpu_start = time.monotonic(), children_cpu_seconds()
        rc = run_commands(commands, staging)
        seconds, cpu = time.monotonic() - start, children_cpu_seconds() - cpu_start
        timing = dict(seconds=round(seconds, 3), cpu=round(cpu, 3))  # (every miss event's)
        if rc != 0:
            stats.event("fail", key=key, rc=rc)
            return rc
        files = list_files(staging)
        missing = [o for o in a.output if o not in files]
        if missing:
            print(f"kernel_cache: {a.name}: the commands did not write {', '.join(missing)}", file=sys.stderr)
            stats.event("fail", key=key, missing=missing)
            return 1
        embeds = embedded_roots(staging, files, roots)
        if embeds:
            print(f"kernel_cache: {a.name}: not stored, its outputs embed {'; '.join(embeds)}", file=sys.stderr)
            stats.event("miss", key=key, stored=False, reason="embeds a path", **timing)
        # The key was computed before the commands ran; a file input edited while they ran
        # (the link script, the helper PTX, ptxas, a plugin, the generator's fingerprint)
        # may have been read in its new state, and its outputs stored under the key of the
        # old one would be a stale hit the day the old state comes back. So the key is asked
        # again and must not have changed (hashes are memoised by stat: a few stats).
        elif compute_key_or_reason(a, commands, roots, cache)[0] != key:
            print(f"kernel_cache: {a.name}: not stored, an input changed while the step ran", file=sys.stderr)
            stats.event("miss", key=key, stored=False, reason="inputs changed", **timing)
        else:
            try:
                stored = store(cache, key, components, staging, files, seconds, cpu, a.name)
                stats.event("miss", key=key, stored=bool(stored), **timing)
                if stored:
                    account(cache, stored, max_size(), stats)
            except OSError as e:  # a full or read-only cache never fails the build
                print(f"kernel_cache: {a.name}: not stored ({e})", file=sys.stderr)
                stats.event("miss", key=key, stored=False, reason=str(e), **timing)
        install(staging, files, out_dir, a.keep_identical)
        return 0
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def verify(a, commands, cached_dir, cached_files, out_dir, stats):
    """LIVEBOUND_CACHE=verify: regenerate beside the hit; any difference fails the step (a key
    that misses an input)."""
    fresh = tempfile.mkdtemp(prefix=f".{a.name}.kverify.", dir=out_dir)
    try:
        rc = run_commands(commands, fresh)
        if rc != 0:
            return rc
        fresh_files = list_files(fresh)
        diff = sorted(set(fresh_files) ^ set(cached_files))
        diff += [f for f in set(fresh_files) & set(cached_files)
                 if not same_bytes(os.path.join(fresh, f), os.path.join(cached_dir, f))]
        if diff:
            print(f"kernel_cache: {a.name}: STALE cache hit, differs from a fresh run in: {', '.join(sorted(diff))}",
                  file=sys.stderr)
            stats.event("stale", files=sorted(diff))
            return 1
        install(fresh, fresh_files, out_dir, a.keep_identical)
        stats.event("hit", verified=True)
        return 0
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


# ---- the fingerprint command ----

DROP_WITH_VALUE = {"-o", "-MT", "-MF", "-MQ"}
DROP_ALONE = {"-c", "-MD", "-MMD"}
LAUNCHERS = {"ccache", "sccache", "distcc"}


def compile_entries(compile_commands, object_dir):
    with open(compile_commands) as f:
        entries = json.load(f)
    object_dir = os.path.realpath(object_dir) + os.sep
    picked = []
    for e in entries:
        output = e.get("output")
        if output and os.path.realpath(os.path.join(e["directory"], output)).startswith(object_dir):
            picked.append(e)
    return sorted(picked, key=lambda e: e["file"])


def compiler_identity(compiler, cache):
    """Version text, machine, and the bytes of the driver and (GCC) cc1plus."""
    ident = {"driver": memo_sha256(shutil.which(compiler) or compiler, cache)}
    for flag in ("--version", "-dumpmachine"):
        done = subprocess.run([compiler, flag], capture_output=True, text=True)
        ident[flag] = done.stdout.strip()
    done = subprocess.run([compiler, "-print-prog-name=cc1plus"], capture_output=True, text=True)
    cc1 = done.stdout.strip()
    if os.path.isabs(cc1) and os.path.isfile(cc1):
        ident["cc1plus"] = memo_sha256(cc1, cache)
    return ident


def fingerprint_entry(e, roots, cache, compilers):
    argv = e.get("arguments") or shlex.split(e["command"])
    while os.path.basename(argv[0]) in LAUNCHERS:
        argv = argv[1:]
    compiler, rest = argv[0], argv[1:]
    source = os.path.normpath(os.path.join(e["directory"], e["file"]))
    flags, skip = [], False
    for tok in rest:
        if skip:
            skip = False
            continue
        if tok in DROP_WITH_VALUE:
            skip = True
            continue
        if tok in DROP_ALONE:
            continue
        if os.path.normpath(os.path.join(e["directory"], tok)) == source:
            continue
        flags.append(tok)
    # By the executable it resolves to: `c++` and `g++` (a ./run build and a pip build) are
    # one compiler, and --version names the program as it was called.
    real = os.path.realpath(shutil.which(compiler) or compiler)
    if real not in compilers:
        compilers[real] = compiler_identity(real, cache)
    # The preprocessed text without line markers: every header it includes, by content, with
    # __FILE__ and the like mapped to @ROOT; comment-only edits keep the fingerprint.
    with tempfile.TemporaryDirectory() as tmp:
        pre, deps = os.path.join(tmp, "pre.ii"), os.path.join(tmp, "pre.d")
        done = subprocess.run([compiler] + flags + ["-E", "-P", "-MD", "-MF", deps, source, "-o", pre],
                              cwd=e["directory"], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"preprocessing {source} failed: {done.stderr.strip()[:500]}")
        with open(pre, "rb") as f:
            text = f.read()
        with open(deps) as f:
            inputs = parse_depfile(f.read())
    # This text is read now, after the link; the object was compiled earlier. A source or
    # header edited in between (an edit during a long build) would give the new text to an
    # executable built from the old: its outputs stored under the new code's key, a stale hit
    # once the new code is built. So every input must be older than the object.
    object_path = os.path.join(e["directory"], e["output"])
    compiled = os.stat(object_path).st_mtime_ns
    for path in inputs:
        if os.stat(os.path.join(e["directory"], path)).st_mtime_ns > compiled:
            raise RuntimeError(f"{path} changed after {os.path.basename(object_path)} was compiled")
    for name, path in roots:
        text = text.replace(path.encode(), b"@" + name.encode())
    return {"source": replace_roots(source, roots), "compiler": compiler_identity_key(compilers[real]),
            "flags": [replace_roots(t, roots) for t in flags], "preprocessed": sha256_text(text)}


def parse_depfile(text):
    """The prerequisites of a Make-syntax dependency file (`-MD`): `target: a b \\<newline> c`,
    a space inside a name written `\\ `."""
    text = text.replace("\\\n", " ")
    _, _, prerequisites = text.partition(": ")
    names = re.findall(r"(?:\\.|[^\s\\])+", prerequisites)
    return [re.sub(r"\\(.)", r"\1", n).replace("$$", "$") for n in names]


def compiler_identity_key(ident):
    return sha256_text(json.dumps(ident, sort_keys=True))


def cmd_fingerprint(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="kernel_cache.py fingerprint")
    ap.add_argument("--exe", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--compile-commands", required=True)
    ap.add_argument("--object-dir", required=True, help="CMakeFiles/<generator>.dir of the executable")
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("--link-input", action="append", default=[], help="a library linked in (libHalide, GenGen)")
    ap.add_argument("--fact", action="append", default=[], help="k=v entering the fingerprint (link flags...)")
    a = ap.parse_args(argv)
    st = os.stat(a.exe)
    record = {"schema": KEY_SCHEMA, "exe": {"path": os.path.abspath(a.exe), "size": st.st_size,
                                             "mtime_ns": st.st_mtime_ns}}
    try:  # (also with LIVEBOUND_CACHE=off: a later build with the cache on can trust it)
        cache = cache_dir()
        roots = parse_roots(a.root)
        entries = compile_entries(a.compile_commands, a.object_dir)
        if not entries:
            raise RuntimeError(f"no compile command for {a.object_dir} in {a.compile_commands}")
        compilers = {}
        sources = [fingerprint_entry(e, roots, cache, compilers) for e in entries]
        links = []
        for path in a.link_input:
            lst = os.stat(path)
            links.append({"path": os.path.abspath(path), "size": lst.st_size, "mtime_ns": lst.st_mtime_ns,
                          "name": os.path.basename(path), "sha256": memo_sha256(path, cache)})
        components = {"sources": sources, "link_inputs": [(l["name"], l["sha256"]) for l in links],
                      "facts": sorted(replace_roots(f, roots) for f in a.fact)}
        record["components"] = components
        record["link_inputs"] = links
        record["fingerprint"] = sha256_text(json.dumps(components, sort_keys=True, separators=(",", ":")))
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        # Never fail the link: the generator's steps then run uncached, saying why.
        print(f"kernel_cache: {os.path.basename(a.exe)}: not fingerprinted ({e}); its kernels run uncached",
              file=sys.stderr)
        record["uncacheable"] = str(e)[:500]
    atomic_write(a.out, json.dumps(record, indent=1, sort_keys=True))
    return 0


# ---- summary, size, clear ----

def cmd_summary(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="kernel_cache.py summary")
    ap.add_argument("--stats-dir", required=True)
    ap.add_argument("--write", help="also write the line here (scripts/setup.sh prints it)")
    a = ap.parse_args(argv)
    events_path = os.path.join(a.stats_dir, "events.jsonl")
    consumed = os.path.join(a.stats_dir, "events.last.jsonl")
    counts, saved, spent, reasons = {}, 0.0, 0.0, {}
    if os.path.exists(events_path):
        os.replace(events_path, consumed)  # this build's events; later appends start a new file
        with open(consumed) as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                kind = ev.get("event")
                counts[kind] = counts.get(kind, 0) + (ev.get("count", 1) if kind == "evict" else 1)
                saved += ev.get("saved", 0) if kind == "hit" else 0
                spent += ev.get("seconds", 0) if kind == "miss" else 0
                if kind == "bypass":
                    reasons[ev.get("reason", "?")] = reasons.get(ev.get("reason", "?"), 0) + 1
    cache = cache_dir()
    if mode() == "off":
        line = "livebound kernel cache: off (LIVEBOUND_CACHE=off)"
        if counts.get("off"):
            line += f"; {counts['off']} generator steps ran"
    else:
        parts = [f"{counts.get('hit', 0)} hits", f"{counts.get('miss', 0)} misses"]
        for kind, label in (("corrupt", "corrupt entries regenerated"), ("bypass", "not cacheable"),
                            ("fail", "failed"), ("evict", "evicted"), ("stale", "STALE (verify)")):
            if counts.get(kind):
                parts.append(f"{counts[kind]} {label}")
        line = "livebound kernel cache: " + ", ".join(parts)
        if not counts:
            line = "livebound kernel cache: no generator step ran"
        if saved:
            line += f"; {saved / 60:.1f} min of generator time saved"
        if spent:
            line += f", {spent / 60:.1f} min spent"
        line += f"; {human(cache_size(cache))} of {human(max_size())} in {cache}"
        for reason, n in sorted(reasons.items()):
            line += f"\n  not cacheable ({n}x): {reason}"
    print(line)
    if a.write:
        atomic_write(a.write, line + "\n")
    return 0


# What needs a variant (census): its role, and the text `--variants` prints for it.
NEEDED_BY = {"runtime": "runtime",
             "full_width": "runtime, LB_FULL_WIDTH (tests, benchmarks, demo)",
             "test_or_tool": "a test or a tool (not linked into liblivebound)"}


def census_rows(build):
    """Every variant of a configured build with its facts, its role (NEEDED_BY), and its
    generation cost: the CPU-seconds of its generator step with post-processing as stored in
    its cache entry (measured when the entry was made, whichever build later hit it), else
    from this build's events; None when neither holds it."""
    stats = os.path.join(build, "kernel_cache")
    with open(os.path.join(stats, "variants.tsv")) as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    header, table = lines[0], lines[1:]
    # What the runtime dispatches: the rows of the generated tables (generated/livebound/*.inc).
    dispatched = set()
    gen_dir = os.path.join(build, "generated", "livebound")
    for fname in sorted(os.listdir(gen_dir)) if os.path.isdir(gen_dir) else []:
        if fname.endswith("_variants.inc") or fname == "batch_alternates.inc":
            with open(os.path.join(gen_dir, fname)) as f:
                dispatched.update(re.findall(r"\blb_[A-Za-z0-9_]+", f.read()))
    events = {}
    for fname in ("events.last.jsonl", "events.jsonl"):
        try:
            with open(os.path.join(stats, fname)) as f:
                for line in f:
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    if ev.get("event") == "miss" and "cpu" in ev:
                        events[ev["name"]] = ev["cpu"]
        except OSError:
            pass
    cache = cache_dir()
    rows = []
    for values in table:
        r = dict(zip(header, values))
        name = r["variant"]
        m = re.match(r"lb_(k\d+)_", name)
        r["kernel"] = m.group(1).upper() if m else "test"
        r["family"] = r["generator_target"].replace("livebound_generator_", "")
        if name not in dispatched:
            r["role"] = "test_or_tool"
        else:
            r["role"] = "full_width" if re.search(r"_full(_|$)", name) else "runtime"
        r["cpu_seconds"] = None
        try:
            with open(os.path.join(stats, "keys", name + ".json")) as f:
                key = json.load(f)["key"]
            with open(os.path.join(entry_path(cache, key), "manifest.json")) as f:
                r["cpu_seconds"] = json.load(f).get("cpu_seconds")
        except (OSError, ValueError, KeyError):
            pass
        if r["cpu_seconds"] is None:
            r["cpu_seconds"] = events.get(name)
        rows.append(r)
    return rows


def cmd_census(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="kernel_cache.py census",
                                 description="The built variants per kernel and kind, with their generation "
                                             "CPU-seconds (issue 46).")
    ap.add_argument("--build", default="build", help="a configured and built build tree (default build)")
    ap.add_argument("--variants", action="store_true", help="one line per variant instead of the table")
    a = ap.parse_args(argv)
    rows = census_rows(a.build)
    if a.variants:
        print("variant\tkernel\tkind\tcpu_seconds\tneeded_by")
        for r in sorted(rows, key=lambda r: r["variant"]):
            cpu = "" if r["cpu_seconds"] is None else f"{r['cpu_seconds']:.1f}"
            print(f"{r['variant']}\t{r['kernel']}\t{r['kind']}\t{cpu}\t{NEEDED_BY[r['role']]}")
        return 0
    groups = {}
    for r in rows:
        g = groups.setdefault((r["kernel"], r["family"], r["kind"]), dict(n=0, twins=0, other=0, cpu=0.0, unknown=0))
        g["n"] += 1
        g["twins"] += r["role"] == "full_width"
        g["other"] += r["role"] == "test_or_tool"
        if r["cpu_seconds"] is None:
            g["unknown"] += 1
        else:
            g["cpu"] += r["cpu_seconds"]
    total_cpu = sum(g["cpu"] for g in groups.values())
    print("| kernel | family | kind | variants | of which full-width twins | test/tool only "
          "| generation CPU-s | share | CPU-s per variant |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (kernel, family, kind), g in sorted(groups.items(), key=lambda kv: -kv[1]["cpu"]):
        known = g["n"] - g["unknown"]
        per = f"{g['cpu'] / known:.1f}" if known else "-"
        cpu = f"{g['cpu']:.0f}" + (f" ({g['unknown']} unknown)" if g["unknown"] else "")
        print(f"| {kernel} | {family} | {kind} | {g['n']} | {g['twins']} | {g['other']} | {cpu} "
              f"| {100 * g['cpu'] / (total_cpu or 1.0):.1f} % | {per} |")
    unknown = sum(g["unknown"] for g in groups.values())
    print(f"| all | | | {len(rows)} | {sum(g['twins'] for g in groups.values())} "
          f"| {sum(g['other'] for g in groups.values())} | {total_cpu:.0f} ({total_cpu / 60:.1f} min) | 100 % | |")
    if unknown:
        print(f"\n{unknown} variants have no recorded generation time (their entries were made before "
              f"the cache recorded CPU time, or evicted): LIVEBOUND_CACHE=off or an empty "
              f"LIVEBOUND_CACHE_DIR rebuilds them.")
    return 0


def cmd_size(argv):
    cache = cache_dir()
    n = sum(1 for _ in iter_entries(cache))
    print(f"{human(cache_size(cache))} in {n} entries, bound {human(max_size())}: {cache}")
    return 0


def cmd_clear(argv):
    cache = cache_dir()
    with Lock(cache):
        for e in list(iter_entries(cache)):
            remove_entry(cache, e)
        atomic_write(os.path.join(cache, "size"), "0")
    print(f"cleared {cache}")
    return 0


def main(argv):
    commands = {"run": cmd_run, "fingerprint": cmd_fingerprint, "summary": cmd_summary,
                "census": cmd_census, "size": cmd_size, "clear": cmd_clear}
    if len(argv) < 2 or argv[1] not in commands:
        print(__doc__.split("\n\n")[0] + "\n\nusage: kernel_cache.py {" + ",".join(commands) + "} ...",
              file=sys.stderr)
        return 2
    return commands[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
