"""CUDA graphs (cudalite.cuda.graphs): capture, replay, pools, errors, RNG, graphed callables.

The GPU tests follow the acceptance list of the CUDA graphs work (docs/graphs.md); the tests
at the top check the API's errors without a GPU. The private pools' logic is also tested on
the host backend, in test_caching_allocator_graphs.py.
"""

import gc
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import cudalite
from conftest import HAS_CUDA, requires_cuda
from cudalite import _C

COMPILED = _C._cuda.is_compiled()

GRAPH_NAMES = [
    "CUDAGraph",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "make_graphed_callables",
]

# ---------------------------------------------------------------------------------------
# Without a GPU.


def test_names_are_in_torch_cuda_places():
    for name in GRAPH_NAMES:
        assert name in cudalite.cuda.__all__
        assert getattr(cudalite.cuda, name) is getattr(cudalite.cuda.graphs, name)


def test_import_does_not_load_graphs_or_initialise_cuda():
    code = (
        "import sys, cudalite; "
        "print('cudalite.cuda.graphs' in sys.modules, cudalite.cuda.is_initialized())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.skipif(COMPILED, reason="checks a CPU-only build")
def test_cpu_only_build_raises_torch_dummy_class_errors():
    with pytest.raises(RuntimeError, match="^Tried to instantiate dummy base class CUDAGraph$"):
        cudalite.cuda.CUDAGraph()
    with pytest.raises(
        RuntimeError, match="^Tried to instantiate dummy base class _graph_pool_handle$"
    ):
        cudalite.cuda.graph_pool_handle()
    with pytest.raises(
        RuntimeError,
        match="^Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing$",
    ):
        cudalite.cuda.is_current_stream_capturing()


@pytest.mark.skipif(not COMPILED or HAS_CUDA, reason="checks a CUDA build without a GPU")
def test_cuda_build_without_gpu_raises_the_runtime_error():
    with pytest.raises(RuntimeError, match="CUDA"):
        cudalite.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="CUDA"):
        cudalite.cuda.is_current_stream_capturing()
    a, b = cudalite.cuda.graph_pool_handle(), cudalite.cuda.graph_pool_handle()
    assert a[0] == b[0] == 0 and b[1] == a[1] + 1


@pytest.mark.skipif(COMPILED, reason="checks a CPU-only build")
def test_make_graphed_callables_without_cuda_raises():
    x = cudalite.ones(3)
    with pytest.raises(RuntimeError, match="dummy base class CUDAGraph"):
        cudalite.cuda.make_graphed_callables(lambda t: t * 2, (x,), num_warmup_iters=0)


def test_make_graphed_callables_checks_its_arguments_first():
    lin = cudalite.nn.Linear(2, 2)
    lin.register_forward_hook(lambda *a: None)
    with pytest.raises(AssertionError, match="Modules must not have hooks registered"):
        cudalite.cuda.make_graphed_callables(lin, (cudalite.ones(1, 2),))
    with pytest.raises(AssertionError, match="sample_args for each callable must contain only"):
        cudalite.cuda.make_graphed_callables(lambda t, k: t, (cudalite.ones(1), 3))


class _FakeGraph:
    """Records the calls the graph context manager makes (no CUDA needed)."""

    def __init__(self, fail=None):
        self.calls, self.fail = [], fail

    def capture_begin(self, *pool, capture_error_mode):
        self.calls.append(("begin", pool, capture_error_mode))
        if self.fail == "begin":
            raise RuntimeError("begin failed")

    def capture_end(self):
        self.calls.append("end")
        if self.fail == "end":
            raise RuntimeError("end failed")

    def _abort_capture(self):
        self.calls.append("abort")


@pytest.fixture
def fake_cuda(monkeypatch):
    """cudalite.cuda's synchronize, empty_cache and stream() replaced by recorders."""
    events = []

    class Ctx:
        def __init__(self, s):
            self.s = s

        def __enter__(self):
            events.append(("enter", self.s))

        def __exit__(self, *exc):
            events.append(("exit", self.s))

    monkeypatch.setattr(cudalite.cuda, "synchronize", lambda: events.append("sync"))
    monkeypatch.setattr(cudalite.cuda, "empty_cache", lambda: events.append("empty"))
    monkeypatch.setattr(cudalite.cuda, "stream", Ctx)
    monkeypatch.setattr(cudalite.cuda.graphs.graph, "default_capture_stream", "side")
    return events


