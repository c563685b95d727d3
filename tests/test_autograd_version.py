"""Version counters (Tensor._version) and autograd's check of saved tensors, against torch
2.11: the counts after each kind of write, which tensors share a counter, and torch's errors
when a tensor saved for backward was modified in place (messages from torch, with cudalite's
type names)."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite
from conftest import to_np

F = cudalite.nn.functional


def leaf(values, device, dtype=cudalite.float32):
    return cudalite.tensor(values, dtype=dtype, device=device, requires_grad=True)


def type_name(device, name="FloatTensor"):
    """x.type() of a float32 tensor: the name torch's message has (as torch.FloatTensor)."""
    return ("cudalite.cuda." if device == "cuda" else "cudalite.") + name


def modified(what, version, expected):
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {what} is at version {version}; expected version {expected} "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def raises(fn, msg):
    with pytest.raises(RuntimeError) as e:
        fn()
    assert str(e.value) == msg


# ---- counting ----


def test_version_starts_at_zero_and_is_read_only(device):
    x = cudalite.randn(3, device=device)
    assert x._version == 0 and isinstance(x._version, int)
    with pytest.raises(AttributeError, match="'_version' of 'Tensor' objects is not writable"):
        x._version = 3


NEW = {
    "zeros": lambda x: cudalite.zeros(3, device=x.device),
    "full": lambda x: cudalite.full((3,), 2.0, device=x.device),
    "randn": lambda x: cudalite.randn(3, device=x.device),
    "rand_like": lambda x: cudalite.rand_like(x),
    "randint": lambda x: cudalite.randint(0, 5, (3,), device=x.device),
    "randperm": lambda x: cudalite.randperm(4, device=x.device),
    "normal": lambda x: cudalite.normal(0.0, 1.0, (3,), device=x.device),
    "ones_like": lambda x: cudalite.ones_like(x),
    "full_like": lambda x: cudalite.full_like(x, 2.0),
    "tensor": lambda x: cudalite.tensor([1.0, 2.0], device=x.device),
    "clone": lambda x: x.clone(),
    "contiguous": lambda x: x.t().contiguous(),
    "to": lambda x: x.double(),
    "channels_last": lambda x: x.reshape(1, 2, 3, 1).contiguous(
        memory_format=cudalite.channels_last
    ),
    "add": lambda x: x + x,
    "cat": lambda x: cudalite.cat([x, x]),
    "sum": lambda x: x.sum(0),
    "softmax": lambda x: cudalite.softmax(x, 1),
    "log_softmax": lambda x: cudalite.log_softmax(x, 1),
    "linear": lambda x: F.linear(
        x, cudalite.ones(4, 3, device=x.device), cudalite.ones(4, device=x.device)
    ),
    "mse_loss": lambda x: F.mse_loss(x, x * 2),
    "cross_entropy": lambda x: F.cross_entropy(x, cudalite.tensor([0, 2], device=x.device)),
    "index": lambda x: x[[0, 1]],
}


@pytest.mark.parametrize("name", NEW)
def test_new_tensors_are_at_version_zero(device, name):
    x = cudalite.randn(2, 3, device=device)
    assert NEW[name](x)._version == 0


