"""Shared by the python/ unittest modules: imports the package from this checkout (or, with
LIVEBOUND_TEST_INSTALLED=1, the installed one: python/tests/wheel_test.sh) and numpy when it
is there (tests that need it skip cleanly without it)."""

import os
import sys
import unittest

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INSTALLED = os.environ.get("LIVEBOUND_TEST_INSTALLED") == "1"
if not _INSTALLED and _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

import livebound  # noqa: E402

if _INSTALLED and os.path.abspath(livebound.__file__).startswith(_PYTHON_DIR + os.sep):
    raise RuntimeError("LIVEBOUND_TEST_INSTALLED=1, but livebound was imported from the checkout: " + livebound.__file__)

try:
    import numpy as np
except ImportError:  # pragma: no cover - exercised only without numpy
    np = None

needs_numpy = unittest.skipIf(np is None, "numpy is not installed")

POISON = -7777


def poisoned(shape, dtype="int32", value=POISON):
    return np.full(shape, value, dtype=dtype)
