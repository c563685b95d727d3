"""``cudalite.nn.parallel``: ``DistributedDataParallel``, which needs a default process group
that cudalite cannot create yet (cudalite.distributed); constructing one raises torch's error
for a missing group."""

from __future__ import annotations

from cudalite.nn.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """torch's DDP; needs ``cudalite.distributed.init_process_group``, which is not available
    yet, so construction raises as torch's does without a default process group."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, **kwargs):
        from cudalite import distributed

        raise ValueError(distributed._NO_GROUP)
