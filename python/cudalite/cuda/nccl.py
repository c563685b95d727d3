"""``cudalite.cuda.nccl``: NCCL collectives across the GPUs of one process (torch.cuda.nccl).

NCCL is opened on first use (``cudalite.cuda.nccl`` imports nothing of it): from
``CUDALITE_NCCL_PATH`` (a libnccl.so.2 file), the ``nvidia-nccl-cu13`` wheel
(``pip install cudalite[nccl]``), then the system's ``libnccl.so.2``.

Each call runs inside one NCCL group over communicators made with ``ncclCommInitAll`` and
cached per list of devices; by default each device's work is queued on its current stream.
"""

from __future__ import annotations

import collections.abc
import sys
import warnings
from collections.abc import Sequence

from cudalite import _C
from cudalite.cuda import _dynlib

__all__ = ["all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter"]

SUM = 0  # ncclRedOp_t

# _C._nccl.collective's kinds (cl::cuda::nccl::Coll).
_ALL_REDUCE, _REDUCE, _BROADCAST, _ALL_GATHER, _REDUCE_SCATTER, _SEND, _RECV = range(7)

_candidates_set = False


def _library_candidates() -> list[str]:
    """libnccl.so.2 files to try before the system's: CUDALITE_NCCL_PATH, then the
    nvidia-nccl wheel in site-packages (found without importing anything)."""
    env = _dynlib.env_library("CUDALITE_NCCL_PATH", "libnccl.so.2")
    paths = [env] if env else []
    for p in _dynlib.wheel_files("libnccl.so.2", "nvidia/nccl/lib"):
        if p not in paths:
            paths.append(p)
    return paths


def _lib():
    """_C._nccl, with the library's search path set once."""
    global _candidates_set
    if not _candidates_set:
        _C._nccl._set_library_candidates(_library_candidates())
        _candidates_set = True
    return _C._nccl


def _loaded() -> bool:
    """Whether NCCL can be loaded (loads it)."""
    return _C._cuda.is_compiled() and _lib().is_available()


def is_available(tensors):
    """Whether NCCL can run a collective over ``tensors``: dense, contiguous CUDA tensors on
    distinct devices, with NCCL loadable."""
    if not _loaded():
        warnings.warn("PyTorch is not compiled with NCCL support", stacklevel=2)
        return False
    devices = set()
    for tensor in tensors:
        if getattr(tensor, "is_sparse", False) or not tensor.is_contiguous():
            return False
        if not tensor.is_cuda:
            return False
        device = tensor.get_device()
        if device in devices:
            return False
        devices.add(device)
    return True


def _version_code() -> int:
    """torch's _nccl_version(): major << 32 | minor << 16 | patch."""
    v = _lib().version()
    if v >= 10000:  # NCCL >= 2.9: major * 10000 + minor * 100 + patch
        major, minor, patch = v // 10000, (v // 100) % 100, v % 100
    else:
        major, minor, patch = v // 1000, (v // 100) % 10, v % 100
    return (major << 32) | (minor << 16) | patch


def version():
    """The NCCL version as ``(major, minor, patch)``."""
    ver = _version_code()
    return (ver >> 32, (ver >> 16) & 65535, ver & 65535)


def unique_id() -> bytes:
    """A new ncclUniqueId (128 bytes) for :func:`init_rank`."""
    return _lib().unique_id()


class _Communicator:
    """An NCCL communicator (ncclComm_t) owned by Python; destroyed with the object."""

    __slots__ = ("_handle", "device")

    def __init__(self, handle: int, device: int):
        self._handle = handle
        self.device = device

    def __del__(self):
        h, self._handle = getattr(self, "_handle", 0), 0
        # Not at interpreter exit: the CUDA runtime may be going away (torch keeps its
        # communicators to the end too).
        if h and _C is not None and not sys.is_finalizing():
            try:
                _C._nccl.comm_destroy(h)
            except Exception:
                pass


def init_rank(num_ranks, uid, rank):
    """A communicator for rank ``rank`` of ``num_ranks`` on the current device."""
    from cudalite.cuda import current_device

    if not isinstance(uid, bytes) or len(uid) != 128:
        raise RuntimeError("Invalid size for ncclUniqueId")
    device = current_device()
    return _Communicator(_lib().comm_init_rank(num_ranks, uid, rank, device), device)


_comm_cache: dict[tuple[int, ...], list[_Communicator]] = {}


def _communicators(devices: tuple[int, ...]) -> list[_Communicator]:
    comms = _comm_cache.get(devices)
    if comms is None:
        handles = _lib().comm_init_all(list(devices))
        comms = [_Communicator(h, d) for h, d in zip(handles, devices, strict=True)]
        _comm_cache[devices] = comms
    return comms


def _check_sequence_type(inputs) -> None:
    from cudalite import Tensor

    if not isinstance(inputs, collections.abc.Container) or isinstance(inputs, Tensor):
        raise TypeError("Inputs should be a collection of tensors")


def _check_tensor(inp, out, in_mult, out_mult, numel, dtype):
    if not inp.is_cuda or (out is not None and not out.is_cuda):
        raise RuntimeError("input and output elements have to be cuda dense Tensors")
    if inp.dtype != dtype or (out is not None and out.dtype != dtype):
        raise RuntimeError("all inputs and outputs must be of the same Tensor dtype")
    if not inp.is_contiguous() or (out is not None and not out.is_contiguous()):
        raise RuntimeError("all inputs and outputs have to be contiguous")
    if out is not None and inp.get_device() != out.get_device():
        raise RuntimeError("input and output must be on the same device")
    if inp.numel() != numel:
        raise RuntimeError("all inputs must have the same number of elements")
    if out is not None and out.numel() * out_mult != numel * in_mult:
        raise RuntimeError("output must be of size input_size * size_multiplier")


