"""Helpers of the DataLoader: collation and pinning (torch.utils.data._utils)."""

from cudalite.utils.data._utils import collate, pin_memory, worker

__all__ = ["collate", "pin_memory", "worker"]
