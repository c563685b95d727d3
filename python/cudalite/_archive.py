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

import io
import os
import stat
import struct
import zlib

from cudalite import _C

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
            _write_stored(out, data)
        self._crc = zlib.crc32(struct.pack("<I", info.CRC), self._crc)

    def close(self):
        """Writes the version and serialization id records, then the central directory."""
        import random

        self.write_record("version", FILE_FORMAT_VERSION)
        serialization_id = f"{random.getrandbits(64):020d}{self._crc:020d}"
        self.write_record(".data/serialization_id", serialization_id.encode("ascii"))
        self._zip.close()


def _write_stored(out, data):
    """Writes ``data`` through ``out``, a ``ZipFile.open(info, "w")`` of an uncompressed record,
    with its CRC-32 computed by cudalite (``zipfile`` uses ``zlib.crc32``: 0.26 s per GiB on
    an x86-64 core with AVX-512, against 0.06 s). The stream's own bookkeeping (bytes
    written, CRC) is what its ``close()`` reads; where those attributes are not there (another
    Python's ``zipfile``), ``out.write`` does it all."""
    if not all(hasattr(out, k) for k in ("_fileobj", "_file_size", "_crc", "_compressor")) or (
        out._compressor is not None or out._file_size or out._crc
    ):
        out.write(data)
        return
    out._fileobj.write(data)
    out._file_size = len(data)
    out._crc = _C._crc32(data)


class _Record:
    """Where a record's bytes lie in the file, checked against the file's size."""

    __slots__ = ("name", "start", "stored", "compressed_size", "size", "crc")

    def __init__(self, name, start, stored, compressed_size, size, crc):
        self.name, self.start, self.stored = name, start, stored
        self.compressed_size, self.size, self.crc = compressed_size, size, crc


def _read_error(name, what):
    return RuntimeError(f"PytorchStreamReader failed reading file {name}: {what}")


