"""Pointwise ops made of other ops: nan_to_num, clamp_min / clamp_max, ldexp, float_power,
addcmul, addcdiv, frexp, polygamma, mvlgamma and their in-place forms.

Each is written with Tensor methods that autograd records, so their gradients come from their
parts; the registry's kernels (Note [The op registry]) do the arithmetic.
"""

from __future__ import annotations

import math

from cudalite import _C, _creation
from cudalite._C import Tensor
from cudalite._finfo import finfo
from cudalite._reductions import _out, return_types
from cudalite._tensor import method
from cudalite._tensor_scatter import out_no_grad

__all__ = [
    "nan_to_num",
    "nan_to_num_",
    "clamp_min",
    "clamp_min_",
    "clamp_max",
    "clamp_max_",
    "ldexp",
    "float_power",
    "addcmul",
    "addcdiv",
    "frexp",
    "polygamma",
    "mvlgamma",
]

_LOW = (_C.float16, _C.bfloat16)


def _short(dtype):
    return dtype._short_name


def _into(self, r):
    """Writes the out-of-place result ``r`` into ``self`` as torch's in-place ops do: the
    result must fit self's shape and cast to its dtype."""
    if not _C.can_cast(r.dtype, self.dtype):
        raise RuntimeError(
            f"result type {_short(r.dtype)} can't be cast to the desired output type "
            f"{_short(self.dtype)}"
        )
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )
    return self.copy_(r)


def _result(name, r, out, *inputs):
    out_no_grad(name, out, *inputs)
    return _out(r, out)


# ---- nan_to_num ----


def _nan_to_num(x, nan, posinf, neginf):
    if not x.dtype.is_floating_point:
        return x.clone()
    fi = finfo(x.dtype)
    posinf = fi.max if posinf is None else posinf
    neginf = fi.min if neginf is None else neginf
    r = x.masked_fill(x.isnan(), 0.0 if nan is None else nan)
    return r.masked_fill(r.isposinf(), posinf).masked_fill(r.isneginf(), neginf)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and
    the dtype's largest and lowest finite values)."""
    return _result("nan_to_num", _nan_to_num(input, nan, posinf, neginf), out, input)


def nan_to_num_(input, nan=0.0, posinf=None, neginf=None):
    if not input.dtype.is_floating_point:
        return input
    return input.copy_(_nan_to_num(input, nan, posinf, neginf))


@method(name="nan_to_num")
def _m_nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    return _nan_to_num(self, nan, posinf, neginf)


@method(name="nan_to_num_")
def _m_nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return nan_to_num_(self, nan, posinf, neginf)


# ---- clamp_min / clamp_max ----


def clamp_min(input, min, *, out=None):
    """``clamp(input, min=min)``."""
    return _result("clamp_min", input.clamp(min=min), out, input)


def clamp_max(input, max, *, out=None):
    """``clamp(input, max=max)``."""
    return _result("clamp_max", input.clamp(max=max), out, input)


def clamp_min_(input, min):
    return input.clamp_(min=min)


def clamp_max_(input, max):
    return input.clamp_(max=max)


for _n in ("clamp_min", "clamp_max"):
    method(name=_n)(lambda self, bound, _n=_n: globals()[_n](self, bound))
    method(name=_n + "_")(lambda self, bound, _n=_n: globals()[_n + "_"](self, bound))


# ---- ldexp, float_power ----


def _ldexp(input, other):
    rt = _C._result_type(input, other)
    if not rt.is_floating_point:
        rt = _C.get_default_dtype()
    return input * (2.0**other).to(rt)


def ldexp(input, other, *, out=None):
    """``input * 2 ** other`` (in the operands' floating dtype, else the default one)."""
    return _result("ldexp", _ldexp(input, other), out, input, other)


method(name="ldexp")(_ldexp)
method(name="ldexp_")(lambda self, other: _into(self, _ldexp(self, other)))


def _double(x):
    return x.to(_C.float64) if isinstance(x, Tensor) else float(x)


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in double precision."""
    if not isinstance(input, Tensor):
        r = _double(exponent).__rpow__(float(input))
    else:
        r = _double(input) ** _double(exponent)
    if out is not None and out.dtype != _C.float64:
        raise RuntimeError(
            f"the output given to float_power has dtype {_short(out.dtype)} but the "
            "operation's result requires dtype Double"
        )
    return _result("float_power", r, out, input, exponent)


@method(name="float_power")
def _m_float_power(self, exponent):
    return float_power(self, exponent)


@method(name="float_power_")
def _m_float_power_(self, exponent):
    if self.dtype != _C.float64:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_short(self.dtype)} but the "
            "operation's result requires dtype Double"
        )
    return self.pow_(_double(exponent))


# ---- addcmul, addcdiv ----


def _result_type(*tensors):
    """torch's promotion over several tensors: pairwise, each partial result standing for
    a tensor with dims where any of its operands has them."""
    acc = tensors[0]
    for t in tensors[1:]:
        rt = _C._result_type(acc, t)
        acc = acc.new_empty((0,) if acc.dim() or t.dim() else (), dtype=rt)
    return acc.dtype


def _addc(name, input, tensor1, tensor2, value):
    for arg, t in (("self", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(t, Tensor):
            pos = {"self": 1, "tensor1": 2, "tensor2": 3}[arg]
            raise TypeError(
                f"{name}(): argument '{'input' if arg == 'self' else arg}' (position {pos}) "
                f"must be Tensor, not {type(t).__name__}"
            )
    rt = _result_type(input, tensor1, tensor2)
    if name == "addcdiv" and not tensor1.dtype.is_floating_point:
        if not tensor2.dtype.is_floating_point:
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future  "
                "release addcdiv will perform a true division of tensor1 and tensor2. The "
                "historic addcdiv behavior can be implemented as (input + value * "
                "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                "behavior is just the latter implementation: (input + value * tensor1 / "
                "tensor2), for all dtypes."
            )
    if rt == _C.bool:
        kernel = f"{name}_cuda" if input.is_cuda else f"{name}_cpu_out"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if not rt.is_floating_point:
        value = int(value)
    low = rt in _LOW
    a, b, c = (t.float() if low else t for t in (input, tensor1, tensor2))
    p = b * c if name == "addcmul" else b / c
    r = a + (p if value == 1 else p * value)
    return r.to(rt) if r.dtype != rt else r


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    r = _addc("addcmul", input, tensor1, tensor2, value)
    return _result("addcmul", r, out, input, tensor1, tensor2)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``."""
    r = _addc("addcdiv", input, tensor1, tensor2, value)
    return _result("addcdiv", r, out, input, tensor1, tensor2)


