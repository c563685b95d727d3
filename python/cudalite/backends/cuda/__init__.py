"""cudalite.backends.cuda: cuBLAS settings (torch.backends.cuda.matmul)."""

from cudalite import _C

__all__ = ["cuBLASModule", "is_built", "matmul"]

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


def get_float32_matmul_precision() -> str:
    r"""Return the current value of float32 matrix multiplication precision."""
    return _precision_with_tf32 if _flags()[0] else "highest"


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
            return _flags()[0]
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
            if value not in ("ieee", "tf32", "none"):
                raise RuntimeError(f"Unknown precision: {value}")
            _fp32_precision = value
            _set_flag(0, value == "tf32")
            return
        raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()
