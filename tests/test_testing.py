"""cudalite.testing: assert_close, assert_allclose and make_tensor, as torch.testing's.

Expected messages are what torch 2.11 gives for the same calls ("torch." written "cudalite.");
the long table of assert_close failures is in testing_expected.py.
"""

from __future__ import annotations

import functools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cudalite
import cudalite.nn
from conftest import requires_cuda
from cudalite.testing import assert_allclose, assert_close, make_tensor
from testing_expected import FAILURES

C = cudalite

PASSING = [
    "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.0, 3.0]))",
    "ac(T([1.0, 2.0]), T([1.0, 2.0 + 1e-5]))",
    "ac(T([float('nan'), 1.0]), T([float('nan'), 1.0]), equal_nan=True)",
    "ac(T(float('nan')), T(float('nan')), equal_nan=True)",
    "ac(T([float('inf'), -float('inf')]), T([float('inf'), -float('inf')]))",
    "ac(E(0), E(0))",
    "ac(E(2, 0, dtype=M.int64), E(2, 0, dtype=M.int64))",
    "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.0, 3.0], dtype=M.float64), check_dtype=False)",
    "ac(T([1, 2]), T([1.0, 2.0]), check_dtype=False)",
    "ac(T([1, 2, 3]), T([1, 2, 4]), rtol=0.5, atol=1)",
    "ac(T([True, False]), T([True, True]), rtol=0, atol=1)",
    "ac(T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 3.0], [2.0, 4.0]]).t())",
    "ac(T([1.0, 2.0], requires_grad=True), T([1.0, 2.0]))",
    "ac(Parameter(T([1.0])), T([1.0]))",
    "ac(T([1.0, 2.0]), T([1.0, 2.0]), check_layout=False)",
    "ac(T([1.0, 2.0]), T([1.0, 2.5]), msg=123, rtol=1, atol=1)",
    "ac(1.0, 1.0 + 1e-8)",
    "ac(1.0, 1, check_dtype=False)",
    "ac(float('inf'), float('inf'))",
    "ac(float('nan'), float('nan'), equal_nan=True)",
    "ac(None, None)",
    "ac(True, True)",
    "ac([True, 1], [True, 1])",
    "ac(np.bool_(True), True)",
    "ac(np.float32(1.0), 1.0)",
    "ac(np.array([1.0, 2.0]), np.array([1.0, 2.0]))",
    "ac([T([1.0]), 2.0, np.array(3.0)], (T([1.0]), 2.0, np.array(3.0)))",
    "ac({'foo': T(1.0), 'bar': 2.0}, {'bar': 2.0, 'foo': T(1.0)})",
    "ac([], ())",
    "ac({}, {})",
    "ac(M.Size([2, 3]), (2, 3))",
]


def _namespace(device):
    return {
        "M": cudalite,
        "np": np,
        "T": functools.partial(cudalite.tensor, device=device),
        "E": functools.partial(cudalite.empty, device=device),
        "ac": assert_close,
        "Parameter": cudalite.nn.Parameter,
    }


# ---- the module ----


