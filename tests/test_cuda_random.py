"""cudalite.cuda's generator functions (torch.cuda.random): seeding the current or every
GPU, states, default_generators; silently ignored where CUDA is missing, as in torch."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import HAS_CUDA, requires_cuda, to_np
from test_cuda_device import run_python

FUNCS = [
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


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


def test_namespace():
    assert set(FUNCS) <= set(C.cuda.__all__)
    for name in FUNCS:
        assert getattr(C.cuda, name) is getattr(C.cuda.random, name)


def test_seeding_needs_no_cuda_and_does_not_initialise_it():
    out = run_python(
        """
        import cudalite as C
        C.cuda.manual_seed(5); C.cuda.manual_seed_all(6); C.cuda.seed(); C.cuda.seed_all()
        C.cuda.set_rng_state_all([])
        print(C.cuda.is_initialized(), C.cuda.default_generators)
        """
    )
    assert out == "False ()"


@pytest.mark.skipif(HAS_CUDA, reason="the no-GPU behaviour")
def test_reading_state_without_cuda_raises_like_lazy_init():
    assert C.cuda.get_rng_state_all() == []
    for f in (C.cuda.get_rng_state, C.cuda.initial_seed):
        with pytest.raises((AssertionError, RuntimeError)):
            f()


@requires_cuda
def test_manual_seed_before_initialisation_applies_to_first_draws():
    out = run_python(
        """
        import cudalite as C
        C.cuda.manual_seed(5)
        a = C.rand(4, device="cuda").tolist()
        C.manual_seed(5)
        print(a == C.rand(4, device="cuda").tolist(), C.cuda.initial_seed())
        """
    )
    assert out == "True 5"


@requires_cuda
def test_manual_seed_seeds_the_current_gpu_only():
    C.manual_seed(1)
    cpu_next = to_np(C.rand(6))
    C.manual_seed(1)
    C.cuda.manual_seed(42)
    assert C.cuda.initial_seed() == 42 and C.initial_seed() == 1
    np.testing.assert_array_equal(to_np(C.rand(6)), cpu_next)  # the CPU stream is untouched
    a = to_np(C.randn(100, device="cuda"))
    C.cuda.manual_seed_all(42)
    np.testing.assert_array_equal(to_np(C.randn(100, device="cuda")), a)
    C.manual_seed(42)
    np.testing.assert_array_equal(to_np(C.randn(100, device="cuda")), a)


@requires_cuda
def test_seed_and_seed_all_pick_new_seeds():
    C.cuda.manual_seed(3)
    C.cuda.seed()
    s = C.cuda.initial_seed()
    assert s != 3 and 0 <= s < 2**63
    C.cuda.seed_all()
    assert C.cuda.initial_seed() != s


@requires_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", 0, C.device("cuda", 0)])
def test_state_round_trip(device):
    C.cuda.manual_seed(7)
    C.rand(13, device="cuda")
    state = C.cuda.get_rng_state(device)
    assert state.dtype is C.uint8 and state.shape == (16,) and state.device.type == "cpu"
    a = to_np(C.rand(50, device="cuda"))
    C.cuda.set_rng_state(state, device)
    np.testing.assert_array_equal(to_np(C.rand(50, device="cuda")), a)
    states = C.cuda.get_rng_state_all()
    assert len(states) == C.cuda.device_count()
    b = to_np(C.rand(50, device="cuda"))
    C.cuda.set_rng_state_all(states)
    np.testing.assert_array_equal(to_np(C.rand(50, device="cuda")), b)


@requires_cuda
def test_default_generators():
    gens = C.cuda.default_generators
    assert isinstance(gens, tuple) and len(gens) == C.cuda.device_count()
    assert gens[0] is C.cuda.default_generators[0]
    assert gens[0].device == C.device("cuda", 0)
    gens[0].manual_seed(21)
    assert C.cuda.initial_seed() == 21
    with pytest.raises(IndexError):
        C.cuda.get_rng_state(C.cuda.device_count())


@requires_cuda
def test_bad_state_leaves_generator_untouched():
    before = C.cuda.get_rng_state().tolist()
    with pytest.raises(RuntimeError, match="^RNG state is wrong size$"):
        C.cuda.set_rng_state(C.zeros(8, dtype=C.uint8))
    with pytest.raises(TypeError, match="^RNG state must be a torch.ByteTensor$"):
        C.cuda.set_rng_state(C.zeros(16, dtype=C.uint8, device="cuda"))
    assert C.cuda.get_rng_state().tolist() == before
