#!/usr/bin/env python3
"""CPU-only tests of tools/ptx_link.py.

  test_ptx_link.py                    the unit tests below (ctest ptx_link_golden)
  test_ptx_link.py --check-helpers NVCC CU PTX
                                      the checked-in helper PTX equals what NVCC makes of CU
                                      (ctest mma_helpers_ptx_current; exit 77 = skipped when
                                      NVCC is 'none')

fixtures/halide21_mma_tile.ptx is the PTX Halide 21 embeds for the smoke kernel
lb_test_mma_tile_bf16_pack_movmatrix (calls of lb_pack_bf16x2, lb_movmatrix_trans and
lb_mma_bf16_elem); fixtures/halide21_mma_tile.inlined.ptx is what ptx_link.py makes of it with
the checked-in helper PTX. When a Halide/LLVM bump changes the call syntax, the golden test
fails: update tools/ptx_link.py, then regenerate both files (the fixture from the new
build's object, with `--regenerate-golden` for the expected output).
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ptx_link  # noqa: E402

HELPERS_PTX = os.path.join(ROOT, "generators", "common", "mma_helpers.ptx")
FIXTURE = os.path.join(HERE, "fixtures", "halide21_mma_tile.ptx")
GOLDEN = os.path.join(HERE, "fixtures", "halide21_mma_tile.inlined.ptx")


def read(path):
    with open(path) as f:
        return f.read()


def kernel(body):
    """A minimal module with one entry whose body is `body` (and one mma, for the lint)."""
    return (".version 7.8\n.target sm_86\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
            "\t.reg .pred %p<4>;\n\t.reg .b32 %r<20>;\n\t.reg .f32 %f<12>;\n" + body +
            "\tmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
            "{%r5, %r6}, {%f5, %f6, %f7, %f8};\n\tret;\n}\n")


class Inliner(unittest.TestCase):
    def setUp(self):
        self.helpers = ptx_link.parse_helpers(read(HELPERS_PTX))

    def test_golden(self):
        inlined, counts = ptx_link.inline_helpers(read(FIXTURE), self.helpers)
        self.assertEqual(counts, {"lb_pack_bf16x2": 4, "lb_movmatrix_trans": 8, "lb_mma_bf16_elem": 16})
        self.assertEqual(inlined, read(GOLDEN), "inliner output differs from fixtures/halide21_mma_tile.inlined.ptx")
        census = ptx_link.lint(inlined, "fixture")
        self.assertEqual((census["mma"], census["movmatrix"]), (16, 8))

    def test_declarations_and_version(self):
        original = read(FIXTURE)
        self.assertIn(".extern .func", original)
        self.assertIn(".version 7.1", original)
        inlined, _ = ptx_link.inline_helpers(original, self.helpers)
        self.assertNotIn(".extern .func", inlined)
        self.assertIn(".version 7.8\n", inlined)
        self.assertNotIn("call", inlined.replace("callseq", ""))

    def test_unknown_call_syntax_fails(self):
        changed = read(FIXTURE).replace("call.uni (retval0), lb_pack_bf16x2", "call.uni.new (retval0), lb_pack_bf16x2", 1)
        with self.assertRaisesRegex(ptx_link.LinkError, "unknown line in a call sequence"):
            ptx_link.inline_helpers(changed, self.helpers)

    def test_helpers(self):
        self.assertEqual(sorted(self.helpers), ["lb_log2_approx", "lb_mma_bf16_elem", "lb_mma_f16_elem",
                                                "lb_movmatrix_trans", "lb_order_after", "lb_pack_bf16x2", "lb_pack_f16x2", "lb_q_get2", "lb_q_put4",
                                                "lb_share_barrier", "lb_share_barrier_group", "lb_share_get",
                                                "lb_share_get2", "lb_share_put", "lb_share_put2"])
        with self.assertRaisesRegex(ptx_link.LinkError, "control flow"):
            ptx_link.parse_helpers(".visible .func  (.param .b32 func_retval0) h(\n\t.param .b32 h_param_0\n)\n{\n"
                                   "\tld.param.u32 %r1, [h_param_0];\n$L1:\n\tbra $L1;\n\tret;\n\n}\n")

    def test_shared_array_travels_with_its_helpers(self):
        # The exchange helpers name lb_s_exchange: a module that inlines one declares it once
        # (module-local), a module that inlines none (the golden fixture) is unchanged.
        self.assertEqual(self.helpers["lb_share_put"].shared, [".shared .align 16 .b8 lb_s_exchange[24576];"])
        self.assertEqual(self.helpers["lb_share_barrier"].shared, [])
        calls = ""
        for k, (name, args) in enumerate([("lb_share_put", ["%f1", "%r1", "%r5"]), ("lb_share_barrier", ["%r2"]),
                                          ("lb_share_get", ["%r1", "%r3"]), ("lb_share_get", ["%r4", "%r3"])]):
            params = "".join(f"\t.param .b32 param{i};\n\tst.param.b32 [param{i}], {a};\n" for i, a in enumerate(args))
            calls += (f"\t{{ // callseq {k}, 0\n{params}\t.param .b32 retval0;\n"
                      f"\tcall.uni (retval0), {name}, ({', '.join(f'param{i}' for i in range(len(args)))});\n"
                      f"\tld.param.b32 %r{10 + k}, [retval0];\n\t}} // callseq {k}\n")
        inlined, counts = ptx_link.inline_helpers(kernel(calls), self.helpers)
        self.assertEqual(counts, {"lb_share_put": 1, "lb_share_barrier": 1, "lb_share_get": 2})
        self.assertEqual(inlined.count("lb_s_exchange[24576]"), 1)
        self.assertIn(".address_size 64\n\n.shared .align 16 .b8 lb_s_exchange[24576];\n", inlined)
        self.assertEqual(ptx_link.lint(inlined, "test")["bar"], 1)
        golden, _ = ptx_link.inline_helpers(read(FIXTURE), self.helpers)
        self.assertNotIn("lb_s_exchange", golden)

    def test_helper_returning_64_bits(self):
        # lb_share_get2 returns two floats in one .b64 register: the call's 64-bit result
        # register takes the helper's, and its 8-byte shared load stays one instruction.
        calls = ("\t{ // callseq 0, 0\n\t.param .b32 param0;\n\tst.param.b32 [param0], %r1;\n"
                 "\t.param .b32 param1;\n\tst.param.b32 [param1], %r2;\n\t.param .b64 retval0;\n"
                 "\tcall.uni (retval0), lb_share_get2, (param0, param1);\n"
                 "\tld.param.b64 %rd7, [retval0];\n\t} // callseq 0\n")
        inlined, counts = ptx_link.inline_helpers(kernel("\t.reg .b64 %rd<8>;\n" + calls), self.helpers)
        self.assertEqual(counts, {"lb_share_get2": 1})
        self.assertEqual(len(re.findall(r"ld\.shared\.u64", inlined)), 1)
        self.assertRegex(inlined, r"mov\.b64 \t%rd7, %lbi1_rd1;")
        self.assertIn(".shared .align 16 .b8 lb_s_exchange[24576];", inlined)

    def test_halide_shared_allocation_beside_the_exchange_fails(self):
        # Halide's GPUShared allocations start at shared address 0, where the exchange's static
        # array also is: a kernel with a Halide shared access and an exchange call is refused;
        # either one alone links.
        put = ("\t{ // callseq 0, 0\n\t.param .b32 param0;\n\tst.param.b32 [param0], %f1;\n"
               "\t.param .b32 param1;\n\tst.param.b32 [param1], %r1;\n\t.param .b32 param2;\n"
               "\tst.param.b32 [param2], %r5;\n\t.param .b32 retval0;\n"
               "\tcall.uni (retval0), lb_share_put, (param0, param1, param2);\n"
               "\tld.param.b32 %r10, [retval0];\n\t} // callseq 0\n")
        halide_shared = "\t.reg .b64 %rd<4>;\n\tmul.wide.u32 %rd1, %r2, 4;\n\tst.shared.v4.b32 [%rd1], {%r1, %r2, %r3, %r4};\n"
        with self.assertRaisesRegex(ptx_link.LinkError, r"k accesses a Halide GPUShared allocation and calls lb_share_put"):
            ptx_link.inline_helpers(kernel(halide_shared + put), self.helpers)
        inlined, counts = ptx_link.inline_helpers(kernel(put), self.helpers)
        self.assertEqual(counts, {"lb_share_put": 1})
        self.assertIn("st.shared", inlined)  # the helper's own store, after inlining
        _, counts = ptx_link.inline_helpers(kernel(halide_shared), self.helpers)
        self.assertEqual(counts, {})

    def test_exchange_size_agrees(self):
        # The exchange's size is written twice: the array in mma_helpers.cu (and its PTX) and
        # kShareExchangeFloats in mma.h, against which the generator checks its indices.
        common = os.path.join(ROOT, "generators", "common")
        header = re.search(r"kShareExchangeFloats = (\d+);", read(os.path.join(common, "mma.h")))
        array = re.search(r"lb_s_exchange\[(\d+)\];", read(os.path.join(common, "mma_helpers.cu")))
        self.assertIsNotNone(header)
        self.assertIsNotNone(array)
        self.assertEqual(header.group(1), array.group(1))
        self.assertEqual(self.helpers["lb_share_put"].shared, [f".shared .align 16 .b8 lb_s_exchange[{4 * int(array.group(1))}];"])


class Lint(unittest.TestCase):
    def test_lane_dependent_branch_fails(self):
        # %tid.x -> %r10 -> (loop-carried through %r12, defined after its use) -> %p1 -> bra.
        body = ("\tmov.u32 %r10, %tid.x;\n\tmov.u32 %r12, 0;\n$L__BB0_1:\n\tsetp.lt.s32 %p1, %r12, 5;\n"
                "\t@%p1 bra $L__BB0_2;\n\tadd.s32 %r11, %r10, 1;\n\tmov.u32 %r12, %r11;\n$L__BB0_2:\n")
        with self.assertRaisesRegex(ptx_link.LinkError, "lane-dependent predicate %p1"):
            ptx_link.lint(kernel(body), "test")
        with self.assertRaisesRegex(ptx_link.LinkError, "lane-dependent predicate %p2"):
            ptx_link.lint(kernel("\tmov.u32 %r10, %laneid;\n\tsetp.eq.s32 %p2, %r10, 0;\n\t@!%p2 bra $L1;\n$L1:\n"),
                          "test")

    def test_epilogue_branches_pass_only_after_the_last_collective(self):
        # A lane-dependent branch after the last mma (a store skipped per lane) passes...
        store = "\tmov.u32 %r10, %tid.x;\n\tsetp.lt.s32 %p1, %r10, 3;\n\t@%p1 bra $L9;\n\tst.global.u32 [%r10], %r10;\n$L9:\n"
        module = kernel("")
        after = module.replace("\tret;\n}", store + "\tret;\n}")
        self.assertEqual(ptx_link.lint(after, "test")["epilogue_branches"], 1)
        # ... but not one from there back to a label before the mma (the mma would run again
        # under the divergence),
        looped = module.replace("\tmma.sync", "$L0:\n\tmma.sync").replace(
            "\tret;\n}", store + "\tbra.uni $L0;\n\tret;\n}")
        with self.assertRaisesRegex(ptx_link.LinkError, "lane-dependent predicate %p1"):
            ptx_link.lint(looped, "test")
        # and not one before the mma.
        with self.assertRaisesRegex(ptx_link.LinkError, "lane-dependent predicate %p1"):
            ptx_link.lint(kernel(store), "test")

    def test_uniform_branches_pass(self):
        # %tid.y (warp index), %ctaid.x and a kernel parameter are uniform across a warp; a
        # lane-dependent predicate that guards no branch (selp) is fine.
        body = ("\tmov.u32 %r10, %tid.y;\n\tmov.u32 %r11, %ctaid.x;\n\tld.param.u32 %r13, [k_param_0];\n"
                "\tadd.s32 %r12, %r10, %r11;\n\tsetp.lt.s32 %p1, %r12, %r13;\n\t@%p1 bra $L1;\n$L1:\n"
                "\tmov.u32 %r14, %tid.x;\n\tsetp.lt.s32 %p2, %r14, 3;\n\tselp.b32 %r15, 1, 2, %p2;\n")
        census = ptx_link.lint(kernel(body), "test")
        self.assertEqual((census["mma"], census["bra"]), (1, 1))

    def test_barrier_after_a_thread_dependent_branch_fails(self):
        # A branch on the warp index (%tid.y) is uniform for mma, but a block barrier after it
        # would not be reached by every warp; after the last barrier it is fine.
        branch = "\tmov.u32 %r10, %tid.y;\n\tsetp.lt.s32 %p1, %r10, 2;\n\t@%p1 bra $L1;\n$L1:\n"
        with self.assertRaisesRegex(ptx_link.LinkError, "before the block barrier"):
            ptx_link.lint(kernel(branch + "\tbar.sync 0;\n"), "test")
        self.assertEqual(ptx_link.lint(kernel("\tbar.sync 0;\n" + branch), "test")["bar"], 1)

    def test_q_tile_barrier_allows_branches_on_the_q_tile(self):
        # Several q tiles per block: every barrier is a q tile's (bar.sync id, count), which
        # the threads of one %tid.z must reach; a branch on %tid.z before it passes, one on
        # %tid.y (a warp of the q tile) does not, nor does %tid.z before a whole-block barrier.
        def branch(tid):
            return f"\tmov.u32 %r10, %tid.{tid};\n\tsetp.lt.s32 %p1, %r10, 2;\n\t@%p1 bra $L1;\n$L1:\n"
        group = "\tmov.u32 %r20, 1;\n\tmov.u32 %r21, 128;\n\tbar.sync %r20, %r21;\n"
        self.assertEqual(ptx_link.lint(kernel(branch("z") + group), "test")["bar"], 1)
        with self.assertRaisesRegex(ptx_link.LinkError, "before the q tile barrier"):
            ptx_link.lint(kernel(branch("y") + group), "test")
        with self.assertRaisesRegex(ptx_link.LinkError, "before the block barrier"):
            ptx_link.lint(kernel(branch("z") + group + "\tbar.sync 0;\n"), "test")

    def test_taint_through_loads_and_guards(self):
        # A value loaded from a lane-dependent address, and one written under a
        # lane-dependent guard, are lane-dependent.
        body = ("\tmov.u32 %r10, %tid.x;\n\tld.global.u32 %r11, [%r10];\n\tsetp.eq.s32 %p1, %r11, 0;\n"
                "\t@%p1 mov.u32 %r12, 1;\n\tsetp.eq.s32 %p3, %r12, 0;\n\t@%p3 bra $L1;\n$L1:\n")
        with self.assertRaisesRegex(ptx_link.LinkError, "lane-dependent predicate %p3"):
            ptx_link.lint(kernel(body), "test")

    def test_calls_local_memory_and_missing_mma_fail(self):
        with self.assertRaisesRegex(ptx_link.LinkError, "call"):
            ptx_link.lint(kernel("\tcall.uni (retval0), f, (param0);\n"), "test")
        with self.assertRaisesRegex(ptx_link.LinkError, "local memory"):
            ptx_link.lint(kernel("\tld.local.u32 %r11, [%r10];\n"), "test")
        with self.assertRaisesRegex(ptx_link.LinkError, "no mma.sync"):
            ptx_link.lint(kernel("").replace("mma.sync", "mma_sync_removed"), "test")


class RegisterCap(unittest.TestCase):
    def test_every_entry_gets_maxnreg(self):
        two = (".version 7.1\n.target sm_86\n.visible .entry a(\n\t.param .u64 a_param_0\n)\n{\n\tret;\n}\n"
               ".visible .entry b(\n\t.param .u32 b_param_0,\n\t.param .u32 b_param_1\n)\n{\n\tret;\n}\n")
        capped = ptx_link.cap_registers(two, 32)
        self.assertEqual(capped.count(")\n.maxnreg 32\n{"), 2)
        self.assertEqual(capped.replace("\n.maxnreg 32", ""), two)
        with self.assertRaisesRegex(ptx_link.LinkError, "no kernel entry"):
            ptx_link.cap_registers(".version 7.1\n", 32)

    def test_plain_variant_end_to_end(self):
        # A variant without tensor cores: no helpers, no tensor-core lint (its branches on
        # %tid.x are fine), the cap on its entry, the original PTX's hash as the key.
        text = (b"//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.1\n.target sm_86\n"
                b".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tmov.u32 %r1, %tid.x;\n"
                b"\tsetp.lt.s32 %p1, %r1, 3;\n\t@%p1 bra $L1;\n$L1:\n\tret;\n}\n")
        with tempfile.TemporaryDirectory() as tmp:
            obj, out = os.path.join(tmp, "p.o"), os.path.join(tmp, "p.cubins.cpp")
            with open(obj, "wb") as f:
                f.write(b"\x7fELF\x00" + text + b"\x00")
            done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "ptx_link.py"), "--plain", "--object",
                                   obj, "--output", out, "--ptxas", "none", "--max-registers", "32"],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("plain; .maxnreg 32", done.stdout)
            source = read(out)
            self.assertIn('".maxnreg 32\\n"', source)
            self.assertIn("{0x%016xull, nullptr, 0, kPtx0, \"p\"}" % ptx_link.fnv1a64(text), source)
            # Without --plain the same module is a tensor-core variant with no helpers given.
            done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "ptx_link.py"), "--object", obj,
                                   "--output", out, "--ptxas", "none"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 1)
            self.assertIn("--helpers is needed", done.stderr)


class Extraction(unittest.TestCase):
    def test_fnv1a64(self):
        self.assertEqual(ptx_link.fnv1a64(b""), 0xCBF29CE484222325)
        self.assertEqual(ptx_link.fnv1a64(b"a"), 0xAF63DC4C8601EC8C)
        self.assertEqual(ptx_link.fnv1a64(b"foobar"), 0x85944171F73967E8)

    def test_modules_between_nuls(self):
        first = b"//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.1\n"
        second = b"//\n// Generated by LLVM NVPTX Back-End\n//\n.version 8.0\n"
        obj = b"\x7fELF\x00junk\x00" + first + b"\x00\x00pad\x00" + second + b"\x00tail"
        self.assertEqual(ptx_link.extract_ptx_modules(obj), [first, second])
        with self.assertRaises(ptx_link.LinkError):
            ptx_link.extract_ptx_modules(b"\x00xx" + first + b"\x00")

    def test_end_to_end_without_ptxas(self):
        text = read(FIXTURE).encode()
        with tempfile.TemporaryDirectory() as tmp:
            obj, out = os.path.join(tmp, "v.o"), os.path.join(tmp, "v.cubins.cpp")
            with open(obj, "wb") as f:
                f.write(b"\x7fELF\x00" + text + b"\x00")
            done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "ptx_link.py"), "--object", obj,
                                   "--helpers", HELPERS_PTX, "--output", out, "--ptxas", "none"],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            source = read(out)
            self.assertIn('extern "C" const lb_cubin_entry lb_cubins_v[]', source)
            self.assertIn("{0x%016xull, nullptr, 0, kPtx0, \"v\"}" % ptx_link.fnv1a64(text), source)
            # A lint failure (here: a call of a function that is no helper) names the variant
            # and fails the build.
            with open(obj, "wb") as f:
                f.write(b"\x00" + text.replace(b"lb_movmatrix_trans", b"lb_not_a_helper") + b"\x00")
            done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "ptx_link.py"), "--object", obj,
                                   "--helpers", HELPERS_PTX, "--output", out, "--ptxas", "none", "--variant", "lb_x"],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 1)
            self.assertIn("tensor-core variant lb_x", done.stderr)


def check_helpers(nvcc, cu, ptx):
    if nvcc == "none":
        print("no nvcc: the checked-in helper PTX cannot be compared")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, "mma_helpers.ptx")
        subprocess.run([nvcc, "-arch=sm_90", "-rdc=true", "-O3", "-ptx", cu, "-o", fresh], check=True)
        # Comments name the compiler build; the code must match line for line.
        code = lambda text: [l.rstrip() for l in text.split("\n") if l.strip() and not l.lstrip().startswith("//")]
        if code(read(fresh)) != code(read(ptx)):
            print(f"{ptx} is not what {nvcc} makes of {cu}: regenerate it with\n"
                  f"  nvcc -arch=sm_90 -rdc=true -O3 -ptx {cu} -o {ptx}")
            return 1
    print("checked-in helper PTX is current")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--check-helpers":
        sys.exit(check_helpers(*sys.argv[2:]))
    if len(sys.argv) == 2 and sys.argv[1] == "--regenerate-golden":
        inlined, _ = ptx_link.inline_helpers(read(FIXTURE), ptx_link.parse_helpers(read(HELPERS_PTX)))
        with open(GOLDEN, "w") as f:
            f.write(inlined)
        sys.exit(0)
    unittest.main()
