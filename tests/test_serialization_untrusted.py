"""cudalite.load(weights_only=True) of files made to attack it: each refused with a clear
error (or loaded harmlessly), in bounded memory, and the process unchanged afterwards."""

from __future__ import annotations

import collections
import io
import pickle
import re
import struct
import sys
import tracemalloc
import zipfile
import zlib

import pytest

import cudalite as C
from _serialization_helpers import assert_same_tensor, err, saved_bytes, zip_records
from cudalite import _torch_names

# ---- writing pickles opcode by opcode ----

PROTO2 = b"\x80\x02"


def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def text(s):
    data = s.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def integer(n):
    return b"J" + struct.pack("<i", n) if -(2**31) <= n < 2**31 else _long(n)


def _long(n):
    data = pickle.encode_long(n)
    return b"\x8a" + bytes([len(data)]) + data


def archive(pkl, **records):
    """A checkpoint whose data.pkl is ``pkl`` (and other records: ``{name: bytes}``)."""
    files = {"archive/data.pkl": pkl, "archive/version": b"3\n"}
    files.update({f"archive/{k.replace('__', '/')}": v for k, v in records.items()})
    return zip_records(files)


def storage_pid(key="0", numel=4, storage="FloatStorage"):
    """The persistent id of storage ``key`` (record data/<key>), then BINPERSID."""
    return (
        b"("
        + text("storage")
        + glob("torch", storage)
        + text(key)
        + text("cpu")
        + integer(numel)
        + b"tQ"
    )


def rebuild_v2(pid, offset=0, size=(4,), stride=(1,)):
    ints = b"".join(integer(n) for n in size)
    strides = b"".join(integer(n) for n in stride)
    return (
        glob("torch._utils", "_rebuild_tensor_v2")
        + b"("
        + pid
        + integer(offset)
        + b"("
        + ints
        + b"t("
        + strides
        + b"t\x89"
        + glob("collections", "OrderedDict")
        + b")Rtr".replace(b"r", b"R")
    )


FLOATS = struct.pack("<4f", 1, 2, 3, 4)


@pytest.fixture(autouse=True)
def process_unchanged():
    """After each attack: the classes are as they were, and a checkpoint still round-trips."""
    add, most_common = C.Tensor.__add__, collections.Counter.most_common
    storage_dtypes = {name: st.dtype for name, st in _torch_names.STORAGE_TYPES.items()}
    yield
    assert C.Tensor.__add__ is add
    assert collections.Counter.most_common is most_common
    assert {n: st.dtype for n, st in _torch_names.STORAGE_TYPES.items()} == storage_dtypes
    t = C.arange(6.0).reshape(2, 3)
    assert_same_tensor(C.load(io.BytesIO(saved_bytes({"t": t})))["t"], t)
    assert (C.ones(2) + 1).tolist() == [2.0, 2.0]


def _rss():
    """(current, peak) resident bytes of this process, the peak reset first when asked."""
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f if line.startswith("Vm"))
    return int(fields["VmRSS"].split()[0]) << 10, int(fields["VmHWM"].split()[0]) << 10


def peak_bytes(fn):
    """The most memory ``fn`` takes: the peak of Python's allocations (NumPy's buffers
    included) and, on Linux, of the process's resident memory (cudalite's allocator)."""
    rss = sys.platform == "linux"
    if rss:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets the resident high-water mark
        before, _ = _rss()
    tracemalloc.start()
    try:
        fn()
    except Exception:
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return max(peak, _rss()[1] - before) if rss else peak


def wo_error(inner):
    """The whole message of a WeightsUnpickler error that torch reports as 'file an issue'."""
    from _serialization_helpers import DOCS, UNSAFE

    return (
        f"Weights only load failed. {UNSAFE}\nPlease file an issue with the following so that "
        "we can make `weights_only=True` compatible with your use case: WeightsUnpickler "
        f"error: \n\n{inner}{DOCS}"
    )


def test_wellformed_pickles_load():
    pkl = PROTO2 + rebuild_v2(storage_pid()) + b"."
    assert C.load(archive(pkl, data__0=FLOATS)).tolist() == [1.0, 2.0, 3.0, 4.0]


