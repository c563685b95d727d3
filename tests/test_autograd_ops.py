"""Gradients of every differentiable op against central finite differences (float64), on the
CPU and on CUDA where a GPU is visible, with cudalite.autograd.gradcheck."""

from __future__ import annotations

import math

import pytest

import cudalite
from cudalite.autograd import gradcheck, gradgradcheck

F64 = cudalite.float64


def _x(*shape, device, lo=-1.0, hi=1.0, seed=0):
    g = cudalite.Generator().manual_seed(seed) if hasattr(cudalite, "Generator") else None
    del g
    cudalite.manual_seed(seed + 17 * len(shape))
    t = cudalite.rand(shape, dtype=F64) * (hi - lo) + lo
    return t.to(device).requires_grad_()


def _pos(*shape, device, seed=0):
    return _x(*shape, device=device, lo=0.5, hi=2.0, seed=seed)


UNARY = {
    "neg": lambda x: -x,
    "abs": lambda x: x.abs(),
    "abs()": lambda x: abs(x),
    "relu": lambda x: x.relu(),
    "exp": lambda x: x.exp(),
    "expm1": lambda x: x.expm1(),
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
    "tan": lambda x: x.tan(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "erf": lambda x: x.erf(),
    "square": lambda x: x.square(),
    "sign": lambda x: x.sign(),
    "floor": lambda x: cudalite.floor(x),
    "clone": lambda x: x.clone(),
    "pow2": lambda x: x**2,
    "pow3": lambda x: x**3,
    "pow0": lambda x: x**0,
    "rpow": lambda x: 2.0**x,
    "radd": lambda x: 1.5 + x,
    "rsub": lambda x: 1.5 - x,
    "rmul": lambda x: 3 * x,
    "mul_scalar": lambda x: x * 0.25,
    "div_scalar": lambda x: x / 4,
    "sub_alpha": lambda x: cudalite.sub(x, 2.0, alpha=3),
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "clamp_min": lambda x: x.clamp(min=0.1),
    "clamp_max": lambda x: cudalite.clamp(x, max=0.1),
    "where_scalar": lambda x: cudalite.where(x > 0, x, 0.0),
    "masked_fill": lambda x: x.masked_fill(x > 0.3, 2.0),
    "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: cudalite.log_softmax(x, 0),
    "lerp_scalar": lambda x: cudalite.lerp(x, x * 2, 0.3),
    "remainder_scalar": lambda x: x % 0.7,
}

POSITIVE = {
    "log": lambda x: x.log(),
    "log2": lambda x: x.log2(),
    "log10": lambda x: x.log10(),
    "log1p": lambda x: x.log1p(),
    "sqrt": lambda x: x.sqrt(),
    "rsqrt": lambda x: x.rsqrt(),
    "reciprocal": lambda x: x.reciprocal(),
    "rdiv": lambda x: 2.0 / x,
    "pow_frac": lambda x: x**1.5,
    "pow_neg": lambda x: x**-2,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, device):
    assert gradcheck(UNARY[name], (_x(3, 4, device=device),))


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_unary_positive(name, device):
    assert gradcheck(POSITIVE[name], (_pos(3, 4, device=device),))


BINARY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: a.add(b, alpha=-2),
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 1),
    "pow": lambda a, b: (a.abs() + 0.5) ** b,
    "maximum": lambda a, b: cudalite.maximum(a, b),
    "minimum": lambda a, b: a.minimum(b),
    "max_binary": lambda a, b: cudalite.max(a, b),
    "atan2": lambda a, b: cudalite.atan2(a, b),
    "remainder": lambda a, b: a.remainder(b.abs() + 1.5),
    "where": lambda a, b: cudalite.where(a > b, a, b),
    "lerp": lambda a, b: a.lerp(b, b.sigmoid()),
    "clamp_tensor": lambda a, b: a.clamp(min=b - 0.3, max=b + 0.3),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1))])
def test_binary_broadcast(name, shapes, device):
    a = _x(*shapes[0], device=device, seed=1)
    b = _x(*shapes[1], device=device, seed=2)
    assert gradcheck(BINARY[name], (a, b))