def test_graph_context_manager_sequence(fake_cuda):
    g = _FakeGraph()
    with cudalite.cuda.graph(g):
        fake_cuda.append("body")
    assert fake_cuda == ["sync", "empty", ("enter", "side"), "body", ("exit", "side")]
    assert g.calls == [("begin", (), "global"), "end"]
    g2 = _FakeGraph()
    with cudalite.cuda.graph(g2, pool=(0, 3), stream="mine", capture_error_mode="relaxed"):
        pass
    assert g2.calls == [("begin", ((0, 3),), "relaxed"), "end"]
    assert fake_cuda[-2:] == [("enter", "mine"), ("exit", "mine")]


def test_graph_context_manager_aborts_a_failed_capture(fake_cuda):
    g = _FakeGraph()
    with pytest.raises(ZeroDivisionError):
        with cudalite.cuda.graph(g):
            1 / 0  # noqa: B018
    assert g.calls == [("begin", (), "global"), "abort"]
    assert fake_cuda[-1] == ("exit", "side")


def test_graph_context_manager_leaves_the_stream_when_begin_or_end_fails(fake_cuda):
    for where in ("begin", "end"):
        fake_cuda.clear()
        g = _FakeGraph(fail=where)
        with pytest.raises(RuntimeError, match=f"{where} failed"):
            with cudalite.cuda.graph(g):
                pass
        assert fake_cuda[-1] == ("exit", "side")
        assert "abort" not in g.calls


# ---------------------------------------------------------------------------------------
# On the GPU.

cuda_only = requires_cuda


def fresh():
    cudalite.cuda.synchronize()
    gc.collect()
    cudalite.cuda.empty_cache()
    return cudalite.cuda.memory_reserved()


@cuda_only
def test_static_input_output_replay_on_any_stream():
    static_in = cudalite.zeros(1000, device="cuda")
    static_in * 2 + 1  # warm-up: kernels load outside the capture
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g):
        static_out = static_in * 2 + 1
    for k in range(3):
        new = cudalite.arange(1000, dtype=cudalite.float32, device="cuda") + k
        static_in.copy_(new)
        g.replay()
        assert cudalite.equal(static_out, new * 2 + 1)
    s = cudalite.cuda.Stream()
    static_in.fill_(5.0)
    s.wait_stream(cudalite.cuda.current_stream())
    with cudalite.cuda.stream(s):
        g.replay()
    cudalite.cuda.current_stream().wait_stream(s)
    assert cudalite.equal(static_out, cudalite.full((1000,), 11.0, device="cuda"))


def _chain(x):
    ops = [
        lambda t: t * 1.0001,
        lambda t: t + 0.5,
        lambda t: cudalite.sin(t),
        lambda t: t.exp() * 0.25,
        lambda t: cudalite.sqrt(t.abs() + 1),
        lambda t: t - 0.125,
        lambda t: cudalite.tanh(t) * 3,
        lambda t: t.clamp(-2, 2),
        lambda t: t * t,
        lambda t: t / 1.5,
    ]
    for i in range(100):
        x = ops[i % len(ops)](x)
    return x


@cuda_only
@pytest.mark.parametrize("n", [256, 100_000])  # deferred (batched) launches and plain ones
def test_100_op_chain_replay_is_bit_equal_to_eager(n):
    cudalite.manual_seed(0)
    data = cudalite.randn(n, device="cuda")
    eager = _chain(data.clone())
    static_in = data.clone()
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g):
        static_out = _chain(static_in)
    static_in.copy_(cudalite.zeros(n, device="cuda"))
    static_in.copy_(data)
    g.replay()
    assert np.array_equal(static_out.cpu().numpy(), eager.cpu().numpy())


def _capture_that_calls(illegal, **kwargs):
    g = cudalite.cuda.CUDAGraph()
    x = cudalite.ones(10, device="cuda")
    with cudalite.cuda.graph(g, **kwargs):
        y = x * 2
        illegal(y)
    return g


