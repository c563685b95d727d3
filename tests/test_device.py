"""cudalite.device: parsing, repr/str, equality, hashing, pickling and torch's error messages."""

from __future__ import annotations

import copy
import pickle
import re

import pytest

import cudalite
from cudalite import device

TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
    "mps, meta, hpu, mtia, privateuseone"
)


@pytest.mark.parametrize(
    "args, type_, index, text, rep",
    [
        (("cpu",), "cpu", None, "cpu", "device(type='cpu')"),
        (("cpu:0",), "cpu", 0, "cpu:0", "device(type='cpu', index=0)"),
        (("cpu:1",), "cpu", 1, "cpu:1", "device(type='cpu', index=1)"),
        (("cuda",), "cuda", None, "cuda", "device(type='cuda')"),
        (("cuda:0",), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
        (("cuda:1",), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
        (("cuda:12",), "cuda", 12, "cuda:12", "device(type='cuda', index=12)"),
        (("cuda", 1), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
        (("cpu", 1), "cpu", 1, "cpu:1", "device(type='cpu', index=1)"),
        ((1,), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
        ((0,), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    ],
)
def test_parse(args, type_, index, text, rep):
    d = device(*args)
    assert d.type == type_
    assert d.index == index
    assert str(d) == text
    assert repr(d) == rep


def test_keywords_and_copy_constructor():
    d = device(type="cuda", index=2)
    assert d == device("cuda:2")
    assert device(d) == d
    assert device(device("cpu")).type == "cpu"


def test_equality():
    assert device("cuda:1") == device("cuda", 1)
    assert device("cuda") != device("cuda:0")
    assert device("cpu") != device("cuda")
    assert device("cpu") != device("cpu:0")
    # A device never equals a string (torch compares types first).
    assert (device("cuda") == "cuda") is False
    assert device("cuda") != "cuda"


def test_hash():
    assert hash(device("cuda:1")) == hash(device("cuda", 1))
    table = {device("cpu"): 1, device("cuda"): 2, device("cuda:0"): 3}
    assert table[device("cpu")] == 1
    assert table[device("cuda")] == 2
    assert table[device("cuda", 0)] == 3
    assert len({device("cuda:1"), device(1), device("cuda", 1)}) == 1


@pytest.mark.parametrize("s", ["cpu", "cuda", "cuda:3", "cpu:0"])
def test_pickle_and_copy(s):
    d = device(s)
    for back in (pickle.loads(pickle.dumps(d)), copy.copy(d), copy.deepcopy(d)):
        assert back == d
        assert repr(back) == repr(d)


def test_reduce_args():
    assert device("cuda:2").__reduce__()[1] == ("cuda", 2)
    assert device("cpu").__reduce__()[1] == ("cpu",)


@pytest.mark.parametrize("s", ["gpu", "CUDA", "Cuda:0", "a:1", "_x", "tpu:0"])
def test_unknown_type(s):
    name = s.split(":")[0]
    msg = f"Expected one of {TYPES} device type at start of device string: {name}"
    with pytest.raises(RuntimeError, match=f"^{re.escape(msg)}$"):
        device(s)


@pytest.mark.parametrize(
    "s",
    ["cuda:", "cuda:-1", "cuda:1:2", "cuda:a", "cuda:01", " cuda", "cuda ", "cuda: 1",
     "cuda:0x1", "cuda:+1", "cuda_1", "cuda:1 "],
)  # fmt: skip
def test_invalid_string(s):
    with pytest.raises(RuntimeError, match=f"^{re.escape(f'Invalid device string: {s!r}')}$"):
        device(s)


def test_empty_string():
    with pytest.raises(RuntimeError, match="^Device string must not be empty$"):
        device("")


@pytest.mark.parametrize("args", [("cuda", -1), (-1,)])
def test_negative_index(args):
    with pytest.raises(RuntimeError, match="^Device index must not be negative$"):
        device(*args)


def test_index_given_twice():
    msg = "type (string) must not include an index because index was passed explicitly: cuda:1"
    with pytest.raises(RuntimeError, match=f"^{re.escape(msg)}$"):
        device("cuda:1", 2)


@pytest.mark.parametrize("bad, name", [(None, "NoneType"), (1.5, "float")])
def test_bad_argument_type(bad, name):
    msg = f"device() received an invalid combination of arguments - got ({name}), but expected"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}"):
        device(bad)


def test_bad_index_type():
    msg = "device(): argument 'index' (position 2) must be int, not str"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        device("cuda", "1")


@pytest.mark.parametrize("spec", ["cpu", "cpu:0", "cpu:1", device("cpu")])
def test_tensors_on_cpu_devices(spec):
    t = cudalite.zeros(2, device=spec)
    assert t.device == device("cpu")
    assert t.is_cpu
    assert not t.is_cuda
    assert t.get_device() == -1
