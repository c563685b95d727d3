"""Products made of the matrix products (Note [CPU matmul through NumPy]): addmv, addr,
baddbmm, addbmm and the in-place addmm_, outer / ger, inner, vdot, kron and cross.

Each is a composition of recorded Tensor methods (mv, mm, bmm, mul, add), so autograd
differentiates it through its parts.
"""

from __future__ import annotations

import sys
import warnings

from cudalite import _C
from cudalite._reductions import _out
from cudalite._tensor import method
from cudalite._tensor_scatter import out_no_grad

__all__ = [
    "addmv",
    "addmv_",
    "addr",
    "baddbmm",
    "addbmm",
    "outer",
    "ger",
    "inner",
    "vdot",
    "kron",
    "cross",
]


def _api():
    return sys.modules["cudalite"]  # the recorded top-level functions (cat, ...)


def _scaled_sum(input, prod, beta, alpha):
    """``beta * input + alpha * prod`` as torch's addmm family: integer results take the
    scalars as integers, and a beta of 0 ignores ``input`` (NaN included)."""
    rt = _C._result_type(input, prod)
    if not rt.is_floating_point and rt != _C.bool:
        beta, alpha = int(beta), int(alpha)
    r = prod if alpha == 1 else prod * alpha
    if beta == 0:
        _C._broadcast_shapes(tuple(input.shape), tuple(prod.shape))
        return r.to(rt) if r.dtype != rt else r
    inp = input.expand(tuple(prod.shape))
    return (inp if beta == 1 else inp * beta) + r


def _into(self, r, name):
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(
            f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
            f"{list(r.shape)} should match"
        )
    return self.copy_(r)


def _dims(t):
    return "x".join(str(s) for s in t.shape)


# ---- addmv ----


