"""The elementwise ops as the core declares them: one row per op (Note [The op registry],
``csrc/ops/ops.def``).

The functions (``_ops``), the Tensor methods with their in-place forms (``_tensor_math``),
the autograd recording (``autograd/derivatives.py``), ``docs/ops.md`` and the registry's
tests are all built from these rows, so an op is declared once.
"""

from __future__ import annotations

from collections import namedtuple

from cudalite import _C

# One row of ``csrc/ops/ops.def`` (collections' namedtuple: typing's costs milliseconds of
# import time):
#   name          torch's name of the function and the method
#   arity         1 or 2
#   index         the op's number for ``_C._unary`` / ``_C._binary``
#   result        "same", "bool" or "float" (integers computed in the default dtype)
#   loop          input dtypes the kernel takes: "all", "floating", "integral", "not_bool"
#   inplace       has ``Tensor.name_``
#   grad          differentiable: a formula in autograd/derivatives.py
#   tensor_only   torch takes no Python numbers as operands
#   custom        the Python function is written by hand in _ops.py
#   int_identity  integer inputs are returned unchanged
#   aliases       torch's other names of the function and the method (a tuple)
#   numpy         a NumPy expression of x (and y) computing the same, for the tests
OpInfo = namedtuple(
    "OpInfo",
    "name arity index result loop inplace grad tensor_only custom int_identity aliases numpy",
)

OPS = tuple(OpInfo(*row[:10], tuple(row[10].split()), row[11]) for row in _C._op_info)
BY_NAME = {op.name: op for op in OPS}
BINARY = {op.name: op.index for op in OPS if op.arity == 2}
UNARY = {op.name: op.index for op in OPS if op.arity == 1}
