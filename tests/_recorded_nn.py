"""Checks shared by the tests that replay cases recorded from torch 2.11 (test_nn_layers.py,
test_nn_breadth.py): values and gradients against the recorded ones, and torch's CPU error
messages worded for CUDA."""

from __future__ import annotations

import warnings

import numpy as np

TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-5)}


def check_values_and_gradients(torch, run, expr, exp, dtype, device):
    """``run(torch, expr, dtype, device)`` gives (values, {name: grad}) as NumPy arrays; they
    must equal the recorded ``exp`` (shape, int64-ness, values, gradients)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vals, grads = run(torch, expr, dtype, device)
    rtol, atol = TOL[str(dtype).split(".")[-1]]
    assert list(vals.shape) == exp["shape"]
    if exp["dtype"] == "int64":
        assert vals.dtype == np.int64
    np.testing.assert_allclose(vals.ravel(), exp["values"], rtol=rtol, atol=atol)
    assert sorted(grads) == sorted(exp["grads"])
    for k, g in grads.items():
        np.testing.assert_allclose(g.ravel(), exp["grads"][k], rtol=rtol, atol=atol, err_msg=k)


def on_device(msg, cuda_names, device):
    """A message recorded on the CPU as torch words it on ``device``: on CUDA each of
    ``cuda_names``' CPU texts (a kernel or tensor-type name) becomes its CUDA text."""
    if device == "cuda":
        for cpu, cuda in cuda_names.items():
            msg = msg.replace(cpu, cuda)
    return msg