@cuda_only
@pytest.mark.parametrize(
    "illegal",
    [
        lambda y: y.sum().item(),
        lambda y: y.cpu(),
        lambda y: cudalite.cuda.synchronize(),
        lambda y: cudalite.cuda.current_stream().synchronize(),
        lambda y: str(y),
    ],
    ids=["item", "cpu", "synchronize", "stream_synchronize", "print"],
)
def test_illegal_calls_raise_and_the_process_keeps_working(illegal):
    before = fresh()
    with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
        _capture_that_calls(illegal)
    assert not cudalite.cuda.is_current_stream_capturing()
    assert _C._cuda._cuda_captures_underway() == 0
    x = cudalite.arange(4.0, device="cuda")  # the process still works
    assert (x * 2).tolist() == [0.0, 2.0, 4.0, 6.0]
    del x
    assert fresh() == before  # the failed capture's pool was released exactly
    g = cudalite.cuda.CUDAGraph()  # and a new capture works
    static = cudalite.ones(3, device="cuda")
    with cudalite.cuda.graph(g):
        out = static + 1
    g.replay()
    assert out.tolist() == [2.0, 2.0, 2.0]


@cuda_only
def test_event_query_during_capture_raises():
    g = cudalite.cuda.CUDAGraph()
    x = cudalite.ones(10, device="cuda")
    with pytest.raises(RuntimeError):
        with cudalite.cuda.graph(g):
            e = cudalite.cuda.Event()
            y = x * 2
            e.record()
            e.query()
    del y
    assert _C._cuda._cuda_captures_underway() == 0


@cuda_only
def test_capture_on_the_default_stream_is_refused():
    g = cudalite.cuda.CUDAGraph()
    with pytest.raises(
        RuntimeError,
        match=r"^CUDA graphs must be captured on a non-default stream\. \(However, after "
        r"capture, it's ok to replay them on the default stream\.\)$",
    ):
        g.capture_begin()
    with pytest.raises(RuntimeError):
        with cudalite.cuda.graph(g, stream=cudalite.cuda.default_stream()):
            pass
    assert _C._cuda._cuda_captures_underway() == 0


@cuda_only
def test_misuse_messages():
    g = cudalite.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="^Called CUDAGraph::replay without a preceding"):
        g.replay()
    with pytest.raises(RuntimeError, match=r"^Called CUDAGraph::pool\(\) without a preceding"):
        g.pool()
    with pytest.raises(RuntimeError, match="^Unknown capture error mode"):
        with cudalite.cuda.graph(g, capture_error_mode="loose"):
            pass
    x = cudalite.ones(3, device="cuda")
    with cudalite.cuda.graph(g):
        x.add_(1)
    with pytest.raises(RuntimeError, match="^This CUDAGraph instance already owns a captured"):
        with cudalite.cuda.graph(g):
            pass
    with pytest.raises(RuntimeError, match="^No cudaGraph_t is available"):
        g.raw_cuda_graph()
    assert g.raw_cuda_graph_exec() != 0
    g.reset()
    with pytest.raises(RuntimeError, match="^Called CUDAGraph::replay without a preceding"):
        g.replay()


@cuda_only
def test_empty_graph_warns():
    g = cudalite.cuda.CUDAGraph()
    with pytest.warns(UserWarning, match="^The CUDA Graph is empty"):
        with cudalite.cuda.graph(g):
            pass


@cuda_only
def test_keep_graph_instantiates_on_first_replay_and_dumps(tmp_path):
    x = cudalite.zeros(4, device="cuda")
    g = cudalite.cuda.CUDAGraph(keep_graph=True)
    with cudalite.cuda.graph(g):
        x.add_(1)
    assert g.raw_cuda_graph() != 0
    with pytest.raises(RuntimeError, match="^You cannot access the raw cudaGraphExec_t"):
        g.raw_cuda_graph_exec()
    g.replay()
    g.replay()
    assert x.tolist() == [2.0] * 4
    g.instantiate()
    g.replay()
    assert x.tolist() == [3.0] * 4
    path = tmp_path / "graph.dot"
    g.debug_dump(str(path))
    assert path.read_text().startswith("digraph")

    d = cudalite.cuda.CUDAGraph()
    d.enable_debug_mode()
    with cudalite.cuda.graph(d):
        x.mul_(2)
    d.debug_dump(str(path))
    assert "digraph" in path.read_text()


