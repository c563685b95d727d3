"""torch's ``_foreach_*`` ops: one op over lists of tensors (``torch._foreach_add_(params,
grads, alpha=-lr)``), the building blocks of the optimizers' ``foreach=True`` paths.

As in torch there are two paths. The fast one, on CUDA, runs a whole list in one
multi-tensor launch (or a few for long lists) when every tensor is a dense float16,
bfloat16, float32 or float64 tensor of one dtype and device, with the same sizes and strides
at each index of every list; the arithmetic is that of the per-tensor CUDA op, in float for
the 16-bit types. Anything else (CPU tensors, mixed dtypes or devices, integer tensors,
non-dense views) takes the slow path: the per-tensor op on each tensor in turn, which is
what torch does on the CPU, so results there are bit for bit those of a Python loop over
the tensors' own methods (and of the optimizers' for-loop path).

In-place ops (``_foreach_add_``) return the list they updated; the others a tuple of new
tensors."""

from __future__ import annotations

import math
import numbers

from cudalite import _C
from cudalite._C import Tensor

_CODES = _C._foreach_op_codes
_LIST, _SCALAR, _DEVICE_SCALAR = 0, 1, 2

__all__ = [
    "_foreach_abs",
    "_foreach_abs_",
    "_foreach_add",
    "_foreach_add_",
    "_foreach_addcdiv",
    "_foreach_addcdiv_",
    "_foreach_addcmul",
    "_foreach_addcmul_",
    "_foreach_clamp_max",
    "_foreach_clamp_max_",
    "_foreach_clamp_min",
    "_foreach_clamp_min_",
    "_foreach_copy_",
    "_foreach_div",
    "_foreach_div_",
    "_foreach_exp",
    "_foreach_exp_",
    "_foreach_lerp",
    "_foreach_lerp_",
    "_foreach_log",
    "_foreach_log_",
    "_foreach_maximum",
    "_foreach_maximum_",
    "_foreach_minimum",
    "_foreach_minimum_",
    "_foreach_mul",
    "_foreach_mul_",
    "_foreach_neg",
    "_foreach_neg_",
    "_foreach_norm",
    "_foreach_pow",
    "_foreach_pow_",
    "_foreach_reciprocal",
    "_foreach_reciprocal_",
    "_foreach_rsqrt",
    "_foreach_rsqrt_",
    "_foreach_sign",
    "_foreach_sign_",
    "_foreach_sqrt",
    "_foreach_sqrt_",
    "_foreach_sub",
    "_foreach_sub_",
    "_foreach_zero_",
]


def _as_list(x):
    return x if isinstance(x, list) else list(x)


def _check_lists(*lists):
    """torch's check_foreach_api_restrictions: a non-empty list, the others as long."""
    if len(lists[0]) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in lists[1:]:
        if len(other) != len(lists[0]):
            raise RuntimeError(
                "Tensor lists must have the same number of tensors, got "
                f"{len(lists[0])} and {len(other)}"
            )


def _check_scalars(tensors, scalars):
    if len(scalars) != len(tensors):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")


def _is_scalar_list(x):
    return isinstance(x, (list, tuple)) and all(
        isinstance(s, numbers.Number) and not isinstance(s, Tensor) for s in x
    )


def _multi_tensor_device(t):
    """Whether ``t``'s device runs the multi-tensor kernels (CUDA; the CPU takes torch's
    per-tensor path, which the tests also swap for the core's CPU loop)."""
    return t.is_cuda


def _fast(lists):
    """Whether the lists take the multi-tensor path: CUDA tensors that the core accepts."""
    return _multi_tensor_device(lists[0][0]) and _C._foreach_fast_path_ok([list(x) for x in lists])


def _empty_like_all(tensors):
    import cudalite

    return [cudalite.empty_like(t) for t in tensors]


def _opmath(t):
    return _C.float64 if t.dtype == _C.float64 else _C.float32


def _scalar_tensor_operand(tensors, other):
    """A 0-dim tensor operand: checked as torch checks it, then either a device scalar for
    the multi-tensor kernel or None (the slow path)."""
    if other.dim() != 0:
        raise RuntimeError(
            f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
            f"{other.numel()} elements."
        )
    first = tensors[0]
    if other.device == first.device and _multi_tensor_device(first):
        return other.to(dtype=_opmath(first))
    return None


