"""cudalite.save / cudalite.load round trips: every dtype, storage sharing, Parameters,
containers, state dicts, torch's archive layout, map_location, mmap, pickling and storages.

The files in tests/data were written by torch 2.11 (tests/data/make_torch_files.py) and are
loaded in test_serialization_torch.py; tests/check_save_with_torch.py loads cudalite's files in
torch. The errors are in test_serialization_errors.py.
"""

from __future__ import annotations

import collections
import io
import math
import pickle
import re
import zipfile

import numpy as np
import pytest

import cudalite as C
from _serialization_helpers import (
    CUDA_UNAVAILABLE,
    DATA,
    DTYPES,
    TORCH_FILES,
    assert_same_tensor,
    check_described,
    err,
    make_model,
    roundtrip,
    saved_bytes,
    unsupported_global_msg,
)
from conftest import HAS_CUDA, to_np
from cudalite import serialization

# ---- round trips in cudalite ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_every_dtype(device, dtype):
    dt = getattr(C, dtype)
    values = [0, 1, 0, 1] if dtype == "bool" else [0, 1, -2, 100]
    if dt.is_floating_point:
        values = [0.5, -0.0, math.inf, -math.inf, math.nan, 65504.0]
    if dtype == "uint8":
        values = [0, 1, 200, 255]
    tensors = [C.tensor(values, dtype=dt, device=device)]
    tensors += [
        C.tensor(values[1], dtype=dt, device=device),
        C.zeros(0, 2, dtype=dt, device=device),
    ]
    for t in tensors:
        t = t.to(device)
        back = roundtrip(t)
        assert_same_tensor(back, t)
        assert back.data_ptr() != t.data_ptr() or t.numel() == 0


def test_views_keep_sharing_one_storage(device):
    base = C.arange(24.0, device=device).reshape(4, 6)
    views = {
        "base": base,
        "slice": base[1:3, 2:5],
        "t": base.t(),
        "stepped": base[::2, ::3],
        "element": base[3, 4],
        "expanded": base[0, :1].expand(3, 4),
        "strided": base.as_strided([2, 2], [7, 1], 3),
    }
    data = saved_bytes(views)
    records = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert [r for r in records if "/data/" in r] == ["archive/data/0"]  # one storage record
    back = C.load(io.BytesIO(data))
    for name, v in views.items():
        assert_same_tensor(back[name], v)
        assert back[name]._is_same_storage(back["base"]) and not back[name]._is_view()
    back["slice"][0, 0] = -1  # base[1, 2]
    assert back["base"][1, 2].item() == -1 and back["t"][2, 1].item() == -1


def test_whole_storage_is_saved_and_separate_storages_stay_separate(device):
    big = C.arange(10, device=device)
    tail, other = big[8:], C.arange(3, device=device)
    back = roundtrip([tail, other, other])
    assert back[0].storage_offset() == 8 and back[0]._storage_nbytes() == 80
    assert not back[0]._is_same_storage(back[1]) and back[1] is back[2]


def test_parameters_and_requires_grad(device):
    w = C.nn.Parameter(C.randn(2, 3, device=device))
    frozen = C.nn.Parameter(C.ones(3, device=device), requires_grad=False)
    leaf = C.tensor([1.0, 2.0], device=device, requires_grad=True)
    nonleaf = leaf * 2
    back = roundtrip({"w": w, "frozen": frozen, "leaf": leaf, "nonleaf": nonleaf, "wv": w[0]})
    assert type(back["w"]) is C.nn.Parameter and back["w"].requires_grad
    assert type(back["frozen"]) is C.nn.Parameter and not back["frozen"].requires_grad
    assert back["leaf"].requires_grad and back["leaf"].is_leaf
    assert back["nonleaf"].requires_grad and back["nonleaf"].is_leaf  # saved as a leaf
    assert back["wv"]._is_same_storage(back["w"]) and back["wv"].requires_grad
    np.testing.assert_array_equal(to_np(back["w"].detach()), to_np(w.detach()))
    back["w"].sum().backward()
    assert back["w"].grad is not None