@cuda_only
def test_outputs_keep_their_address_and_shared_pools_reserve_the_larger():
    base = fresh()
    static_in = cudalite.ones(1 << 20, device="cuda")  # 4 MiB
    after_in = fresh()
    g1 = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g1):
        tmp = static_in * 3
        out1 = tmp + 1
        del tmp
    ptr = out1.data_ptr()
    for _ in range(3):
        g1.replay()
        assert out1.data_ptr() == ptr
    one = cudalite.cuda.memory_reserved() - after_in
    g2 = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g2, pool=g1.pool()):
        out2 = static_in * 5  # reuses g1's freed temporary inside the shared pool
    two = cudalite.cuda.memory_reserved() - after_in
    assert two <= one
    assert g2.pool() == g1.pool()
    g1.replay()
    g2.replay()
    assert out1[0].item() == 4.0 and out2[0].item() == 5.0
    assert any(s["segment_pool_id"] == g1.pool() for s in cudalite.cuda.memory_snapshot())
    g1.reset()
    g2.reset()
    del g1, g2
    assert fresh() > after_in  # the outputs still live in the pool
    del out1, out2
    assert fresh() == after_in
    del static_in
    assert fresh() == base


@cuda_only
def test_pool_from_graph_pool_handle_is_shared():
    h = cudalite.cuda.graph_pool_handle()
    assert isinstance(h, tuple) and h[0] == 0
    x = cudalite.ones(1000, device="cuda")
    g1, g2 = cudalite.cuda.CUDAGraph(), cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g1, pool=h):
        y = x + 1
    with cudalite.cuda.graph(g2, pool=h):
        z = y * 2
    assert g1.pool() == g2.pool() == h
    x.fill_(2)
    g1.replay()
    g2.replay()
    assert z[0].item() == 6.0


@cuda_only
def test_record_stream_inside_capture():
    before = fresh()
    side = cudalite.cuda.Stream()
    g = cudalite.cuda.CUDAGraph()
    x = cudalite.ones(1 << 18, device="cuda")  # allocated before the capture
    active_before = cudalite.cuda.memory_stats()["active_bytes.all.current"]
    with cudalite.cuda.graph(g):
        cap = cudalite.cuda.current_stream()
        side.wait_stream(cap)
        with cudalite.cuda.stream(side):
            y = x * 2
        x.record_stream(side)
        cap.wait_stream(side)
        del x  # freed inside the capture: its events wait until the capture ends
    assert cudalite.cuda.memory_stats()["active_bytes.all.current"] >= active_before
    g.replay()
    cudalite.cuda.synchronize()
    z = cudalite.empty(16, device="cuda")  # an allocation after the capture frees x
    assert cudalite.cuda.memory_stats()["active_bytes.all.current"] < active_before + y.nbytes
    assert y[0].item() == 2.0
    del y, z, g
    assert fresh() == before


@cuda_only
def test_random_numbers_differ_per_replay_and_match_eager():
    n, reps = 1000, 5
    cudalite.cuda.manual_seed(123)
    eager = []
    x = cudalite.empty(n, device="cuda")
    for _ in range(reps):
        x.uniform_()
        eager.append(x.clone())
        x.normal_()
        eager.append(x.clone())
    eager_state = cudalite.cuda.get_rng_state()

    cudalite.cuda.manual_seed(123)
    static = cudalite.empty(n, device="cuda")
    outs = cudalite.empty(2, n, device="cuda")
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g):
        static.uniform_()
        outs[0].copy_(static)
        static.normal_()
        outs[1].copy_(static)
    # The capture itself consumed no offsets: replays draw exactly the eager sequence.
    replayed = []
    for _ in range(reps):
        g.replay()
        replayed.extend([outs[0].clone(), outs[1].clone()])
    for a, b in zip(eager, replayed, strict=True):
        assert cudalite.equal(a, b)
    assert not cudalite.equal(replayed[0], replayed[2])
    assert cudalite.equal(cudalite.cuda.get_rng_state(), eager_state)


@cuda_only
def test_dropout_and_bernoulli_in_a_graph_follow_eager():
    cudalite.cuda.manual_seed(7)
    p = cudalite.full((512,), 0.3, device="cuda")
    eager = [cudalite.bernoulli(p) for _ in range(3)]
    cudalite.cuda.manual_seed(7)
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g):
        out = cudalite.bernoulli(p)
    for e in eager:
        g.replay()
        assert cudalite.equal(out, e)


def _replayed_draws(T):
    T.cuda.manual_seed(2024)
    static = T.empty(5000, device="cuda")
    out = T.empty(3, 5000, device="cuda")
    static.uniform_()  # warm-up: kernels load outside the capture
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        static.uniform_(-1, 1)
        out[0].copy_(static)
        static.normal_()
        out[1].copy_(static)
        static.bernoulli_(0.3)
        out[2].copy_(static)
    draws = []
    for _ in range(4):
        g.replay()
        draws.append(out.cpu().numpy().copy())
    return draws


