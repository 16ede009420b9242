"""Converting torch tensors and numpy arrays to lb_tensor, and picking the lb_device.

Only types are converted here; the C ABI validates everything else (shapes, strides,
values, devices) and names the argument when something is wrong. torch is never imported
by this module: a torch tensor is recognised through ``sys.modules["torch"]``, which is
there whenever the caller holds one. numpy likewise.
"""

import ctypes
import sys

from . import _abi

_INT_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uintptr": (0, 2**64 - 1),
}

VARIANTS = {
    "bounded": _abi.LB_BOUNDED,
    "full_width": _abi.LB_FULL_WIDTH,
    "full-width": _abi.LB_FULL_WIDTH,
    "full": _abi.LB_FULL_WIDTH,
}


_TORCH_DTYPES = (
    ("int32", _abi.LB_INT32),
    ("int64", _abi.LB_INT64),
    ("uint8", _abi.LB_UINT8),
    ("float16", _abi.LB_FLOAT16),
    ("bfloat16", _abi.LB_BFLOAT16),
    ("float32", _abi.LB_FLOAT32),
    ("float8_e4m3fn", _abi.LB_FLOAT8_E4M3FN),  # (torch >= 2.1; absent attributes are skipped)
)
_TORCH_NAMES = ", ".join("torch." + n for n, _ in _TORCH_DTYPES)
_NUMPY_NAMES = "int32, int64, uint8, float16, float32; bfloat16 through livebound.as_bfloat16"


def _torch_dtypes(torch):
    return {getattr(torch, n): v for n, v in _TORCH_DTYPES if hasattr(torch, n)}


class BFloat16Array:
    """A numpy array of 16-bit integers holding bfloat16 bit patterns (the upper half of
    the float32 bits), which livebound describes as LB_BFLOAT16: numpy has no bfloat16.
    Made by as_bfloat16(); ``bits`` is the array (the kernel reads and writes its memory)."""

    __slots__ = ("bits",)

    def __init__(self, bits):
        self.bits = bits

    @property
    def shape(self):
        return self.bits.shape

    def __repr__(self):
        return "livebound.as_bfloat16(%r)" % (self.bits,)


def as_bfloat16(bits):
    """Marks ``bits``, a numpy uint16 (or int16) array of bfloat16 bit patterns, as a
    bfloat16 tensor for livebound: ``livebound.as_bfloat16(o_bits)`` passed as an output
    makes the kernel write bfloat16 values into ``o_bits``. (A numpy array whose dtype is
    named "bfloat16", as ml_dtypes' is, is taken as bfloat16 directly; torch tensors carry
    torch.bfloat16 themselves.)"""
    np = sys.modules.get("numpy")
    if np is None or not isinstance(bits, np.ndarray):
        raise TypeError("livebound.as_bfloat16: expected a numpy.ndarray of uint16 bit patterns, got %s"
                        % type(bits).__name__)
    if bits.dtype.kind not in "ui" or bits.dtype.itemsize != 2:
        raise TypeError("livebound.as_bfloat16: expected dtype uint16 (bfloat16 bit patterns), got %s" % bits.dtype)
    return BFloat16Array(bits)


