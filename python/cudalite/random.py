"""Seeding the random number generators (CPU and every CUDA device), as ``torch.random``.

All generators are counter-based Philox streams: a (seed, offset) pair is the whole state, so
the same seed gives the same numbers on every run and on CPU and GPU alike.
"""

from __future__ import annotations

import os

from cudalite import _C

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "Generator"]

_MASK = (1 << 64) - 1


class Generator:
    """The generator of one device: ``manual_seed``, ``seed``, ``initial_seed``, state."""

    def __init__(self, device="cpu"):
        self.device = _C.device(device) if not isinstance(device, _C.device) else device

    def manual_seed(self, seed):
        _C._set_rng_state(self.device, int(seed) & _MASK, 0)
        return self

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return _C._initial_seed(self.device)

    def get_state(self):
        import numpy as np

        seed, offset = _C._get_rng_state(self.device)
        return _C.from_numpy(np.array([seed, offset], dtype=np.uint64).view(np.uint8).copy())

    def set_state(self, state):
        import numpy as np

        seed, offset = _C._numpy(state.cpu().contiguous()).view(np.uint64).tolist()
        _C._set_rng_state(self.device, seed, offset)
        return self

    def __repr__(self):
        return f"<cudalite._C.Generator object at {hex(id(self))}>"  # torch's repr, renamed


default_generator = Generator("cpu")


def manual_seed(seed) -> Generator:
    """Seeds the CPU generator and every CUDA device's generator."""
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    _C._manual_seed(seed & _MASK)
    return default_generator


def seed() -> int:
    """Seeds every generator from a non-deterministic source and returns the seed."""
    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the CPU generator."""
    return _C._initial_seed("cpu")


def get_rng_state():
    """The CPU generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores the CPU generator's state."""
    default_generator.set_state(new_state)