@cuda_only
def test_graph_replays_draw_torch_numbers():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    for a, b in zip(_replayed_draws(cudalite), _replayed_draws(torch), strict=True):
        np.testing.assert_array_equal(a, b)


@cuda_only
def test_sampling_ops_draw_fresh_numbers_per_replay_as_eager():
    # randperm and dropout take the generator's seed and offset from device memory inside a
    # capture, like the other random kernels.
    x = cudalite.ones(4096, device="cuda")

    def body(outs):
        outs[0].copy_(cudalite.randperm(300, device="cuda"))
        outs[1].copy_(cudalite.nn.functional.dropout(x, 0.3))

    def fresh():
        return [
            cudalite.empty(300, dtype=cudalite.int64, device="cuda"),
            cudalite.empty(4096, device="cuda"),
        ]

    body(fresh())  # warm-up: kernels loaded, workspaces cached
    cudalite.cuda.manual_seed(7)
    eager = []
    for _ in range(3):
        outs = fresh()
        body(outs)
        eager.append([o.clone() for o in outs])
    state = cudalite.cuda.get_rng_state()

    cudalite.cuda.manual_seed(7)
    outs = fresh()
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g):
        body(outs)
    for want in eager:
        g.replay()
        for a, b in zip(want, outs, strict=True):
            assert cudalite.equal(a, b)
    assert not cudalite.equal(eager[0][0], eager[1][0])
    assert cudalite.equal(cudalite.cuda.get_rng_state(), state)
    assert _C._cuda._cuda_captures_underway() == 0


@cuda_only
def test_is_current_stream_capturing():
    assert not cudalite.cuda.is_current_stream_capturing()
    g = cudalite.cuda.CUDAGraph()
    seen = []
    x = cudalite.ones(2, device="cuda")
    with cudalite.cuda.graph(g):
        seen.append(cudalite.cuda.is_current_stream_capturing())
        x.add_(1)
    assert seen == [True]
    assert not cudalite.cuda.is_current_stream_capturing()


@cuda_only
def test_is_current_stream_capturing_creates_no_context():
    code = (
        "import cudalite; r = cudalite.cuda.is_current_stream_capturing(); "
        "print(r, cudalite.cuda.is_initialized())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def _in_other_thread(fn):
    """Runs ``fn`` in another thread; the RuntimeErrors it raised."""
    errors = []

    def run():
        try:
            fn()
        except RuntimeError as e:
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return errors


# What torch 2.11 does (H100/H200, CUDA 13): in "thread_local" (and "relaxed") mode another
# thread may allocate device memory during the capture, and the capture succeeds; in "global"
# mode that allocation (a cudaMalloc) is refused. In every mode another thread's synchronize()
# raises "operation not permitted when stream is capturing" and invalidates the capture.
# cudalite's allocator may serve the allocation from its cache without a cudaMalloc, so the
# tests check what both must do. The work queued for the capture (Note [Deferred launches])
# stays with the capturing thread.


def _thread_local_body():
    x = cudalite.ones(8, device="cuda")
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g, capture_error_mode="thread_local"):
        x.add_(1)
        errors = _in_other_thread(lambda: cudalite.empty(1 << 20, device="cuda").fill_(1))
        x.add_(1)
    assert errors == []
    g.replay()
    assert x.tolist() == [3.0] * 8


def _global_body():
    x = cudalite.ones(8, device="cuda")
    g = cudalite.cuda.CUDAGraph()
    errors = []
    with pytest.raises(RuntimeError, match="capture"):
        with cudalite.cuda.graph(g, capture_error_mode="global"):
            x.add_(1)
            errors = _in_other_thread(cudalite.cuda.synchronize)
            x.add_(1)
    assert len(errors) == 1
    assert "operation not permitted when stream is capturing" in str(errors[0])
    assert _C._cuda._cuda_captures_underway() == 0
    cudalite.cuda.synchronize()  # works again after the capture
    assert (x * 2).tolist() == [2.0] * 8


