"""A CPU process group over the rendezvous store (backend name "gloo"): every rank writes
its tensor's bytes under a key of the collective and reads the others'. It moves each
tensor through the store, so it is for the CPU, for tests and for small control messages;
the NCCL backend does the work on GPUs.

Collectives of one group are numbered in the order each rank calls them (as every backend
requires, all ranks call the same collectives in the same order); the last rank to read a
collective's keys deletes them. A rank that waits longer than the group's timeout for the
others raises :class:`DistBackendError` naming the ranks that never arrived.
"""

from __future__ import annotations

import cudalite
from cudalite.distributed._store import DistBackendError, DistStoreError
from cudalite.distributed._work import RedOpType, Work


def to_bytes(t) -> bytes:
    c = t.detach().contiguous()
    if c.device.type != "cpu":
        c = c.cpu()
    if c.numel() == 0:
        return b""
    return c.reshape(-1).view(cudalite.uint8).numpy().tobytes()


def from_bytes(data: bytes, like):
    if not data:
        return cudalite.empty(like.shape, dtype=like.dtype)
    return cudalite.frombuffer(bytearray(data), dtype=like.dtype).reshape(like.shape)


def reduce_tensors(tensors, op: RedOpType, size: int):
    out = tensors[0].clone()
    for t in tensors[1:]:
        if op in (RedOpType.SUM, RedOpType.AVG):
            out = out + t if out.dtype != cudalite.bool else out | t
        elif op is RedOpType.PRODUCT:
            out = out * t if out.dtype != cudalite.bool else out & t
        elif op is RedOpType.MIN:
            out = cudalite.minimum(out, t)
        elif op is RedOpType.MAX:
            out = cudalite.maximum(out, t)
        elif op is RedOpType.BAND:
            out = out & t
        elif op is RedOpType.BOR:
            out = out | t
        elif op is RedOpType.BXOR:
            out = out ^ t
        else:
            raise ValueError(f"Cannot use ReduceOp.{op.name} with the gloo backend")
    if op is RedOpType.AVG:
        if out.dtype.is_floating_point:
            out = out / size
        else:
            out = cudalite.div(out, size, rounding_mode="floor")
    return out


class ProcessGroupStore:
    """The CPU ("gloo") backend of one process group."""

    backend = "gloo"

    def __init__(self, store, rank: int, size: int, timeout):
        self.store = store
        self._rank = rank
        self._size = size
        self._timeout = timeout
        self._seq = 0
        self._p2p: dict[tuple[int, int], int] = {}
        self._error = None

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def _wait(self, keys, what: str, ranks) -> None:
        try:
            self.store.wait(keys, self._timeout)
        except DistStoreError:
            missing = [r for k, r in zip(keys, ranks, strict=True) if not self.store.check([k])]
            raise DistBackendError(
                f"[Rank {self._rank}] {what} timed out after "
                f"{int(self._timeout.total_seconds() * 1000)} ms waiting for rank(s) "
                f"{missing} of the group (a rank that crashed, skipped a collective or called "
                "them in another order)"
            ) from None

    def _done(self, key: str, readers: int, keys) -> None:
        if self.store.add(f"{key}/done", 1) == readers:
            for k in keys:
                self.store.delete_key(k)
            self.store.delete_key(f"{key}/done")

    def exchange(self, data: bytes | None, what: str, src: int | None = None) -> list:
        """All ranks' bytes (src's alone when src is given: a broadcast)."""
        self._seq += 1
        key = f"cpu/{self._seq}"
        ranks = [src] if src is not None else list(range(self._size))
        keys = [f"{key}/{r}" for r in ranks]
        if src is None or src == self._rank:
            self.store.set(f"{key}/{self._rank}", data)
        self._wait(keys, what, ranks)
        out = [self.store.get(k) for k in keys]
        self._done(key, self._size, keys)
        return out

    # ---- collectives (tensors on any device; the data goes through the CPU) ----

    def all_reduce(self, tensor, op: RedOpType):
        parts = self.exchange(to_bytes(tensor), "all_reduce")
        tensor.copy_(reduce_tensors([from_bytes(p, tensor) for p in parts], op, self._size))

    def reduce(self, tensor, dst: int, op: RedOpType):
        parts = self.exchange(to_bytes(tensor), "reduce")
        if self._rank == dst:
            tensor.copy_(reduce_tensors([from_bytes(p, tensor) for p in parts], op, self._size))

    def broadcast(self, tensor, src: int):
        (part,) = self.exchange(to_bytes(tensor) if self._rank == src else None, "broadcast", src)
        if self._rank != src:
            tensor.copy_(from_bytes(part, tensor))

    def all_gather(self, outputs, tensor):
        parts = self.exchange(to_bytes(tensor), "all_gather")
        for out, p in zip(outputs, parts, strict=True):
            out.copy_(from_bytes(p, tensor))

    def reduce_scatter(self, output, inputs, op: RedOpType):
        data = b"".join(to_bytes(t) for t in inputs)
        parts = self.exchange(data, "reduce_scatter")
        n = len(to_bytes(inputs[self._rank]))
        offset = sum(len(to_bytes(t)) for t in inputs[: self._rank])
        mine = [from_bytes(p[offset : offset + n], inputs[self._rank]) for p in parts]
        output.copy_(reduce_tensors(mine, op, self._size).reshape(output.shape))

    def barrier(self):
        self.exchange(b"", "barrier")

    def send(self, tensor, dst: int):
        n = self._p2p.get((self._rank, dst), 0)
        self._p2p[(self._rank, dst)] = n + 1
        self.store.set(f"p2p/{self._rank}-{dst}/{n}", to_bytes(tensor))

    def recv(self, tensor, src: int):
        n = self._p2p.get((src, self._rank), 0)
        self._p2p[(src, self._rank)] = n + 1
        key = f"p2p/{src}-{self._rank}/{n}"
        self._wait([key], "recv", [src])
        tensor.copy_(from_bytes(self.store.get(key), tensor))
        self.store.delete_key(key)

    def work(self, tensors=()):
        return Work(None, None, tuple(tensors), self)

    def shutdown(self):
        pass

    def abort(self):
        pass
