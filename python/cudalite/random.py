"""Random number generators and seeding, as ``torch.random``.

The generators are torch's: on the CPU a Mersenne Twister (mt19937) with torch's seeding and
transforms, so a seed gives the numbers torch gives, and states saved by torch continue here;
on CUDA a Philox stream (seed and offset) used as torch's kernels use it (docs/random.md).
Each device has a default generator (``default_generator`` for the CPU,
``cudalite.cuda.default_generators``); ``Generator(device)`` makes an independent one, which
the random functions take as ``generator=``.
"""

from __future__ import annotations

import contextlib
import os

from cudalite import _C

__all__ = [
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "fork_rng",
    "Generator",
]

_MASK = (1 << 64) - 1
_STATE_BYTES = 16  # CUDA: the seed and the offset, 8 bytes each (torch's layout)


def _seed_value(seed):
    """torch's checks of a generator's seed; negative seeds wrap into uint64."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        if not hasattr(seed, "__index__"):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = seed.__index__()
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK


def _random_seed():
    return int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)


class Generator:
    """A random number generator of one device, independent of the default ones.

    ``Generator()`` draws for CPU tensors, ``Generator("cuda")`` for tensors of the current
    CUDA device type; it starts from torch's default seed. Pass it as ``generator=`` to
    ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``Tensor.normal_`` / ``uniform_``
    / ``random_``, ``nn.init`` and ``DataLoader``.
    """

    def __init__(self, device="cpu"):
        dev = device if isinstance(device, _C.device) else _C.device(device)
        if dev.type == "cuda":
            from cudalite import cuda

            idx = cuda.current_device() if dev.index is None else dev.index
            _C._cuda.check_device_index(idx)
            dev = _C.device("cuda", idx)
        elif dev.type != "cpu":
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        self.device = dev
        self._impl = _C._Generator(dev)

    @classmethod
    def _wrap(cls, impl, device):
        g = cls.__new__(cls)
        g.device, g._impl = device, impl
        return g

    def manual_seed(self, seed) -> Generator:
        """Sets the seed (and restarts the stream); returns self."""
        self._impl.manual_seed(_seed_value(seed))
        return self

    def seed(self) -> int:
        """Seeds from a non-deterministic source and returns that seed."""
        s = _random_seed()
        self._impl.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._impl.initial_seed()

    def get_state(self):
        """The state as a CPU uint8 tensor, in torch's layout: 5056 bytes for a CPU generator
        (mt19937 and the cached normals), 16 for a CUDA one (seed, then offset)."""
        import numpy as np

        if self.device.type == "cpu":
            raw = np.frombuffer(self._impl.cpu_state(), dtype=np.uint8).copy()
            return _C._from_numpy_owned(raw)
        seed, offset = self._impl.state()
        return _C._from_numpy_owned(np.array([seed, offset], dtype=np.uint64).view(np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restores a state returned by ``get_state`` (or by torch); returns self."""
        raw = _state_bytes(new_state)
        if self.device.type == "cpu":
            self._impl.set_cpu_state(raw)
            return self
        if len(raw) != _STATE_BYTES:
            raise RuntimeError("RNG state is wrong size")
        import numpy as np

        seed, offset = np.frombuffer(raw, dtype=np.uint64).tolist()
        self._impl.set_state(seed, offset)
        return self

    def clone_state(self) -> Generator:
        """A new generator of the same device in the same state."""
        return Generator._wrap(_C._Generator(self.device), self.device).set_state(self.get_state())

    def __repr__(self):
        return f"<cudalite._C.Generator object at {hex(id(self))}>"  # torch's repr, renamed


def _state_bytes(state):
    """The bytes of a state tensor, with torch's TypeErrors for anything but a CPU uint8 one."""
    from cudalite import Tensor

    if not isinstance(state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(state).__name__}")
    if state.dtype is not _C.uint8 or state.device.type != "cpu":
        raise TypeError("RNG state must be a torch.ByteTensor")
    return _C._numpy(state.contiguous()).tobytes()


def _check_generator(generator, fn):
    """The C++ state behind `generator` (None for the default), or torch's TypeError."""
    if generator is None:
        return None
    if not isinstance(generator, Generator):
        raise TypeError(
            f"{fn}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}"
        )
    return generator._impl


default_generator = Generator._wrap(_C._Generator.default("cpu"), _C.device("cpu"))


def manual_seed(seed) -> Generator:
    """Seeds the CPU generator and every CUDA device's default generator."""
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    _C._manual_seed(seed & _MASK)
    return default_generator


def seed() -> int:
    """Seeds every default generator from a non-deterministic source and returns the seed."""
    s = _random_seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the CPU generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The CPU generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores the CPU generator's state."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restores the CPU generator's state, and that of the CUDA ``devices`` (default: all),
    on leaving the block, as ``torch.random.fork_rng``."""
    if not enabled:
        yield
        return
    from cudalite import cuda

    if device_type != "cuda":
        raise ValueError(f"fork_rng: device_type {device_type!r} is not supported")
    if devices is None:
        devices = list(range(cuda.device_count())) if cuda.is_available() else []
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    cuda_states = [cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, s in zip(devices, cuda_states, strict=True):
            cuda.set_rng_state(s, d)
