"""Pinning batches (torch.utils.data._utils.pin_memory).

``pin_memory(data)`` copies every tensor inside ``data`` (recursing into mappings,
namedtuples, tuples and sequences) into page-locked memory, so that
``x.to(cuda, non_blocking=True)`` is an asynchronous copy on the current stream.
"""

import collections.abc
import copy

from cudalite.utils.data._utils.collate import _same_sequence


def pin_memory(data, device=None):
    """Page-locked copies of the tensors in ``data`` (anything else unchanged)."""
    import cudalite

    if isinstance(data, cudalite.Tensor):
        return data.pin_memory()
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: pin_memory(sample, device) for k, sample in data.items()})
                return clone
            return type(data)({k: pin_memory(sample, device) for k, sample in data.items()})
        except TypeError:
            return {k: pin_memory(sample, device) for k, sample in data.items()}
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # namedtuple
            return type(data)(*(pin_memory(sample, device) for sample in data))
        return type(data)(pin_memory(sample, device) for sample in data)
    if isinstance(data, collections.abc.Sequence):
        return _same_sequence(data, [pin_memory(sample, device) for sample in data])
    return data


__all__ = ["pin_memory"]
