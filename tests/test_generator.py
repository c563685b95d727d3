"""Generator objects (cudalite.random.Generator) and the generator= argument of every random
function: independent streams, state round trips, device checks, errors, on CPU and CUDA."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import requires_cuda, to_np

# Every random function that takes generator=, as (name, call(device, generator)).
DRAWS = [
    ("rand", lambda d, g: C.rand(50, device=d, generator=g)),
    ("randn", lambda d, g: C.randn(50, device=d, generator=g)),
    ("randint", lambda d, g: C.randint(0, 1000, (50,), device=d, generator=g)),
    ("randperm", lambda d, g: C.randperm(50, device=d, generator=g)),
    ("normal", lambda d, g: C.normal(2.0, 3.0, (50,), device=d, generator=g)),
    ("normal_", lambda d, g: C.empty(50, device=d).normal_(generator=g)),
    ("uniform_", lambda d, g: C.empty(50, device=d).uniform_(-1, 1, generator=g)),
    ("random_", lambda d, g: C.empty(50, device=d).random_(0, 9, generator=g)),
    ("nn.init.normal_", lambda d, g: C.nn.init.normal_(C.empty(50, device=d), generator=g)),
    (
        "nn.init.kaiming_uniform_",
        lambda d, g: C.nn.init.kaiming_uniform_(C.empty(5, 10, device=d), generator=g),
    ),
]
IDS = [name for name, _ in DRAWS]


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


@pytest.mark.parametrize("draw", [d for _, d in DRAWS], ids=IDS)
def test_generator_is_independent_of_the_default(draw, device):
    g = C.Generator(device).manual_seed(123)
    C.manual_seed(5)
    first = to_np(draw(device, g))
    # Draws from the default generator in between change nothing in g's stream...
    g.manual_seed(123)
    C.rand(1000, device=device)
    np.testing.assert_array_equal(to_np(draw(device, g)), first)
    # ...and g's draws leave the default generator where it was.
    C.manual_seed(5)
    expected = to_np(C.rand(10, device=device))
    C.manual_seed(5)
    draw(device, g)
    np.testing.assert_array_equal(to_np(C.rand(10, device=device)), expected)


@pytest.mark.parametrize("draw", [d for _, d in DRAWS], ids=IDS)
def test_generator_seeded_like_default_gives_its_numbers(draw, device):
    C.manual_seed(77)
    from_default = to_np(draw(device, None))
    g = C.Generator(device).manual_seed(77)
    np.testing.assert_array_equal(to_np(draw(device, g)), from_default)


def test_new_generator_starts_from_torch_default_seed(device):
    g = C.Generator(device)
    assert g.initial_seed() == 67280421310721
    state = g.get_state().tolist()
    assert state[:8] == list((67280421310721).to_bytes(8, "little"))
    if device == "cpu":  # torch's CPUGeneratorImplState: left = 1, seeded, next = 0
        assert len(state) == 5056 and state[8:24] == [1, 0, 0, 0, 1, 0, 0, 0] + [0] * 8
    else:
        assert state[8:] == [0] * 8  # offset 0


def test_state_round_trip_and_clone(device):
    g = C.Generator(device).manual_seed(9)
    C.rand(7, device=device, generator=g)
    state = g.get_state()
    size = 5056 if device == "cpu" else 16  # torch's state sizes
    assert state.dtype is C.uint8 and state.shape == (size,) and state.device.type == "cpu"
    a = to_np(C.randn(33, device=device, generator=g))
    assert g.set_state(state) is g
    np.testing.assert_array_equal(to_np(C.randn(33, device=device, generator=g)), a)
    g.set_state(state)
    h = g.clone_state()
    assert h is not g and h.device == g.device
    np.testing.assert_array_equal(to_np(C.randn(33, device=device, generator=h)), a)
    np.testing.assert_array_equal(to_np(C.randn(33, device=device, generator=g)), a)


def test_seed_returns_the_new_seed():
    g = C.Generator()
    s = g.seed()
    assert isinstance(s, int) and 0 <= s < 2**63 and g.initial_seed() == s


@pytest.mark.parametrize("seed, expected", [(-1, 2**64 - 1), (2**64 - 1, 2**64 - 1), (True, 1)])
def test_manual_seed_wraps_like_torch(seed, expected):
    assert C.Generator().manual_seed(seed).initial_seed() == expected


def test_default_generator_is_the_cpu_default():
    assert C.manual_seed(3) is C.default_generator
    assert C.default_generator.device == C.device("cpu")
    a = to_np(C.rand(5))
    C.default_generator.manual_seed(3)
    np.testing.assert_array_equal(to_np(C.rand(5)), a)
    assert C.initial_seed() == 3


def test_dataloader_shuffle_follows_its_generator():
    ds = C.utils.data.TensorDataset(C.arange(20))
    orders = []
    for _ in range(2):
        loader = C.utils.data.DataLoader(
            ds, batch_size=20, shuffle=True, generator=C.Generator().manual_seed(4)
        )
        C.rand(100)  # the default generator moves; the loader's order must not
        orders.append(next(iter(loader))[0].tolist())
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(20))
    sampler = C.utils.data.RandomSampler(
        ds, replacement=True, num_samples=30, generator=C.Generator().manual_seed(4)
    )
    again = C.utils.data.RandomSampler(
        ds, replacement=True, num_samples=30, generator=C.Generator().manual_seed(4)
    )
    assert list(sampler) == list(again) and len(list(sampler)) == 30


def test_fork_rng_restores_the_states():
    C.manual_seed(11)
    with C.random.fork_rng():
        inside = to_np(C.rand(4))
        C.manual_seed(99)
    np.testing.assert_array_equal(to_np(C.rand(4)), inside)
    with C.random.fork_rng(enabled=False):
        C.rand(4)
    assert not np.array_equal(to_np(C.rand(4)), inside)


@pytest.mark.parametrize(
    "fn, call",
    [(n, d) for n, d in DRAWS if "." not in n],
    ids=[n for n, _ in DRAWS if "." not in n],
)
def test_generator_of_wrong_type(fn, call, device):
    if fn in ("rand", "randn", "randint", "randperm"):  # torch's parser: several overloads
        msg = f"^{fn}\\(\\) received an invalid combination of arguments - got \\("
        with pytest.raises(TypeError, match=msg):
            call(device, 5)
        return
    with err(TypeError, f"{fn}(): argument 'generator' must be torch.Generator, not int"):
        call(device, 5)


@pytest.mark.parametrize(
    "state, exc, msg",
    [
        (lambda: C.zeros(16), TypeError, "RNG state must be a torch.ByteTensor"),
        (lambda: [0] * 16, TypeError, "expected a torch.ByteTensor, but got list"),
        (
            lambda: C.zeros(3, dtype=C.uint8),
            RuntimeError,
            "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size "
            "to be 3",
        ),
        (lambda: C.zeros(5056, dtype=C.uint8), RuntimeError, "Invalid mt19937 state"),
    ],
)
def test_bad_state(state, exc, msg):
    g = C.Generator().manual_seed(1)
    before = g.get_state().tolist()
    with err(exc, msg):
        g.set_state(state())
    assert g.get_state().tolist() == before  # untouched


@pytest.mark.parametrize(
    "seed, exc, msg",
    [
        ("3", RuntimeError, "manual_seed expected a long, but got str"),
        (3.5, RuntimeError, "manual_seed expected a long, but got float"),
        (2**64, ValueError, "Overflow when unpacking long long"),
        (-(2**63) - 1, ValueError, "Overflow when unpacking long long"),
    ],
)
def test_bad_seed(seed, exc, msg):
    g = C.Generator().manual_seed(1)
    with err(exc, msg):
        g.manual_seed(seed)
    assert g.initial_seed() == 1


@requires_cuda
def test_generator_of_another_device_type():
    cpu, cuda = C.Generator(), C.Generator("cuda")
    assert cuda.device == C.device("cuda", C.cuda.current_device())
    with err(RuntimeError, "Expected a 'cuda' device type for generator but found 'cpu'"):
        C.rand(3, device="cuda", generator=cpu)
    with err(RuntimeError, "Expected a 'cpu' device type for generator but found 'cuda'"):
        C.empty(3).normal_(generator=cuda)
    with err(RuntimeError, "Expected a 'cuda' device type for generator but found 'cpu'"):
        C.randperm(4, device="cuda", generator=cpu)


@requires_cuda
def test_cuda_generator_state_is_refused_by_a_cpu_generator():
    """torch's formats differ: a CUDA state is 16 bytes (seed, offset), a CPU one 5056."""
    g = C.Generator("cuda").manual_seed(8)
    C.rand(10, device="cuda", generator=g)
    assert g.get_state().numel() == 16
    with err(
        RuntimeError,
        "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 16",
    ):
        C.Generator().set_state(g.get_state())


def test_generator_device_errors():
    with pytest.raises(RuntimeError, match="device"):
        C.Generator("bogus")
    if not C.cuda.is_available():
        with pytest.raises((AssertionError, RuntimeError)):
            C.Generator("cuda")
