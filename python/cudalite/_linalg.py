"""Matrix products: ``mm``, ``mv``, ``dot``, ``bmm``, ``matmul`` and ``addmm``.

``matmul`` takes the same paths as torch's (dot, mv, mm, a folded mm/mv for a batch times a
matrix or vector, else a broadcast bmm), so each path raises the errors torch's kernel for it
raises. The products run on NumPy's BLAS on the CPU and cuBLAS on the GPU.
"""

from __future__ import annotations

import math
import warnings

from cudalite import _C
from cudalite._C import Tensor

__all__ = ["matmul", "mm", "bmm", "addmm", "mv", "dot"]
_STORAGE_MAX = (1 << 63) - 1  # the most bytes a storage may have


def cpp_name(dt):
    """The C++ type name torch's messages use for a dtype."""
    return {
        "float32": "float",
        "float64": "double",
        "int64": "long int",
        "int32": "int",
        "float16": "c10::Half",
        "bfloat16": "c10::BFloat16",
        "int16": "short int",
        "int8": "signed char",
        "uint8": "unsigned char",
        "bool": "bool",
    }[dt._name]


def _no_bool(t, kernel):
    if t.dtype == _C.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _np_matmul(a, b):
    """CPU matrix product through NumPy's BLAS (bfloat16 computed in float32)."""
    dt = a.dtype
    shape = [*a.shape[:-1], b.shape[-1]]
    if math.prod(shape) * dt.itemsize > _STORAGE_MAX:  # torch's error, before NumPy's
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape}")
    work = _C.float32 if dt == _C.bfloat16 else dt
    an = _C._numpy(_C._to(a, None, work, False, False))
    bn = _C._numpy(_C._to(b, None, work, False, False))
    import numpy as np

    if an.ndim == 2 and bn.ndim == 2:
        # np.dot hands transposed (Fortran-ordered) operands to BLAS as they are; np.matmul
        # runs its slow non-BLAS loop on them (e.g. weight.t() views).
        r = np.dot(an, bn)
    else:
        r = np.matmul(_blasable(an), _blasable(bn))
    return _C._to(_C._from_numpy_owned(np.ascontiguousarray(r)), None, dt, False, False)


def _blasable(x):
    """``x``, or a C-ordered copy when its matrices' rows are not unit-stride (np.matmul
    only hands those to BLAS)."""
    if x.strides[-1] == x.itemsize or x.size == 0:
        return x
    import numpy as np

    return np.ascontiguousarray(x)


def _product(a, b):
    """a @ b for 2-D, or 3-D with equal batch sizes, on the tensors' device."""
    if a.is_cuda or b.is_cuda:
        return _C._cuda_matmul(a, b)
    return _np_matmul(a, b)


def _check_mm(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: "
            f"{cpp_name(a.dtype)} != {cpp_name(b.dtype)}"
        )
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
            f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )
    _no_bool(a, "addmm_impl_cpu_")


def _check_mv(m, v):
    if m.dtype != v.dtype:
        raise RuntimeError(
            f"expected scalar type {m.dtype._short_name} but found {v.dtype._short_name}"
        )
    if m.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({m.shape[0]}), mat ({m.shape[0]}x"
            f"{m.shape[1]}), vec ({v.shape[0]})"
        )
    _no_bool(m, "addmv_impl_cpu")


def _check_dot(a, b):
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found "
            f"{a.dtype._short_name} and {b.dtype._short_name}"
        )
    if a.shape[0] != b.shape[0]:
        n, m = a.shape[0], b.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
            f"have the same number of elements, but got {n} and {m} elements "
            "respectively"
        )
    _no_bool(a, "dot")


def _check_bmm(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {a.dtype._short_name} but found {b.dtype._short_name}"
        )
    want = [a.shape[0], a.shape[2]]
    if list(b.shape[:2]) != want:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"{want} but got: {list(b.shape[:2])}."
        )
    _no_bool(a, "bmm")


