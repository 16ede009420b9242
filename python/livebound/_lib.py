"""Finding and loading liblivebound.so, the entry points' prototypes, and LbError."""

import ctypes
import os
import threading

from . import _abi

_ENV = "LIVEBOUND_LIB"
_HERE = os.path.dirname(os.path.abspath(__file__))
# An installed wheel (pip install .) carries the library inside the package.
_PACKAGE_PATH = os.path.join(_HERE, "liblivebound.so")
# python/livebound/ -> <repo>/build/runtime/liblivebound.so (the project's build tree).
_BUILD_PATH = os.path.normpath(os.path.join(_HERE, "..", "..", "build", "runtime", "liblivebound.so"))

_lock = threading.Lock()
_handle = None


class LbError(RuntimeError):
    """A livebound entry point returned a non-zero lb_status.

    ``status`` is the lb_status value (``status_name`` its C name), ``message`` the text of
    ``lb_last_error()`` (it names the bad argument), ``function`` the C entry point."""

    def __init__(self, status, message, function=None):
        self.status = int(status)
        self.status_name = _abi.STATUS_NAMES.get(self.status, "lb_status %d" % self.status)
        self.message = message
        self.function = function
        where = "%s: " % function if function else ""
        super().__init__("%s%s: %s" % (where, self.status_name, message))


def library_path():
    """The path load_library() uses: $LIVEBOUND_LIB, else the one inside the package (an
    installed wheel), else <repo>/build/runtime/liblivebound.so."""
    env = os.environ.get(_ENV)
    if env:
        return env
    return _PACKAGE_PATH if os.path.exists(_PACKAGE_PATH) else _BUILD_PATH


def load_library(path=None):
    """Loads liblivebound.so (once per process) and returns the ctypes.CDLL.

    ``path`` (or library_path()) names the library.
    A second call with a different path than the loaded one raises RuntimeError."""
    global _handle
    with _lock:
        want = os.path.abspath(path) if path else os.path.abspath(library_path())
        if _handle is not None:
            if path and os.path.abspath(path) != _handle._livebound_path:
                raise RuntimeError(
                    "livebound: %s is already loaded; cannot switch to %s" % (_handle._livebound_path, path)
                )
            return _handle
        if not os.path.exists(want):
            raise OSError(
                "livebound: %s does not exist. Build it (ninja -C build) or set %s to the path "
                "of liblivebound.so" % (want, _ENV)
            )
        lib = ctypes.CDLL(want)
        for name, (restype, argtypes) in _abi.FUNCTIONS.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        lib._livebound_path = want
        _handle = lib
        return lib


def last_error():
    """lb_last_error(): the message of this thread's last failed call ("" after a success)."""
    msg = load_library().lb_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def last_variant():
    """lb_last_variant(): the AOT variant this thread's last call ran ("" after a failed call)."""
    name = load_library().lb_last_variant()
    return name.decode("utf-8", "replace") if name else ""


def version():
    """lb_version()."""
    v = load_library().lb_version()
    return v.decode("utf-8", "replace") if v else ""


def cuda_device_count():
    """lb_cuda_device_count(): CUDA devices the driver reports (0 without driver/device)."""
    return int(load_library().lb_cuda_device_count())


def cuda_device_available(index=0):
    """lb_cuda_device_available(index): True when device ``index`` can run livebound's CUDA variants."""
    return bool(load_library().lb_cuda_device_available(int(index)))


def call(name, args, device):
    """Calls entry point ``name`` with a pointer to ``args`` and ``device``; raises LbError
    (status + lb_last_error()) on a non-zero status."""
    fn = getattr(load_library(), name)
    status = fn(ctypes.byref(args), device)
    if status != _abi.LB_OK:
        raise LbError(status, last_error(), name)
