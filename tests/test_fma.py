"""_C._fma: a * b + c rounded once (the fused multiply-add behind the optimizers' add(alpha=),
addcmul and lerp), against exact rational arithmetic."""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
import pytest

import cudalite as torch
from cudalite import _C


def _round(x, dtype):
    d = float(x)  # correctly rounded to double
    if dtype == "float32":
        # double -> float32 rounds twice; the test values avoid the (rare) ties that changes
        return struct.unpack("f", struct.pack("f", d))[0]
    return d


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fma_is_one_rounding(dtype, device):
    rng = np.random.default_rng(0)
    np_dtype = np.float32 if dtype == "float32" else np.float64
    a, b, c = (rng.standard_normal(257).astype(np_dtype) for _ in range(3))
    dt = getattr(torch, dtype)
    ta, tb, tc = (torch.tensor(v.tolist(), dtype=dt, device=device) for v in (a, b, c))
    got = _C._fma(ta, tb, tc).cpu().tolist()
    exact = [
        _round(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), dtype)
        for x, y, z in zip(a, b, c, strict=True)
    ]
    assert got == exact
    # where a plain multiply then add rounds twice, the results differ somewhere
    assert got != ((ta * tb) + tc).cpu().tolist()


def test_fma_numbers_broadcasting_and_out(device):
    x = torch.tensor([[1.0, 2.0, 3.0]], device=device)
    y = torch.tensor([[10.0], [20.0]], device=device)
    assert _C._fma(x, y, 0.5).tolist() == [[10.5, 20.5, 30.5], [20.5, 40.5, 60.5]]
    # a number is read at the tensor's precision (0.1 rounded to float32 first)
    one = torch.ones(1, device=device)
    assert _C._fma(one, 0.1, 0.0).item() == torch.tensor(0.1).item()
    out = torch.tensor([1.0, 1.0], device=device)
    v = out._version
    r = _C._fma(torch.tensor([2.0, 3.0], device=device), 4.0, out, out)
    assert r is out and out.tolist() == [9.0, 13.0] and out._version == v + 1


def test_fma_errors(device):
    i = torch.ones(2, dtype=torch.int64, device=device)
    with pytest.raises(NotImplementedError, match="\"fma_(cpu|cuda)\" not implemented for 'Long'"):
        _C._fma(i, i, i)
    h = torch.ones(2, dtype=torch.float16, device=device)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        _C._fma(h, h, h)
    with pytest.raises(TypeError, match="arguments must be Tensors or Numbers"):
        _C._fma(torch.ones(1), "x", 1.0)
    o = torch.ones(3, device=device)  # in place into an input: no resizing
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        _C._fma(o, torch.ones(2, 3, device=device), 1.0, o)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible")
def test_fma_mixed_devices():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        _C._fma(torch.ones(2), torch.ones(2, device="cuda"), torch.ones(2))
