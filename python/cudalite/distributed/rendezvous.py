"""Rendezvous: from an ``init_method`` URL to a store, this process's rank and the world
size (torch.distributed.rendezvous).

- ``env://``: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the environment (what
  torchrun and ``python -m cudalite.distributed.run`` set); rank 0 serves a TCPStore, or,
  under torchrun (TORCHELASTIC_USE_AGENT_STORE=True), every rank is a client of the store
  torchrun's agent serves there.
- ``tcp://host:port?rank=R&world_size=N``: the same with the values in the URL (or the
  ``rank``/``world_size`` arguments).
- ``file:///path?world_size=N``: a FileStore in a file every process can open.
"""

from __future__ import annotations

import os
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

from cudalite.distributed._store import FileStore, PrefixStore, TCPStore, _TorchAgentStore

__all__ = ["rendezvous"]


def _query(url):
    return {k: v[-1] for k, v in parse_qs(url.query).items()}


def _error(scheme: str, msg: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme} rendezvous: {msg}")


def _env(scheme: str, name: str) -> str:
    v = os.environ.get(name)
    if v is None:
        raise _error(scheme, f"environment variable {name} expected, but not set")
    return v


def rendezvous(url: str, rank: int = -1, world_size: int = -1, timeout=timedelta(minutes=30)):
    """(store, rank, world_size) for ``url``."""
    if not isinstance(url, str):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, int) or not isinstance(world_size, int):
        raise RuntimeError(f"`rank` and `world_size` must be integers. {rank} {world_size}")
    parsed = urlparse(url)
    q = _query(parsed)
    if "rank" in q:
        rank = int(q["rank"])
    if "world_size" in q:
        world_size = int(q["world_size"])
    scheme = parsed.scheme
    if scheme == "env":
        if rank == -1:
            rank = int(_env("env://", "RANK"))
        if world_size == -1:
            world_size = int(_env("env://", "WORLD_SIZE"))
        addr = _env("env://", "MASTER_ADDR")
        port = int(_env("env://", "MASTER_PORT"))
        if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
            # torchrun's agent already serves a (torch) TCPStore there: every rank is a client
            attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
            agent = _TorchAgentStore(addr, port, timeout)
            return PrefixStore(f"/worker/attempt_{attempt}", agent), rank, world_size
        store = TCPStore(addr, port, world_size, rank == 0, timeout, wait_for_workers=False)
        return store, rank, world_size
    if scheme == "tcp":
        if rank == -1:
            raise _error("tcp://", "rank parameter missing")
        if world_size == -1:
            raise _error("tcp://", "world size parameter missing")
        if not parsed.hostname or not parsed.port:
            raise _error("tcp://", "port number missing")
        store = TCPStore(
            parsed.hostname, parsed.port, world_size, rank == 0, timeout, wait_for_workers=False
        )
        return store, rank, world_size
    if scheme == "file":
        path = parsed.path
        if not path:
            raise _error("file://", "path missing")
        if rank == -1:
            raise _error("file://", "rank parameter missing")
        if world_size == -1:
            raise _error("file://", "world size parameter missing")
        store = FileStore(path, world_size)
        store.set_timeout(timeout)
        return store, rank, world_size
    raise RuntimeError(f"No rendezvous handler for {scheme}://")
