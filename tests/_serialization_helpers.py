"""Shared helpers of the serialization tests: torch's messages, round trips, and the check
of an object against the description tests/data/make_torch_files.py wrote for it."""

from __future__ import annotations

import io
import json
import math
import pathlib
import re
import zipfile

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

DATA = pathlib.Path(__file__).parent / "data"
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
DTYPES += ["float16", "bfloat16", "float32", "float64"]

CUDA_UNAVAILABLE = (
    "Attempting to deserialize object on a CUDA device but cudalite.cuda.is_available() is "
    "False. If you are running on a CPU-only machine, please use cudalite.load with "
    "map_location=cudalite.device('cpu') to map your storages to the CPU."
)
UNSAFE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`cudalite.load` from `False` to `True`. Re-running `cudalite.load` with `weights_only` "
    "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it "
    "only if you got the file from a trusted source."
)
DOCS = (
    "\n\nCheck the documentation of cudalite.load to learn more about types accepted by "
    "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


def unsupported_global_msg(name):
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, \033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
        f"\n\t(1) {UNSAFE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
        "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {name} was not an allowed global by default. Please use "
        f"`cudalite.serialization.add_safe_globals([{name}])` or the "
        f"`cudalite.serialization.safe_globals([{name}])` context manager to allowlist this "
        f"global if you trust this class/function.{DOCS}"
    )


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    C.save(obj, buf)
    buf.seek(0)
    return C.load(buf, **load_kwargs)


def saved_bytes(obj, **save_kwargs):
    buf = io.BytesIO()
    C.save(obj, buf, **save_kwargs)
    return buf.getvalue()


def zip_records(records):
    """A zip of ``{name: bytes}`` records, opened for reading."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in records.items():
            zf.writestr(name, data)
    return io.BytesIO(buf.getvalue())


def assert_same_tensor(a, b, device=None):
    """Equal type, dtype, geometry, flag and values (nan where nan); on ``device`` if given,
    else on ``b``'s device."""
    assert type(a) is type(b) and a.dtype is b.dtype
    assert a.device == (b.device if device is None else C.device(device))
    assert a.shape == b.shape and a.stride() == b.stride()
    assert a.storage_offset() == b.storage_offset() and a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(to_np(a.detach()), to_np(b.detach()))


def make_model(device):
    """A small seeded MLP (the models of tests/data/make_torch_files.py)."""
    C.manual_seed(0)
    nn = C.nn
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)


TORCH_FILES = json.loads((DATA / "torch_files.json").read_text())["files"]


def check_described(obj, desc, storages, path):
    """Asserts ``obj`` matches the description make_torch_files.py wrote for it."""
    if "tensor" in desc:
        assert type(obj).__name__ == desc["tensor"], path
        assert obj.dtype is getattr(C, desc["dtype"]), path
        assert list(obj.shape) == desc["shape"] and list(obj.stride()) == desc["stride"], path
        assert obj.storage_offset() == desc["offset"], path
        assert obj.requires_grad == desc["requires_grad"], path
        assert obj._storage_nbytes() == desc["storage_nbytes"], path
        expected = np.array(desc["values"], dtype=np.float64).reshape(desc["shape"])
        np.testing.assert_array_equal(to_np(obj.detach()).astype(np.float64), expected)
        same = storages.setdefault(desc["storage"], obj)
        assert same._is_same_storage(obj), path
        assert all(o._is_same_storage(obj) == (g == desc["storage"]) for g, o in storages.items())
    elif "dict" in desc:
        assert type(obj).__name__ == desc["dict"], path
        assert len(obj) == len(desc["items"]), path
        for (k_desc, v_desc), (k, v) in zip(desc["items"], obj.items(), strict=True):
            check_described(k, k_desc, storages, f"{path} key")
            check_described(v, v_desc, storages, f"{path}[{k!r}]")
    elif "list" in desc or "tuple" in desc:
        kind = "list" if "list" in desc else "tuple"
        assert type(obj).__name__ == kind and len(obj) == len(desc[kind]), path
        for i, (o, d) in enumerate(zip(obj, desc[kind], strict=True)):
            check_described(o, d, storages, f"{path}[{i}]")
    elif "size" in desc:
        assert type(obj) is C.Size and list(obj) == desc["size"], path
    elif "dtype" in desc:
        assert obj is getattr(C, desc["dtype"]), path
    elif "device" in desc:
        assert obj == C.device(desc["device"]), path
    else:
        value = desc["value"]
        assert type(obj) is type(value) and (obj == value or math.isnan(value)), path
