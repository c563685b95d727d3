"""The special functions, composed pointwise ops, statistics, scans, products and diagonals
of tests/mathops_cases.py against torch 2.11's outcomes (data/mathops_expected.json,
recorded by gen_mathops_expected.py): result dtypes and shapes exactly, values to a
tolerance of the dtype's precision, errors by type and message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cudalite as C
from mathops_cases import CASES, CPU_ONLY, inputs, outcome

EXPECTED = json.loads((Path(__file__).parent / "data/mathops_expected.json").read_text())

# Relative tolerance by dtype: special functions are series of their own (not torch's
# polynomials), so the last bits differ.
_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 2e-9}


def _floats(values):
    return np.vectorize(float, otypes=[float])(np.asarray(values, dtype=object))


def _same(got, want, path):
    assert got.keys() == want.keys(), path
    if "items" in want:
        assert got["type"] == want["type"], path
        assert len(got["items"]) == len(want["items"]), path
        for k, (a, b) in enumerate(zip(got["items"], want["items"], strict=True)):
            _same(a, b, f"{path}[{k}]")
    elif "value" in want:
        assert got == want, path
    else:
        dtype = want["dtype"]
        assert got["dtype"] == dtype, f"{path}: dtype {got['dtype']} != {dtype}"
        assert got["shape"] == want["shape"], f"{path}: shape {got['shape']} != {want['shape']}"
        g, w = _floats(got["values"]), _floats(want["values"])
        if dtype in _RTOL:
            tol = _RTOL[dtype]
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=path)
        else:
            np.testing.assert_array_equal(g, w, err_msg=path)


@pytest.mark.parametrize("expr", CASES)
def test_outcome_matches_torch(expr, device):
    if device != "cpu" and expr in CPU_ONLY:
        pytest.skip("compared on the CPU only (mathops_cases.CPU_ONLY)")
    got = json.loads(json.dumps(outcome(C, inputs(C, device), expr)))
    want = EXPECTED[expr]
    if want[0] == "err":
        assert got == want
        return
    assert got[0] == "ok", got
    _same(got[1], want[1], expr)