# ---- calls on data the file controls ----


def test_tensor_of_a_self_referential_list():
    pkl = PROTO2 + glob("torch", "Tensor") + b"]q\x00h\x00a\x85R."  # Tensor(x), x = [x]
    assert len(pkl) == 25
    with err(ValueError, "new(): self-referential lists are incompatible"):
        C.load(archive(pkl))


def test_tensor_of_deep_or_ragged_lists():
    deep = b"]" * 100_000 + b"a" * 99_999
    with err(ValueError, "too many dimensions 'list'"):
        C.load(archive(PROTO2 + glob("torch", "Tensor") + deep + b"\x85R."))
    ragged = b"](K\x01K\x02e](K\x03e\x86"  # ([1, 2], [3])
    with err(ValueError, "expected sequence of length 2 at dim 1 (got 1)"):
        C.load(archive(PROTO2 + glob("torch", "Tensor") + ragged + b"\x85R."))
    shared = b"](K\x01K\x02eq\x00h\x00\x86q\x01h\x01\x86"  # ((a, a), (a, a)), a = [1, 2]
    assert C.load(archive(PROTO2 + glob("torch", "Tensor") + shared + b"\x85R.")).shape == (
        2,
        2,
        2,
    )
    # 2**41 numbers by sharing one list: x0 = [1, 2], x(k+1) = (xk, xk); Tensor(x40).
    shared = b"(](K\x01K\x02eq\x00" + b"h\x00h\x00\x86q\x00" * 40 + b"t"
    bomb = PROTO2 + shared + glob("torch", "Tensor") + b"h\x00\x85R."
    with pytest.raises(pickle.UnpicklingError, match="more than the whole file"):
        C.load(archive(bomb))
    # The same data as a callee: the error names it without printing it whole.
    callee = PROTO2 + b"(](K\x01K\x02eq\x00" + b"h\x00h\x00\x86q\x00" * 40 + b")R."
    with pytest.raises(pickle.UnpicklingError, match=r"unrecognized function \(\(\(\("):
        C.load(archive(callee))


def test_tensor_of_huge_sizes():
    pkl = PROTO2 + glob("torch", "Tensor") + integer(2**20) + integer(2**20) + b"\x86R."
    with pytest.raises(pickle.UnpicklingError, match=r"Tensor\(1048576, 1048576\) would hold"):
        C.load(archive(pkl))
    small = PROTO2 + glob("torch", "Tensor") + integer(2) + b"\x85R."
    assert C.load(archive(small)).shape == (2,)
    new = PROTO2 + glob("torch", "Tensor") + b")\x81."  # NEWOBJ: constructed, not left unset
    assert C.load(archive(new)).shape == (0,)


@pytest.mark.parametrize(
    "call, msg",
    [
        (glob("builtins", "bytearray") + integer(10**10) + b"\x85R.", "bytearray() may only"),
        (
            glob("_codecs", "encode") + text("x") + text("zlib_codec") + b"\x86R.",
            "_codecs.encode may only encode",
        ),
        (
            glob("torch._tensor", "_rebuild_from_type_v2")
            + b"("
            + glob("builtins", "bytearray")
            + glob("torch", "Tensor")
            + integer(10**10)
            + b"\x85}tR.",
            "_rebuild_from_type_v2 may only call torch's tensor rebuild functions",
        ),
        (
            glob("torch._tensor", "_rebuild_from_type_v2")
            + b"("
            + glob("torch._utils", "_rebuild_tensor_v2")
            + glob("collections", "Counter")
            + b")}tR.",
            "_rebuild_from_type_v2 may only make tensors",
        ),
    ],
)
def test_calls_that_would_allocate_or_reach_code(call, msg):
    pkl = PROTO2 + call
    assert peak_bytes(lambda: C.load(archive(pkl))) < 16 << 20
    with pytest.raises(pickle.UnpicklingError, match=re.escape(f"weights_only: {msg}")):
        C.load(archive(pkl))