WRITES = {
    "add_": lambda x: x.add_(1),
    "add_tensor": lambda x: x.add_(cudalite.ones(4, device=x.device)),
    "add_alpha": lambda x: x.add_(x, alpha=2),
    "iadd": lambda x: x.__iadd__(1),
    "imul": lambda x: x.__imul__(x),
    "mul_": lambda x: x.mul_(2),
    "div_": lambda x: x.div_(2),
    "div_floor": lambda x: x.div_(2, rounding_mode="floor"),
    "sub_": lambda x: x.sub_(1),
    "pow_": lambda x: x.pow_(2),
    "exp_": lambda x: x.exp_(),
    "neg_": lambda x: x.neg_(),
    "square_": lambda x: x.square_(),
    "relu_": lambda x: x.relu_(),
    "clamp_": lambda x: x.clamp_(0, 1),
    "copy_": lambda x: x.copy_(cudalite.ones(4, device=x.device)),
    "copy_dtype": lambda x: x.copy_(cudalite.ones(3, 4, dtype=cudalite.float64, device=x.device)),
    "fill_": lambda x: x.fill_(1),
    "zero_": lambda x: x.zero_(),
    "setitem_int": lambda x: x.__setitem__(0, 1.0),
    "setitem_slice": lambda x: x.__setitem__(slice(0, 2), cudalite.ones(4, device=x.device)),
    "setitem_index": lambda x: x.__setitem__(cudalite.tensor([0, 1], device=x.device), 1.0),
    "setitem_mask": lambda x: x.__setitem__(x > 0, 1.0),
    "setitem_ellipsis": lambda x: x.__setitem__(..., 1.0),
    "masked_fill_": lambda x: x.masked_fill_(x > 0, 1.0),
    "index_put_": lambda x: x.index_put_(
        (cudalite.tensor([0], device=x.device),),
        cudalite.tensor(1.0, device=x.device),
        accumulate=True,
    ),
    "normal_": lambda x: x.normal_(),
    "uniform_": lambda x: x.uniform_(),
    "random_": lambda x: x.random_(0, 5),
    "t_": lambda x: x.t_(),
    "transpose_": lambda x: x.transpose_(0, 1),
    "squeeze_": lambda x: x.squeeze_(),
    "unsqueeze_": lambda x: x.unsqueeze_(0),
    "resize_": lambda x: x.resize_(2, 2),
    "resize_grow": lambda x: x.resize_(5, 5),
    "resize_as_": lambda x: x.resize_as_(cudalite.ones(2)),
    "add_out": lambda x: cudalite.add(cudalite.ones(3, 4, device=x.device), 1, out=x),
    "add_out_resized": lambda x: cudalite.add(cudalite.ones(2, device=x.device), 1, out=x),
    "exp_out": lambda x: cudalite.exp(cudalite.ones(3, 4, device=x.device), out=x),
    "sum_out": lambda x: cudalite.sum(cudalite.ones(3, 4, 5, device=x.device), 2, out=x),
    "amax_out": lambda x: cudalite.amax(cudalite.ones(3, 4, 5, device=x.device), 2, out=x),
    "mm_out": lambda x: cudalite.mm(
        cudalite.ones(3, 2, device=x.device), cudalite.ones(2, 4, device=x.device), out=x
    ),
    "cat_out": lambda x: cudalite.cat(
        [cudalite.ones(1, 4, device=x.device), cudalite.ones(2, 4, device=x.device)], out=x
    ),
    "randn_out": lambda x: cudalite.randn(3, 4, out=x),
    "zeros_out": lambda x: cudalite.zeros(3, 4, out=x),
    "clamp_out": lambda x: cudalite.clamp(cudalite.ones(3, 4, device=x.device), 0, 1, out=x),
    "relu_inplace": lambda x: F.relu(x, inplace=True),
    "view_mul_": lambda x: x.view(12).mul_(2),
    "detach_mul_": lambda x: x.detach().mul_(2),
}


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("name", WRITES)
def test_each_write_counts_once(device, name):
    # torch 2.11 counts one for every one of these
    x = cudalite.randn(3, 4, device=device)
    WRITES[name](x)
    assert x._version == 1


KEEPS = {
    "resize_same": lambda x: x.resize_(3, 4),
    "resize_as_same": lambda x: x.resize_as_(cudalite.ones(3, 4)),
    "data_mul_": lambda x: x.data.mul_(2),
    "detach_": lambda x: x.detach_(),
    "requires_grad_": lambda x: x.requires_grad_(),
    "out_of_place": lambda x: x + 1,
    "set_data": lambda x: setattr(x, "data", cudalite.ones(3, 4, device=x.device)),
}


