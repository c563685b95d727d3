"""torch's safety checks around autograd state: the legacy ``Variable`` constructor,
assigning ``.grad``, reading a non-leaf's ``.grad`` and ``detach_()`` of a view (messages
checked against torch 2.11)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cudalite
from conftest import HAS_CUDA, to_np
from cudalite.autograd import Variable


def leaf(values, dtype=cudalite.float32):
    return cudalite.tensor(values, dtype=dtype, requires_grad=True)


# ---- Variable ----


def test_variable_returns_a_new_leaf_sharing_memory():
    t = cudalite.ones(3)
    v = Variable(t, requires_grad=True)
    assert v is not t and type(v) is cudalite.Tensor and isinstance(t, Variable)
    assert v.requires_grad and v.is_leaf and not t.requires_grad  # t is left alone
    assert v.data_ptr() == t.data_ptr()
    v.detach().add_(1)
    np.testing.assert_allclose(to_np(t), [2.0, 2.0, 2.0])
    plain = Variable(t)
    assert plain is not t and not plain.requires_grad and plain._is_same_storage(t)
    assert Variable(t, True).requires_grad and Variable(t, requires_grad=3).requires_grad


def test_variable_detaches_its_input():
    x = leaf([1.0, 2.0])
    y = Variable(x * 2)
    assert y.grad_fn is None and y.is_leaf and not y.requires_grad
    z = Variable(x)
    assert z is not x and not z.requires_grad and x.requires_grad
    p = Variable(cudalite.nn.Parameter(cudalite.ones(2)), requires_grad=True)
    assert type(p) is cudalite.Tensor and p.requires_grad
    with cudalite.no_grad():
        assert Variable(cudalite.ones(1), requires_grad=True).requires_grad


def test_variable_without_data_is_empty():
    for v in (Variable(), Variable(None)):
        assert v.shape == (0,) and v.dtype == cudalite.float32 and not v.requires_grad


def test_variable_volatile_warns():
    with pytest.warns(UserWarning) as rec:
        v = Variable(cudalite.ones(2), volatile=True)
    assert str(rec[0].message) == (
        "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."
    )
    assert rec[0].filename == __file__ and not v.requires_grad
    with pytest.warns(UserWarning, match="volatile was removed"):
        with pytest.raises(ValueError) as e:
            Variable(cudalite.ones(2), requires_grad=True, volatile=True)
    assert str(e.value) == "Variable can't be volatile and require_grad at the same time!"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Variable(cudalite.ones(2), volatile=False)


@pytest.mark.parametrize(
    "args, kwargs, exc, msg",
    [
        ((3,), {}, TypeError, "Variable data has to be a tensor, but got int"),
        (([1.0],), {}, TypeError, "Variable data has to be a tensor, but got list"),
        ((np.ones(2),), {}, TypeError, "Variable data has to be a tensor, but got numpy.ndarray"),
        (
            (cudalite.ones(2, dtype=cudalite.int64),),
            {"requires_grad": True},
            RuntimeError,
            "Only Tensors of floating point and complex dtype can require gradients",
        ),
        (
            (cudalite.ones(2),),
            {"requires_grad": None},
            TypeError,
            "'NoneType' object cannot be interpreted as an integer",
        ),
        (
            (cudalite.ones(2),),
            {"requires_grad": 0.5},
            TypeError,
            "'float' object cannot be interpreted as an integer",
        ),
        (
            (cudalite.ones(2),),
            {"requires_grad": 300},
            OverflowError,
            "unsigned byte integer is greater than maximum",
        ),
        (
            (cudalite.ones(2),),
            {"requires_grad": -1},
            OverflowError,
            "unsigned byte integer is less than minimum",
        ),
        (
            (cudalite.ones(2),),
            {"_grad_fn": 3},
            TypeError,
            "_grad_fn has to be a Function object or None, but got int",
        ),
        ((cudalite.ones(2),), {"name": 3}, TypeError, "argument 5 must be str or None, not int"),
        (
            (cudalite.ones(2),),
            {"foo": 1},
            TypeError,
            "'foo' is an invalid keyword argument for this function",
        ),
        (
            (cudalite.ones(2),),
            {"data": 1},
            TypeError,
            "argument for function given by name ('data') and position (1)",
        ),
        (
            (cudalite.ones(2), 0, 0, None, None, 1),
            {},
            TypeError,
            "function takes at most 5 arguments (6 given)",
        ),
    ],
)
def test_variable_errors(args, kwargs, exc, msg):
    with pytest.raises(exc) as e:
        Variable(*args, **kwargs)
    assert type(e.value) is exc and str(e.value) == msg


def test_variable_grad_fn_argument():
    x = leaf([1.0])
    with pytest.raises(TypeError) as e:
        Variable(x, _grad_fn=(x * 2).grad_fn)
    assert str(e.value) == "_grad_fn has to be a Function object or None, but got MulBackward0"

    class Double(cudalite.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(RuntimeError) as e:
        Variable(x, _grad_fn=Double.apply(x).grad_fn)
    assert str(e.value) == (
        "_grad_fn argument to legacy Variable constructor is no longer supported.  Instead, "
        "please invoke your _grad_fn to produce a variable with it as the _grad_fn."
    )


# ---- assigning .grad ----

DTYPE_MSG = (
    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. The "
    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
    "the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
    "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break "
    "downstream systems that assume they match."
)


def _assign(t, g):
    t.grad = g


def test_grad_assignment_size():
    x = leaf([1.0, 2.0])
    for g, size in ((cudalite.ones(3), "[3]"), (cudalite.ones(2, 1), "[2, 1]")):
        with pytest.raises(RuntimeError) as e:
            _assign(x, g)
        assert str(e.value) == (
            f"attempting to assign a gradient of size '{size}' to a tensor of size '[2]'. "
            "Please ensure that the gradient and the tensor are the same size"
        )
    with pytest.raises(RuntimeError, match=r"^attempting to assign a gradient of size '\[1\]' "):
        _assign(cudalite.ones(()), cudalite.ones(1))
    assert x.grad is None


@pytest.mark.parametrize(
    "grad_dtype, var_dtype, names",
    [
        (cudalite.float64, cudalite.float32, ("double", "Float")),
        (cudalite.int64, cudalite.float32, ("long int", "Float")),
        (cudalite.float16, cudalite.float32, ("c10::Half", "Float")),
        (cudalite.bfloat16, cudalite.float32, ("c10::BFloat16", "Float")),
        (cudalite.bool, cudalite.float32, ("bool", "Float")),
        (cudalite.int8, cudalite.float32, ("signed char", "Float")),
        (cudalite.uint8, cudalite.float32, ("unsigned char", "Float")),
        (cudalite.int16, cudalite.float32, ("short int", "Float")),
        (cudalite.int32, cudalite.float32, ("int", "Float")),
        (cudalite.float32, cudalite.float64, ("float", "Double")),
        (cudalite.float32, cudalite.int64, ("float", "Long")),
        (cudalite.float32, cudalite.uint8, ("float", "Byte")),
    ],
)
def test_grad_assignment_dtype(grad_dtype, var_dtype, names):
    with pytest.raises(RuntimeError) as e:
        _assign(cudalite.ones(2, dtype=var_dtype), cudalite.ones(3, dtype=grad_dtype))
    assert str(e.value) == DTYPE_MSG.format(*names)  # dtype is checked before size


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")
def test_grad_assignment_device():
    with pytest.raises(RuntimeError) as e:
        _assign(leaf([1.0]), cudalite.ones(1, device="cuda"))
    assert str(e.value) == (
        "attempting to assign a gradient with device type 'cuda' to a tensor with device type "
        "'cpu'. Please ensure that the gradient and the tensor are on the same device"
    )


def test_grad_assignment_type_and_self():
    x = leaf([1.0, 2.0])
    for g, name in ((3, "int"), ([1.0, 2.0], "list"), (np.ones(2), "numpy.ndarray")):
        with pytest.raises(TypeError) as e:
            _assign(x, g)
        assert str(e.value) == (
            f"assigned grad expected to be a Tensor or None but got grad of type {name}"
        )
    with pytest.raises(RuntimeError) as e:
        _assign(x, x)
    assert str(e.value) == "can't assign Variable as its own grad"


def test_grad_assignment_allowed_cases():
    x = leaf([1.0, 2.0])
    x.grad = cudalite.nn.Parameter(cudalite.ones(2))
    assert type(x.grad) is cudalite.nn.Parameter
    x.grad = cudalite.ones(2).requires_grad_()
    assert x.grad.requires_grad
    del x.grad
    assert x.grad is None
    w = cudalite.ones(2, 3)
    w.grad = cudalite.ones(3, 2).t()  # kept as given, strides included
    assert w.grad.stride() == (1, 2)
    n = cudalite.ones(2, dtype=cudalite.int64)
    n.grad = cudalite.ones(2, dtype=cudalite.int64)
    y = x * 2
    y.grad = cudalite.ones(2)  # a non-leaf may be given one
    np.testing.assert_allclose(to_np(y.grad), [1.0, 1.0])


# ---- reading a non-leaf's .grad ----

NONLEAF_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


def test_nonleaf_grad_warns():
    x = leaf([1.0, 2.0])
    y = x * 3
    with pytest.warns(UserWarning) as rec:
        assert y.grad is None
    assert len(rec) == 1 and str(rec[0].message) == NONLEAF_MSG
    assert rec[0].filename == __file__
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None and cudalite.ones(2).grad is None
        r = x * 1
        r.retain_grad()
        assert r.grad is None  # retained: no warning
        r.sum().backward()
        np.testing.assert_allclose(to_np(r.grad), [1.0, 1.0])


# ---- detach_ of a view ----

DETACH_VIEW_MSG = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x[:1],
        lambda x: x[0],
        lambda x: x.view(2),
        lambda x: x.unsqueeze(0),
        lambda x: x.expand(2, 2),
        lambda x: (x * 2)[:1],
        lambda x: (x * 2).reshape(2),
        lambda x: (x * 2).unbind()[0],
    ],
)
def test_detach_inplace_of_view_raises(make):
    x = leaf([1.0, 2.0])
    v = make(x)
    with pytest.raises(RuntimeError) as e:
        v.detach_()
    assert str(e.value) == DETACH_VIEW_MSG
    assert v.requires_grad and v.grad_fn is not None  # left as it was


def test_detach_inplace_of_non_views():
    x = leaf([1.0, 2.0])
    for t in (x * 2, x[[0]], x.detach(), x.clone()):
        assert t.detach_() is t and not t.requires_grad and t.grad_fn is None
