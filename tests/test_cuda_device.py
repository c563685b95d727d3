"""cudalite.cuda's device API: availability, selection, properties, NVML, fork, errors.

Runs everywhere: without a GPU (or without a CUDA build) it checks torch's no-GPU answers
and errors; the tests marked ``gpu`` need a visible GPU and compare with torch when it is
importable there.
"""

import os
import re
import subprocess
import sys
import textwrap

import pytest

import cudalite.cuda as cuda
from cudalite import _C

COMPILED = _C._cuda.is_compiled()
HAS_GPU = cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a visible CUDA GPU")
no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without a GPU")
compiled = pytest.mark.skipif(not COMPILED, reason="needs a CUDA build")

NO_DRIVER = (
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
    "installed a driver from http://www.nvidia.com/Download/index.aspx"
)
NO_GPUS = "No CUDA GPUs are available"
NOT_COMPILED = "cudalite not compiled with CUDA enabled"
FORK_ERROR = (
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
    "must use the 'spawn' start method"
)
ASYNC_HINT = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\nFor debugging consider passing "
    "CUDA_LAUNCH_BLOCKING=1"
)


def run_python(code, env=None):
    """Runs `code` in a fresh interpreter (CUDA state is per process) and returns stdout."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


# ---- availability: never raises, never initialises ----


def test_is_available_and_device_count_do_not_initialise_cuda():
    out = run_python(
        """
        import cudalite.cuda as c
        avail, n = c.is_available(), c.device_count()
        maps = open("/proc/self/maps").read()
        print(avail == (n > 0), c.is_initialized(), c._C._cuda.is_initialized(),
              "libcublas" in maps)
        """
    )
    # NVML may map libcuda.so itself (seen with driver 580 on an H200) without initialising
    # the driver; what matters for fork safety is that CUDA is not initialised, and the fork
    # test below checks that a child can still use CUDA.
    assert out == "True False False False"


def test_import_loads_no_gpu_library():
    # cuBLAS and NVML are opened on first use, so the import works where they are missing.
    out = run_python(
        """
        import cudalite, cudalite.cuda, cudalite.backends
        maps = open("/proc/self/maps").read()
        print([lib for lib in ("libcublas", "libnvidia-ml", "libcuda.so") if lib in maps])
        """
    )
    assert out == "[]"


def test_empty_cuda_visible_devices_hides_every_gpu():
    out = run_python(
        """
        import cudalite.cuda as c
        print(c.is_available(), c.device_count())
        try:
            c.current_device()
        except (RuntimeError, AssertionError) as e:
            print(type(e).__name__ + ": " + str(e))
        """,
        env={"CUDA_VISIBLE_DEVICES": ""},
    )
    lines = out.splitlines()
    assert lines[0] == "False 0"
    if not COMPILED:
        assert lines[1] == "AssertionError: " + NOT_COMPILED
    elif _C._cuda._nvml_available():  # a driver: the GPUs are there but hidden
        assert lines[1] == "RuntimeError: " + NO_GPUS
    else:
        assert lines[1] == "RuntimeError: " + NO_DRIVER


def test_stream_without_a_visible_gpu_raises_the_runtimes_error():
    # torch makes streams without lazy initialisation: its Stream() raises the runtime's
    # error for the current device, as AcceleratorError.
    out = run_python(
        """
        import cudalite
        for make in (lambda: cudalite.cuda.Stream(), lambda: cudalite.cuda.ExternalStream(0)):
            try:
                make()
            except RuntimeError as e:
                print(type(e).__name__ + ": " + str(e).splitlines()[0])
        """,
        env={"CUDA_VISIBLE_DEVICES": ""},
    )
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    if not COMPILED:
        assert lines[0] == "RuntimeError: cudalite.cuda.Stream requires CUDA support"
    elif _C._cuda._nvml_available():  # a driver: the GPUs are there but hidden
        assert lines[0] == "AcceleratorError: CUDA error: no CUDA-capable device is detected"
    else:
        assert lines[0] == (
            "AcceleratorError: CUDA error: CUDA driver version is insufficient for CUDA "
            "runtime version"
        )


@no_gpu
def test_no_gpu_answers():
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert cuda.is_initialized() is False
    assert cuda.get_arch_list() == []
    assert cuda.get_gencode_flags() == ""
    assert cuda.is_bf16_supported() is False


@no_gpu
@pytest.mark.parametrize(
    "call",
    [
        cuda.init,
        cuda.current_device,
        lambda: cuda.set_device(0),
        lambda: cuda.get_device_properties(0),
        cuda.get_device_name,
        cuda.get_device_capability,
        cuda.synchronize,
        cuda.mem_get_info,
        cuda.current_blas_handle,
        lambda: cuda.can_device_access_peer(0, 0),
        lambda: cuda.device(0).__enter__(),
    ],
)
def test_no_gpu_errors(call):
    if not COMPILED:
        with pytest.raises(AssertionError, match="^" + NOT_COMPILED + "$"):
            call()
    else:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) in (NO_DRIVER, NO_GPUS)
        assert str(info.value) == (NO_GPUS if _C._cuda._nvml_available() else NO_DRIVER)


# ---- the device context manager and index parsing (no GPU needed) ----


def test_device_context_manager_parses_like_torch():
    assert cuda.device(3).idx == 3
    assert cuda.device("cuda:1").idx == 1
    assert cuda.device(_C.device("cuda", 2)).idx == 2
    assert cuda.device(cuda.device(4)).idx == 4
    assert cuda.device(-1).idx == -1
    for bad in ("cpu", _C.device("cpu")):
        with pytest.raises(ValueError, match="^Expected a cuda device, but got: cpu$"):
            cuda.device(bad)


def test_device_repr_and_noop_forms():
    assert re.fullmatch(r"<cudalite\.cuda\.device object at 0x[0-9a-f]+>", repr(cuda.device(0)))
    with cuda.device(-1):  # negative: a no-op that never touches CUDA
        pass
    if not HAS_GPU:
        assert cuda.device(None).idx == -1
        with cuda.device(None):
            pass


def test_device_of_cpu_tensor_is_a_noop():
    t = _C._tensor_from_data([1.0, 2.0])
    d = cuda.device_of(t)
    assert d.idx == -1
    with d:
        pass


def test_get_device_index_rules():
    from cudalite.cuda import _get_device_index

    assert _get_device_index(2) == 2
    assert _get_device_index("cpu", allow_cpu=True) == -1
    with pytest.raises(ValueError, match="with a specified index or an integer"):
        _get_device_index(None)


@pytest.mark.parametrize(
    "flags, archs",
    [
        ("90-real,75-virtual", ["sm_90", "compute_75"]),
        ("90-real;75-virtual", ["sm_90", "compute_75"]),
        ("80", ["sm_80", "compute_80"]),
        ("90a-real", ["sm_90a"]),
        ("native", []),
    ],
)
def test_arch_list_parsing(monkeypatch, flags, archs):
    from cudalite.cuda import _device

    monkeypatch.setattr(_device, "is_available", lambda: True)
    monkeypatch.setattr(_C._cuda, "compiled_archs", lambda: flags, raising=True)
    assert _device.get_arch_list() == archs


def test_gencode_flags(monkeypatch):
    from cudalite.cuda import _device

    monkeypatch.setattr(_device, "get_arch_list", lambda: ["sm_90", "compute_75"])
    assert _device.get_gencode_flags() == (
        "-gencode compute=compute_90,code=sm_90 -gencode compute=compute_75,code=compute_75"
    )


def test_build_arch_list_matches_cmake():
    if COMPILED:
        assert _C._cuda.compiled_archs() != ""
    else:
        assert _C._cuda.compiled_archs() == ""


# ---- CUDA_VISIBLE_DEVICES through NVML (torch's _device_count_nvml) ----

UUIDS = ["GPU-aaaa-1", "GPU-bbbb-2", "GPU-abcd-3"]


@compiled
@pytest.mark.parametrize(
    "env, raw, expected",
    [  # expected values produced by torch 2.11's _device_count_nvml
        (None, 2, 2),
        (None, 0, 0),
        (None, -1, -1),
        ("", 2, 0),
        ("0", 2, 1),
        ("1,0", 2, 2),
        ("0,1,2", 2, 2),
        ("2,0", 2, 0),
        ("3", 2, 0),
        ("1gpu2,2ampere", 4, 2),
        ("0,0", 2, 0),
        ("1,1", 4, 0),
        ("0,-1,1", 2, 1),
        ("abc", 2, 0),
        (" 1 , 0", 2, 2),
        ("+1", 2, 1),
        ("1,+0", 2, 2),
        ("GPU-b", 3, 1),
        ("GPU-a", 3, 0),
        ("GPU-aa,GPU-bb", 3, 2),
        ("GPU-aa,GPU-aa", 3, 0),
        ("GPU-aa,GPU-aaaa", 3, 0),
        ("GPU-bb,0", 3, 1),
        ("GPU-zz", 3, 0),
        ("GPU-bb,GPU-zz,GPU-aa", 3, 1),
        ("MIG-xxx", 3, -1),
        ("GPU-bb", -1, -1),
    ],
)
def test_visible_devices_mapping(env, raw, expected):
    uuids = UUIDS if raw >= 0 else []
    assert _C._cuda._nvml_visible_device_count(env, raw, uuids) == expected


@compiled
def test_device_count_honours_cuda_visible_devices():
    n = cuda.device_count()
    for env, expected in (("", 0), ("0", min(n, 1)), ("-1", 0), ("0,0", 0)):
        out = run_python(
            "import cudalite.cuda as c; print(c.device_count())",
            env={"CUDA_VISIBLE_DEVICES": env},
        )
        assert out == str(expected), env


# ---- NVML monitoring ----


@pytest.mark.skipif(COMPILED and _C._cuda._nvml_available(), reason="needs no NVIDIA driver")
def test_nvml_without_driver():
    msg = "cuda driver can't be loaded, is cuda enabled?"
    assert cuda.list_gpu_processes() == msg
    for fn in (
        cuda.utilization,
        cuda.memory_usage,
        cuda.temperature,
        cuda.power_draw,
        cuda.clock_rate,
        cuda.device_memory_used,
    ):
        with pytest.raises(RuntimeError, match="^" + re.escape(msg) + "$"):
            fn()


@gpu
def test_nvml_monitoring():
    assert 0 <= cuda.utilization() <= 100
    assert 0 <= cuda.memory_usage(0) <= 100
    assert 0 < cuda.temperature("cuda:0") < 150
    assert cuda.power_draw(_C.device("cuda", 0)) > 0
    assert cuda.clock_rate() > 0
    assert 0 < cuda.device_memory_used() <= cuda.get_device_properties(0).total_memory
    text = cuda.list_gpu_processes()
    assert text.startswith("GPU:")
    for line in text.splitlines()[1:]:
        assert line == "no processes are running" or re.fullmatch(
            r"process +\d+ uses +(\d+\.\d{3}|N/A) MB GPU memory", line
        )
    with pytest.raises(RuntimeError, match=r"^device 99 is not visible \(CUDA_VISIBLE_DEVICES="):
        cuda.utilization(99)


# ---- fork ----


@compiled
def test_child_forked_after_init_cannot_use_cuda():
    # _poison_fork is what lazy_init does first; calling it directly lets this run with no GPU.
    out = run_python(
        """
        import os
        import cudalite.cuda as c
        c._C._cuda._poison_fork()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                c.init()
                msg = "no error"
            except RuntimeError as e:
                msg = "%s|%s|%s" % (e, c.is_initialized(), c._is_in_bad_fork())
            os.write(w, msg.encode())
            os._exit(0)
        os.waitpid(pid, 0)
        print(os.read(r, 4096).decode())
        print(c._is_in_bad_fork())
        """
    )
    child, parent = out.splitlines()
    assert child == FORK_ERROR + "|False|True"
    assert parent == "False"


@gpu
def test_fork_after_is_available_is_safe_and_after_init_is_not():
    out = run_python(
        """
        import os
        import cudalite.cuda as c

        def in_child(fn):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                try:
                    msg = repr(fn())
                except Exception as e:
                    msg = type(e).__name__ + ": " + str(e)
                os.write(w, msg.encode())
                os._exit(0)
            os.waitpid(pid, 0)
            return os.read(r, 4096).decode()

        assert c.is_available() and c.device_count() > 0
        print(in_child(lambda: c.mem_get_info()[1] > 0))
        c.init()
        print(in_child(c.current_device))
        print(c.current_device())
        """
    )
    assert out.splitlines() == ["True", "RuntimeError: " + FORK_ERROR, "0"]


# ---- with a GPU ----


@gpu
def test_current_and_set_device():
    cuda.init()
    assert cuda.is_initialized()
    assert cuda.current_device() == 0
    cuda.set_device(0)
    cuda.set_device(-1)  # no-op
    with cuda.device(0):
        assert cuda.current_device() == 0
    assert cuda.current_device() == 0
    if cuda.device_count() > 1:
        with cuda.device(1):
            assert cuda.current_device() == 1
        assert cuda.current_device() == 0


@gpu
def test_invalid_device_ordinal():
    n = cuda.device_count()
    with pytest.raises(_C.AcceleratorError) as info:
        cuda.set_device(n)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert e.error_code == 101  # cudaErrorInvalidDevice
    assert str(e) == (
        "CUDA error: invalid device ordinal\nGPU device may be out of range, do you have "
        "enough GPUs?\n" + ASYNC_HINT + "\n"
    )
    with pytest.raises(_C.AcceleratorError, match="^CUDA error: invalid device ordinal"):
        _C._to(_C._tensor_from_data([1.0]), f"cuda:{n}", None, False, False)


@gpu
def test_launch_blocking_drops_the_async_hint():
    out = run_python(
        """
        import cudalite.cuda as c
        try:
            c.set_device(c.device_count())
        except RuntimeError as e:
            print(repr(str(e)))
        """,
        env={"CUDA_LAUNCH_BLOCKING": "1"},
    )
    assert out == repr(
        "CUDA error: invalid device ordinal\nGPU device may be out of range, do you have "
        "enough GPUs?\n"
    )


@gpu
def test_device_properties():
    p = cuda.get_device_properties(0)
    assert p is cuda.get_device_properties("cuda:0")
    assert isinstance(p, cuda._CudaDeviceProperties)
    assert p.name == cuda.get_device_name() == cuda.get_device_name(0)
    assert (p.major, p.minor) == cuda.get_device_capability(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0 and p.warp_size == 32
    assert p.L2_cache_size > 0 and p.max_threads_per_block >= 1024
    assert len(p.uuid.bytes) == 16
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", str(p.uuid)
    )
    assert re.fullmatch(
        r"_CudaDeviceProperties\(name='.+', major=\d+, minor=\d+, total_memory=\d+MB, "
        r"multi_processor_count=\d+, uuid=[0-9a-f-]{36}, pci_bus_id=\d+, pci_device_id=\d+, "
        r"pci_domain_id=\d+, L2_cache_size=\d+MB\)",
        repr(p),
    )
    with pytest.raises(AssertionError, match="^Invalid device id$"):
        cuda.get_device_properties(cuda.device_count())
    assert cuda.get_arch_list()[0] == "sm_90"
    assert cuda.is_bf16_supported()


@gpu
def test_matches_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    assert cuda.device_count() == torch.cuda.device_count()
    assert repr(cuda.get_device_properties(0)) == repr(torch.cuda.get_device_properties(0))
    tp, cp = torch.cuda.get_device_properties(0), cuda.get_device_properties(0)
    for field in (
        "name",
        "major",
        "minor",
        "total_memory",
        "multi_processor_count",
        "L2_cache_size",
        "is_integrated",
        "is_multi_gpu_board",
        "warp_size",
        "max_threads_per_multi_processor",
        "regs_per_multiprocessor",
        "shared_memory_per_block_optin",
        "pci_bus_id",
        "clock_rate",
        "memory_clock_rate",
        "memory_bus_width",
    ):
        assert getattr(cp, field) == getattr(tp, field), field
    assert str(cp.uuid) == str(tp.uuid)
    assert cuda.can_device_access_peer(0, 0) == torch.cuda.can_device_access_peer(0, 0)
    assert cuda.mem_get_info()[1] == torch.cuda.mem_get_info()[1]


@gpu
def test_mem_info_sync_peer_blas_handle():
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == cuda.get_device_properties(0).total_memory
    assert cuda.mem_get_info(0)[1] == total
    assert cuda.synchronize() is None
    assert cuda.synchronize(0) is None
    assert isinstance(cuda.can_device_access_peer(0, 0), bool)
    with pytest.raises(AssertionError, match="^Invalid peer device id$"):
        cuda.can_device_access_peer(0, cuda.device_count())
    h = cuda.current_blas_handle()
    assert isinstance(h, int) and h != 0
    assert cuda.current_blas_handle() == h


def test_module_namespace_like_torch():
    for name in (
        "is_available",
        "device_count",
        "current_device",
        "device",
        "device_of",
        "get_device_name",
        "get_device_properties",
        "synchronize",
        "init",
        "is_initialized",
        "current_blas_handle",
        "list_gpu_processes",
        "os",
        "OutOfMemoryError",
        "AcceleratorError",
        "_lazy_init",
        "_lazy_call",
    ):
        assert hasattr(cuda, name), name
    assert cuda.os.cpu_count() >= 1
    assert cuda._initialized in (True, False)
    assert issubclass(cuda.AcceleratorError, RuntimeError)


def test_lazy_call_runs_after_init_or_now():
    ran = []
    cuda._lazy_call(lambda: ran.append(1))
    if cuda.is_initialized():
        assert ran == [1]
    elif HAS_GPU:
        cuda.init()
        assert ran == [1]
    else:
        assert ran == []
