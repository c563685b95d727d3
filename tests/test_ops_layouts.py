"""Elementwise results on every GPU loop path (tiled, rows) checked against NumPy, and the
layouts of results as torch 2.11 gives them. CPU and CUDA (kernels/loops.cuh)."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

# ---- layouts that take the GPU's tiled path (2-3 dims of at least 32 x 32) ----


def _layout_cases(device, dtype):
    rng = np.random.default_rng(11)
    x = rng.integers(-20, 20, size=(45, 70)).astype(np.float64)
    y = rng.integers(-20, 20, size=(70, 45)).astype(np.float64)
    r = rng.integers(-20, 20, size=(1, 70)).astype(np.float64)
    c = rng.integers(-20, 20, size=(45, 1)).astype(np.float64)
    z = rng.integers(-20, 20, size=(3, 40, 50)).astype(np.float64)
    T = {
        k: C.tensor(v, dtype=dtype, device=device) for k, v in dict(x=x, y=y, r=r, c=c, z=z).items()
    }
    return [
        ("x.t() * 2", T["x"].t() * 2, x.T * 2),
        ("x.t() + y", T["x"].t() + T["y"], x.T + y),
        ("y.t() - x.t().t()", T["y"].t() - T["x"], y.T - x),
        ("x + r", T["x"] + T["r"], x + r),
        ("c * x", T["c"] * T["x"], c * x),
        ("x[:, 3:60] + 1", T["x"][:, 3:60] + 1, x[:, 3:60] + 1),
        (
            "x.t()[5:, ::2] * r.t()[5:, :]",
            T["x"].t()[5:, ::2] * T["r"].t()[5:, :],
            x.T[5:, ::2] * r.T[5:, :],
        ),
        ("z.permute(0, 2, 1) * 3", T["z"].permute(0, 2, 1) * 3, z.transpose(0, 2, 1) * 3),
        ("z.transpose(0, 2) + 1", T["z"].transpose(0, 2) + 1, z.transpose(2, 1, 0) + 1),
        ("x.t().contiguous()", T["x"].t().contiguous(), x.T),
        (
            "where(x.t() > 0, y, x.t())",
            C.where(T["x"].t() > 0, T["y"], T["x"].t()),
            np.where(x.T > 0, y, x.T),
        ),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "float64"])
def test_tiled_layouts(dtype, device):
    for name, got, want in _layout_cases(device, getattr(C, dtype)):
        assert tuple(got.shape) == want.shape, name
        np.testing.assert_array_equal(to_np(got).astype(np.float64), want, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
def test_tiled_outputs_and_casts(dtype, device):
    rng = np.random.default_rng(5)
    a = rng.integers(-9, 9, size=(64, 33)).astype(np.float64)
    b = rng.integers(-9, 9, size=(33, 64)).astype(np.float64)
    ta = C.tensor(a, dtype=getattr(C, dtype), device=device)
    tb = C.tensor(b, dtype=getattr(C, dtype), device=device)
    out = C.empty(33, 64, dtype=getattr(C, dtype), device=device)
    C.add(ta, tb.t(), out=out.t())  # transposed output, transposed input
    np.testing.assert_array_equal(to_np(out).astype(np.float64), (a + b.T).T)
    dst = C.zeros(64, 33, dtype=C.float32, device=device)
    dst.t().copy_(tb)  # copy with a cast into a transposed view
    np.testing.assert_array_equal(to_np(dst), b.T)
    h = ta.t().to(C.float16)
    np.testing.assert_array_equal(to_np(h).astype(np.float64), a.T)
    big = C.arange(40 * 70000, dtype=C.float32, device=device).reshape(40, 70000)  # many tiles
    np.testing.assert_array_equal(
        to_np(big.t() * 2), np.arange(40 * 70000, dtype=np.float32).reshape(40, 70000).T * 2
    )


# ---- layouts that take the GPU's rows path (every operand dense along rows of >= 1024) ----


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
def test_rows_layouts(dtype, device):
    rng = np.random.default_rng(3)
    npt = bool if dtype == "bool" else np.float64  # bool: + is or, * is and, as in torch
    x = rng.integers(-20, 20, size=(5, 3000)).astype(npt)
    r = rng.integers(-20, 20, size=(1, 2999)).astype(npt)
    c = rng.integers(1, 20, size=(5, 1)).astype(npt)
    z = rng.integers(-20, 20, size=(3, 4, 1100)).astype(npt)
    dt = getattr(C, dtype)
    X, R, Cc, Z = (C.tensor(v, dtype=dt, device=device) for v in (x, r, c, z))
    cases = [
        (X[:, 1:] + 1, x[:, 1:] + 1),  # misaligned rows
        (X[:, 1:] * R, x[:, 1:] * r),  # and a broadcast row
        (X[:, 3:2050] * Cc, x[:, 3:2050] * c),  # a broadcast column (stride 0 along rows)
        (X[::2, 5:] > 0, x[::2, 5:] > 0),  # a bool output from another dtype
        (Z[:, 1:3, 7:] * 2, z[:, 1:3, 7:] * 2),  # three dims
        (Z[:, ::2, :1025].to(C.float64), z[:, ::2, :1025]),  # a cast
    ]
    for got, want in cases:
        assert tuple(got.shape) == want.shape
        np.testing.assert_array_equal(to_np(got).astype(np.float64), want.astype(np.float64))
    out = C.zeros(5, 3000, dtype=dt, device=device)
    C.mul(X[:, 1:], X[:, :-1], out=out[:, 1:])  # a sliced output
    want = np.zeros((5, 3000), dtype=npt)
    want[:, 1:] = x[:, 1:] * x[:, :-1]
    np.testing.assert_array_equal(to_np(out), want)


def test_result_layout_follows_torch(device):
    """Strides torch 2.11 gives: the result is laid out like the first operand of the full
    shape when that is a permuted dense tensor; contiguous() and other devices are contiguous."""
    x = C.randn(3, 4, device=device).t()
    y = C.randn(3, 4, device=device).t()
    z = C.randn(4, 3, device=device)
    a = C.randn(2, 3, 4, device=device).permute(2, 0, 1)
    row = C.randn(3, device=device)
    cases = {
        "x * 2": (x * 2, (1, 4)),
        "x.exp()": (x.exp(), (1, 4)),
        "x + y": (x + y, (1, 4)),
        "2 - x": (2 - x, (1, 4)),
        "x + z": (x + z, (1, 4)),
        "z + x": (z + x, (3, 1)),
        "row + x": (row + x, (1, 4)),
        "a + 1": (a + 1, (1, 12, 4)),
        "-a": (-a, (1, 12, 4)),
        "x > 0": (x > 0, (1, 4)),
        "x.half()": (x.half(), (1, 4)),
        "x.clone()": (x.clone(), (1, 4)),
        "x.contiguous()": (x.contiguous(), (3, 1)),
        "x.int() + 1": (x.int() + 1, (1, 4)),
        "x[:, :2] * 2": (x[:, :2] * 2, (1, 4)),
        "x[::2] * 2": (x[::2] * 2, (1, 2)),  # not dense: dense in the same dim order
        "x.expand(2, 4, 3) + 0": (x.expand(2, 4, 3) + 0, (12, 1, 4)),
        "where(x > 0, x, 0.0)": (C.where(x > 0, x, 0.0), (1, 4)),
        "where(z > 0, x, 0.0)": (C.where(z > 0, x, 0.0), (3, 1)),
        "empty_like(x)": (C.empty_like(x), (1, 4)),
        "zeros_like(x)": (C.zeros_like(x), (1, 4)),
        "ones_like(x)": (C.ones_like(x), (1, 4)),
        "full_like(x, 2)": (C.full_like(x, 2.0), (1, 4)),
        "rand_like(x)": (C.rand_like(x), (1, 4)),
        "randn_like(x)": (C.randn_like(x), (1, 4)),
        "zeros_like(z)": (C.zeros_like(z), (3, 1)),
    }
    for name, (t, strides) in cases.items():
        assert tuple(t.stride()) == strides, name
    np.testing.assert_array_equal(to_np(x * 2), to_np(x) * 2)
    np.testing.assert_array_equal(to_np(x + z), to_np(x) + to_np(z))
    np.testing.assert_array_equal(to_np(C.full_like(x, 2.0)), np.full((4, 3), 2.0, np.float32))
    np.testing.assert_array_equal(to_np(C.where(x > 0, x, 0.0)), np.maximum(to_np(x), 0))
