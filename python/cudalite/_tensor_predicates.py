"""What a tensor is: the predicates and properties torch's tensors answer about their kind,
layout, device family, names and conjugate / negative bits, and the no-op views of those
bits (``conj``, ``resolve_conj``, ``resolve_neg``, ``conj_physical``, ``real``, ``H``), as torch
answers them for a dense, strided, real tensor on the CPU or a CUDA device (cudalite has no
complex dtypes, no named, sparse, quantized or nested tensors and no other devices).
"""

from __future__ import annotations

import warnings

from cudalite._C import Tensor
from cudalite._tensor import _methods, method

__all__ = [
    "is_complex",
    "is_conj",
    "is_neg",
    "is_nonzero",
    "is_distributed",
    "conj",
    "resolve_conj",
    "resolve_neg",
    "conj_physical",
    "real",
]

# Devices and layouts cudalite does not have: False for every tensor, as torch's properties
# answer for a dense CPU or CUDA tensor.
_ALWAYS_FALSE = (
    "is_meta",
    "is_xpu",
    "is_mps",
    "is_ipu",
    "is_mtia",
    "is_maia",
    "is_xla",
    "is_vulkan",
    "is_mkldnn",
    "is_nested",
    "is_quantized",
    "is_sparse",
    "is_sparse_csr",
)


def _false(self):
    return False


for _name in _ALWAYS_FALSE:
    _methods[_name] = property(_false, doc=f"False: cudalite has no such tensors ({_name}).")


@method(name="is_complex")
def _is_complex(self):
    """False: cudalite has no complex dtypes."""
    return False


@method(name="is_conj")
def _is_conj(self):
    """False: a real tensor's conjugate bit is never set."""
    return False


@method(name="is_neg")
def _is_neg(self):
    """False: a real tensor's negative bit is never set."""
    return False


@method(name="is_distributed")
def _is_distributed(self):
    """False, as torch answers for every dense tensor."""
    return False


@method(name="has_names")
def _has_names(self):
    """False: cudalite's dimensions have no names."""
    return False


_methods["names"] = property(
    lambda self: (None,) * self.dim(), doc="The names of the dims: None for each one."
)


@method(name="is_nonzero")
def _is_nonzero(self):
    """Whether the one element is not zero (NaN counts as non-zero)."""
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item())


@method(name="conj")
def _conj(self):
    """``self``: the conjugate of a real tensor is the tensor itself."""
    return self


@method(name="resolve_conj")
def _resolve_conj(self):
    """``self`` (the conjugate bit of a real tensor is never set)."""
    return self


@method(name="resolve_neg")
def _resolve_neg(self):
    """``self`` (the negative bit of a real tensor is never set)."""
    return self


@method(name="conj_physical")
def _conj_physical(self):
    """``self``: the conjugate of a real tensor is the tensor itself."""
    return self


@method(name="conj_physical_")
def _conj_physical_(self):
    """``self``, unchanged (a real tensor is its own conjugate)."""
    return self


def _real_get(self):
    return self


def _real_set(self, value):
    self.copy_(value)


_methods["real"] = property(_real_get, _real_set, doc="``self``: a real tensor's real part.")


def _check_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


def is_complex(input):
    _check_tensor("is_complex", input)
    return False


def is_conj(input):
    _check_tensor("is_conj", input)
    return False


def is_neg(input):
    _check_tensor("is_neg", input)
    return False


def is_nonzero(input):
    _check_tensor("is_nonzero", input)
    return input.is_nonzero()


def is_distributed(input):
    _check_tensor("is_distributed", input)
    return False


def conj(input):
    _check_tensor("conj", input)
    return input


def resolve_conj(input):
    _check_tensor("resolve_conj", input)
    return input


def resolve_neg(input):
    _check_tensor("resolve_neg", input)
    return input


def conj_physical(input, *, out=None):
    _check_tensor("conj_physical", input)
    if out is not None:
        from cudalite._reductions import _out

        return _out(input.clone(), out, exact=True)
    return input


def real(input):
    _check_tensor("real", input)
    return input


# ---- dim_order ----


_AMBIGUITY_TYPE = "The ambiguity_check argument must be a bool or a list of memory formats."


def _should_swap(shape, strides, a, b):
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0

    def ge(x, y):
        if y == 0:
            return True
        if x == 0:
            return False
        return x >= y or x % y == 0

    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    if ge(sa, sb):
        return 1
    return 0


