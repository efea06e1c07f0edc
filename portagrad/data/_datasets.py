"""Datasets that ship with portagrad (digits) and readers for local MNIST-style files."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import PortagradError
from ._dataset import TupleDataset

__all__ = ["load_digits", "load_mnist", "load_fashion_mnist", "read_idx",
           "DatasetNotFoundError", "default_data_dir"]

_DIGITS = Path(__file__).with_name("digits.npz")
# Uncompressed IDX files larger than this are refused (MNIST's largest is 47 MB).
MAX_IDX_BYTES = 1 << 30


class DatasetNotFoundError(PortagradError, FileNotFoundError):
    """The files of a dataset are not where portagrad looked for them."""


def _images(x: np.ndarray, ndim: int, dtype: Any, scale: float) -> np.ndarray:
    x = x.astype(dtype) * np.asarray(scale, dtype=dtype)
    n, h, w = x.shape
    if ndim == 1:
        return x.reshape(n, h * w)
    if ndim == 2:
        return x
    if ndim == 3:
        return x.reshape(n, 1, h, w)
    raise ValueError(f"ndim: expected 1 (flat), 2 (h, w) or 3 (1, h, w), got {ndim}")


def load_digits(ndim: int = 1, dtype: Any = np.float32,
                label_dtype: Any = np.int64) -> tuple[TupleDataset, TupleDataset]:
    """The 8x8 handwritten digits bundled with portagrad (1438 train / 359 test).

    The data are the UCI optical-recognition digits as distributed by scikit-learn
    (pixel values 0..16, scaled here to [0, 1]); the split is fixed and stratified by
    class, so results are comparable between runs and machines.

    Parameters
    ----------
    ndim
        1: images as 64-vectors; 2: ``(8, 8)``; 3: ``(1, 8, 8)`` (for convolutions).
    dtype, label_dtype
        Host dtypes of the images and labels.

    Examples
    --------
    >>> from portagrad.data import load_digits
    >>> train, test = load_digits()
    >>> len(train), len(test)
    (1438, 359)
    >>> x, t = train[0]
    >>> x.shape, x.dtype, 0 <= int(t) < 10
    ((64,), dtype('float32'), True)
    """
    with np.load(_DIGITS, allow_pickle=False) as f:
        parts = {k: f[k] for k in ("x_train", "y_train", "x_test", "y_test")}
    out = []
    for split in ("train", "test"):
        x = _images(parts[f"x_{split}"], ndim, dtype, 1.0 / 16.0)
        out.append(TupleDataset(x, parts[f"y_{split}"].astype(label_dtype)))
    return out[0], out[1]


def default_data_dir(name: str) -> Path:
    """Where dataset ``name`` is looked for: ``$PORTAGRAD_DATA/<name>``, else
    ``~/.portagrad/datasets/<name>``."""
    root = os.environ.get("PORTAGRAD_DATA")
    base = Path(root) if root else Path.home() / ".portagrad" / "datasets"
    return base / name


_IDX_DTYPES = {0x08: np.dtype("u1"), 0x09: np.dtype("i1"), 0x0B: np.dtype(">i2"),
               0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def _read_bytes(path: Path) -> bytes:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read(MAX_IDX_BYTES + 1)
    if len(data) > MAX_IDX_BYTES:
        raise ValueError(f"read_idx({path}): larger than {MAX_IDX_BYTES} bytes uncompressed")
    return data


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (the MNIST format), raw or gzip-compressed.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> from portagrad.data import read_idx
    >>> p = pathlib.Path(tempfile.mkdtemp(), "labels-idx1-ubyte")
    >>> _ = p.write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 2, 1]))
    >>> read_idx(p)
    array([7, 2, 1], dtype=uint8)
    """
    path = Path(path)
    try:
        data = _read_bytes(path)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise ValueError(f"read_idx({path}): cannot read the file ({e})") from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"read_idx({path}): expected an IDX magic number (0, 0, type, "
                         f"ndim), got {data[:4]!r}")
    dtype = _IDX_DTYPES[data[2]]
    ndim = data[3]
    head = 4 + 4 * ndim
    if len(data) < head:
        raise ValueError(f"read_idx({path}): truncated header")
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    count = 1
    for d in shape:
        count *= d
    if count * dtype.itemsize != len(data) - head:
        raise ValueError(f"read_idx({path}): shape {shape} needs {count * dtype.itemsize} "
                         f"bytes, the file has {len(data) - head}; it is truncated or not "
                         f"an IDX file")
    return np.frombuffer(data, dtype=dtype, offset=head).reshape(shape).astype(
        dtype.newbyteorder("="))


