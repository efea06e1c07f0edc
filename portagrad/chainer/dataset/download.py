"""Chainer's dataset folder and download cache, read and never written from the net.

The root is ``CHAINER_DATASET_ROOT`` (default ``~/.chainer/dataset``), read when a
function is called (so setting the variable before the first dataset call is enough),
unless :func:`set_dataset_root` chose one. Nothing is downloaded: :func:`cached_download`
returns the file Chainer's own ``cached_download`` would have stored,
``<root>/_dl_cache/<md5 of the url>``, and a missing file is an error that names the
path and the url to fetch it from.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from ..._errors import PortagradError

__all__ = ["get_dataset_root", "set_dataset_root", "get_dataset_directory",
           "cached_download", "cache_or_load_file", "DatasetNotFoundError"]

_root: str | None = None


class DatasetNotFoundError(PortagradError, FileNotFoundError):
    """A dataset file is not in Chainer's cache layout (portagrad never downloads)."""


def get_dataset_root() -> str:
    """The root of the dataset folders.

    Examples
    --------
    >>> import os
    >>> from portagrad.chainer.dataset import get_dataset_root
    >>> get_dataset_root() == os.environ.get(
    ...     "CHAINER_DATASET_ROOT", os.path.join(os.path.expanduser("~"), ".chainer",
    ...                                          "dataset"))
    True
    """
    if _root is not None:
        return _root
    return os.environ.get("CHAINER_DATASET_ROOT",
                          os.path.join(os.path.expanduser("~"), ".chainer", "dataset"))


def set_dataset_root(path: str | os.PathLike) -> None:
    """Use ``path`` as the root from now on (``None`` goes back to the environment).

    Parameters
    ----------
    path
        The new root folder.

    Examples
    --------
    >>> from portagrad.chainer.dataset import get_dataset_root, set_dataset_root
    >>> old = get_dataset_root()
    >>> set_dataset_root("/tmp/ds"); get_dataset_root()
    '/tmp/ds'
    >>> set_dataset_root(None)
    """
    global _root
    _root = None if path is None else os.fspath(path)


def get_dataset_directory(dataset_name: str, create_directory: bool = True) -> str:
    """``<root>/<dataset_name>``, created unless ``create_directory=False``.

    Parameters
    ----------
    dataset_name
        The folder under the root (``'pfnet/chainer/mnist'``).
    create_directory
        Create it when missing.

    Examples
    --------
    >>> import tempfile
    >>> from portagrad.chainer.dataset import get_dataset_directory, set_dataset_root
    >>> set_dataset_root(tempfile.mkdtemp())
    >>> get_dataset_directory("pfnet/chainer/mnist").endswith("pfnet/chainer/mnist")
    True
    >>> set_dataset_root(None)
    """
    path = os.path.join(get_dataset_root(), dataset_name)
    if create_directory:
        os.makedirs(path, exist_ok=True)
    return path


def cached_download(url: str) -> str:
    """The path of ``url``'s file in Chainer's download cache (no download).

    Parameters
    ----------
    url
        The url Chainer would have downloaded.

    Raises
    ------
    DatasetNotFoundError
        When ``<root>/_dl_cache/<md5 of url>`` does not exist.

    Examples
    --------
    >>> import hashlib, os, tempfile
    >>> from portagrad.chainer.dataset import cached_download, set_dataset_root
    >>> root = tempfile.mkdtemp(); set_dataset_root(root)
    >>> url = "https://example.org/data.bin"
    >>> os.makedirs(os.path.join(root, "_dl_cache"))
    >>> path = os.path.join(root, "_dl_cache", hashlib.md5(url.encode()).hexdigest())
    >>> open(path, "wb").close()
    >>> cached_download(url) == path
    True
    >>> set_dataset_root(None)
    """
    digest = hashlib.md5(url.encode("utf-8")).hexdigest()
    path = os.path.join(get_dataset_root(), "_dl_cache", digest)
    if not os.path.exists(path):
        raise DatasetNotFoundError(
            f"cached_download({url!r}): {path} does not exist, and portagrad never "
            f"downloads. Fetch the file from {url} and save it as {path} (Chainer's "
            f"download cache: <CHAINER_DATASET_ROOT>/_dl_cache/<md5 of the url>)")
    return path


def cache_or_load_file(path: str, creator: Callable[[str], Any],
                       loader: Callable[[str], Any]) -> Any:
    """``loader(path)`` when ``path`` exists, else ``creator`` writes it and its result is
    returned (Chainer's cache of converted datasets).

    Parameters
    ----------
    path
        The cached file.
    creator
        ``creator(path)`` writes the file and returns the content.
    loader
        ``loader(path)`` reads it.

    Examples
    --------
    >>> import os, tempfile
    >>> from portagrad.chainer.dataset import cache_or_load_file
    >>> path = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> def make(p):
    ...     with open(p, "w") as f:
    ...         f.write("hi")
    ...     return "made"
    >>> def load(p):
    ...     with open(p) as f:
    ...         return f.read()
    >>> cache_or_load_file(path, make, load)
    'made'
    >>> cache_or_load_file(path, make, load)
    'hi'
    """
    if os.path.exists(path):
        return loader(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    content = creator(tmp)
    if os.path.exists(tmp):
        os.replace(tmp, path)
    return content
