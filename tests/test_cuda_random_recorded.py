"""cudalite's CUDA randperm, multinomial, dropout and tensor-argument normal against the values
torch drew on a GPU (tests/data/cuda_random_torch.json, written by gen_cuda_random_torch.py on
the GPU machine): bit for bit, with the generator's state after each case, where this GPU is
the model they were recorded on (torch's launch shapes, and so its numbers, depend on it).
Cases missing from the file are skipped."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

import cudalite as C
from conftest import HAS_CUDA
from cuda_random_torch_cases import CASES, canonical_bytes, head, state_after

_PATH = os.path.join(os.path.dirname(__file__), "data", "cuda_random_torch.json")


def _load():
    if not os.path.exists(_PATH):
        return None
    with open(_PATH) as f:
        return json.load(f)


REF = _load()


def _same_gpu_model():
    props = C.cuda.get_device_properties(0)
    gpu = REF["gpu"]
    return (
        props.name == gpu["name"]
        and props.multi_processor_count == gpu["multi_processor_count"]
        and props.max_threads_per_multi_processor == gpu["max_threads_per_multi_processor"]
    )


pytestmark = [
    pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible"),
    pytest.mark.skipif(REF is None, reason="no recorded CUDA values (gen_cuda_random_torch.py)"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_draws_as_torch_on_this_gpu_model(name):
    if not _same_gpu_model():
        pytest.skip(f"values recorded on {REF['gpu']['name']}")
    ref = REF["cases"].get(name)
    if ref is None:
        pytest.skip("case not recorded")
    value = CASES[name](C)
    assert str(value.dtype).removeprefix("cudalite.") == ref["dtype"]
    assert list(value.shape) == ref["shape"]
    assert head(value) == ref["head"]
    assert hashlib.sha256(canonical_bytes(value)).hexdigest() == ref["sha256"]
    assert state_after(C) == ref["state"], "the Philox offset advanced differently"
