"""The safetensors layout, read and written with validation before any allocation.

A file is: 8 bytes little-endian header length ``N``; ``N`` bytes of UTF-8 JSON mapping
each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the
byte buffer that follows), plus an optional ``"__metadata__"`` mapping of strings to
strings; then the buffer, each tensor's raw little-endian C-order bytes. Nothing here can
execute code: the header is JSON and tensors are raw bytes.

Checksums live in two metadata entries, so other safetensors readers still read the file:
``"portagrad.crc32"`` is a JSON object giving, for every tensor, the CRC-32 (8 hex digits)
of ``json.dumps([dtype, shape])`` followed by its bytes, so a flipped dtype or shape is
caught as well as a flipped byte; ``"portagrad.crc32.metadata"`` is the CRC-32 of the
other metadata entries (compact JSON, sorted keys), which covers the saved state tree.
A file without either entry (written before checksums existed, or by another writer)
loads with every structural check but no checksum; a file with only one of them, a
tensor missing from the table or a mismatch is a :class:`CheckpointError`.
"""

from __future__ import annotations

import json
import os
import stat
import struct
import zlib
from typing import Any, BinaryIO

import numpy as np

from .._errors import CheckpointError

__all__ = ["DTYPES", "MAX_HEADER", "write_tensors", "read_header", "read_tensor", "Header",
           "open_regular", "CRC_KEY", "META_CRC_KEY"]

# Header size cap: the JSON is parsed in memory, so a hostile length must not make us
# allocate gigabytes. Real headers are ~100 bytes per tensor.
MAX_HEADER = 16 * 1024 * 1024
MAX_DIMS = 32
# numpy refuses arrays whose dimensions (zeros counted as one) times the item size pass
# the index range, even when they hold no element; refuse such shapes up front.
MAX_EXTENT = 2**62
CRC_KEY = "portagrad.crc32"
META_CRC_KEY = "portagrad.crc32.metadata"

DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"), "U64": np.dtype("<u8"), "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"), "U8": np.dtype("u1"), "BOOL": np.dtype("?"),
}
_CODE_BY_KIND = {(v.kind, v.itemsize): k for k, v in DTYPES.items()}


def dtype_code(dtype: np.dtype) -> str:
    code = _CODE_BY_KIND.get((dtype.kind, dtype.itemsize))
    if code is None:
        raise CheckpointError(f"save: expected a dtype in {sorted(DTYPES)}, got {dtype}")
    return code


def tensor_crc(code: str, shape: list[int] | tuple[int, ...], data: Any) -> str:
    """CRC-32 of a tensor's dtype code, shape and bytes, as 8 hex digits."""
    crc = zlib.crc32(json.dumps([code, list(shape)], separators=(",", ":")).encode())
    return f"{zlib.crc32(data, crc):08x}"


def metadata_crc(metadata: dict[str, str]) -> str:
    """CRC-32 of every metadata entry but the two checksum entries, as 8 hex digits."""
    rest = {k: v for k, v in metadata.items() if k not in (CRC_KEY, META_CRC_KEY)}
    raw = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{zlib.crc32(raw.encode()):08x}"