class ArchiveReader:
    """Reads the records of an archive from ``fileobj`` (a seekable binary stream).

    Nothing in the file is trusted: a record must lie inside the file (so no size read from
    it allocates more than the file holds), a compressed one inflates in bounded steps to
    its declared size, and every record read whole is checked against the CRC-32 of the zip
    directory (``RuntimeError`` "CRC-32 check failed" otherwise).
    """

    def __init__(self, fileobj):
        import zipfile

        self._f = fileobj
        self._fd = _file_descriptor(fileobj)
        fileobj.seek(0, os.SEEK_END)
        self.file_size = fileobj.tell()
        fileobj.seek(0)
        try:
            self._zip = zipfile.ZipFile(fileobj)
            infos = self._zip.infolist()
        except (
            zipfile.BadZipFile,
            ValueError,
            OverflowError,
            struct.error,
            EOFError,
            NotImplementedError,  # "zip file version 6.4": a damaged version field
        ):
            # (a damaged directory: bad signatures, sizes, offsets or names)
            raise RuntimeError(_BAD_ZIP) from None
        prefix = infos[0].filename.split("/", 1)[0] + "/" if infos else ""
        if infos and "/" not in infos[0].filename:
            raise RuntimeError(f"file in archive is not in a subdirectory: {infos[0].filename}")
        self._records = {
            i.filename[len(prefix) :]: i for i in infos if i.filename.startswith(prefix)
        }
        self._located = {}
        if "version" not in self._records and ".data/version" not in self._records:
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.')

    def has_record(self, name):
        return name in self._records

    def _locate(self, name):
        """The record ``name``, its local header read and every size checked."""
        record = self._located.get(name)
        if record is not None:
            return record
        info = self._records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if info.flag_bits & 0x1:
            raise _read_error(name, "encrypted records are not supported")
        if info.compress_type not in (0, 8):  # stored, deflated (what torch's reader reads)
            raise _read_error(name, f"unsupported compression method {info.compress_type}")
        if not 0 <= info.header_offset <= self.file_size - _LOCAL_HEADER.size:
            raise _read_error(name, "invalid header or archive is corrupted")
        self._f.seek(info.header_offset)
        header = self._f.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise _read_error(name, "invalid header or archive is corrupted")
        fields = _LOCAL_HEADER.unpack(header)
        start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        stored = info.compress_type == 0
        csize, size = info.compress_size, info.file_size
        if (
            start + csize > self.file_size
            or (stored and csize != size)
            or (not stored and size > _MAX_INFLATE_RATIO * csize + 64)
        ):
            raise _read_error(name, "invalid header or archive is corrupted")
        record = self._located[name] = _Record(name, start, stored, csize, size, info.CRC)
        return record

    def data_offset(self, name):
        """Where the data of an uncompressed record starts in the file (None if compressed)."""
        record = self._locate(name)
        return record.start if record.stored else None

    def record_size(self, name):
        return self._locate(name).size

    def get_record(self, name):
        """The bytes of a record."""
        out = bytearray(self.record_size(name))
        self.read_into(name, out)
        return bytes(out)

    def read_into(self, name, buffer):
        """Reads the first ``len(buffer)`` bytes of a record into ``buffer``, and checks the
        whole record's CRC-32."""
        record = self._locate(name)
        view = memoryview(buffer).cast("B")
        if len(view) > record.size:
            raise _read_error(name, "the record is shorter than its storage")
        if record.stored and self._fd is not None:
            try:
                crc = _C._read_file_crc32(self._fd, record.start, view, record.size - len(view))
            except RuntimeError as e:
                raise _read_error(name, str(e)) from None
        elif record.stored:
            self._f.seek(record.start)
            crc = self._read_stored(record, view)
        else:
            self._f.seek(record.start)
            crc = self._inflate(record, view)
        if crc != record.crc:
            raise _read_error(name, "CRC-32 check failed")

    def read_part(self, name, pos, buffer, crc):
        """Reads bytes [pos, pos + len(buffer)) of an uncompressed record into ``buffer``
        (memory that is not fresh: pinned staging buffers) and returns ``crc`` continued over
        them. A record read in parts, in order, is then checked by ``check_rest``."""
        record = self._locate(name)
        view = memoryview(buffer).cast("B")
        if not record.stored or pos + len(view) > record.size:
            raise _read_error(name, "the record is shorter than its storage")
        if self._fd is not None:
            try:
                return _C._read_file_crc32(self._fd, record.start + pos, view, 0, crc, False)
            except RuntimeError as e:
                raise _read_error(name, str(e)) from None
        self._f.seek(record.start + pos)
        return self._read_stream(record, view, crc)

    def check_rest(self, name, pos, crc):
        """Reads a record from ``pos`` to its end (``crc`` is that of the bytes before) and
        checks the CRC-32 of the whole record."""
        record = self._locate(name)
        rest = record.size - pos
        if self._fd is not None:
            try:
                crc = _C._read_file_crc32(self._fd, record.start + pos, bytearray(), rest, crc)
            except RuntimeError as e:
                raise _read_error(name, str(e)) from None
        else:
            self._f.seek(record.start + pos)
            crc = self._skip_stream(record, rest, crc)
        if crc != record.crc:
            raise _read_error(name, "CRC-32 check failed")

    def _read_chunk(self, view):
        readinto = getattr(self._f, "readinto", None)
        return readinto(view) if readinto is not None else _read_into(self._f, view)

    def _read_stored(self, record, view):
        """Reads ``view`` and skips the rest of the record; the CRC-32 of the whole record."""
        crc = self._read_stream(record, view, 0)
        return self._skip_stream(record, record.size - len(view), crc)

    def _read_stream(self, record, view, crc):
        """Reads ``view`` from the stream, in chunks checksummed while they are in the cache;
        ``crc`` continued over them."""
        pos, n = 0, len(view)
        while pos < n:
            got = self._read_chunk(view[pos : min(n, pos + _CHUNK)])
            if not got:
                raise _read_error(record.name, "unexpected end of file")
            crc = _crc32(view[pos : pos + got], crc)
            pos += got
        return crc

    def _skip_stream(self, record, rest, crc):
        """Reads ``rest`` more bytes of the stream into scratch memory; ``crc`` continued."""
        if rest:
            scratch = memoryview(bytearray(min(rest, _CHUNK)))
            while rest:
                got = self._read_chunk(scratch[: min(rest, len(scratch))])
                if not got:
                    raise _read_error(record.name, "unexpected end of file")
                crc = _crc32(scratch[:got], crc)
                rest -= got
        return crc

    def _inflate(self, record, view):
        """Inflates a deflated record, never more than its declared size, into ``view``
        (its first bytes); the CRC-32 of the whole record."""
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        crc, pos, produced = 0, 0, 0
        remaining_in = record.compressed_size
        pending = b""
        while True:
            if not pending and remaining_in:
                pending = self._f.read(min(remaining_in, _CHUNK))
                if not pending:
                    raise _read_error(record.name, "unexpected end of file")
                remaining_in -= len(pending)
            if not pending:
                break
            try:
                out = inflater.decompress(pending, min(_CHUNK, record.size - produced + 1))
            except zlib.error:
                raise _read_error(record.name, "decompression failed") from None
            pending = inflater.unconsumed_tail
            produced += len(out)
            if produced > record.size:
                raise _read_error(record.name, "decompression failed")
            crc = _crc32(out, crc)
            take = min(len(out), len(view) - pos)
            if take > 0:
                view[pos : pos + take] = out[:take]
                pos += take
            if inflater.eof:
                break
            if not out and not pending and not remaining_in:
                break
        if produced != record.size:
            raise _read_error(record.name, "decompression failed")
        return crc


# Deflate's densest output: 258 bytes for every 2 bits (about 1032 to 1).
_MAX_INFLATE_RATIO = 1032
_CHUNK = 4 << 20  # read and checksum in cache-sized pieces


def _file_descriptor(fileobj):
    """The descriptor of a plain file opened for reading (``open(path, "rb")``), which records
    are read from with ``pread`` (csrc/core/file_read.h); None for other streams, whose
    ``fileno()`` may name something else than their bytes (a ``GzipFile``'s is the compressed
    file's)."""
    if type(fileobj) not in (io.BufferedReader, io.FileIO):
        return None
    try:
        fd = fileobj.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):
        return None


def _crc32(data, value):
    return _C._crc32(data, value)


def _read_into(f, view):
    data = f.read(len(view))
    view[: len(data)] = data
    return len(data)