def test_containers_and_python_values(device):
    t = C.arange(4, dtype=C.int16, device=device)
    obj = {
        "ints": [0, -1, 2**40, -(2**70)],
        "floats": (0.5, -2.0, 1e300),
        "strings": ["", "ascii", "ünïcödé"],
        "none": None,
        "flags": [True, False],
        "nested": {"a": [t, (t[1:], {"deep": t[2]})], 3: "int key", (1, 2): "tuple key"},
        "ordered": collections.OrderedDict([("z", 1), ("a", t)]),
        "counter": collections.Counter("abca"),
        "bytes": b"\x00\xffraw",
        "bytearray": bytearray(b"ab"),
        "set": {1, 2},
        "complex": 1 + 2j,
        "size": C.Size([2, 3]),
        "dtype": C.bfloat16,
        "device": C.device("cuda", 1),
    }
    back = roundtrip(obj)
    assert type(back["ordered"]) is collections.OrderedDict and list(back["ordered"]) == ["z", "a"]
    for key in ("ints", "floats", "strings", "none", "flags", "counter", "bytes", "bytearray",
                "set", "complex", "size", "dtype", "device"):  # fmt: skip
        assert back[key] == obj[key] and type(back[key]) is type(obj[key])
    assert back["dtype"] is C.bfloat16
    deep = back["nested"]["a"][1][1]["deep"]
    assert deep.dim() == 0 and deep.item() == 2 and deep._is_same_storage(back["nested"]["a"][0])
    assert back["nested"][3] == "int key" and back["nested"][(1, 2)] == "tuple key"


def test_tensor_attributes_are_restored(device):
    t = C.arange(3.0, device=device)
    t.note = {"unit": "m"}
    p = C.nn.Parameter(C.ones(2, device=device))
    p.tag = 7
    back = roundtrip({"t": t, "p": p})
    assert back["t"].note == {"unit": "m"} and type(back["t"]) is C.Tensor
    assert back["p"].tag == 7 and type(back["p"]) is C.nn.Parameter and back["p"].requires_grad


class MyTensor(C.Tensor):
    """A Tensor subclass, pickled by reference to this module."""


def test_tensor_subclasses(device):
    t = MyTensor.__new__(MyTensor)
    C.Tensor.__init__(t)
    t._set_metadata(C.arange(3.0, device=device))
    t.extra = 5
    data = saved_bytes(t)
    back = C.load(io.BytesIO(data), weights_only=False)
    assert type(back) is MyTensor and back.extra == 5 and back.device == t.device
    assert_same_tensor(back, t)
    name = f"{MyTensor.__module__}.MyTensor"
    with err(pickle.UnpicklingError, unsupported_global_msg(name)):
        C.load(io.BytesIO(data))
    with serialization.safe_globals([MyTensor]):
        assert type(C.load(io.BytesIO(data))) is MyTensor


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_protocols(device, protocol):
    t = C.arange(6.0, device=device).reshape(2, 3).t()
    back = C.load(io.BytesIO(saved_bytes({"t": t, "d": C.float16}, pickle_protocol=protocol)))
    assert_same_tensor(back["t"], t)
    assert back["d"] is C.float16


def test_state_dict_roundtrip_into_a_newmake_model(device, tmp_path):
    model = make_model(device)
    C.save(model.state_dict(), tmp_path / "model.pt")
    fresh = make_model(device)
    with C.no_grad():
        for p in fresh.parameters():
            p.zero_()
    sd = C.load(tmp_path / "model.pt", map_location=device)
    assert type(sd) is collections.OrderedDict and list(sd) == list(model.state_dict())
    assert all(v.device.type == device for v in sd.values())
    fresh.load_state_dict(sd)
    x = C.linspace(-1, 1, 6, device=device).reshape(2, 3)
    np.testing.assert_array_equal(to_np(fresh(x).detach()), to_np(model(x).detach()))


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_optimizer_state_dict_roundtrip(device, opt_name):
    def make():
        model = make_model(device)
        kwargs = {"momentum": 0.9} if opt_name == "SGD" else {}
        return model, getattr(C.optim, opt_name)(model.parameters(), lr=0.01, **kwargs)

    x = C.linspace(-1, 1, 6, device=device).reshape(2, 3)

    def step(model, opt):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()

    model, opt = make()
    step(model, opt)
    saved_model, saved_opt = roundtrip(model.state_dict()), roundtrip(opt.state_dict())
    model2, opt2 = make()
    model2.load_state_dict(saved_model)
    opt2.load_state_dict(saved_opt)
    step(model, opt)
    step(model2, opt2)
    for p, q in zip(model.parameters(), model2.parameters(), strict=True):
        np.testing.assert_array_equal(to_np(p.detach()), to_np(q.detach()))


