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
tensors.

The functions are made from the op registry (Note [The op registry], ``csrc/ops/ops.def``):
``_foreach_<name>`` and ``_foreach_<name>_`` of every elementwise row with the ``Foreach``
flag (the kernels run the row's functor, the slow path the row's Tensor method), and of every
foreach-only row, by the maker of its form (``_MAKERS``)."""

from __future__ import annotations

import math
import numbers

from cudalite import _C
from cudalite._C import Tensor

_LIST, _SCALAR, _DEVICE_SCALAR = 0, 1, 2

# The multi-tensor ops of the registry (Note [The op registry], csrc/ops/ops.def): the
# elementwise rows with the Foreach flag and the foreach-only rows, as (name, code, form,
# alpha, tensor_only, runs). The functions below are made from them, one maker per form.
_ROWS = _C._foreach_ops
CODES = {name: code for name, code, form, *_ in _ROWS if form != "reversed"}
# a number first, then a list (_foreach_pow(2.0, tensors)): the op's code, by name
_REVERSED = {name: code for name, code, form, *_ in _ROWS if form == "reversed"}


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
    code, lists, nin, inplace, b_kind=_LIST, alpha=1.0, b_device=None, scalars=(), lerp=False
):
    _C._foreach_pointwise(
        [list(x) for x in lists],
        code,
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


def _binary(code, method, self, other, inplace, alpha=None):
    """``self[i] <op> other`` (``other[i]``, ``other`` or ``scalars[i]``), ``alpha`` scaling
    the second operand of add and sub."""
    self = _as_list(self)
    n = len(self)
    if isinstance(other, Tensor):
        _check_lists(self)
        device_scalar = _scalar_tensor_operand(self, other)
        if device_scalar is not None and _fast([self]):
            r = _run_binary(code, [self], inplace, _DEVICE_SCALAR, alpha, device_scalar, ())
            if r is not None:
                return r
        per = [other] * n
    elif isinstance(other, numbers.Number):
        _check_lists(self)
        if _fast([self]):
            r = _run_binary(code, [self], inplace, _SCALAR, 1.0, None, [other] * n)
            if r is not None:
                return r
        per = [other] * n
    elif _is_scalar_list(other):
        _check_lists(self)
        _check_scalars(self, other)
        if _fast([self]):
            r = _run_binary(code, [self], inplace, _SCALAR, 1.0, None, list(other))
            if r is not None:
                return r
        per = list(other)
    else:
        other = list(other)
        _check_lists(self, other)
        if _fast([self, other]):
            r = _run_binary(code, [self, other], inplace, _LIST, alpha, None, ())
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


def _run_binary(code, ins, inplace, kind, alpha, device_scalar, scalars):
    """One launch of a binary op; None when an output of the inputs' layout can't be made
    (the caller then takes the slow path)."""
    self = ins[0]
    alpha = 1.0 if alpha is None else alpha
    if inplace:
        _launch(code, ins, len(ins), True, kind, alpha, device_scalar, scalars)
        return self
    out = _empty_like_all(self)
    if not _C._foreach_fast_path_ok([*ins, out]):
        return None
    _launch(code, [*ins, out], len(ins), False, kind, alpha, device_scalar, scalars)
    return tuple(out)


def _tensor_only(code, method, self, other, inplace):
    """A binary op that torch takes tensors only for (maximum, minimum): a list, a number or
    numbers as the second operand; the per-tensor path makes a tensor of each number."""
    self = _as_list(self)
    if isinstance(other, numbers.Number) or _is_scalar_list(other):
        scalars = [other] * len(self) if isinstance(other, numbers.Number) else list(other)
        _check_lists(self)
        _check_scalars(self, scalars)
        if _fast([self]):
            r = _run_binary(code, [self], inplace, _SCALAR, 1.0, None, scalars)
            if r is not None:
                return r
        pairs = zip(self, scalars, strict=True)
    else:
        other = list(other)
        _check_lists(self, other)
        if _fast([self, other]):
            r = _run_binary(code, [self, other], inplace, _LIST, 1.0, None, ())
            if r is not None:
                return r
        pairs = zip(self, other, strict=True)
    import cudalite

    fn = getattr(cudalite, method)
    out = []
    for t, o in pairs:
        o = o if isinstance(o, Tensor) else cudalite.tensor(o, dtype=t.dtype, device=t.device)
        r = fn(t, o)
        out.append(t.copy_(r) if inplace else r)
    return self if inplace else tuple(out)


def _reversed(code, method, number, tensors):
    """``number <op> tensors[i]`` (``_foreach_pow(2.0, tensors)``)."""
    tensors = list(tensors)
    _check_lists(tensors)
    if _fast([tensors]):
        out = _empty_like_all(tensors)
        if _C._foreach_fast_path_ok([tensors, out]):
            _launch(code, [tensors, out], 1, False, _SCALAR, 1.0, None, [number] * len(out))
            return tuple(out)
    import cudalite

    return tuple(getattr(cudalite, method)(number, t) for t in tensors)


def _make_binary(name, code, alpha, tensor_only, runs):
    """``_foreach_<name>`` and ``_foreach_<name>_`` of a binary row. An op with a number-first
    form names its operand ``exponent``, as torch's pow does."""
    reversed_code = _REVERSED.get(name)
    if tensor_only:

        def out_of_place(self, other):
            return _tensor_only(code, runs, self, other, False)

        def in_place(self, other):
            return _tensor_only(code, runs, self, other, True)

    elif alpha:

        def out_of_place(self, other, *, alpha=1):
            return _binary(code, runs, self, other, False, alpha)

        def in_place(self, other, *, alpha=1):
            return _binary(code, runs, self, other, True, alpha)

    elif reversed_code is not None:

        def out_of_place(self, exponent):
            if isinstance(self, numbers.Number):
                return _reversed(reversed_code, runs, self, exponent)
            return _binary(code, runs, self, exponent, False)

        def in_place(self, exponent):
            return _binary(code, runs, self, exponent, True)

    else:

        def out_of_place(self, other):
            return _binary(code, runs, self, other, False)

        def in_place(self, other):
            return _binary(code, runs, self, other, True)

    out_of_place.__doc__ = (
        f"``self[i].{runs}(other)`` (a list, a number, numbers), in one launch on CUDA."
    )
    in_place.__doc__ = (
        f"``self[i].{runs}_(other)`` for each tensor of ``self``, in one launch on CUDA."
    )
    return {f"_foreach_{name}": out_of_place, f"_foreach_{name}_": in_place}