def test_bytes_and_bytearrays_load():
    data = pickle.dumps({"b": b"\x00\xff", "a": bytearray(b"xy"), "s": {1, 2}}, protocol=2)
    assert C.load(archive(data)) == {"b": b"\x00\xff", "a": bytearray(b"xy"), "s": {1, 2}}


# ---- BUILD, APPEND and SETITEM on what is not theirs ----


@pytest.mark.parametrize(
    "target, attr, kind",
    [
        (glob("torch", "Tensor"), "__add__", "pybind11_type"),
        (glob("collections", "Counter"), "most_common", "type"),
        (glob("torch", "FloatStorage"), "dtype", "StorageType"),
    ],
)
def test_build_cannot_change_classes_or_shared_objects(target, attr, kind):
    pkl = PROTO2 + target + b"}" + text(attr) + glob("torch", "int8") + b"sb."
    with pytest.raises(pickle.UnpicklingError, match="Can only build Tensor, Parameter, "):
        C.load(archive(pkl))


def test_build_checks_the_state_of_tensors():
    base = PROTO2 + rebuild_v2(storage_pid())
    ok = base + b"}" + text("note") + integer(5) + b"sb."
    assert C.load(archive(ok, data__0=FLOATS)).note == 5
    for attr in ("__class__", "grad_fn", "__dict__"):
        bad = base + b"}" + text(attr) + b"Nsb."
        with pytest.raises(pickle.UnpicklingError, match=f"may not set the attribute '{attr}'"):
            C.load(archive(bad, data__0=FLOATS))


def test_append_and_setitem_only_on_their_types():
    append = PROTO2 + glob("collections", "Counter") + b"Na."
    with pytest.raises(pickle.UnpicklingError, match="Can only append to lists, but got <class"):
        C.load(archive(append))
    setitem = PROTO2 + glob("torch", "Size") + text("__len__") + b"Ns."
    with pytest.raises(pickle.UnpicklingError, match="Can only SETITEM for dict, collections"):
        C.load(archive(setitem))
    setitems = PROTO2 + b")(" + text("a") + b"Nu."
    with pytest.raises(pickle.UnpicklingError, match="Can only SETITEMS for dict, collections"):
        C.load(archive(setitems))


def test_calls_only_to_allowed_globals():
    # A function reached through a value (here a bound method of a list) is not callable.
    pkl = PROTO2 + b"]" + b"N\x85R."
    with pytest.raises(pickle.UnpicklingError, match="Trying to call reduce for unrecognized"):
        C.load(archive(pkl))
    newobj = PROTO2 + b"]" + b")\x81."
    with pytest.raises(pickle.UnpicklingError, match="Can only create new object for nn.Param"):
        C.load(archive(newobj))


# ---- sizes taken from the file ----


def test_memo_index_allocates_nothing():
    pkl = PROTO2 + b"K\x01r\xf0\xff\xff\xff" + b"j\xf0\xff\xff\xff."  # LONG_BINPUT 2**32 - 16
    assert len(pkl) < 400
    assert peak_bytes(lambda: C.load(archive(pkl))) < 4 << 20
    assert C.load(archive(pkl)) == 1
    with err(KeyError, "5"):  # torch's error for a memo miss
        C.load(archive(PROTO2 + b"h\x05."))


def test_truncated_and_unsupported_opcodes():
    with pytest.raises(pickle.UnpicklingError, match="pickle data was truncated"):
        C.load(archive(PROTO2 + b"X\xff\xff\xff\x7fabc"))
    with err(pickle.UnpicklingError, wo_error("Unsupported operand 73")):
        C.load(archive(b"I1\n."))  # protocol 0's INT
    with err(EOFError, "Ran out of input"):
        C.load(archive(PROTO2 + b"K\x01"))


def _patch_directory(data, name, **fields):
    """``data`` (a zip) with the central directory entry of ``name`` changed: fields
    ``size`` (uncompressed), ``csize``, ``offset``."""
    data = bytearray(data)
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        n = struct.unpack_from("<H", data, pos + 28)[0]
        if data[pos + 46 : pos + 46 + n].decode().endswith(name):
            for field, at in (("csize", 20), ("size", 24), ("offset", 42)):
                if field in fields:
                    struct.pack_into("<I", data, pos + at, fields[field])
            return bytes(data)
        pos = data.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(name)


