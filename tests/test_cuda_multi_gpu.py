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


# ---- Peer copies (csrc/cuda/peer_access.cpp): next_wave.md §1.11 ----


def _run(code, **env):
    """Runs ``code`` in a fresh interpreter (fresh peer-access and allocator state)."""
    import os
    import subprocess
    import sys

    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [
            os.path.dirname(os.path.dirname(os.path.abspath(cudalite.__file__))),
            full_env.get("PYTHONPATH", ""),
        ]
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_work_on_the_second_gpu_only_leaves_no_context_on_the_first():
    out = _run(
        "import ctypes, cudalite\n"
        "with cudalite.cuda.device(1):\n"
        "    t = cudalite.ones(4, device='cuda')\n"
        "    assert t.device == cudalite.device('cuda', 1)\n"
        "    assert cudalite.cuda.current_device() == 1\n"
        "    assert (t * 2).sum().item() == 8.0\n"
        "cuda = ctypes.CDLL('libcuda.so.1')\n"
        "dev, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()\n"
        "assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0\n"
        "state = cuda.cuDevicePrimaryCtxGetState\n"
        "assert state(dev, ctypes.byref(flags), ctypes.byref(active)) == 0\n"
        "print(active.value)\n",
        CUDA_MODULE_LOADING="LAZY",
    )
    assert out.strip() == "0"


@pytest.mark.parametrize("numel", [0, 1, 1000, 1 << 28])
def test_to_the_other_gpu_keeps_the_values(numel):
    x = cudalite.arange(numel, dtype=cudalite.float32, device="cuda:0")
    y = x.to("cuda:1")
    assert y.device.index == 1 and y.shape == x.shape
    back = y.to("cuda:0")
    assert bool((back == x).all().item())
    if numel:
        assert y[-1].item() == x[-1].item() and y[0].item() == 0.0


def test_copies_between_gpus_convert_and_keep_layouts():
    h = cudalite.arange(24.0).reshape(4, 6)
    x = h.cuda(0)
    t = x.t().to("cuda:1")  # transposed: the layout moves as it is
    assert t.device.index == 1 and t.stride() == x.t().stride()
    assert t.cpu().tolist() == h.t().tolist()
    half = x.to("cuda:1", dtype=cudalite.float16)
    assert half.dtype == cudalite.float16 and half.cpu().tolist() == h.half().tolist()
    b = (x > 10).to("cuda:1", dtype=cudalite.float32)
    assert b.cpu().tolist() == (h > 10).float().tolist()
    # copy_ into a strided destination on the other GPU, with a dtype change, both ways
    for src_dev, dst_dev in ((0, 1), (1, 0)):
        src = h.cuda(src_dev)
        dst = cudalite.zeros(6, 4, dtype=cudalite.float64, device=f"cuda:{dst_dev}").t()
        dst.copy_(src)
        assert dst.cpu().tolist() == h.tolist()
        sliced = cudalite.zeros(4, 12, device=f"cuda:{dst_dev}")[:, ::2]
        sliced.copy_(src)
        assert sliced.cpu().tolist() == h.tolist()


def _spin_cycles():
    # About 0.2 s of GPU time at an H100's 1.98 GHz: long enough to tell a host wait apart.
    return 400_000_000


def test_copies_between_gpus_never_block_the_host_and_are_ordered():
    import time

    for src_dev, dst_dev in ((0, 1), (1, 0)):
        x = cudalite.zeros(1 << 20, device=f"cuda:{src_dev}")
        x.to(f"cuda:{dst_dev}")  # peer access and warm-up
        cudalite.cuda.synchronize(src_dev)
        cudalite.cuda.synchronize(dst_dev)
        with cudalite.cuda.device(src_dev):
            cudalite.cuda._sleep(_spin_cycles())
        x.fill_(3.0)  # queued behind the spin on the source's stream
        t0 = time.perf_counter()
        y = x.to(f"cuda:{dst_dev}", non_blocking=True)
        elapsed = time.perf_counter() - t0
        s = y.sum()  # on the destination's stream, no host synchronisation in between
        assert s.item() == 3.0 * (1 << 20)
        assert elapsed < 0.05, f"the copy waited {elapsed:.3f} s for the source GPU"


