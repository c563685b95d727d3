"""Loads files written by ``cudalite.save`` in torch 2.11 (not a test: needs torch, which the
test environment does not have). Run from the repository root with the reference interpreter:

    PYTHONPATH=python $TORCH_PYTHON tests/check_save_with_torch.py [--device cuda]

For tensors of every dtype, views sharing a storage, non-contiguous, 0-dim and empty tensors,
Parameters, state dicts, optimizer state and nested containers, the file must load with
``torch.load`` (``weights_only=True``, the default; also with ``mmap=True``) and give equal
objects: types, dtypes, shapes, strides, storage offsets, requires_grad, values, and the
same storage sharing. A model and its Adam optimizer trained a step in cudalite then continue
in torch from the saved state dicts, and must reach the same parameters as in cudalite.
With ``--device cuda`` the tensors are saved from the GPU; a CPU-only torch loads them with
``map_location='cpu'``. Prints each check and exits non-zero on the first mismatch.

tests/test_serialization.py covers the other direction with files torch wrote
(tests/data/make_torch_files.py).
"""

from __future__ import annotations

import argparse
import collections
import io
import math
import os
import sys
import tempfile

import numpy as np
import torch

import cudalite


def values(t):
    """A NumPy copy of a tensor of either library (bfloat16 as float32)."""
    t = t.detach().cpu()
    if t.dtype in (torch.bfloat16, cudalite.bfloat16):
        t = t.float()
    return np.array(t.numpy(), copy=True)


def storage_id(t):
    """Identifies the storage under a tensor of either library."""
    if isinstance(t, torch.Tensor):
        return t.untyped_storage()._cdata
    return (str(t.device), t.untyped_storage().data_ptr(), t._storage_nbytes())


def compare(ours, theirs, path, pairs):
    """Asserts ``theirs`` (loaded by torch) equals ``ours``; collects the tensor pairs."""
    if isinstance(ours, cudalite.Tensor):
        assert isinstance(theirs, torch.Tensor), (path, type(theirs))
        assert type(theirs).__name__ == type(ours).__name__, (path, type(theirs))
        assert str(theirs.dtype) == str(ours.dtype).replace("cudalite", "torch"), path
        assert list(theirs.shape) == list(ours.shape), path
        assert theirs.stride() == ours.stride(), (path, theirs.stride(), ours.stride())
        assert theirs.storage_offset() == ours.storage_offset(), path
        assert theirs.requires_grad == ours.requires_grad, path
        assert theirs.untyped_storage().nbytes() == ours._storage_nbytes(), path
        np.testing.assert_array_equal(values(theirs), values(ours), err_msg=path)
        for k, v in ours.__dict__.items():
            if k in ("foo", "note"):
                assert getattr(theirs, k) == v, (path, k)
        pairs.append((path, ours, theirs))
    elif isinstance(ours, cudalite.Size):
        assert type(theirs) is torch.Size and list(theirs) == list(ours), path
    elif isinstance(ours, cudalite.dtype):
        assert theirs == getattr(torch, str(ours).split(".")[1]), path
    elif isinstance(ours, cudalite.device):
        assert theirs == torch.device(str(ours)), path
    elif isinstance(ours, dict):
        assert type(theirs) is type(ours), (path, type(theirs))
        assert list(theirs) == list(ours), path
        for k in ours:
            compare(ours[k], theirs[k], f"{path}[{k!r}]", pairs)
    elif isinstance(ours, (list, tuple)):
        assert type(theirs) is type(ours) and len(theirs) == len(ours), path
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            compare(a, b, f"{path}[{i}]", pairs)
    elif isinstance(ours, float) and math.isnan(ours):
        assert math.isnan(theirs), path
    else:
        assert type(theirs) is type(ours) and theirs == ours, (path, theirs, ours)


def check_sharing(pairs):
    """Tensors sharing a storage in cudalite share one in torch, and only those."""
    for i, (path_a, ours_a, theirs_a) in enumerate(pairs):
        for path_b, ours_b, theirs_b in pairs[i + 1 :]:
            same = ours_a._is_same_storage(ours_b)
            assert (storage_id(theirs_a) == storage_id(theirs_b)) == same, (path_a, path_b)


def dtypes(device):
    floats = [0.0, -1.5, 2.25, 1e-3, 65504.0, -0.0, math.inf, -math.inf, math.nan]
    out = {
        "bool": cudalite.tensor([True, False, True]),
        "uint8": cudalite.tensor([0, 1, 127, 255], dtype=cudalite.uint8),
        "int8": cudalite.tensor([-128, -1, 0, 127], dtype=cudalite.int8),
        "int16": cudalite.tensor([-32768, -1, 0, 32767], dtype=cudalite.int16),
        "int32": cudalite.tensor([-(2**31), -1, 0, 2**31 - 1], dtype=cudalite.int32),
        "int64": cudalite.tensor([-(2**63), -1, 0, 2**63 - 1], dtype=cudalite.int64),
    }
    for dt in ("float16", "bfloat16", "float32", "float64"):
        out[dt] = cudalite.tensor(floats, dtype=getattr(cudalite, dt))
    return {k: v.to(device) for k, v in out.items()}


