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


# Every type torch's parser accepts, with the number torch's DeviceType gives it.
OTHER_TYPES = {
    "mkldnn": 2,
    "opengl": 3,
    "opencl": 4,
    "ideep": 5,
    "hip": 6,
    "fpga": 7,
    "maia": 8,
    "xla": 9,
    "vulkan": 10,
    "xpu": 12,
    "mps": 13,
    "meta": 14,
    "hpu": 15,
    "ve": 16,
    "lazy": 17,
    "ipu": 18,
    "mtia": 19,
    "privateuseone": 20,
}


def _quiet(fn):
    """Calls fn with the deprecation warning torch gives for "mkldnn" allowed."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "'mkldnn' is no longer used", UserWarning)
        return fn()


def test_every_parsed_type_is_listed():
    assert sorted(TYPES.split(", ")) == sorted(["cpu", "cuda", *OTHER_TYPES])


@pytest.mark.parametrize("name", sorted(OTHER_TYPES))
def test_other_types_parse(name):
    d = _quiet(lambda: device(name))
    assert (d.type, d.index, str(d), repr(d)) == (name, None, name, f"device(type='{name}')")
    d3 = _quiet(lambda: device(f"{name}:3"))
    assert (d3.type, d3.index, str(d3)) == (name, 3, f"{name}:3")
    assert repr(d3) == f"device(type='{name}', index=3)"
    assert _quiet(lambda: device(name, 3)) == d3
    assert d != d3
    assert d != device("cpu") and d != device("cuda")
    assert hash(_quiet(lambda: device(name))) == hash(d)
    assert len({d, d3, device("cpu"), device("cuda"), device("cuda:3")}) == 5


@pytest.mark.parametrize("name", ["mps", "meta", "xpu", "privateuseone"])
def test_other_types_pickle(name):
    d = device(f"{name}:1")
    assert pickle.loads(pickle.dumps(d)) == d
    assert copy.deepcopy(device(name)) == device(name)


def test_mkldnn_is_deprecated():
    with pytest.warns(UserWarning, match="^'mkldnn' is no longer used as device type"):
        device("mkldnn")


@pytest.mark.parametrize("name", ["mps", "meta", "hpu", "privateuseone", "xla", "vulkan"])
@pytest.mark.parametrize(
    "make",
    [
        lambda d: cudalite.zeros(2, device=d),
        lambda d: cudalite.empty(2, device=d),
        lambda d: cudalite.randn(2, device=d),
        lambda d: cudalite.tensor([1.0, 2.0], device=d),
        lambda d: cudalite.ones(2).to(d),
        lambda d: cudalite.ones(2).to(device=cudalite.device(d)),
    ],
)
def test_tensors_on_other_types_are_refused(name, make):
    msg = f"cudalite is not linked with support for {name} devices"
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        make(name)
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        make(f"{name}:0")


@pytest.mark.parametrize("name, text", [("xpu", "XPU"), ("mtia", "MTIA")])
def test_tensors_on_xpu_and_mtia_are_refused(name, text):
    # torch raises AssertionError("Torch not compiled with XPU enabled") for these.
    with pytest.raises(AssertionError, match=f"^cudalite not compiled with {text} enabled$"):
        cudalite.zeros(2, device=name)
    with pytest.raises(AssertionError, match=f"^cudalite not compiled with {text} enabled$"):
        cudalite.ones(2).to(name)


@pytest.mark.parametrize(
    "s", ["cuda:32768", "cuda:65536", "cuda:99999", "mps:65536", "cpu:123456", "cuda:99999999999"]
)
def test_index_too_large_in_string(s):
    # torch truncates such indices to its 8-bit DeviceIndex; cudalite refuses them with the
    # message torch gives for an index it cannot parse.
    idx = s.split(":")[1]
    msg = f"Could not parse device index '{idx}' in device string '{s}'"
    with pytest.raises(RuntimeError, match=f"^{re.escape(msg)}$"):
        device(s)


@pytest.mark.parametrize("args", [("cuda", 65536), ("cuda", 32768), (65536,), ("mps", 2**40)])
def test_index_too_large(args):
    msg = f"Device index must not exceed 32767, got {args[-1]}"
    with pytest.raises(RuntimeError, match=f"^{re.escape(msg)}$"):
        device(*args)


@pytest.mark.parametrize("args", [("cuda", 2**63), (2**64,)])
def test_index_overflow(args):
    with pytest.raises(ValueError, match="^Overflow when unpacking long long$"):
        device(*args)


def test_largest_index():
    assert device("cuda:32767").index == 32767
    assert device("cuda", 32767) == device("cuda:32767")
    assert device(32767).index == 32767
