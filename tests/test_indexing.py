"""Indexing and assignment against NumPy, and torch's IndexError / TypeError messages.

torch applies integer indices before advanced ones (``x[1, :, [1, 3]]`` is ``x[1][:, [1, 3]]``,
shape (4, 2), where NumPy gives (2, 4)); such cases give NumPy the equivalent index.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

A = np.arange(60).reshape(3, 4, 5)


def tens(device):
    return C.arange(60, device=device).reshape(3, 4, 5)


def T(v, device="cpu", dtype=None):  # noqa: N802
    return C.tensor(v, device=device, dtype=dtype)


# (torch index, NumPy index giving the same result); None for "the same index".
BASIC = [
    (1, None),
    (-1, None),
    ((-1, -2), None),
    ((1, 2, 3), None),
    (slice(None), None),
    (slice(1, None), None),
    (slice(None, None, 2), None),
    ((slice(None, None, 2), slice(1, None, 2), slice(None, None, 3)), None),
    ((slice(5, 10),), None),
    ((slice(-10, 2),), None),
    ((slice(2, 1),), None),
    (None, None),
    ((slice(None), None, 1), None),
    ((Ellipsis, 1), None),
    ((1, Ellipsis), None),
    ((Ellipsis, None), None),
    ((None, Ellipsis, None), None),
    ((1, Ellipsis, 2), None),
    ((Ellipsis,), None),
    ((0, 1), None),
    (np.int64(1), None),
    ((Ellipsis, 1, Ellipsis), (Ellipsis, 1)),
]

ADVANCED = [
    ([0, 2], None),
    (np.array([0, 2]), None),
    (([0, 2], [1, 3]), None),
    ((slice(None), [0, 2], [1, 3]), None),
    (([0, 2], slice(None), [1, 3]), None),
    (([0, 2], 1, [1, 3]), None),
    ((1, slice(None), [1, 3]), lambda a: a[1][:, [1, 3]]),
    ((slice(None), 1, [1, 3]), None),
    (([[0], [2]], slice(None), [1, 3]), None),
    (([[0, 1], [1, 2]],), None),
    (([0, 1], [1]), None),
    (([0, 1], Ellipsis), None),
    (([-1, 0, -3],), None),
    ((slice(None), None, [3, 0]), None),
    (([0, 2], None, [1, 3]), None),
    ((slice(None, None, 2), [0, 2], slice(1, 4)), None),
    (([], ), (np.array([], dtype=np.int64),)),
    ((slice(None), [[1, 2], [0, 3]], slice(None)), None),
]  # fmt: skip


@pytest.mark.parametrize("idx, np_idx", BASIC)
def test_basic_indexing_is_a_view(idx, np_idx, device):
    x = tens(device)
    want = A[idx if np_idx is None else np_idx]
    r = x[idx]
    assert tuple(r.shape) == want.shape
    np.testing.assert_array_equal(to_np(r), want)
    # Basic indexing shares memory with the base.
    if r.numel():
        assert r.data_ptr() - r.storage_offset() * 8 == x.data_ptr()


@pytest.mark.parametrize("idx, np_idx", ADVANCED)
def test_advanced_indexing(idx, np_idx, device):
    x = tens(device)
    want = np_idx(A) if callable(np_idx) else A[idx if np_idx is None else np_idx]
    r = x[idx]
    assert tuple(r.shape) == want.shape
    np.testing.assert_array_equal(to_np(r), want)
    # Advanced indexing copies.
    if r.numel():
        r.fill_(-1)
        np.testing.assert_array_equal(to_np(x), A)


@pytest.mark.parametrize("dtype", [C.int64, C.int32, C.int16, C.int8])
def test_integer_tensor_indices(dtype, device):
    x = tens(device)
    for idx in ([0, 2], [[0, 1], [1, 2]], [2, -1]):
        want = A[np.array(idx)]
        np.testing.assert_array_equal(to_np(x[T(idx, device, dtype)]), want)
    np.testing.assert_array_equal(to_np(x[T(1, device)]), A[1])
    np.testing.assert_array_equal(to_np(x[:, T([3, 0], device, dtype), 1]), A[:, [3, 0], 1])


@pytest.mark.parametrize(
    "make_mask",
    [
        lambda a: a > 30,
        lambda a: a[:, :, 0] > 20,
        lambda a: np.array([True, False, True]),
        lambda a: a > 100,
        lambda a: np.zeros((3, 4), dtype=bool),
    ],
)
def test_bool_masks(make_mask, device):
    x = tens(device)
    m = make_mask(A)
    want = A[m]
    r = x[T(m.tolist(), device, C.bool)]
    assert tuple(r.shape) == want.shape
    np.testing.assert_array_equal(to_np(r), want)
    # uint8 masks act like bool masks; a list of bools too.
    if m.ndim == 1:
        np.testing.assert_array_equal(to_np(x[m.tolist()]), want)


def test_mask_in_later_dims(device):
    x = tens(device)
    m = np.array([True, False, True, False])
    np.testing.assert_array_equal(to_np(x[:, T(m, device)]), A[:, m])
    np.testing.assert_array_equal(to_np(x[1, T(m, device)]), A[1, m])
    np.testing.assert_array_equal(to_np(x[:, T(m, device), 2]), A[:, m, 2])


def test_bool_scalars_and_zero_dim_masks(device):
    x = tens(device)
    for idx, want in [
        (True, A[None]),
        (False, A[None][:0]),
        (T(True, device), A[None]),
        (T(False, device), A[None][:0]),
        ((None, Ellipsis, None), A[None, ..., None]),
    ]:
        r = x[idx]
        assert tuple(r.shape) == want.shape
        np.testing.assert_array_equal(to_np(r), want)


def test_zero_dim_tensor(device):
    s = C.tensor(3.5, device=device)
    assert s[...].shape == ()
    assert s[None].shape == (1,)
    assert s[...].item() == 3.5
    assert s[T(True, device)].shape == (1,)


def test_non_contiguous_source(device):
    x = tens(device).transpose(0, 2)[::2]
    a = A.transpose(2, 1, 0)[::2]
    np.testing.assert_array_equal(to_np(x[[0, 2], 1:]), a[[0, 2], 1:])
    np.testing.assert_array_equal(to_np(x[x > 30]), a[a > 30])
    np.testing.assert_array_equal(to_np(x[..., [1, 0]]), a[..., [1, 0]])


# ---- assignment ----


SETS = [
    (0, 1),
    ((slice(None), 1), [5.0, 6.0, 7.0, 8.0, 9.0]),
    ((slice(1, None), slice(2, None)), [[1.0, 2.0, 3.0, 4.0, 5.0]]),
    (([0, 2], [3, 3]), 9),
    ((Ellipsis, 0), "arange"),
    (([0, 2], slice(None), [1, 3]), [[1.0], [2.0]]),
    (([0, 1],), [[[7.0]]]),
    ((slice(None), [0, 0]), 4.0),
    ((None, 1), 2.5),
    ((Ellipsis,), 3),
    ((slice(None, None, 2), slice(None, None, 3)), -1.5),
]  # fmt: skip


@pytest.mark.parametrize("idx, value", SETS)
def test_setitem_vs_numpy(idx, value, device):
    x = C.zeros(3, 4, 5, device=device)
    a = np.zeros((3, 4, 5), dtype=np.float32)
    target = a[idx]
    if isinstance(value, str):
        v = np.arange(target.shape[-1], dtype=np.float32)
        x[idx] = C.arange(target.shape[-1], device=device)
    elif isinstance(value, list):
        v = np.array(value, dtype=np.float32)
        x[idx] = T(value, device)
    else:
        v = value
        x[idx] = value
    a[idx] = v
    np.testing.assert_array_equal(to_np(x), a)


def test_setitem_mask(device):
    x = tens(device).float()
    a = A.astype(np.float32)
    x[x > 30] = -1
    a[a > 30] = -1
    np.testing.assert_array_equal(to_np(x), a)
    x[T([True, False, True], device)] = T([[1.0, 2.0, 3.0, 4.0, 5.0]], device)
    a[[True, False, True]] = [1.0, 2.0, 3.0, 4.0, 5.0]
    np.testing.assert_array_equal(to_np(x), a)
    x[x < 0] = T([5.0], device)
    a[a < 0] = 5.0
    np.testing.assert_array_equal(to_np(x), a)


def test_setitem_casts_scalars_and_tensors(device):
    y = C.zeros(4, dtype=C.int32, device=device)
    y[0] = 2.7
    y[1] = True
    y[2] = T(5.5, device)
    y[3] = np.int64(4)
    np.testing.assert_array_equal(to_np(y), np.array([2.7, True, 5.5, 4]).astype(np.int32))
    z = C.zeros(2, 2, device=device)
    z[1] = T([1, 2], device)
    z[0] = np.float64(2.5)
    np.testing.assert_array_equal(to_np(z), np.array([[2.5, 2.5], [1, 2]], dtype=np.float32))
    b = C.zeros(3, dtype=C.bool, device=device)
    b[1] = 5
    assert b.tolist() == [False, True, False]


def test_setitem_leading_ones_dropped(device):
    x = C.zeros(3, 4, device=device)
    x[0] = C.ones(1, 1, 4, device=device)
    x[1, 1] = T([7.0], device)
    x[[2]] = C.full((1, 1, 4), 3.0, device=device)
    want = np.zeros((3, 4), dtype=np.float32)
    want[0], want[1, 1], want[2] = 1, 7, 3
    np.testing.assert_array_equal(to_np(x), want)


def test_setitem_broadcast_value(device):
    x = C.zeros(3, 4, device=device)
    x[[0, 1]] = C.ones(2, 1, device=device)
    x[:, 2:] = T([[5.0], [6.0], [7.0]], device)
    a = np.zeros((3, 4), dtype=np.float32)
    a[[0, 1]] = 1
    a[:, 2:] = [[5.0], [6.0], [7.0]]
    np.testing.assert_array_equal(to_np(x), a)


def test_setitem_on_view_writes_base(device):
    x = C.zeros(4, 4, device=device)
    v = x.t()[1:]
    v[0] = 1
    v[[1], [2]] = 2
    a = np.zeros((4, 4), dtype=np.float32)
    av = a.T[1:]
    av[0] = 1
    av[[1], [2]] = 2
    np.testing.assert_array_equal(to_np(x), a)


def test_setitem_zero_dim(device):
    s = C.tensor(1.0, device=device)
    s[...] = 5
    assert s.item() == 5.0
    s[None] = 6
    assert s.item() == 6.0


# ---- errors ----


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


@pytest.mark.parametrize(
    "idx, msg",
    [
        (3, "index 3 is out of bounds for dimension 0 with size 3"),
        (-4, "index -4 is out of bounds for dimension 0 with size 3"),
        ((0, 0, 5), "index 5 is out of bounds for dimension 2 with size 5"),
        ((None, 1, 7), "index 7 is out of bounds for dimension 2 with size 4"),
        ((Ellipsis, 9), "index 9 is out of bounds for dimension 1 with size 5"),
        ((1, Ellipsis, 9), "index 9 is out of bounds for dimension 2 with size 5"),
        ((True, 5), "index 5 is out of bounds for dimension 1 with size 3"),
        ([0, 3], "index 3 is out of bounds for dimension 0 with size 3"),
        ((1, slice(None), [1, 5]), "index 5 is out of bounds for dimension 0 with size 5"),
        ((0, [0, 1], [0, 7]), "index 7 is out of bounds for dimension 1 with size 5"),
        (([0, 5], 0, [0, 4]), "index 5 is out of bounds for dimension 0 with size 3"),
        ((1, 2, 3, 4), "too many indices for tensor of dimension 3"),
        (1.5, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got float)"),
        (([0, 1], [0, 1, 2]), "shape mismatch: indexing tensors could not be broadcast together "
                              "with shapes [2], [3]"),
    ],
)  # fmt: skip
def test_index_errors(idx, msg, device):
    x = tens(device)
    with err(IndexError, msg):
        x[idx]
    with err(IndexError, msg):
        x[idx] = 0


def test_index_tensor_errors(device):
    x = tens(device)
    with err(IndexError, "index -4 is out of bounds for dimension 0 with size 3"):
        x[T([0, -4], device)]
    with err(IndexError, "index 9 is out of bounds for dimension 0 with size 5"):
        x[:, :, T([0, 9], device)]
    with err(IndexError, "tensors used as indices must be long, int, byte or bool tensors"):
        x[T([1.5], device)]
    msg = (
        "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
        "[3, 4, 5] at index 0"
    )
    with err(IndexError, msg):
        x[T([True, False], device)]
    msg = (
        "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
        "[3, 4, 5] at index 1"
    )
    with err(IndexError, msg):
        x[:, T([True, False, True], device)]
    with err(IndexError, "too many indices for tensor of dimension 3"):
        x[x > 20, 9]


def test_zero_dim_index_error():
    msg = (
        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
        "C++ to convert a 0-dim tensor to a number"
    )
    with err(IndexError, msg):
        C.tensor(3)[0]
    with err(IndexError, msg):
        C.tensor(3)[0] = 1


def test_slice_step_errors():
    x = tens("cpu")
    with err(ValueError, "slice step cannot be zero"):
        x[::0]
    with err(ValueError, "step must be greater than zero"):
        x[::-1]
    with err(TypeError, "new(): invalid data type 'str'"):
        x["a"]


@pytest.mark.parametrize(
    "value, name",
    [
        ((1, 2, 3, 4, 5), "tuple"),
        ([1, 2, 3, 4, 5], "list"),
        (None, "NoneType"),
        (np.array(3.5), "numpy.ndarray"),
        (np.float32(1.0), "numpy.float32"),
    ],
)
def test_assign_wrong_type(value, name):
    x = C.zeros(3, 5)
    with err(TypeError, f"can't assign a {name} to a cudalite.FloatTensor"):
        x[0] = value
    with err(TypeError, f"can't assign a {name} to a cudalite.FloatTensor"):
        x[[0]] = value


def test_assign_errors(device):
    x = C.zeros(3, 4, device=device)
    msg = (
        "Index put requires the source and destination dtypes match, got Float for the "
        "destination and Double for the source."
    )
    with err(RuntimeError, msg):
        x[[0, 1]] = C.ones(4, dtype=C.float64, device=device)
    with err(RuntimeError, "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to "
             "indexing result of shape [2, 4]"):  # fmt: skip
        x[[0, 1]] = C.ones(1, 3, 4, device=device)
    with err(RuntimeError, "shape mismatch: value tensor of shape [2, 2, 4] cannot be broadcast "
             "to indexing result of shape [2, 4]"):  # fmt: skip
        x[[0, 1]] = C.ones(2, 2, 4, device=device)
    with pytest.raises(RuntimeError, match=re.escape("The expanded size of the tensor (4) must")):
        x[0] = T([1.0, 2.0], device)
    with err(RuntimeError, "value cannot be converted to type int64_t without overflow"):
        C.zeros(3, dtype=C.int64, device=device)[[0]] = 1e20
    with err(IndexError, "index 5 is out of bounds for dimension 0 with size 3"):
        x[[0, 5]] = 1


# ---- the order of torch's checks, and assignment's conversions (found by
# tests/fuzz_views_vs_torch.py) ----


def test_slice_steps_are_checked_in_torchs_order(device):
    x = tens(device)
    with err(ValueError, "step must be greater than zero"):
        C.tensor(4.0, device=device)[::-1]  # before the 0-dim tensor's own error
    with err(ValueError, "slice step cannot be zero"):
        x[T([True, False, True, True], device), ::0]  # before the mask's shape
    with err(IndexError, "too many indices for tensor of dimension 0"):
        C.tensor(4.0, device=device)[(slice(None, None, -1),)]  # a tuple's length comes first
    with err(IndexError, "index 5 is out of bounds for dimension 0 with size 3"):
        x[5, ::-1]  # an integer to its left is applied first


def test_indices_are_not_checked_when_the_result_is_empty(device):
    x = tens(device)
    assert x[T([7], device), 0:0].shape == (1, 0, 5)
    assert x[0:0, T([9], device)].shape == (0, 1, 5)
    assert x[T([], device, C.int64), T([9], device)].shape == (0, 5)


def test_an_index_into_a_dim_of_size_0_is_checked_even_when_the_result_is_empty(device):
    y = C.zeros(0, 2, 3, device=device)
    msg = "index is out of bounds for dimension with size 0"
    with err(IndexError, msg):
        y[T([0, 0], device), 3:, -2]
    with err(IndexError, msg):
        y[T([0, 0], device), 3:, -2] = 7
    with err(IndexError, msg):
        C.zeros(2, 0, device=device)[0:0, T([0], device)]
    assert y[:, T([1], device)].shape == (0, 1, 3)  # the indexed dim has size 2


def test_several_ellipses_move_the_dim_counter_as_torch(device):
    x = C.zeros(4, 6, 4, 5, device=device)
    assert x[..., ...].shape == (4, 6, 4, 5)
    assert x[0, ..., ...].shape == (6, 4, 5)
    assert x[..., None, ...].shape == (4, 6, 4, 5, 1)
    assert x[1, 2, 3, ..., ..., 4].shape == ()  # nothing left for them to stand for
    out_of_range = "Dimension out of range (expected to be in range of [-4, 3], but got 6)"
    with err(IndexError, out_of_range):
        x[..., ..., 1]
    with err(IndexError, out_of_range):
        x[..., ..., 1:2]
    with err(IndexError, "Dimension out of range (expected to be in range of [-5, 4], but got 8)"):
        x[..., ..., None]
    with err(IndexError, "too many indices for tensor of dimension 4 (got 7)"):
        x[..., ..., T([0], device)]
    with err(IndexError, out_of_range):
        x[..., ..., 1] = 1.0


def test_assignment_converts_the_number_before_it_indexes(device):
    u = C.zeros(3, dtype=C.uint8, device=device)
    with err(RuntimeError, "value cannot be converted to type uint8_t without overflow"):
        u[0, 0] = 300  # not "too many indices"
    with err(RuntimeError, "value cannot be converted to type uint8_t without overflow"):
        u[T([0], device)] = -1.5
    assert u.tolist() == [0, 0, 0]


def test_mask_assignment_of_a_zero_dim_tensor_converts_it(device):
    # x[mask] = 0-dim tensor is torch's masked_fill_: any dtype; other indices need x's dtype.
    x = C.zeros(2, 3, device=device)
    m = T([True, False, True], device)
    x[0, m] = T(5, device)
    x[T([False, True], device)] = T(2.5, device, C.float64)
    assert x.tolist() == [[5.0, 0.0, 5.0], [2.5, 2.5, 2.5]]
    i = C.zeros(3, dtype=C.int64, device=device)
    i[m] = T(2.5)
    assert i.tolist() == [2, 0, 2]
    with err(RuntimeError, "value cannot be converted to type int64_t without overflow"):
        i[m] = T(float("nan"))
    msg = (
        "Index put requires the source and destination dtypes match, got Float for the "
        "destination and Long for the source."
    )
    with err(RuntimeError, msg):
        x[0, m] = T([5, 6], device)
    with err(RuntimeError, msg):
        x[T([0], device)] = T(5, device)
    with err(
        RuntimeError, msg.replace("Float", "Long", 1).replace("Long for the s", "Float for the s")
    ):
        i.index_put_((T([0], device),), T([1.5], device))
    assert i.tolist() == [2, 0, 2]


def test_index_select_errors_and_zero_dim(device):
    x = tens(device)
    with err(IndexError, "index out of range in self"):
        x.index_select(0, T([-1], device))  # no negative indices, unlike indexing
    with err(IndexError, "index out of range in self"):
        x.index_select(2, T([5], device))
    with err(RuntimeError, "INDICES element is out of DATA bounds, id=4 axis_dim=4"):
        x.index_select(1, T([0, 4], device))
    if device == "cuda":  # torch's CUDA kernel
        with err(RuntimeError, "Index is supposed to be an empty tensor or a vector"):
            x.index_select(0, T([[0]], device))
    else:
        with err(IndexError, "index_select(): Index is supposed to be a vector"):
            x.index_select(0, T([[0]], device))
    with err(RuntimeError, "index_select(): Expected dtype int32 or int64 for index"):
        x.index_select(0, T([0.0], device))
    s = C.tensor(5.0, device=device)
    assert (
        s.index_select(0, T([0], device)).shape == ()
        and s.index_select(-1, T(0, device)).item() == 5.0
    )
    with err(RuntimeError, "index_select(): Index to scalar can have only 1 value, got 2 value(s)"):
        s.index_select(0, T([0, 0], device))
    with err(IndexError, "index out of range in self"):
        s.index_select(0, T([1], device))
    # A dim of size 0 takes an empty index only (torch checks this before the bounds).
    e = C.zeros(0, 3, device=device)
    assert e.index_select(0, T([], device).long()).shape == (0, 3)
    assert e.index_select(1, T([0], device)).shape == (0, 1)
    for idx in ([0], [-1]):
        with err(RuntimeError, "index_select(): self indexing axis dim should be positive"):
            e.index_select(0, T(idx, device))
    with err(IndexError, "index out of range in self"):  # one dim: torch checks the indices
        C.zeros(0, device=device).index_select(-1, T([0, 0, 0], device))


# Ints and slices are indexed in C++ (Note [Basic indexing in C++]); everything else, and
# every error, goes to the general path: both must agree.
FAST_OR_NOT = [
    0,
    -1,
    2,
    slice(1, None),
    slice(None, None, 2),
    slice(-2, 100),
    slice(5, 9),
    (1, 2),
    (0, slice(1, 3)),
    (slice(None), 0, -1),
    (2, 3, 4),
    (),
    (None, 0),
    (Ellipsis, 1),
    True,
    [0, 2],
    (0, [1, 2]),
    np.int64(1),
]


@pytest.mark.parametrize("idx", FAST_OR_NOT, ids=repr)
def test_basic_index_in_cpp_matches_general_path(idx, device):
    from cudalite import _indexing

    x = tens(device)
    got, want = x[idx], _indexing.getitem(x, idx)
    assert got.shape == want.shape and got.stride() == want.stride()
    np.testing.assert_array_equal(to_np(got), to_np(want))
    advanced = isinstance(idx, (list, bool)) or (
        isinstance(idx, tuple) and any(isinstance(i, list) for i in idx)
    )
    if not advanced:
        assert got._is_same_storage(x)  # a view


def test_basic_index_errors_and_fallbacks(device):
    x = tens(device)
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 4"):
        x[0, 5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        x[0, 0, 0][0]
    assert x[T(1, device) : T(3, device)].shape == (2, 4, 5)  # bounds through __index__
    with pytest.raises(TypeError):
        x[T(1.5, device) :]
    w = C.ones(3, 2, device=device, requires_grad=True)
    (w[1] * 2).sum().backward()  # recorded: a tensor that requires grad takes the general path
    np.testing.assert_array_equal(to_np(w.grad), [[0, 0], [2, 2], [0, 0]])
