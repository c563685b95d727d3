"""cudalite's CUDA random streams against torch's, live: where torch is importable and a GPU
is visible, every case draws with both libraries on the same GPU from the same seed and the
values must be equal bit for bit (docs/random.md: parity holds on the same GPU model).
Skipped elsewhere; the CPU streams are checked against recorded values in
test_random_torch.py."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import HAS_CUDA
from cuda_random_torch_cases import CASES as SAMPLING_CASES
from cuda_random_torch_cases import state_after

torch = pytest.importorskip("torch") if HAS_CUDA else None
pytestmark = [
    pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible"),
    pytest.mark.skipif(
        torch is not None and not torch.cuda.is_available(), reason="torch without CUDA"
    ),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

SIZES = [1, 3, 15, 16, 17, 1000, 2**20 + 3]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _cases():
    cases = []
    for n in SIZES:
        for dt in FLOATS:
            cases.append(
                (
                    f"rand-{dt}-{n}",
                    lambda T, dt=dt, n=n: T.rand(n, dtype=getattr(T, dt), device="cuda"),
                )
            )
            cases.append(
                (
                    f"randn-{dt}-{n}",
                    lambda T, dt=dt, n=n: T.randn(n, dtype=getattr(T, dt), device="cuda"),
                )
            )
        cases.append((f"uniform-{n}", lambda T, n=n: T.empty(n, device="cuda").uniform_(-1.7, 2.3)))
        cases.append((f"normal-{n}", lambda T, n=n: T.empty(n, device="cuda").normal_(0.3, 1.7)))
        cases.append((f"randint-{n}", lambda T, n=n: T.randint(-5, 100, (n,), device="cuda")))
        cases.append((f"randint-wide-{n}", lambda T, n=n: T.randint(0, 2**40, (n,), device="cuda")))
        cases.append((f"bernoulli-{n}", lambda T, n=n: T.empty(n, device="cuda").bernoulli_(0.3)))
        cases.append(
            (
                f"bernoulli-f64-{n}",
                lambda T, n=n: T.empty(n, dtype=T.float64, device="cuda").bernoulli_(0.3),
            )
        )
        cases.append(
            (f"exponential-{n}", lambda T, n=n: T.empty(n, device="cuda").exponential_(2.5))
        )
        cases.append(
            (
                f"exponential-f64-{n}",
                lambda T, n=n: T.empty(n, dtype=T.float64, device="cuda").exponential_(2.5),
            )
        )
    for dt in [
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
        "float32",
        "float64",
        "float16",
        "bfloat16",
    ]:
        cases.append(
            (
                f"random_-{dt}",
                lambda T, dt=dt: T.empty(1000, dtype=getattr(T, dt), device="cuda").random_(),
            )
        )
    cases.append(
        (
            "random_-full",
            lambda T: T.empty(1000, dtype=T.int64, device="cuda").random_(-(2**63), None),
        )
    )
    cases.append(
        (
            "bernoulli-tensor-p",
            lambda T: T.empty(7, 1001, device="cuda").bernoulli_(
                T.linspace(0, 1, 1001, device="cuda")
            ),
        )
    )
    cases.append(
        (
            "bernoulli-fn-f64",
            lambda T: T.bernoulli(T.linspace(0, 1, 2**20 + 3, dtype=T.float64, device="cuda")),
        )
    )
    cases.append(("randn-noncontig", lambda T: T.zeros(300, 7, device="cuda").t().normal_()))
    cases.append(
        ("two-draws", lambda T: T.cat([T.rand(100, device="cuda"), T.randn(5000, device="cuda")]))
    )
    return cases  # fmt: skip


CASES = _cases()


def _bits(t):
    """The values' exact bits, widened to 64 bits (torch and cudalite alike)."""
    t = t.detach()
    if t.dtype.is_floating_point:
        t = t.double()
    else:
        t = t.long()
    return np.asarray(t.cpu().tolist())


@pytest.mark.parametrize("name, make", CASES, ids=[c[0] for c in CASES])
def test_same_draws_as_torch_on_this_gpu(name, make):
    torch.manual_seed(123)
    C.manual_seed(123)
    expected = _bits(make(torch))
    got = _bits(make(C))
    np.testing.assert_array_equal(got, expected)
    assert C.cuda.get_rng_state().tolist() == torch.cuda.get_rng_state().tolist(), (
        "the offset advanced differently"
    )


def test_torch_cuda_state_continues_here():
    torch.manual_seed(7)
    torch.randn(12345, device="cuda")
    state = torch.cuda.get_rng_state()
    C.cuda.set_rng_state(C.tensor(state.tolist(), dtype=C.uint8))
    np.testing.assert_array_equal(
        _bits(C.rand(777, device="cuda")), _bits(torch.rand(777, device="cuda"))
    )


@pytest.mark.parametrize("name", sorted(SAMPLING_CASES))
def test_sampling_same_as_torch_on_this_gpu(name):
    """randperm, multinomial, dropout, normal with tensors (cuda_random_torch_cases.py)."""
    expected = SAMPLING_CASES[name](torch)
    expected_state = state_after(torch)
    got = SAMPLING_CASES[name](C)
    assert str(got.dtype).removeprefix("cudalite.") == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(_bits(got), _bits(expected))
    assert state_after(C) == expected_state, "the offset advanced differently"
