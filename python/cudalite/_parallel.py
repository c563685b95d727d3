"""The intra-op thread pool's size: torch.set_num_threads / torch.get_num_threads.

cudalite's CPU work that runs on several threads (copies between pageable and pinned memory
today) uses one pool; these set and read its size.
"""

from cudalite import _C

__all__ = ["get_num_threads", "set_num_threads"]


def set_num_threads(nthreads: int) -> None:
    r"""set_num_threads(int)

    Sets the number of threads used for intraop parallelism on CPU.
    """
    if type(nthreads) is bool or not isinstance(nthreads, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(nthreads).__name__}")
    if nthreads > 2**31 - 1 or nthreads < -(2**31):
        raise ValueError("Overflow when unpacking long")
    if nthreads <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _C._set_num_threads(nthreads)


def get_num_threads() -> int:
    r"""get_num_threads() -> int

    Returns the number of threads used for parallelizing CPU operations
    """
    return _C._get_num_threads()