def test_declared_record_sizes_are_bounded_by_the_file():
    data = saved_bytes(C.ones(4))
    for name, fields in [
        ("data.pkl", {"size": 2**32 - 1, "csize": 2**32 - 1}),
        ("data/0", {"size": 2**31, "csize": 2**31}),
        ("data/0", {"offset": 2**31}),
        ("data/0", {"size": 8}),  # stored, sizes disagree
    ]:
        bad = _patch_directory(data, name, **fields)
        assert peak_bytes(lambda bad=bad: C.load(io.BytesIO(bad))) < 4 << 20
        with pytest.raises(RuntimeError, match="^PytorchStreamReader failed (reading|locating)"):
            C.load(io.BytesIO(bad))


def _deflated(records):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, payload in records.items():
            zf.writestr(name, payload)
    return buf.getvalue()


def test_compressed_records_inflate_in_bounded_steps():
    src = zipfile.ZipFile(io.BytesIO(saved_bytes(C.ones(4))))
    records = {i.filename: src.read(i) for i in src.infolist()}
    big = dict(records, **{"archive/data/0": records["archive/data/0"] + bytes(256 << 20)})
    data = _deflated(big)
    assert len(data) < 1 << 20
    assert peak_bytes(lambda: C.load(io.BytesIO(data))) < 24 << 20
    assert C.load(io.BytesIO(data)).tolist() == [1.0] * 4
    # A declared size past deflate's densest ratio, and a stream longer than declared.
    small = _deflated(records)
    with pytest.raises(RuntimeError, match="data/0: invalid header or archive is corrupted"):
        C.load(io.BytesIO(_patch_directory(small, "data/0", size=2**31)))
    for name, size in (("data/0", 20), ("data.pkl", 8)):  # shorter, longer than declared
        msg = f"PytorchStreamReader failed reading file {name}: decompression failed"
        with err(RuntimeError, msg):
            C.load(io.BytesIO(_patch_directory(small, name, size=size)))


# ---- damaged data: CRC-32 ----


def _record_start(data, name):
    zf = zipfile.ZipFile(io.BytesIO(data))
    info = next(i for i in zf.infolist() if i.filename.endswith(name))
    n, e = struct.unpack_from("<HH", data, info.header_offset + 26)
    return info.header_offset + 30 + n + e, info.file_size