def _run_isolated(name):
    """Runs the function `name` of this module in a fresh interpreter: a capture that another
    thread disturbs must not leave the device unusable for the tests after it."""
    code = (
        f"import sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); "
        f"import test_cuda_graphs as m; m.{name}()"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


@cuda_only
def test_thread_local_mode_lets_another_thread_allocate():
    _run_isolated("_thread_local_body")


@cuda_only
def test_another_threads_synchronize_fails_and_ends_the_capture():
    _run_isolated("_global_body")


@cuda_only
def test_matmul_and_first_use_initialisations_inside_capture():
    # cuBLAS handle and workspace for a new stream are created inside the capture.
    s = cudalite.cuda.Stream()
    a = cudalite.randn(64, 64, device="cuda")
    b = cudalite.randn(64, 64, device="cuda")
    g = cudalite.cuda.CUDAGraph()
    with cudalite.cuda.graph(g, stream=s):
        c = a @ b
    a.mul_(2)
    g.replay()
    assert cudalite.allclose(c, a @ b)


class MLP(cudalite.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = cudalite.nn.Linear(32, 64)
        self.l2 = cudalite.nn.Linear(64, 10)

    def forward(self, x):
        return self.l2(cudalite.relu(self.l1(x)))


def _train(model, step_fn, batches, targets):
    opt = cudalite.optim.SGD(model.parameters(), lr=0.1)
    for x, y in zip(batches, targets, strict=True):
        opt.zero_grad(set_to_none=False)
        loss = ((step_fn(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


@cuda_only
def test_make_graphed_callables_mlp_trains_as_eager():
    cudalite.manual_seed(0)
    eager_model = MLP().cuda()
    graphed_model = MLP().cuda()
    graphed_model.load_state_dict(eager_model.state_dict())
    batches = [cudalite.randn(16, 32, device="cuda") for _ in range(10)]
    targets = [cudalite.randn(16, 10, device="cuda") for _ in range(10)]
    ref = _train(eager_model, eager_model, batches, targets)
    sample = cudalite.randn(16, 32, device="cuda")
    graphed = cudalite.cuda.make_graphed_callables(graphed_model, (sample,))
    assert graphed is graphed_model
    got = _train(graphed_model, graphed, batches, targets)
    for a, b in zip(ref, got, strict=True):
        assert cudalite.allclose(a, b, rtol=0, atol=1e-6)
    graphed_model.eval()  # eval mode runs the original forward
    with cudalite.no_grad():
        assert cudalite.allclose(graphed_model(sample), eager_model(sample), atol=1e-6)


@cuda_only
def test_make_graphed_callables_functions_and_tuples():
    cudalite.manual_seed(1)
    w = cudalite.randn(8, 8, device="cuda", requires_grad=True)

    def f(x):
        return (x @ w).tanh()

    def h(y):
        return y.sum(dim=1), y * 2

    x = cudalite.randn(4, 8, device="cuda", requires_grad=True)
    gf, gh = cudalite.cuda.make_graphed_callables((f, h), ((x,), (f(x).detach().requires_grad_(),)))
    xi = cudalite.randn(4, 8, device="cuda", requires_grad=True)
    s, d = gh(gf(xi))
    (s.sum() + d.sum()).backward()
    # A function's graph inputs are its arguments only: a tensor it closes over gets no
    # gradient from the graphed backward (torch 2.11 on the H200: w.grad stays None).
    assert w.grad is None
    gx = xi.grad.clone()
    xi.grad = None
    s2, d2 = h(f(xi))
    (s2.sum() + d2.sum()).backward()
    assert cudalite.allclose(s, s2, atol=1e-6)
    assert cudalite.allclose(d, d2, atol=1e-6)
    assert cudalite.allclose(gx, xi.grad, atol=1e-6)


@cuda_only
def test_make_graphed_callables_unused_input():
    w = cudalite.randn(4, device="cuda", requires_grad=True)

    def f(x, unused):
        return x * w

    args = (
        cudalite.randn(4, device="cuda", requires_grad=True),
        cudalite.randn(4, device="cuda", requires_grad=True),
    )
    with pytest.raises(RuntimeError):
        cudalite.cuda.make_graphed_callables(f, args)
    g = cudalite.cuda.make_graphed_callables(f, args, allow_unused_input=True)
    out = g(*args)
    out.sum().backward()
    assert cudalite.allclose(args[0].grad, w.detach())


@cuda_only
def test_graph_keeps_working_with_deferral_off():
    prev = _C._cuda._set_deferred_launches(False)
    try:
        x = cudalite.ones(16, device="cuda")
        g = cudalite.cuda.CUDAGraph()
        with cudalite.cuda.graph(g):
            y = x * 3 + 1
        x.fill_(2)
        g.replay()
        assert y.tolist() == [7.0] * 16
    finally:
        _C._cuda._set_deferred_launches(prev)