def test_whole_module_needs_weights_only_false(device):
    model = make_model(device)
    data = saved_bytes(model)
    back = C.load(io.BytesIO(data), weights_only=False)
    assert type(back) is C.nn.Sequential and back[0].weight.device == model[0].weight.device
    assert type(back[0].weight) is C.nn.Parameter
    with err(pickle.UnpicklingError, unsupported_global_msg("cudalite.nn.container.Sequential")):
        C.load(io.BytesIO(data))


# ---- the file: torch's layout ----


def test_archive_layout(device, tmp_path):
    t = C.arange(3.0, device=device)
    C.save({"a": t, "b": C.ones(2, dtype=C.int64, device=device)}, tmp_path / "model.pt")
    zf = zipfile.ZipFile(tmp_path / "model.pt")
    names = ["data.pkl", ".format_version", ".storage_alignment", "byteorder", "data/0",
             "data/1", "version", ".data/serialization_id"]  # fmt: skip
    assert zf.namelist() == [f"model/{n}" for n in names]
    assert zf.read("model/version") == b"3\n" and zf.read("model/byteorder") == b"little"
    assert zf.read("model/.format_version") == b"1"
    assert zf.read("model/.storage_alignment") == b"64"
    assert re.fullmatch(rb"[0-9]{40}", zf.read("model/.data/serialization_id"))
    assert zf.read("model/data/0") == np.arange(3, dtype=np.float32).tobytes()
    raw = (tmp_path / "model.pt").read_bytes()
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        n, m = np.frombuffer(raw[info.header_offset + 26 : info.header_offset + 30], "<u2")
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename  # aligned data
    pkl = zf.read("model/data.pkl")
    for name in (b"ctorch._utils\n_rebuild_tensor_v2\n", b"ctorch\nFloatStorage\n",
                 b"ctorch\nLongStorage\n"):  # fmt: skip
        assert name in pkl
    assert b"cudalite" not in pkl


@pytest.mark.parametrize(
    "name, archive",
    [("model.pt", "model"), ("a.b.c", "a.b"), ("noext", "noext"), ("x.", "x"),
     ("wéird.pt", "archive")],
)  # fmt: skip
def test_archive_name_follows_the_file_name(device, tmp_path, name, archive):
    C.save(C.ones(1, device=device), str(tmp_path / name))
    assert zipfile.ZipFile(tmp_path / name).namelist()[0] == f"{archive}/data.pkl"
    assert C.load(tmp_path / name).device.type == device


def test_file_objects_and_paths(device, tmp_path):
    t = C.arange(4.0, device=device)
    path = tmp_path / "t.pt"
    for target in (str(path), path):
        C.save(t, target)
        assert_same_tensor(C.load(target), t)
    with open(path, "wb") as f:
        C.save(t, f)
    with open(path, "rb") as f:
        assert_same_tensor(C.load(f), t)
    assert zipfile.ZipFile(path).namelist()[0] == "archive/data.pkl"


def test_non_seekable_writer(device):
    class Sink:
        def __init__(self):
            self.chunks = []

        def write(self, b):
            self.chunks.append(bytes(b))
            return len(b)

        def flush(self):
            pass

    sink = Sink()
    t = C.arange(5, device=device)
    C.save(t, sink)
    assert_same_tensor(C.load(io.BytesIO(b"".join(sink.chunks))), t)


def test_saved_records_carry_zips_crc32(device, tmp_path):
    # save computes each record's CRC-32 itself: zipfile's own check agrees, seekable or not.
    obj = {"w": C.randn(70_000, device=device), "e": C.zeros(0, device=device), "n": 3}
    C.save(obj, tmp_path / "m.pt")
    sink = io.BytesIO()
    C.save(obj, _Unseekable(sink))
    for data in ((tmp_path / "m.pt").read_bytes(), sink.getvalue()):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            assert zf.testzip() is None
            assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        assert_same_tensor(C.load(io.BytesIO(data))["w"], obj["w"])


def test_record_writing_falls_back_to_the_streams_write():
    from cudalite import _archive

    class Plain:  # a record stream without zipfile's bookkeeping attributes
        def __init__(self):
            self.written = []

        def write(self, data):
            self.written.append(bytes(data))

    out = Plain()
    _archive._write_stored(out, memoryview(b"abc"))
    assert out.written == [b"abc"]


