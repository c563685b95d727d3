"""cudalite.load of files written by torch 2.11 (tests/data, made by
tests/data/make_torch_files.py with their descriptions in torch_files.json): dtypes, views,
state dicts, optimizer state, Parameters, nested containers, CUDA locations, and the files
cudalite refuses."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cudalite as C
from _serialization_helpers import (
    CUDA_UNAVAILABLE,
    DATA,
    TORCH_FILES,
    check_described,
    err,
    make_model,
    unsupported_global_msg,
)
from conftest import HAS_CUDA, to_np


@pytest.mark.parametrize("name", sorted(set(TORCH_FILES) - {"cuda_tagged"}))
def test_loads_torch_files(device, name):
    obj = C.load(DATA / f"{name}.pt", map_location=device)
    check_described(obj, TORCH_FILES[name], {}, name)
    tensors = obj.values() if isinstance(obj, dict) else [obj]
    assert all(t.device.type == device for t in tensors if isinstance(t, C.Tensor))


def test_torch_state_dict_loads_into_a_cudalitemake_model(device):
    sd = C.load(DATA / "linear_state_dict.pt", map_location=device)
    model = make_model(device)
    model.load_state_dict(sd)
    assert model[0].weight.device.type == device
    np.testing.assert_array_equal(to_np(model[2].bias.detach()), to_np(sd["2.bias"]))
    opt = C.optim.Adam(model.parameters(), lr=0.01)
    opt.load_state_dict(C.load(DATA / "adam_state_dict.pt"))
    model(C.ones(5, 3, device=device)).pow(2).sum().backward()
    opt.step()
    assert opt.state[model[0].weight]["step"].item() == 2


def test_loads_torch_files_saved_from_cuda(device):
    desc = TORCH_FILES["cuda_tagged"]
    check_described(C.load(DATA / "cuda_tagged.pt", map_location="cpu"), desc, {}, "cuda_tagged")
    check_described(C.load(DATA / "cuda_tagged.pt", map_location={"cuda:0": device}), desc, {}, "")
    if HAS_CUDA:
        assert C.load(DATA / "cuda_tagged.pt")["weight"].device == C.device("cuda", 0)
    else:
        with err(RuntimeError, CUDA_UNAVAILABLE):
            C.load(DATA / "cuda_tagged.pt")


def test_torch_untyped_storage(device):
    storage = C.load(DATA / "untyped_storage.pt", map_location=device)
    assert type(storage) is C.UntypedStorage and storage.nbytes() == 4
    assert storage.tolist() == [0, 1, 2, 3] and storage.device.type == device


def test_torch_legacy_and_whole_module_files(device):
    legacy = (
        "cudalite.load: this file is in torch's legacy format (torch < 1.6, or torch.save with "
        "_use_new_zipfile_serialization=False), which cudalite does not read. Load it in torch "
        "and save it again with torch.save's default format."
    )
    for weights_only in (True, False):
        with err(RuntimeError, legacy):
            C.load(DATA / "legacy_format.pt", weights_only=weights_only)
    with err(
        pickle.UnpicklingError, unsupported_global_msg("torch.nn.modules.container.Sequential")
    ):
        C.load(DATA / "whole_module.pt", map_location=device)
    with err(
        pickle.UnpicklingError,
        "cudalite.load: the file needs torch.nn.modules.container.Sequential, which cudalite "
        "does not provide (it reads torch's tensors, Parameters, storages, dtypes, devices and "
        "Size)",
    ):
        C.load(DATA / "whole_module.pt", weights_only=False)


@pytest.mark.parametrize(
    "dtype, name", [("complex64", "ComplexFloatStorage"), ("uint16", "uint16")]
)
def test_torch_dtypes_cudalite_lacks(device, dtype, name):
    msg = (
        f"cudalite.load: the file holds data of type torch.{name}, which cudalite does not "
        "support (cudalite's dtypes: float64, float32, float16, bfloat16, int64, int32, int16, "
        "int8, uint8, bool)"
    )
    for weights_only in (True, False):
        with err(RuntimeError, msg):
            C.load(DATA / f"{dtype}.pt", map_location=device, weights_only=weights_only)


def test_rebuild_v3_reinterprets_bytes(device):
    """torch's rebuild for tensors saved on bytes with a separate dtype."""
    from collections import OrderedDict

    from cudalite import _utils

    raw = C.tensor([0, 0, 128, 63, 0, 0, 0, 64], dtype=C.uint8, device=device).untyped_storage()
    t = _utils._rebuild_tensor_v3(raw, 1, (1,), (1,), True, OrderedDict(), C.float32)
    assert t.dtype is C.float32 and t.device == raw.device and t.requires_grad
    assert t.item() == 2.0
