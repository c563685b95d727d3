"""Collation (torch.utils.data._utils.collate): samples into batches.

``default_collate`` stacks tensors along a new first dimension, turns numbers into tensors
(floats as float64), recurses into dicts, namedtuples, tuples and lists, and leaves strings
as lists, exactly as torch's does.
"""

import collections.abc
import copy
import re

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _same_sequence(template, items):
    """``items`` in a sequence like ``template``: a copy of it for mutable sequences, its type
    otherwise, and a list when that type can't be built so (torch's rule)."""
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(template)(items)
    except TypeError:
        return list(items)


def _is_numpy(obj):
    t = type(obj)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_")


def default_convert(data):
    r"""Convert each NumPy array element into a :class:`cudalite.Tensor`.

    Used instead of :func:`default_collate` when a DataLoader doesn't batch
    (``batch_size=None``). Anything that is not a NumPy array is left unchanged, but
    mappings and sequences are converted element by element.
    """
    import cudalite

    elem_type = type(data)
    if isinstance(data, cudalite.Tensor):
        return data
    if _is_numpy(data):
        if (
            elem_type.__name__ == "ndarray"
            and _np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
            return data
        return cudalite.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch's backwards compatibility
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence(data, [default_convert(d) for d in data])
    return data


def _collate_numpy(batch):
    import numpy as np

    import cudalite

    elem = batch[0]
    if type(elem).__name__ == "ndarray":
        if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(default_collate_err_msg_format.format(elem.dtype))
        return default_collate([cudalite.as_tensor(b) for b in batch])
    if elem.shape == ():  # numpy scalars keep their dtype
        return cudalite.as_tensor(np.array(batch))
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def default_collate(batch):
    r"""Put the samples of a batch into tensors with an additional outer dimension.

    * :class:`cudalite.Tensor` -> stacked :class:`cudalite.Tensor`
    * NumPy arrays -> :class:`cudalite.Tensor`
    * `float` -> :class:`cudalite.Tensor` of float64; `int` (and `bool`) ->
      :class:`cudalite.Tensor`
    * `str`, `bytes` -> `str`, `bytes` (unchanged, in a list)
    * `Mapping[K, V_i]` -> `Mapping[K, default_collate([V_1, V_2, ...])]`
    * `NamedTuple[V1_i, V2_i, ...]` -> `NamedTuple[default_collate([V1_1, V1_2, ...]), ...]`
    * `Sequence[V1_i, V2_i, ...]` -> `Sequence[default_collate([V1_1, V1_2, ...]), ...]`
      (a list for tuples, as torch does)
    """
    import cudalite

    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, cudalite.Tensor):
        return cudalite.stack(batch, 0)
    if _is_numpy(elem):
        return _collate_numpy(batch)
    if isinstance(elem, float):
        return cudalite.tensor(batch, dtype=cudalite.float64)
    if isinstance(elem, int):
        return cudalite.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: default_collate([d[key] for d in batch]) for key in elem})
                return clone
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(default_collate(samples) for samples in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch, strict=False))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _same_sequence(elem, [default_collate(samples) for samples in transposed])
    raise TypeError(default_collate_err_msg_format.format(elem_type))


__all__ = ["default_collate", "default_convert"]
