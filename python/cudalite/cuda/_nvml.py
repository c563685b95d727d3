"""GPU monitoring through NVML, with torch.cuda's names and return values.

torch answers these through the nvidia-ml-py package; cudalite opens the driver's NVML
library itself (csrc/cuda/nvml.cpp), so they work with no extra package, and without
initialising CUDA when no device was selected yet.
"""

from cudalite import _C
from cudalite.cuda._device import _get_device_index, _uninitialized_current_device

_NO_DRIVER = "cuda driver can't be loaded, is cuda enabled?"


def _device_index(device) -> int:
    """The CUDA ordinal to report on; ``None`` is the current device (0 before CUDA starts)."""
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device) and device.type == "cuda" and device.index is None:
        device = None
    if device is None:
        return _uninitialized_current_device()
    return _get_device_index(device, optional=True)


def _handle_device(device) -> int:
    if not _C._cuda._nvml_available():
        raise RuntimeError(_NO_DRIVER)
    return _device_index(device)


def list_gpu_processes(device=None) -> str:
    r"""Return a human-readable printout of the running processes and their GPU memory use.

    This can be useful to display periodically during training, or when handling
    out-of-memory exceptions.

    Args:
        device (cudalite.device or int, optional): selected device. Returns printout for the
            current device, given by :func:`~cudalite.cuda.current_device`, if :attr:`device`
            is ``None`` (default).
    """
    if not _C._cuda._nvml_available():
        return _NO_DRIVER
    idx = _device_index(device)
    lines = [f"GPU:{_C._cuda._nvml_index(idx)}"]
    procs = _C._cuda._nvml_processes(idx)
    if len(procs) == 0:
        lines.append("no processes are running")
    for pid, used in procs:
        if used is None:  # NVML can't see other containers' usage
            lines.append(f"process {pid:>10d} uses {'N/A':>12} MB GPU memory")
        else:
            lines.append(f"process {pid:>10d} uses {used / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)


def device_memory_used(device=None) -> int:
    r"""Return used global (device) memory in bytes as given by `nvidia-smi`.

    Args:
        device (cudalite.device or int, optional): selected device. Returns statistic for
            the current device if :attr:`device` is ``None`` (default).
    """
    return _C._cuda._nvml_memory_used(_handle_device(device))


def memory_usage(device=None) -> int:
    r"""Return the percent of time over the past sample period during which global (device)
    memory was being read or written as given by `nvidia-smi`.

    Args:
        device (cudalite.device or int, optional): selected device. Returns statistic for
            the current device if :attr:`device` is ``None`` (default).

    Warning: Each sample period may be between 1 second and 1/6 second, depending on the
    product being queried.
    """
    return _C._cuda._nvml_memory_usage(_handle_device(device))


def utilization(device=None) -> int:
    r"""Return the percent of time over the past sample period during which one or more
    kernels was executing on the GPU as given by `nvidia-smi`.

    Args:
        device (cudalite.device or int, optional): selected device. Returns statistic for
            the current device if :attr:`device` is ``None`` (default).

    Warning: Each sample period may be between 1 second and 1/6 second, depending on the
    product being queried.
    """
    return _C._cuda._nvml_utilization(_handle_device(device))


def temperature(device=None) -> int:
    r"""Return the average temperature of the GPU sensor in Degrees C (Centigrades).

    The average temperature is computed based on past sample period as given by
    `nvidia-smi`.

    Args:
        device (cudalite.device or int, optional): selected device. Returns statistic for
            the current device if :attr:`device` is ``None`` (default).
    """
    return _C._cuda._nvml_temperature(_handle_device(device))


def power_draw(device=None) -> int:
    r"""Return the average power draw of the GPU sensor in mW (MilliWatts) over the past
    sample period as given by `nvidia-smi` for Fermi or newer fully supported devices.

    Args:
        device (cudalite.device or int, optional): selected device. Returns statistic for
            the current device if :attr:`device` is ``None`` (default).
    """
    return _C._cuda._nvml_power_draw(_handle_device(device))


def clock_rate(device=None) -> int:
    r"""Return the clock speed of the GPU SM in MHz (megahertz) over the past sample period
    as given by `nvidia-smi`.

    Args:
        device (cudalite.device or int, optional): selected device. Returns statistic for
            the current device if :attr:`device` is ``None`` (default).
    """
    return _C._cuda._nvml_clock_rate(_handle_device(device))