def _addmv(input, mat, vec, beta, alpha):
    if mat.dim() != 2 or vec.dim() != 1 or mat.shape[1] != vec.shape[0]:
        if mat.dim() == 2 and vec.dim() == 1:
            raise RuntimeError(
                f"size mismatch, got input ({_dims(input)}), mat ({_dims(mat)}), vec ({_dims(vec)})"
            )
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}"
        )
    if input.dim() > 1 or (input.numel() != 1 and input.numel() != mat.shape[0]):
        raise RuntimeError(
            f"size mismatch, got input ({_dims(input)}), mat ({_dims(mat)}), vec ({_dims(vec)})"
        )
    return _scaled_sum(input, mat.mv(vec), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    out_no_grad("addmv", out, input, mat, vec)
    return _out(_addmv(input, mat, vec, beta, alpha), out)


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    return _into(input, _addmv(input, mat, vec, beta, alpha), "addmv_")


method(name="addmv")(lambda self, mat, vec, *, beta=1, alpha=1: _addmv(self, mat, vec, beta, alpha))
method(name="addmv_")(addmv_)


@method(name="addmm_")
def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    if mat1.dim() == 2 and mat2.dim() == 2:
        shape = (mat1.shape[0], mat2.shape[1])
        if tuple(self.shape) != shape:
            raise RuntimeError(
                f"Bad in-place call: input tensor size {list(self.shape)} and output tensor "
                f"size {list(shape)} should match"
            )
    return _into(self, self.addmm(mat1, mat2, beta=beta, alpha=alpha), "addmm_")


# ---- addr, outer ----


def _vector(name, arg, t):
    if t.dim() != 1:
        raise RuntimeError(f"{name}: Expected 1-D argument {arg}, but got {t.dim()}-D")


def _outer(input, vec2, name="outer", args=("self", "vec2")):
    _vector(name, args[0], input)
    _vector(name, args[1], vec2)
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def _addr(input, vec1, vec2, beta, alpha):
    prod = _outer(vec1, vec2, "addr", ("vec1", "vec2"))
    shape = tuple(prod.shape)
    input.expand(shape)  # torch's error where input doesn't broadcast to the result
    if prod.dtype == _C.bool or input.dtype == _C.bool:
        keep = input.bool() & bool(beta) if beta else input.new_zeros(shape, dtype=_C.bool)
        return keep | (prod.bool() & bool(alpha))
    return _scaled_sum(input, prod, beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    out_no_grad("addr", out, input, vec1, vec2)
    return _out(_addr(input, vec1, vec2, beta, alpha), out)


method(name="addr")(
    lambda self, vec1, vec2, *, beta=1, alpha=1: _addr(self, vec1, vec2, beta, alpha)
)
method(name="addr_")(
    lambda self, vec1, vec2, *, beta=1, alpha=1: _into(
        self, _addr(self, vec1, vec2, beta, alpha), "addr_"
    )
)


def outer(input, vec2, *, out=None):
    """The outer product of two vectors."""
    out_no_grad("outer", out, input, vec2)
    return _out(_outer(input, vec2), out)


ger = outer
method(name="outer")(lambda self, vec2: _outer(self, vec2))
method(name="ger")(lambda self, vec2: _outer(self, vec2))


# ---- baddbmm, addbmm ----


def _batches(b1, b2):
    if b1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    want = [b1.shape[0], b1.shape[2]]
    if list(b2.shape[:2]) != want:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {want} but got: "
            f"{list(b2.shape[:2])}."
        )
    return b1.bmm(b2)


def _baddbmm(input, b1, b2, beta, alpha):
    if b1.dim() >= 2 and b2.dim() >= 3:  # torch expands input to the result's size first
        input.expand((b1.shape[0], b1.shape[1], b2.shape[2]))
    return _scaled_sum(input, _batches(b1, b2), beta, alpha)


def _addbmm(input, b1, b2, beta, alpha):
    if b1.dim() >= 2 and b2.dim() >= 3:
        input.expand((b1.shape[1], b2.shape[2]))
    return _scaled_sum(input, _batches(b1, b2).sum(0), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    out_no_grad("baddbmm", out, input, batch1, batch2)
    return _out(_baddbmm(input, batch1, batch2, beta, alpha), out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum over the batch of bmm(batch1, batch2)``."""
    out_no_grad("addbmm", out, input, batch1, batch2)
    return _out(_addbmm(input, batch1, batch2, beta, alpha), out)


for _n, _f in (("baddbmm", _baddbmm), ("addbmm", _addbmm)):
    method(name=_n)(lambda self, b1, b2, *, beta=1, alpha=1, _f=_f: _f(self, b1, b2, beta, alpha))
    method(name=_n + "_")(
        lambda self, b1, b2, *, beta=1, alpha=1, _f=_f, _n=_n: _into(
            self, _f(self, b1, b2, beta, alpha), _n + "_"
        )
    )


# ---- inner, vdot, kron ----


def _inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    if input.dim() == 1 and other.dim() == 1 and input.dtype == _C.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    k = input.shape[-1]
    a, b = input.reshape(-1, k), other.reshape(-1, k)
    return a.mm(b.t()).reshape(*input.shape[:-1], *other.shape[:-1])


def inner(input, other, *, out=None):
    """Sums of products over the last dimension of both tensors."""
    out_no_grad("inner", out, input, other)
    return _out(_inner(input, other), out)


method(name="inner")(lambda self, other: _inner(self, other))


def _vdot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input.dtype == _C.bool or other.dtype == _C.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    if input.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype._short_name} and {other.dtype._short_name}"
        )
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{input.shape[0]} and {other.shape[0]} elements respectively"
        )
    return input.dot(other)  # real tensors: no conjugate


def vdot(input, other, *, out=None):
    """The dot product of two vectors (the first conjugated: the same for real tensors)."""
    out_no_grad("vdot", out, input, other)
    return _out(_vdot(input, other), out)


method(name="vdot")(lambda self, other: _vdot(self, other))


def _kron(input, other):
    nd = max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    inter_a, inter_b = [], []
    for sa, sb in zip(a.shape, b.shape, strict=True):
        inter_a += [sa, 1]
        inter_b += [1, sb]
    r = a.reshape(inter_a) * b.reshape(inter_b)
    return r.reshape([sa * sb for sa, sb in zip(a.shape, b.shape, strict=True)])


def kron(input, other, *, out=None):
    """The Kronecker product: every element of ``input`` times the whole of ``other``."""
    out_no_grad("kron", out, input, other)
    return _out(_kron(input, other), out)


method(name="kron")(lambda self, other: _kron(self, other))


# ---- cross ----


def _cross(input, other, dim):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype._short_name} but found {other.dtype._short_name}"
        )
    shape = tuple(_C._broadcast_shapes(tuple(input.shape), tuple(other.shape)))
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=3,
        )
        dims = [d for d, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        d = dims[0]
    else:
        d = _C._wrap_dim(dim, len(shape))
        if input.shape[d] != 3 or other.shape[d] != 3:
            raise RuntimeError(
                f"linalg.cross: inputs dimension {d} must have length 3. Got "
                f"{input.shape[d]} and {other.shape[d]}"
            )
    if input.dtype == _C.bool or other.dtype == _C.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    a, b = input.expand(shape), other.expand(shape)
    a0, a1, a2 = (a.narrow(d, k, 1) for k in range(3))
    b0, b1, b2 = (b.narrow(d, k, 1) for k in range(3))
    parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    return _api().cat(parts, d)


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along ``dim`` (the first dimension of size 3 when
    ``dim`` is None, deprecated as in torch)."""
    out_no_grad("cross", out, input, other)
    return _out(_cross(input, other, dim), out)


method(name="cross")(lambda self, other, dim=None: _cross(self, other, dim))


# ---- matrix_power ----

__all__ += ["matrix_power"]


def _matrix_power(input, n):
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        if input.dim() < 2:
            raise RuntimeError(
                "linalg.matrix_power: The input tensor A must have at least 2 dimensions."
            )
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{input.shape[-2]} by {input.shape[-1]} matrices"
        )
    if n < 0:
        raise NotImplementedError(
            "matrix_power with a negative exponent needs a matrix inverse, which cudalite "
            "does not have"
        )
    if n == 0:
        from cudalite._creation import eye

        k = input.shape[-1]
        return eye(k, dtype=input.dtype, device=input.device).expand(input.shape).clone()
    # binary exponentiation: log2(n) squarings
    result, base = None, input
    while n:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result.clone() if result is input else result


def matrix_power(input, n, *, out=None):
    """``input`` (a square matrix or a batch of them) multiplied by itself ``n`` times."""
    out_no_grad("matrix_power", out, input)
    return _out(_matrix_power(input, n), out)


method(name="matrix_power")(lambda self, n: _matrix_power(self, n))
