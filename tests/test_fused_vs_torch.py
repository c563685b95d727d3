"""cudalite against torch 2.11's recorded results (tests/data/fused_expected.json, written by
tests/gen_fused_expected.py) for the cases of tests/fused_cases.py, on the CPU: the foreach
ops, the AMP kernels, the foreach/fused optimizers, GradScaler runs with injected infs and the
matmul precision switches.

The switches, errors, AMP kernels and scale trajectories must match exactly. Values computed
by the foreach ops and optimizers are compared to float rounding: torch's CPU sqrt is not
correctly rounded (see tests/gen_optim_expected.py) and torch's CPU fused optimizers round in
their own order (cudalite's CPU fused path runs the CUDA kernels' arithmetic), as torch's own
tests compare its implementations."""

import json
import math
import os
import warnings

import pytest

import cudalite
from fused_cases import CASES

with open(os.path.join(os.path.dirname(__file__), "data", "fused_expected.json")) as f:
    EXPECTED = json.load(f)["cases"]

_APPROX = ("foreach/", "foreach_f64/", "foreach_unary/", "optim/", "optim_amp/", "scaler/")


def _same(got, want, approx, path="case"):
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: {got} != {want}"
        for k in want:
            _same(got[k], want[k], approx, f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, approx, f"{path}[{i}]")
    elif isinstance(want, float) and approx and not isinstance(got, bool):
        assert isinstance(got, float) and math.isclose(got, want, rel_tol=2e-5, abs_tol=2e-6), (
            f"{path}: {got} != {want}"
        )
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = json.loads(json.dumps(CASES[name](cudalite)))
    _same(got, EXPECTED[name], name.startswith(_APPROX))


def test_every_case_recorded():
    assert sorted(EXPECTED) == sorted(CASES)