def is_torch_tensor(x):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def is_numpy_array(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


class Call:
    """The conversions of one kernel call: every tensor argument goes through tensor(),
    which also settles the call's device (all tensors on one device: the CPU, or one CUDA
    device); device() then gives the lb_device."""

    def __init__(self, function):
        self.function = function  # Python name, for messages
        self._device = None  # ("cpu", 0) or ("cuda", index)
        self._device_arg = None  # the argument that fixed it
        self._keep = []  # objects whose memory the descriptors point into

    # ---- errors -------------------------------------------------------------------------
    def _type_error(self, name, what):
        return TypeError("livebound.%s: argument '%s': %s" % (self.function, name, what))

    def _value_error(self, name, what):
        return ValueError("livebound.%s: argument '%s': %s" % (self.function, name, what))

    # ---- tensors ------------------------------------------------------------------------
    def tensor(self, name, x, optional=False, bool_as_uint8=False):
        """lb_tensor describing ``x`` (torch.Tensor, numpy.ndarray or as_bfloat16(array));
        None gives the all-zero 'absent' descriptor when ``optional`` (else a TypeError
        naming it). ``bool_as_uint8``: a bool tensor is described as uint8 (one byte, 0/1),
        for masks."""
        t = _abi.lb_tensor()
        if x is None:
            if optional:
                return t
            raise self._type_error(name, "a tensor is required, got None")
        if is_torch_tensor(x):
            self._torch(name, x, t, bool_as_uint8)
        elif is_numpy_array(x):
            self._numpy(name, x, t, bool_as_uint8)
        elif isinstance(x, BFloat16Array):
            self._numpy(name, x.bits, t, False, _abi.LB_BFLOAT16)
        else:
            raise self._type_error(
                name, "expected a torch.Tensor or numpy.ndarray, got %s" % type(x).__name__
            )
        self._keep.append(x)
        return t

    def _set_shape(self, name, t, shape, strides):
        ndim = len(shape)
        if ndim > _abi.LB_MAX_DIMS:
            raise self._value_error(
                name,
                "%d dimensions (shape %s): livebound takes tensors of at most %d dimensions"
                % (ndim, list(shape), _abi.LB_MAX_DIMS),
            )
        t.ndim = ndim
        for d in range(ndim):
            t.shape[d] = int(shape[d])
            t.strides[d] = int(strides[d])

    def _torch(self, name, x, t, bool_as_uint8=False):
        torch = sys.modules["torch"]
        dtype = _torch_dtypes(torch).get(x.dtype)
        if dtype is None and bool_as_uint8 and x.dtype == getattr(torch, "bool", None):
            dtype = _abi.LB_UINT8
        if dtype is None:
            raise self._type_error(name, "dtype %s is not supported (%s)" % (x.dtype, _TORCH_NAMES))
        dev = x.device
        if dev.type == "cpu":
            self._use_device(name, ("cpu", 0))
        elif dev.type == "cuda":
            index = dev.index if dev.index is not None else torch.cuda.current_device()
            self._use_device(name, ("cuda", int(index)))
        else:
            raise self._type_error(name, "device %s is not supported (cpu or cuda)" % dev)
        t.data = x.data_ptr() or None
        t.dtype = dtype
        self._set_shape(name, t, tuple(x.shape), x.stride())

    def _numpy(self, name, x, t, bool_as_uint8=False, dtype=None):
        dt = x.dtype
        if dtype is not None:
            pass  # as_bfloat16: 16-bit integers checked there
        elif dt.kind == "i" and dt.itemsize == 4:
            dtype = _abi.LB_INT32
        elif dt.kind == "i" and dt.itemsize == 8:
            dtype = _abi.LB_INT64
        elif dt.kind == "u" and dt.itemsize == 1:
            dtype = _abi.LB_UINT8
        elif dt.kind == "f" and dt.itemsize == 2:
            dtype = _abi.LB_FLOAT16
        elif dt.kind == "f" and dt.itemsize == 4:
            dtype = _abi.LB_FLOAT32
        elif dt.name == "bfloat16" and dt.itemsize == 2:  # ml_dtypes.bfloat16
            dtype = _abi.LB_BFLOAT16
        elif dt.kind == "b" and bool_as_uint8:
            dtype = _abi.LB_UINT8
        else:
            raise self._type_error(name, "dtype %s is not supported (%s)" % (dt, _NUMPY_NAMES))
        if not dt.isnative:
            raise self._type_error(name, "dtype %s is not in native byte order" % dt.str)
        strides = []
        for s in x.strides:
            if s % dt.itemsize:
                raise self._value_error(
                    name, "byte strides %s are not multiples of the element size %d" % (x.strides, dt.itemsize)
                )
            strides.append(s // dt.itemsize)
        self._use_device(name, ("cpu", 0))
        t.data = x.ctypes.data or None
        t.dtype = dtype
        self._set_shape(name, t, x.shape, strides)

    def _use_device(self, name, device):
        if self._device is None:
            self._device, self._device_arg = device, name
        elif self._device != device:
            raise self._value_error(
                name,
                "on %s, but '%s' is on %s (one call runs on one device)"
                % (_device_str(device), self._device_arg, _device_str(self._device)),
            )

    # ---- scalars ------------------------------------------------------------------------
    def integer(self, name, value, ctype="int32"):
        """``value`` as a Python int that fits the C field (else TypeError/OverflowError
        naming it: ctypes would wrap it silently)."""
        if isinstance(value, bool):
            value = int(value)
        try:
            v = value.__index__()
        except (AttributeError, TypeError):
            raise self._type_error(name, "expected an integer, got %s" % type(value).__name__) from None
        lo, hi = _INT_RANGES[ctype]
        if not lo <= v <= hi:
            raise OverflowError("livebound.%s: argument '%s': %d does not fit in %s" % (self.function, name, v, ctype))
        return v

    def flag(self, name, value):
        return 1 if value else 0

    def real(self, name, value):
        """``value`` (a Python, numpy or 0-d torch number on the host) as a Python float for a
        C float field (else a TypeError naming it). Range and finiteness: the C ABI."""
        if isinstance(value, (str, bytes)) or value is None:
            raise self._type_error(name, "expected a number, got %s" % type(value).__name__)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise self._type_error(name, "expected a number, got %s" % type(value).__name__) from None

    def variant(self, value):
        if isinstance(value, str):
            v = VARIANTS.get(value.lower())
            if v is None:
                raise self._value_error("variant", "expected 'bounded' or 'full_width', got %r" % value)
            return v
        v = self.integer("variant", value)
        if v not in (_abi.LB_BOUNDED, _abi.LB_FULL_WIDTH):
            raise self._value_error("variant", "expected LB_BOUNDED (0) or LB_FULL_WIDTH (1), got %d" % v)
        return v

    # ---- device -------------------------------------------------------------------------
    def device(self, stream=None):
        """lb_device of the call: the CPU, or the tensors' CUDA device with ``stream``
        (None: torch.cuda.current_stream(device).cuda_stream; a torch.cuda.Stream or
        anything with .cuda_stream; or a raw CUstream as an int, 0 = legacy default)."""
        d = _abi.lb_device()
        kind, index = self._device or ("cpu", 0)
        if kind == "cpu":
            d.type, d.index, d.stream = _abi.LB_DEVICE_CPU, 0, None
            return d
        d.type, d.index = _abi.LB_DEVICE_CUDA, index
        if stream is None:
            torch = sys.modules["torch"]  # a CUDA device came from a torch tensor
            stream = torch.cuda.current_stream(index).cuda_stream
        elif hasattr(stream, "cuda_stream"):
            stream = stream.cuda_stream
        elif isinstance(stream, ctypes.c_void_p):
            stream = stream.value
        d.stream = self.integer("stream", stream, "uintptr") or None
        return d


def _device_str(device):
    kind, index = device
    return "cpu" if kind == "cpu" else "cuda:%d" % index
