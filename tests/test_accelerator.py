"""cudalite.accelerator: torch.accelerator's device-agnostic API over CUDA."""

from __future__ import annotations

import re

import pytest

import cudalite
from conftest import HAS_CUDA, requires_cuda
from cudalite import _C, accelerator

COMPILED = _C._cuda.is_compiled()


def test_current_accelerator_is_the_build():
    if COMPILED:
        assert accelerator.current_accelerator() == cudalite.device("cuda")
        assert accelerator.current_accelerator().index is None
    else:
        assert accelerator.current_accelerator() is None


def test_check_available():
    expected = cudalite.device("cuda") if HAS_CUDA else None
    assert accelerator.current_accelerator(check_available=True) == expected


def test_availability_and_count():
    assert accelerator.is_available() is HAS_CUDA
    assert accelerator.device_count() == (cudalite.cuda.device_count() if COMPILED else 0)


@pytest.mark.skipif(COMPILED, reason="a CPU-only build")
def test_cpu_only_build():
    for fn in (accelerator.current_device_index, accelerator.synchronize):
        with pytest.raises(RuntimeError, match="^Accelerator expected$"):
            fn()
    with pytest.raises(RuntimeError, match="^Accelerator expected$"):
        accelerator.set_device_index("cuda:0")
    assert accelerator.memory_stats() == {}
    assert accelerator.memory_allocated() == 0
    accelerator.empty_cache()  # nothing to release


@pytest.mark.parametrize("bad", ["cpu", cudalite.device("mps", 0)])
def test_wrong_device_type(bad):
    if not COMPILED:
        pytest.skip("a CPU-only build has no accelerator to compare with")
    name = cudalite.device(bad).type
    with pytest.raises(ValueError, match=f"^{name} doesn't match the current accelerator cuda.$"):
        accelerator.set_device_index(bad)


def test_index_required():
    if not COMPILED:
        pytest.skip("a CPU-only build has no accelerator")
    msg = "Expected a cudalite.device with a specified index or an integer, but got:cuda"
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        accelerator.set_device_index("cuda")


def test_deprecated_names():
    if not HAS_CUDA:
        pytest.skip("needs a device")
    with pytest.warns(FutureWarning, match="^Use `current_device_index` instead.$"):
        assert accelerator.current_device_idx() == accelerator.current_device_index()


@requires_cuda
def test_device_index_and_synchronize():
    assert accelerator.current_device_index() == cudalite.cuda.current_device()
    last = accelerator.device_count() - 1
    before = accelerator.current_device_index()
    with accelerator.device_index(last):
        assert accelerator.current_device_index() == last
    assert accelerator.current_device_index() == before
    with accelerator.device_index(None):
        assert accelerator.current_device_index() == before
    accelerator.set_device_index(f"cuda:{before}")
    x = cudalite.ones(1000, device="cuda") * 2
    accelerator.synchronize()
    accelerator.synchronize(0)
    accelerator.synchronize("cuda:0")
    assert accelerator.current_stream() == cudalite.cuda.current_stream()
    assert x.sum().item() == 2000


@requires_cuda
def test_memory():
    accelerator.reset_peak_memory_stats()
    before = accelerator.memory_allocated()
    x = cudalite.empty(1 << 20, dtype=cudalite.uint8, device="cuda")
    assert accelerator.memory_allocated() == before + (1 << 20)
    assert accelerator.max_memory_allocated() >= before + (1 << 20)
    assert accelerator.memory_reserved() >= accelerator.memory_allocated()
    assert accelerator.max_memory_reserved() >= accelerator.memory_reserved()
    assert accelerator.memory_stats()["allocated_bytes.all.current"] == before + (1 << 20)
    del x
    accelerator.empty_cache()
    accelerator.reset_accumulated_memory_stats()
