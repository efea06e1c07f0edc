"""Chainer's file datasets: images (files, zips), text lines, and the pickle datasets
(refused: portagrad never unpickles)."""

from __future__ import annotations

import bisect
import io
import os
import threading
import zipfile
from typing import Any

import numpy as np

from ..._errors import PortagradError, PortagradValueError
from ..config import get_dtype
from ..dataset.dataset_mixin import DatasetMixin

__all__ = ["ImageDataset", "LabeledImageDataset", "LabeledZippedImageDataset",
           "MultiZippedImageDataset", "ZippedImageDataset", "TextDataset",
           "PickleDataset", "PickleDatasetWriter", "open_pickle_dataset",
           "open_pickle_dataset_writer", "PickleRefusedError"]


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"image datasets need Pillow (pip install pillow): {e}") from e
    return Image


def _read_image(path: Any, dtype: Any) -> Any:
    with _pil().open(path) as f:
        image = np.asarray(f, dtype=dtype)
    if image.ndim == 2:
        image = image[..., None]
    return image.transpose(2, 0, 1)


def _read_pairs(path: str) -> list[tuple[str, int]]:
    pairs = []
    with open(path) as f:
        for i, line in enumerate(f):
            pair = line.strip().split()
            if len(pair) != 2:
                raise PortagradValueError(f"invalid format at line {i} in file {path}: "
                                          f"expected '<path> <label>'")
            pairs.append((pair[0], int(pair[1])))
    return pairs


class ImageDataset(DatasetMixin):
    """Images read from files, as ``(channels, height, width)`` arrays.

    Parameters
    ----------
    paths
        Paths, or a text file listing one per line.
    root
        Folder the paths are relative to.
    dtype
        Array dtype (default ``chainer.config.dtype``).

    Examples
    --------
    >>> from portagrad.chainer.datasets import ImageDataset
    >>> len(ImageDataset(["a.png", "b.png"]))
    2
    """

    def __init__(self, paths: Any, root: str = ".", dtype: Any = None) -> None:
        _pil()
        if isinstance(paths, str):
            with open(paths) as f:
                paths = [p.strip() for p in f]
        self._paths = paths
        self._root = root
        self._dtype = get_dtype(dtype)

    def __len__(self) -> int:
        return len(self._paths)

    def get_example(self, i: int) -> Any:
        return _read_image(os.path.join(self._root, self._paths[i]), self._dtype)


class LabeledImageDataset(DatasetMixin):
    """``(image, label)`` pairs from files.

    Parameters
    ----------
    pairs
        ``(path, label)`` pairs, or a text file of ``<path> <label>`` lines.
    root
        Folder the paths are relative to.
    dtype, label_dtype
        Dtypes of the image and the label.

    Examples
    --------
    >>> from portagrad.chainer.datasets import LabeledImageDataset
    >>> len(LabeledImageDataset([("a.png", 0)]))
    1
    """

    def __init__(self, pairs: Any, root: str = ".", dtype: Any = None,
                 label_dtype: Any = np.int32) -> None:
        _pil()
        self._pairs = _read_pairs(pairs) if isinstance(pairs, str) else pairs
        self._root = root
        self._dtype = get_dtype(dtype)
        self._label_dtype = label_dtype

    def __len__(self) -> int:
        return len(self._pairs)

    def get_example(self, i: int) -> tuple:
        path, label = self._pairs[i]
        image = _read_image(os.path.join(self._root, path), self._dtype)
        return image, np.array(label, dtype=self._label_dtype)


class ZippedImageDataset(DatasetMixin):
    """The images of a zip file (in the order of its entries).

    Parameters
    ----------
    zipfilename
        The zip file.
    dtype
        Array dtype.

    Examples
    --------
    >>> import io, zipfile, tempfile, os
    >>> from portagrad.chainer.datasets import ZippedImageDataset
    >>> path = os.path.join(tempfile.mkdtemp(), "e.zip")
    >>> zipfile.ZipFile(path, "w").close()
    >>> len(ZippedImageDataset(path))
    0
    """

    def __init__(self, zipfilename: str, dtype: Any = None) -> None:
        self._zipfilename = zipfilename
        self._zf: zipfile.ZipFile | None = zipfile.ZipFile(zipfilename)
        self._zf_pid = os.getpid()
        self._dtype = get_dtype(dtype)
        self._paths = [x for x in self._zf.namelist() if not x.endswith("/")]
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._paths)

    def get_example(self, i_or_filename: Any) -> Any:
        name = self._paths[i_or_filename] if isinstance(i_or_filename, (int, np.integer)) \
            else i_or_filename
        with self._lock:
            if self._zf is None or self._zf_pid != os.getpid():
                # A forked worker opens its own handle (file offsets are shared).
                self._zf_pid = os.getpid()
                self._zf = zipfile.ZipFile(self._zipfilename)
            data = self._zf.read(name)
        return _read_image(io.BytesIO(data), self._dtype)


