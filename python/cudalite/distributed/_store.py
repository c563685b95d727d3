"""Key-value stores for rendezvous (torch.distributed's Store, HashStore, PrefixStore,
TCPStore, FileStore), in pure Python.

A store holds bytes under string keys; ``get`` and ``wait`` block until the keys exist or
the store's timeout passes (:class:`DistStoreError`). ``TCPStore`` is served by one process
(``is_master=True``, rank 0 in practice) from a background thread; ``FileStore`` is an
append-only log in a file that every process opens, guarded by ``fcntl`` locks.
"""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import threading
import time
import weakref
from datetime import timedelta

__all__ = [
    "DistBackendError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "Store",
    "TCPStore",
]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """An error of a process-group backend (NCCL, or a timed-out collective)."""


class DistStoreError(DistError):
    """A store's error: a key that did not appear before the timeout, say."""


class DistNetworkError(DistError):
    """A network error (a store that can't be reached)."""


def _b(value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"store values are str or bytes, got {type(value).__name__}")


def _ms(timeout: timedelta) -> int:
    return int(timeout.total_seconds() * 1000)


class Store:
    """The interface every store has; subclasses implement the ``_``-prefixed methods."""

    def __init__(self, timeout: timedelta = _DEFAULT_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    @timeout.setter
    def timeout(self, value: timedelta) -> None:
        self._timeout = value

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = timeout

    def set(self, key: str, value) -> None:
        self._set(key, _b(value))

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._get(key)

    def add(self, key: str, value: int) -> int:
        return self._add(key, int(value))

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        return self._compare_set(key, _b(expected_value), _b(desired_value))

    def check(self, keys: list[str]) -> bool:
        return self._check(list(keys))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        timeout = self._timeout if timeout is None else timeout
        if not self._wait(list(keys), timeout.total_seconds()):
            raise DistStoreError(f"wait timeout after {_ms(timeout)}ms, keys: {', '.join(keys)}")

    def delete_key(self, key: str) -> bool:
        return self._delete(key)

    def num_keys(self) -> int:
        return self._num_keys()

    def multi_get(self, keys: list[str]) -> list[bytes]:
        return [self.get(k) for k in keys]

    def multi_set(self, keys: list[str], values: list) -> None:
        for k, v in zip(keys, values, strict=True):
            self.set(k, v)


class _Table:
    """A dict of keys with a condition variable: the state behind HashStore and the
    TCPStore server."""

    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.cond = threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def get(self, key):
        with self.cond:
            return self.data[key]

    def add(self, key, value):
        with self.cond:
            n = int(self.data.get(key, b"0")) + value
            self.data[key] = str(n).encode()
            self.cond.notify_all()
            return n

    def compare_set(self, key, expected, desired):
        with self.cond:
            cur = self.data.get(key)
            if cur is None:
                if expected == b"":
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected
            if cur == expected:
                self.data[key] = desired
                self.cond.notify_all()
                return desired
            return cur

    def check(self, keys):
        with self.cond:
            return all(k in self.data for k in keys)

    def wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def delete(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.cond:
            return len(self.data)


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self):
        super().__init__()
        self._t = _Table()

    def _set(self, key, value):
        self._t.set(key, value)

    def _get(self, key):
        return self._t.get(key)

    def _add(self, key, value):
        return self._t.add(key, value)

    def _compare_set(self, key, expected, desired):
        return self._t.compare_set(key, expected, desired)

    def _check(self, keys):
        return self._t.check(keys)

    def _wait(self, keys, seconds):
        return self._t.wait(keys, seconds)

    def _delete(self, key):
        return self._t.delete(key)

    def _num_keys(self):
        return self._t.num_keys()


class PrefixStore(Store):
    """Every key of ``store`` prefixed with ``prefix + '/'``."""

    def __init__(self, prefix: str, store: Store):
        super().__init__(store.timeout)
        self._prefix = prefix
        self._store = store

    @property
    def underlying_store(self) -> Store:
        return self._store

    def _k(self, key):
        return f"{self._prefix}/{key}"

    def set(self, key, value):
        self._store.set(self._k(key), value)

    def get(self, key):
        return self._store.get(self._k(key))

    def add(self, key, value):
        return self._store.add(self._k(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self._store.compare_set(self._k(key), expected_value, desired_value)

    def check(self, keys):
        return self._store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        self._store.wait([self._k(k) for k in keys], timeout)

    def delete_key(self, key):
        return self._store.delete_key(self._k(key))

    def num_keys(self):
        return self._store.num_keys()

    @property
    def timeout(self):
        return self._store.timeout

    @timeout.setter
    def timeout(self, value):
        self._store.timeout = value

    def set_timeout(self, timeout):
        self._store.set_timeout(timeout)


# ---- TCPStore: a request is an op byte and length-prefixed fields; so is the reply ----

_SET, _GET, _ADD, _CAS, _CHECK, _WAIT, _DELETE, _NUM_KEYS, _PING = range(9)


def _send(sock, *fields: bytes) -> None:
    parts = [struct.pack("!I", len(fields))]
    for f in fields:
        parts.append(struct.pack("!Q", len(f)))
        parts.append(f)
    sock.sendall(b"".join(parts))


def _recv_exact(sock, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the store's connection was closed")
        buf += chunk
    return bytes(buf)


def _recv(sock) -> list[bytes]:
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    out = []
    for _ in range(n):
        (size,) = struct.unpack("!Q", _recv_exact(sock, 8))
        out.append(_recv_exact(sock, size))
    return out


class _Server:
    """The TCPStore's server: a thread that accepts connections, one thread per client."""

    def __init__(self, host: str, port: int):
        self.table = _Table()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(("" if family == socket.AF_INET else "::", port))
        except OSError as e:
            self.sock.close()
            raise DistNetworkError(
                f"The server socket has failed to listen on any local network address. "
                f"port: {port}, useIpv6: {family == socket.AF_INET6}, code: {e.errno}, "
                f"name: {e.strerror}"
            ) from None
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="TCPStore").start()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        t = self.table
        try:
            while True:
                req = _recv(conn)
                op = req[0][0]
                if op == _SET:
                    t.set(req[1].decode(), req[2])
                    _send(conn)
                elif op == _GET:
                    key = req[1].decode()
                    with t.cond:
                        v = t.data.get(key)
                    _send(conn, *([] if v is None else [v]))
                elif op == _ADD:
                    _send(conn, str(t.add(req[1].decode(), int(req[2]))).encode())
                elif op == _CAS:
                    _send(conn, t.compare_set(req[1].decode(), req[2], req[3]))
                elif op == _CHECK:
                    _send(conn, b"1" if t.check([k.decode() for k in req[1:]]) else b"0")
                elif op == _WAIT:
                    ok = t.wait([k.decode() for k in req[2:]], float(req[1]))
                    _send(conn, b"1" if ok else b"0")
                elif op == _DELETE:
                    _send(conn, b"1" if t.delete(req[1].decode()) else b"0")
                elif op == _NUM_KEYS:
                    _send(conn, str(t.num_keys()).encode())
                else:
                    _send(conn, b"pong")
        except (ConnectionError, OSError, IndexError, ValueError):
            conn.close()

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass


class TCPStore(Store):
    """A store served over TCP by the process that passes ``is_master=True``; the others
    connect to ``host_name:port`` (retrying until ``timeout``). With ``wait_for_workers``
    the master waits until ``world_size`` processes have connected."""

    def __init__(
        self,
        host_name: str,
        port: int,
        world_size: int | None = None,
        is_master: bool = False,
        timeout: timedelta = _DEFAULT_TIMEOUT,
        wait_for_workers: bool = True,
        multi_tenant: bool = False,
        master_listen_fd: int | None = None,
        use_libuv: bool | None = None,
    ):
        super().__init__(timeout)
        self._host = host_name
        self._server = _Server(host_name, port) if is_master else None
        self._port = self._server.port if self._server else port
        self._lock = threading.Lock()
        self._sock = self._connect(timeout)
        self._world_size = world_size
        self._call(_ADD, b"_tcpstore/workers", b"1")
        if is_master and wait_for_workers and world_size:
            deadline = time.monotonic() + timeout.total_seconds()
            while int(self._call(_ADD, b"_tcpstore/workers", b"0")[0]) < world_size:
                if time.monotonic() > deadline:
                    raise DistStoreError(
                        f"Timed out after {int(timeout.total_seconds())} seconds waiting for "
                        f"clients. {int(self._call(_ADD, b'_tcpstore/workers', b'0')[0])}/"
                        f"{world_size} clients joined."
                    )
                time.sleep(0.01)

    def _connect(self, timeout: timedelta):
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                sock = socket.create_connection((self._host, self._port), timeout=1.0)
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() > deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {_ms(timeout)}ms while trying "
                        f"to connect to ({self._host}, {self._port})."
                    ) from None
                time.sleep(0.05)

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @property
    def libuvBackend(self) -> bool:  # noqa: N802 (torch's name)
        return False

    def _call(self, op: int, *fields: bytes) -> list[bytes]:
        with self._lock:
            _send(self._sock, bytes([op]), *fields)
            return _recv(self._sock)

    def _set(self, key, value):
        self._call(_SET, key.encode(), value)

    def _get(self, key):
        r = self._call(_GET, key.encode())
        if not r:
            raise DistStoreError(f"key {key} was deleted")
        return r[0]

    def _add(self, key, value):
        return int(self._call(_ADD, key.encode(), str(value).encode())[0])

    def _compare_set(self, key, expected, desired):
        return self._call(_CAS, key.encode(), expected, desired)[0]

    def _check(self, keys):
        return self._call(_CHECK, *[k.encode() for k in keys])[0] == b"1"

    def _wait(self, keys, seconds):
        # In slices, so that other threads can use the connection meanwhile (a set from
        # another thread may be what this wait is for).
        deadline = time.monotonic() + seconds
        fields = [k.encode() for k in keys]
        while True:
            left = deadline - time.monotonic()
            step = max(min(left, 0.05), 0.0)
            if self._call(_WAIT, repr(step).encode(), *fields)[0] == b"1":
                return True
            if left <= 0:
                return False

    def _delete(self, key):
        return self._call(_DELETE, key.encode())[0] == b"1"

    def _num_keys(self):
        return int(self._call(_NUM_KEYS)[0])

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        server = getattr(self, "_server", None)
        if server is not None:
            server.close()


class _TorchAgentStore(Store):
    """A client of torch's own TCPStore server (its wire protocol): under torchrun, the
    elastic agent serves the store at MASTER_ADDR:MASTER_PORT and tells the workers so with
    TORCHELASTIC_USE_AGENT_STORE=True; every rank is then a client.

    Requests are a query-type byte followed by little-endian values; strings and byte
    strings are a uint64 length and the bytes. Waiting is done by polling CHECK.
    """

    # torch's c10d::detail::QueryType
    _VALIDATE, _SET, _COMPARE_SET, _GET, _ADD, _CHECK = 0, 1, 2, 3, 4, 5
    _GETNUMKEYS, _DELETE_KEY, _PING = 7, 8, 13
    _MAGIC = 0x3C85F7CE

    def __init__(self, host: str, port: int, timeout: timedelta = _DEFAULT_TIMEOUT):
        super().__init__(timeout)
        self._host, self._port = host, port
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                self._sock = socket.create_connection((host, port), timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {_ms(timeout)}ms while trying "
                        f"to connect to ({host}, {port})."
                    ) from None
                time.sleep(0.05)
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.sendall(struct.pack("<BI", self._VALIDATE, self._MAGIC))
        nonce = os.getpid() & 0xFFFFFFFF
        self._sock.sendall(struct.pack("<BI", self._PING, nonce))
        if struct.unpack("<I", _recv_exact(self._sock, 4))[0] != nonce:
            raise DistNetworkError(f"the store at {host}:{port} did not answer as torch's does")

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @staticmethod
    def _str(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    def _request(self, payload: bytes, reply: str | None):
        with self._lock:
            self._sock.sendall(payload)
            if reply is None:
                return None
            if reply == "bytes":
                (n,) = struct.unpack("<Q", _recv_exact(self._sock, 8))
                return _recv_exact(self._sock, n)
            size = struct.calcsize(reply)
            return struct.unpack(reply, _recv_exact(self._sock, size))[0]

    def _k(self, key: str) -> bytes:
        return ("/" + key).encode()

    def _set(self, key, value):
        self._request(bytes([self._SET]) + self._str(self._k(key)) + self._str(value), None)

    def _get(self, key):
        return self._request(bytes([self._GET]) + self._str(self._k(key)), "bytes")

    def _add(self, key, value):
        return self._request(
            bytes([self._ADD]) + self._str(self._k(key)) + struct.pack("<q", value), "<q"
        )

    def _compare_set(self, key, expected, desired):
        msg = bytes([self._COMPARE_SET]) + self._str(self._k(key))
        return self._request(msg + self._str(expected) + self._str(desired), "bytes")

    def _check(self, keys):
        msg = bytes([self._CHECK]) + struct.pack("<Q", len(keys))
        msg += b"".join(self._str(self._k(k)) for k in keys)
        return self._request(msg, "<B") == 0  # CheckResponseType::READY

    def _wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        delay = 0.0005
        while not self._check(keys):
            if time.monotonic() > deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.01)
        return True

    def _delete(self, key):
        return self._request(bytes([self._DELETE_KEY]) + self._str(self._k(key)), "<q") > 0

    def _num_keys(self):
        return self._request(bytes([self._GETNUMKEYS]), "<q")

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()


_DELETED = 2**64 - 1  # a FileStore record's value length that marks a deletion


class FileStore(Store):
    """A store in a file shared by the processes (a local or network file system): an
    append-only log of (key, value) records read under an ``fcntl`` lock."""

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__()
        self._path = file_name
        self._world_size = world_size
        self._pos = 0
        self._cache: dict[str, bytes] = {}
        fd = os.open(file_name, os.O_RDWR | os.O_CREAT, 0o644)
        os.close(fd)
        # As torch's: the last of world_size users to go deletes the file, so a later job
        # that reuses the path starts empty.
        if world_size > 0:
            self._add("_filestore/users", 1)
            weakref.finalize(self, FileStore._leave, file_name, world_size)

    @staticmethod
    def _leave(path: str, world_size: int) -> None:
        try:
            store = FileStore.__new__(FileStore)
            Store.__init__(store)
            store._path, store._pos, store._cache = path, 0, {}
            if store._add("_filestore/finished", 1) >= world_size:
                os.remove(path)
        except OSError:
            pass

    @property
    def path(self) -> str:
        return self._path

    def _locked(self, fn):
        with open(self._path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                self._refresh(f)
                return fn(f)
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _refresh(self, f):
        f.seek(0, os.SEEK_END)
        end = f.tell()
        if end < self._pos:  # the file was truncated: start over
            self._pos, self._cache = 0, {}
        f.seek(self._pos)
        data = f.read(end - self._pos)
        i = 0
        while i + 16 <= len(data):
            klen, vlen = struct.unpack("!QQ", data[i : i + 16])
            deletion = vlen == _DELETED
            size = 16 + klen + (0 if deletion else vlen)
            if i + size > len(data):
                break
            key = data[i + 16 : i + 16 + klen].decode()
            if deletion:
                self._cache.pop(key, None)
            else:
                self._cache[key] = data[i + 16 + klen : i + size]
            i += size
        self._pos += i

    def _append(self, f, key: str, value: bytes | None):
        k = key.encode()
        f.seek(0, os.SEEK_END)
        if value is None:
            f.write(struct.pack("!QQ", len(k), _DELETED) + k)
        else:
            f.write(struct.pack("!QQ", len(k), len(value)) + k + value)
        f.flush()
        self._refresh(f)

    def _set(self, key, value):
        self._locked(lambda f: self._append(f, key, value))

    def _get(self, key):
        return self._locked(lambda f: self._cache[key])

    def _add(self, key, value):
        def fn(f):
            n = int(self._cache.get(key, b"0")) + value
            self._append(f, key, str(n).encode())
            return n

        return self._locked(fn)

    def _compare_set(self, key, expected, desired):
        def fn(f):
            cur = self._cache.get(key)
            if (cur is None and expected == b"") or cur == expected:
                self._append(f, key, desired)
                return desired
            return expected if cur is None else cur

        return self._locked(fn)

    def _check(self, keys):
        return self._locked(lambda f: all(k in self._cache for k in keys))

    def _wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        delay = 0.001
        while not self._check(keys):
            if time.monotonic() > deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return True

    def get(self, key):
        if not self._wait([key], self._timeout.total_seconds()):
            raise DistStoreError(f"Timeout waiting for key: {key} after {_ms(self._timeout)} ms")
        return self._get(key)

    def _delete(self, key):
        def fn(f):
            present = key in self._cache
            if present:
                self._append(f, key, None)
            return present

        return self._locked(fn)

    def _num_keys(self):
        return self._locked(lambda f: len(self._cache))
