"""Devices: counting, selecting and describing GPUs (torch.cuda's device API)."""

from cudalite import _C
from cudalite.cuda._lazy import _is_compiled, _lazy_init, is_initialized

_CudaDeviceProperties = _C._cuda._CudaDeviceProperties


def is_available() -> bool:
    r"""Return a bool indicating if CUDA is currently available.

    .. note:: Unlike torch's default, this never initialises CUDA in the process (it asks
        NVML), so a later ``fork()`` stays safe.
    """
    return _is_compiled() and _C._cuda.device_count() > 0


def device_count() -> int:
    r"""Return the number of GPUs available (``CUDA_VISIBLE_DEVICES`` applied).

    .. note:: This API does not poison fork: before CUDA initialises it asks NVML.
    """
    return _C._cuda.device_count() if _is_compiled() else 0


def _get_device_index(device, optional: bool = False, allow_cpu: bool = False) -> int:
    r"""Get the device index from :attr:`device`: a cudalite.device, a str, an int or ``None``.

    A CUDA device without an index, or ``None`` with :attr:`optional`, means the current
    device (-1 when CUDA isn't available). With :attr:`allow_cpu`, CPU devices give -1.
    """
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if allow_cpu:
            if device.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {device}")
        elif device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.type == "cpu":
            return -1
        idx = device.index
    elif isinstance(device, _device_cls()):
        return device.idx
    else:
        idx = None
    if idx is None:
        if not optional:
            msg = "Expected a cudalite.device with a specified index or an integer, but got:"
            raise ValueError(f"{msg}{device}")
        return current_device() if is_available() else -1
    return idx


def _device_cls():
    return device


def current_device() -> int:
    r"""Return the index of a currently selected device."""
    _lazy_init()
    return _C._cuda.current_device()


def set_device(device) -> None:
    r"""Set the current device.

    Usage of this function is discouraged in favor of :any:`device`. In most cases it's
    better to use the ``CUDA_VISIBLE_DEVICES`` environment variable.

    Args:
        device (cudalite.device or int): selected device. This function is a no-op if this
            argument is negative.
    """
    device = _get_device_index(device)
    if device >= 0:
        _lazy_init()
        _C._cuda.set_device(device)


def _exchange_device(device: int) -> int:
    if device < 0:
        return -1
    _lazy_init()
    return _C._cuda.exchange_device(device)


def _maybe_exchange_device(device: int) -> int:
    if device < 0:
        return -1
    return _C._cuda.maybe_exchange_device(device)


class device:
    r"""Context-manager that changes the selected device.

    Args:
        device (cudalite.device or int): device index to select. It's a no-op if this
            argument is a negative integer or ``None``.
    """

    __module__ = "cudalite.cuda"  # printed as <cudalite.cuda.device object at 0x...>

    def __init__(self, device):
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, type, value, traceback):
        # Restoring never creates a context on a device the program hasn't used.
        self.idx = _maybe_exchange_device(self.prev_idx)
        return False


class device_of(device):
    r"""Context-manager that changes the current device to that of given object.

    You can use both tensors and storages as arguments. If a given object is not allocated
    on a GPU, this is a no-op.

    Args:
        obj (Tensor or Storage): object allocated on the selected device.
    """

    __module__ = "cudalite.cuda"

    def __init__(self, obj):
        idx = obj.get_device() if obj.is_cuda else -1
        super().__init__(idx)


def get_device_properties(device=None) -> _CudaDeviceProperties:
    r"""Get the properties of a device.

    Args:
        device (cudalite.device or int or str, optional): device for which to return the
            properties. It uses the current device, given by :func:`current_device`, if
            :attr:`device` is ``None`` (default).

    Returns:
        _CudaDeviceProperties: the properties of the device
    """
    _lazy_init()
    device = _get_device_index(device, optional=True)
    if device < 0 or device >= device_count():
        raise AssertionError("Invalid device id")
    return _C._cuda.get_device_properties(device)


def get_device_name(device=None) -> str:
    r"""Get the name of a device (the current one by default)."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    r"""Get the cuda capability of a device as ``(major, minor)`` (the current one by default)."""
    prop = get_device_properties(device)
    return prop.major, prop.minor


def can_device_access_peer(device, peer_device) -> bool:
    r"""Check if peer access between two devices is possible."""
    _lazy_init()
    device = _get_device_index(device, optional=True)
    peer_device = _get_device_index(peer_device)
    if device < 0 or device >= device_count():
        raise AssertionError("Invalid device id")
    if peer_device < 0 or peer_device >= device_count():
        raise AssertionError("Invalid peer device id")
    return _C._cuda.can_device_access_peer(device, peer_device)


def synchronize(device=None) -> None:
    r"""Wait for all kernels in all streams on a CUDA device to complete.

    Args:
        device (cudalite.device or int, optional): device for which to synchronize. It uses
            the current device, given by :func:`current_device`, if :attr:`device` is
            ``None`` (default).
    """
    _lazy_init()
    _C._cuda.synchronize(_get_device_index(device, optional=True))


def mem_get_info(device=None) -> tuple[int, int]:
    r"""Return the global free and total GPU memory for a device using cudaMemGetInfo.

    Args:
        device (cudalite.device or int or str, optional): selected device. Returns the
            statistic for the current device, given by :func:`current_device`, if
            :attr:`device` is ``None`` (default) or if the device index is not specified.
    """
    _lazy_init()
    return tuple(_C._cuda.mem_get_info(_get_device_index(device, optional=True)))


def current_blas_handle() -> int:
    r"""Return cublasHandle_t pointer to current cuBLAS handle."""
    _lazy_init()
    return _C._cuda.current_blas_handle(_C._cuda.current_device())


def get_arch_list() -> list[str]:
    r"""Return list CUDA architectures this library was compiled for."""
    if not is_available():
        return []
    archs = []
    # CMake's spelling: "90-real,75-virtual" (or "90", which builds both).
    for entry in _C._cuda.compiled_archs().replace(";", ",").split(","):
        number, _, kind = entry.strip().partition("-")
        if not number[:1].isdigit():
            continue  # "native", "all": nothing to report by name
        if kind in ("", "real"):
            archs.append(f"sm_{number}")
        if kind in ("", "virtual"):
            archs.append(f"compute_{number}")
    return archs


def get_gencode_flags() -> str:
    r"""Return NVCC gencode flags this library was compiled with."""
    arch_list = get_arch_list()
    if len(arch_list) == 0:
        return ""
    arch_list_ = [arch.split("_") for arch in arch_list]
    return " ".join(
        [f"-gencode compute=compute_{arch},code={kind}_{arch}" for (kind, arch) in arch_list_]
    )


def is_bf16_supported(including_emulation: bool = True) -> bool:
    r"""Return a bool indicating if the current CUDA device supports dtype bfloat16."""
    if not is_available():
        return False
    # Every GPU cudalite's kernels run on (sm_75 and newer) computes bfloat16 in float.
    return get_device_properties(current_device()).major >= 8 or including_emulation


def is_tf32_supported() -> bool:
    r"""Return a bool indicating if the current CUDA device supports dtype tf32."""
    return is_bf16_supported(including_emulation=False)


def _uninitialized_current_device() -> int:
    """The current device without initialising CUDA: 0 until something selects another."""
    return _C._cuda.current_device() if is_initialized() else 0