def views(device):
    base = cudalite.arange(24, dtype=cudalite.float32, device=device).reshape(4, 6)
    other = cudalite.arange(10, device=device)
    return {
        "base": base,
        "slice": base[1:3, 2:5],
        "transposed": base.t(),
        "stepped": base[::2, ::3],
        "element": base[3, 4],
        "expanded": other[:1].expand(3, 4),
        "other_tail": other[7:],
        "permuted": cudalite.arange(24.0, dtype=cudalite.float64, device=device)
        .reshape(2, 3, 4)
        .permute(2, 0, 1),
        "scalar": cudalite.tensor(3.5, device=device),
        "empty": cudalite.zeros(0, device=device),
        "empty_2d": cudalite.ones(2, 0, 3, dtype=cudalite.int32, device=device),
        "bf16_view": cudalite.arange(8, device=device).bfloat16()[2:6],
    }


def model(lib, device):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)


def misc(device):
    w = cudalite.nn.Parameter(cudalite.randn(2, 3, device=device))
    noted = cudalite.arange(3.0, device=device)
    noted.foo = "bar"
    return {
        "weight": w,
        "frozen": cudalite.nn.Parameter(cudalite.ones(3, device=device), requires_grad=False),
        "leaf": cudalite.tensor([1.0, 2.0], device=device, requires_grad=True),
        "view_of_param": w.detach()[1],
        "with_attribute": noted,
        "nested": {"a": [1, -(2**70), 2.5, "ü", None, True], "t": (w.detach()[0], {"k": 3})},
        "ordered": collections.OrderedDict([("z", 1), ("a", cudalite.ones(2, device=device))]),
        "size": cudalite.Size([2, 3]),
        "dtype": cudalite.bfloat16,
        "device": cudalite.device("cuda", 1),
    }


def roundtrip(obj, map_location, **load_kwargs):
    """torch.load of cudalite.save(obj), through a file and through a buffer."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "checkpoint.pt")
        cudalite.save(obj, path)
        from_file = torch.load(path, map_location=map_location, **load_kwargs)
    buf = io.BytesIO()
    cudalite.save(obj, buf)
    buf.seek(0)
    from_buffer = torch.load(buf, map_location=map_location)
    return from_file, from_buffer


def check_objects(device, map_location):
    for name, obj in [
        ("dtypes", dtypes(device)),
        ("views", views(device)),
        ("state_dict", model(cudalite, device).state_dict()),
        ("misc", misc(device)),
    ]:
        for load_kwargs in ({}, {"mmap": True}):
            for loaded in roundtrip(obj, map_location, **load_kwargs):
                pairs = []
                compare(obj, loaded, name, pairs)
                check_sharing(pairs)
        print(f"ok  {name}: torch.load gives equal objects (file, buffer, mmap)")


def check_training(device, map_location):
    """A step in cudalite, then one more in cudalite and in torch from the saved state."""
    ours = model(cudalite, device)
    opt = cudalite.optim.Adam(ours.parameters(), lr=0.01)
    x = cudalite.linspace(-1, 1, 15, device=device).reshape(5, 3)
    for _ in range(2):
        opt.zero_grad()
        ours(x).pow(2).sum().backward()
        opt.step()
    model_sd = roundtrip(ours.state_dict(), map_location)[0]
    opt_sd = roundtrip(opt.state_dict(), map_location)[0]
    theirs = model(torch, "cpu")
    theirs.load_state_dict(model_sd)
    topt = torch.optim.Adam(theirs.parameters(), lr=0.01)
    topt.load_state_dict(opt_sd)
    tx = torch.from_numpy(values(x))
    for step in (opt, topt):
        step.zero_grad()
    ours(x).pow(2).sum().backward()
    opt.step()
    theirs(tx).pow(2).sum().backward()
    topt.step()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(values(q), values(p), rtol=1e-5, atol=1e-6, err_msg=name)
    print("ok  training: torch continues from cudalite's model and Adam state dicts")


def check_protocols(device, map_location):
    t = cudalite.arange(6.0, device=device).reshape(2, 3).t()
    for protocol in (2, 3, 4, 5):
        buf = io.BytesIO()
        cudalite.save({"t": t}, buf, pickle_protocol=protocol)
        buf.seek(0)
        # torch's weights_only unpickler reads protocol 2 (and warns for others)
        loaded = torch.load(buf, map_location=map_location, weights_only=protocol == 2)
        compare({"t": t}, loaded, f"protocol {protocol}", [])
    print("ok  pickle protocols 2-5 (weights_only=False above 2)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    map_location = None if args.device == "cpu" or torch.cuda.is_available() else "cpu"
    check_objects(args.device, map_location)
    check_training(args.device, map_location)
    check_protocols(args.device, map_location)
    print(f"all checks passed (cudalite on {args.device}, torch {torch.__version__})")


if __name__ == "__main__":
    sys.exit(main())
