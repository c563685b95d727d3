"""The stores (HashStore, PrefixStore, TCPStore, FileStore): torch's semantics for set, get,
add, compare_set, check, wait, delete_key and num_keys, and timeouts as DistStoreError."""

from __future__ import annotations

import importlib.util
import threading
import time
from datetime import timedelta

import pytest

import cudalite.distributed as dist


@pytest.fixture(params=["hash", "tcp", "file", "prefix"])
def store(request, tmp_path):
    if request.param == "hash":
        s = dist.HashStore()
    elif request.param == "tcp":
        s = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=10))
    elif request.param == "file":
        s = dist.FileStore(str(tmp_path / "store"), 1)
    else:
        s = dist.PrefixStore("p", dist.HashStore())
    return s


def test_basic_operations(store):
    store.set("a", "x")
    store.set("b", b"\x00\xff")
    assert store.get("a") == b"x" and store.get("b") == b"\x00\xff"
    assert store.add("n", 2) == 2 and store.add("n", 3) == 5 and store.get("n") == b"5"
    assert store.compare_set("k", "", "v") == b"v"
    assert store.compare_set("k", "wrong", "z") == b"v"
    assert store.compare_set("k", "v", "z") == b"z"
    assert store.check(["a", "k"]) and not store.check(["a", "missing"])
    assert store.delete_key("k") and not store.delete_key("k")
    assert store.num_keys() >= 3
    store.wait(["a", "b"])


def test_get_times_out(store):
    store.set_timeout(timedelta(milliseconds=200))
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError):
        store.get("never")
    assert time.monotonic() - start < 5
    with pytest.raises(dist.DistStoreError):
        store.wait(["never"], timedelta(milliseconds=100))
    assert issubclass(dist.DistStoreError, RuntimeError)


def test_get_waits_for_a_later_set(store):
    def later():
        time.sleep(0.2)
        store.set("late", "here")

    t = threading.Thread(target=later)
    t.start()
    assert store.get("late") == b"here"
    t.join()


def test_tcp_messages_match_torch():
    s = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(milliseconds=300))
    with pytest.raises(dist.DistStoreError) as e:
        s.get("x")
    assert str(e.value) == "wait timeout after 300ms, keys: x"
    with pytest.raises(dist.DistNetworkError) as e:
        dist.TCPStore("127.0.0.1", 1, 2, False, timeout=timedelta(milliseconds=300))
    assert str(e.value) == (
        "The client socket has timed out after 300ms while trying to connect to (127.0.0.1, 1)."
    )


def test_tcp_clients_share_the_master(tmp_path):
    master = dist.TCPStore("127.0.0.1", 0, 2, True, wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", master.port, 2, False)
    client.set("from_client", "1")
    assert master.get("from_client") == b"1"
    assert client.add("c", 1) == 1 and master.add("c", 1) == 2
    assert master.port == client.port and client.host == "127.0.0.1"


def test_file_store_is_shared_between_instances(tmp_path):
    a = dist.FileStore(str(tmp_path / "f"), 2)
    b = dist.FileStore(str(tmp_path / "f"), 2)
    a.set("x", "1")
    assert b.get("x") == b"1"
    assert b.add("n", 1) == 1 and a.add("n", 1) == 2
    assert a.delete_key("x") and not b.check(["x"])
    with pytest.raises(dist.DistStoreError) as e:
        b.set_timeout(timedelta(milliseconds=100))
        b.get("x")
    assert str(e.value) == "Timeout waiting for key: x after 100 ms"


def test_prefix_store_prefixes():
    base = dist.HashStore()
    p = dist.PrefixStore("job", base)
    p.set("k", "v")
    assert base.get("job/k") == b"v" and p.underlying_store is base


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_client_of_torchs_tcpstore():
    # Under torchrun the ranks are clients of the store torch's agent serves.
    import torch.distributed as tdist

    from cudalite.distributed._store import _TorchAgentStore

    server = tdist.TCPStore("127.0.0.1", 0, 1, True, wait_for_workers=False)
    server.set("from_torch", b"hello")
    c = _TorchAgentStore("127.0.0.1", server.port, timedelta(seconds=10))
    assert c.get("from_torch") == b"hello"
    c.set("from_cudalite", b"\x00bye")
    assert server.get("from_cudalite") == b"\x00bye"
    assert c.add("n", 5) == 5 and server.add("n", 2) == 7
    assert c.check(["from_torch"]) and not c.check(["nope"])
    assert c.compare_set("k", "", "v") == b"v" and c.compare_set("k", "x", "y") == b"v"
    assert c.delete_key("k") and not c.delete_key("k")
    c.set_timeout(timedelta(milliseconds=200))
    with pytest.raises(dist.DistStoreError, match="wait timeout after 200ms, keys: never"):
        c.get("never")


def test_file_store_file_goes_with_its_last_user(tmp_path):
    path = tmp_path / "f"
    a = dist.FileStore(str(path), 2)
    b = dist.FileStore(str(path), 2)
    a.set("x", "1")
    del a
    assert path.exists() and b.get("x") == b"1"
    del b
    assert not path.exists()
