"""Tensor methods for math, reductions and shapes: thin wrappers over ``_ops``,
``_reductions`` and the C++ views, installed on ``Tensor`` by ``_tensor.install``."""

from __future__ import annotations

import builtins
import warnings

from cudalite import _C, _arg_parser, _checked, _indexing, _ops, _reductions, _sorting
from cudalite._op_registry import OPS
from cudalite._tensor import _methods, fast_methods, method

# Elementwise: Tensor.exp() is cudalite.exp(self), and exp_() writes in place: a method for
# every op of the registry (Note [The op registry]), in place where its row says so. add, sub
# and div take more arguments (their methods are below); true_divide is div without them.
_UNARY = [op.name for op in OPS if op.arity == 1 and op.inplace]
_UNARY_NO_INPLACE = [op.name for op in OPS if op.arity == 1 and not op.inplace]
_BINARY = [op.name for op in OPS if op.arity == 2 and not op.custom] + ["true_divide"]
_BINARY_INPLACE = {op.name for op in OPS if op.arity == 2 and op.inplace} | {"true_divide"}
_ALIASES = {a: op.name for op in OPS if not op.custom for a in op.aliases}


def _unary(name, inplace):
    op = _ops.UNARY[name]

    if inplace:

        def fn(self):
            return _C._unary(op, self, self)
    else:

        def fn(self):
            return _C._unary(op, self, None)

    fn.__name__ = name + ("_" if inplace else "")
    return fn


# true_divide_ takes the C++ in-place dunder directly (one call, as `a /= b` does; mul_ is
# a C++ method, below); the dunder answers NotImplemented for operands it doesn't take, and
# the full path raises.
_INPLACE_DUNDER = {"true_divide": "__itruediv__"}


def _binary(name, inplace):
    f = getattr(_ops, name)
    public = name + ("_" if inplace else "")
    if inplace and name in _INPLACE_DUNDER:
        dunder = getattr(_C.Tensor, _INPLACE_DUNDER[name])

        def fn(self, other):
            r = dunder(self, other)
            if r is NotImplemented:
                _ops.check_args(public, self, other, True)
                return f(self, other, out=self)
            return r
    elif inplace:

        def fn(self, other):
            _ops.check_args(public, self, other, True)
            return f(self, other, out=self)
    else:

        def fn(self, other):
            _ops.check_args(name, self, other, True)
            return f(self, other)

    fn.__name__ = name + ("_" if inplace else "")
    return fn


for _n in _UNARY:
    _methods[_n] = _unary(_n, False)
    _methods[_n + "_"] = _unary(_n, True)
for _n in _UNARY_NO_INPLACE:
    _methods[_n] = _unary(_n, False)
for _n in _BINARY:
    _methods[_n] = _binary(_n, False)
    if _n in _BINARY_INPLACE:
        _methods[_n + "_"] = _binary(_n, True)
for _alias, _target in _ALIASES.items():
    _methods[_alias] = _methods[_target]
    if _target + "_" in _methods:
        _methods[_alias + "_"] = _methods[_target + "_"]


# add_/sub_/mul_/div_ are C++ methods (bind_arith.cpp) that take the in-place dunder in one
# call; what they don't take (alpha, rounding_mode, other operands) comes here.
def div_(self, other, *, rounding_mode=None):
    _ops.check_args("div_", self, other, True)
    return _ops.div(self, other, rounding_mode=rounding_mode, out=self)


def sub_(self, other, *, alpha=1):
    _ops.check_args("sub_", self, other, True)
    return _ops.sub(self, other, alpha=alpha, out=self)


def add_(self, other, *, alpha=1):
    _ops.check_args("add_", self, other, True)
    return _ops.add(self, other, alpha=alpha, out=self)


def mul_(self, other):
    _ops.check_args("mul_", self, other, True)
    return _ops.mul(self, other, out=self)


fast_methods(add_=add_, sub_=sub_, mul_=mul_, div_=div_)


@method
def add(self, other, *, alpha=1):
    _ops.check_args("add", self, other, True)
    return _ops.add(self, other, alpha=alpha)


