"""Copies and reductions across the GPUs of one process (torch.nn.parallel.comm, also
``cudalite.cuda.comm``): NCCL where :func:`cudalite.cuda.nccl.is_available` says it can run,
device-to-device copies otherwise."""

from __future__ import annotations

import warnings

import cudalite
from cudalite._utils import (
    _flatten_dense_tensors,
    _reorder_tensors_as,
    _take_tensors,
    _unflatten_dense_tensors,
)
from cudalite.cuda import nccl
from cudalite.cuda._device import _get_device_index

__all__ = [
    "broadcast",
    "broadcast_coalesced",
    "gather",
    "reduce_add",
    "reduce_add_coalesced",
    "scatter",
]

# NCCL counts elements in an int; torch clamps the coalescing buffer to it.
_NCCL_MAX_COUNT = 2**31 - 1


def _nccl_usable(tensors) -> bool:
    """nccl.is_available without its warning for builds that can't load NCCL."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nccl.is_available(tensors)


def _sizes(t) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _broadcast(tensor, devices):
    if tensor.is_cuda and tensor.get_device() != devices[0]:
        raise RuntimeError("device of broadcasted tensor must appear as the first on devices list")
    if _nccl_usable([tensor]) and len(devices) > 1:
        outs = [tensor] + [
            cudalite.empty(tensor.shape, dtype=tensor.dtype, device=f"cuda:{d}")
            for d in devices[1:]
        ]
        nccl.broadcast(outs)
        return outs
    outs = [tensor] if tensor.is_cuda else []
    for d in devices[1:] if tensor.is_cuda else devices:
        outs.append(tensor.to(f"cuda:{d}", non_blocking=True, copy=True))
    return outs


def broadcast(tensor, devices=None, *, out=None):
    """Copies ``tensor`` to ``devices`` (a tuple of new tensors), or into ``out``."""
    if not ((devices is None) ^ (out is None)):
        raise RuntimeError(
            "Exactly one of 'devices' and 'out' must be specified, but got "
            f"devices={devices} and out={out}"
        )
    if devices is not None:
        devices = [_get_device_index(d) for d in devices]
        return tuple(_broadcast(tensor, devices))
    for i, o in enumerate(out):
        if not o.is_cuda:
            raise RuntimeError(
                "Expected all output tensors to be CUDA tensors, but output tensor at index "
                f"{i} has device '{o.device}'"
            )
        if o.shape != tensor.shape:
            raise RuntimeError(
                "Expected all output tensors to have same shape as the source tensor "
                f"{_sizes(tensor)}, but output tensor at index {i} has shape {_sizes(o)}"
            )
    if tensor.is_cuda and _nccl_usable([tensor, *out]):
        nccl.broadcast([tensor, *out])
    else:
        for o in out:
            o.copy_(tensor, non_blocking=True)
    return tuple(out)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """Broadcasts ``tensors`` (all on ``devices[0]``) in chunks of at most ``buffer_size``
    bytes; one tuple per device, the first holding the inputs themselves."""
    devices = [_get_device_index(d) for d in devices]
    tensors = list(tensors)
    if not all(t.get_device() == devices[0] for t in tensors):
        raise RuntimeError("all tensors must be on devices[0]")
    buffer_size = min(_NCCL_MAX_COUNT, buffer_size)
    outputs = [list(tensors)] + [[] for _ in devices[1:]]
    unique_types = len({t.dtype for t in tensors}) <= 1
    for chunk in _take_tensors(tensors, buffer_size):
        flat = _broadcast(_flatten_dense_tensors(chunk), devices)
        for i in range(1, len(devices)):
            for t in _unflatten_dense_tensors(flat[i], chunk):
                # .data: each output gets its own version counter (torch's "Version Counter
                # in comm.*_coalesced"), since users never see the flat buffer they share.
                outputs[i].append(t.data)
    if not unique_types:
        outputs = [outputs[0]] + [list(_reorder_tensors_as(o, tensors)) for o in outputs[1:]]
    return [tuple(o) for o in outputs]


def reduce_add(inputs, destination=None):
    """The sum of ``inputs`` (one per GPU) on ``destination`` (the current device by
    default), which must hold one of them."""
    destination = _get_device_index(destination, optional=True)
    input_size = inputs[0].size()
    root_index = None
    for i, inp in enumerate(inputs):
        if inp.device.type == "cpu":
            raise AssertionError(
                f"reduce_add expects all inputs to be on GPUs, but input {i} is on CPU"
            )
        if inp.get_device() == destination:
            root_index = i
        if inp.size() != input_size:
            got = "x".join(str(x) for x in inp.size())
            expected = "x".join(str(x) for x in input_size)
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root_index is None:
        raise RuntimeError(
            "reduce_add expects destination to be on the same GPU with one of the tensors"
        )
    if len(inputs) == 1:
        return inputs[0]
    if _nccl_usable(inputs):
        result = cudalite.empty_like(inputs[root_index])
        nccl.reduce(inputs, output=result, root=root_index)
        return result
    dst = f"cuda:{destination}"
    nonroot = [t for i, t in enumerate(inputs) if i != root_index]
    result = inputs[root_index] + nonroot[0].to(dst, non_blocking=True)
    for other in nonroot[1:]:
        result.add_(other.to(dst, non_blocking=True))
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """reduce_add for lists of tensors (one list per GPU), in chunks of ``buffer_size``."""
    dense = [list(ts) for ts in inputs]
    ref_order = list(dense[0])
    output = []
    for chunks in zip(*[_take_tensors(ts, buffer_size) for ts in dense], strict=True):
        flat = reduce_add([_flatten_dense_tensors(c) for c in chunks], destination)
        output.extend(t.data for t in _unflatten_dense_tensors(flat, chunks[0]))
    return tuple(_reorder_tensors_as(output, ref_order))


def _scatter(tensor, devices, chunk_sizes, dim, streams):
    if chunk_sizes is not None:
        total = sum(chunk_sizes)
        if total != tensor.size(dim):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {tensor.size(dim)} "
                f"(input tensor's size at dimension {dim}), but got split_sizes="
                f"[{', '.join(map(str, chunk_sizes))}]"
            )
        chunks, start = [], 0
        for size in chunk_sizes:
            if size <= 0:
                raise RuntimeError("Chunk size must be positive")
            chunks.append(tensor.narrow(dim, start, size))
            start += size
    else:
        chunks = list(tensor.chunk(len(devices), dim))
    out = []
    for i, chunk in enumerate(chunks):
        stream = streams[i] if streams else None
        if stream is not None:
            if stream.device_index != devices[i]:
                raise RuntimeError(
                    f"Expected the device associated with the stream at index {i} (was "
                    f"{stream.device_index}) to match the device supplied at that index "
                    f"(expected {devices[i]})"
                )
            with cudalite.cuda.stream(stream):
                out.append(chunk.contiguous().to(f"cuda:{devices[i]}", non_blocking=True))
        else:
            out.append(chunk.contiguous().to(f"cuda:{devices[i]}", non_blocking=True))
    return out


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """Splits ``tensor`` along ``dim`` over ``devices`` (or into ``out``)."""
    if out is None:
        devices = [_get_device_index(d) for d in devices]
        return tuple(_scatter(tensor, devices, chunk_sizes, dim, streams))
    if devices is not None:
        raise RuntimeError(
            f"'devices' must not be specified when 'out' is specified, but got devices={devices}"
        )
    if chunk_sizes is not None:
        raise RuntimeError(
            "'chunk_sizes' must not be specified when 'out' is specified, but got "
            f"chunk_sizes={chunk_sizes}"
        )
    start = 0
    for o in out:
        if not o.is_cuda:
            raise RuntimeError(
                "Expected all output tensors to be CUDA tensors, but output tensor at index "
                f"{out.index(o)} has device '{o.device}'"
            )
        n = o.size(dim)
        o.copy_(tensor.narrow(dim, start, n), non_blocking=True)
        start += n
    if start != tensor.size(dim):
        raise RuntimeError(
            "Total size for output tensors along scatter dim does not match that of the "
            f"input tensor (expected {tensor.size(dim)} but got {start})"
        )
    return tuple(out)


def _gather_size(tensors, dim):
    if not tensors:
        raise RuntimeError("Expected at least one tensor to gather from")
    expected = list(tensors[0].shape)
    total = 0
    for i, t in enumerate(tensors):
        if not t.is_cuda:
            raise RuntimeError(
                "Expected all input tensors to be CUDA tensors, but tensor at index "
                f"{i} has device {t.device}"
            )
        if t.dim() != len(expected):
            raise RuntimeError(
                "Expected all input tensors to have the same number of dimensions, but "
                f"tensor at index {i} has {t.dim()} dimensions, (expected {len(expected)})"
            )
        expected[dim] = t.size(dim)
        if list(t.shape) != expected:
            raise RuntimeError(
                f"Input tensor at index {i} has invalid shape {_sizes(t)}, but expected "
                f"[{', '.join(map(str, expected))}]"
            )
        total += t.size(dim)
    expected[dim] = total
    return expected


def _gather_into(tensors, result, dim):
    start = 0
    for t in tensors:
        result.narrow(dim, start, t.size(dim)).copy_(t, non_blocking=True)
        start += t.size(dim)
    return result


def gather(tensors, dim=0, destination=None, *, out=None):
    """Concatenates ``tensors`` (on GPUs) along ``dim`` on ``destination`` ('cpu' allowed;
    the current device by default), or into ``out``."""
    tensors = list(tensors)
    if out is None:
        if destination == -1:
            warnings.warn(
                "Using -1 to represent CPU tensor is deprecated. Please use a "
                'device object or string instead, e.g., "cpu".',
                FutureWarning,
                stacklevel=2,
            )
        destination = _get_device_index(destination, allow_cpu=True, optional=True)
        if tensors:
            dim = dim if dim >= 0 else dim + tensors[0].dim()
        size = _gather_size(tensors, dim)
        device = "cpu" if destination == -1 else f"cuda:{destination}"
        result = cudalite.empty(size, dtype=tensors[0].dtype, device=device)
        return _gather_into(tensors, result, dim)
    if destination is not None:
        raise RuntimeError(
            "'destination' must not be specified when 'out' is specified, but got "
            f"destination={destination}"
        )
    if tensors:
        dim = dim if dim >= 0 else dim + tensors[0].dim()
    size = _gather_size(tensors, dim)
    if list(out.shape) != size:
        raise RuntimeError(
            f"Expected out tensor to have shape [{', '.join(map(str, size))}], but got "
            f"{_sizes(out)}"
        )
    return _gather_into(tensors, out, dim)