def write_tensors(f: BinaryIO, tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """Write ``tensors`` (host arrays) and string ``metadata`` in the safetensors layout,
    with the checksum entries added to the metadata."""
    header: dict[str, Any] = {}
    offset = 0
    prepared = []
    crcs: dict[str, str] = {}
    entries: dict[str, Any] = {}
    for name, a in tensors.items():
        code = dtype_code(a.dtype)
        # (not ascontiguousarray: it turns 0-d arrays into 1-d ones)
        a = np.asarray(a, dtype=DTYPES[code])
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        n = a.nbytes
        entries[name] = {"dtype": code, "shape": list(a.shape),
                         "data_offsets": [offset, offset + n]}
        crcs[name] = tensor_crc(code, a.shape, _bytes_of(a))
        prepared.append(a)
        offset += n
    metadata = {k: v for k, v in metadata.items() if k not in (CRC_KEY, META_CRC_KEY)}
    metadata[META_CRC_KEY] = metadata_crc(metadata)
    metadata[CRC_KEY] = json.dumps(crcs, separators=(",", ":"))
    header["__metadata__"] = metadata
    header.update(entries)
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    # Pad with spaces so the buffer starts 8-byte aligned (as the reference writer does).
    raw += b" " * (-len(raw) % 8)
    f.write(struct.pack("<Q", len(raw)))
    f.write(raw)
    for a in prepared:
        f.write(_bytes_of(a))


def _bytes_of(a: np.ndarray) -> Any:
    return memoryview(a.reshape(-1)).cast("B") if a.size else b""


def open_regular(path: str) -> BinaryIO:
    """Open ``path`` for reading only if it is a regular file, without ever blocking.

    A FIFO (or a symlink to one) would block ``open`` until a writer appears, and a device
    would be read forever; so the target is checked with ``os.stat`` first, opened with
    ``O_NONBLOCK`` (in case it was swapped for a FIFO since), and checked again with
    ``os.fstat`` on the descriptor actually opened.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        raise CheckpointError(f"load({path}): cannot open the file ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise CheckpointError(f"load({path}): expected a regular file, got "
                              f"{_kind(st.st_mode)}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise CheckpointError(f"load({path}): cannot open the file ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CheckpointError(f"load({path}): expected a regular file, got "
                                  f"{_kind(st.st_mode)} (it was replaced while opening)")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return f"a file of mode {oct(stat.S_IFMT(mode))}"


class Header:
    """A validated header: tensors by name (dtype, shape, begin, end) and metadata."""

    def __init__(self, tensors: dict[str, tuple[np.dtype, tuple[int, ...], int, int]],
                 metadata: dict[str, str], data_start: int,
                 checksums: dict[str, str] | None = None) -> None:
        self.tensors = tensors
        self.metadata = metadata
        self.data_start = data_start
        self.checksums = checksums


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise CheckpointError(f"load: duplicate name {k!r} in the header")
        out[k] = v
    return out


def parse_json(raw: bytes | str, what: str) -> Any:
    """Strict JSON: duplicates, NaN/Infinity literals and deep nesting are errors."""
    def bad_constant(c: str) -> Any:
        raise CheckpointError(f"load: {what} contains the non-JSON constant {c}")

    try:
        return json.loads(raw, object_pairs_hook=_no_duplicates, parse_constant=bad_constant)
    except CheckpointError:
        raise
    except RecursionError:
        raise CheckpointError(f"load: {what} is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"load: {what} is not valid JSON ({e})") from None


def read_header(f: BinaryIO, file_size: int, path: str = "") -> Header:
    """Read and validate the header; nothing larger than the header is read."""
    where = f" {path}" if path else ""
    if file_size < 8:
        raise CheckpointError(f"load{where}: expected at least 8 bytes (header length), got "
                              f"{file_size}; the file is truncated")
    first = f.read(8)
    if len(first) != 8:
        raise CheckpointError(f"load{where}: expected 8 bytes (header length), got "
                              f"{len(first)}; the file changed while reading")
    (n,) = struct.unpack("<Q", first)
    if n > MAX_HEADER:
        raise CheckpointError(f"load{where}: header length {n} exceeds the cap of "
                              f"{MAX_HEADER} bytes")
    if 8 + n > file_size:
        raise CheckpointError(f"load{where}: header length {n} runs past the end of the "
                              f"file ({file_size} bytes); the file is truncated")
    raw = f.read(n)
    if len(raw) != n:
        raise CheckpointError(f"load{where}: expected {n} header bytes, got {len(raw)}")
    if not raw.lstrip().startswith(b"{"):
        raise CheckpointError(f"load{where}: expected a JSON object header, got "
                              f"{raw[:16]!r}")
    header = parse_json(raw, "header")
    if not isinstance(header, dict):
        raise CheckpointError(f"load{where}: expected a JSON object header")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise CheckpointError(f"load{where}: expected __metadata__ to map strings to "
                              f"strings")
    data_size = file_size - 8 - n
    tensors: dict[str, tuple[np.dtype, tuple[int, ...], int, int]] = {}
    for name, info in header.items():
        tensors[name] = _check_entry(name, info, data_size, where)
    crcs = _check_checksums(metadata, tensors, where)
    spans = sorted((b, e, name) for name, (_, _, b, e) in tensors.items())
    pos = 0
    for b, e, name in spans:
        if b != pos:
            kind = "overlaps another tensor" if b < pos else "leaves a gap before it"
            raise CheckpointError(f"load{where}: tensor {name!r} at bytes [{b}, {e}) {kind}")
        pos = e
    if pos != data_size:
        raise CheckpointError(f"load{where}: tensors cover {pos} bytes, the buffer has "
                              f"{data_size}; the file is truncated or has trailing data")
    return Header(tensors, metadata, 8 + n, crcs)


def _check_checksums(metadata: dict[str, str], tensors: dict[str, Any],
                     where: str) -> dict[str, str] | None:
    """The tensors' checksum table, after checking the metadata's own checksum; ``None``
    for a file written without checksums."""
    has_table, has_meta = CRC_KEY in metadata, META_CRC_KEY in metadata
    if not has_table and not has_meta:
        return None
    if not (has_table and has_meta):
        missing = CRC_KEY if not has_table else META_CRC_KEY
        raise CheckpointError(f"load{where}: the metadata has one checksum entry but not "
                              f"{missing!r}; the file is damaged")
    if metadata[META_CRC_KEY] != metadata_crc(metadata):
        raise CheckpointError(f"load{where}: the metadata (the saved state tree) does not "
                              f"match its checksum; the file is damaged")
    table = parse_json(metadata[CRC_KEY], "the checksum table")
    if (not isinstance(table, dict) or set(table) != set(tensors)
            or not all(isinstance(v, str) and len(v) == 8 for v in table.values())):
        raise CheckpointError(f"load{where}: expected a checksum for each of the "
                              f"{len(tensors)} tensors, got a malformed table; the file is "
                              f"damaged")
    return table


def _check_entry(name: str, info: Any, data_size: int,
                 where: str) -> tuple[np.dtype, tuple[int, ...], int, int]:
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        raise CheckpointError(f"load{where}: tensor {name!r}: expected keys dtype, shape, "
                              f"data_offsets")
    code = info["dtype"]
    if not isinstance(code, str) or code not in DTYPES:
        raise CheckpointError(f"load{where}: tensor {name!r}: expected a dtype in "
                              f"{sorted(DTYPES)}, got {code!r}")
    shape = info["shape"]
    if (not isinstance(shape, list) or len(shape) > MAX_DIMS
            or not all(type(d) is int and d >= 0 for d in shape)):
        raise CheckpointError(f"load{where}: tensor {name!r}: expected a shape of at most "
                              f"{MAX_DIMS} non-negative ints, got {str(shape)[:80]}")
    offs = info["data_offsets"]
    if (not isinstance(offs, list) or len(offs) != 2
            or not all(type(o) is int for o in offs)):
        raise CheckpointError(f"load{where}: tensor {name!r}: expected data_offsets "
                              f"[begin, end], got {str(offs)[:80]}")
    b, e = offs
    if not 0 <= b <= e <= data_size:
        raise CheckpointError(f"load{where}: tensor {name!r}: data_offsets {offs} fall "
                              f"outside the {data_size}-byte buffer")
    dtype = DTYPES[code]
    count, extent = 1, dtype.itemsize
    for d in shape:
        count *= d
        extent *= max(d, 1)
    if count * dtype.itemsize != e - b:
        raise CheckpointError(f"load{where}: tensor {name!r}: shape {str(shape)[:80]} of "
                              f"{code} needs {count * dtype.itemsize} bytes, data_offsets "
                              f"give {e - b}")
    if extent > MAX_EXTENT:
        raise CheckpointError(f"load{where}: tensor {name!r}: shape {str(shape)[:80]} is "
                              f"larger than an array can be")
    return dtype, tuple(shape), b, e


def read_tensor(f: BinaryIO, header: Header, name: str) -> np.ndarray:
    """Read one validated tensor into a fresh, writable native-order array."""
    dtype, shape, b, e = header.tensors[name]
    out = np.empty(shape, dtype=dtype)
    if e > b:
        f.seek(header.data_start + b)
        view = memoryview(out.reshape(-1)).cast("B")
        got = f.readinto(view)
        if got != e - b:
            raise CheckpointError(f"load: tensor {name!r}: expected {e - b} bytes, got {got}; "
                                  f"the file changed while reading")
    if header.checksums is not None:
        code = dtype_code(dtype)
        if tensor_crc(code, shape, _bytes_of(out)) != header.checksums[name]:
            raise CheckpointError(f"load: tensor {name!r}: its bytes do not match the "
                                  f"checksum stored with them; the file is damaged")
    return out.astype(dtype.newbyteorder("="), copy=False)


def file_size(f: BinaryIO) -> int:
    return os.fstat(f.fileno()).st_size
