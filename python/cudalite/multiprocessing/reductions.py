"""How tensors travel through ``cudalite.multiprocessing`` queues and pipes, as
``torch.multiprocessing.reductions``.

A CUDA tensor is not copied: the receiving process maps the sender's memory with CUDA IPC
(``csrc/cuda/ipc.cpp``; Note [CUDA IPC and the caching allocator], and for expandable segments
Note [IPC of expandable segments] in ``csrc/cuda/ipc_pages.cpp``) and waits, on its current
stream, for an event the sender recorded after the work that produced the data. The sender
keeps the memory until the receiver releases it (Note [IPC reference counts] in
``_cuda_ipc.py``). A CPU tensor is moved to shared memory (in place, as torch's) and the
receiving process maps the same memory.
"""

from __future__ import annotations

import multiprocessing.context
import multiprocessing.reduction
import os
import sys

from cudalite import _C

__all__ = ["init_reductions", "rebuild_cpu_tensor", "rebuild_cuda_tensor", "reduce_tensor"]

_NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
    "since autograd does not support crossing process boundaries.  "
    "If you just want to transfer the data, call detach() on the tensor "
    "before serializing (e.g., putting it on the queue)."
)


def reduce_tensor(tensor):
    """The rebuild call for ``tensor``: a CUDA IPC share on a GPU, a copy on the CPU."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(_NON_LEAF)
    if not tensor.is_cuda:
        return _reduce_cpu_tensor(tensor)
    from cudalite import cuda
    from cudalite.multiprocessing import _cuda_ipc

    device = tensor.device.index
    event = cuda.Event(interprocess=True)
    ref_name, ref_index, counter = _cuda_ipc.track(event)
    try:
        # The storage now keeps its memory while the counter is above 0.
        share = _C._cuda._ipc_share(tensor, counter)
    except BaseException:
        _cuda_ipc.untrack(ref_name, ref_index)
        raise
    handle, offset_bytes, _segment, nbytes, fds, page_sizes = share
    if fds:  # an expandable segment's pages (Note [IPC of expandable segments])
        handle = ([multiprocessing.reduction.DupFd(fd) for fd in fds], page_sizes)
        if multiprocessing.context.get_spawning_popen() is None:
            for fd in fds:  # DupFd holds duplicates until the receiver takes them
                os.close(fd)
        else:  # a Process argument: the child inherits them when it starts
            _cuda_ipc.keep_fds(ref_name, ref_index, fds)
    event.record(cuda.current_stream(device))
    return (
        rebuild_cuda_tensor,
        (
            type(tensor),
            tuple(tensor.size()),
            tuple(tensor.stride()),
            tensor.storage_offset(),
            tensor.dtype,
            device,
            handle,
            nbytes,
            offset_bytes,
            tensor.requires_grad,
            ref_name,
            ref_index,
            event.ipc_handle(),
        ),
    )


def rebuild_cuda_tensor(
    tensor_cls,
    size,
    stride,
    storage_offset,
    dtype,
    device,
    handle,
    nbytes,
    offset_bytes,
    requires_grad,
    ref_name,
    ref_index,
    event_handle,
):
    """The receiving side of ``reduce_tensor``: a tensor over the sender's memory."""
    from cudalite import cuda
    from cudalite.multiprocessing import _cuda_ipc

    counter = _cuda_ipc.counter_address(ref_name, ref_index)
    if isinstance(handle, tuple):  # pages of an expandable segment
        dup_fds, sizes = handle
        fds = [d.detach() for d in dup_fds]
        flat = _C._cuda._ipc_open_pages(fds, sizes, device, offset_bytes, nbytes, dtype, counter)
    else:
        flat = _C._cuda._ipc_open(handle, device, offset_bytes, nbytes, dtype, counter)
    # The sender's work on the data, then ours (no host wait).
    cuda.Event.from_ipc_handle(device, event_handle).wait(cuda.current_stream(device))
    return _finish(flat, tensor_cls, size, stride, storage_offset, requires_grad)


def _reduce_cpu_tensor(tensor):
    """A CPU tensor moves to shared memory (in place, as torch's) and travels as a duplicate
    of its descriptor (Note [Shared CPU memory] in csrc/core/shared_memory.h)."""
    nbytes = tensor._storage_nbytes()
    if nbytes == 0:
        return tensor.__reduce_ex__(4)
    tensor.share_memory_()
    fd = multiprocessing.reduction.DupFd(tensor._shared_memory_fd())
    args = (
        type(tensor),
        fd,
        nbytes,
        tensor.dtype,
        tuple(tensor.size()),
        tuple(tensor.stride()),
        tensor.storage_offset(),
        tensor.requires_grad,
    )
    return (rebuild_cpu_tensor, args)


def rebuild_cpu_tensor(tensor_cls, fd, nbytes, dtype, size, stride, storage_offset, requires_grad):
    """The receiving side of a CPU tensor: a view of the sender's shared memory."""
    flat = _C._map_shared_memory(fd.detach(), nbytes, dtype)
    return _finish(flat, tensor_cls, size, stride, storage_offset, requires_grad)


def _finish(flat, tensor_cls, size, stride, storage_offset, requires_grad):
    t = flat.as_strided(size, stride, storage_offset)
    parameter = sys.modules.get("cudalite.nn.parameter")
    if parameter is not None and tensor_cls is parameter.Parameter:
        return tensor_cls(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tensor_classes():
    from cudalite import Tensor

    classes = [Tensor]
    parameter = sys.modules.get("cudalite.nn.parameter")
    if parameter is not None:
        classes.append(parameter.Parameter)
    return classes


def init_reductions():
    """Registers ``reduce_tensor`` with multiprocessing's pickler (queues, pipes)."""
    for cls in _tensor_classes():
        multiprocessing.reduction.ForkingPickler.register(cls, reduce_tensor)