@pytest.mark.parametrize("name", ["data/0", "data.pkl", "byteorder"])
def test_damaged_records_fail_their_crc(name, tmp_path):
    data = bytearray(saved_bytes({"w": C.arange(64.0)}))
    start, size = _record_start(bytes(data), name)
    data[start + size // 2] ^= 0x10
    path = tmp_path / "damaged.pt"
    path.write_bytes(bytes(data))
    message = f"PytorchStreamReader failed reading file {name}: CRC-32 check failed"
    for weights_only in (True, False):
        with err(RuntimeError, message):
            C.load(io.BytesIO(bytes(data)), weights_only=weights_only)
        with err(RuntimeError, message):  # a path: records are read with pread
            C.load(path, weights_only=weights_only)
        with open(path, "rb") as f, err(RuntimeError, message):
            C.load(f, weights_only=weights_only)
    if name == "data/0":  # mmap=True maps the storages without reading them: no check
        loaded = C.load(path, mmap=True)["w"]
        assert loaded.tolist() != C.arange(64.0).tolist()


def _crc_payload(n):
    return bytes((i * 7 + n + (i >> 8)) % 256 for i in range(n))


def test_crc32_matches_zlib():
    from cudalite import _C

    sizes = (0, 1, 15, 16, 63, 64, 65, 255, 256, 257, 319, 320, 511, 512, 1000, 4097, 70_001)
    for n in sizes:
        payload = _crc_payload(n)
        for start in (0, 0x12345678):
            assert _C._crc32(payload, start) == zlib.crc32(payload, start)
            assert _C._crc32_table(payload, start) == zlib.crc32(payload, start)
        for skew in (1, 5, 17):  # unaligned starts
            view = memoryview(payload)[skew:]
            assert _C._crc32(view) == zlib.crc32(payload[skew:])
    assert _C._crc32(memoryview(bytearray(b"abcdef"))[1:]) == zlib.crc32(b"bcdef")


def test_read_file_crc32_reads_and_checksums_a_range(tmp_path):
    from cudalite import _C

    data = _crc_payload(9 << 20)  # several read chunks, past the huge-page threshold
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    with open(path, "rb") as f:
        fd = f.fileno()
        for offset, n, skip in [(0, len(data), 0), (3, 5 << 20, 1000), (100, 0, 7), (0, 64, 0)]:
            buf = bytearray(n)
            crc = _C._read_file_crc32(fd, offset, buf, skip)
            assert bytes(buf) == data[offset : offset + n]
            assert crc == zlib.crc32(data[offset : offset + n + skip])
            assert f.tell() == 0  # pread: the file position is unchanged
        assert _C._read_file_crc32(fd, 10, bytearray(5), 0, 123) == zlib.crc32(data[10:15], 123)
        with pytest.raises(RuntimeError, match="unexpected end of file"):
            _C._read_file_crc32(fd, len(data) - 10, bytearray(11))
        with pytest.raises(RuntimeError, match="unexpected end of file"):
            _C._read_file_crc32(fd, len(data) - 10, bytearray(5), 6)
        with pytest.raises(BufferError):
            _C._read_file_crc32(fd, 0, b"read-only")
    with pytest.raises(RuntimeError, match="read failed"):
        _C._read_file_crc32(fd, 0, bytearray(4))  # closed


def test_only_plain_files_are_read_by_descriptor(tmp_path):
    import gzip

    from cudalite import _archive

    path = tmp_path / "w.pt"
    C.save({"w": C.arange(10.0)}, path)
    with open(path, "rb") as f:
        assert _archive._file_descriptor(f) == f.fileno()
    with open(path, "rb", buffering=0) as f:
        assert _archive._file_descriptor(f) == f.fileno()
    assert _archive._file_descriptor(io.BytesIO(path.read_bytes())) is None
    # A GzipFile's fileno() is the compressed file's: its records are read through it.
    with gzip.open(tmp_path / "w.pt.gz", "wb") as g:
        g.write(path.read_bytes())
    with gzip.open(tmp_path / "w.pt.gz", "rb") as g:
        assert _archive._file_descriptor(g) is None
        assert C.load(g)["w"].tolist() == C.arange(10.0).tolist()
    with open(path, "r+b") as f:  # other stream types: read through the stream
        assert _archive._file_descriptor(f) is None
        assert C.load(f)["w"].tolist() == C.arange(10.0).tolist()


def test_a_record_longer_than_its_storage_is_checked_whole(tmp_path):
    floats = struct.pack("<8f", *range(8))
    pkl = PROTO2 + rebuild_v2(storage_pid(numel=4)) + b"."
    data = archive(pkl, data__0=floats).getvalue()
    path = tmp_path / "long.pt"
    path.write_bytes(data)
    assert C.load(path).tolist() == [0.0, 1.0, 2.0, 3.0]
    start, size = _record_start(data, "data/0")
    damaged = bytearray(data)
    damaged[start + size - 1] ^= 1  # past the storage, inside the record
    path.write_bytes(bytes(damaged))
    with err(RuntimeError, "PytorchStreamReader failed reading file data/0: CRC-32 check failed"):
        C.load(path)


# ---- tensors on the file's storages ----


def test_rebuild_geometry_from_the_file():
    for size, stride, offset, exc, msg in [
        ((4,), (1,), 2**70, RuntimeError, "storage offset"),
        ((2**62, 2**62), (1, 1), 0, RuntimeError, "numel: integer multiplication overflow"),
        ((0, 2**62), (1, 2**62), 0, RuntimeError, "Storage size calculation overflowed"),
        ((8,), (1,), 0, RuntimeError, "out of bounds for storage of size 16"),
    ]:
        pkl = PROTO2 + rebuild_v2(storage_pid(), offset, size, stride) + b"."
        with pytest.raises(exc, match=msg):
            C.load(archive(pkl, data__0=FLOATS))
    floats = PROTO2 + glob("torch._utils", "_rebuild_tensor_v2") + b"(" + storage_pid()
    floats += b"K\x00(G" + struct.pack(">d", 4.0) + b"t(K\x01t\x89}tR."
    with pytest.raises(TypeError, match="a tensor's size must be ints, but got float"):
        C.load(archive(floats, data__0=FLOATS))


def test_reinterpreted_storage_is_copied_once():
    """_rebuild_tensor_v3 on bytes: every tensor of one dtype shares one copy."""
    rest = b"K\x00(K\x04t(K\x01t\x89}" + glob("torch", "float32") + b"tR"
    v3 = glob("torch._utils", "_rebuild_tensor_v3") + b"("
    pid = storage_pid(numel=16, storage="UntypedStorage")
    first = v3 + pid + b"q\x00" + rest
    pkl = PROTO2 + b"](" + first + (v3 + b"h\x00" + rest) * 2 + b"e."
    loaded = C.load(archive(pkl, data__0=FLOATS))
    assert [t.tolist() for t in loaded] == [[1.0, 2.0, 3.0, 4.0]] * 3
    assert loaded[0]._is_same_storage(loaded[1]) and loaded[1]._is_same_storage(loaded[2])


def test_parameter_from_the_file():
    pkl = PROTO2 + glob("torch.nn.parameter", "Parameter") + b"]\x85R."
    with err(TypeError, "Parameter(): argument 'data' must be Tensor, not list"):
        C.load(archive(pkl))
    state = (
        PROTO2
        + glob("torch._utils", "_rebuild_parameter_with_state")
        + b"("
        + rebuild_v2(storage_pid())
        + b"\x88}}"
        + text("__class__")
        + b"NstR."
    )
    with pytest.raises(pickle.UnpicklingError, match="may not set the attribute '__class__'"):
        C.load(archive(state, data__0=FLOATS))


SHARED = b"(](K\x01K\x02eq\x00" + b"h\x00h\x00\x86q\x00" * 40 + b"t"  # x40: 2**41 leaves


@pytest.mark.parametrize(
    "pkl",
    [
        SHARED + b"}h\x00Ns.",  # a dict key
        SHARED + b"}(h\x00Nu.",  # SETITEMS
        SHARED + glob("builtins", "set") + b"h\x00\x85\x85R.",  # set((x40,))
        SHARED + glob("collections", "OrderedDict") + b"h\x00N\x86\x85\x85R.",
        SHARED + b"\x8f(h\x00\x90.",  # EMPTY_SET, ADDITEMS
        SHARED + b"(h\x00\x91.",  # FROZENSET
    ],
)
def test_keys_that_would_take_forever_to_hash(pkl):
    with pytest.raises(pickle.UnpicklingError, match="a dict key or set item of more than"):
        C.load(archive(PROTO2 + pkl))


@pytest.mark.parametrize(
    "call, msg",
    [
        (glob("torch", "device") + b"h\x00\x85R.", "device() may only be made from a str"),
        (glob("torch", "Size") + b"h\x00\x85R.", "Size() may only be made from a list or"),
        (glob("torch", "Size") + b"h\x00\x85\x85R.", "Size() may only be made from a list or"),
    ],
)
def test_calls_on_shared_data_never_print_it(call, msg):
    with pytest.raises(pickle.UnpicklingError, match=re.escape(f"weights_only: {msg}")):
        C.load(archive(PROTO2 + SHARED + call))


def test_storage_ids_from_the_file():
    bad_key = PROTO2 + b"(" + text("storage") + glob("torch", "FloatStorage") + SHARED
    bad_key += text("cpu") + integer(4) + b"tQ."
    with pytest.raises(pickle.UnpicklingError, match="a storage's key and location must be str"):
        C.load(archive(bad_key, data__0=FLOATS))
