"""The zip container of torch's checkpoint files (torch's C++ ``PyTorchFileWriter`` and
``PyTorchFileReader``), on Python's ``zipfile``.

An archive is an uncompressed zip whose records all sit in one folder, the archive name:
the file's name without its extension (``model.pt`` -> ``model/``), or ``archive`` for a
buffer::

    model/data.pkl                  the pickled object; storages are persistent ids
    model/.format_version           "1"
    model/.storage_alignment        "64"
    model/byteorder                 "little"
    model/data/0, model/data/1 ...  the bytes of each storage
    model/version                   "3"
    model/.data/serialization_id    40 digits identifying this save

As in torch's files, each record's data starts at a multiple of 64 bytes (a padding field
``FB`` in the local header makes it so), which lets a loader map storages straight from the
file (``cudalite.load(..., mmap=True)``).
"""

from __future__ import annotations

import os
import struct
import zlib

ALIGNMENT = 64
FILE_FORMAT_VERSION = b"3\n"
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # signature ... file name length, extra length
_ZIP64_EXTRA = 20  # the zip64 field zipfile adds to the local header of large records
_BAD_ZIP = (
    "PytorchStreamReader failed reading zip archive: not a ZIP archive. This is an internal "
    "miniz error. If you are seeing this error, there is a high likelihood that your checkpoint "
    "file is corrupted. This can happen if the checkpoint was not saved properly, was "
    "transferred incorrectly, or the file was modified after saving."
)


def archive_name(path):
    """torch's archive name for a file path: its base name up to the last dot."""
    try:
        path.encode("ascii")
    except UnicodeEncodeError:
        return "archive"  # torch writes other names through a Python stream
    base = os.path.basename(path)
    name = base[: base.rfind(".")] if "." in base else base
    if not name:
        raise RuntimeError(f"invalid file name: {path}")
    return name


class ArchiveWriter:
    """Writes records into a new archive on ``fileobj`` (a binary stream, seekable or not)."""

    def __init__(self, fileobj, name="archive"):
        import zipfile

        self._zipfile = zipfile
        self._zip = zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED)
        self._name = name
        self._crc = 0

    def write_record(self, name, data):
        """Adds ``archive/name`` holding ``data`` (bytes-like), its data 64-byte aligned."""
        zipfile = self._zipfile
        data = memoryview(data).cast("B")
        info = zipfile.ZipInfo(f"{self._name}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = len(data)
        # Where the data would start with an empty padding field (zipfile adds a zip64 field
        # after ours for records it expects to exceed 4 GiB).
        start = self._zip.start_dir + 30 + len(info.filename.encode("utf-8")) + 4
        if len(data) * 1.05 > zipfile.ZIP64_LIMIT:
            start += _ZIP64_EXTRA
        pad = -start % ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        with self._zip.open(info, "w") as out:
            out.write(data)
        self._crc = zlib.crc32(struct.pack("<I", info.CRC), self._crc)

    def close(self):
        """Writes the version and serialization id records, then the central directory."""
        import random

        self.write_record("version", FILE_FORMAT_VERSION)
        serialization_id = f"{random.getrandbits(64):020d}{self._crc:020d}"
        self.write_record(".data/serialization_id", serialization_id.encode("ascii"))
        self._zip.close()


class ArchiveReader:
    """Reads the records of an archive from ``fileobj`` (a seekable binary stream)."""

    def __init__(self, fileobj):
        import zipfile

        self._f = fileobj
        try:
            self._zip = zipfile.ZipFile(fileobj)
        except zipfile.BadZipFile:
            raise RuntimeError(_BAD_ZIP) from None
        infos = self._zip.infolist()
        prefix = infos[0].filename.split("/", 1)[0] + "/" if infos else ""
        if infos and "/" not in infos[0].filename:
            raise RuntimeError(f"file in archive is not in a subdirectory: {infos[0].filename}")
        self._records = {
            i.filename[len(prefix) :]: i for i in infos if i.filename.startswith(prefix)
        }
        if "version" not in self._records and ".data/version" not in self._records:
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.')

    def has_record(self, name):
        return name in self._records

    def _info(self, name):
        info = self._records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return info

    def data_offset(self, name):
        """Where the data of an uncompressed record starts in the file (None if compressed)."""
        info = self._info(name)
        if info.compress_type != 0:  # not ZIP_STORED
            return None
        self._f.seek(info.header_offset)
        header = self._f.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise RuntimeError(_BAD_ZIP)
        fields = _LOCAL_HEADER.unpack(header)
        return info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]

    def record_size(self, name):
        return self._info(name).file_size

    def get_record(self, name):
        """The bytes of a record."""
        out = bytearray(self.record_size(name))
        self.read_into(name, out)
        return bytes(out)

    def read_into(self, name, buffer):
        """Reads the first ``len(buffer)`` bytes of a record into ``buffer``."""
        view = memoryview(buffer).cast("B")
        offset = self.data_offset(name)
        if offset is None:  # a compressed record (torch never writes one)
            view[:] = self._zip.read(self._info(name))[: len(view)]
            return
        self._f.seek(offset)
        readinto = getattr(self._f, "readinto", None)
        got = readinto(view) if readinto is not None else _read_into(self._f, view)
        if got != len(view):
            raise RuntimeError(_BAD_ZIP)


def _read_into(f, view):
    data = f.read(len(view))
    view[: len(data)] = data
    return len(data)
