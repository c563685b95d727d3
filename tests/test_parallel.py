"""cudalite.set_num_threads / get_num_threads: the intra-op thread pool's size."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

import cudalite
from conftest import requires_cuda


@pytest.fixture
def restore_threads():
    before = cudalite.get_num_threads()
    yield
    cudalite.set_num_threads(before)


def test_default_is_the_cpus_this_process_may_use():
    code = "import cudalite; print(cudalite.get_num_threads())"
    env = {k: v for k, v in os.environ.items() if k != "CUDALITE_COPY_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert int(out.stdout) == min(max(len(os.sched_getaffinity(0)), 1), 16)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1])
def test_set_and_get(n, restore_threads):
    cudalite.set_num_threads(n)
    assert cudalite.get_num_threads() == n


def test_more_threads_than_cpus(restore_threads):
    cudalite.set_num_threads(33)
    assert cudalite.get_num_threads() == 33
    cudalite.set_num_threads(1000)
    assert cudalite.get_num_threads() == 64  # the pool's limit


@requires_cuda
@pytest.mark.parametrize("n", [1, 2, 5])
def test_copies_are_right_at_any_size(n, restore_threads):
    # Copies between pageable and GPU memory are the work the pool splits (through pinned
    # staging buffers); the pool's size must never change their results.
    cudalite.set_num_threads(n)
    src = cudalite.arange(3 << 20, dtype=cudalite.float32)  # 12 MiB: split over threads
    back = src.cuda().cpu()
    assert cudalite.equal(back, src)


def test_fork_keeps_the_setting(restore_threads):
    cudalite.set_num_threads(3)
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() with threads running
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0 if cudalite.get_num_threads() == 3 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("bad", [0, -1, -(2**31)])
def test_non_positive(bad, restore_threads):
    with pytest.raises(RuntimeError, match="^set_num_threads expects a positive integer$"):
        cudalite.set_num_threads(bad)


@pytest.mark.parametrize(
    "bad, name", [(2.0, "float"), ("2", "str"), (True, "bool"), (None, "NoneType")]
)
def test_non_int(bad, name, restore_threads):
    with pytest.raises(RuntimeError, match=f"^set_num_threads expects an int, but got {name}$"):
        cudalite.set_num_threads(bad)


def test_overflow(restore_threads):
    with pytest.raises(ValueError, match="^Overflow when unpacking long$"):
        cudalite.set_num_threads(2**40)