@method
def sub(self, other, *, alpha=1):
    _ops.check_args("sub", self, other, True)
    return _ops.sub(self, other, alpha=alpha)


@method
def div(self, other, *, rounding_mode=None):
    _ops.check_args("div", self, other, True)
    return _ops.div(self, other, rounding_mode=rounding_mode)


# The aliases of the hand-written ops (subtract, divide) and their in-place forms.
_CUSTOM_INPLACE = {"add": add_, "sub": sub_, "div": div_}
for _op in OPS:
    if _op.custom:
        for _alias in _op.aliases:
            _methods[_alias] = _methods[_op.name]
            if _op.inplace:
                _methods[_alias + "_"] = _CUSTOM_INPLACE[_op.name]


def _clamp_method(name, inplace):
    def fn(self, min=None, max=None):
        _ops.check_clamp_args(name, self, min, max, method=True)
        return _ops.clamp_checked(self, min, max, self if inplace else None)

    fn.__name__ = name
    return fn


for _n in ("clamp", "clip"):
    _methods[_n], _methods[_n + "_"] = _clamp_method(_n, False), _clamp_method(_n + "_", True)


@method
def where(self, condition, other):
    return _ops.where(condition, self, other)


def _masked_fill_value(self, mask, value):
    """torch's checks of masked_fill's arguments; returns the value to fill with."""
    if isinstance(mask, _C.Tensor) and mask.dtype != _C.bool:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_ops._dtype_name(mask.dtype)}"
        )
    if isinstance(value, _C.Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.dim()} dimension(s)."
            )
        if value.device.type != "cpu":
            return value  # read on the device: no synchronisation, no range check
        value = value.item()
    if isinstance(value, (bool, int, float)):
        _C._check_fill_value(value, self.dtype)
    return value


def _masked_fill(self, mask, value):
    value = _masked_fill_value(self, mask, value)
    return _ops.where(mask, value, self).to(self.dtype)


@method
def masked_fill(self, mask, value):
    return _masked_fill(self, mask, value)


@method
def masked_fill_(self, mask, value):
    if tuple(mask.shape) != tuple(self.shape):
        shape = _C._broadcast_shapes(tuple(self.shape), tuple(mask.shape))
        if tuple(shape) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
    _C._copy_(self, _masked_fill(self, mask, value), False)
    return self


@method
def lerp(self, end, weight):
    return _ops.lerp(self, end, weight)


for _n in ("matmul", "mm", "bmm", "mv", "dot", "equal", "allclose", "isclose"):
    _methods[_n] = getattr(_ops, _n)


@method
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return _ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)


@method
def __matmul__(self, other):
    if not isinstance(other, _C.Tensor):
        return NotImplemented
    return _ops.matmul(self, other)


@method
def __rmatmul__(self, other):
    if not isinstance(other, _C.Tensor):
        return NotImplemented
    return _ops.matmul(other, self)


@method
def __pos__(self):
    return self.clone()


# Reductions.
for _n in (
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "std",
    "var",
    "norm",
    "all",
    "any",
    "count_nonzero",
    "nansum",
    "nanmean",
):
    _methods[_n] = getattr(_reductions, _n)

fast_methods(sum=_reductions.sum)

# ---- sorting, logsumexp, logit ----
for _n in _sorting.__all__:
    _methods[_n] = getattr(_sorting, _n)
_methods["logsumexp"] = _reductions.logsumexp
_methods["logit"] = _ops.logit
_methods["logit_"] = _ops.logit_


@method
def nonzero(self, *, as_tuple=False):
    if as_tuple is not False and as_tuple is not True:
        raise TypeError(
            f"nonzero(): argument 'as_tuple' must be bool, not {_arg_parser.tp_name(as_tuple)}"
        )
    if as_tuple and self.dim() == 0:  # torch treats a 0-dim tensor as one element here
        return (_C._nonzero(self.reshape(1)).reshape(-1),)
    nz = _C._nonzero(self)
    if as_tuple:
        return tuple(nz.select(1, i) for i in range(nz.shape[1]))
    return nz


