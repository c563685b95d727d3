"""The in-place updates torch's single-tensor optimizers are built from, rounded as torch's
CPU kernels round them: ``add(alpha=)``, ``addcmul`` and ``lerp`` compile to a fused
multiply-add there (one rounding of ``a * b + c``), ``addcdiv`` to ``self + value * t1 / t2``
with three roundings. Float32 and float64 tensors go through ``_C._fma``; other dtypes are
composed from the plain ops."""

from __future__ import annotations

import struct

from cudalite import _C, _ops

_B, _U = _ops.BINARY, _ops.UNARY
ADD, SUB, MUL, DIV, MAX = _B["add"], _B["sub"], _B["mul"], _B["div"], _B["maximum"]
SQRT, ABS, NEG, RECIPROCAL = _U["sqrt"], _U["abs"], _U["neg"], _U["reciprocal"]
binary, unary = _C._binary, _C._unary


def _fused(t):
    return t.dtype in (_C.float32, _C.float64)


def to_f32(x):
    """``x`` rounded to float32 (as torch reads a number for a float32 kernel)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def add(x, y, alpha=1, out=None):
    """``x + alpha * y`` (torch's ``x.add(y, alpha=alpha)``; ``out=x``: ``x.add_``)."""
    if alpha == 1:
        return binary(ADD, x, y, out)
    if _fused(x):
        return _C._fma(y, alpha, x, out)
    return binary(ADD, x, binary(MUL, y, alpha, None), out)


def addcmul(x, t1, t2, value=1, out=None):
    """``x + value * t1 * t2`` (torch's ``addcmul``)."""
    scaled = t1 if value == 1 else binary(MUL, t1, value, None)
    if _fused(x):
        return _C._fma(scaled, t2, x, out)
    return binary(ADD, x, binary(MUL, scaled, t2, None), out)


def addcdiv(x, t1, t2, value=1, out=None):
    """``x + value * t1 / t2`` (torch's ``addcdiv``)."""
    return binary(ADD, x, binary(DIV, binary(MUL, t1, value, None), t2, None), out)


def lerp_(x, end, weight):
    """``x.lerp_(end, weight)`` for a number ``weight``: ``x + w * (end - x)`` where
    ``|w| < 0.5``, else ``end + (w - 1) * (end - x)``, each one fused multiply-add with ``w``
    read at the tensor's precision."""
    diff = binary(SUB, end, x, None)
    if x.dtype == _C.float32:
        weight = to_f32(weight)
    if abs(weight) < 0.5:
        return add(x, diff, weight, x)
    coeff = weight - 1
    if x.dtype == _C.float32:
        coeff = to_f32(coeff)
    if _fused(x):
        return _C._fma(diff, coeff, end, x)
    return binary(ADD, end, binary(MUL, diff, coeff, None), x)


def mul_(x, v):
    return binary(MUL, x, v, x)


def sqrt(x):
    return unary(SQRT, x, None)


def zeros_like(p):
    return _C._full(list(p.shape), 0, p.dtype, p.device)


def full_like(p, value):
    return _C._full(list(p.shape), value, p.dtype, p.device)


def scalar_step(p, on_device, value=0.0):
    """A step counter as torch keeps it: a 0-dim float32 tensor, on the CPU unless the
    optimizer is capturable or fused."""
    return _C._full([], value, _C.float32, p.device if on_device else "cpu")


def check_capturable(group, p, extra="", xla=True):
    """torch's check that a capturable optimizer's parameters are on a device that can
    capture (its list of devices names 'xla' except for Adadelta)."""
    if group.get("capturable") and p.device.type != "cuda":
        devices = "['cuda', 'xpu', 'hpu', 'privateuseone'" + (", 'xla']" if xla else "]")
        raise AssertionError(
            f"If capturable=True, params{extra} and state_steps must be on supported devices: "
            f"{devices}."
        )
