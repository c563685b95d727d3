"""How tensors pickle: the rebuild functions of ``torch._utils`` and ``torch._tensor``.

A pickled tensor is a call ``_rebuild_tensor_v2(storage, storage_offset, size, stride,
requires_grad, backward_hooks)``; a Parameter is ``_rebuild_parameter(data, requires_grad,
backward_hooks)``; a tensor with Python attributes (or of a subclass) is wrapped in
``_rebuild_from_type_v2(func, type, args, state)``. ``cudalite.save`` writes these calls under
torch's names (``torch._utils._rebuild_tensor_v2``, ...) so that torch loads cudalite's files,
and ``cudalite.load`` maps torch's names back to the functions here.
"""

from __future__ import annotations

from collections import OrderedDict

from cudalite._C import Tensor
from cudalite.autograd._install import _PRIVATE

# Entries of a tensor's __dict__ that are cudalite's autograd bookkeeping, not attributes a
# user set: they are not pickled (torch keeps the same state in C++, out of __dict__). The
# private ones are those a shallow copy drops too (autograd/_install.py).
_AUTOGRAD_STATE = frozenset(_PRIVATE) | {
    "_rg",
    "_nograd_view",
    "_view_of_leaf",
    "_output_nr",
    "grad_fn",
    "grad",
}


def _get_obj_state(obj):
    """The Python attributes a user set on a tensor (``{}`` when none)."""
    return {k: v for k, v in obj.__dict__.items() if k not in _AUTOGRAD_STATE}


def _set_obj_state(obj, state):
    """Sets the attributes of ``state`` (a dict, or torch's ``(dict, slots)`` pair)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part:
            for k, v in part.items():
                setattr(obj, k, v)
    return obj


def _reduce_tensor(t):
    """``(_rebuild_tensor_v2, args)`` for a tensor: its whole storage and its geometry."""
    from cudalite.storage import UntypedStorage

    args = (
        UntypedStorage._of(t),
        t.storage_offset(),
        tuple(t.size()),
        t.stride(),
        t.requires_grad,
        OrderedDict(),  # backward hooks: never saved, as in torch
    )
    return (_rebuild_tensor_v2, args)


def reduce_ex(t):
    """``Tensor.__reduce_ex__``: the rebuild call, wrapped to restore attributes if any."""
    state = _get_obj_state(t)
    func, args = _reduce_tensor(t)
    if type(t) is Tensor and not state:
        return (func, args)
    return (_rebuild_from_type_v2, (func, type(t), args, state))


_INT64_MAX = 2**63 - 1


def _storage_class():
    global _UntypedStorage
    if _UntypedStorage is None:
        from cudalite.storage import UntypedStorage as _UntypedStorage
    return _UntypedStorage


_UntypedStorage = None


def _check_geometry(storage, storage_offset, size, stride):
    """torch's checks of ``set_``: a tensor must lie inside its storage. The file's numbers are
    checked as Python ints, before anything sized by them is made."""
    if not isinstance(storage, _storage_class()):
        raise TypeError(f"expected a storage to rebuild a tensor on, but got {type(storage)}")
    size, stride = list(size), list(stride)
    for what, values in (("size", size), ("stride", stride), ("storage offset", [storage_offset])):
        for v in values:
            if type(v) is not int:
                raise TypeError(f"a tensor's {what} must be ints, but got {type(v).__name__}")
            if v > _INT64_MAX:
                raise RuntimeError(f"Tensor: {what} {v} does not fit in int64")
    numel = 1
    for n in size:
        numel *= max(n, 0)
    if numel > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if any(s < 0 for s in stride) or len(size) != len(stride):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={size} and strides={stride}"
        )
    itemsize = storage.dtype.itemsize
    extent = storage_offset + 1 + sum(max(n - 1, 0) * s for n, s in zip(size, stride, strict=True))
    if extent * itemsize > _INT64_MAX:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={size} and strides={stride}"
        )
    if 0 in size:
        return
    needed = (
        storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    ) * itemsize
    if needed > storage.nbytes():
        raise RuntimeError(
            f"setStorage: sizes {size}, strides {stride}, storage offset {storage_offset}, and "
            f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for "
            f"storage of size {storage.nbytes()}"
        )


def _rebuild_tensor(storage, storage_offset, size, stride):
    """A tensor on ``storage`` (not a view: its own leaf, sharing the memory)."""
    _check_geometry(storage, storage_offset, size, stride)
    return storage._flat.as_strided(list(size), list(stride), storage_offset).detach()


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    """Unpickles a tensor (torch's ``torch._utils._rebuild_tensor_v2``)."""
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad = True
    return t


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
):
    """torch's rebuild for a tensor on bytes (``torch.UntypedStorage``) with its dtype given
    apart. torch saves so only the dtypes cudalite lacks (uint16, float8, ...), which
    ``cudalite.load`` refuses when it reads their names; others are reinterpreted here."""
    if storage.dtype != dtype:
        storage = storage._reinterpret(dtype)
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """Unpickles an ``nn.Parameter`` (torch's ``torch._utils._rebuild_parameter``)."""
    from cudalite.nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """Unpickles an ``nn.Parameter`` that has Python attributes."""
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _as_subclass(t, cls):
    """``t``'s memory and autograd flag as an instance of the Tensor subclass ``cls``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
            "possible. Make sure your class inherits from Tensor."
        )
    out = cls.__new__(cls)
    Tensor.__init__(out)
    out._set_metadata(t)
    if t.requires_grad:
        out.requires_grad_(True)
    return out


def _rebuild_from_type_v2(func, new_type, args, state):
    """Unpickles a tensor with attributes or of a subclass (torch's
    ``torch._tensor._rebuild_from_type_v2``)."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = _as_subclass(ret, new_type)
    if getattr(type(ret), "__setstate__", None) is not None:
        ret.__setstate__(state)
        return ret
    return _set_obj_state(ret, state)


# ---- flattening tensors into one buffer (cuda.comm, DistributedDataParallel) ----


def _flatten_dense_tensors(tensors):
    """The tensors' elements, one after the other, in one new 1-D tensor."""
    import cudalite

    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    return cudalite.cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of ``flat`` shaped as ``tensors`` (the inverse of _flatten_dense_tensors)."""
    outputs = []
    offset = 0
    for t in tensors:
        n = t.numel()
        outputs.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(outputs)


def _take_tensors(tensors, size_limit):
    """Groups of consecutive tensors of one type and device whose bytes stay within
    ``size_limit`` (a tensor larger than the limit makes a group of its own)."""
    groups: dict = {}
    for t in tensors:
        key = (t.dtype, t.device.type)
        group = groups.setdefault(key, [[], 0])
        size = t.numel() * t.element_size()
        if group[0] and group[1] + size > size_limit:
            yield group[0]
            group[0], group[1] = [], 0
        group[0].append(t)
        group[1] += size
    for group, _ in groups.values():
        if group:
            yield group


def _reorder_tensors_as(tensors, ordered_tensors):
    """``tensors`` reordered so their types follow ``ordered_tensors``'s."""
    type_dict: dict = {}
    for t in tensors:
        type_dict.setdefault((t.dtype, t.device.type), []).append(t)
    iters = {k: iter(v) for k, v in type_dict.items()}
    return tuple(next(iters[(t.dtype, t.device.type)]) for t in ordered_tensors)