_MNIST_FILES = {"train_x": "train-images-idx3-ubyte", "train_y": "train-labels-idx1-ubyte",
                "test_x": "t10k-images-idx3-ubyte", "test_y": "t10k-labels-idx1-ubyte"}


def _find(folder: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"),
                 stem.replace("-idx", ".idx") + ".gz"):
        p = folder / name
        if p.is_file():
            return p
    return None


def load_mnist(data_dir: str | os.PathLike | None = None, ndim: int = 1,
               dtype: Any = np.float32, label_dtype: Any = np.int64,
               name: str = "mnist") -> tuple[TupleDataset, TupleDataset]:
    """MNIST (or a dataset in the same format) from local IDX files.

    Parameters
    ----------
    data_dir
        Folder holding ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
        ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each may end in
        ``.gz``). Default: :func:`default_data_dir` of ``name``.
    ndim
        1: flat 784-vectors; 2: ``(28, 28)``; 3: ``(1, 28, 28)``.

    Nothing is downloaded: if files are missing, :class:`DatasetNotFoundError` says
    which, and where to put them.

    Examples
    --------
    >>> import tempfile
    >>> from portagrad.data import load_mnist
    >>> try:
    ...     load_mnist(tempfile.mkdtemp())
    ... except FileNotFoundError as e:
    ...     print(str(e).splitlines()[0][:41])
    load_mnist(data_dir): the mnist files are
    """
    folder = Path(data_dir) if data_dir is not None else default_data_dir(name)
    found = {k: _find(folder, stem) for k, stem in _MNIST_FILES.items()}
    missing = [_MNIST_FILES[k] for k, p in found.items() if p is None]
    if missing:
        raise DatasetNotFoundError(
            f"load_{name.replace('-', '_')}(data_dir): the {name} files are not in "
            f"{folder}\nmissing: {', '.join(m + '[.gz]' for m in missing)}\n"
            f"portagrad does not download data. Copy the four IDX files of {name} "
            f"(gzip-compressed or not) into {folder}, or pass --data-dir / data_dir= "
            f"pointing at the folder that holds them (default root: $PORTAGRAD_DATA or "
            f"~/.portagrad/datasets)."
        )
    out = []
    for split in ("train", "test"):
        x = read_idx(found[f"{split}_x"])  # type: ignore[arg-type]
        y = read_idx(found[f"{split}_y"])  # type: ignore[arg-type]
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise ValueError(f"load_{name}({folder}): expected images (N, H, W) and labels "
                             f"(N,), got {x.shape} and {y.shape}")
        out.append(TupleDataset(_images(x, ndim, dtype, 1.0 / 255.0),
                                y.astype(label_dtype)))
    return out[0], out[1]


def load_fashion_mnist(data_dir: str | os.PathLike | None = None, ndim: int = 1,
                       dtype: Any = np.float32,
                       label_dtype: Any = np.int64) -> tuple[TupleDataset, TupleDataset]:
    """Fashion-MNIST from local IDX files (same file names and layout as MNIST).

    Default folder: :func:`default_data_dir` of ``"fashion-mnist"``.
    """
    return load_mnist(data_dir, ndim, dtype, label_dtype, name="fashion-mnist")