@method
def index_select(self, dim, index):
    if index.dim() > 1:  # torch's CPU and CUDA kernels word it differently
        if self.is_cuda:
            raise RuntimeError("Index is supposed to be an empty tensor or a vector")
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    dim = _C._wrap_dim(dim, self.dim())
    size = self.shape[dim] if self.dim() else 1
    if self.dim() == 0 and index.numel() != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)"
        )
    if size == 0 and index.numel():
        if self.dim() == 1:  # torch's 1-D kernel checks the indices first
            raise IndexError("index out of range in self")
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    # Unlike indexing, index_select takes no negative indices (one check, one synchronisation).
    flat = index.reshape(-1)
    outside = (flat < 0) | (flat >= size)
    if flat.numel() and outside.any().item():
        if self.dim() > 1 and dim == 1:  # torch's CPU kernel for dim 1 words it so
            bad = flat[outside][0].item()
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
        raise IndexError("index out of range in self")
    if self.dim() == 0:
        return self.clone()
    idx = [slice(None)] * self.dim()
    idx[dim] = flat
    return _indexing.getitem(self, tuple(idx), checked=True)


@method
def index_put_(self, indices, values, accumulate=False):
    return _indexing.index_put_(self, indices, values, accumulate)


# Shapes.


@method
def swapdims(self, dim0, dim1):
    return self.transpose(dim0, dim1)


@method
def adjoint(self):
    if self.dim() == 0:
        warnings.warn(
            "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return self._alias()
    if self.dim() < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. "
            f"Got {self.dim()}-D tensor."
        )
    return self.transpose(-2, -1)  # (no complex dtypes: the conjugate is the tensor)


@method
def is_inference(self):
    # cudalite's inference_mode is no_grad: tensors made in it are ordinary tensors.
    return False


@method
def t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return self.transpose(0, 1) if self.dim() == 2 else self._alias()


# In-place views: self takes the view's geometry (the same storage). Autograd, once armed,
# records them (views.inplace_view).


def _become(self, view):
    """Gives ``self`` the geometry of ``view`` (of self); counts as an in-place write, as
    torch's in-place views do."""
    self._set_metadata(view)
    self._bump_version()


@method
def t_(self):
    """In-place ``t()`` (tensors of at most two dims)."""
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    _become(self, self.t())
    return self


@method
def transpose_(self, dim0, dim1):
    """In-place ``transpose``."""
    _become(self, self.transpose(dim0, dim1))
    return self


_methods["swapdims_"] = _methods["transpose_"]


@method
def swapaxes_(self, axis0, axis1):
    _become(self, self.transpose(axis0, axis1))
    return self


@method
def squeeze_(self, dim=None):
    """In-place ``squeeze``."""
    _become(self, self.squeeze() if dim is None else self.squeeze(dim))
    return self


@method
def unsqueeze_(self, dim):
    """In-place ``unsqueeze``."""
    _become(self, self.unsqueeze(dim))
    return self


def _T(self):  # noqa: N802
    return self.permute(tuple(reversed(range(self.dim()))))  # (torch refuses permute())


def _matrix_transpose(name):
    def fn(self):
        if self.dim() == 0:  # torch: the identity, with a deprecation warning
            hint = (
                "Consider using x.conj()."
                if name == "mH"
                else "This function is the identity in these cases."
            )
            warnings.warn(
                f"Tensor.{name} is deprecated on 0-D tensors. {hint}", UserWarning, stacklevel=2
            )
            return self._alias()
        if self.dim() < 2:
            raise RuntimeError(
                f"tensor.{name} is only supported on matrices or batches of matrices. "
                f"Got {self.dim()}-D tensor."
            )
        return self.transpose(-2, -1)  # mH too: no complex dtypes, nothing to conjugate

    return fn


@method
def view_as(self, other):
    return self.view(*other.shape)


@method
def reshape_as(self, other):
    return self.reshape(*other.shape)


@method
def expand_as(self, other):
    return self.expand(*other.shape)


@method
def narrow(self, dim, start, length):
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _C._wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return self._slice(dim, start, start + length, 1)