class LabeledZippedImageDataset(DatasetMixin):
    """``(image, label)`` pairs from a zip file and a ``<path> <label>`` text file.

    Parameters
    ----------
    zipfilename
        The zip file.
    labelfilename
        The text file of pairs.
    dtype, label_dtype
        Dtypes.

    Examples
    --------
    >>> import os, tempfile, zipfile
    >>> from portagrad.chainer.datasets import LabeledZippedImageDataset
    >>> d = tempfile.mkdtemp(); z = os.path.join(d, "e.zip"); t = os.path.join(d, "l.txt")
    >>> zipfile.ZipFile(z, "w").close(); open(t, "w").close()
    >>> len(LabeledZippedImageDataset(z, t))
    0
    """

    def __init__(self, zipfilename: str, labelfilename: str, dtype: Any = None,
                 label_dtype: Any = np.int32) -> None:
        _pil()
        self._pairs = _read_pairs(labelfilename)
        self._label_dtype = label_dtype
        self._zipfile = ZippedImageDataset(zipfilename, dtype=dtype)

    def __len__(self) -> int:
        return len(self._pairs)

    def get_example(self, i: int) -> tuple:
        path, label = self._pairs[i]
        return self._zipfile.get_example(path), np.array(label, dtype=self._label_dtype)


class MultiZippedImageDataset(DatasetMixin):
    """The images of several zip files, one after the other.

    Parameters
    ----------
    zipfilenames
        The zip files.
    dtype
        Array dtype.

    Examples
    --------
    >>> import os, tempfile, zipfile
    >>> from portagrad.chainer.datasets import MultiZippedImageDataset
    >>> z = os.path.join(tempfile.mkdtemp(), "e.zip"); zipfile.ZipFile(z, "w").close()
    >>> len(MultiZippedImageDataset([z, z]))
    0
    """

    def __init__(self, zipfilenames: list[str], dtype: Any = None) -> None:
        self._zfs = [ZippedImageDataset(fn, dtype) for fn in zipfilenames]
        self._accum = [0]
        for zf in self._zfs:
            self._accum.append(self._accum[-1] + len(zf))

    def __len__(self) -> int:
        return self._accum[-1]

    def get_example(self, i: int) -> Any:
        k = bisect.bisect(self._accum, i) - 1
        return self._zfs[k].get_example(i - self._accum[k])