def test_testing_loads_lazily():
    code = (
        "import sys, cudalite; assert 'cudalite.testing' not in sys.modules; "
        "cudalite.testing.assert_close(1, 1); cudalite.testing.make_tensor; "
        "from cudalite.testing import assert_allclose"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert cudalite.testing.assert_close is assert_close


# ---- assert_close ----


@pytest.mark.parametrize("code, error, message", FAILURES, ids=[c[0] for c in FAILURES])
def test_assert_close_failures_as_torch(code, error, message, device):
    with pytest.raises(error) as info:
        eval(code, _namespace(device))
    assert type(info.value) is error
    assert str(info.value) == message


@pytest.mark.parametrize("code", PASSING)
def test_assert_close_passes_as_torch(code, device):
    eval(code, _namespace(device))


@pytest.mark.parametrize(
    "dtype, inside, outside",
    [
        # (rtol, atol): float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6, 1e-5),
        # float64 (1e-7, 1e-7): the next representable numbers after 1.0 either side of it.
        ("float16", 1.0009765625, 1.001953125),
        ("bfloat16", 1.0078125, 1.0234375),
        ("float32", 1.00001, 1.00002),
        ("float64", 1.00000015, 1.00000025),
        ("int64", 1, 2),
        ("uint8", 1, 2),
    ],
)
def test_default_tolerances(dtype, inside, outside, device):
    dtype = getattr(C, dtype)
    expected = C.tensor([inside], dtype=dtype, device=device)
    assert_close(C.ones(1, dtype=dtype, device=device), expected)
    with pytest.raises(AssertionError, match="^Tensor-likes are not (close|equal)!"):
        assert_close(C.ones(1, dtype=dtype, device=device), expected * 0 + outside)


def test_mixed_dtypes_use_the_looser_tolerances(device):
    # float16's rtol 1e-3 applies to a float16 / float64 pair compared in float64.
    a = C.tensor([1.0], dtype=C.float16, device=device)
    assert_close(a, C.tensor([1.0009], dtype=C.float64, device=device), check_dtype=False)
    with pytest.raises(AssertionError, match="up to 0.001 allowed"):
        assert_close(a, C.tensor([1.002], dtype=C.float64, device=device), check_dtype=False)


def test_first_failure_of_a_sequence_is_raised_after_all_pairs_are_built(device):
    # Structure errors anywhere win over value mismatches before them, and ignore msg.
    a = [C.tensor([1.0], device=device), [1]]
    b = [C.tensor([2.0], device=device), [1, 2]]
    with pytest.raises(AssertionError) as info:
        assert_close(a, b, msg="custom")
    assert str(info.value) == (
        "The length of the sequences mismatch: 1 != 2\n\nThe failure occurred for item [1]"
    )


def test_negative_tolerance_is_torchs_runtime_error(device):
    t = C.tensor([1.0], device=device)
    with pytest.raises(RuntimeError) as info:
        assert_close(t, t, rtol=-1.0, atol=0.0)
    text = str(info.value)
    assert text.startswith("Comparing\n\nTensorLikePair(\n    id=(),\n    actual=tensor([1.]")
    assert "    rtol=-1.0,\n    atol=0.0,\n    equal_nan=False,\n    check_device=True," in text
    assert text.endswith(
        "resulted in the unexpected exception above. If you are a user and see this message "
        "during normal operation please file an issue at https://github.com/pytorch/pytorch/"
        "issues. If you are a developer and working on the comparison functions, please except "
        "the previous error and raise an expressive `ErrorMeta` instead."
    )
    assert str(info.value.__cause__) == "rtol must be greater than or equal to zero, but got -1.0"


def test_requires_grad_records_no_graph(device):
    a = C.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = C.tensor([1.0, 3.0], device=device, requires_grad=True)
    with pytest.raises(AssertionError, match="Greatest absolute difference: 1.0 at index"):
        assert_close(a, b)
    assert C.is_grad_enabled()
    assert a.grad is None and b.grad is None and a.grad_fn is None
    with C.no_grad():
        assert_close(a, a.detach().clone())


def test_msg_is_only_applied_to_comparison_failures(device):
    t = C.tensor([1.0], device=device)
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(t, t + 1, msg="custom")
    with pytest.raises(TypeError, match="^No comparison pair"):
        assert_close(t, 1.0, msg="custom")


@requires_cuda
def test_devices_must_match_unless_check_device_is_false():
    gpu = C.tensor([1.0, 2.0], device="cuda")
    cpu = C.tensor([1.0, 2.5])
    with pytest.raises(AssertionError) as info:
        assert_close(gpu, cpu.cuda().cpu())
    assert str(info.value) == "The values for attribute 'device' do not match: cuda:0 != cpu."
    with pytest.raises(AssertionError) as info:
        assert_close(cpu, gpu)
    assert str(info.value) == "The values for attribute 'device' do not match: cpu != cuda:0."
    # The shape is checked first, the dtype after the device.
    with pytest.raises(AssertionError, match="attribute 'shape'"):
        assert_close(gpu, C.tensor([1.0]))
    with pytest.raises(AssertionError, match="attribute 'device'"):
        assert_close(gpu, cpu.double())
    # check_device=False: both are compared on the CPU.
    assert_close(gpu, C.tensor([1.0, 2.0]), check_device=False)
    with pytest.raises(AssertionError) as info:
        assert_close(gpu, cpu.double(), check_device=False, check_dtype=False)
    assert str(info.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)"
    )


# ---- assert_allclose (deprecated) ----

_ALLCLOSE_WARNING = (
    "`cudalite.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
    "future release. Please use `cudalite.testing.assert_close()` instead. You can find "
    "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844."
)