# ---- unary ops ----


def _unary(code, method, self, inplace):
    self = _as_list(self)
    _check_lists(self)
    if _fast([self]):
        if inplace:
            _launch(code, [self], 1, True)
            return self
        out = _empty_like_all(self)
        if _C._foreach_fast_path_ok([self, out]):
            _launch(code, [self, out], 1, False)
            return tuple(out)
    if inplace:
        for t in self:
            getattr(t, method + "_")()
        return self
    return tuple(getattr(t, method)() for t in self)


def _make_unary(name, code, alpha, tensor_only, runs):
    def out_of_place(self):
        return _unary(code, runs, self, False)

    def in_place(self):
        return _unary(code, runs, self, True)

    out_of_place.__doc__ = f"``tuple(t.{runs}() for t in self)``, in one launch on CUDA."
    in_place.__doc__ = f"``t.{runs}_()`` for each tensor of ``self``, in one launch on CUDA."
    return {f"_foreach_{name}": out_of_place, f"_foreach_{name}_": in_place}


def _make_zero(name, code, alpha, tensor_only, runs):
    def in_place(self):
        """Fills every tensor with zeros."""
        self = _as_list(self)
        _check_lists(self)
        if _fast([self]):
            _launch(code, [self], 1, True)
            return self
        for t in self:
            getattr(t, name + "_")()
        return self

    return {f"_foreach_{name}_": in_place}


def _make_copy(name, code, alpha, tensor_only, runs):
    def in_place(self, src, non_blocking=False):
        """``self[i].copy_(src[i])``; one launch when both lists are alike on one CUDA
        device."""
        self, src = _as_list(self), list(src)
        _check_lists(self, src)
        if _fast([self, src]):
            _launch(code, [self, src], 2, True, _LIST)
            return self
        for t, s in zip(self, src, strict=True):
            getattr(t, name + "_")(s, non_blocking=non_blocking)
        return self

    return {f"_foreach_{name}_": in_place}


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