@method(name="addcmul")
def _m_addcmul(self, tensor1, tensor2, *, value=1):
    return _addc("addcmul", self, tensor1, tensor2, value)


@method(name="addcdiv")
def _m_addcdiv(self, tensor1, tensor2, *, value=1):
    return _addc("addcdiv", self, tensor1, tensor2, value)


@method(name="addcmul_")
def _m_addcmul_(self, tensor1, tensor2, *, value=1):
    return _into(self, _addc("addcmul", self, tensor1, tensor2, value))


@method(name="addcdiv_")
def _m_addcdiv_(self, tensor1, tensor2, *, value=1):
    return _into(self, _addc("addcdiv", self, tensor1, tensor2, value))


@method(name="lerp_")
def _m_lerp_(self, end, weight):
    return _into(self, self.lerp(end, weight))


# ---- frexp ----


def _frexp(x):
    if not x.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    # The exponent from log2 in double (exact enough to be off by at most one, fixed below),
    # the mantissa scaled in two steps so that neither power of two overflows.
    d = x.to(_C.float64)
    finite = d.isfinite() & (d != 0)
    safe = d.abs().masked_fill(~finite, 1.0)
    e = safe.log2().floor() + 1
    m = safe * (2.0 ** (-(e / 2).floor())) * (2.0 ** (-(e - (e / 2).floor())))
    e = e + (m >= 1).double() - (m < 0.5).double()
    e = e.masked_fill(~finite, 0.0)
    h = (e / 2).floor()
    mant = x * (2.0 ** (-h)).to(x.dtype) * (2.0 ** (h - e)).to(x.dtype)
    return return_types.frexp(mant, e.to(_C.int32))


def frexp(input, *, out=None):
    """Mantissa in [0.5, 1) and int32 exponent: ``input = mantissa * 2 ** exponent``."""
    r = _frexp(input)
    if out is None:
        return r
    out_no_grad("frexp", out[0], input)
    return return_types.frexp(_out(r[0], out[0]), _out(r[1], out[1]))


method(name="frexp")(lambda self: _frexp(self))


# ---- polygamma, mvlgamma ----


def _polygamma(n, x):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return x.digamma()
    if n == 1:
        return trigamma(x)
    # n! as a float (torch's exp(lgamma(n + 1))): inf from 171 on
    scale = (1.0 if n % 2 else -1.0) * (float(math.factorial(n)) if n <= 170 else math.inf)
    if not x.dtype.is_floating_point:
        x = x.to(_C.get_default_dtype())
    z = x.new_full((), n + 1)._zeta(x)
    return z * scale


def trigamma(x):
    """polygamma(1, x): zeta(2, x), reflected below 1/2 as torch does (so that it is finite,
    if huge, at the negative integers where sin(pi x) rounds to nonzero)."""
    if not x.dtype.is_floating_point:
        x = x.to(_C.get_default_dtype())
    low = x < 0.5
    y = x.where(~low, 1 - x)
    z = y.new_full((), 2)._zeta(y)
    s = (x * math.pi).sin()
    return z.where(~low, (math.pi**2) / (s * s) - z)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma: ``(-1)**(n+1) n! zeta(n + 1, input)``."""
    return _result("polygamma", _polygamma(n, input), out, input)


@method(name="polygamma")
def _m_polygamma(self, n):
    return _polygamma(n, self)


@method(name="polygamma_")
def _m_polygamma_(self, n):
    return _into(self, _polygamma(n, self))


def _mvlgamma(x, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not x.dtype.is_floating_point:
        x = x.to(_C.get_default_dtype())
    halves = _creation.arange(p, dtype=x.dtype, device=x.device) * -0.5
    r = (x.unsqueeze(-1) + halves).lgamma().sum(-1)
    return r + p * (p - 1) / 4 * math.log(math.pi)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``."""
    return _result("mvlgamma", _mvlgamma(input, p), out, input)


@method(name="mvlgamma")
def _m_mvlgamma(self, p):
    return _mvlgamma(self, p)


@method(name="mvlgamma_")
def _m_mvlgamma_(self, p):
    return _into(self, _mvlgamma(self, p))
