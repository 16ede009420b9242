"""The ctypes mirrors match the C ABI: every struct's size, alignment, field names (in
order), offsets and sizes as the C++ compiler laid them out (livebound_abi_sizes, built from
python/abi_sizes.cpp), and every LB_API entry point of the headers has a prototype and is
exported by liblivebound.so. Needs no numpy."""

import ctypes
import glob
import json
import os
import re
import subprocess
import unittest

from _common import livebound
from livebound import _abi

SOURCE_DIR = os.environ.get(
    "LIVEBOUND_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)
HEADERS = sorted(glob.glob(os.path.join(SOURCE_DIR, "runtime", "include", "livebound", "*.h")))


# K7 (extend attention) runs on the CPU only so far and has no Python wrapper yet: its
# argument block and entry point are the only C ABI pieces python/ does not mirror.
NOT_YET_MIRRORED_STRUCTS = {"lb_extend_attention_args"}
NOT_YET_MIRRORED_FUNCTIONS = {"lb_extend_attention_fwd"}


def _read(path):
    with open(path) as f:
        return f.read()


def _header_text():
    return "\n".join(_read(h) for h in HEADERS)


class AbiLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        exe = os.environ.get("LIVEBOUND_ABI_SIZES")
        if not exe or not os.path.exists(exe):
            raise unittest.SkipTest("LIVEBOUND_ABI_SIZES does not name the built livebound_abi_sizes")
        cls.layout = json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)

    def test_enums_are_int_sized(self):
        for name, size in self.layout["enums"].items():
            with self.subTest(enum=name):
                self.assertEqual(size, ctypes.sizeof(_abi.c_enum))

    def test_same_structs(self):
        self.assertEqual(sorted(self.layout["structs"]), sorted(_abi.STRUCTS))

    def test_every_header_struct_is_mirrored(self):
        declared = set(re.findall(r"typedef\s+struct\s+(lb_\w+)\s*\{", _header_text()))
        declared -= NOT_YET_MIRRORED_STRUCTS
        self.assertTrue(declared)
        self.assertEqual(declared, set(_abi.STRUCTS), "structs in the headers vs python/livebound/_abi.py")

    def test_struct_layouts(self):
        for name, c in self.layout["structs"].items():
            py = _abi.STRUCTS[name]
            with self.subTest(struct=name):
                self.assertEqual(ctypes.sizeof(py), c["size"], "sizeof(%s)" % name)
                self.assertEqual(ctypes.alignment(py), c["align"], "alignof(%s)" % name)
                self.assertEqual([f[0] for f in py._fields_], [f["name"] for f in c["fields"]], "field order")
                for f in c["fields"]:
                    desc = getattr(py, f["name"])
                    self.assertEqual(desc.offset, f["offset"], "offsetof(%s, %s)" % (name, f["name"]))
                    self.assertEqual(desc.size, f["size"], "sizeof(%s::%s)" % (name, f["name"]))


class EntryPoints(unittest.TestCase):
    def test_every_lb_api_function_has_a_prototype(self):
        declared = set(re.findall(r"LB_API\s+[\w\s\*]*?\b(lb_\w+)\s*\(", _header_text()))
        self.assertIn("lb_normal_decode_set_metadata", declared)
        declared -= NOT_YET_MIRRORED_FUNCTIONS
        self.assertEqual(declared, set(_abi.FUNCTIONS), "LB_API functions vs python/livebound/_abi.py")

    def test_library_exports_them(self):
        lib = livebound.load_library()
        for name in _abi.FUNCTIONS:
            with self.subTest(function=name):
                self.assertTrue(hasattr(lib, name))

    def test_library_path_from_env(self):
        if os.environ.get("LIVEBOUND_LIB"):
            self.assertEqual(livebound.library_path(), os.environ["LIVEBOUND_LIB"])
        self.assertEqual(livebound.load_library()._livebound_path, os.path.abspath(livebound.library_path()))

    def test_version(self):
        self.assertRegex(livebound.version(), r"^\d+\.\d+")
        self.assertEqual(livebound.cuda_device_count() >= 0, True)


if __name__ == "__main__":
    unittest.main()