class _Unseekable:
    def __init__(self, buf):
        self.buf = buf

    def write(self, b):
        return self.buf.write(b)

    def flush(self):
        pass


def test_big_endian_files_are_swapped(device):
    t = C.tensor([1.5, -2.0], dtype=C.float32, device=device)
    src = zipfile.ZipFile(io.BytesIO(saved_bytes(t)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("byteorder"):
                data = b"big"
            elif info.filename.endswith("data/0"):
                data = np.frombuffer(data, "<f4").astype(">f4").tobytes()
            dst.writestr(info.filename, data)
    out.seek(0)
    assert_same_tensor(C.load(out, map_location=device), t)


# ---- map_location ----


def test_map_location_forms(device):
    t = C.arange(4.0, device=device)
    data = saved_bytes({"t": t})
    here = "cpu" if device == "cpu" else "cuda:0"
    forms = [None, device, here, C.device(device), {here: device}, {"elsewhere": "cpu"},
             lambda storage, location: None]  # fmt: skip
    for form in forms:
        assert_same_tensor(C.load(io.BytesIO(data), map_location=form)["t"], t)
    # a function's storage is used as it is: here, the one read into host memory
    back = C.load(io.BytesIO(data), map_location=lambda storage, location: storage)
    assert_same_tensor(back["t"], t, device="cpu")
    seen = []

    def spy(storage, location):
        seen.append((type(storage), storage.device.type, location, storage.nbytes()))
        return storage.cpu()

    assert C.load(io.BytesIO(data), map_location=spy)["t"].device.type == "cpu"
    assert seen == [(C.UntypedStorage, "cpu", here, 16)]  # read to the host, then mapped


def test_map_location_to_cuda(device):
    data = saved_bytes(C.arange(3, device=device))
    targets = ["cuda", "cuda:0", C.device("cuda", 0), {"cpu": "cuda:0", "cuda:0": "cuda:0"},
               lambda storage, location: storage.cuda(0)]  # fmt: skip
    for target in targets:
        if HAS_CUDA:
            assert C.load(io.BytesIO(data), map_location=target).device == C.device("cuda", 0)
        elif not callable(target):
            with err(RuntimeError, CUDA_UNAVAILABLE):
                C.load(io.BytesIO(data), map_location=target)
    if HAS_CUDA:
        n = C.cuda.device_count()
        with err(
            RuntimeError,
            f"Attempting to deserialize object on CUDA device {n} but "
            f"cudalite.cuda.device_count() is {n}. Please use cudalite.load with map_location "
            "to map your storages to an existing device.",
        ):
            C.load(io.BytesIO(data), map_location=f"cuda:{n}")


def _staged_reader(data, source, tmp_path, request):
    from cudalite import _archive

    if source == "buffer":
        return _archive.ArchiveReader(io.BytesIO(data))
    path = tmp_path / "staged.pt"
    path.write_bytes(data)
    f = open(path, "rb")  # noqa: SIM115 (closed at the end of the test)
    request.addfinalizer(f.close)
    return _archive.ArchiveReader(f)


@pytest.mark.parametrize("source", ["path", "buffer"])
def test_storages_read_through_staging_buffers(source, tmp_path, monkeypatch, request):
    # Note [Loading onto a GPU through pinned buffers], on the CPU: parts of 1000 bytes.
    monkeypatch.setattr(serialization._StorageLoader, "STAGE_BYTES", 1000)
    tensors = {
        "f": C.randn(1234),
        "b": C.tensor([True, False] * 1001),
        "h": C.arange(3001.0).to(C.bfloat16),
        "e": C.zeros(0),
    }
    data = saved_bytes(tensors)
    reader = _staged_reader(data, source, tmp_path, request)
    loader = serialization._StorageLoader(reader, None, True, None)
    for key, t in enumerate(tensors.values()):
        st = loader._read_staged(f"data/{key}", t.numel(), t.dtype, C.device("cpu"), False)
        assert st.nbytes() == t.numel() * t.element_size()
        assert bytes(st.tolist()) == bytes(t.untyped_storage().tolist())
    loader.finish()
    assert len(loader._stages[0][1]) == 1000  # at most STAGE_BYTES


def test_staging_buffers_grow_with_the_storages_up_to_their_limit():
    from cudalite import _archive

    reader = _archive.ArchiveReader(io.BytesIO(saved_bytes({"w": C.zeros(1)})))
    loader = serialization._StorageLoader(reader, None, True, None)
    sizes = []
    for nbytes in (4, 3 << 20, 1 << 20, 100 << 20):
        sizes.append(len(loader._staging_buffers(nbytes, False)[0][1]))
    assert sizes == [1 << 20, 3 << 20, 3 << 20, serialization._StorageLoader.STAGE_BYTES]


@pytest.mark.parametrize("source", ["path", "buffer"])
def test_staged_reads_check_bounds_and_crc(source, tmp_path, monkeypatch, request):
    monkeypatch.setattr(serialization._StorageLoader, "STAGE_BYTES", 512)
    data = bytearray(saved_bytes({"w": C.arange(1000.0)}))
    zf = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = next(i for i in zf.infolist() if i.filename.endswith("data/0"))
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 3000] ^= 0x01  # in the sixth part
    reader = _staged_reader(bytes(data), source, tmp_path, request)
    loader = serialization._StorageLoader(reader, None, True, None)
    cpu = C.device("cpu")
    with err(RuntimeError, "PytorchStreamReader failed reading file data/0: CRC-32 check failed"):
        loader._read_staged("data/0", 1000, C.float32, cpu, False)
    with err(
        RuntimeError, "cudalite.load: record data/0 holds 4000 bytes, but its storage needs 4004"
    ):
        loader._read_staged("data/0", 1001, C.float32, cpu, False)
    # a storage shorter than its record: the rest of the record is still checked
    with err(RuntimeError, "PytorchStreamReader failed reading file data/0: CRC-32 check failed"):
        loader._read_staged("data/0", 10, C.float32, cpu, False)


def test_only_devices_named_by_locations_are_staged():
    data = saved_bytes({"w": C.arange(4.0)})
    from cudalite import _archive

    def device_for(map_location, location="cpu"):
        reader = _archive.ArchiveReader(io.BytesIO(data))
        return serialization._StorageLoader(reader, map_location, True, None)._staged_device(
            "data/0", location
        )

    for m in (None, "cpu", C.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}, "gpu"):
        assert device_for(m) is None
    assert device_for(lambda storage, location: None, "cuda:0") is None  # a function chooses
    for m, location in [("cuda", "cpu"), (None, "cuda:0"), ({"cpu": "cuda:0"}, "cpu")]:
        if HAS_CUDA:
            assert device_for(m, location) == C.device("cuda", 0)
        else:
            with err(RuntimeError, CUDA_UNAVAILABLE):
                device_for(m, location)