@method
def unbind(self, dim=0):
    dim = _C._wrap_dim(dim, self.dim())
    return tuple(self.select(dim, i) for i in range(self.shape[dim]))


# The overloads of the function torch's Python split calls (torch._VF.split), as listed.
_SPLIT_TEXTS = [
    "(Tensor input, int split_size, int dim = 0)",
    "(Tensor input, tuple of ints split_size, int dim = 0)",
]


@method
def split(self, split_size, dim=0):
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _C._wrap_dim(dim, self.dim())
    n = self.shape[dim]
    if isinstance(split_size, int) and not isinstance(split_size, bool):
        if split_size < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={split_size}"
            )
        if split_size == 0 and n != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        sizes = [min(split_size, n - i) for i in range(0, n, split_size or 1)] or [0]
    else:
        # torch's Python split hands anything but an int to split_with_sizes: its parser's
        # TypeErrors (a bool is neither: "split() received an invalid combination").
        if isinstance(split_size, bool):
            raise _arg_parser.invalid_combination(
                "split", (self, split_size, dim), {}, _SPLIT_TEXTS
            )
        _checked.parser("f", "split_with_sizes").parse((self, split_size, dim), {})
        sizes = list(split_size)
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sizes}"
            )
    out, pos = [], 0
    for s in sizes:
        out.append(self._slice(dim, pos, pos + s, 1))
        pos += s
    return tuple(out)


@method
def chunk(self, chunks, dim=0):
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = self.shape[_C._wrap_dim(dim, self.dim())]
    if n == 0:  # torch gives `chunks` empty pieces
        return self.split([0] * chunks, dim)
    return self.split(-(-n // chunks), dim)


@method
def repeat(self, *sizes):
    sizes = (
        list(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else list(sizes)
    )
    if len(sizes) < self.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number "
            "of dimensions of tensor"
        )
    x = self.reshape([1] * (len(sizes) - self.dim()) + list(self.shape))
    expanded, final = [], []
    for r, s in zip(sizes, x.shape, strict=True):
        expanded += [r, s]
        final.append(r * s)
    for f in final:
        if f < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {f}: {final}")
    y = x.reshape([v for s in x.shape for v in (1, s)]).expand(*expanded)
    # Always a new tensor, as torch's (a reshape of `y` could be a view of self's memory).
    out = _C._empty(final, self.dtype, self.device)
    _C._copy_(out.view(expanded), y, False, bump_version=False)
    return out


def _dense_order(t):
    """The dims of a non-contiguous tensor whose elements fill a block of memory, outermost
    first (None when contiguous, or when some overlap or leave gaps)."""
    if t.is_contiguous():
        return None
    order = sorted(range(t.dim()), key=lambda d: -t.stride(d))
    step = 1
    for d in reversed(order):
        if t.shape[d] != 1 and t.stride(d) != step:
            return None
        step *= t.shape[d]
    return order


@method
def flip(self, *dims):
    if not dims:
        raise TypeError("flip takes dims")  # worded by Note [Argument errors]
    dims = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else list(dims)
    if builtins.any(isinstance(d, bool) for d in dims):
        raise TypeError("flip takes dims")
    dims = [_C._wrap_dim(d, self.dim()) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if self.dim() == 0:
        return self.clone()
    order = _dense_order(self)
    if order is not None:  # flipped in memory order: the result keeps self's layout
        back = [order.index(d) for d in range(self.dim())]
        return self.permute(order).flip([back[d] for d in dims]).permute(back)._alias()
    idx = [slice(None)] * self.dim()
    for d in dims:
        n = self.shape[d]
        idx[d] = _C._arange(n - 1, -1, -1, _C.int64, self.device)
    out = self
    for d in dims:
        sel = [slice(None)] * self.dim()
        sel[d] = idx[d]
        out = _indexing.getitem(out, tuple(sel))
    return out if dims else self.clone()


_methods["T"] = property(_T)
_methods["mT"] = property(_matrix_transpose("mT"))
_methods["mH"] = property(_matrix_transpose("mH"))