def test_assert_allclose_warns_and_uses_its_own_defaults(device):
    T = functools.partial(C.tensor, device=device)
    with pytest.warns(FutureWarning) as record:
        assert_allclose(T([1.0, 2.0]), T([1.0, 2.0001]))  # float32 rtol 1e-4
    assert [str(w.message) for w in record] == [_ALLCLOSE_WARNING]
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert_allclose(T([1.0, math.nan]), T([1.0, math.nan]))  # equal_nan defaults to True
        if device == "cpu":
            assert_allclose([1.0, 2.0], T([1.0, 2.0]))
        else:  # a non-tensor becomes a CPU tensor, and devices are checked (as torch)
            with pytest.raises(AssertionError, match="'device' do not match: cpu != cuda:0"):
                assert_allclose([1.0, 2.0], T([1.0, 2.0]))
        assert_allclose(T([1, 2]), T([1.0, 2.0]))  # dtypes are promoted, not checked
        assert_allclose(T([1.0, 2.0]), T([1.0, 3.0]), rtol=0.5, atol=0)
        with pytest.raises(AssertionError) as info:
            assert_allclose(T([1.0, 2.0]), T([1.0, 2.001]))
        assert str(info.value) == (
            "Tensor-likes are not close!\n\n"
            "Mismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 0.0009999275207519531 at index (1,) "
            "(up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.000499713933095336 at index (1,) "
            "(up to 0.0001 allowed)"
        )
        # bfloat16 is not in its table: compared exactly.
        with pytest.raises(AssertionError, match="^Tensor-likes are not equal!"):
            assert_allclose(T([1.0], dtype=C.bfloat16), T([1.0078125], dtype=C.bfloat16))
        with pytest.raises(AssertionError, match="^boom$"):
            assert_allclose(T([1.0, 2.0]), T([1.0, 3.0]), msg="boom")
        with pytest.raises(ValueError, match="but got no atol"):
            assert_allclose(T([1.0]), T([1.0]), rtol=0.5)


# ---- make_tensor ----

_MAKE_TENSOR_ERRORS = [
    (
        {"noncontiguous": True, "memory_format": C.channels_last},
        "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
        "noncontiguous=True and memory_format=cudalite.channels_last",
    ),
    (
        {"dtype": C.int64, "requires_grad": True},
        "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
        "dtype=cudalite.int64",
    ),
    (
        {"dtype": C.bool, "requires_grad": True},
        "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
        "dtype=cudalite.bool",
    ),
    ({"dtype": C.int32, "low": 1, "high": 1}, "`low` must be less than `high`, but got 1 >= 1"),
    ({"low": 2, "high": 1}, "`low` must be less than `high`, but got 2 >= 1"),
    ({"low": math.nan}, "`low` and `high` cannot be NaN, but got low=nan and high=9"),
    ({"high": math.nan}, "`low` and `high` cannot be NaN, but got low=-9 and high=nan"),
    (
        {"dtype": C.uint8, "low": -5, "high": -1},
        "The value interval specified by `low` and `high` is [-5, -1), but cudalite.uint8 only "
        "supports [0, 256)",
    ),
    (
        {"dtype": C.uint8, "low": 300, "high": 400},
        "The value interval specified by `low` and `high` is [300, 400), but cudalite.uint8 "
        "only supports [0, 256)",
    ),
    (
        {"dtype": C.bool, "low": 3, "high": 5},
        "The value interval specified by `low` and `high` is [3, 5), but cudalite.bool only "
        "supports [0, 2)",
    ),
    (
        {"dtype": C.float16, "low": 1e6, "high": 1e7},
        "The value interval specified by `low` and `high` is [1000000.0, 10000000.0), but "
        "cudalite.float16 only supports [-65504.0, 65504.0)",
    ),
]


@pytest.mark.parametrize("kwargs, message", _MAKE_TENSOR_ERRORS)
def test_make_tensor_value_errors(kwargs, message, device):
    kwargs = {"dtype": C.float32, **kwargs}
    with pytest.raises(ValueError) as info:
        make_tensor((2, 3), device=device, **kwargs)
    assert str(info.value) == message


def test_make_tensor_unsupported_dtype(device):
    with pytest.raises(TypeError) as info:
        make_tensor((2,), dtype=None, device=device)
    assert str(info.value) == (
        "The requested dtype 'None' is not supported by cudalite.testing.make_tensor(). "
        "To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
    )
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'dtype'"):
        make_tensor((2,), device=device)


