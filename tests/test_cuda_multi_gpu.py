"""Work on a second GPU while the first is current: kernels (each launched through one
driver handle for every device), reductions, random numbers, cuBLAS, allocation and copies
between the devices. Skipped unless two GPUs are visible."""

from __future__ import annotations

import pytest

import cudalite

pytestmark = pytest.mark.skipif(cudalite.cuda.device_count() < 2, reason="needs two CUDA GPUs")


def test_ops_on_the_second_gpu_leave_the_current_device_alone():
    x = cudalite.arange(12.0, device="cuda:1").reshape(3, 4)
    y = (x * 2 + 1).sum(dim=0)  # an elementwise kernel and a reduction on device 1
    assert y.device == cudalite.device("cuda", 1)
    assert cudalite.cuda.current_device() == 0
    assert y.tolist() == [27.0, 33.0, 39.0, 45.0]
    assert (x.t() * 1).contiguous().tolist() == [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]


def test_kernels_alternate_between_devices():
    a = cudalite.ones(1000, device="cuda:0")
    b = cudalite.ones(1000, device="cuda:1")
    for _ in range(3):
        a = a + 1
        b = b * 2
        a.add_(1)
    assert a.sum().item() == 7000.0 and a.device.index == 0
    assert b.sum().item() == 8000.0 and b.device.index == 1


def test_random_matmul_and_allocation_on_the_second_gpu():
    cudalite.manual_seed(0)
    r = cudalite.randn(4096, device="cuda:1")
    cudalite.manual_seed(0)
    r0 = cudalite.randn(4096, device="cuda:0")
    assert r.to("cuda:0").tolist() == r0.tolist()  # same seed, same numbers on each GPU
    m = cudalite.ones(64, 32, device="cuda:1")
    p = m @ m.t()
    assert p.device.index == 1 and p[0, 0].item() == 32.0
    before = cudalite.cuda.memory_allocated(1)
    z = cudalite.empty(1 << 20, device="cuda:1")
    assert cudalite.cuda.memory_allocated(1) == before + (4 << 20)
    del z
    assert cudalite.cuda.memory_allocated(1) == before


def test_copies_between_devices_and_the_host():
    h = cudalite.arange(6.0)
    d1 = h.cuda(1)
    assert d1.device == cudalite.device("cuda", 1)
    d0 = d1.to("cuda:0")
    assert d0.device.index == 0 and d0.tolist() == h.tolist()
    back = d0.to("cuda:1", non_blocking=True)
    cudalite.cuda.synchronize(1)
    assert back.cpu().tolist() == h.tolist()
    with cudalite.cuda.device(1):
        t = cudalite.tensor([1.0, 2.0], device="cuda")
        assert t.device.index == 1
    assert cudalite.cuda.current_device() == 0


def test_mixing_devices_raises_torchs_error():
    a = cudalite.ones(2, device="cuda:0")
    b = cudalite.ones(2, device="cuda:1")
    with pytest.raises(
        RuntimeError,
        match="Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cuda:1!",  # torch 2.11's text for this sum on two GPUs
    ):
        a + b
