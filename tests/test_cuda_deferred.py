"""Deferred launches of small elementwise ops (Note [Deferred launches] in
csrc/cuda/deferred.cpp): the batch keeps program order with everything else that touches a
stream, gives the regular loops' results bit for bit, and never holds work on memory that
other code can see."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import cudalite
from cudalite import _C

HAS_CUDA = cudalite.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")


def pending():
    return _C._cuda._deferred_ops_pending()


def made(t):
    """`t` with the batch that made it launched."""
    _C._cuda._flush_deferred()
    return t


@pytest.fixture(autouse=True)
def flushed():
    if HAS_CUDA:
        cudalite.cuda.synchronize()
    yield


def test_entry_points_are_inert_without_a_batch():
    # Without a GPU (or a CUDA build) nothing is ever deferred; exporting CPU memory is free.
    if not HAS_CUDA:
        assert _C._cuda._deferred_ops_pending() == 0
        _C._cuda._flush_deferred()
    x = cudalite.arange(4.0)
    x.data_ptr()
    x.add_(1)
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert pending() == 0


@requires_cuda
def test_small_ops_wait_in_the_batch_until_a_sync():
    # (made() flushes what creating a tensor may have deferred: a fill is a cast.)
    x = made(cudalite.ones(4, device="cuda"))
    assert pending() == 0
    y = x + 1
    y.mul_(3)
    assert pending() == 2
    assert y.tolist() == [6.0] * 4  # the copy to the host launches the batch first
    assert pending() == 0


@requires_cuda
def test_long_chains_cross_full_batches_in_order():
    x = cudalite.zeros(3, device="cuda")
    for i in range(1000):
        x.add_(1)
        if i % 7 == 0:
            x.mul_(1.0)
    assert x.tolist() == [1000.0] * 3


def same_bits(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    a, b = a.cpu().reshape(-1), b.cpu().reshape(-1)
    if a.dtype == cudalite.bfloat16:
        a, b = a.view(cudalite.int16), b.view(cudalite.int16)
    np.testing.assert_array_equal(a.numpy().view(np.uint8), b.numpy().view(np.uint8), what)


def one_by_one(f, *args):
    """f's result with every op launched as its own kernel (the regular loops)."""
    was = _C._cuda._set_deferred_launches(False)
    try:
        return f(*args)
    finally:
        _C._cuda._set_deferred_launches(was)


def values(dtype, n=37):
    """n values offset by one element in memory, so reductions walk an unaligned head."""
    return made(((cudalite.arange(n + 1, device="cuda") * 7) % 17 - 8).to(dtype)[1:])


ELEMENTWISE = {
    "add": lambda a: a + 3,
    "mul sub": lambda a: a * a - 1,
    "div": lambda a: (a * 2) // 3 if not a.is_floating_point() else a / 3,
    "abs": lambda a: a.abs(),
    "compare": lambda a: a > 0,
    "where": lambda a: cudalite.where(a > 0, a, a * 2),
    "cast": lambda a: a.to(cudalite.float64),
    "maximum": lambda a: cudalite.maximum(a, a - 2),
    "in place": lambda a: a.clone().mul_(2).add_(a, alpha=3),
}
FLOATING = {
    "exp": lambda a: a.exp(),
    "sigmoid": lambda a: a.sigmoid(),
    "sin": lambda a: (a * 0.1).sin(),
    "pow": lambda a: a**2,
}
REDUCTIONS = {
    "sum": lambda a: a.sum(),
    "prod": lambda a: (a.abs() + 1).prod() if a.is_floating_point() else (a % 2 + 1).prod(),
    "max": lambda a: a.max(),
    "min": lambda a: a.min(),
    "argmax": lambda a: a.argmax(),
    "argmin": lambda a: a.argmin(),
    "max(dim)": lambda a: a.max(dim=0),
    "all": lambda a: a.all(),
    "any": lambda a: (a > 5).any(),
    "sum of rows": lambda a: a.reshape(1, -1).sum(dim=1),
}
FLOAT_REDUCTIONS = {
    "mean": lambda a: a.mean(),
    "norm": lambda a: a.norm(),
    "var": lambda a: a.var(),
}


