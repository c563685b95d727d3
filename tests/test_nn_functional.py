"""nn.functional, nn.Parameter and nn.init: torch's checks and messages (expected values
are what torch 2.11 gives for the same calls)."""

from __future__ import annotations

import warnings

import pytest

import cudalite as torch
from cudalite import nn
from cudalite.nn import functional as F


def raises(exc, msg, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == msg


X = [[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]]


def test_class_index_targets_must_be_long():
    x = torch.tensor(X)
    for dt, name in [(torch.int32, "Int"), (torch.int16, "Short"), (torch.bool, "Bool")]:
        t = torch.tensor([1, 0], dtype=dt)
        msg = f"expected scalar type Long but found {name}"
        raises(RuntimeError, msg, lambda t=t: F.cross_entropy(x, t))
        raises(RuntimeError, msg, lambda t=t: F.cross_entropy(x, t, label_smoothing=0.1))
        raises(RuntimeError, msg, lambda t=t: F.nll_loss(x, t))
        raises(RuntimeError, msg, lambda t=t: nn.CrossEntropyLoss()(x, t))
    t32 = torch.tensor(1, dtype=torch.int32)
    raises(RuntimeError, "expected scalar type Long but found Int", lambda: F.nll_loss(x[0], t32))
    raises(
        RuntimeError,
        "expected scalar type Long but found Int",
        lambda: F.cross_entropy(torch.ones(1, 3, 2), torch.zeros(1, 2, dtype=torch.int32)),
    )
    # a float target of another shape is a class-index target
    raises(
        RuntimeError,
        "expected scalar type Long but found Float",
        lambda: F.cross_entropy(x, torch.tensor([1.0, 0.0])),
    )
    # uint8 is accepted for 1-D and 2-D inputs (not for spatial ones)
    u8 = torch.tensor([1, 0], dtype=torch.uint8)
    assert F.nll_loss(x, u8).item() == pytest.approx(-1.05)
    assert F.cross_entropy(x, u8).item() == pytest.approx(F.cross_entropy(x, u8.long()).item())
    raises(
        RuntimeError,
        "expected scalar type Long but found Byte",
        lambda: F.nll_loss(torch.ones(2, 3, 4), torch.zeros(2, 4, dtype=torch.uint8)),
    )


def test_target_checks_come_before_the_dtype_check():
    x = torch.tensor(X)
    for dt in (torch.long, torch.int32):
        raises(
            ValueError,
            "Expected input batch_size (2) to match target batch_size (3).",
            lambda dt=dt: F.cross_entropy(x, torch.tensor([1, 0, 1], dtype=dt)),
        )
        raises(
            RuntimeError,
            "0D or 1D target tensor expected, multi-target not supported",
            lambda dt=dt: F.nll_loss(x, torch.ones(2, 2, dtype=dt)),
        )
        raises(
            RuntimeError,
            "weight tensor should be defined either for all 3 classes or no classes but got "
            "weight tensor of shape: [2]",
            lambda dt=dt: F.nll_loss(x, torch.tensor([1, 0], dtype=dt), weight=torch.ones(2)),
        )
        raises(
            ValueError,
            "For 1D input, 1D target must have size 1, but got target size: 2",
            lambda dt=dt: F.nll_loss(x[0], torch.tensor([1, 2], dtype=dt)),
        )
        raises(
            RuntimeError,
            "Expected target size [2, 4], got [2, 5]",
            lambda dt=dt: F.nll_loss(torch.ones(2, 3, 4), torch.zeros(2, 5, dtype=dt)),
        )
        raises(
            RuntimeError,
            "only batches of spatial targets supported (3D tensors) but got targets of "
            "dimension: 2",
            lambda dt=dt: F.nll_loss(torch.ones(2, 3, 4, 5), torch.zeros(2, 4, dtype=dt)),
        )
        raises(
            RuntimeError,
            "size mismatch (got input: [2, 3, 4, 5] , target: [2, 4, 6]",
            lambda dt=dt: F.nll_loss(torch.ones(2, 3, 4, 5), torch.zeros(2, 4, 6, dtype=dt)),
        )
        raises(
            RuntimeError,
            "weight tensor should be defined either for all or no classes",
            lambda dt=dt: F.nll_loss(
                torch.ones(2, 3, 4), torch.zeros(2, 4, dtype=dt), weight=torch.ones(2)
            ),
        )
    raises(
        ValueError,
        "x is not a valid value for reduction",
        lambda: F.cross_entropy(x, torch.tensor([1, 0], dtype=torch.int32), reduction="x"),
    )


def test_cross_entropy_probability_targets_by_shape():
    x = torch.tensor(X)
    raises(
        RuntimeError,
        "Expected floating point type for target with class probabilities, got Long",
        lambda: F.cross_entropy(x, torch.ones(2, 3, dtype=torch.long)),
    )
    raises(
        RuntimeError,
        "ignore_index is not supported for floating point target",
        lambda: F.cross_entropy(x, torch.ones(2, 3), ignore_index=1),
    )
    assert F.cross_entropy(x, torch.ones(2, 3), ignore_index=-5).item() == pytest.approx(
        3.5995, 1e-4
    )
    raises(
        RuntimeError,
        "cross_entropy: weight tensor should be defined either for all 3 classes or no classes "
        "but got weight tensor of shape: [2]",
        lambda: F.cross_entropy(x, torch.ones(2, 3), weight=torch.ones(2), label_smoothing=2.0),
    )
    raises(
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
        lambda: F.cross_entropy(x, torch.ones(2, 3), label_smoothing=1.5),
    )
    raises(
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
        lambda: F.cross_entropy(x, torch.tensor([1, 0]), label_smoothing=1.5),
    )
    # a negative smoothing is neither checked nor used
    assert F.cross_entropy(x, torch.tensor([1, 0]), label_smoothing=-0.5).item() == pytest.approx(
        0.8332, 1e-4
    )


def test_softmax_of_integers():
    raises(
        NotImplementedError,
        "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
        lambda: F.softmax(torch.tensor([1, 2]), 0),
    )
    raises(
        NotImplementedError,
        "\"softmax_kernel_impl\" not implemented for 'Long'",
        lambda: F.softmax(torch.tensor([[1, 2]]), 0),
    )
    raises(
        NotImplementedError,
        "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Int'",
        lambda: F.log_softmax(torch.tensor([[1, 2]], dtype=torch.int32), -1),
    )
    raises(
        NotImplementedError,
        "\"log_softmax_kernel_impl\" not implemented for 'Bool'",
        lambda: F.log_softmax(torch.tensor([[True]]), -2),
    )
    raises(
        NotImplementedError,
        "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'",
        lambda: F.cross_entropy(torch.ones(2, 3, dtype=torch.long), torch.tensor([1, 0])),
    )
    raises(
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 3)",
        lambda: F.softmax(torch.tensor([1, 2]), 3),
    )
    assert F.softmax(torch.tensor([1, 2]), 0, dtype=torch.float32).tolist() == pytest.approx(
        [0.2689414, 0.7310586]
    )
    assert F.softmax(torch.ones(0, dtype=torch.long), 0).dtype == torch.int64


