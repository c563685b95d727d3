"""cudalite.cuda.comm (torch.cuda.comm): argument errors checked on the CPU with torch's
messages; the copies and reductions themselves across two GPUs."""

from __future__ import annotations

import warnings

import pytest

import cudalite
from cudalite.cuda import comm

two_gpus = pytest.mark.skipif(cudalite.cuda.device_count() < 2, reason="needs 2 GPUs")


def test_comm_is_torchs_namespace():
    assert cudalite.cuda.comm.broadcast is cudalite.nn.parallel.comm.broadcast
    assert set(comm.__all__) == {
        "broadcast",
        "broadcast_coalesced",
        "reduce_add",
        "reduce_add_coalesced",
        "scatter",
        "gather",
    }


def test_broadcast_needs_exactly_one_of_devices_and_out():
    with pytest.raises(RuntimeError) as e:
        comm.broadcast(cudalite.ones(2))
    assert str(e.value) == (
        "Exactly one of 'devices' and 'out' must be specified, but got devices=None and out=None"
    )
    with pytest.raises(RuntimeError, match=r"but got devices=\[0\] and out=\[tensor"):
        comm.broadcast(cudalite.ones(2), devices=[0], out=[cudalite.ones(2)])


def test_broadcast_out_must_be_cuda():
    with pytest.raises(RuntimeError) as e:
        comm.broadcast(cudalite.ones(2), out=[cudalite.ones(2)])
    assert str(e.value) == (
        "Expected all output tensors to be CUDA tensors, but output tensor at index 0 has "
        "device 'cpu'"
    )


def test_reduce_add_errors():
    with pytest.raises(AssertionError) as e:
        comm.reduce_add([cudalite.ones(2), cudalite.ones(2)])
    assert str(e.value) == "reduce_add expects all inputs to be on GPUs, but input 0 is on CPU"


def test_gather_errors():
    with pytest.raises(RuntimeError) as e:
        comm.gather([cudalite.ones(2), cudalite.ones(2)])
    assert str(e.value) == (
        "Expected all input tensors to be CUDA tensors, but tensor at index 0 has device cpu"
    )
    with pytest.raises(RuntimeError) as e:
        comm.gather([cudalite.ones(2)], destination=0, out=cudalite.ones(2))
    assert str(e.value) == (
        "'destination' must not be specified when 'out' is specified, but got destination=0"
    )
    with pytest.raises(RuntimeError, match="Expected at least one tensor to gather from"):
        comm.gather([], out=cudalite.ones(2))


def test_scatter_errors():
    with pytest.raises(RuntimeError) as e:
        comm.scatter(cudalite.ones(4), devices=[0, 1], chunk_sizes=[1, 2])
    assert str(e.value) == (
        "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at "
        "dimension 0), but got split_sizes=[1, 2]"
    )
    with pytest.raises(RuntimeError) as e:
        comm.scatter(cudalite.ones(4), devices=[0, 1], out=[cudalite.ones(2)])
    assert str(e.value) == (
        "'devices' must not be specified when 'out' is specified, but got devices=[0, 1]"
    )
    with pytest.raises(RuntimeError, match="'chunk_sizes' must not be specified"):
        comm.scatter(cudalite.ones(4), chunk_sizes=[2, 2], out=[cudalite.ones(2)])


# ---- two GPUs ----


@two_gpus
@pytest.mark.parametrize("dtype", [cudalite.float32, cudalite.float16, cudalite.int64])
def test_broadcast_and_coalesced(dtype):
    x = cudalite.arange(10).to(dtype).cuda(0)
    a, b = comm.broadcast(x, devices=[0, 1])
    assert a is x and b.device == cudalite.device("cuda:1") and b.cpu().tolist() == x.tolist()
    out = [cudalite.empty_like(x, device="cuda:1")]
    comm.broadcast(x, out=out)
    assert out[0].cpu().tolist() == x.tolist()
    ts = [cudalite.arange(n).to(dtype).cuda(0) for n in (3, 5, 7)]
    r0, r1 = comm.broadcast_coalesced(ts, [0, 1], buffer_size=16)
    assert all(a is b for a, b in zip(r0, ts, strict=True))
    assert [t.cpu().tolist() for t in r1] == [t.cpu().tolist() for t in ts]
    assert all(t.device == cudalite.device("cuda:1") for t in r1)


@two_gpus
def test_reduce_add_and_coalesced():
    a = cudalite.ones((2, 3), device="cuda:0")
    b = cudalite.full((2, 3), 2.0, device="cuda:1")
    s = comm.reduce_add([a, b], destination=1)
    assert s.device == cudalite.device("cuda:1") and s.cpu().tolist() == [[3.0] * 3] * 2
    with pytest.raises(ValueError) as e:
        comm.reduce_add([a, cudalite.ones((3, 2), device="cuda:1")])
    assert str(e.value) == "input 1 has invalid size: got 3x2, but expected 2x3"
    with pytest.raises(RuntimeError, match="reduce_add expects destination to be on the same"):
        comm.reduce_add([a, b.cuda(0)], destination=1)
    r = comm.reduce_add_coalesced([[a, a[0]], [b, b[0]]], destination=0, buffer_size=8)
    assert [t.cpu().tolist() for t in r] == [[[3.0] * 3] * 2, [3.0] * 3]


@two_gpus
def test_scatter_and_gather_round_trip():
    x = cudalite.arange(12.0).reshape(6, 2)
    parts = comm.scatter(x, devices=[0, 1], chunk_sizes=[2, 4])
    assert [p.device.index for p in parts] == [0, 1] and [p.shape[0] for p in parts] == [2, 4]
    back = comm.gather(parts, dim=0, destination="cpu")
    assert back.tolist() == x.tolist()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        back = comm.gather(parts, destination=-1)
    assert back.device.type == "cpu" and "deprecated" in str(w[0].message)
    with pytest.raises(RuntimeError, match="Input tensor at index 1 has invalid shape"):
        comm.gather([parts[0], cudalite.ones((4, 3), device="cuda:1")])