def test_map_location_to_cuda_reads_through_pinned_buffers(device, tmp_path, monkeypatch):
    monkeypatch.setattr(serialization._StorageLoader, "STAGE_BYTES", 4096)
    obj = {
        "w": C.randn(3000),
        "v": C.arange(10.0),
        "half": C.randn(5000).to(C.float16),
        "mask": C.tensor([True, False, True] * 700),
        "empty": C.zeros(0, 3),
    }
    obj["view"] = obj["w"][100:200]
    path = tmp_path / "m.pt"
    C.save(obj, path)
    for source in (path, io.BytesIO(path.read_bytes())):
        back = C.load(source, map_location=device)
        where = C.empty(0, device=device).device  # cuda:0 for "cuda"
        for k, t in obj.items():  # (storages and offsets as saved: the view stays a view)
            assert_same_tensor(back[k], t, where)
        assert back["view"]._is_same_storage(back["w"])
    damaged = bytearray(path.read_bytes())
    damaged[damaged.index(obj["w"].numpy().tobytes()[:64]) + 5000] ^= 0x40
    path.write_bytes(bytes(damaged))
    with err(RuntimeError, "PytorchStreamReader failed reading file data/0: CRC-32 check failed"):
        C.load(path, map_location=device)


def test_map_location_errors(device):
    data = saved_bytes(C.ones(2, device=device))
    for bad in ("gpu", "cpu:0", {"cpu": "mps", "cuda:0": "mps"}):
        tag = bad if isinstance(bad, str) else "mps"
        with err(
            RuntimeError,
            "don't know how to restore data location of cudalite.storage.UntypedStorage "
            f"(tagged with {tag})",
        ):
            C.load(io.BytesIO(data), map_location=bad)
    with err(
        TypeError,
        "map_location must return None or a cudalite.UntypedStorage, but got <class 'int'>",
    ):
        C.load(io.BytesIO(data), map_location=lambda storage, location: 5)
    with err(TypeError, "'int' object is not callable"):
        C.load(io.BytesIO(data), map_location=3)
    with err(TypeError, "expected string or bytes-like object, got 'int'"):
        C.load(io.BytesIO(data), map_location={"cpu": 0, "cuda:0": 0})


