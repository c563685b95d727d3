"""``cudalite.cuda.comm``: torch.cuda.comm, the functions of cudalite.nn.parallel.comm."""

from cudalite.nn.parallel.comm import (
    broadcast,
    broadcast_coalesced,
    gather,
    reduce_add,
    reduce_add_coalesced,
    scatter,
)

__all__ = [
    "broadcast",
    "broadcast_coalesced",
    "reduce_add",
    "reduce_add_coalesced",
    "scatter",
    "gather",
]
