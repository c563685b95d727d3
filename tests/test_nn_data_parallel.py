"""nn.DataParallel: without GPUs it calls the module; with two GPUs the output and the
gradients on cuda:0 equal one GPU's."""

from __future__ import annotations

import pytest

import cudalite
import cudalite.nn as nn

two_gpus = pytest.mark.skipif(cudalite.cuda.device_count() < 2, reason="needs 2 GPUs")


def mlp():
    cudalite.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def test_without_gpus_it_is_the_module():
    if cudalite.cuda.is_available():
        pytest.skip("GPUs present")
    m = mlp()
    dp = nn.DataParallel(m)
    x = cudalite.randn(4, 6)
    assert dp.device_ids == [] and dp.module is m
    assert cudalite.equal(dp(x), m(x))
    assert list(dp.state_dict())[0].startswith("module.")


@two_gpus
def test_output_and_grads_equal_one_gpu():
    x = cudalite.randn(8, 6)
    ref = mlp().cuda(0)
    ref(x.cuda(0)).pow(2).sum().backward()
    m = mlp().cuda(0)
    dp = nn.DataParallel(m, device_ids=[0, 1])
    y = dp(x)
    assert y.device == cudalite.device("cuda:0") and y.shape == (8, 3)
    assert cudalite.allclose(y, ref(x.cuda(0)), atol=1e-6)
    y.pow(2).sum().backward()
    for p, q in zip(m.parameters(), ref.parameters(), strict=True):
        assert p.grad.device == cudalite.device("cuda:0")
        assert cudalite.allclose(p.grad, q.grad, atol=1e-5)


@two_gpus
def test_parameters_on_the_wrong_device_are_refused():
    dp = nn.DataParallel(mlp().cuda(1), device_ids=[0, 1])
    with pytest.raises(RuntimeError) as e:
        dp(cudalite.randn(4, 6))
    assert str(e.value) == (
        "module must have its parameters and buffers on device cuda:0 (device_ids[0]) but "
        "found one of them on device: cuda:1"
    )


@two_gpus
def test_scatter_gather_nested():
    from cudalite.nn.parallel import gather, scatter

    x = cudalite.arange(8.0).reshape(4, 2)
    parts = scatter({"a": x, "b": [x, 3]}, [0, 1])
    assert len(parts) == 2 and parts[1]["b"][1] == 3
    assert parts[1]["a"].device == cudalite.device("cuda:1")
    back = gather([p["a"] for p in parts], "cpu")
    assert back.tolist() == x.tolist()


def test_replica_with_plain_attribute_parameters_runs_forward(device):
    """A DataParallel replica keeps its parameters as plain attributes, not in _parameters
    (torch's _replicate_for_data_parallel): Linear and Conv2d still find them."""
    cudalite.manual_seed(0)
    lin, conv = nn.Linear(6, 3).to(device), nn.Conv2d(2, 4, 3).to(device)
    x, img = cudalite.randn(2, 6, device=device), cudalite.randn(1, 2, 5, 5, device=device)
    want_lin, want_conv = lin(x), conv(img)
    for m in (lin, conv):
        w, b = m.weight, m.bias
        del m.weight, m.bias
        m.weight, m.bias = w * 1, b * 1  # non-leaf tensors, as replicate() sets them
        assert "weight" not in m._parameters
    assert cudalite.equal(lin(x), want_lin)
    assert cudalite.equal(conv(img), want_conv)
