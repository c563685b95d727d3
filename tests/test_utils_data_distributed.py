"""DistributedSampler: the same indices as torch's for the same seed and epoch (recorded
from torch 2.11 in tests/data/distributed_sampler_torch.json), and its checks."""

from __future__ import annotations

import json
import os

import pytest

from cudalite.utils.data import DistributedSampler

DATA = os.path.join(os.path.dirname(__file__), "data", "distributed_sampler_torch.json")


def cases():
    with open(DATA) as f:
        return sorted(json.load(f).items())


@pytest.mark.parametrize(("key", "expected"), cases())
def test_same_order_as_torch(key, expected):
    n, replicas, drop, shuffle, seed, epoch = key.split(",")
    for rank in range(int(replicas)):
        s = DistributedSampler(
            list(range(int(n))),
            num_replicas=int(replicas),
            rank=rank,
            drop_last=drop == "True",
            shuffle=shuffle == "True",
            seed=int(seed),
        )
        s.set_epoch(int(epoch))
        assert list(s) == expected[rank]
        assert len(s) == len(expected[rank])


def test_epochs_differ_and_ranks_partition():
    data = list(range(20))
    a = [list(DistributedSampler(data, num_replicas=2, rank=r)) for r in (0, 1)]
    assert sorted(a[0] + a[1]) == data
    s = DistributedSampler(data, num_replicas=2, rank=0)
    s.set_epoch(1)
    assert list(s) != a[0]


def test_invalid_rank():
    with pytest.raises(ValueError) as e:
        DistributedSampler(list(range(4)), num_replicas=2, rank=2)
    assert str(e.value) == "Invalid rank 2, rank should be in the interval [0, 1]"


def test_needs_a_group_without_num_replicas():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(list(range(4)))
