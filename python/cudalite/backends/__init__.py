"""cudalite.backends: switches for the libraries behind the ops (torch.backends)."""

from cudalite.backends import cuda, cudnn, mps
from cudalite.backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["cuda", "cudnn", "get_float32_matmul_precision", "mps", "set_float32_matmul_precision"]