@pytest.mark.parametrize("name", KEEPS)
def test_what_does_not_count(device, name):
    x = cudalite.randn(3, 4, device=device)
    KEEPS[name](x)
    assert x._version == 0


def test_writes_count_under_no_grad(device):
    x = cudalite.randn(3, device=device)
    with cudalite.no_grad():
        x.add_(1)
        x[0] = 2.0
    assert x._version == 2


def test_versions_accumulate(device):
    x = cudalite.zeros(3, device=device)
    x += 1
    x.add_(x)
    x.t_()
    assert x._version == 3


INITS = ["uniform_", "normal_", "zeros_", "ones_", "eye_", "xavier_uniform_", "kaiming_normal_"]


@pytest.mark.parametrize("name", INITS)
def test_init_functions_write_once(device, name):
    p = cudalite.nn.Parameter(cudalite.empty(3, 4, device=device))
    getattr(cudalite.nn.init, name)(p)
    assert p._version == 1


@pytest.mark.parametrize(
    "cls, kw, per_step",
    [
        ("SGD", {}, 1),
        ("SGD", {"momentum": 0.9, "nesterov": True}, 1),
        ("Adam", {}, 1),
        ("Adam", {"amsgrad": True, "weight_decay": 0.1}, 1),
        ("Adam", {"decoupled_weight_decay": True, "weight_decay": 0.1}, 2),  # AdamW's
    ],
)
def test_optimizer_steps_write_parameters(device, cls, kw, per_step):
    p = cudalite.nn.Parameter(cudalite.randn(3, device=device))
    opt = getattr(cudalite.optim, cls)([p], lr=0.1, **kw)
    for _ in range(3):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    assert p._version == 3 * per_step


def test_gradient_accumulation_writes_grad(device):
    p = cudalite.nn.Parameter(cudalite.randn(3, device=device))
    (p * 2).sum().backward()
    g = p.grad
    before = g._version
    (p * 2).sum().backward()
    assert p.grad is g and g._version == before + 1
    cudalite.optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    assert g._version == before + 2


# ---- sharing ----


def test_views_and_detach_share_the_counter(device):
    x = cudalite.randn(2, 3, device=device)
    v, w, d = x[0], x.t(), x.detach()
    v.mul_(2)
    assert (x._version, v._version, w._version, d._version) == (1, 1, 1, 1)
    x.add_(1)
    d.zero_()
    assert (x._version, v._version, w._version) == (3, 3, 3)
    later = x.view(6)
    assert later._version == 3
    assert cudalite.Tensor(x)._version == 3  # the legacy constructor aliases x


def test_data_has_a_counter_of_its_own(device):
    x = cudalite.randn(3, device=device)
    x.add_(1)
    d = x.data
    assert d._version == 0 and x.data is not d
    d.view(3).add_(1)  # views of .data share its counter
    assert (d._version, x._version) == (1, 1)
    x.add_(1)
    assert (d._version, x._version) == (1, 2)


def test_set_data_keeps_the_counter(device):
    x = cudalite.randn(3, device=device)
    x.add_(1)
    y = cudalite.ones(2, device=device)
    x.data = y
    assert x._version == 1
    y.add_(1)  # x sees y's memory, not its counter (as in torch)
    assert (x._version, y._version) == (1, 1)
    x.add_(1)
    assert (x._version, y._version) == (2, 1)
    assert to_np(y).tolist() == [3.0, 3.0]


def test_parameter_shares_its_data_counter(device):
    x = cudalite.randn(3, device=device)
    x.add_(1)
    p = cudalite.nn.Parameter(x)
    assert p._version == 1
    x.mul_(2)
    assert p._version == 2
    p.data.add_(1)
    assert p._version == 2