@requires_cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64"])
def test_results_match_the_regular_loops_bit_for_bit(dtype):
    x = values(getattr(cudalite, dtype))
    ops = {**ELEMENTWISE, **REDUCTIONS}
    if x.is_floating_point():
        ops.update(FLOATING)
        ops.update(FLOAT_REDUCTIONS)
    for name, f in ops.items():
        got, want = f(x), one_by_one(f, x)
        for g, w in zip(
            *((got, want) if isinstance(got, tuple) else ((got,), (want,))), strict=True
        ):
            same_bits(g, w, name)


@requires_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_one_element_tensors_broadcast_in_the_batch(dtype):
    x = values(getattr(cudalite, dtype), n=9)
    s = made(cudalite.full((1,), 3, device="cuda", dtype=x.dtype))
    ops = {
        "x * s": lambda: x * s,
        "s - x": lambda: s - x,
        "expanded": lambda: cudalite.where(x > 0, x, s.expand(9)),
        "in place": lambda: x.clone().sub_(s),
    }
    for name, f in ops.items():
        got = f()
        assert pending() >= 1, name
        same_bits(got, one_by_one(f), name)
    m = made(cudalite.ones(3, 3, device="cuda", dtype=x.dtype))
    m + m[0]  # a row broadcast over rows: launched as usual
    assert pending() == 0


@requires_cuda
def test_reductions_are_deferred():
    x = made(cudalite.arange(100, device="cuda", dtype=cudalite.float32))
    s = x.sum()
    m = x.max()
    i = x.argmin()
    assert pending() == 3
    assert (s.item(), m.item(), i.item()) == (4950.0, 99.0, 0)
    big = made(cudalite.ones(2048, device="cuda"))
    big.sum()
    assert pending() == 0


@requires_cuda
def test_optimizer_updates_are_deferred():
    # _C._fma, the optimizers' update p + alpha * g rounded once, joins the batch like the
    # table's ops, with the same bits as its own loop.
    p = made(cudalite.linspace(-1, 1, 100, device="cuda"))
    g = made(cudalite.linspace(3, 0.5, 100, device="cuda"))
    got = _C._fma(g, -0.1, p, None)
    assert pending() == 1
    want = one_by_one(lambda: _C._fma(g, -0.1, p, None))
    assert np.array_equal(got.cpu().numpy(), want.cpu().numpy())


@requires_cuda
def test_interleaved_with_launched_work():
    x = cudalite.full((8,), 2.0, device="cuda")
    big = cudalite.ones(1 << 16, device="cuda")
    y = x * 5  # deferred
    big.mul_(y[:1].expand(1 << 16).contiguous())  # a real launch reads y: ordered after it
    y.add_(1)  # deferred again
    assert big[:3].tolist() == [10.0] * 3
    assert y.tolist() == [11.0] * 8


@requires_cuda
def test_other_streams_see_the_work_through_events():
    x = cudalite.zeros(16, device="cuda")
    s = cudalite.cuda.Stream()
    x.add_(7)  # deferred on the default stream
    s.wait_stream(cudalite.cuda.current_stream())  # records an event: flushes first
    with cudalite.cuda.stream(s):
        y = x * 2  # deferred on s: the default stream's batch is launched first
    cudalite.cuda.current_stream().wait_stream(s)
    assert y.tolist() == [14.0] * 16


@requires_cuda
def test_event_timing_covers_the_batch():
    start = cudalite.cuda.Event(enable_timing=True)
    end = cudalite.cuda.Event(enable_timing=True)
    x = cudalite.zeros(4, device="cuda")
    start.record()
    for _ in range(10):
        x.add_(1)
    end.record()
    assert pending() == 0
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    assert x.tolist() == [10.0] * 4


@requires_cuda
def test_stream_query_and_synchronize_launch_the_batch():
    x = cudalite.zeros(2, device="cuda")
    x.add_(1)
    cudalite.cuda.current_stream().synchronize()
    assert pending() == 0
    x.add_(1)
    cudalite.cuda.current_stream().query()
    assert pending() == 0
    assert x.tolist() == [2.0, 2.0]


@requires_cuda
def test_exported_memory_is_never_deferred():
    x = made(cudalite.zeros(4, device="cuda"))
    x.add_(1)
    assert pending() == 1
    x.data_ptr()  # the address leaves cudalite: the batch is launched
    assert pending() == 0
    x.add_(1)
    (x + 1).sum()
    y = cudalite.ones(4, device="cuda") * x  # any operand exported: launched
    assert pending() == 0
    z = made(cudalite.ones(4, device="cuda"))
    z.add_(1)
    assert pending() == 1
    z[1:].untyped_storage().data_ptr()  # views share the storage's mark
    assert pending() == 0
    z.add_(1)
    assert pending() == 0
    assert y.tolist() == [2.0] * 4