def test_copy_into_a_destination_side_stream_is_ordered():
    x = cudalite.full((1 << 20,), 2.0, device="cuda:0")
    side = cudalite.cuda.Stream(device=1)
    with cudalite.cuda.stream(side):
        y = cudalite.empty(1 << 20, device="cuda:1")
        with cudalite.cuda.device(0):
            cudalite.cuda._sleep(_spin_cycles())
        x.mul_(2)
        y.copy_(x)
        total = y.sum()
    side.synchronize()
    assert total.item() == 4.0 * (1 << 20)


def test_peer_access_is_enabled_on_the_first_copy():
    out = _run(
        "import cudalite\n"
        "from cudalite import _C\n"
        "states = [_C._cuda._p2p_access_state(0, 1), _C._cuda._p2p_access_state(1, 0)]\n"
        "x = cudalite.ones(10, device='cuda:0')\n"
        "x.to('cuda:1')\n"
        "states += [_C._cuda._p2p_access_state(0, 1), _C._cuda._p2p_access_state(1, 0)]\n"
        "cudalite.ones(10, device='cuda:1').to('cuda:0')\n"
        "states += [_C._cuda._p2p_access_state(1, 0)]\n"
        "print(*states, int(cudalite.cuda.can_device_access_peer(0, 1)),"
        " int(cudalite.cuda.can_device_access_peer(1, 0)))\n"
    )
    before01, before10, after01, still10, after10, can01, can10 = map(int, out.split())
    assert (before01, before10) == (-1, -1)
    assert after01 == can01 and still10 == -1 and after10 == can10


def test_existing_and_new_expandable_segments_are_mapped_for_the_peer():
    code = (
        "import cudalite\n"
        "old = cudalite.zeros(3 << 20, device='cuda:1')\n"  # mapped before peer access
        "x = cudalite.arange(3 << 20, dtype=cudalite.float32, device='cuda:0')\n"
        "old.copy_(x)\n"
        "new = cudalite.zeros(5 << 20, device='cuda:1')\n"  # mapped after
        "new[: 3 << 20].copy_(x)\n"
        "back = cudalite.empty(3 << 20, device='cuda:0')\n"
        "back.copy_(new[: 3 << 20])\n"
        "assert bool((old.to('cuda:0') == x).all().item())\n"
        "assert bool((back == x).all().item())\n"
        "print('ok')\n"
    )
    assert _run(code).strip() == "ok"
    assert _run(code, CUDALITE_ALLOC_CONF="expandable_segments:False").strip() == "ok"


def test_disable_p2p_copies_without_peer_access():
    out = _run(
        "import cudalite\n"
        "from cudalite import _C\n"
        "x = cudalite.arange(1 << 20, dtype=cudalite.float32, device='cuda:0')\n"
        "y = x.to('cuda:1')\n"
        "assert bool((y.to('cuda:0') == x).all().item())\n"
        "print(_C._cuda._p2p_access_state(0, 1), _C._cuda._p2p_access_state(1, 0))\n",
        CUDALITE_DISABLE_P2P="1",
    )
    assert out.split() == ["0", "0"]


def test_peer_self_check_reports_corruption_as_an_error():
    from cudalite import _C

    _C._cuda._p2p_selfcheck(0, 1)
    _C._cuda._p2p_selfcheck(1, 0)
    with pytest.raises(
        RuntimeError, match="Peer-to-peer self-check failed.*CUDALITE_DISABLE_P2P=1"
    ):
        _C._cuda._p2p_selfcheck(0, 1, inject_fault=True)