def test_linear_bias_shape_errors():
    def expand_msg(target, size):
        return (
            f"The expanded size of the tensor ({target}) must match the existing size ({size}) "
            "at non-singleton dimension 1.  Target sizes: "
        )

    with pytest.raises(RuntimeError) as e:
        F.linear(torch.ones(2, 3), torch.ones(4, 3), torch.ones(3))
    assert str(e.value) == expand_msg(4, 3) + "[2, 4].  Tensor sizes: [3]"
    with pytest.raises(RuntimeError) as e:
        F.linear(torch.ones(5, 2, 3), torch.ones(4, 3), torch.ones(3))
    assert str(e.value) == expand_msg(4, 3) + "[10, 4].  Tensor sizes: [3]"
    with pytest.raises(RuntimeError) as e:
        F.linear(torch.ones(3), torch.ones(4, 3), torch.ones(3))
    assert str(e.value) == expand_msg(4, 3) + "[1, 4].  Tensor sizes: [3]"
    raises(  # the matrix shapes are checked first
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (2x5 and 3x4)",
        lambda: F.linear(torch.ones(2, 5), torch.ones(4, 3), torch.ones(3)),
    )
    raises(  # a non-contiguous input: matmul, then the bias added in place
        RuntimeError,
        "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 2",
        lambda: F.linear(torch.ones(5, 3, 2).transpose(1, 2), torch.ones(4, 3), torch.ones(3)),
    )
    raises(
        RuntimeError,
        "output with shape [5, 2, 4] doesn't match the broadcast shape [3, 5, 2, 4]",
        lambda: F.linear(
            torch.ones(5, 3, 2).transpose(1, 2), torch.ones(4, 3), torch.ones(3, 1, 1, 4)
        ),
    )
    # a 2-D bias of a 3-D input broadcasts (torch adds it after the matmul)
    y = F.linear(torch.ones(5, 2, 3, requires_grad=True), torch.ones(4, 3), torch.ones(2, 4))
    assert tuple(y.shape) == (5, 2, 4) and y.grad_fn.name() == "AddBackward0"