class TextDataset(DatasetMixin):
    """The lines of text files (a tuple of lines when several files are read in step).

    Parameters
    ----------
    paths
        A path or a list of paths (of equal line counts).
    encoding, errors, newline
        As for :func:`open` (one value or one per file).
    filter_func
        Keep only lines for which ``filter_func(*lines)`` is True.

    Examples
    --------
    >>> import os, tempfile
    >>> from portagrad.chainer.datasets import TextDataset
    >>> p = os.path.join(tempfile.mkdtemp(), "t.txt")
    >>> with open(p, "w") as f:
    ...     _ = f.write("a b\\nc\\n")
    >>> ds = TextDataset(p); len(ds), ds[1]
    (2, 'c\\n')
    >>> ds.close()
    """

    def __init__(self, paths: Any, encoding: Any = None, errors: Any = None,
                 newline: Any = None, filter_func: Any = None) -> None:
        if isinstance(paths, str):
            paths = [paths]
        elif not paths:
            raise PortagradValueError("TextDataset(paths): at least one text file must be "
                                      "specified")
        n = len(paths)
        encoding = [encoding] * n if isinstance(encoding, str) or encoding is None \
            else list(encoding)
        errors = [errors] * n if isinstance(errors, str) or errors is None else list(errors)
        newline = [newline] * n if isinstance(newline, str) or newline is None \
            else list(newline)
        if not n == len(encoding) == len(errors) == len(newline):
            raise PortagradValueError("TextDataset: each option needs one value per file")
        self._paths, self._encoding, self._errors, self._newline = (paths, encoding,
                                                                    errors, newline)
        self._open()
        bounds: tuple[list[int], ...] = tuple([0] for _ in self._fps)
        lines = []
        linenum = 0
        while True:
            data = [fp.readline() for fp in self._fps]
            if not all(data):
                if any(data):
                    raise PortagradValueError("TextDataset: the files have different "
                                              "numbers of lines")
                break
            for k, fp in enumerate(self._fps):
                bounds[k].append(fp.tell())
            if filter_func is not None and filter_func(*data):
                lines.append(linenum)
            linenum += 1
        self._bounds = bounds
        self._lines = lines if filter_func is not None else range(linenum)
        self._lock = threading.Lock()

    def _open(self) -> None:
        self._fps = [open(p, encoding=e, errors=r, newline=nl)  # noqa: SIM115 - kept open
                     for p, e, r, nl in zip(self._paths, self._encoding, self._errors,
                                            self._newline)]

    def __len__(self) -> int:
        return len(self._lines)

    def close(self) -> None:
        """Close the files."""
        for fp in self._fps:
            fp.close()

    def get_example(self, idx: int) -> Any:
        if idx < 0 or idx >= len(self._lines):
            raise IndexError("TextDataset: index out of range")
        linenum = self._lines[idx]
        with self._lock:
            for k, fp in enumerate(self._fps):
                fp.seek(self._bounds[k][linenum])
            lines = [fp.readline() for fp in self._fps]
        return lines[0] if len(lines) == 1 else tuple(lines)


class PickleRefusedError(PortagradError, TypeError):
    """Chainer's pickle datasets are not available: portagrad never unpickles."""


_PICKLE_WHY = ("portagrad never unpickles: loading a pickle runs whatever code the file "
               "names, so a dataset file from anywhere could take over the machine. Store "
               "the examples as arrays instead (numpy.savez and TupleDataset, or one file "
               "per example with ImageDataset/TextDataset)")


class PickleDataset:
    """Refused: Chainer's ``PickleDataset`` unpickles its file; portagrad never does.

    Parameters
    ----------
    reader
        The file Chainer would read.

    Examples
    --------
    >>> from portagrad.chainer.datasets import PickleDataset
    >>> PickleDataset(None)
    Traceback (most recent call last):
    ...
    portagrad.chainer.datasets._files.PickleRefusedError: PickleDataset: ...
    """

    def __init__(self, reader: Any) -> None:
        raise PickleRefusedError(f"PickleDataset: {_PICKLE_WHY}")


class PickleDatasetWriter:
    """Refused, with :class:`PickleDataset` (a file nobody here could read back).

    Parameters
    ----------
    writer
        The file Chainer would write.
    protocol
        The pickle protocol.

    Examples
    --------
    >>> from portagrad.chainer.datasets import PickleDatasetWriter
    >>> PickleDatasetWriter(None)
    Traceback (most recent call last):
    ...
    portagrad.chainer.datasets._files.PickleRefusedError: PickleDatasetWriter: ...
    """

    def __init__(self, writer: Any, protocol: Any = None) -> None:
        raise PickleRefusedError(f"PickleDatasetWriter: {_PICKLE_WHY}")


def open_pickle_dataset(path: str) -> Any:
    """Refused, as :class:`PickleDataset`.

    Parameters
    ----------
    path
        The file.

    Examples
    --------
    >>> from portagrad.chainer.datasets import open_pickle_dataset
    >>> open_pickle_dataset("x.pkl")
    Traceback (most recent call last):
    ...
    portagrad.chainer.datasets._files.PickleRefusedError: open_pickle_dataset: ...
    """
    raise PickleRefusedError(f"open_pickle_dataset: {_PICKLE_WHY}")


def open_pickle_dataset_writer(path: str, protocol: Any = None) -> Any:
    """Refused, as :class:`PickleDatasetWriter`.

    Parameters
    ----------
    path
        The file.
    protocol
        The pickle protocol.

    Examples
    --------
    >>> from portagrad.chainer.datasets import open_pickle_dataset_writer
    >>> open_pickle_dataset_writer("x.pkl")
    Traceback (most recent call last):
    ...
    portagrad.chainer.datasets._files.PickleRefusedError: open_pickle_dataset_writer: ...
    """
    raise PickleRefusedError(f"open_pickle_dataset_writer: {_PICKLE_WHY}")