@requires_cuda
def test_cuda_array_interface_and_dlpack_export():
    x = cudalite.zeros(4, device="cuda")
    x.add_(1)
    assert x.__cuda_array_interface__["version"] == 3
    assert pending() == 0
    x.add_(1)
    assert pending() == 0
    y = cudalite.zeros(4, device="cuda")
    y.add_(1)
    y.__dlpack__()
    assert pending() == 0
    y.add_(1)
    assert pending() == 0
    z = cudalite.from_dlpack(cudalite.zeros(4, device="cuda"))  # shares the memory it wraps
    z.add_(1)
    assert pending() == 0


@requires_cuda
def test_cupy_sees_updates_made_after_it_took_the_array():
    cupy = pytest.importorskip("cupy")
    x = cudalite.zeros(4, device="cuda")
    cx = cupy.asarray(x)
    x.add_(5)  # exported: launched now, before CuPy's kernel below
    assert float(cx.sum()) == 20.0
    t = cupy.arange(4, dtype=cupy.float32)
    y = cudalite.from_dlpack(t)
    y.mul_(2)
    assert cupy.asnumpy(t).tolist() == [0.0, 2.0, 4.0, 6.0]


@requires_cuda
def test_large_and_strided_ops_are_launched_as_usual():
    x = made(cudalite.zeros(2048, device="cuda"))
    x.add_(1)
    assert pending() == 0
    m = made(cudalite.zeros(4, 4, device="cuda"))
    m[:, ::2].add_(1)  # not dense
    assert pending() == 0
    m.add_(cudalite.ones(4, device="cuda"))  # broadcast
    assert pending() == 0


@requires_cuda
def test_freed_memory_reused_and_released_in_order():
    x = cudalite.arange(8, device="cuda", dtype=cudalite.float32)
    for i in range(200):
        y = x + i  # each result's block is freed and reused by the next one
        z = y * 2
    assert z.tolist() == [2.0 * (v + 199) for v in range(8)]
    big = cudalite.empty(64 << 20, dtype=cudalite.uint8, device="cuda")
    w = x * 3
    del big, w
    cudalite.cuda.empty_cache()  # returning memory waits for the stream: the batch goes first
    assert z.tolist() == [2.0 * (v + 199) for v in range(8)]


@requires_cuda
def test_threads_share_the_batch_safely():
    errors = []

    def work(k):
        try:
            t = cudalite.full((5,), float(k), device="cuda")
            for _ in range(300):
                t.add_(1)
            assert t.tolist() == [k + 300.0] * 5
        except Exception as e:  # noqa: BLE001 (collected for the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@requires_cuda
def test_launches_one_by_one_when_turned_off():
    code = (
        "import cudalite\nfrom cudalite import _C\n"
        "x = cudalite.zeros(3, device='cuda')\nx.add_(1)\n"
        "print(_C._cuda._deferred_ops_pending(), x.tolist())\n"
    )
    for env, want in (
        ({"CUDALITE_DEFER_LAUNCHES": "0"}, "0"),
        ({"CUDA_LAUNCH_BLOCKING": "1"}, "0"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out.strip() == f"{want} [1.0, 1.0, 1.0]"


@requires_cuda
def test_random_draws_are_the_same_with_and_without_the_batch():
    """Random fills reserve their Philox offsets when called, so small ops waiting in the
    batch around them change no number drawn."""
    code = (
        "import cudalite\n"
        "cudalite.manual_seed(3)\n"
        "x = cudalite.zeros(5, device='cuda')\n"
        "out = []\n"
        "for n in (3, 17, 1000):\n"
        "    x.add_(1)\n"
        "    r = cudalite.rand(n, device='cuda') + x.sum()\n"
        "    out += cudalite.randn(n, device='cuda').tolist() + r.tolist()\n"
        "print(out, cudalite.cuda.get_rng_state().tolist())\n"
    )
    outs = [
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "CUDALITE_DEFER_LAUNCHES": flag},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for flag in ("1", "0")
    ]
    assert outs[0] == outs[1]
