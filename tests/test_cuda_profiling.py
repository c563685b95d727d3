"""cudalite.cuda.nvtx, cudalite.cuda.profiler, cudart() / check_error / CudaError and _sleep.

NVTX and the error strings need a CUDA build but no GPU; the profiler switch and _sleep need a
GPU. A CPU-only build raises torch's errors.
"""

import subprocess
import sys
import textwrap

import pytest

import cudalite
import cudalite.cuda as cuda
from cudalite import _C

COMPILED = _C._cuda.is_compiled()
HAS_GPU = cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a visible CUDA GPU")
compiled = pytest.mark.skipif(not COMPILED, reason="needs a CUDA build")
cpu_only = pytest.mark.skipif(COMPILED, reason="checks the CPU-only build")


@compiled
def test_nvtx_calls_work_without_initialising_cuda():
    code = textwrap.dedent(
        """
        import cudalite.cuda as cuda
        from cudalite.cuda import nvtx
        a = nvtx.range_push("outer")
        b = nvtx.range_push("inner {}".format(1))
        assert isinstance(a, int) and isinstance(b, int)
        assert isinstance(nvtx.range_pop(), int) and isinstance(nvtx.range_pop(), int)
        h = nvtx.range_start("across threads")
        assert isinstance(h, int)
        nvtx.range_end(h)
        assert nvtx.mark("here") is None
        with nvtx.range("step {}", 3):
            pass
        print(cuda.is_initialized())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@compiled
def test_nvtx_range_is_a_decorator_and_pops_on_error():
    calls = []

    @cuda.nvtx.range("fn")
    def fn(x):
        calls.append(x)
        return x + 1

    assert fn(1) == 2 and calls == [1]
    depth = cuda.nvtx.range_push("probe")
    cuda.nvtx.range_pop()
    with pytest.raises(ValueError):
        with cuda.nvtx.range("failing"):
            raise ValueError("inside")
    # The failing range was popped: the next push is at the same depth as before.
    assert cuda.nvtx.range_push("probe") == depth
    cuda.nvtx.range_pop()


def test_nvtx_names_match_torch():
    assert cuda.nvtx.__all__ == [
        "range_push",
        "range_pop",
        "range_start",
        "range_end",
        "mark",
        "range",
    ]
    assert cuda.profiler.__all__ == ["start", "stop", "profile"]
    assert issubclass(cuda.CudaError, RuntimeError)


@cpu_only
def test_nvtx_without_a_cuda_build_raises_torchs_error():
    msg = "NVTX functions not installed. Are you sure you have a CUDA build?"
    for call in (
        lambda: cuda.nvtx.range_push("a"),
        cuda.nvtx.range_pop,
        lambda: cuda.nvtx.range_start("a"),
        lambda: cuda.nvtx.range_end(1),
        lambda: cuda.nvtx.mark("a"),
    ):
        with pytest.raises(RuntimeError, match=msg):
            call()
    with pytest.raises(RuntimeError, match=msg):
        with cuda.nvtx.range("a"):
            pass


@cpu_only
def test_profiler_and_sleep_without_a_cuda_build_raise():
    for call in (cuda.profiler.start, cuda.profiler.stop, cuda.cudart, lambda: cuda._sleep(10)):
        with pytest.raises(AssertionError, match="cudalite not compiled with CUDA enabled"):
            call()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        with cuda.profiler.profile():
            pass


@compiled
def test_check_error_and_cuda_error_text():
    cuda.check_error(0)
    cuda.check_error(cuda._runtime.cudaError.success)
    with pytest.raises(cuda.CudaError, match=r"^invalid argument \(1\)$"):
        cuda.check_error(1)
    err = cuda.CudaError(2)
    assert isinstance(err, RuntimeError) and str(err) == "out of memory (2)"


@pytest.mark.skipif(HAS_GPU or not COMPILED, reason="checks a CUDA build without a GPU")
def test_cudart_without_a_gpu_raises_like_lazy_init():
    with pytest.raises(RuntimeError):
        cuda.cudart()
    with pytest.raises(RuntimeError):
        cuda.profiler.start()


@gpu
def test_profiler_start_stop_without_a_profiler_succeed():
    rt = cuda.cudart()
    assert rt.cudaProfilerStart() == rt.cudaError.success
    assert rt.cudaProfilerStop() == 0
    cuda.profiler.start()
    cuda.profiler.stop()
    x = cudalite.ones(4, device="cuda")
    with cuda.profiler.profile():
        y = x * 2
    assert y.sum().item() == 8.0


@gpu
def test_sleep_keeps_the_current_stream_busy():
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with cuda.stream(s):
        start.record()
        cuda._sleep(50_000_000)  # tens of milliseconds at the H100/H200's clocks
        end.record()
    assert not s.query(), "the spin kernel should still be running"
    b = cudalite.ones(1, device="cuda")
    b.add_(1)
    cuda.current_stream().synchronize()  # other streams are not held behind it
    assert b.item() == 2.0 and not s.query()
    s.synchronize()
    assert s.query()
    assert start.elapsed_time(end) > 1.0


@gpu
def test_sleep_orders_later_work_on_the_stream():
    a = cudalite.zeros(1 << 20, device="cuda")
    cuda._sleep(20_000_000)
    a.fill_(3.0)  # queued behind the spin kernel on the same stream
    assert not cuda.current_stream().query()
    assert a.sum().item() == 3.0 * (1 << 20)
