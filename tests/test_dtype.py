"""dtypes: names, aliases, properties, the default dtype and torch's promotion table."""

from __future__ import annotations

import copy
import pickle

import pytest

import cudalite

NAMES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64",
]  # fmt: skip

# torch.promote_types over every pair (rows: first operand, columns: NAMES order), printed by
# PyTorch 2.11.
_ABBR = {
    "b": "bool", "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
}  # fmt: skip
PROMOTION = {
    "bool": "b u8 i8 i16 i32 i64 f16 bf16 f32 f64",
    "uint8": "u8 u8 i16 i16 i32 i64 f16 bf16 f32 f64",
    "int8": "i8 i16 i8 i16 i32 i64 f16 bf16 f32 f64",
    "int16": "i16 i16 i16 i16 i32 i64 f16 bf16 f32 f64",
    "int32": "i32 i32 i32 i32 i32 i64 f16 bf16 f32 f64",
    "int64": "i64 i64 i64 i64 i64 i64 f16 bf16 f32 f64",
    "float16": "f16 f16 f16 f16 f16 f16 f16 f32 f32 f64",
    "bfloat16": "bf16 bf16 bf16 bf16 bf16 bf16 f32 bf16 f32 f64",
    "float32": "f32 f32 f32 f32 f32 f32 f32 f32 f32 f64",
    "float64": "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64",
}

# (itemsize, is_floating_point, is_signed) as torch reports them.
PROPS = {
    "bool": (1, False, False),
    "uint8": (1, False, False),
    "int8": (1, False, True),
    "int16": (2, False, True),
    "int32": (4, False, True),
    "int64": (8, False, True),
    "float16": (2, True, True),
    "bfloat16": (2, True, True),
    "float32": (4, True, True),
    "float64": (8, True, True),
}


def dt(name):
    return getattr(cudalite, name)


@pytest.mark.parametrize(
    "alias, name",
    [
        ("float", "float32"),
        ("double", "float64"),
        ("half", "float16"),
        ("long", "int64"),
        ("int", "int32"),
        ("short", "int16"),
    ],
)
def test_aliases_are_the_same_object(alias, name):
    assert getattr(cudalite, alias) is getattr(cudalite, name)


@pytest.mark.parametrize("name", NAMES)
def test_properties(name):
    d = dt(name)
    assert (d.itemsize, d.is_floating_point, d.is_signed) == PROPS[name]
    assert d.is_complex is False


@pytest.mark.parametrize("name", NAMES)
def test_repr_and_str(name):
    assert repr(dt(name)) == f"cudalite.{name}"
    assert str(dt(name)) == f"cudalite.{name}"


@pytest.mark.parametrize("name", NAMES)
def test_equality_hash_and_pickle(name):
    d = dt(name)
    assert d == dt(name)
    assert hash(d) == hash(dt(name))
    assert pickle.loads(pickle.dumps(d)) is d
    assert copy.deepcopy(d) is d
    others = [dt(n) for n in NAMES if n != name]
    assert all(d != o for o in others)


def test_dtype_is_a_type():
    assert isinstance(cudalite.float32, cudalite.dtype)
    assert len({dt(n) for n in NAMES}) == 10


def test_default_dtype_round_trip():
    assert cudalite.get_default_dtype() is cudalite.float32
    for name in ("float64", "float16", "bfloat16", "float32"):
        cudalite.set_default_dtype(dt(name))
        assert cudalite.get_default_dtype() is dt(name)


def test_default_dtype_governs_float_creation():
    cudalite.set_default_dtype(cudalite.float64)
    assert cudalite.tensor(1.5).dtype is cudalite.float64
    assert cudalite.tensor([1.0, 2.0]).dtype is cudalite.float64
    assert cudalite.zeros(2).dtype is cudalite.float64
    assert cudalite.arange(0.0, 1.0, 0.5).dtype is cudalite.float64
    # Integers are not affected.
    assert cudalite.tensor([1, 2]).dtype is cudalite.int64
    cudalite.set_default_dtype(cudalite.float16)
    assert cudalite.tensor(1.5).dtype is cudalite.float16
    assert (cudalite.tensor([1, 2]) / 2).dtype is cudalite.float16


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_set_default_dtype_rejects_non_float(name):
    with pytest.raises(TypeError, match="^only floating-point types are supported as the default"):
        cudalite.set_default_dtype(dt(name))
    assert cudalite.get_default_dtype() is cudalite.float32


@pytest.mark.parametrize("bad", [float, "float32", 3])
def test_set_default_dtype_rejects_non_dtype(bad):
    msg = "invalid dtype object: only floating-point types are supported as the default type"
    with pytest.raises(TypeError, match=f"^{msg}$"):
        cudalite.set_default_dtype(bad)


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_full_table(a):
    expected = [_ABBR[x] for x in PROMOTION[a].split()]
    got = [cudalite.promote_types(dt(a), dt(b))._name for b in NAMES]
    assert got == expected


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_is_symmetric(a):
    for b in NAMES:
        assert cudalite.promote_types(dt(a), dt(b)) is cudalite.promote_types(dt(b), dt(a))


def test_promote_types_accepts_python_types():
    assert cudalite.promote_types(float, cudalite.int8) is cudalite.float64
    assert cudalite.promote_types(int, cudalite.int8) is cudalite.int64
    assert cudalite.promote_types(bool, cudalite.uint8) is cudalite.uint8


def test_promote_types_errors():
    msg = r"^promote_types\(\): argument 'type2' \(position 2\) must be cudalite.dtype, not str$"
    with pytest.raises(TypeError, match=msg):
        cudalite.promote_types(cudalite.int8, "a")
    msg = r"^promote_types\(\): argument 'type1' \(position 1\) must be cudalite.dtype, not int$"
    with pytest.raises(TypeError, match=msg):
        cudalite.promote_types(3, cudalite.int8)


@pytest.mark.parametrize(
    "src, dst, ok",
    [
        ("float32", "int32", False),
        ("int32", "float32", True),
        ("int64", "int8", True),
        ("int8", "bool", False),
        ("bool", "uint8", True),
        ("float64", "float16", True),
        ("float16", "uint8", False),
    ],
)
def test_can_cast(src, dst, ok):
    # Expected values from torch.can_cast.
    assert cudalite.can_cast(dt(src), dt(dst)) is ok


@pytest.mark.parametrize("name", NAMES)
def test_tensor_dtype_helpers(name):
    t = cudalite.zeros(2, dtype=dt(name))
    assert t.dtype is dt(name)
    assert t.element_size() == PROPS[name][0]
    assert t.is_floating_point() is PROPS[name][1]
    assert cudalite.is_floating_point(t) is PROPS[name][1]


@pytest.mark.parametrize("pytype, name", [(float, "float64"), (int, "int64"), (bool, "bool")])
def test_python_types_as_dtype_arguments(pytype, name):
    assert cudalite.zeros(2, dtype=pytype).dtype is dt(name)