def test_binary_zero_dim_and_mixed_dtype(device):
    a = _x(3, device=device)
    b = _x(device=device, seed=5)
    assert gradcheck(lambda a, b: a * b + b, (a, b))
    c = cudalite.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)  # float32
    (c * a).sum().backward()
    assert c.grad.dtype == cudalite.float32 and a.grad.dtype == F64


REDUCTIONS = {
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(1),
    "sum_dims_keep": lambda x: x.sum((0, 2), keepdim=True),
    "mean": lambda x: x.mean(),
    "mean_dim": lambda x: cudalite.mean(x, -1),
    "prod": lambda x: x.prod(),
    "prod_dim": lambda x: x.prod(1, keepdim=True),
    "max": lambda x: x.max(),
    "max_dim": lambda x: x.max(1)[0],
    "min_dim_keep": lambda x: x.min(2, keepdim=True).values,
    "amax": lambda x: x.amax((0, 1)),
    "amin": lambda x: x.amin(-1),
    "std": lambda x: x.std(),
    "std_dim": lambda x: x.std(1),
    "var": lambda x: x.var(0, keepdim=True),
    "var_unbiased_false": lambda x: cudalite.var(x, unbiased=False),
    "norm": lambda x: x.norm(),
    "norm_dim": lambda x: x.norm(dim=1),
    "norm_p1": lambda x: x.norm(p=1),
    "norm_p3": lambda x: x.norm(p=3, dim=0),
    "norm_inf": lambda x: x.norm(p=float("inf")),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, device):
    assert gradcheck(REDUCTIONS[name], (_x(2, 3, 4, device=device),))


def test_prod_with_zeros(device):
    x = cudalite.tensor([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [1.0, 2.0, 3.0]], dtype=F64)
    x = x.to(device).requires_grad_()
    assert gradcheck(lambda x: x.prod(1), (x,))
    assert gradcheck(lambda x: x[0].prod(), (x,))


SHAPES = {
    "view": lambda x: x.view(4, 6),
    "reshape_noncontig": lambda x: x.transpose(0, 2).reshape(-1),
    "flatten": lambda x: x.flatten(1),
    "permute": lambda x: x.permute(2, 0, 1),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x[0].t(),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "squeeze_unsqueeze": lambda x: x.unsqueeze(1).unsqueeze(-1).squeeze(),
    "squeeze_dim": lambda x: x[:, :1].squeeze(1),
    "select": lambda x: x.select(1, 2),
    "getitem_int": lambda x: x[1],
    "getitem_slices": lambda x: x[:, 1:, ::2],
    "getitem_none_ellipsis": lambda x: x[None, ..., 1],
    "getitem_tensor": lambda x: x[cudalite.tensor([1, 1, 0], device=x.device)],
    "getitem_mask": lambda x: x[x > 0],
    "getitem_mixed": lambda x: x[0, cudalite.tensor([2, 0], device=x.device)],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "unbind": lambda x: x.unbind(1)[1] * 2 + x.unbind(1)[0],
    "split": lambda x: x.split(1, 0)[1],
    "split_sizes": lambda x: x.split([1, 3], 2)[1],
    "chunk": lambda x: x.chunk(2, 2)[0],
    "repeat": lambda x: x.repeat(2, 1, 1, 2),
    "flip": lambda x: x.flip([0, 2]),
    "index_select": lambda x: x.index_select(1, cudalite.tensor([2, 0, 2], device=x.device)),
    "contiguous": lambda x: x.transpose(1, 2).contiguous(),
    "as_strided": lambda x: x.as_strided((3, 3), (2, 1), 1),
    "cat": lambda x: cudalite.cat([x, x * 2], 1),
    "stack": lambda x: cudalite.stack([x, x.exp()], -1),
    "view_as": lambda x: x.view_as(cudalite.empty(24)),
    "expand_as": lambda x: x[:1].expand_as(x),
    "to_same_dtype": lambda x: x.to(F64) * x.to(x.device),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes_and_indexing(name, device):
    assert gradcheck(SHAPES[name], (_x(2, 3, 4, device=device),))


LINALG = {
    "mm": lambda a, b: a.mm(b),
    "matmul_2d": lambda a, b: a @ b,
    "addmm": lambda a, b: cudalite.addmm(b[0], a, b, beta=0.5, alpha=2),
    "matmul_1d_2d": lambda a, b: a[0] @ b,
    "matmul_2d_1d": lambda a, b: a @ b[:, 0],
    "dot": lambda a, b: a[0].dot(b[:, 1]),
    "mv": lambda a, b: cudalite.mv(a, b[:, 0]),
    "matmul_3d_2d": lambda a, b: a.reshape(1, 3, 4).expand(2, 3, 4) @ b,
    "matmul_batched": lambda a, b: a.reshape(1, 3, 4) @ b.reshape(1, 4, 5).expand(3, 4, 5),
    "bmm": lambda a, b: cudalite.bmm(a.unsqueeze(0), b.unsqueeze(0)),
    "matmul_Wt": lambda a, b: a @ b.t().t(),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg(name, device):
    a = _x(3, 4, device=device, seed=3)
    b = _x(4, 5, device=device, seed=4)
    assert gradcheck(LINALG[name], (a, b))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: (x * x).sum(),
        lambda x: x.exp().sin().sum(),
        lambda x: (x @ x.t()).tanh().sum(),
        lambda x: x.softmax(1).log().mean(),
        lambda x: x.norm(),
        lambda x: x.sigmoid().prod(),
    ],
)
def test_second_order(fn, device):
    x = _x(3, 3, device=device)
    assert gradgradcheck(fn, (x,))


