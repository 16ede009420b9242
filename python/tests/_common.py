"""Shared by the python/ unittest modules: imports the package from this checkout and
numpy when it is there (tests that need it skip cleanly without it)."""

import os
import sys
import unittest

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

import livebound  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover - exercised only without numpy
    np = None

needs_numpy = unittest.skipIf(np is None, "numpy is not installed")

POISON = -7777


def poisoned(shape, dtype="int32", value=POISON):
    return np.full(shape, value, dtype=dtype)