def _physical_order(t, ambiguity_check):
    """torch's logical-to-physical permutation of one tensor's dims (outermost first), and
    whether ``ambiguity_check`` finds two neighbours in it unordered."""
    from cudalite._memory_format import channels_last

    n = t.dim()
    if n <= 1:
        return list(range(n)), False
    contiguous = t.is_contiguous()
    last = n == 4 and t.is_contiguous(memory_format=channels_last)
    if contiguous and not last:
        return list(range(n)), False
    if last and not contiguous:
        return [0, *range(2, n), 1], False
    shape, strides = list(t.shape), list(t.stride())
    perm = list(reversed(range(n)))
    for i in range(1, n):
        d1 = i
        for d0 in reversed(range(i)):
            c = _should_swap(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    ambiguous = bool(ambiguity_check) and any(
        _should_swap(shape, strides, perm[i], perm[i + 1]) != -1 for i in range(n - 1)
    )
    return list(reversed(perm)), ambiguous


@method(name="dim_order")
def _dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (``(0, 1, 2, 3)`` for a contiguous
    4-D tensor, ``(0, 2, 3, 1)`` for channels-last). ``ambiguity_check=True`` raises when the
    order is not unique (a size-1 dim, two equal strides); a list of memory formats raises
    then unless exactly one of them describes the tensor."""
    from cudalite._memory_format import memory_format

    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(
            isinstance(f, memory_format) for f in ambiguity_check
        ):
            raise TypeError(_AMBIGUITY_TYPE)
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    sizes, strides = list(self.shape), list(self.stride())
    multiple = any(a == b for a, b in zip(strides, strides[1:], strict=False)) or any(
        s == 1 for s in sizes
    )
    legal = sum(1 for f in formats if self.is_contiguous(memory_format=f))
    if check and multiple and legal != 1:
        raise RuntimeError(
            "The tensor does not have unique dim order, or cannot map to exact one of the given "
            "memory formats."
        )
    perm, ambiguous = _physical_order(self, ambiguity_check)
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


# ---- sparse, named and legacy queries of a dense tensor ----


def _imag(self):
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


_methods["imag"] = property(_imag, doc="Refused: a real tensor has no imaginary part.")


def _volatile(self):
    import warnings

    warnings.warn(
        "volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2
    )
    return False


_methods["volatile"] = property(_volatile, doc="False (removed from torch; warns).")
_methods["name"] = property(lambda self: None, doc="None: cudalite's tensors have no names.")


@method(name="to_dense")
def _to_dense(self, dtype=None, *, masked_grad=None):
    """``self`` (already dense), or a copy of another ``dtype``."""
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


@method(name="dense_dim")
def _dense_dim(self):
    """The number of dense dims: all of them."""
    return self.dim()


@method(name="sparse_dim")
def _sparse_dim(self):
    """The number of sparse dims: none."""
    return 0


@method(name="is_coalesced")
def _is_coalesced(self):
    raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")


@method(name="values")
def _values(self):
    raise RuntimeError("values expected sparse tensor layout but got Strided")


@method(name="indices")
def _indices(self):
    raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")


@method(name="rename")
def _rename(self, *names, **rename_map):
    """Names for the dims: only None (no names) is supported, which gives a view of
    ``self``."""
    if rename_map or any(n is not None for n in names):
        raise RuntimeError("cudalite has no named tensors: rename() takes only None")
    return self.view(list(self.shape))


@method(name="rename_")
def _rename_(self, *names, **rename_map):
    """``rename`` in place: only None (no names) is supported; returns ``self``."""
    if rename_map or any(n is not None for n in names):
        raise RuntimeError("cudalite has no named tensors: rename_() takes only None")
    return self


def _unnamed(self):
    dims = ", ".join(["None"] * self.dim())
    return RuntimeError(
        f"align_to: All input dims must be named. Found unnamed dim at index 0 of Tensor[{dims}]"
    )


@method(name="align_to")
def _align_to(self, *names):
    """Refused as torch refuses it for a tensor without names (every cudalite tensor)."""
    if self.dim() == 0:
        return self
    raise _unnamed(self)


@method(name="align_as")
def _align_as(self, other):
    """Refused as torch refuses it for a tensor without names (every cudalite tensor)."""
    if self.dim() == 0:
        return self
    raise _unnamed(self)


def _h(self):
    """The conjugate transpose of a matrix: its transpose (a view)."""
    if self.dim() == 2:
        return self.transpose(0, 1)
    if self.dim() == 0:
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return self
    extra = ". For batches of matrices, consider using tensor.mH" if self.dim() > 2 else "."
    raise RuntimeError(
        f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor{extra}"
    )


_methods["H"] = property(_h)