def _launch(
    op, lists, nin, inplace, b_kind=_LIST, alpha=1.0, b_device=None, scalars=(), lerp=False
):
    _C._foreach_pointwise(
        [list(x) for x in lists],
        _CODES[op],
        nin,
        inplace,
        b_kind,
        float(alpha),
        b_device,
        [float(s) for s in scalars],
        lerp,
    )


# ---- binary ops: a tensor list with a tensor list, a number, a list of numbers or a 0-dim
# tensor ----


def _binary(op, method, self, other, inplace, alpha=None):
    """``self[i] <op> other`` (``other[i]``, ``other`` or ``scalars[i]``), ``alpha`` scaling
    the second operand of add and sub."""
    self = _as_list(self)
    n = len(self)
    if isinstance(other, Tensor):
        _check_lists(self)
        device_scalar = _scalar_tensor_operand(self, other)
        if device_scalar is not None and _fast([self]):
            r = _run_binary(op, [self], inplace, _DEVICE_SCALAR, alpha, device_scalar, ())
            if r is not None:
                return r
        per = [other] * n
    elif isinstance(other, numbers.Number):
        _check_lists(self)
        if _fast([self]):
            r = _run_binary(op, [self], inplace, _SCALAR, 1.0, None, [other] * n)
            if r is not None:
                return r
        per = [other] * n
    elif _is_scalar_list(other):
        _check_lists(self)
        _check_scalars(self, other)
        if _fast([self]):
            r = _run_binary(op, [self], inplace, _SCALAR, 1.0, None, list(other))
            if r is not None:
                return r
        per = list(other)
    else:
        other = list(other)
        _check_lists(self, other)
        if _fast([self, other]):
            r = _run_binary(op, [self, other], inplace, _LIST, alpha, None, ())
            if r is not None:
                return r
        per = other
    return _slow_binary(method, self, per, inplace, alpha)


def _slow_binary(method, self, per, inplace, alpha):
    """torch's slow path: the per-tensor op on each tensor. add/sub with an alpha round as the
    optimizers' for-loop path does (one fused multiply-add on the CPU)."""
    from cudalite.optim import _functional as F

    res = []
    for t, o in zip(self, per, strict=True):
        if alpha not in (None, 1) and isinstance(o, Tensor) and t.dtype.is_floating_point:
            a = alpha if method == "add" else -alpha
            res.append(F.add(t, o, a, t if inplace else None))
        elif alpha is not None:
            res.append(getattr(t, method + ("_" if inplace else ""))(o, alpha=alpha))
        else:
            res.append(getattr(t, method + ("_" if inplace else ""))(o))
    return self if inplace else tuple(res)


def _run_binary(op, ins, inplace, kind, alpha, device_scalar, scalars):
    """One launch of a binary op; None when an output of the inputs' layout can't be made
    (the caller then takes the slow path)."""
    self = ins[0]
    alpha = 1.0 if alpha is None else alpha
    if inplace:
        _launch(op, ins, len(ins), True, kind, alpha, device_scalar, scalars)
        return self
    out = _empty_like_all(self)
    if not _C._foreach_fast_path_ok([*ins, out]):
        return None
    _launch(op, [*ins, out], len(ins), False, kind, alpha, device_scalar, scalars)
    return tuple(out)


def _slow_maximum(t, o, inplace):
    import cudalite

    o = o if isinstance(o, Tensor) else cudalite.tensor(o, dtype=t.dtype, device=t.device)
    r = cudalite.maximum(t, o)
    return t.copy_(r) if inplace else r


def _slow_minimum(t, o, inplace):
    import cudalite

    o = o if isinstance(o, Tensor) else cudalite.tensor(o, dtype=t.dtype, device=t.device)
    r = cudalite.minimum(t, o)
    return t.copy_(r) if inplace else r


def _foreach_add(self, other, *, alpha=1):
    return _binary("add", "add", self, other, False, alpha)


def _foreach_add_(self, other, *, alpha=1):
    return _binary("add", "add", self, other, True, alpha)


def _foreach_sub(self, other, *, alpha=1):
    return _binary("sub", "sub", self, other, False, alpha)


def _foreach_sub_(self, other, *, alpha=1):
    return _binary("sub", "sub", self, other, True, alpha)


def _foreach_mul(self, other):
    return _binary("mul", "mul", self, other, False)


def _foreach_mul_(self, other):
    return _binary("mul", "mul", self, other, True)


def _foreach_div(self, other):
    return _binary("div", "div", self, other, False)


def _foreach_div_(self, other):
    return _binary("div", "div", self, other, True)


