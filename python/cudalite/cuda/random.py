"""The CUDA devices' default random number generators, as ``torch.cuda.random``.

Generator state lives on the host (a Philox seed and offset per device), so seeding needs no
CUDA initialisation: before it, the calls that act on "the current device" act on device 0,
the device that will be current when CUDA starts. As in torch, seeding is silently ignored
where CUDA is not available, and reading a state initialises CUDA.
"""

from cudalite import _C
from cudalite.random import Generator, _random_seed, _seed_value

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "set_rng_state",
    "set_rng_state_all",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
]

_MAX_DEVICES = 64  # the default generators the C++ core keeps (ops/generator.h)
_wrapped = {}  # device index -> its default Generator object


def _default(idx):
    g = _wrapped.get(idx)
    if g is None:
        dev = _C.device("cuda", idx)
        g = _wrapped[idx] = Generator._wrap(_C._Generator.default(dev), dev)
    return g


def default_generators():
    """cudalite.cuda.default_generators: one Generator per device once CUDA is initialised."""
    from cudalite.cuda import _lazy, device_count

    if not _lazy.is_initialized():
        return ()
    return tuple(_default(i) for i in range(device_count()))


def _current():
    """The current device, or 0 (the device current at initialisation) before CUDA starts."""
    from cudalite.cuda import _lazy, current_device

    return current_device() if _lazy.is_initialized() else 0


def _index(device):
    from cudalite.cuda import _lazy, current_device

    if isinstance(device, str):
        device = _C.device(device)
    elif isinstance(device, int):
        device = _C.device("cuda", device)
    if device.index is not None:
        return device.index
    return current_device() if _lazy.is_initialized() else 0


def get_rng_state(device="cuda"):
    r"""The random number generator state of the given GPU as a ByteTensor (16 bytes).

    This function eagerly initializes CUDA.
    """
    from cudalite.cuda import _lazy

    _lazy._lazy_init()
    return default_generators()[_index(device)].get_state()


def get_rng_state_all():
    r"""The random number generator states of all devices."""
    from cudalite.cuda import device_count

    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    r"""Sets the random number generator state of the given GPU."""
    _default(_index(device)).set_state(new_state)


def set_rng_state_all(new_states) -> None:
    r"""Sets the random number generator state of every device, in order."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed) -> None:
    r"""Sets the seed for generating random numbers on the current GPU.

    It's safe to call this function if CUDA is not available; in that case, it is silently
    ignored. To seed every GPU, use :func:`manual_seed_all`.
    """
    _default(_current()).manual_seed(int(seed))


def manual_seed_all(seed) -> None:
    r"""Sets the seed for generating random numbers on all GPUs."""
    seed = _seed_value(int(seed))
    for i in range(_MAX_DEVICES):
        _default(i).manual_seed(seed)


def seed() -> None:
    r"""Seeds the current GPU's generator from a non-deterministic source."""
    _default(_current()).seed()


def seed_all() -> None:
    r"""Seeds every GPU's generator with one seed from a non-deterministic source."""
    manual_seed_all(_random_seed())


def initial_seed() -> int:
    r"""The current GPU's seed. This function eagerly initializes CUDA."""
    from cudalite.cuda import _lazy, current_device

    _lazy._lazy_init()
    return default_generators()[current_device()].initial_seed()