def _check_inputs(inputs, outputs, in_mult, out_mult, root=None):
    """torch's check_inputs; ``outputs`` is one tensor (for ``root``) when root is given."""
    inputs = list(inputs)
    if not inputs:
        raise RuntimeError("input sequence can't be empty")
    if root is None:
        outputs = list(outputs)
        if len(outputs) != len(inputs):
            raise RuntimeError(
                "inputs and outputs sequences have to be of the same length, but got input "
                f"of length {len(inputs)} and output of length {len(outputs)}"
            )
    numel, dtype = inputs[0].numel(), inputs[0].dtype
    devices = set()
    for i, inp in enumerate(inputs):
        out = (outputs if i == root else None) if root is not None else outputs[i]
        _check_tensor(inp, out, in_mult, out_mult, numel, dtype)
        d = inp.get_device()
        if d in devices:
            raise RuntimeError("inputs must be on unique devices")
        devices.add(d)
    if not _lib().supports(dtype):
        raise TypeError(f"Unconvertible NCCL type {dtype}")
    return inputs


def _run(kind, inputs, outputs, op=SUM, root=0, streams=None, comms=None):
    """One NCCL group: ``kind`` on every device of ``inputs``."""
    n = len(inputs)
    if streams is not None and len(streams) not in (0, n):
        raise RuntimeError(f"expected {n} streams, got {len(streams)}")
    if comms is not None and len(comms) not in (0, n):
        raise RuntimeError(f"expected {n} communicators, got {len(comms)}")
    if not comms:
        comms = _communicators(tuple(t.get_device() for t in inputs))
    lib = _lib()
    lib.group_start()
    try:
        for i, inp in enumerate(inputs):
            out = outputs[i] if outputs is not None else None
            stream = streams[i] if streams else None
            handle = stream.cuda_stream if stream is not None else 0
            comm = comms[i]._handle if isinstance(comms[i], _Communicator) else int(comms[i])
            lib.collective(kind, comm, inp, out, op, root, handle)
    finally:
        lib.group_end()


def all_reduce(inputs, outputs=None, op=SUM, streams=None, comms=None):
    """outputs[i] = op over inputs (every device gets the reduction)."""
    _check_sequence_type(inputs)
    if outputs is None:
        outputs = inputs
    _check_sequence_type(outputs)
    inputs = _check_inputs(inputs, outputs, 1, 1)
    _run(_ALL_REDUCE, inputs, list(outputs), op, 0, streams, comms)


def reduce(
    inputs: Sequence,
    output=None,
    root: int = 0,
    op: int = SUM,
    streams=None,
    comms=None,
    *,
    outputs=None,
) -> None:
    """``output`` (on ``inputs[root]``'s device) = op over inputs."""
    from cudalite import Tensor

    _check_sequence_type(inputs)
    if outputs is not None:
        if output is not None:
            raise ValueError(
                "'output' and 'outputs' can not be both specified. 'outputs' is deprecated in "
                "favor of 'output', taking in a single output tensor. The signature of reduce is: "
                "reduce(inputs, output=None, root=0, op=SUM, streams=None, comms=None)."
            )
        warnings.warn(
            "`nccl.reduce` with an output tensor list is deprecated. "
            "Please specify a single output tensor with argument 'output' instead instead.",
            FutureWarning,
            stacklevel=2,
        )
        _output = outputs[root]
    elif not isinstance(output, Tensor) and isinstance(output, collections.abc.Sequence):
        warnings.warn(
            "nccl.reduce with an output tensor list is deprecated. "
            "Please specify a single output tensor.",
            FutureWarning,
            stacklevel=2,
        )
        _output = output[root]
    else:
        _output = inputs[root] if output is None else output
    inputs = _check_inputs(inputs, _output, 1, 1, root=root)
    outs = [_output if i == root else None for i in range(len(inputs))]
    _run(_REDUCE, inputs, outs, op, root, streams, comms)


def broadcast(inputs: Sequence, root: int = 0, streams=None, comms=None) -> None:
    """Copies ``inputs[root]`` into every other input."""
    _check_sequence_type(inputs)
    inputs = _check_inputs(inputs, inputs, 1, 1)
    _run(_BROADCAST, inputs, inputs, SUM, root, streams, comms)


def all_gather(inputs: Sequence, outputs: Sequence, streams=None, comms=None) -> None:
    """outputs[i] = the inputs concatenated in device order (numel = input's × n)."""
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    inputs = _check_inputs(inputs, outputs, len(inputs), 1)
    _run(_ALL_GATHER, inputs, list(outputs), SUM, 0, streams, comms)


def reduce_scatter(
    inputs: Sequence, outputs: Sequence, op: int = SUM, streams=None, comms=None
) -> None:
    """outputs[i] = the i-th 1/n of the reduction of the inputs."""
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    inputs = _check_inputs(inputs, outputs, 1, len(inputs))
    _run(_REDUCE_SCATTER, inputs, list(outputs), op, 0, streams, comms)