def _minmax(op, self, other, inplace):
    self = _as_list(self)
    if isinstance(other, numbers.Number) or _is_scalar_list(other):
        scalars = [other] * len(self) if isinstance(other, numbers.Number) else list(other)
        _check_lists(self)
        _check_scalars(self, scalars)
        if _fast([self]):
            r = _run_binary(op, [self], inplace, _SCALAR, 1.0, None, scalars)
            if r is not None:
                return r
        pairs = zip(self, scalars, strict=True)
    else:
        other = list(other)
        _check_lists(self, other)
        if _fast([self, other]):
            r = _run_binary(op, [self, other], inplace, _LIST, 1.0, None, ())
            if r is not None:
                return r
        pairs = zip(self, other, strict=True)
    slow = _slow_maximum if op == "maximum" else _slow_minimum
    out = [slow(t, o, inplace) for t, o in pairs]
    return self if inplace else tuple(out)


def _foreach_maximum(self, other):
    return _minmax("maximum", self, other, False)


def _foreach_maximum_(self, other):
    return _minmax("maximum", self, other, True)


def _foreach_minimum(self, other):
    return _minmax("minimum", self, other, False)


def _foreach_minimum_(self, other):
    return _minmax("minimum", self, other, True)


def _foreach_clamp_min(self, other):
    return _minmax("maximum", self, other, False)


def _foreach_clamp_min_(self, other):
    return _minmax("maximum", self, other, True)


def _foreach_clamp_max(self, other):
    return _minmax("minimum", self, other, False)


def _foreach_clamp_max_(self, other):
    return _minmax("minimum", self, other, True)


def _foreach_pow(self, exponent):
    """``self[i] ** exponent`` (a number, numbers or tensors), or ``self ** exponent[i]`` when
    ``self`` is a number."""
    if isinstance(self, numbers.Number):
        exponent = list(exponent)
        _check_lists(exponent)
        if _fast([exponent]):
            out = _empty_like_all(exponent)
            if _C._foreach_fast_path_ok([exponent, out]):
                _launch("rpow", [exponent, out], 1, False, _SCALAR, 1.0, None, [self] * len(out))
                return tuple(out)
        import cudalite

        return tuple(cudalite.pow(self, e) for e in exponent)
    return _binary("pow", "pow", self, exponent, False)


def _foreach_pow_(self, exponent):
    return _binary("pow", "pow", self, exponent, True)


# ---- unary ops ----


def _unary(op, method, self, inplace):
    self = _as_list(self)
    _check_lists(self)
    if _fast([self]):
        if inplace:
            _launch(op, [self], 1, True)
            return self
        out = _empty_like_all(self)
        if _C._foreach_fast_path_ok([self, out]):
            _launch(op, [self, out], 1, False)
            return tuple(out)
    if inplace:
        for t in self:
            getattr(t, method + "_")()
        return self
    return tuple(getattr(t, method)() for t in self)


def _make_unary(op):
    def out_of_place(self):
        return _unary(op, op, self, False)

    def in_place(self):
        return _unary(op, op, self, True)

    out_of_place.__name__ = f"_foreach_{op}"
    in_place.__name__ = f"_foreach_{op}_"
    out_of_place.__doc__ = f"``tuple(t.{op}() for t in self)``, in one launch on CUDA."
    in_place.__doc__ = f"``t.{op}_()`` for each tensor of ``self``, in one launch on CUDA."
    return out_of_place, in_place


_foreach_neg, _foreach_neg_ = _make_unary("neg")
_foreach_sqrt, _foreach_sqrt_ = _make_unary("sqrt")
_foreach_rsqrt, _foreach_rsqrt_ = _make_unary("rsqrt")
_foreach_abs, _foreach_abs_ = _make_unary("abs")
_foreach_exp, _foreach_exp_ = _make_unary("exp")
_foreach_log, _foreach_log_ = _make_unary("log")
_foreach_reciprocal, _foreach_reciprocal_ = _make_unary("reciprocal")
_foreach_sign, _foreach_sign_ = _make_unary("sign")


def _foreach_zero_(self):
    """Fills every tensor with zeros."""
    self = _as_list(self)
    _check_lists(self)
    if _fast([self]):
        _launch("zero", [self], 1, True)
        return self
    for t in self:
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """``self[i].copy_(src[i])``; one launch when both lists are alike on one CUDA device."""
    self, src = _as_list(self), list(src)
    _check_lists(self, src)
    if _fast([self, src]):
        _launch("copy", [self, src], 2, True, _LIST)
        return self
    for t, s in zip(self, src, strict=True):
        t.copy_(s, non_blocking=non_blocking)
    return self


