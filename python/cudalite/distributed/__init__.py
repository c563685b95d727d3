"""``cudalite.distributed``: the names of ``torch.distributed`` that single-process code
imports and checks (``init_process_group``, ``is_initialized``, ``get_rank``...).

cudalite has no process-group backend yet (NCCL collectives are planned, see docs/cuda.md),
so ``is_available()`` is False, no default group can be initialised, and the functions that
need one raise torch's error for a missing default group. Code that only runs its
distributed branch when ``RANK`` is set (nanoGPT's train.py, torchrun-aware scripts) runs
unchanged on one process.
"""

from __future__ import annotations

__all__ = [
    "barrier",
    "destroy_process_group",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_nccl_available",
]

_NO_GROUP = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


def is_available() -> bool:
    """False: cudalite has no process-group backend yet."""
    return False


def is_nccl_available() -> bool:
    return False


def is_initialized() -> bool:
    """Whether the default process group exists (never, in cudalite for now)."""
    return False


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    raise RuntimeError(
        "cudalite.distributed: no process-group backend is available (cudalite has no NCCL "
        "or Gloo process groups yet); run on one process, or use torch.distributed."
    )


def destroy_process_group(group=None):
    raise ValueError(_NO_GROUP)


def get_rank(group=None) -> int:
    raise ValueError(_NO_GROUP)


def get_world_size(group=None) -> int:
    raise ValueError(_NO_GROUP)


def barrier(group=None, async_op=False, device_ids=None):
    raise ValueError(_NO_GROUP)
