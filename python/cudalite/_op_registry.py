"""The elementwise ops as the core declares them: one row per op (Note [The op registry],
``csrc/ops/ops.def``).

The functions (``_ops``), the Tensor methods with their in-place forms (``_tensor_math``),
the autograd recording (``autograd/derivatives.py``), ``docs/ops.md`` and the registry's
tests are all built from these rows, so an op is declared once.
"""

from __future__ import annotations

from typing import NamedTuple

from cudalite import _C


class OpInfo(NamedTuple):
    """One row of ``csrc/ops/ops.def``."""

    name: str  # torch's name of the function and the method
    arity: int  # 1 or 2
    index: int  # the op's number for ``_C._unary`` / ``_C._binary``
    result: str  # "same", "bool" or "float" (integers computed in the default dtype)
    loop: str  # input dtypes the kernel takes: "all", "floating", "integral", "not_bool"
    inplace: bool  # has ``Tensor.name_``
    grad: bool  # differentiable: a formula in autograd/derivatives.py
    tensor_only: bool  # torch takes no Python numbers as operands
    custom: bool  # the Python function is written by hand in _ops.py
    int_identity: bool  # integer inputs are returned unchanged
    aliases: tuple[str, ...]  # torch's other names of the function and the method
    numpy: str  # a NumPy expression of x (and y) computing the same, for the tests


OPS: tuple[OpInfo, ...] = tuple(
    OpInfo(*row[:10], tuple(row[10].split()), row[11]) for row in _C._op_info
)
BY_NAME = {op.name: op for op in OPS}
BINARY = {op.name: op.index for op in OPS if op.arity == 2}
UNARY = {op.name: op.index for op in OPS if op.arity == 1}
