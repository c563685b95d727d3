"""A view's grad_fn after its base (or another view of it) was modified in place, against
torch 2.11: the node is remade as AsStridedBackward0 of the base's new history, so gradients
see the write; views made in no_grad mode and outputs of split/unbind raise torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite
from conftest import to_np

NOGRAD_MSG = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked)."
)
INFERENCE_MSG = (
    "A view was created in inference mode and its base or another view of its base has been "
    "modified inplace in normal mode. Given that this use case is ambiguous and error-prone, it "
    "is forbidden. You can clarify your code by moving both the view and the inplace either both "
    "inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)
SPLIT_MSG = (
    "Output 1 of SplitBackward0 is a view and its base or another view of its base has been "
    "modified inplace. This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one."
)


def leaf(device):
    return cudalite.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)


def raises(fn, msg):
    with pytest.raises(RuntimeError) as e:
        fn()
    assert str(e.value) == msg


def test_view_sees_a_later_write_to_its_base(device):
    x = leaf(device)
    y = x * 1
    v = y[0:2]
    y.mul_(2)
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    v.sum().backward()
    assert to_np(x.grad).tolist() == [2.0, 2.0, 0.0]  # SliceBackward0's old path gave 1s


def test_view_sees_a_write_through_another_view(device):
    x = leaf(device)
    y = x * 1
    v, w = y[0:2], y[1:3]
    w.mul_(2)
    names = [type(t.grad_fn).__name__ for t in (v, y, w)]
    assert names == ["AsStridedBackward0", "CopySlices", "AsStridedBackward0"]
    (v * cudalite.tensor([1.0, 10.0], device=device)).sum().backward()
    assert to_np(x.grad).tolist() == [1.0, 20.0, 0.0]


def test_write_under_no_grad_remakes_the_node(device):
    x = leaf(device)
    y = x * 1
    v = y.t()[0:2].unsqueeze(0)
    with cudalite.no_grad():
        y.mul_(2)
    fn = v.grad_fn
    assert type(fn).__name__ == "AsStridedBackward0" and v.grad_fn is fn  # made once
    v.sum().backward()
    assert to_np(x.grad).tolist() == [1.0, 1.0, 0.0]


def test_view_of_a_leaf_after_a_write_under_no_grad(device):
    x = leaf(device)
    v = x[1:]
    with cudalite.no_grad():
        x.mul_(2)
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    (v * v).sum().backward()
    assert to_np(x.grad).tolist() == [0.0, 8.0, 12.0]


def test_unchanged_view_keeps_its_node(device):
    x = leaf(device)
    y = x * 1
    v = y[0]
    z = y.clone()
    z.mul_(2)  # another tensor's write
    assert type(v.grad_fn).__name__ == "SelectBackward0" and v.grad_fn is v.grad_fn


def test_view_of_a_permuted_base(device):
    x = cudalite.arange(6.0, device=device).reshape(2, 3).requires_grad_()
    y = x.t() * 1  # laid out like x.t(): not contiguous
    v = y[1]
    y.add_(1)
    v.sum().backward(cudalite.tensor(1.0, device=device))
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    assert to_np(x.grad).tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]


def test_saved_view_names_its_new_node(device):
    x = leaf(device)
    u = x * 1
    v = u.view(-1).view(3)
    r = v.sin()
    u.mul_(2)
    msg = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{'cudalite.cuda.' if device == 'cuda' else 'cudalite.'}FloatTensor [3]], "
        "which is output 0 of AsStridedBackward0, is at version 1; expected version 0 instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )
    raises(lambda: r.sum().backward(), msg)


@pytest.mark.parametrize("grad_mode", [True, False])
def test_split_output_after_its_base_changed(device, grad_mode):
    x = cudalite.randn(4, device=device, requires_grad=True)
    y = x * 1
    _, b = y.split(2)
    z = b * b
    with cudalite.set_grad_enabled(grad_mode):
        y.add_(1)
    raises(lambda: b.grad_fn, SPLIT_MSG)
    raises(lambda: z.sum().backward(), SPLIT_MSG)


NOGRAD_USES = {
    "grad_fn": lambda v: v.grad_fn,
    "is_leaf": lambda v: v.is_leaf,
    "op": lambda v: v * 2,
    "backward": lambda v: v.backward(cudalite.ones(2, device=v.device)),
    "register_hook": lambda v: v.register_hook(lambda g: g),
}


@pytest.mark.parametrize("use", NOGRAD_USES)
@pytest.mark.parametrize("where", ["base", "sibling", "base_no_grad"])
def test_no_grad_view_after_its_base_changed(device, use, where):
    x = leaf(device)
    y = x * 1
    with cudalite.no_grad():
        v = y[0:2]
        w = y[1:3]
    if where == "base":
        y.mul_(2)
    elif where == "sibling":
        with cudalite.no_grad():
            w.mul_(2)
    else:
        with cudalite.no_grad():
            y.mul_(2)
    raises(lambda: NOGRAD_USES[use](v), NOGRAD_MSG)
    assert v.requires_grad
    assert repr(v).endswith("grad_fn=<Invalid>)")
    with cudalite.no_grad():
        assert to_np(v + 1).tolist() == to_np(y[0:2].detach() + 1).tolist()


def test_no_grad_view_of_a_leaf(device):
    x = leaf(device)
    with cudalite.no_grad():
        v = x[0:2]
    assert v.grad_fn is None and v.requires_grad
    with cudalite.no_grad():
        x.mul_(2)
    raises(lambda: v.grad_fn, NOGRAD_MSG)


def test_view_of_a_no_grad_view(device):
    x = leaf(device)
    y = x * 1
    with cudalite.no_grad():
        v = y[0:2]
    u = v[0:1]  # made in grad mode
    y.mul_(2)
    msg = NOGRAD_MSG.replace(
        "A view was created", "Output 0 of SliceBackward0 is a view of a view which was created"
    )
    raises(lambda: u.grad_fn, msg)


def test_inference_mode_view(device):
    x = leaf(device)
    y = x * 1
    with cudalite.inference_mode():
        v = y[0:2]
    y.mul_(2)
    raises(lambda: v.grad_fn, INFERENCE_MSG)


def test_unchanged_no_grad_view_is_a_leaf(device):
    x = leaf(device)
    with cudalite.no_grad():
        v = x[0:2]
    y = x * 1  # not a write
    assert v.grad_fn is None and v.is_leaf and y.grad_fn is not None
    np.testing.assert_allclose(to_np(v.detach()), [1.0, 2.0])
