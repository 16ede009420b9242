"""The ctypes mirrors match the C ABI: every struct's size, alignment, field names (in
order), offsets and sizes as the C++ compiler laid them out (livebound_abi_sizes, built from
python/abi_sizes.cpp), the same against the headers' text (field names in order and the
ctypes type of each C type), and every LB_API entry point of the headers has a prototype
and is exported by liblivebound.so. Needs no numpy."""

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


def _read(path):
    with open(path) as f:
        return f.read()


def _header_text():
    return "\n".join(_read(h) for h in HEADERS)


# C types of the headers' struct fields -> their ctypes mirror (every lb_* enum is c_enum).
_C_TYPES = {
    "lb_tensor": _abi.lb_tensor,
    "int64_t": ctypes.c_int64,
    "int32_t": ctypes.c_int32,
    "float": ctypes.c_float,
    "void *": ctypes.c_void_p,
    "lb_variant": _abi.c_enum,
    "lb_dtype": _abi.c_enum,
    "lb_device_type": _abi.c_enum,
}
_ARRAY_LENGTHS = {"LB_MAX_DIMS": _abi.LB_MAX_DIMS}


def _header_structs():
    """{struct name: [(field, C type, array length or None)]} parsed from the headers, in
    declaration order; 'float k_scale, v_scale;' gives two fields."""
    text = re.sub(r"/\*.*?\*/", " ", _header_text(), flags=re.S)
    structs = {}
    for name, body in re.findall(r"typedef\s+struct\s+(lb_\w+)\s*\{(.*?)\}\s*\1\s*;", text, flags=re.S):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.match(r"^(\w+)\s*(\*?)\s*(.*)$", decl)
            assert m, "cannot parse %r in %s" % (decl, name)
            ctype = m.group(1) + (" *" if m.group(2) else "")
            for declarator in m.group(3).split(","):
                d = re.match(r"^\s*(\w+)\s*(?:\[\s*(\w+)\s*\])?\s*$", declarator)
                assert d, "cannot parse %r in %s" % (declarator, name)
                length = d.group(2)
                if length is not None:
                    length = _ARRAY_LENGTHS.get(length, None) if not length.isdigit() else int(length)
                fields.append((d.group(1), ctype, length))
        structs[name] = fields
    return structs


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


class HeaderDeclarations(unittest.TestCase):
    """The mirrors against the headers' text (needs no build): every struct, its fields in
    order, and each field's ctypes type for its C type."""

    @classmethod
    def setUpClass(cls):
        cls.structs = _header_structs()

    def test_every_header_struct_is_mirrored(self):
        declared = set(re.findall(r"typedef\s+struct\s+(lb_\w+)\s*\{", _header_text()))
        self.assertIn("lb_extend_attention_args", declared)
        self.assertIn("lb_extend_attention_unified_args", declared)
        self.assertEqual(declared, set(self.structs), "the parser missed a struct")
        self.assertEqual(declared, set(_abi.STRUCTS), "structs in the headers vs python/livebound/_abi.py")

    def test_fields_and_types(self):
        for name, fields in self.structs.items():
            py = _abi.STRUCTS[name]
            with self.subTest(struct=name):
                self.assertEqual([f[0] for f in py._fields_], [f[0] for f in fields], "field order")
                for (field, ctype, length), (_, pytype) in zip(fields, py._fields_):
                    self.assertIn(ctype, _C_TYPES, "%s.%s: C type %s" % (name, field, ctype))
                    want = _C_TYPES[ctype]
                    if length is None:
                        self.assertIs(pytype, want, "%s.%s (%s)" % (name, field, ctype))
                    else:
                        self.assertTrue(issubclass(pytype, ctypes.Array), "%s.%s is an array" % (name, field))
                        self.assertIs(pytype._type_, want, "%s.%s element type" % (name, field))
                        self.assertEqual(pytype._length_, length, "%s.%s length" % (name, field))

    def test_attention_structs(self):
        # K7/K8: the scalar tail exactly as declared (the float block, then the int32 flags).
        k7 = [f for f in _abi.lb_extend_attention_args._fields_ if f[1] is not _abi.lb_tensor]
        self.assertEqual(
            [f[0] for f in k7],
            ["max_len_extend", "is_causal", "sliding_window_size", "sm_scale", "logit_cap", "k_scale", "v_scale",
             "skip_prefix_custom_mask", "xai_temperature_len", "skip_prefix", "skip_extend", "variant"])
        self.assertEqual(sum(1 for f in _abi.lb_extend_attention_args._fields_ if f[1] is _abi.lb_tensor), 14)
        k8 = [f for f in _abi.lb_extend_attention_unified_args._fields_ if f[1] is not _abi.lb_tensor]
        self.assertEqual(
            [f[0] for f in k8],
            ["max_len_extend", "is_causal", "sliding_window_size", "sm_scale", "logit_cap", "k_scale", "v_scale",
             "xai_temperature_len", "variant"])
        self.assertEqual(sum(1 for f in _abi.lb_extend_attention_unified_args._fields_ if f[1] is _abi.lb_tensor), 11)
        for cls in (_abi.lb_extend_attention_args, _abi.lb_extend_attention_unified_args):
            # 8-byte alignment (lb_tensor's pointer, the int64 fields); the int32 tail follows
            # max_len_extend without padding.
            self.assertEqual(ctypes.alignment(cls), 8)
            self.assertEqual(cls.max_len_extend.offset % 8, 0)
            self.assertEqual(cls.is_causal.offset, cls.max_len_extend.offset + 8)


class EntryPoints(unittest.TestCase):
    def test_every_lb_api_function_has_a_prototype(self):
        declared = set(re.findall(r"LB_API\s+[\w\s\*]*?\b(lb_\w+)\s*\(", _header_text()))
        self.assertIn("lb_normal_decode_set_metadata", declared)
        self.assertIn("lb_extend_attention_fwd", declared)
        self.assertIn("lb_extend_attention_fwd_unified", declared)
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
