"""Tensor printing: goldens recorded from PyTorch 2.11, print options, and invariants."""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# The module is loaded by path so these tests run without the compiled extension.  Once
# `import cudalite` works everywhere, this becomes `from cudalite import _tensor_str as ts`.
from cudalite import _tensor_str as ts  # noqa: E402

cases = _load("tensor_str_cases", HERE / "tensor_str_cases.py")
EXPECTED = _load("tensor_str_expected", HERE / "tensor_str_expected.py").EXPECTED


@pytest.fixture(autouse=True)
def _default_printoptions():
    ts.set_printoptions(profile="default")
    yield
    ts.set_printoptions(profile="default")


def _repr(values, dtype_name="float32", **kwargs) -> str:
    return ts.tensor_repr(values, dtype_name=dtype_name, **kwargs)


# --------------------------------------------------------------------------------------------
# goldens


def test_every_case_has_a_golden():
    assert [c.id for c in cases.CASES] == list(EXPECTED)


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.id)
def test_matches_torch(case):
    ts.set_printoptions(**case.opts)
    got = ts.tensor_repr(cases.input_array(case), dtype_name=case.dtype, **case.kwargs)
    assert got == EXPECTED[case.id]


def test_float16_values_may_arrive_as_float16():
    case = next(c for c in cases.CASES if c.id == "float16")
    as_f16 = cases.input_array(case).astype(np.float16)
    assert _repr(as_f16, "float16") == EXPECTED["float16"]


def test_bfloat16_exact_values_print_the_same():
    case = next(c for c in cases.CASES if c.id == "bfloat16_rand")
    exact = ts._round_to_bfloat16(cases.input_array(case))
    assert _repr(exact, "bfloat16") == EXPECTED["bfloat16_rand"]


def test_dtype_spellings():
    values = np.array([1, 2], dtype=np.int8)
    want = "tensor([1, 2], dtype=cudalite.int8)"
    assert _repr(values, "int8") == want
    assert _repr(values, "torch.int8") == want
    assert _repr(values, "cudalite.int8") == want
    assert _repr([1.5], "half") == "tensor([1.5000], dtype=cudalite.float16)"
    assert _repr([1.5], "double", default_dtype_name="torch.float64") == "tensor([1.5000])"
    with pytest.raises(ValueError, match="complex64"):
        _repr([1.0], "complex64")


def test_cpu_device_prints_no_suffix():
    assert _repr([1.5], device="cpu") == "tensor([1.5000])"
    assert _repr([1.5], device="cuda:0") == "tensor([1.5000], device='cuda:0')"


def test_is_empty_shape_override():
    assert _repr(None, is_empty_shape=(0, 3)) == "tensor([], size=(0, 3))"
    assert _repr(None, "int64", is_empty_shape=(0,)) == "tensor([], dtype=cudalite.int64)"
    assert _repr(np.zeros((2, 0)), is_empty_shape=None) == "tensor([], size=(2, 0))"
    assert _repr(np.zeros((2, 0)), is_empty_shape=True) == "tensor([], size=(2, 0))"


def test_grad_fn_wins_over_requires_grad():
    got = _repr([1.5], requires_grad=True, grad_fn="AddmmBackward0")
    assert got == "tensor([1.5000], grad_fn=<AddmmBackward0>)"


# --------------------------------------------------------------------------------------------
# print options


def test_default_printoptions():
    assert ts.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }


def test_profiles():
    ts.set_printoptions(profile="short")
    assert ts.get_printoptions() == {
        "precision": 2,
        "threshold": 1000,
        "edgeitems": 2,
        "linewidth": 80,
        "sci_mode": None,
    }
    ts.set_printoptions(profile="full")
    assert ts.get_printoptions()["threshold"] == math.inf
    assert ts.get_printoptions()["precision"] == 4
    # Unknown profile names are ignored, as in torch.
    ts.set_printoptions(profile="no-such-profile")
    assert ts.get_printoptions()["threshold"] == math.inf


def test_full_profile_never_summarises():
    values = np.arange(3000) % 10
    ts.set_printoptions(profile="full")
    text = _repr(values, "int64")
    assert "..." not in text
    assert [int(x) for x in re.findall(r"\d+", text)] == values.tolist()


def test_arguments_override_profile_and_sci_mode_resets():
    ts.set_printoptions(profile="short", precision=6, sci_mode=True)
    opts = ts.get_printoptions()
    assert (opts["precision"], opts["edgeitems"], opts["sci_mode"]) == (6, 2, True)
    assert _repr([1.5]) == "tensor([1.500000e+00])"
    # Like torch, a call without sci_mode resets it to automatic.
    ts.set_printoptions(linewidth=100)
    assert ts.get_printoptions()["sci_mode"] is None
    assert ts.get_printoptions()["precision"] == 6


def test_printoptions_context_restores():
    ts.set_printoptions(precision=3)
    with ts.printoptions(precision=1, threshold=5):
        assert _repr([1 / 3]) == "tensor([0.3])"
        assert _repr(np.arange(10), "int64") == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    assert ts.get_printoptions()["precision"] == 3
    assert ts.get_printoptions()["threshold"] == 1000


# --------------------------------------------------------------------------------------------
# invariants on random tensors

_NUMBER = re.compile(r"-?(?:nan|inf|\d+\.?\d*(?:e[+-]\d+)?)")


