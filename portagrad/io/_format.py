"""The safetensors layout, read and written with validation before any allocation.

A file is: 8 bytes little-endian header length ``N``; ``N`` bytes of UTF-8 JSON mapping
each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the
byte buffer that follows), plus an optional ``"__metadata__"`` mapping of strings to
strings; then the buffer, each tensor's raw little-endian C-order bytes. Nothing here can
execute code: the header is JSON and tensors are raw bytes.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any, BinaryIO

import numpy as np

from .._errors import CheckpointError

__all__ = ["DTYPES", "MAX_HEADER", "write_tensors", "read_header", "read_tensor", "Header"]

# Header size cap: the JSON is parsed in memory, so a hostile length must not make us
# allocate gigabytes. Real headers are ~100 bytes per tensor.
MAX_HEADER = 16 * 1024 * 1024
MAX_DIMS = 32

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


def write_tensors(f: BinaryIO, tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """Write ``tensors`` (host arrays) and string ``metadata`` in the safetensors layout."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    prepared = []
    for name, a in tensors.items():
        code = dtype_code(a.dtype)
        # (not ascontiguousarray: it turns 0-d arrays into 1-d ones)
        a = np.asarray(a, dtype=DTYPES[code])
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        n = a.nbytes
        header[name] = {"dtype": code, "shape": list(a.shape),
                        "data_offsets": [offset, offset + n]}
        prepared.append(a)
        offset += n
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    # Pad with spaces so the buffer starts 8-byte aligned (as the reference writer does).
    raw += b" " * (-len(raw) % 8)
    f.write(struct.pack("<Q", len(raw)))
    f.write(raw)
    for a in prepared:
        f.write(memoryview(a.reshape(-1)).cast("B") if a.size else b"")


class Header:
    """A validated header: tensors by name (dtype, shape, begin, end) and metadata."""

    def __init__(self, tensors: dict[str, tuple[np.dtype, tuple[int, ...], int, int]],
                 metadata: dict[str, str], data_start: int) -> None:
        self.tensors = tensors
        self.metadata = metadata
        self.data_start = data_start


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
    (n,) = struct.unpack("<Q", f.read(8))
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
    return Header(tensors, metadata, 8 + n)


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
    count = 1
    for d in shape:
        count *= d
    if count * dtype.itemsize != e - b:
        raise CheckpointError(f"load{where}: tensor {name!r}: shape {shape} of {code} needs "
                              f"{count * dtype.itemsize} bytes, data_offsets give {e - b}")
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
    return out.astype(dtype.newbyteorder("="), copy=False)


def file_size(f: BinaryIO) -> int:
    return os.fstat(f.fileno()).st_size
