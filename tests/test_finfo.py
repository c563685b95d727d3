"""cudalite.finfo / cudalite.iinfo: values, printed form and errors as torch 2.11's
(expected texts produced by torch, with "torch" read as "cudalite")."""

import pytest

import cudalite

FINFO = {
    cudalite.float16: (
        "finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, "
        "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)",
        (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
    ),
    cudalite.bfloat16: (
        "finfo(resolution=0.01, min=-3.38953e+38, max=3.38953e+38, eps=0.0078125, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=bfloat16)",
        (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
    ),
    cudalite.float32: (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)",
        (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
    ),
    cudalite.float64: (
        "finfo(resolution=1e-15, min=-1.79769e+308, max=1.79769e+308, eps=2.22045e-16, "
        "smallest_normal=2.22507e-308, tiny=2.22507e-308, dtype=float64)",
        (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
    ),
}


@pytest.mark.parametrize("dtype", list(FINFO))
def test_finfo_values_and_repr(dtype):
    text, (bits, eps, mx, tiny, res) = FINFO[dtype]
    f = cudalite.finfo(dtype)
    assert repr(f) == str(f) == text
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution) == (
        bits,
        eps,
        mx,
        -mx,
        tiny,
        tiny,
        res,
    )
    assert f.dtype == str(dtype).split(".")[-1] and isinstance(f.dtype, str)
    assert cudalite.finfo(type=dtype) == f


def test_finfo_values_are_the_dtypes_own():
    # eps is the gap above 1, max the largest finite value, tiny the smallest normal.
    for dtype in FINFO:
        f = cudalite.finfo(dtype)
        one = cudalite.tensor([1.0], dtype=dtype)
        assert (one + f.eps).item() > 1.0 and (one + f.eps / 2).item() == 1.0
        assert cudalite.tensor([f.max], dtype=dtype).item() == f.max
        assert cudalite.tensor([f.tiny], dtype=dtype).item() == f.tiny


def test_finfo_defaults_to_the_default_dtype():
    assert cudalite.finfo() == cudalite.finfo(cudalite.float32)
    old = cudalite.get_default_dtype()
    cudalite.set_default_dtype(cudalite.float64)
    try:
        assert cudalite.finfo().dtype == "float64"
    finally:
        cudalite.set_default_dtype(old)


def test_iinfo_values_and_repr():
    expected = {
        cudalite.uint8: ("iinfo(min=0, max=255, dtype=uint8)", 8, 0, 255),
        cudalite.int8: ("iinfo(min=-128, max=127, dtype=int8)", 8, -128, 127),
        cudalite.int16: ("iinfo(min=-32768, max=32767, dtype=int16)", 16, -32768, 32767),
        cudalite.int32: (
            "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)",
            32,
            -(2**31),
            2**31 - 1,
        ),
        cudalite.int64: (
            "iinfo(min=-9.22337e+18, max=9.22337e+18, dtype=int64)",
            64,
            -(2**63),
            2**63 - 1,
        ),
    }
    for dtype, (text, bits, lo, hi) in expected.items():
        i = cudalite.iinfo(dtype)
        assert repr(i) == text
        assert (i.bits, i.min, i.max, i.dtype) == (bits, lo, hi, str(dtype).split(".")[-1])
        assert cudalite.iinfo(type=dtype) == i


def test_equality_and_hashing():
    assert cudalite.finfo(cudalite.float32) == cudalite.finfo(cudalite.float32)
    assert cudalite.finfo(cudalite.float32) != cudalite.finfo(cudalite.float64)
    assert cudalite.iinfo(cudalite.int8) != cudalite.iinfo(cudalite.uint8)
    with pytest.raises(TypeError, match="unhashable type"):
        hash(cudalite.finfo(cudalite.float32))
    assert repr(cudalite.finfo) == "<class 'cudalite.finfo'>"


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: cudalite.finfo(cudalite.int32),
            "cudalite.finfo() requires a floating point input type. Use cudalite.iinfo to "
            "handle 'cudalite.finfo'",
        ),
        (
            lambda: cudalite.iinfo(cudalite.float32),
            "cudalite.iinfo() requires an integer input type. Use cudalite.finfo to handle "
            "'cudalite.iinfo'",
        ),
        (
            lambda: cudalite.iinfo(cudalite.bfloat16),
            "cudalite.iinfo() requires an integer input type. Use cudalite.finfo to handle "
            "'cudalite.iinfo'",
        ),
        (lambda: cudalite.iinfo(cudalite.bool), "cudalite.bool is not supported by cudalite.iinfo"),
        (
            lambda: cudalite.finfo("float32"),
            "finfo(): argument 'type' (position 1) must be cudalite.dtype, not str",
        ),
        (
            lambda: cudalite.finfo(3),
            "finfo(): argument 'type' (position 1) must be cudalite.dtype, not int",
        ),
        (
            lambda: cudalite.iinfo("int8"),
            "iinfo(): argument 'type' (position 1) must be cudalite.dtype, not str",
        ),
        (
            lambda: cudalite.finfo(dtype=cudalite.float32),
            'finfo() missing 1 required positional arguments: "type"',
        ),
        (lambda: cudalite.iinfo(), 'iinfo() missing 1 required positional arguments: "type"'),
        (
            lambda: cudalite.iinfo(cudalite.int8, 1),
            "iinfo() takes 1 positional argument but 2 were given",
        ),
        (
            lambda: cudalite.finfo(cudalite.float32, 1),
            "finfo() received an invalid combination of arguments - got (cudalite.dtype, int), "
            "but expected one of:\n * (cudalite.dtype type)\n * ()\n",
        ),
    ],
)
def test_errors_match_torch(call, message):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == message