def test_separate_storages_separate_counters(device):
    x = cudalite.randn(3, device=device)
    y = x.clone()
    x.add_(1)
    assert y._version == 0
    a = np.ones(3, dtype=np.float32)
    t1, t2 = cudalite.from_numpy(a), cudalite.from_numpy(a)
    t1.add_(1)
    assert (t1._version, t2._version) == (1, 0)


# ---- the saved-tensor check ----


def test_modified_output(device):
    x = leaf([1.0, 2.0, 3.0], device)
    a = x.exp()
    a.add_(1)
    what = f"[{type_name(device)} [3]], which is output 0 of ExpBackward0,"
    raises(lambda: a.sum().backward(), modified(what, 1, 0))


def test_torch_message_in_full():
    x = leaf([1.0, 2.0, 3.0], "cpu")
    a = x.exp()
    a.add_(1)
    raises(
        lambda: a.sum().backward(),
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [cudalite.FloatTensor [3]], which is output 0 of ExpBackward0, is at version "
        "1; expected version 0 instead. Hint: enable anomaly detection to find the operation "
        "that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
        "check_nan=False).",
    )


def test_modified_input_names_its_current_node(device):
    x = leaf([1.0, 2.0, 3.0], device)
    a = x * 1
    b = a.sin()
    a.mul_(2)  # a's history is now MulBackward0 of the in-place op
    what = f"[{type_name(device)} [3]], which is output 0 of MulBackward0,"
    raises(lambda: b.sum().backward(), modified(what, 1, 0))