@pytest.mark.parametrize("bshape", [(4,), (1, 4), (), (2, 4), (1,)])
def test_linear_bias_gradients(bshape):
    x = torch.ones(2, 3, requires_grad=True)
    w = torch.arange(12.0).reshape(4, 3).requires_grad_()
    b = torch.ones(bshape, requires_grad=True)
    y = F.linear(x, w, b)
    assert y.grad_fn.name() == "AddmmBackward0"
    (y * torch.arange(8.0).reshape(2, 4)).sum().backward()
    expected = {
        (4,): [4.0, 6.0, 8.0, 10.0],
        (1, 4): [[4.0, 6.0, 8.0, 10.0]],
        (): 28.0,
        (2, 4): [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]],
        (1,): [28.0],
    }
    assert b.grad.tolist() == expected[bshape]


def test_size_average_and_reduce_are_deprecated():
    x = torch.tensor(X)
    t = torch.tensor([1, 0])

    def check(fn, reduction):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn()
        assert [(x.category, str(x.message)) for x in w] == [
            (
                UserWarning,
                "size_average and reduce args will be deprecated, please use "
                f"reduction='{reduction}' instead.",
            )
        ]
        return r

    assert check(lambda: F.mse_loss(x, x + 1, size_average=False), "sum").item() == 6.0
    assert tuple(check(lambda: F.l1_loss(x, x, reduce=False), "none").shape) == (2, 3)
    assert check(lambda: F.mse_loss(x, x + 1, reduce=True), "mean").item() == 1.0
    # the legacy arguments win over reduction=
    assert check(lambda: F.l1_loss(x, x + 1, size_average=False, reduction="none"), "sum") == 6
    nll = check(lambda: F.nll_loss(x, t, size_average=False), "sum")
    assert nll.item() == pytest.approx(-2.1)
    ce = check(lambda: F.cross_entropy(x, t, reduce=False), "none")
    assert ce.tolist() == pytest.approx([0.4644, 1.2019], abs=1e-4)
    assert check(lambda: nn.MSELoss(size_average=False), "sum").reduction == "sum"
    assert check(lambda: nn.CrossEntropyLoss(reduce=False), "none").reduction == "none"
    assert check(lambda: nn.NLLLoss(size_average=False, reduce=True), "sum").reduction == "sum"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(x, x, reduction="sum")
        nn.L1Loss(reduction="none")


def test_parameter_dtype_message():
    for dt in (torch.long, torch.bool):
        raises(
            RuntimeError,
            "Only Tensors of floating point and complex dtype can require gradients",
            lambda dt=dt: nn.Parameter(torch.ones(2, dtype=dt)),
        )
    p = nn.Parameter(torch.ones(2, dtype=torch.long), requires_grad=False)
    assert p.dtype == torch.int64 and not p.requires_grad


@pytest.mark.parametrize("init", [nn.init.kaiming_uniform_, nn.init.kaiming_normal_])
def test_kaiming_mode_message(init):
    raises(
        ValueError,
        "Mode x not supported, please use one of ['fan_in', 'fan_out']",
        lambda: init(torch.ones(2, 2), mode="x"),
    )
    raises(
        ValueError,
        "Mode fan_x not supported, please use one of ['fan_in', 'fan_out']",
        lambda: init(torch.ones(2, 2), mode="FAN_X"),
    )
    assert tuple(init(torch.ones(2, 2), mode="FAN_OUT").shape) == (2, 2)


def test_non_tensor_arguments_raise_torchs_type_errors():
    x = torch.ones(2, 3)
    with pytest.raises(
        TypeError, match=r"^relu\(\): argument 'input' \(position 1\) must be Tensor, not str$"
    ):
        F.relu("a")
    with pytest.raises(
        TypeError, match=r"^dropout\(\): argument 'input' \(position 1\) must be Tensor, not str$"
    ):
        F.dropout("a")
    with pytest.raises(
        TypeError, match=r"^linear\(\): argument 'weight' \(position 2\) must be Tensor, not str$"
    ):
        F.linear(x, "b")
    with pytest.raises(
        TypeError,
        match=r"^cross_entropy_loss\(\): argument 'target' \(position 2\) must be Tensor, not str$",
    ):
        F.cross_entropy(x, "b")
    with pytest.raises(
        TypeError,
        match=r"^nll_loss_nd\(\): argument 'target' \(position 2\) must be Tensor, not str$",
    ):
        F.nll_loss(x, "b")
    with pytest.raises(RuntimeError, match=r"^Name 'b' not found in Tensor\[None, None\]\.$"):
        F.softmax(x, "b")
