"""cudalite.save / cudalite.load errors, with torch's types and messages: weights_only's
allowlist, files that are not checkpoints or are damaged, bad geometry, bad arguments."""

from __future__ import annotations

import argparse
import collections
import io
import pickle
import zipfile

import pytest

import cudalite as C
from _serialization_helpers import (
    DOCS,
    UNSAFE,
    assert_same_tensor,
    err,
    saved_bytes,
    unsupported_global_msg,
    zip_records,
)
from cudalite import serialization

# ---- weights_only ----


def test_weights_only_refuses_other_globals(device):
    data = saved_bytes({"args": argparse.Namespace(lr=0.1), "t": C.ones(1, device=device)})
    with err(pickle.UnpicklingError, unsupported_global_msg("argparse.Namespace")):
        C.load(io.BytesIO(data))
    assert C.load(io.BytesIO(data), weights_only=False)["args"].lr == 0.1
    with serialization.safe_globals([argparse.Namespace]):
        assert serialization.get_safe_globals() == [argparse.Namespace]
        assert C.load(io.BytesIO(data))["args"] == argparse.Namespace(lr=0.1)
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([(argparse.Namespace, "argparse.Namespace")])
    try:
        assert C.load(io.BytesIO(data))["args"].lr == 0.1
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


def test_weights_only_errors(device):
    t = C.ones(1, device=device)
    blocked = b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00truaq\x01\x85q\x02Rq\x03."
    with err(
        pickle.UnpicklingError,
        f"Weights only load failed. {UNSAFE}\n\n\nTrying to load unsupported GLOBAL os.system "
        f"whose module os is blocked.{DOCS}",
    ):
        C.load(zip_records({"archive/data.pkl": blocked, "archive/version": b"3\n"}))
    data = saved_bytes(t)
    with err(RuntimeError, "Can not safely load weights when explicit pickle_module is specified"):
        C.load(io.BytesIO(data), pickle_module=pickle, weights_only=True)
    assert_same_tensor(C.load(io.BytesIO(data), pickle_module=pickle), t)  # weights_only=False
    with pytest.warns(UserWarning, match="^pickle_load_args only works if `weights_only=False`.$"):
        C.load(io.BytesIO(data), encoding="latin1")
    serialization.add_safe_globals([(argparse.Namespace, "a", "b")])
    try:
        with err(
            ValueError,
            "Expected tuple of length 2 (global, str of callable full path), but got tuple of "
            "length: 3",
        ):
            C.load(io.BytesIO(saved_bytes(argparse.Namespace())))
    finally:
        serialization.clear_safe_globals()


BAD_PERSISTENT_IDS = [
    ("x", "persistent_load id must be tuple or int, but got <class 'str'>"),
    (("module", 1), "Only persistent_load of storage is allowed, but got <class 'str'>"),
]


@pytest.mark.parametrize("pid, msg", BAD_PERSISTENT_IDS)
def test_weights_only_checks_persistent_ids(device, pid, msg):
    class NotStorage:
        pass

    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return pid if isinstance(obj, NotStorage) else None

    buf = io.BytesIO()
    P(buf, protocol=2).dump([NotStorage()])
    archive = zip_records({"archive/data.pkl": buf.getvalue(), "archive/version": b"3\n"})
    wo_msg = (
        f"Weights only load failed. {UNSAFE}\nPlease file an issue with the following so that "
        "we can make `weights_only=True` compatible with your use case: WeightsUnpickler "
        f"error: \n\n{msg}{DOCS}"
    )
    with err(pickle.UnpicklingError, wo_msg):
        C.load(archive)


# ---- what is not a checkpoint ----


