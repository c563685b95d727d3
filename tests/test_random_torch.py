"""cudalite's CPU random streams against torch's, bit for bit: every case of
random_torch_cases.py replayed with cudalite and compared with what torch 2.11 gave
(tests/data/random_torch.json, written by gen_random_torch.py), and torch's saved generator
states continuing here."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform

import numpy as np
import pytest

import cudalite as C
from random_torch_cases import CASES, STATE_SCRIPTS, canonical_bytes, head

with open(os.path.join(os.path.dirname(__file__), "data", "random_torch.json")) as _f:
    REF = json.load(_f)


def _x86_with_avx2():
    """torch's CPU kernels that fuse multiply-adds (and its float32 normal_ block kernel) are
    its AVX2 build's, which runs on x86 machines with AVX2 and FMA; the recorded values are
    theirs (docs/random.md)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return " avx2" in flags and " fma" in flags


pytestmark = pytest.mark.skipif(
    not _x86_with_avx2(), reason="torch's recorded CPU streams are those of x86 with AVX2"
)


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


def test_table_covers_the_recorded_cases():
    assert sorted(REF["cases"]) == sorted(CASES)
    assert len(CASES) >= 40


@pytest.mark.filterwarnings("ignore:to - 1 is out of bounds")
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_draws_as_torch(name):
    ref = REF["cases"][name]
    value = CASES[name](C)
    if isinstance(value, list):
        assert ref["dtype"] == "list" and len(value) == ref["shape"][0]
    else:
        assert str(value.dtype).removeprefix("cudalite.") == ref["dtype"]
        assert list(value.shape) == ref["shape"]
    assert head(C, value) == ref["head"]
    assert hashlib.sha256(canonical_bytes(C, value)).hexdigest() == ref["sha256"]


@pytest.mark.parametrize("name", sorted(STATE_SCRIPTS))
def test_states_are_torch_bytes(name):
    """The state after the same draws is torch's, byte for byte."""
    ref = REF["states"][name]
    state, after = STATE_SCRIPTS[name](C)
    assert bytes(state.tolist()) == base64.b64decode(ref["state"])
    assert hashlib.sha256(canonical_bytes(C, after)).hexdigest() == ref["after"]


@pytest.mark.parametrize("name", sorted(STATE_SCRIPTS))
def test_torch_state_continues_here(name):
    """A state torch saved, set on a cudalite generator (and on the default one), continues
    torch's stream."""
    raw = np.frombuffer(base64.b64decode(REF["states"][name]["state"]), dtype=np.uint8)
    for g in (C.Generator(), C.default_generator):
        g.set_state(C.from_numpy(raw.copy()))
        after = C.cat(
            [
                C.randn(1, generator=g),
                C.randn(1, generator=g, dtype=C.float64),
                C.rand(5, generator=g).double(),
                C.randn(20, generator=g).double(),
            ]
        )
        assert hashlib.sha256(canonical_bytes(C, after)).hexdigest() == REF["states"][name]["after"]
