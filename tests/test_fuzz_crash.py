"""The crash fuzzer's short run (tests/fuzz_crash.py; the long run is in docs/development.md):
a few thousand hostile calls of cudalite's functions and Tensor methods, in subprocesses,
with no crash, hang or corrupted result."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

import fuzz_crash  # noqa: E402


def test_fuzz_finds_every_target():
    names = {(kind, name) for kind, name, _ in fuzz_crash.targets()}
    assert ("fn", "empty") in names and ("fn", "tensor") in names
    assert ("method", "reshape") in names and ("method", "__getitem__") in names
    assert not any(name in fuzz_crash.SKIP for _, name in names)


def test_fuzz_calls_are_reproducible():
    tgts = fuzz_crash.targets()
    a = [fuzz_crash.describe(fuzz_crash.call_spec(7, i, tgts)) for i in range(50)]
    b = [fuzz_crash.describe(fuzz_crash.call_spec(7, i, tgts)) for i in range(50)]
    assert a == b and len(set(a)) > 40


def test_fuzz_short_run(device):
    done, failures = fuzz_crash.run(5000, seed=2026, batch=2500, device=device, log=lambda m: None)
    assert failures == []
    assert done == 5000


def test_fuzz_reports_a_crash(tmp_path, monkeypatch):
    """The harness names the call a worker died in and goes on after it."""
    tgts = fuzz_crash.targets()
    victim = 5
    real = fuzz_crash.__file__
    # A worker that dies by SIGSEGV at call `victim` of its batch.
    script = tmp_path / "fuzz_crash.py"
    source = Path(real).read_text()
    source = source.replace(
        "        signal.alarm(call_timeout)\n",
        f"        signal.alarm(call_timeout)\n        if i == {victim}:\n"
        "            os.kill(os.getpid(), signal.SIGSEGV)\n",
        1,
    )
    script.write_text(source)
    monkeypatch.setattr(fuzz_crash, "__file__", str(script))
    done, failures = fuzz_crash.run(20, seed=3, batch=10, log=lambda m: None)
    assert done == 20
    expected = fuzz_crash.describe(fuzz_crash.call_spec(3, victim, tgts))
    assert failures == [f"crash (SIGSEGV): call {victim}: {expected}"]
