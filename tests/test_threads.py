"""Ops from several Python threads at once: large ops run without the GIL (Note [Releasing the
GIL] in csrc/bindings/gil.h), so these threads really do run the core concurrently. Results are
checked against NumPy; generators, version counters, autograd and the allocator must stay
consistent."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import cudalite
from conftest import HAS_CUDA, to_np

# Above the size from which ops give up the GIL (kReleaseGilNumel, 2**15 elements).
N = 1 << 17


def run_threads(target, n):
    """Runs target(i) on n threads started together; re-raises the first failure."""
    errors = []
    start = threading.Barrier(n)

    def body(i):
        try:
            start.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def test_elementwise_reductions_and_copies_from_8_threads(device):
    def work(i):
        rng = np.random.default_rng(i)
        na = rng.standard_normal(N).astype(np.float32)
        nb = rng.standard_normal(N).astype(np.float32)
        a = cudalite.tensor(na, device=device)
        b = cudalite.tensor(nb, device=device)
        for _ in range(5):
            np.testing.assert_allclose(to_np(a + b), na + nb, rtol=1e-6)
            np.testing.assert_allclose(to_np(2.5 - a), 2.5 - na, rtol=1e-6)
            np.testing.assert_allclose(to_np(-a), -na)
            np.testing.assert_allclose(to_np(a.exp()), np.exp(na), rtol=1e-5)
            np.testing.assert_allclose(to_np(cudalite.maximum(a, b)), np.maximum(na, nb))
            np.testing.assert_allclose(to_np(a.clamp(-0.5, 0.5)), np.clip(na, -0.5, 0.5))
            np.testing.assert_allclose(
                to_np(cudalite.where(a > b, a, b)), np.where(na > nb, na, nb)
            )
            np.testing.assert_allclose(float(a.sum()), na.sum(dtype=np.float64), rtol=1e-4)
            m = a.reshape(256, -1)
            # Row sums in float32, in the kernel's order: compared within float32's rounding
            # of the rows' magnitude (a row summing to nearly 0 has no relative accuracy).
            rows = na.reshape(256, -1).astype(np.float64)
            tol = 1e-6 * np.abs(rows).sum(1).max()
            np.testing.assert_allclose(to_np(m.sum(1)), rows.sum(1), rtol=1e-4, atol=tol)
            v, idx = m.max(1)
            np.testing.assert_array_equal(to_np(v), na.reshape(256, -1).max(1))
            np.testing.assert_array_equal(to_np(idx), na.reshape(256, -1).argmax(1))
            np.testing.assert_array_equal(to_np(a.to(cudalite.float64)), na.astype(np.float64))
            np.testing.assert_array_equal(to_np(m.t().contiguous()), na.reshape(256, -1).T)
            np.testing.assert_array_equal(to_np(m.t().reshape(-1)), na.reshape(256, -1).T.ravel())
            np.testing.assert_array_equal(to_np(a.clone()), na)
            np.testing.assert_array_equal(to_np(cudalite.cat([a, b])), np.concatenate([na, nb]))
            np.testing.assert_array_equal(to_np(cudalite.stack([a, b])), np.stack([na, nb]))
            np.testing.assert_array_equal(to_np((a > 0).nonzero()), np.argwhere(na > 0))

    run_threads(work, 8)


def test_in_place_ops_and_versions_from_8_threads(device):
    def work(i):
        na = np.arange(N, dtype=np.float32) + i
        a = cudalite.tensor(na, device=device)
        v0 = a._version
        a += 1
        a.mul_(2)
        a.sub_(cudalite.ones(N, device=device))
        cudalite.add(a, 3, out=a)
        a.copy_(a * 1)
        np.testing.assert_array_equal(to_np(a), (na + 1) * 2 - 1 + 3)
        assert a._version == v0 + 5
        a.fill_(float(i))
        np.testing.assert_array_equal(to_np(a), np.full(N, i, np.float32))
        assert a._version == v0 + 6

    run_threads(work, 8)


def test_threads_writing_disjoint_slices_of_one_tensor(device):
    n = 8
    shared = cudalite.zeros(n, N, device=device)

    def work(i):
        row = shared[i]
        for _ in range(4):
            row.add_(cudalite.full((N,), float(i + 1), device=device))

    run_threads(work, n)
    expected = np.repeat(4.0 * (np.arange(n, dtype=np.float32) + 1)[:, None], N, axis=1)
    np.testing.assert_array_equal(to_np(shared), expected)


def test_index_ops_from_8_threads(device):
    def work(i):
        rng = np.random.default_rng(100 + i)
        na = rng.standard_normal(N).astype(np.float32)
        nidx = rng.integers(0, N, size=N)
        a = cudalite.tensor(na, device=device)
        idx = cudalite.tensor(nidx, device=device)
        for _ in range(3):
            np.testing.assert_array_equal(to_np(a[idx]), na[nidx])
            np.testing.assert_array_equal(to_np(a[a > 0]), na[na > 0])
            b = a.clone()
            nb = na.copy()
            b[idx] = 0.5
            nb[nidx] = 0.5
            np.testing.assert_array_equal(to_np(b), nb)
            b.index_put_((idx,), cudalite.ones(N, device=device), accumulate=True)
            np.add.at(nb, nidx, 1.0)
            np.testing.assert_allclose(to_np(b), nb, rtol=1e-6)

    run_threads(work, 8)


def test_factories_from_8_threads(device):
    def work(i):
        for _ in range(5):
            np.testing.assert_array_equal(
                to_np(cudalite.full((N,), float(i), device=device)), np.full(N, i, np.float32)
            )
            np.testing.assert_array_equal(
                to_np(cudalite.arange(N, device=device)), np.arange(N, dtype=np.int64)
            )
            np.testing.assert_allclose(
                to_np(cudalite.linspace(0, 1, N, device=device)),
                np.linspace(0, 1, N, dtype=np.float32),
                atol=1e-6,
            )
            np.testing.assert_array_equal(to_np(cudalite.eye(512, device=device)), np.eye(512))

    run_threads(work, 8)


def test_random_fills_from_threads_draw_disjoint_parts_of_one_stream(device):
    """Two threads drawing from one generator get disjoint parts of its stream, and the
    generator ends where one thread's draws would leave it. On the CPU (one mt19937 stream)
    the parts are consecutive: together exactly what one thread drawing everything gets."""
    g = cudalite.Generator(device=device)
    g.manual_seed(1234)
    sizes = [N + 4 * k for k in range(6)]
    draws = [[] for _ in range(2)]

    def work(i):
        for n in sizes[i::2]:
            draws[i].append(to_np(cudalite.rand(n, device=device, generator=g)))

    run_threads(work, 2)
    ref = cudalite.Generator(device=device)
    ref.manual_seed(1234)
    if device == "cuda":  # each draw reserves its own Philox offsets, whatever the order
        for n in sizes:
            cudalite.rand(n, device=device, generator=ref)
        assert g.get_state().tolist() == ref.get_state().tolist()
        firsts = [d[0] for d in draws[0] + draws[1]]
        assert len(set(firsts)) == len(firsts)
        return
    stream = to_np(cudalite.rand(sum(sizes), device=device, generator=ref))
    assert g.get_state().tolist() == ref.get_state().tolist()
    covered = np.zeros(len(stream), bool)
    for d in draws[0] + draws[1]:
        starts = np.flatnonzero(stream == d[0])
        assert any(np.array_equal(stream[s : s + len(d)], d) for s in starts)
        s = next(s for s in starts if np.array_equal(stream[s : s + len(d)], d))
        assert not covered[s : s + len(d)].any()
        covered[s : s + len(d)] = True
    assert covered.all()


def test_normal_and_integer_fills_from_threads(device):
    def work(i):
        g = cudalite.Generator(device=device)
        for _ in range(4):
            g.manual_seed(i)
            x = cudalite.randn(N, device=device, generator=g)
            g.manual_seed(i)
            y = cudalite.empty(N, device=device).normal_(generator=g)
            np.testing.assert_array_equal(to_np(x), to_np(y))
            r = cudalite.randint(0, 10, (N,), device=device)
            nr = to_np(r)
            assert nr.min() >= 0 and nr.max() < 10

    run_threads(work, 4)


def test_products_sorts_convs_scans_and_casts_from_8_threads(device):
    """Ops whose kernels are more than a loop over elements give, from 8 threads at once,
    what one thread computing alone gets: the same bits on the CPU; on CUDA, where atomic
    sums (scatter_add) and the libraries' algorithms may order additions differently from
    call to call, the same within float32 rounding."""
    F = cudalite.nn.functional
    g = cudalite.Generator(device=device).manual_seed(3)
    m = cudalite.randn(256, 512, device=device, generator=g)
    w = cudalite.randn(512, 384, device=device, generator=g)
    images = cudalite.randn(2, 8, 48, 48, device=device, generator=g)
    kernel = cudalite.randn(8, 8, 3, 3, device=device, generator=g)
    flat = m.reshape(-1)
    idx = cudalite.randint(0, flat.numel(), (N,), device=device, generator=g)
    rows = cudalite.randint(0, 512, (256, 512), device=device, generator=g)
    ops = {
        "matmul": lambda: m @ w,
        "linear": lambda: F.linear(m, w.t()),
        "sort": lambda: flat.sort()[0],
        "argsort_dim": lambda: m.argsort(1),
        "topk": lambda: flat.topk(100)[1],
        "conv2d": lambda: F.conv2d(images, kernel, padding=1),
        "max_pool2d": lambda: F.max_pool2d(images, 2),
        "cumsum": lambda: m.cumsum(1),
        "softmax": lambda: m.softmax(1),
        "layer_norm": lambda: F.layer_norm(m, (512,)),
        "half": lambda: m.half(),
        "double": lambda: m.double(),
        "int": lambda: (m * 100).int(),
        "index_select": lambda: flat.index_select(0, idx),
        "gather": lambda: m.gather(1, rows),
        "scatter_add": lambda: cudalite.zeros_like(m).scatter_add_(
            1, rows[:, :1].expand(-1, 512), m
        ),
        "outer": lambda: cudalite.outer(flat[:512], flat[512:1024]),
        "permute": lambda: images.permute(0, 2, 3, 1).contiguous(),
    }
    expected = {k: to_np(op()) for k, op in ops.items()}

    def check(got, want, name):
        if device == "cpu":
            np.testing.assert_array_equal(got, want, err_msg=name)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=name)

    def work(i):
        names = list(ops)
        for k in range(2 * len(names)):
            name = names[(i + k) % len(names)]
            check(to_np(ops[name]()), expected[name], name)

    run_threads(work, 8)


def test_random_fills_with_own_generators_from_threads_with_several_host_threads(device):
    """randn shares its Box-Muller blocks out over the host threads: threads filling at once
    (one of them gets the pool, the others transform alone) all get their generator's
    values."""
    sizes = [N + 5, 3 * N + 16]
    expected = {}
    old = cudalite.get_num_threads()
    cudalite.set_num_threads(1)  # the values every thread count gives: drawn serially
    for i in range(4):
        g = cudalite.Generator(device=device).manual_seed(i)
        expected[i] = [to_np(cudalite.randn(n, device=device, generator=g)) for n in sizes]
        expected[i].append(
            to_np(cudalite.randn(N + 3, dtype=cudalite.float64, device=device, generator=g))
        )
    cudalite.set_num_threads(4)
    try:

        def work(i):
            for _ in range(3):
                g = cudalite.Generator(device=device).manual_seed(i)
                got = [to_np(cudalite.randn(n, device=device, generator=g)) for n in sizes]
                got.append(
                    to_np(cudalite.randn(N + 3, dtype=cudalite.float64, device=device, generator=g))
                )
                for a, b in zip(got, expected[i], strict=True):
                    np.testing.assert_array_equal(a, b)

        run_threads(work, 4)
    finally:
        cudalite.set_num_threads(old)


def test_autograd_from_8_threads(device):
    def work(i):
        rng = np.random.default_rng(i)
        nx = rng.standard_normal(N).astype(np.float32)
        for _ in range(3):
            x = cudalite.tensor(nx, device=device, requires_grad=True)
            y = (x * x + 3 * x).sum()
            y.backward()
            np.testing.assert_allclose(to_np(x.grad), 2 * nx + 3, rtol=1e-6)
            with cudalite.no_grad():  # grad mode is per thread
                z = x * 2
            assert not z.requires_grad
            assert (x * 2).requires_grad

    run_threads(work, 8)


def test_errors_inside_released_ops_reach_their_thread(device):
    def work(i):
        a = cudalite.ones(N, device=device)
        with pytest.raises(RuntimeError, match="must match the size"):
            a + cudalite.ones(N + 1, device=device)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            a.add_(cudalite.ones(2, N, device=device))
        np.testing.assert_array_equal(to_np(a + 1), np.full(N, 2, np.float32))

    run_threads(work, 8)


def test_allocations_and_frees_from_8_threads(device):
    def work(i):
        keep = []
        for k in range(40):
            t = cudalite.empty(N + 64 * k, device=device).fill_(float(k))
            keep.append(t)
            if k % 3 == 0:
                keep.pop(0)
        for t in keep:
            assert float(t[-1]) == float(t[0])

    run_threads(work, 8)


def _runs_other_threads(op):
    """Whether another Python thread gets to run while `op()` runs in this one, with the
    interpreter's switch interval so long that only a released GIL lets it."""
    old = sys.getswitchinterval()
    ran = []
    seen = False
    go = threading.Event()
    t = threading.Thread(target=lambda: (go.wait(), ran.append(True)))
    t.start()
    sys.setswitchinterval(1000.0)
    try:
        go.set()  # the thread now waits for the GIL
        for _ in range(50):
            op()
            seen = bool(ran)  # read right after the op: nothing here gives up the GIL
            if seen:
                break
    finally:
        sys.setswitchinterval(old)
        t.join()
    return seen