def test_modified_input_that_needs_no_grad(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = cudalite.randn(2, 3, device=device)
    w = cudalite.randn(3, 4, device=device)
    b = x * y[0]  # saves the view y[0]
    out = x.unsqueeze(0) @ w
    y.add_(1)
    raises(lambda: b.sum().backward(), modified(f"[{type_name(device)} [3]]", 1, 0))
    w.mul_(2)
    raises(lambda: out.sum().backward(), modified(f"[{type_name(device)} [3, 4]]", 1, 0))


def test_leaf_modified_under_no_grad(device):
    x = leaf([1.0, 2.0, 3.0], device, cudalite.float64)
    b = x.sin()
    with cudalite.no_grad():
        x.add_(1)
    raises(lambda: b.sum().backward(), modified(f"[{type_name(device, 'DoubleTensor')} [3]]", 1, 0))


def test_other_dtypes_name_their_aten_type(device):
    x = leaf([1.0, -2.0, 3.0], device)
    cond = x > 0
    y = cudalite.where(cond, x, 0.0)
    idx = cudalite.tensor([0, 2], device=device)
    z = x[idx]
    cond.logical_not_()
    prefix = "CUDA" if device == "cuda" else "CPU"
    raises(lambda: y.sum().backward(), modified(f"[{prefix}BoolType [3]]", 1, 0))
    idx.add_(0)
    raises(lambda: z.sum().backward(), modified(f"[{type_name(device, 'LongTensor')} [2]]", 1, 0))
    h = leaf([1.0, 2.0], device, cudalite.bfloat16)
    o = cudalite.ones(2, dtype=cudalite.bfloat16, device=device)
    p = h * o
    o.add_(1)
    raises(lambda: p.sum().backward(), modified(f"[{prefix}BFloat16Type [2]]", 1, 0))


def test_zero_dim(device):
    x = cudalite.tensor(2.0, device=device, requires_grad=True)
    a = x.exp()
    a.add_(1)
    what = f"[{type_name(device)} []], which is output 0 of ExpBackward0,"
    raises(lambda: a.backward(), modified(what, 1, 0))


def test_inplace_op_saves_its_output_at_its_new_version(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x.clone()
    y.exp_()
    y.sum().backward()  # fine: exp_'s saved output is y at version 1
    np.testing.assert_allclose(to_np(x.grad), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    y = x.clone()
    y.exp_()
    y.add_(1)
    what = f"[{type_name(device)} [3]], which is output 0 of ExpBackward0,"
    raises(lambda: y.sum().backward(), modified(what, 2, 1))


def test_inplace_on_a_view_saves_the_view(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x.clone()
    v = y[0:2]
    v.exp_()
    v.add_(1)
    what = f"[{type_name(device)} [2]], which is output 0 of ExpBackward0,"
    raises(lambda: y.sum().backward(), modified(what, 2, 1))
    y = x.clone()
    v = y[0:2]
    v.exp_()
    y.add_(1)  # while v keeps its node, torch names it
    what = f"[{type_name(device)} [2]], which is output 0 of AsStridedBackward0,"
    raises(lambda: y.sum().backward(), modified(what, 2, 1))


def test_output_modified_through_a_view_or_detach(device):
    x = leaf([1.0, 2.0, 3.0], device)
    a = x.exp()
    a[0:2].add_(1)
    what = f"[{type_name(device)} [3]], which is output 0 of ExpBackward0,"
    raises(lambda: a.sum().backward(), modified(what, 1, 0))
    a = x.exp()
    a.detach().zero_()
    raises(lambda: a.sum().backward(), modified(what, 1, 0))
    a = x.exp()
    a.data.add_(1)  # .data is invisible to the check, as in torch
    a.sum().backward()


def test_self_times_self_in_place(device):
    x = leaf([1.0, 2.0, 3.0], device)
    a = x * 2
    a *= a  # the saved operand is a itself, which the write modifies
    what = f"[{type_name(device)} [3]], which is output 0 of MulBackward0,"
    raises(lambda: a.sum().backward(), modified(what, 1, 0))
    b = x * 2
    b += b  # nothing saved
    b.sum().backward()
    assert to_np(x.grad).tolist() == [4.0, 4.0, 4.0]


def test_first_saved_input_in_torch_order_is_reported(device):
    x, y = leaf([1.0, 2.0, 3.0], device), leaf([1.0, 2.0, 3.0], device)
    a, b = x * 2, y * 2
    c = a * b
    a.add_(1)
    b.mul_(2)  # mul checks `other` before `self`
    what = f"[{type_name(device)} [3]], which is output 0 of MulBackward0,"
    raises(lambda: c.sum().backward(), modified(what, 1, 0))


def test_failed_check_frees_the_graph_unless_retained(device):
    x = leaf([1.0, 2.0, 3.0], device)
    a = x.sigmoid()
    a.sum().backward(retain_graph=True)
    a.mul_(2)
    what = f"[{type_name(device)} [3]], which is output 0 of SigmoidBackward0,"
    for _ in range(2):
        raises(lambda: a.sum().backward(retain_graph=True), modified(what, 1, 0))
    raises(lambda: cudalite.autograd.grad(a.sum(), x), modified(what, 1, 0))
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second"):
        a.sum().backward()


def test_losses_save_their_inputs(device):
    x = leaf([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], device)
    target = cudalite.ones(2, 3, device=device)
    loss = F.mse_loss(x, target)
    target.add_(1)
    raises(lambda: loss.backward(), modified(f"[{type_name(device)} [2, 3]]", 1, 0))
    labels = cudalite.tensor([0, 2], device=device)
    loss = F.cross_entropy(x, labels)
    labels.add_(0)
    raises(lambda: loss.backward(), modified(f"[{type_name(device, 'LongTensor')} [2]]", 1, 0))


class _Exp(cudalite.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class _Mul(cudalite.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


def test_function_saved_tensors_are_checked(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = _Exp.apply(x)
    y.add_(1)
    what = f"[{type_name(device)} [3]], which is output 0 of _ExpBackward,"
    raises(lambda: y.sum().backward(), modified(what, 1, 0))
    b = cudalite.ones(3, device=device)
    z = _Mul.apply(x * 1, b)
    b.mul_(2)
    raises(lambda: z.sum().backward(), modified(f"[{type_name(device)} [3]]", 1, 0))
