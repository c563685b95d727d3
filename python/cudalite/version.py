"""cudalite.version: what this build is (torch.version).

``__version__`` here is the package's only statement of its version: pyproject.toml reads it
from this file when a wheel is built.
"""

from cudalite import _C

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"

#: The commit the extension was built from ("Unknown" when built outside a git checkout).
git_version: str = _C._git_version
#: Whether the extension was built without optimisation (a CMake Debug build).
debug: bool = _C._debug
#: The CUDA toolkit's "major.minor" the extension was compiled with, None for a CPU-only build.
cuda: str | None = ".".join(_C._cuda.compiled_version().split(".")[:2]) or None
#: cudalite builds for neither ROCm nor XPU.
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