# ---- mmap ----


def test_mmap_loads_from_the_mapping(device, tmp_path):
    base = C.arange(12.0, device=device).reshape(3, 4)
    obj = {"base": base, "view": base[1:, 2:], "bf": C.ones(3, dtype=C.bfloat16, device=device)}
    C.save(obj, tmp_path / "m.pt")
    back = C.load(tmp_path / "m.pt", mmap=True, map_location="cpu")
    for k in obj:
        assert_same_tensor(back[k], obj[k], device="cpu")
    assert back["view"]._is_same_storage(back["base"])
    back["base"][0, 0] = 100  # copy-on-write: the file does not change
    assert C.load(tmp_path / "m.pt", map_location="cpu")["base"][0, 0].item() == 0
    on_device = C.load(tmp_path / "m.pt", mmap=True, map_location=device)
    assert_same_tensor(on_device["view"], obj["view"])
    torch_file = C.load(DATA / "views.pt", mmap=True)
    check_described(torch_file, TORCH_FILES["views"], {}, "views (mmap)")


# ---- pickling and storages ----


def test_pickle_keeps_geometry_and_device(device):
    base = C.arange(12.0, device=device).reshape(3, 4)
    for t in (base, base[1:, 1:], base.t(), base[2, 3], C.zeros(0, device=device)):
        back = pickle.loads(pickle.dumps(t))
        assert_same_tensor(back, t)
        assert back._storage_nbytes() == t._storage_nbytes()
    p = C.nn.Parameter(C.ones(2, device=device))
    back = pickle.loads(pickle.dumps(p))
    assert type(back) is C.nn.Parameter and back.requires_grad and back.device == p.device


def test_untyped_storage(device):
    x = C.tensor([1.0, 2.0], device=device)
    s = x[1:].untyped_storage()
    assert type(s) is C.UntypedStorage and s.nbytes() == len(s) == s.size() == 8
    assert s.data_ptr() == x.untyped_storage().data_ptr() == x.data_ptr()
    assert s.device == x.device and s.is_cuda == x.is_cuda and s.element_size() == 1
    assert s.dtype is C.float32 and s.tolist() == [0, 0, 128, 63, 0, 0, 0, 64]
    assert s.cpu().device.type == "cpu" and s.clone().data_ptr() != s.data_ptr()
    assert (s.cpu() is s) == (device == "cpu")
    assert s.to(device=device) is s
    assert repr(C.tensor([1], dtype=C.int16, device=device).untyped_storage()) == (
        f" 1\n 0\n[cudalite.storage.UntypedStorage(device={x.device}) of size 2]"
    )
    assert repr(C.UntypedStorage(0)) == "[cudalite.storage.UntypedStorage(device=cpu) of size 0]"
    assert C.UntypedStorage(3).nbytes() == 3
    with err(TypeError, "UntypedStorage(): argument 'size' must be int, not float"):
        C.UntypedStorage(1.5)
    back = pickle.loads(pickle.dumps(s))
    assert back.tolist() == s.tolist() and back.device == s.device
    loaded = roundtrip(s)
    assert type(loaded) is C.UntypedStorage and loaded.tolist() == s.tolist()


def test_zip64_records_stay_aligned(device, tmp_path, monkeypatch):
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)  # records past ~1 kB need zip64 fields
    t = C.arange(2000.0, device=device)
    C.save({"big": t, "small": C.ones(3, device=device)}, tmp_path / "z.pt")
    raw = (tmp_path / "z.pt").read_bytes()
    zf = zipfile.ZipFile(tmp_path / "z.pt")
    for info in zf.infolist():
        n, m = np.frombuffer(raw[info.header_offset + 26 : info.header_offset + 30], "<u2")
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
    assert_same_tensor(C.load(tmp_path / "z.pt", mmap=True, map_location=device)["big"], t)
