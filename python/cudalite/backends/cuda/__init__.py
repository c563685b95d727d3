"""cudalite.backends.cuda: cuBLAS settings (torch.backends.cuda.matmul) and the switches of
scaled_dot_product_attention's backends."""

import contextlib
import warnings

from cudalite import _C

# ---- scaled_dot_product_attention's backends ----
from cudalite.backends.cuda._sdp import (
    cudnn_sdp_enabled,
    enable_cudnn_sdp,
    enable_flash_sdp,
    enable_math_sdp,
    enable_mem_efficient_sdp,
    flash_sdp_enabled,
    math_sdp_enabled,
    mem_efficient_sdp_enabled,
)

__all__ = [
    "cuBLASModule",
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "sdp_kernel",
]

# torch.get_float32_matmul_precision's value while TF32 is allowed ("highest" otherwise).
_precision_with_tf32 = "high"
# torch.backends.cuda.matmul.fp32_precision: "none" until one of the switches is used.
_fp32_precision = "none"
# The split-K halves of the reduced-precision settings: recorded, cuBLAS decides itself.
_split_k = {"fp16": True, "bf16": True}


def is_built():
    r"""Return whether cudalite is built with CUDA support.

    Note that this doesn't necessarily mean CUDA is available; just that if this cudalite
    binary were run on a machine with working CUDA drivers and devices, we would be able to
    use it.
    """
    return _C._cuda.is_compiled()


def _flags():
    return list(_C._cuda._get_matmul_flags())  # [tf32, fp16 reduced, bf16 reduced]


def _set_flag(i, value):
    flags = _flags()
    flags[i] = value
    _C._cuda._set_matmul_flags(*flags)


# torch's errors when the legacy switches (allow_tf32, set_float32_matmul_precision) and the new
# one (fp32_precision) disagree about TF32.
_MIXED_PRECISION = (
    "PyTorch is checking the matmul precision without a specific backend name,Current status "
    "indicate that you have used mix of the legacy and new APIs to set the matmul precision. "
    "We suggest only using the new API for matmul precision. See also: "
    "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices"
)
_MIXED_TF32 = (
    "PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul,Current status "
    "indicate that you have used mix of the legacy and new APIs to set the TF32 status for "
    "cublas matmul. We suggest only using the new API to set the TF32 flag. See also: "
    "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices"
)


def _sync_conflict():
    """Tells the core whether float32 products must raise (the two APIs disagree)."""
    _C._cuda._set_tf32_api_conflict(_flags()[0] != (_fp32_precision == "tf32"))


def get_float32_matmul_precision() -> str:
    r"""Return the current value of float32 matrix multiplication precision."""
    legacy_tf32 = _flags()[0]
    if _fp32_precision == "tf32" and not legacy_tf32:
        raise RuntimeError(_MIXED_PRECISION)
    return _precision_with_tf32 if legacy_tf32 else "highest"


def set_float32_matmul_precision(precision: str) -> None:
    r"""Set the internal precision of float32 matrix multiplications.

    ``"highest"`` computes in float32; ``"high"`` and ``"medium"`` allow TF32 tensor cores
    (``cudalite.backends.cuda.matmul.allow_tf32``).
    """
    global _precision_with_tf32, _fp32_precision
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            stacklevel=2,
        )
        return
    if precision != "highest":
        _precision_with_tf32 = precision
    _fp32_precision = "ieee" if precision == "highest" else "tf32"
    _set_flag(0, precision != "highest")
    _sync_conflict()


class cuBLASModule:
    """``cudalite.backends.cuda.matmul``: attributes that switch cuBLAS behaviour."""

    @staticmethod
    def _parse_reduction_setting(value, attr_name):
        def _ensure_bool(obj, which):
            if isinstance(obj, bool):
                return obj
            raise TypeError(f"{attr_name} expects a bool for {which}, but got {type(obj)!r}")

        if isinstance(value, bool):
            return value, True
        if isinstance(value, (list, tuple)):
            if not value:
                raise TypeError(f"{attr_name} expects at least one boolean argument")
            if len(value) > 2:
                raise TypeError(f"{attr_name} expects at most two boolean arguments")
            allow_reduced_precision = _ensure_bool(value[0], "allow_reduced_precision")
            if len(value) == 1:
                return allow_reduced_precision, True
            return allow_reduced_precision, _ensure_bool(value[1], "allow_splitk")
        raise TypeError(
            f"{attr_name} expects a bool or a tuple/list of bools, but got {type(value)!r}"
        )

    def __getattr__(self, name):
        if name == "allow_tf32":
            new_tf32 = _fp32_precision == "tf32"
            if _flags()[0] != new_tf32:
                raise RuntimeError(_MIXED_TF32)
            return new_tf32
        if name == "allow_fp16_reduced_precision_reduction":
            return _flags()[1]
        if name == "allow_fp16_reduced_precision_reduction_split_k":
            return _split_k["fp16"]
        if name == "allow_bf16_reduced_precision_reduction":
            return _flags()[2]
        if name == "allow_bf16_reduced_precision_reduction_split_k":
            return _split_k["bf16"]
        if name == "fp32_precision":
            return _fp32_precision
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        global _fp32_precision, _precision_with_tf32
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(
                    f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}"
                )
            _set_flag(0, value)
            _fp32_precision = "tf32" if value else "ieee"
            _precision_with_tf32 = "high"
            _sync_conflict()
            return
        if name in (
            "allow_fp16_reduced_precision_reduction",
            "allow_bf16_reduced_precision_reduction",
        ):
            allow, split_k = self._parse_reduction_setting(value, name)
            kind = name[6:10]  # "fp16" / "bf16"
            _set_flag(1 if kind == "fp16" else 2, allow)
            _split_k[kind] = split_k
            return
        if name == "fp32_precision":
            # the new API: the legacy state stays as it was (reading it raises while the two
            # disagree, and so does a float32 product)
            if value == "bf16":
                raise RuntimeError("backend 'cuda' does not support precision 'bf16'")
            if value not in ("ieee", "tf32", "none"):
                raise RuntimeError(f"Unknown precision: {value}")
            _fp32_precision = value
            _sync_conflict()
            return
        raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
):
    r"""Temporarily enables or disables the backends of scaled dot product attention; the
    previous flags come back on exit. Deprecated as in torch: use
    ``cudalite.nn.attention.sdpa_kernel``."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    from cudalite.nn.attention import SDPBackend, sdpa_kernel

    backends = []
    if enable_flash:
        backends.append(SDPBackend.FLASH_ATTENTION)
    if enable_mem_efficient:
        backends.append(SDPBackend.EFFICIENT_ATTENTION)
    if enable_math:
        backends.append(SDPBackend.MATH)
    if enable_cudnn:
        backends.append(SDPBackend.CUDNN_ATTENTION)
    with sdpa_kernel(backends) as context:
        yield context
