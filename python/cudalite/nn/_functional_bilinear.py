"""``nn.functional.bilinear``: ``y[..., o] = sum_ij x1[..., i] * weight[o, i, j] * x2[...,
j] + bias[o]``, one matrix product and a reduction (differentiable through them)."""

from __future__ import annotations

from cudalite import _arg_parser
from cudalite._C import Tensor

__all__ = ["bilinear"]


def _cpp_name(dtype):
    """c10's name of a dtype (``float``, ``double``, ``c10::Half``...)."""
    from cudalite._linalg import cpp_name

    return cpp_name(dtype)


def bilinear(input1, input2, weight, bias=None):
    for name, pos, t in (("input1", 1, input1), ("input2", 2, input2), ("weight", 3, weight)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"bilinear(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(t)}"
            )
    dts = [t.dtype for t in (input1, input2, weight)]
    if dts[0] is not dts[1] or dts[0] is not dts[2]:
        names = [_cpp_name(dt) for dt in dts]
        raise RuntimeError(
            f"All tensors must have the same dtype, got input1: {names[0]}, input2: "
            f"{names[1]}, weight: {names[2]}"
        )
    d1, d2 = input1.dim(), input2.dim()
    if d1 != d2:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {d1} and {d2}")
    for i in range(d1 - 1):
        a, b = input1.size(i), input2.size(i)
        if a != b:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {a} and {b}"
            )
    if input1.size(-1) != weight.size(1):
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but "
            f"expected {weight.size(1)}"
        )
    if input2.size(-1) != weight.size(2):
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but "
            f"expected {weight.size(2)}"
        )
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.size(0)} but "
            f"expected {weight.size(0)}"
        )
    out, in1, in2 = weight.shape
    w = weight.permute(1, 0, 2).reshape(in1, out * in2)
    t = input1.matmul(w).reshape(list(input1.shape[:-1]) + [out, in2])
    y = (t * input2.unsqueeze(-2)).sum(-1)
    if bias is not None:
        y = y + bias
    return y