@pytest.mark.parametrize(
    "name",
    [
        "add",
        "rev_sub",
        "iadd",
        "neg",
        "binary_out",
        "unary",
        "sum",
        "sum_dim",
        "max_dim",
        "to",
        "copy_",
        "contiguous",
        "clone",
        "fill_",
        "full",
        "zeros",
        "ones",
        "arange",
        "rand",
        "randn",
        "cat",
        "gather",
        "mask",
        "setitem",
        "stack",
        "where",
        # products, sorting, convolution and pooling
        "matmul",
        "bmm",
        "linear",
        "sort",
        "sort_dim",
        "topk",
        "conv2d",
        "max_pool2d",
        # index ops
        "index_select",
        "gather_dim",
        "scatter_add",
        "index_put_accumulate",
        "masked_fill",
        "nonzero",
        # reductions, scans and normalisations
        "mean",
        "argmax",
        "var",
        "amax_dim",
        "cumsum",
        "softmax",
        "layer_norm",
        # conversions and layout copies
        "to_half",
        "int_to_float",
        "permute_contiguous",
        # more random fills
        "randint",
        "randperm",
        "bernoulli",
        "multinomial",
        # results larger than every operand: broadcasting
        "outer_mul",
        "broadcast_add_out",
        "broadcast_where",
    ],
)
def test_large_cpu_ops_let_other_threads_run(name):
    n = 1 << 20
    a, b = cudalite.rand(n), cudalite.rand(n)
    m = a.reshape(1024, -1)
    idx = cudalite.randint(0, n, (n,))
    rows = cudalite.randint(0, 1024, (1024, 1024))
    out = cudalite.empty(n)
    square = cudalite.rand(256, 256)
    images = cudalite.rand(4, 16, 64, 64)
    weight = cudalite.rand(16, 16, 3, 3)
    ints = cudalite.randint(0, 100, (n,))
    col, row = a[:1024].reshape(1024, 1), b[:1024]
    square_out = cudalite.empty(1024, 1024)
    F = cudalite.nn.functional
    ops = {
        "add": lambda: a + b,
        "rev_sub": lambda: 1.0 - a,
        "iadd": lambda: a.__iadd__(0.0),
        "neg": lambda: -a,
        "binary_out": lambda: cudalite.mul(a, b, out=out),
        "unary": lambda: a.sqrt(),
        "sum": lambda: a.sum(),
        "sum_dim": lambda: m.sum(0),
        "max_dim": lambda: m.max(1),
        "to": lambda: a.to(cudalite.float64),
        "copy_": lambda: out.copy_(a),
        "contiguous": lambda: m.t().contiguous(),
        "clone": lambda: a.clone(),
        "fill_": lambda: out.fill_(2.0),
        "full": lambda: cudalite.full((n,), 3.0),
        "zeros": lambda: cudalite.zeros(n),
        "ones": lambda: cudalite.ones(n, dtype=cudalite.float64),
        "arange": lambda: cudalite.arange(n),
        "rand": lambda: cudalite.rand(n),
        "randn": lambda: out.normal_(),
        "cat": lambda: cudalite.cat([a, b]),
        "gather": lambda: a[idx],
        "mask": lambda: a[a > 0.5],
        "setitem": lambda: out.__setitem__(idx, 1.0),
        "stack": lambda: cudalite.stack([a, b]),
        "where": lambda: cudalite.where(a > b, a, b),
        "matmul": lambda: square @ square,
        "bmm": lambda: cudalite.bmm(square[None], square[None]),
        "linear": lambda: F.linear(square, square, square[0]),
        "sort": lambda: a.sort(),
        "sort_dim": lambda: m.sort(1),
        "topk": lambda: a.topk(100),
        "conv2d": lambda: F.conv2d(images, weight, padding=1),
        "max_pool2d": lambda: F.max_pool2d(images, 2),
        "index_select": lambda: a.index_select(0, idx),
        "gather_dim": lambda: m.gather(1, rows),
        "scatter_add": lambda: m.scatter_add(1, rows, m),
        "index_put_accumulate": lambda: out.index_put_((idx,), b, accumulate=True),
        "masked_fill": lambda: a.masked_fill(a > 0.5, 0.0),
        "nonzero": lambda: (a > 0.5).nonzero(),
        "mean": lambda: a.mean(),
        "argmax": lambda: a.argmax(),
        "var": lambda: a.var(),
        "amax_dim": lambda: m.amax(1),
        "cumsum": lambda: a.cumsum(0),
        "softmax": lambda: m.softmax(1),
        "layer_norm": lambda: F.layer_norm(m, (1024,)),
        "to_half": lambda: a.half(),
        "int_to_float": lambda: ints.float(),
        "permute_contiguous": lambda: images.permute(0, 2, 3, 1).contiguous(),
        "randint": lambda: cudalite.randint(0, 10, (n,)),
        "randperm": lambda: cudalite.randperm(n),
        "bernoulli": lambda: cudalite.bernoulli(a),
        "multinomial": lambda: cudalite.multinomial(m, 100, True),
        "outer_mul": lambda: col * row,
        "broadcast_add_out": lambda: cudalite.add(col, row, out=square_out),
        "broadcast_where": lambda: cudalite.where(col > 0.5, col, row),
    }
    assert _runs_other_threads(ops[name])


def test_small_cpu_ops_keep_the_gil():
    """Below the threshold an op is a few microseconds: giving up the GIL would cost more."""
    a = cudalite.rand(100)
    assert not _runs_other_threads(lambda: a + a)
    assert not _runs_other_threads(lambda: a.sum())


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")
def test_copies_between_host_and_gpu_let_other_threads_run():
    x = cudalite.rand(1 << 22)
    y = x.cuda()
    one = y[:1]
    assert _runs_other_threads(lambda: y.cpu())
    assert _runs_other_threads(lambda: x.to("cuda"))
    assert _runs_other_threads(lambda: x.copy_(y))
    # item() waits for the stream: here for a kernel that spins for about a millisecond.
    assert _runs_other_threads(lambda: (cudalite.cuda._sleep(2_000_000), one.item()))