def _out(r, out):
    """Writes ``r`` into ``out``, resized in place like torch's outputs (``resize_``, with
    torch's warning when it had elements)."""
    if out is None:
        return r
    if tuple(out.shape) != tuple(r.shape):
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(r.shape)}. This behavior is deprecated, and in a future cudalite release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        out._resize_(list(r.shape))
    _C._copy_(out, r, False)
    return out


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors."""
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    _C._check_same_device([input, mat2])
    _check_mm(input, mat2)
    return _out(_product(input, mat2), out)


def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    _C._check_same_device([input, vec])
    _check_mv(input, vec)
    return _out(_product(input, vec.unsqueeze(-1)).squeeze(-1), out)


def dot(input, other, *, out=None):
    """Inner product of two 1-D tensors."""
    _check_dot(input, other)
    _C._check_same_device([input, other])
    return _out(_product(input.unsqueeze(0), other.unsqueeze(-1)).reshape(()), out)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors (no broadcasting)."""
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _C._check_same_device([input, mat2])
    _check_bmm(input, mat2)
    return _out(_product(input, mat2), out)


def matmul(input, other, *, out=None):
    """torch.matmul: dot, mv, mm, or a batched product with broadcast batch dims."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        # Worded by the signature check (Note [Argument errors] in _checked.py).
        raise TypeError("matmul takes tensors")
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    _C._check_same_device([input, other])
    if input.is_cuda:
        # cuBLAS reads broadcast batches and transposes in place (csrc/cuda/blas.cpp).
        return _out(_C._cuda_matmul(input, other), out)
    if da == 1 and db == 1:
        return dot(input, other, out=out)
    if da == 2 and db == 1:
        return mv(input, other, out=out)
    if da == 1 and db == 2:
        a = input.unsqueeze(0)
        _check_mm(a, other)
        return _out(_product(a, other).squeeze(0), out)
    if da == 2 and db == 2:
        return mm(input, other, out=out)
    if da >= 3 and db <= 2:
        # Fold the batch into the rows of one matrix, as torch does.
        folded = input.reshape(-1, input.shape[-1])
        if db == 1:
            _check_mv(folded, other)
            r = _product(folded, other.unsqueeze(-1)).reshape(*input.shape[:-1])
        else:
            _check_mm(folded, other)
            r = _product(folded, other).reshape(*input.shape[:-1], other.shape[-1])
        return _out(r, out)
    a = input.unsqueeze(0) if da == 1 else input
    b = other.unsqueeze(-1) if db == 1 else other
    batch = tuple(_C._broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    n = math.prod(batch)
    a3 = a.expand(*batch, *a.shape[-2:]).reshape(n, *a.shape[-2:])
    b3 = b.expand(*batch, *b.shape[-2:]).reshape(n, *b.shape[-2:])
    _check_bmm(a3, b3)
    r = _product(a3, b3).reshape(*batch, a.shape[-2], b.shape[-1])
    if da == 1:
        r = r.squeeze(-2)
    if db == 1:
        r = r.squeeze(-1)
    return _out(r, out)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` expanded to the product's shape."""
    if mat1.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.dim()}-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{mat1.dtype._short_name} and {mat2.dtype._short_name}"
        )
    if input.dtype != mat2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got "
            f"{input.dtype._short_name} and {mat2.dtype._short_name}"
        )
    _C._check_same_device([input, mat1, mat2])
    _check_mm(mat1, mat2)
    if mat1.is_cuda and mat1.dtype.is_floating_point:
        return _out(_C._cuda_addmm(input, mat1, mat2, float(beta), float(alpha)), out)
    p = _product(mat1, mat2)
    base = input.expand(*p.shape)
    if not p.dtype.is_floating_point:
        alpha, beta = int(alpha), int(beta)  # torch converts them to the integer dtype
    if alpha != 1:
        p = p * alpha
    r = p if beta == 0 else p + (base if beta == 1 else base * beta)
    return _out(_C._to(r, None, mat2.dtype, False, False), out)
