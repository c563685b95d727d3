"""DistributedDataParallel with two processes: the parameters after a few steps equal one
process training on the whole batch; buckets as gradient views, no_sync, unused parameters
(CPU backend always, NCCL with two GPUs)."""

from __future__ import annotations

import pytest

from test_distributed_multiprocess import BACKENDS, launch


def max_diff(a, b):
    return max(abs(p - q) for u, v in zip(a, b, strict=True) for p, q in zip(u, v, strict=True))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scenario", ["ddp", "ddp_bucket_view"])
def test_ddp_matches_one_process_on_the_whole_batch(backend, scenario, tmp_path):
    proc, (r0, r1) = launch(scenario, backend, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert max_diff(r0["params"], r0["ref"]) < 1e-5
    assert max_diff(r0["params"], r1["params"]) == 0  # identical on every rank
    # a 1e-4 MiB cap puts each of the 4 parameters in a bucket of its own
    assert r0["buckets"] == (4 if scenario == "ddp_bucket_view" else 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ddp_no_sync_accumulates_then_reduces(backend, tmp_path):
    proc, (r0, r1) = launch("ddp_no_sync", backend, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert max_diff(r0["grads"], r0["ref"]) < 1e-5
    assert max_diff(r1["grads"], r0["ref"]) < 1e-5
    assert max_diff(r0["local"], r1["local"]) > 0  # no_sync left the gradients local


@pytest.mark.parametrize("backend", BACKENDS)
def test_ddp_unused_parameters(backend, tmp_path):
    proc, (r0, r1) = launch("ddp_unused", backend, tmp_path)
    assert proc.returncode == 0, proc.stderr
    for r, res in enumerate((r0, r1)):
        assert res["unused_grad"] == 0.0 and res["used_grad"] > 0
        assert res["error"].startswith(
            "Expected to have finished reduction in the prior iteration before starting a new one."
        )
        assert res["error"].endswith(
            f"Parameters which did not receive grad for rank {r}: b.bias, b.weight"
        )