# ---- ternary ops ----


def _values(self, value):
    """addcmul/addcdiv's value: a number, numbers, or a 1-D CPU tensor of them."""
    if isinstance(value, Tensor):
        if value.dim() != 1:
            raise RuntimeError(
                f"Expected packed scalar Tensor to be of dimension 1. Got {value.dim()} instead."
            )
        value = value.tolist()
    if isinstance(value, numbers.Number):
        return [value] * len(self)
    value = list(value)
    _check_scalars(self, value)
    return value


def _pointwise3(op, self, t1, t2, value, inplace):
    self, t1, t2 = _as_list(self), list(t1), list(t2)
    _check_lists(self, t1, t2)
    values = _values(self, value)
    if _fast([self, t1, t2]):
        if inplace:
            _launch(op, [self, t1, t2], 3, True, _LIST, 1.0, None, values)
            return self
        out = _empty_like_all(self)
        if _C._foreach_fast_path_ok([self, t1, t2, out]):
            _launch(op, [self, t1, t2, out], 3, False, _LIST, 1.0, None, values)
            return tuple(out)
    from cudalite.optim import _functional as F

    res = []
    for x, a, b, v in zip(self, t1, t2, values, strict=True):
        fn = F.addcmul if op == "addcmul" else F.addcdiv
        res.append(fn(x, a, b, v, x if inplace else None))
    return self if inplace else tuple(res)


def _foreach_addcmul(self, tensor1, tensor2, value=1):
    return _pointwise3("addcmul", self, tensor1, tensor2, value, False)


def _foreach_addcmul_(self, tensor1, tensor2, value=1):
    return _pointwise3("addcmul", self, tensor1, tensor2, value, True)


def _foreach_addcdiv(self, tensor1, tensor2, value=1):
    return _pointwise3("addcdiv", self, tensor1, tensor2, value, False)


def _foreach_addcdiv_(self, tensor1, tensor2, value=1):
    return _pointwise3("addcdiv", self, tensor1, tensor2, value, True)


def _lerp(self, end, weight, inplace):
    self, end = _as_list(self), list(end)
    _check_lists(self, end)
    weight_list = not isinstance(weight, numbers.Number) and not _is_scalar_list(weight)
    if weight_list:
        weight = list(weight)
        _check_lists(self, weight)
        lists, scalars = [self, end, weight], ()
    else:
        scalars = [weight] * len(self) if isinstance(weight, numbers.Number) else list(weight)
        _check_scalars(self, scalars)
        lists = [self, end]
    if _fast(lists):
        nin = len(lists)
        if inplace:
            _launch("lerp", lists, nin, True, _LIST, 1.0, None, scalars, weight_list)
            return self
        out = _empty_like_all(self)
        if _C._foreach_fast_path_ok([*lists, out]):
            _launch("lerp", [*lists, out], nin, False, _LIST, 1.0, None, scalars, weight_list)
            return tuple(out)
    from cudalite.optim import _functional as F

    res = []
    for i, (x, e) in enumerate(zip(self, end, strict=True)):
        w = weight[i] if weight_list else scalars[i]
        if isinstance(w, Tensor):
            r = x.lerp(e, w)
            res.append(x.copy_(r) if inplace else r)
        else:
            target = x if inplace else x._clone()
            res.append(F.lerp_(target, e, w))
    return self if inplace else tuple(res)


def _foreach_lerp(self, tensors1, weight):
    return _lerp(self, tensors1, weight, False)


def _foreach_lerp_(self, tensors1, weight):
    return _lerp(self, tensors1, weight, True)


# ---- norms ----


def _foreach_norm(self, ord=2, dtype=None):
    """The vector norm of each tensor, as 0-dim tensors (one multi-tensor pass on CUDA for
    ord 1, 2 and inf)."""
    self = _as_list(self)
    _check_lists(self)
    if ord in (math.inf, -math.inf) and any(t.numel() == 0 for t in self):
        raise RuntimeError(
            "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
            "operation does not have an identity"
        )
    first = self[0]
    if (
        _multi_tensor_device(first)
        and ord in (1, 2, math.inf)
        and (dtype is None or dtype.is_floating_point)
        and _C._foreach_fast_path_ok([self])
    ):
        return tuple(_C._foreach_norm_fast(self, float(ord), dtype or first.dtype))
    import cudalite

    return tuple(cudalite.norm(t, p=ord, dtype=dtype) for t in self)