def test_bad_files(device):
    bad_zip = (
        "PytorchStreamReader failed reading zip archive: not a ZIP archive. This is an internal "
        "miniz error. If you are seeing this error, there is a high likelihood that your "
        "checkpoint file is corrupted. This can happen if the checkpoint was not saved "
        "properly, was transferred incorrectly, or the file was modified after saving."
    )
    with err(RuntimeError, bad_zip):
        C.load(io.BytesIO(b"PK\x03\x04junk"))
    with err(EOFError, "Ran out of input"):
        C.load(io.BytesIO(b""))
    with err(RuntimeError, "Invalid magic number; corrupt file?"):
        C.load(io.BytesIO(pickle.dumps(5, protocol=2)))
    with err(pickle.UnpicklingError, "pickle data was truncated"):
        C.load(io.BytesIO(b"garbage"), weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed. "):
        C.load(io.BytesIO(b"garbage"))
    pkl = pickle.dumps(1, protocol=2)
    with err(RuntimeError, "file in archive is not in a subdirectory: data.pkl"):
        C.load(zip_records({"data.pkl": pkl}))
    with err(RuntimeError, 'Expected hasRecord("version") to be true, but got false.'):
        C.load(zip_records({"a/data.pkl": pkl}))
    with err(RuntimeError, "PytorchStreamReader failed locating file data.pkl: file not found"):
        C.load(zip_records({"a/version": b"3\n"}))
    with err(
        RuntimeError,
        "cudalite.load: this is a TorchScript archive (torch.jit.save), which cudalite cannot load",
    ):
        C.load(zip_records({"a/constants.pkl": pkl, "a/data.pkl": pkl, "a/version": b"3\n"}))


def test_damaged_checkpoints(device):
    src = zipfile.ZipFile(io.BytesIO(saved_bytes(C.ones(4, device=device))))
    records = {i.filename: src.read(i) for i in src.infolist()}
    missing = {k: v for k, v in records.items() if not k.endswith("data/0")}
    with err(RuntimeError, "PytorchStreamReader failed locating file data/0: file not found"):
        C.load(zip_records(missing))
    short = dict(records, **{"archive/data/0": b"\x00" * 8})
    with err(RuntimeError, "cudalite.load: record data/0 holds 8 bytes, but its storage needs 16"):
        C.load(zip_records(short))
    odd = dict(records, **{"archive/byteorder": b"middle"})
    with err(ValueError, "Unknown endianness type: middle"):
        C.load(zip_records(odd))
    deflated = io.BytesIO()
    with zipfile.ZipFile(deflated, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in records.items():
            zf.writestr(name, data)
    deflated.seek(0)
    assert_same_tensor(C.load(deflated, map_location=device), C.ones(4, device=device))


def test_rebuild_checks_the_geometry(device):
    from cudalite import _utils

    storage = C.arange(6.0, device=device).untyped_storage()
    with err(
        RuntimeError,
        "setStorage: sizes [10], strides [1], storage offset 0, and itemsize 4 requiring a "
        "storage size of 40 are out of bounds for storage of size 24",
    ):
        _utils._rebuild_tensor_v2(storage, 0, (10,), (1,), False, collections.OrderedDict())
    with err(RuntimeError, "Tensor: invalid storage offset -1"):
        _utils._rebuild_tensor_v2(storage, -1, (2,), (1,), False, collections.OrderedDict())
    with err(RuntimeError, "Storage size calculation overflowed with sizes=[2] and strides=[-1]"):
        _utils._rebuild_tensor_v2(storage, 3, (2,), (-1,), False, collections.OrderedDict())
    with err(RuntimeError, "numel: integer multiplication overflow"):
        _utils._rebuild_tensor_v2(storage, 0, (-1,), (1,), False, collections.OrderedDict())
    empty = _utils._rebuild_tensor_v2(storage, 6, (0, 3), (3, 1), False, None)
    assert empty.shape == (0, 3) and empty.device.type == device


def test_save_errors(device, tmp_path):
    t = C.ones(2, device=device)
    with err(
        AttributeError,
        "expected 'f' to be string, path, or a file-like object with a 'write' attribute",
    ):
        C.save(t, 5)

    class NoWrite:
        write = 3

    with err(TypeError, f"Buffer of {str(NoWrite).strip('<>')} has no callable attribute 'write'"):
        C.save(t, NoWrite())
    missing = tmp_path / "nodir"
    with err(RuntimeError, f"Parent directory {missing} does not exist."):
        C.save(t, missing / "x.pt")
    with err(RuntimeError, f"invalid file name: {tmp_path / '.hidden'}"):
        C.save(t, tmp_path / ".hidden")
    with err(
        NotImplementedError,
        "cudalite.save writes torch's zip format only: _use_new_zipfile_serialization=False "
        "(the legacy format) is not supported",
    ):
        C.save(t, io.BytesIO(), _use_new_zipfile_serialization=False)
    as_int = C.arange(4.0, device=device)
    with err(
        RuntimeError,
        "Cannot save multiple tensors or storages that view the same data as different types",
    ):
        C.save([as_int, as_int.view(C.int32)], io.BytesIO())
    assert not (tmp_path / "nodir").exists()


def test_load_argument_errors(device, tmp_path):
    class Unseekable:
        def read(self, n=-1):
            return b""

    with err(
        AttributeError,
        "'Unseekable' object has no attribute 'seek'. You can only cudalite.load from a file "
        "that is seekable. Please pre-load the data into a buffer like io.BytesIO and try to "
        "load from it instead.",
    ):
        C.load(Unseekable())
    with err(FileNotFoundError, f"[Errno 2] No such file or directory: '{tmp_path / 'no.pt'}'"):
        C.load(tmp_path / "no.pt")
    data = saved_bytes(C.ones(2, device=device))
    with err(ValueError, "f must be a file path in order to use the mmap argument"):
        C.load(io.BytesIO(data), mmap=True)
    path = tmp_path / "p.pkl"
    path.write_bytes(pickle.dumps(5, protocol=2))
    with err(
        RuntimeError,
        f"mmap can only be used with files saved with `cudalite.save({path}, "
        "_use_new_zipfile_serialization=True), please cudalite.save your checkpoint with this "
        "option in order to use mmap.",
    ):
        C.load(str(path), mmap=True)