def _shown(a: np.ndarray, summarize: bool, edge: int) -> np.ndarray:
    """The elements a print shows: 2 * edge per long dimension when summarising."""
    if not summarize:
        return a.reshape(-1)
    index = [np.r_[0:edge, n - edge : n] if n > 2 * edge else np.arange(n) for n in a.shape]
    return a[np.ix_(*index)].reshape(-1) if a.ndim else a.reshape(-1)


def _tolerance(token: str, precision: int) -> float:
    if "e" in token:
        return 0.5 * 10.0 ** (int(token.split("e")[1]) - precision)
    return 0.5 if token.endswith(".") else 0.5 * 10.0**-precision


_finite = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)
_float_arrays = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=9), elements=_finite
)


@settings(deadline=None, max_examples=150)
@given(
    a=_float_arrays,
    precision=st.integers(0, 6),
    threshold=st.integers(0, 60),
    edgeitems=st.integers(1, 3),
    linewidth=st.integers(40, 120),
)
def test_printed_numbers_round_trip(a, precision, threshold, edgeitems, linewidth):
    ts.set_printoptions(
        precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth
    )
    text = _repr(a, "float64", default_dtype_name="float64")
    assert text.startswith("tensor(") and text.endswith(")")
    tokens = _NUMBER.findall(text[len("tensor(") : -1])
    want = _shown(a, a.size > threshold, edgeitems)
    assert len(tokens) == want.size
    for token, value in zip(tokens, want.tolist(), strict=True):
        assert abs(float(token) - value) <= _tolerance(token, precision) * (1 + 1e-9), token


@settings(deadline=None, max_examples=150)
@given(a=_float_arrays, threshold=st.integers(0, 60), linewidth=st.integers(40, 120))
def test_lines_fit_linewidth(a, threshold, linewidth):
    # Like torch, the width is measured on non-zero values only, so "0." rows of an all-zero
    # tensor and "-0." beside wider integers can overflow; keep those out.
    a = np.where(a == 0, 0.0, a)
    assume(np.any(_shown(a, a.size > threshold, 3) != 0))
    ts.set_printoptions(threshold=threshold, linewidth=linewidth)
    text = _repr(a, "float64", default_dtype_name="float64")
    for line in text.split("\n"):
        # Each row holds as many elements as fit; only the closing brackets (and the " ..."
        # marker, wider than a 1- or 2-character element) may run past the width.
        slack = 3 if "..." in line else 0
        assert len(line.rstrip("]),")) <= linewidth - 1 + slack, line


@settings(deadline=None, max_examples=100)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=12),
    edgeitems=st.integers(1, 4),
)
def test_summarised_dims_show_two_edgeitems(shape, edgeitems):
    a = np.arange(math.prod(shape)).reshape(shape)
    ts.set_printoptions(threshold=0, edgeitems=edgeitems)
    text = _repr(a, "int64")
    shown = [int(x) for x in re.findall(r"\d+", text)]
    assert shown == _shown(a, True, edgeitems).tolist()
    long_dims = [n for n in shape if n > 2 * edgeitems]
    assert ("..." in text) == bool(long_dims)
    assert len(shown) == math.prod(min(n, 2 * edgeitems) for n in shape)


@settings(deadline=None, max_examples=100)
@given(a=hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3)))
def test_int_values_print_exactly_and_aligned(a):
    text = _repr(a, "int64")
    assert [int(x) for x in re.findall(r"-?\d+", text)] == a.reshape(-1).tolist()
    # Every row's elements start in the column after "tensor(" and the brackets, and all are
    # padded to one width.
    rows = [line[len("tensor(") + a.ndim :].rstrip("]),") for line in text.split("\n")]
    widths = {len(e) for row in rows if row for e in row.split(", ")}
    assert len(widths) == 1


@settings(deadline=None, max_examples=300)
@given(
    a=hnp.arrays(
        np.float64,
        st.integers(1, 20),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
    ),
    precision=st.integers(0, 8),
    sci_mode=st.sampled_from([None, True, False]),
)
def test_width_from_extremes_equals_brute_force(a, precision, sci_mode):
    # The formatter measures only the extreme values; torch measures every value.
    ts.set_printoptions(precision=precision, sci_mode=sci_mode)
    fmt = ts._Formatter(a, "float64")
    vals = [v for v in a.tolist() if math.isfinite(v) and v != 0]
    if fmt.sci_mode:
        widths = [len(f"{v:.{precision}e}") for v in vals]
    elif fmt.int_mode:
        widths = [len(f"{v:.0f}") + 1 for v in vals]
    else:
        widths = [len(f"{v:.{precision}f}") for v in vals]
    assert fmt.max_width == max([1, *widths])


@given(bits=st.integers(0, 0xFFFF))
def test_bfloat16_rounding_keeps_bfloat16_values(bits):
    exact = np.array([bits << 16], dtype=np.uint32).view(np.float32)
    out = ts._round_to_bfloat16(exact)
    assert out.view(np.uint32)[0] == exact.view(np.uint32)[0] or np.isnan(exact[0])


@given(x=st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_bfloat16_rounding_is_nearest(x):
    out = float(ts._round_to_bfloat16(np.array([x], dtype=np.float32))[0])
    assert np.array([out], dtype=np.float32).view(np.uint32)[0] & 0xFFFF == 0
    if math.isfinite(out):
        ulp = 2.0 ** (math.frexp(out or x or 1.0)[1] - 8)
        assert abs(out - x) <= ulp / 2 * (1 + 1e-12) + 2.0**-133