# ---- gradients at the edges: nan, inf and empty denominators, as torch computes them
# (found by tests/fuzz_autograd_vs_torch.py) ----


def test_var_and_std_with_one_element_per_group_give_nan_gradients(device):
    for f in ("var", "std"):
        x = cudalite.tensor(
            [[1.0], [2.0]], dtype=cudalite.float64, device=device, requires_grad=True
        )
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            y = getattr(x, f)(dim=-1)  # correction 1 over one element: 0 / 0
        y.sum().backward()
        assert all(math.isnan(v) for v in x.grad.flatten().tolist())


def test_clamped_and_relu_elements_get_zero_even_from_a_nan_gradient(device):
    for f in (lambda t: t.clamp(-0.5, 0.7), lambda t: t.clamp(min=0.0), lambda t: t.relu()):
        x = cudalite.tensor(
            [-2.0, 0.5, 3.0], dtype=cudalite.float64, device=device, requires_grad=True
        )
        y = f(x)
        (
            y
            * cudalite.tensor(
                [float("nan"), 1.0, float("nan")], dtype=cudalite.float64, device=device
            )
        ).sum().backward()
        g = x.grad.tolist()
        assert g[0] == 0.0 and g[1] == 1.0  # x[0] was clamped (or zeroed by relu)


def test_amax_spreads_a_nan_gradient_but_cpu_max_does_not(device):
    x = cudalite.tensor(
        [[1.0, 3.0, 2.0]], dtype=cudalite.float64, device=device, requires_grad=True
    )
    x.amax(dim=1).neg().sqrt().sum().backward()  # sqrt(-3): a nan gradient
    assert all(math.isnan(v) for v in x.grad.flatten().tolist())  # (grad / count) * mask
    x.grad = None
    x.max().neg().sqrt().backward()
    g = x.grad.flatten().tolist()
    if device == "cpu":  # torch writes the share into a zero tensor on the CPU
        assert g[0] == 0.0 and math.isnan(g[1]) and g[2] == 0.0
    else:
        assert all(math.isnan(v) for v in g)
    n = cudalite.tensor(
        [1.0, float("nan")], dtype=cudalite.float64, device=device, requires_grad=True
    )
    n.max().backward()  # a nan maximum: the nan element takes the gradient
    assert n.grad.tolist() == [0.0, 1.0]