@pytest.mark.parametrize(
    "dtype, low, high",
    [
        ("float32", -9, 9),
        ("float64", -9, 9),
        ("float16", -9, 9),
        ("bfloat16", -9, 9),
        ("int64", -9, 9),
        ("int32", -9, 9),
        ("int16", -9, 9),
        ("int8", -9, 9),
        ("uint8", 0, 9),
        ("bool", 0, 1),
    ],
)
def test_make_tensor_default_ranges(dtype, low, high, device):
    t = make_tensor(4000, dtype=getattr(C, dtype), device=device)
    assert t.dtype == getattr(C, dtype) and t.shape == (4000,) and t.device.type == device
    assert not t.requires_grad
    values = t.double().cpu().numpy()
    assert values.min() >= low and values.max() <= high
    if "float" in dtype:  # (float16 and bfloat16 may round up to high)
        assert values.min() < low + 0.1 and values.max() > high - 0.1
        assert dtype not in ("float32", "float64") or values.max() < high
    else:  # every integer of [low, high]
        assert sorted(set(values.tolist())) == list(range(low, high + 1))


def test_make_tensor_shapes(device):
    kw = {"dtype": C.float32, "device": device}
    for shape in [(2, 3), [2, 3], C.Size([2, 3])]:
        assert make_tensor(shape, **kw).shape == (2, 3)
    assert make_tensor(2, 3, **kw).shape == (2, 3)
    assert make_tensor((), **kw).shape == ()
    assert make_tensor(**kw).shape == ()
    assert make_tensor((0, 4), **kw).shape == (0, 4)


def test_make_tensor_low_high(device):
    t = make_tensor((1000,), dtype=C.float32, device=device, low=0.5, high=0.7)
    assert 0.5 <= t.min().item() and t.max().item() < 0.7
    # Integer bounds are ceiled: [-0.5, 1.5) draws from {0, 1}.
    t = make_tensor((1000,), dtype=C.int8, device=device, low=-0.5, high=1.5)
    assert set(t.tolist()) == {0, 1}
    # Out-of-range bounds are clamped to the dtype's.
    t = make_tensor((1000,), dtype=C.float16, device=device, low=-1e6, high=1e7)
    assert t.isfinite().all() and t.min().item() < -30000 and t.max().item() > 30000
    t = make_tensor((1000,), dtype=C.float64, device=device, low=-math.inf, high=math.inf)
    assert t.isfinite().all() and t.abs().max().item() > 1e307
    t = make_tensor((100,), dtype=C.int64, device=device, low=-(2**70), high=2**70)
    assert t.abs().max().item() > 2**60
    t = make_tensor((100,), dtype=C.uint8, device=device, low=250, high=1000)
    assert set(t.tolist()) <= set(range(250, 256))


def test_make_tensor_low_equal_high_warns_for_floats(device):
    with pytest.warns(FutureWarning) as record:
        t = make_tensor((3,), dtype=C.float32, device=device, low=2, high=2)
    assert str(record[0].message) == (
        "Passing `low==high` to `cudalite.testing.make_tensor` for floating or complex types is "
        "deprecated since 2.1 and will be removed in 2.3. Use `cudalite.full(...)` instead."
    )
    assert record[0].filename == __file__
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_make_tensor_layouts(device):
    t = make_tensor((2, 3), dtype=C.float32, device=device, noncontiguous=True)
    assert t.shape == (2, 3) and t.stride() == (6, 2) and not t.is_contiguous()
    assert t.storage_offset() == 1
    t = make_tensor((1,), dtype=C.float32, device=device, noncontiguous=True)
    assert t.stride() == (1,) and t.is_contiguous()  # one element: contiguous anyway
    t = make_tensor((2, 3, 4, 5), dtype=C.float32, device=device, memory_format=C.channels_last)
    assert t.stride() == (60, 1, 15, 3)


def test_make_tensor_exclude_zero(device):
    t = make_tensor((1000,), dtype=C.int8, device=device, low=0, high=1, exclude_zero=True)
    assert t.tolist() == [1] * 1000
    t = make_tensor((100,), dtype=C.bool, device=device, low=0, high=1, exclude_zero=True)
    assert t.all()
    t = make_tensor((100,), dtype=C.float32, device=device, low=0, high=1e-30, exclude_zero=True)
    assert (t != 0).all()
    t = make_tensor((100,), dtype=C.float16, device=device, low=0, high=1e-9, exclude_zero=True)
    assert t.tolist() == [6.103515625e-05] * 100  # every value rounds to 0, then float16's tiny


def test_make_tensor_requires_grad(device):
    t = make_tensor((2,), dtype=C.float64, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    t = make_tensor((2, 3), dtype=C.float32, device=device, requires_grad=True, noncontiguous=True)
    assert t.requires_grad and t.is_leaf


def test_make_tensor_is_seeded_by_manual_seed(device):
    C.manual_seed(3)
    a = make_tensor((5,), dtype=C.float32, device=device)
    C.manual_seed(3)
    assert_close(make_tensor((5,), dtype=C.float32, device=device), a, rtol=0, atol=0)
