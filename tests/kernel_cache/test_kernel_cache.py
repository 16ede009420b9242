#!/usr/bin/env python3
"""Tests of tools/kernel_cache.py (issue 46) on stand-in commands: fake/fake_generator takes
Halide's generator arguments, fake/fake_link.py ptx_link's; no Halide, no compiler beyond a
`c++ -E` of a few lines (the fingerprint tests). A few seconds on one core (ctest
kernel_cache_unit, label cpu).

What they hold the cache to: it cannot serve a stale output -- changing each key input
misses (generator params, target, name, emitted outputs, plugin bytes, the generator's
fingerprint, HL_* variables, every post-processing argument, the helper PTX's bytes, the
ptxas version, the link script's bytes); a corrupt entry is detected and regenerated; a
hit is byte-identical to a miss. And it shares what it should: another checkout (other
paths, same content) hits.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "kernel_cache.py")
FAKE = os.path.join(HERE, "fake")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import kernel_cache  # noqa: E402


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    os.chmod(path, mode)


def write_fingerprint(exe, value):
    st = os.stat(exe)
    write(exe + ".lbfp", json.dumps({"schema": 1, "exe": {"size": st.st_size, "mtime_ns": st.st_mtime_ns},
                                     "fingerprint": value, "link_inputs": []}))


class Checkout:
    """A clone's build tree: its own copies (own paths) of the generator, link script, helper
    PTX and a fake ptxas, same bytes."""

    def __init__(self, top, name):
        self.root = os.path.join(top, name)
        self.build = os.path.join(self.root, "build")
        self.gen = os.path.join(self.build, "generators", "livebound_generator_fake")
        write(self.gen, read(os.path.join(FAKE, "fake_generator")), 0o755)
        write_fingerprint(self.gen, "generator-fingerprint-1")
        self.link = os.path.join(self.root, "tools", "fake_link.py")
        write(self.link, read(os.path.join(FAKE, "fake_link.py")), 0o755)
        self.helpers = os.path.join(self.root, "generators", "common", "mma_helpers.ptx")
        write(self.helpers, b"// helper ptx v1\n")
        self.ptxas = os.path.join(self.root, "cuda", "bin", "ptxas")
        self.set_ptxas_version("ptxas: release 12.8, V12.8.93")
        self.plugin = os.path.join(self.root, "venv", "halide", "lib64", "libautoschedule_fake.so")
        write(self.plugin, b"plugin v1")
        self.stats = os.path.join(self.build, "kernel_cache")

    def set_ptxas_version(self, text):
        write(self.ptxas, f"#!/bin/sh\necho '{text}'\n", 0o755)


class KernelCacheTest(unittest.TestCase):
    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="kcache-test.")
        self.cache = os.path.join(self.top, "cache")
        self.count = os.path.join(self.top, "generator-runs")
        self.a = Checkout(self.top, "clone-a")
        self.b = Checkout(self.top, "clone-b")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("HL_", "LIVEBOUND_", "FAKE_"))}
        self.env.update(LIVEBOUND_CACHE_DIR=self.cache, FAKE_GENERATOR_COUNT=self.count)

    def tearDown(self):
        shutil.rmtree(self.top, ignore_errors=True)

    def runs(self):
        try:
            return len(read(self.count).splitlines())
        except OSError:
            return 0

    def argv(self, co, name="lb_v", params=("dtype=bfloat16", "head_dim=128"), target="x86-64-linux-avx2",
             emit=("c_header", "object", "stmt"), plugin=False, link=True, link_args=(), out=None):
        ext = {"c_header": ".h", "object": ".o", "stmt": ".stmt", "stmt_html": ".stmt.html"}
        outputs = [name + ext[e] for e in emit]
        if link:
            outputs += [name + ".cubins.cpp", name + ".inlined.ptx"]
        argv = [sys.executable, TOOL, "run", "--name", name, "--out-dir", out or co.build,
                "--fingerprint", co.gen + ".lbfp", "--stats-dir", co.stats,
                "--root", f"SRC={co.root}", "--root", f"BUILD={co.build}", "--keep-identical",
                "--version-of", co.ptxas]
        for o in outputs:
            argv += ["--output", o]
        argv += ["--", co.gen, "-n", name, "-d", "0", "-g", "fake", "-f", name, "-e", ",".join(emit)]
        if plugin:
            argv += ["-p", co.plugin]
        argv += ["-o", ".", f"target={target}-no_runtime"] + list(params)
        if link:
            argv += ["---then", co.link, "--object", name + ".o", "--output", name + ".cubins.cpp",
                     "--variant", name, "--helpers", co.helpers, "--ptx-dir", ".", "--ptxas", co.ptxas] + list(link_args)
        return argv, outputs

    def step(self, co, env=None, expect_rc=0, **kw):
        argv, outputs = self.argv(co, **kw)
        e = dict(self.env)
        e.update(env or {})
        done = subprocess.run(argv, env=e, capture_output=True, text=True)
        self.assertEqual(done.returncode, expect_rc, done.stdout + done.stderr)
        out = kw.get("out") or co.build
        return {o: read(os.path.join(out, o)) for o in outputs if os.path.exists(os.path.join(out, o))}, done

    def entries(self):
        return list(kernel_cache.iter_entries(self.cache))

    def events(self, co):
        path = os.path.join(co.stats, "events.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line)["event"] for line in f]

    def assert_miss(self, co, **kw):
        before = self.runs()
        outs, _ = self.step(co, **kw)
        self.assertEqual(self.runs(), before + 1, f"expected a miss for {kw}")
        return outs

    def assert_hit(self, co, **kw):
        before = self.runs()
        outs, _ = self.step(co, **kw)
        self.assertEqual(self.runs(), before, f"expected a hit for {kw}")
        return outs

    # ---- a hit is a miss's bytes, wherever the clone lives ----

    def test_miss_then_hit_is_byte_identical(self):
        miss = self.assert_miss(self.a)
        self.assertEqual(len(miss), 5)
        self.assertEqual(len(self.entries()), 1)
        hit_b = self.assert_hit(self.b)  # another clone: other paths, same content
        self.assertEqual(hit_b, miss)
        for o in miss:
            os.remove(os.path.join(self.a.build, o))
        self.assertEqual(self.assert_hit(self.a), miss)
        self.assertEqual(self.events(self.a), ["miss", "hit"])
        self.assertEqual(self.events(self.b), ["hit"])
        # No staging directory left behind.
        self.assertFalse([n for n in os.listdir(self.a.build) if ".kcache." in n])

    def test_extra_files_of_the_post_step_are_cached(self):
        miss = self.assert_miss(self.a, link_args=["--modules", "2"])
        second = os.path.join(self.a.build, "lb_v_1.inlined.ptx")
        self.assertTrue(os.path.exists(second))
        self.assert_hit(self.b, link_args=["--modules", "2"])
        self.assertEqual(read(os.path.join(self.b.build, "lb_v_1.inlined.ptx")), read(second))
        self.assertTrue(miss)

    # ---- changing each key input misses ----

    def test_each_key_input_misses(self):
        self.assert_miss(self.a)
        self.assert_hit(self.a)
        variations = [
            ("a generator param", dict(params=("dtype=float16", "head_dim=128"))),
            ("a param added", dict(params=("dtype=bfloat16", "head_dim=128", "block_n=32"))),
            ("the target", dict(target="x86-64-linux-avx2-cuda-cuda_capability_86")),
            ("the name", dict(name="lb_w")),
            ("the emitted outputs", dict(emit=("c_header", "object", "stmt", "stmt_html"))),
            ("an autoscheduler plugin", dict(plugin=True)),
            ("a ptx_link argument", dict(link_args=["--max-registers", "32"])),
            ("no post-processing", dict(link=False)),
            ("an HL_ variable", dict(env={"HL_DEBUG_CODEGEN": "1"})),
        ]
        for what, kw in variations:
            with self.subTest(what):
                self.assert_miss(self.a, **kw)
                self.assert_hit(self.a, **kw)
        # Inputs that are files or tools, changed in place (same paths):
        changes = [
            ("the generator fingerprint", lambda: write_fingerprint(self.a.gen, "generator-fingerprint-2")),
            ("the helper PTX bytes", lambda: write(self.a.helpers, b"// helper ptx v2\n")),
            ("the ptxas version", lambda: self.a.set_ptxas_version("ptxas: release 12.9, V12.9.41")),
            ("the link script", lambda: write(self.a.link, read(self.a.link) + b"\n# edited\n", 0o755)),
            ("the plugin bytes", lambda: write(self.a.plugin, b"plugin v2")),
        ]
        for what, change in changes:
            with self.subTest(what):
                time.sleep(0.01)
                change()
                self.assert_miss(self.a, plugin=True)
                self.assert_hit(self.a, plugin=True)

    def test_paths_and_unrelated_environment_do_not_enter_the_key(self):
        self.assert_miss(self.a, plugin=True)
        self.assert_hit(self.b, plugin=True)
        self.assert_hit(self.b, plugin=True, env={"SOME_OTHER_VAR": "1", "LIVEBOUND_JOBS": "7"})
        self.assert_hit(self.b, plugin=True, out=os.path.join(self.b.build, "tests", "sub"))

    def test_input_edited_while_the_step_runs_is_not_stored(self):
        # The helper PTX changes after the key was computed, before the link step reads it:
        # its outputs belong to the new helpers, not to the key of the old ones.
        outs, done = self.step(self.a, env={"FAKE_GENERATOR_APPEND_TO": self.a.helpers})
        self.assertIn("an input changed while the step ran", done.stderr)
        self.assertEqual(self.entries(), [])
        self.assertIn(b"appended", outs["lb_v.cubins.cpp"])  # the build itself got what ran
        self.assert_miss(self.a)  # and the next step stores, under the key of what it read
        self.assertEqual(len(self.entries()), 1)

    def test_malformed_settings_and_fingerprints_never_fail_the_step(self):
        _, done = self.step(self.a, env={"LIVEBOUND_CACHE_MAX_SIZE": "lots", "LIVEBOUND_CACHE": "sometimes"})
        self.assertIn("not a size", done.stderr)
        self.assertIn("taken as on", done.stderr)
        self.assertEqual(len(self.entries()), 1)
        for garbage in ("[]", "{}", '{"exe": 1}', "not json"):
            with self.subTest(garbage):
                write(self.a.gen + ".lbfp", garbage)
                _, done = self.step(self.a)
                self.assertIn("not cached (no readable fingerprint", done.stderr)
        st = os.stat(self.a.gen)  # a current fingerprint without its value
        write(self.a.gen + ".lbfp", json.dumps({"exe": {"size": st.st_size, "mtime_ns": st.st_mtime_ns}}))
        _, done = self.step(self.a)
        self.assertIn("not cached (no readable fingerprint", done.stderr)

    def test_stale_fingerprint_is_not_trusted(self):
        self.assert_miss(self.a)
        # The generator relinked but its fingerprint was not rewritten: never a hit.
        os.utime(self.a.gen, ns=(time.time_ns(), time.time_ns() + 10**9))
        _, done = self.step(self.a)
        self.assertEqual(self.runs(), 2)
        self.assertIn("not cached", done.stderr)
        self.assertEqual(self.events(self.a)[-1], "bypass")

    # ---- corruption ----

    def corrupt(self, how):
        (entry,) = self.entries()
        if how == "flip a byte":
            path = os.path.join(entry, "files", "lb_v.o")
            data = bytearray(read(path))
            data[len(data) // 2] ^= 0x01
            write(path, bytes(data))
        elif how == "truncate a file":
            path = os.path.join(entry, "files", "lb_v.cubins.cpp")
            write(path, read(path)[:10])
        elif how == "delete a file":
            os.remove(os.path.join(entry, "files", "lb_v.h"))
        elif how == "garble the manifest":
            write(os.path.join(entry, "manifest.json"), "{not json")
        elif how == "a manifest of the wrong shape":
            write(os.path.join(entry, "manifest.json"), "[]")
        elif how == "delete the manifest":
            os.remove(os.path.join(entry, "manifest.json"))

    def test_corrupt_entry_is_detected_and_regenerated(self):
        reference = self.assert_miss(self.a)
        for how in ("flip a byte", "truncate a file", "delete a file", "garble the manifest",
                    "a manifest of the wrong shape", "delete the manifest"):
            with self.subTest(how):
                self.corrupt(how)
                outs, done = self.step(self.b)
                self.assertIn("corrupt cache entry", done.stderr)
                self.assertEqual(outs, reference)  # regenerated, never the corrupt bytes
                self.assertEqual(len(self.entries()), 1)
                self.assert_hit(self.b)  # the entry was replaced by a good one
        self.assertIn("corrupt", self.events(self.b))

    def test_verify_mode_catches_a_stale_entry(self):
        self.assert_miss(self.a)
        _, done = self.step(self.a, env={"LIVEBOUND_CACHE": "verify"})
        (entry,) = self.entries()
        # An entry whose manifest agrees with its wrong bytes (what a key missing an input
        # would serve): only regenerating shows it.
        path = os.path.join(entry, "files", "lb_v.stmt")
        write(path, b"stale")
        manifest = json.loads(read(os.path.join(entry, "manifest.json")))
        manifest["files"]["lb_v.stmt"] = {"sha256": kernel_cache.sha256_file(path), "size": 5}
        write(os.path.join(entry, "manifest.json"), json.dumps(manifest))
        _, done = self.step(self.a, env={"LIVEBOUND_CACHE": "verify"}, expect_rc=1)
        self.assertIn("STALE", done.stderr)

    # ---- failures, off, paths in outputs ----

    def test_failed_step_stores_nothing(self):
        _, done = self.step(self.a, env={"FAKE_GENERATOR_FAIL": "1"}, expect_rc=3)
        self.assertEqual(self.entries(), [])
        self.assertFalse([n for n in os.listdir(self.a.build) if n.startswith("lb_v") or ".kcache." in n])

    def test_off_touches_no_cache(self):
        outs, _ = self.step(self.a, env={"LIVEBOUND_CACHE": "off"})
        self.assertEqual(len(outs), 5)
        self.assertFalse(os.path.exists(os.path.join(self.cache, kernel_cache.ENTRY_DIR)))
        self.step(self.a, env={"LIVEBOUND_CACHE": "off"})
        self.assertEqual(self.runs(), 2)

    def test_output_embedding_a_path_is_not_stored(self):
        _, done = self.step(self.a, env={"FAKE_GENERATOR_EMBED_CWD": "1"})
        self.assertIn("not stored", done.stderr)
        self.assertEqual(self.entries(), [])

    # ---- restat, eviction, concurrency, summary ----

    def test_hit_leaves_identical_outputs_untouched(self):
        self.assert_miss(self.a)
        obj = os.path.join(self.a.build, "lb_v.o")
        os.utime(obj, ns=(10**18, 10**18))
        self.assert_hit(self.a)
        self.assertEqual(os.stat(obj).st_mtime_ns, 10**18)  # Ninja's restat skips its dependents

    def test_eviction_keeps_the_cache_bounded_least_recently_used_first(self):
        self.assert_miss(self.a, name="lb_1")
        (first,) = self.entries()
        size = kernel_cache.entry_size(first)[0]
        env = {"LIVEBOUND_CACHE_MAX_SIZE": str(int(size * 2.5))}
        time.sleep(0.02)
        self.assert_miss(self.a, name="lb_2", env=env)
        time.sleep(0.02)
        self.assert_hit(self.a, name="lb_1", env=env)  # lb_1 used last: lb_2 is the oldest now
        time.sleep(0.02)
        self.assert_miss(self.a, name="lb_3", env=env)
        self.assertLessEqual(kernel_cache.cache_size(self.cache), size * 2.5)
        self.assert_hit(self.a, name="lb_1", env=env)
        self.assert_miss(self.a, name="lb_2", env=env)

    def test_concurrent_builds_store_one_entry(self):
        procs, outs = [], []
        for k in range(4):
            out = os.path.join(self.top, f"build-{k}")
            os.makedirs(out)
            argv, outputs = self.argv(self.a, out=out)
            procs.append(subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            outs.append((out, outputs))
        for p in procs:
            _, stderr = p.communicate()
            self.assertEqual(p.returncode, 0, stderr)
        results = [{o: read(os.path.join(out, o)) for o in outputs} for out, outputs in outs]
        self.assertTrue(all(r == results[0] for r in results))
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(os.listdir(os.path.join(self.cache, "tmp")), [])

    def test_summary_line(self):
        self.assert_miss(self.a)
        self.assert_hit(self.a)
        summary = os.path.join(self.a.stats, "summary.txt")
        done = subprocess.run([sys.executable, TOOL, "summary", "--stats-dir", self.a.stats, "--write", summary],
                              env=self.env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"livebound kernel cache: 1 hits, 1 misses; .* of 4\.0 GiB in ")
        self.assertEqual(read(summary).decode().strip(), done.stdout.strip())
        # The next build's summary counts only its own steps.
        done = subprocess.run([sys.executable, TOOL, "summary", "--stats-dir", self.a.stats],
                              env=self.env, capture_output=True, text=True)
        self.assertIn("no generator step ran", done.stdout)

    def test_census_counts_variants_and_their_cpu_seconds(self):
        # Two variants made by the fake generator (one linked, one not), the table CMake writes
        # at configure time, and the runtime's generated dispatch table naming one of them.
        self.assert_miss(self.a, name="lb_k7_cuda_tc_bounded_v", link=True)
        self.assert_miss(self.a, name="lb_k7_cpu_count_full_v", link=False)
        write(os.path.join(self.a.stats, "variants.tsv"),
              "variant\tgenerator_target\tgenerator\tkind\n"
              "lb_k7_cuda_tc_bounded_v\tlivebound_generator_extend_attention\tfake\tcuda_tensor_core\n"
              "lb_k7_cpu_count_full_v\tlivebound_chunk_instruments\tfake\tcpu\n")
        write(os.path.join(self.a.build, "generated", "livebound", "k7_tc_variants.inc"),
              "LB_K7_TC(bounded, lb_k7_cuda_tc_bounded_v)\n")
        census = lambda *extra: subprocess.run([sys.executable, TOOL, "census", "--build", self.a.build, *extra],
                                               env=self.env, capture_output=True, text=True)
        done = census("--variants")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = {line.split("\t")[0]: line.split("\t") for line in done.stdout.splitlines()[1:]}
        self.assertEqual(lines["lb_k7_cuda_tc_bounded_v"][4], "runtime")
        self.assertTrue(lines["lb_k7_cpu_count_full_v"][4].startswith("a test or a tool"))
        for row in lines.values():  # the CPU time of the generator and its post-processing, from the entry
            self.assertGreaterEqual(float(row[3]), 0.0)  # (printed to 0.1 s: a stand-in step may print 0.0)
        for entry in self.entries():
            with open(os.path.join(entry, "manifest.json")) as f:
                self.assertGreater(json.load(f)["cpu_seconds"], 0.0)  # (the interpreters' start-up at least)
        done = census()
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"\| K7 \| extend_attention \| cuda_tensor_core \| 1 \| 0 \| 0 \| ")
        self.assertRegex(done.stdout, r"\| all \| \| \| 2 \| 0 \| 1 \| ")
        self.assertNotIn("no recorded generation time", done.stdout)


@unittest.skipUnless(shutil.which("c++"), "no c++ to preprocess with")
class FingerprintTest(unittest.TestCase):
    """The generator's identity from its preprocessed sources, compiler, flags and link
    inputs: the same in two clones, changed by code, flags and libHalide, not by comments."""

    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="kcache-fp.")
        self.cache = os.path.join(self.top, "cache")

    def tearDown(self):
        shutil.rmtree(self.top, ignore_errors=True)

    def clone(self, name, header="int knob() { return 1; }\n", flags="-O3 -DNDEBUG", libhalide=b"halide v1",
              compiler="/usr/bin/c++"):
        root = os.path.join(self.top, name)
        build = os.path.join(root, "build")
        write(os.path.join(root, "schedules", "knob.h"), "// the knob\n" + header)
        write(os.path.join(root, "generators", "gen.cpp"),
              '#include "knob.h"\nconst char *where() { return __FILE__; }\nint main() { return knob(); }\n')
        write(os.path.join(root, "venv", "halide", "lib64", "libHalide.so"), libhalide)
        objdir = os.path.join(build, "generators", "CMakeFiles", "gen.dir")
        os.makedirs(objdir)
        write(os.path.join(build, "compile_commands.json"), json.dumps([{
            "directory": os.path.join(build, "generators"),
            "command": f"{compiler} -I{root}/schedules {flags} -o CMakeFiles/gen.dir/gen.cpp.o "
                       f"-c {root}/generators/gen.cpp",
            "file": f"{root}/generators/gen.cpp",
            "output": "CMakeFiles/gen.dir/gen.cpp.o"}]))
        write(os.path.join(objdir, "gen.cpp.o"), b"object")  # compiled after the sources were written
        exe = os.path.join(build, "generators", "gen")
        write(exe, b"binary with /paths/" + root.encode(), 0o755)
        return root, build, exe, objdir

    def fingerprint(self, name, after_compile=None, **kw):
        """The clone's fingerprint; `after_compile(root)`: what happens between the compile
        and the fingerprint step (then the record is returned, whatever it holds)."""
        root, build, exe, objdir = self.clone(name, **kw)
        if after_compile:
            after_compile(root)
        libhalide = os.path.join(root, "venv", "halide", "lib64", "libHalide.so")
        done = subprocess.run(
            [sys.executable, TOOL, "fingerprint", "--exe", exe, "--out", exe + ".lbfp",
             "--compile-commands", os.path.join(build, "compile_commands.json"), "--object-dir", objdir,
             "--root", f"SRC={root}", "--root", f"BUILD={build}", "--root", f"HALIDE={root}/venv/halide",
             "--link-input", libhalide, "--fact", "halide=21.0.0"],
            env=dict(os.environ, LIVEBOUND_CACHE_DIR=self.cache), capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)  # never fails the link
        record = json.loads(read(exe + ".lbfp"))
        if after_compile:
            return record
        self.assertNotIn("uncacheable", record, done.stderr)
        return record["fingerprint"]

    def test_fingerprint(self):
        base = self.fingerprint("a")
        self.assertEqual(self.fingerprint("b"), base, "another clone (other paths, __FILE__ too)")
        self.assertEqual(self.fingerprint("c", header="// a comment\nint knob() { return 1; }\n"), base,
                         "a comment-only edit")
        self.assertNotEqual(self.fingerprint("d", header="int knob() { return 2; }\n"), base, "a code edit")
        self.assertNotEqual(self.fingerprint("e", flags="-O2 -DNDEBUG"), base, "a flag")
        self.assertNotEqual(self.fingerprint("f", libhalide=b"halide v2"), base, "libHalide's bytes")
        # One compiler by two names (a ./run build's c++, a pip build's g++; seen in
        # `pip install .`, which missed every entry before the compiler was resolved).
        gxx = shutil.which("g++")
        if gxx and os.path.realpath(gxx) == os.path.realpath("/usr/bin/c++"):
            self.assertEqual(self.fingerprint("g", compiler=gxx), base, "the same compiler as g++")

    def test_header_edited_after_the_compile_is_not_fingerprinted(self):
        # An edit during the build, between the generator's compile and its link: the
        # executable holds the old code, the preprocessed text would be the new.
        def edit_header(root):
            time.sleep(0.01)
            write(os.path.join(root, "schedules", "knob.h"), "int knob() { return 2; }\n")
        record = self.fingerprint("a", after_compile=edit_header)
        self.assertIn("knob.h changed after gen.cpp.o was compiled", record.get("uncacheable", ""))
        self.assertNotIn("fingerprint", record)


if __name__ == "__main__":
    unittest.main()
