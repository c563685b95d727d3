"""The short run of the checkpoint fuzzer (tests/fuzz_checkpoints.py): damaged files load
correct values or raise a clear exception, in worker processes that must not crash, each
load within twice the file's tensors of memory. docs/development.md gives the long run."""

from __future__ import annotations

import shutil
import sys

import pytest

import fuzz_checkpoints

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="measures RSS in /proc")


def test_damaged_checkpoints_never_crash(device):
    # (on CUDA, every storage that passes its checks is copied to the GPU)
    summary = fuzz_checkpoints.run(600, seed=1, workers=2, batch=150, deadline=45, device=device)
    try:
        assert summary["failures"] == []
        assert summary["files"] >= 300
        assert summary["outcomes"].get("loaded", 0) > 0
        assert len(summary["outcomes"]) > 1
        # Files load from their paths (pread) and from buffers (the stream), both checked.
        for source in ("path", "buffer"):
            outcomes = {r["outcome"] for r in summary["results"] if r["source"] == source}
            assert "loaded" in outcomes and "RuntimeError" in outcomes
    finally:
        shutil.rmtree(summary["dir"], ignore_errors=True)