def _scaled(code, name, self, t1, t2, value, inplace):
    self, t1, t2 = _as_list(self), list(t1), list(t2)
    _check_lists(self, t1, t2)
    values = _values(self, value)
    if _fast([self, t1, t2]):
        if inplace:
            _launch(code, [self, t1, t2], 3, True, _LIST, 1.0, None, values)
            return self
        out = _empty_like_all(self)
        if _C._foreach_fast_path_ok([self, t1, t2, out]):
            _launch(code, [self, t1, t2, out], 3, False, _LIST, 1.0, None, values)
            return tuple(out)
    from cudalite.optim import _functional as F

    fn = getattr(F, name)
    res = [
        fn(x, a, b, v, x if inplace else None)
        for x, a, b, v in zip(self, t1, t2, values, strict=True)
    ]
    return self if inplace else tuple(res)


def _make_scaled(name, code, alpha, tensor_only, runs):
    def out_of_place(self, tensor1, tensor2, value=1):
        return _scaled(code, name, self, tensor1, tensor2, value, False)

    def in_place(self, tensor1, tensor2, value=1):
        return _scaled(code, name, self, tensor1, tensor2, value, True)

    out_of_place.__doc__ = (
        f"``self[i]`` plus ``value`` times ``{name}``'s ``tensor1[i]`` by ``tensor2[i]``."
    )
    in_place.__doc__ = out_of_place.__doc__ + " In place."
    return {f"_foreach_{name}": out_of_place, f"_foreach_{name}_": in_place}


def _lerp(code, name, self, end, weight, inplace):
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
            _launch(code, lists, nin, True, _LIST, 1.0, None, scalars, weight_list)
            return self
        out = _empty_like_all(self)
        if _C._foreach_fast_path_ok([*lists, out]):
            _launch(code, [*lists, out], nin, False, _LIST, 1.0, None, scalars, weight_list)
            return tuple(out)
    from cudalite.optim import _functional as F

    res = []
    for i, (x, e) in enumerate(zip(self, end, strict=True)):
        w = weight[i] if weight_list else scalars[i]
        if isinstance(w, Tensor):
            r = getattr(x, name)(e, w)
            res.append(x.copy_(r) if inplace else r)
        else:
            target = x if inplace else x._clone()
            res.append(getattr(F, name + "_")(target, e, w))
    return self if inplace else tuple(res)


def _make_lerp(name, code, alpha, tensor_only, runs):
    def out_of_place(self, tensors1, weight):
        """``self[i].lerp(tensors1[i], weight)`` (a number, numbers or a list)."""
        return _lerp(code, name, self, tensors1, weight, False)

    def in_place(self, tensors1, weight):
        """``self[i].lerp_(tensors1[i], weight)`` (a number, numbers or a list)."""
        return _lerp(code, name, self, tensors1, weight, True)

    return {f"_foreach_{name}": out_of_place, f"_foreach_{name}_": in_place}


# ---- norms ----


def _make_norm(name, code, alpha, tensor_only, runs):
    def out_of_place(self, ord=2, dtype=None):
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

        return tuple(getattr(cudalite, name)(t, p=ord, dtype=dtype) for t in self)

    return {f"_foreach_{name}": out_of_place}


_MAKERS = {
    "binary": _make_binary,
    "unary": _make_unary,
    "zero": _make_zero,
    "copy": _make_copy,
    "scaled": _make_scaled,
    "lerp": _make_lerp,
    "norm": _make_norm,
}


def _make_all():
    made = {}
    for name, code, form, alpha, tensor_only, runs in _ROWS:
        if form == "reversed":  # part of the binary op of the same name
            continue
        for fname, fn in _MAKERS[form](name, code, alpha, tensor_only, runs).items():
            fn.__name__ = fn.__qualname__ = fname
            fn.__module__ = __name__
            made[fname] = fn
    return made


_FUNCTIONS = _make_all()
globals().update(_FUNCTIONS)
__all__ = sorted(_FUNCTIONS)
