"""Chainer's serializers: ``save_npz``/``load_npz`` with Chainer's key layout, and
``save_hdf5``/``load_hdf5`` when h5py is installed.

An npz file holds one entry per parameter and persistent value, keyed by its path without
the leading slash (``predictor/l1/W``, ``predictor/bn/avg_mean``, ``updater/iteration``),
as NumPy arrays of the value's dtype and shape, which is what Chainer 7.8's
``DictionarySerializer`` writes: a file written by Chainer loads here and one written here
loads in Chainer. Nothing is unpickled: Chainer stores a value that is None (a parameter
not initialized yet) as a pickled ``None`` object array, which is recognized from the
entry's header and read as None without running the pickle; here such a value is left out
of the file (``load_npz(strict=True)`` in Chainer then reports the missing key, which only
a model saved before its first forward has).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._errors import CheckpointError

__all__ = ["AbstractSerializer", "Serializer", "Deserializer", "DictionarySerializer",
           "NpzDeserializer", "HDF5Serializer", "HDF5Deserializer", "save_npz", "load_npz",
           "save_hdf5", "load_hdf5", "serialize"]


class AbstractSerializer:
    """The protocol: ``s[name]`` is the serializer of a child object and ``s(key, value)``
    saves (or loads and returns) one value."""

    def __getitem__(self, key: str) -> AbstractSerializer:
        raise NotImplementedError

    def __call__(self, key: str, value: Any) -> Any:
        raise NotImplementedError


class Serializer(AbstractSerializer):
    """Base class of the serializers that save."""

    def save(self, obj: Any) -> None:
        """Save ``obj`` by its ``serialize`` method."""
        obj.serialize(self)


class Deserializer(AbstractSerializer):
    """Base class of the serializers that load."""

    def load(self, obj: Any) -> None:
        """Load ``obj`` by its ``serialize`` method."""
        obj.serialize(self)


def _host(value: Any) -> Any:
    from ..tape._variable import Variable
    from ..xp import to_numpy
    from ..xp._namespace import is_array

    if isinstance(value, Variable):
        value = value.array
    if value is None:
        return None
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    if is_array(value):
        return to_numpy(value)
    return np.asarray(value)


class DictionarySerializer(Serializer):
    """Flatten an object into ``target``: ``{path: NumPy array}``, Chainer's layout.

    Parameters
    ----------
    target
        The dict to fill (a new one when None).
    path
        The prefix of this serializer's keys.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> from portagrad.chainer import serializers
    >>> s = serializers.DictionarySerializer()
    >>> s.save(L.Linear(2, 3))
    >>> sorted(s.target), s.target["W"].shape
    (['W', 'b'], (3, 2))
    """

    def __init__(self, target: dict | None = None, path: str = "") -> None:
        self.target = {} if target is None else target
        self.path = path

    def __getitem__(self, key: str) -> DictionarySerializer:
        return DictionarySerializer(self.target, self.path + key.strip("/") + "/")

    def __call__(self, key: str, value: Any) -> Any:
        host = _host(value)
        if host is not None:
            self.target[self.path + key.lstrip("/")] = host
        return value


def serialize(obj: Any) -> dict:
    """``obj`` flattened to ``{path: array}`` (what :func:`save_npz` writes).

    Parameters
    ----------
    obj
        An object with a ``serialize`` method.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> from portagrad.chainer import serializers
    >>> sorted(serializers.serialize(L.Linear(2, 3)))
    ['W', 'b']
    """
    s = DictionarySerializer()
    s.save(obj)
    return s.target


def save_npz(file: Any, obj: Any, compression: bool = True) -> None:
    """Save ``obj`` (a link, an optimizer, a trainer, or a dict of arrays) to an npz file.

    Parameters
    ----------
    file
        A path or a binary file object.
    obj
        What to save; a dict is written as it is.
    compression
        Compress the zip entries.

    Examples
    --------
    >>> import io, numpy as np
    >>> import portagrad.chainer.links as L
    >>> from portagrad.chainer import serializers
    >>> buf = io.BytesIO()
    >>> serializers.save_npz(buf, L.Linear(2, 3))
    >>> sorted(np.load(io.BytesIO(buf.getvalue())).files)
    ['W', 'b']
    """
    if isinstance(file, (str, os.PathLike)):
        with open(file, "wb") as f:
            save_npz(f, obj, compression)
        return
    target = {k: _host(v) for k, v in obj.items() if v is not None} if isinstance(
        obj, dict) else serialize(obj)
    for k, v in target.items():
        if v.dtype.hasobject:
            raise CheckpointError(f"save_npz: expected numeric or text values, got an object "
                                  f"array at {k!r} (it would need pickle)")
    (np.savez_compressed if compression else np.savez)(file, **target)


def _is_none_entry(npz: Any, key: str) -> bool:
    """Whether entry ``key`` is Chainer's pickled ``None`` (read from its header only)."""
    with npz.zip.open(key + ".npy") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    return dtype.hasobject and shape == ()


class NpzDeserializer(Deserializer):
    """Read values from an opened npz file (Chainer's ``NpzDeserializer``).

    Parameters
    ----------
    npz
        ``numpy.load(file)`` of an npz file (opened without pickle).
    path
        The prefix of the keys read.
    strict
        Raise when a key is missing (else keep the current value).
    ignore_names
        A key, a callable ``f(key) -> bool``, or a list of them: the values to leave as
        they are.

    Examples
    --------
    >>> import io, numpy as np
    >>> import portagrad.chainer.links as L
    >>> from portagrad.chainer import serializers
    >>> buf = io.BytesIO(); a, b = L.Linear(2, 3), L.Linear(2, 3)
    >>> serializers.save_npz(buf, a); buf.seek(0)
    0
    >>> serializers.NpzDeserializer(np.load(buf)).load(b)
    >>> bool((a.W.array == b.W.array).all())
    True
    """

    def __init__(self, npz: Any, path: str = "", strict: bool = True,
                 ignore_names: Any = None) -> None:
        self.npz = npz
        self.path = path
        self.strict = strict
        self.ignore_names = [] if ignore_names is None else ignore_names

    def __getitem__(self, key: str) -> NpzDeserializer:
        return NpzDeserializer(self.npz, self.path + key.strip("/") + "/", self.strict,
                               self.ignore_names)

    def _ignored(self, key: str) -> bool:
        names = self.ignore_names if isinstance(self.ignore_names, (list, tuple)) else [
            self.ignore_names]
        for n in names:
            if isinstance(n, str):
                if key == n:
                    return True
            elif callable(n):
                if n(key):
                    return True
            else:
                raise ValueError(f"NpzDeserializer(ignore_names): expected names or "
                                 f"callables, got {type(n).__name__}")
        return False

    def __call__(self, key: str, value: Any) -> Any:
        key = self.path + key.lstrip("/")
        if key not in self.npz.files:
            if not self.strict:
                return value
            raise KeyError(f"load_npz: expected the key {key!r} in the file, got none "
                           f"(pass strict=False to skip missing values)")
        if self._ignored(key):
            return value
        if _is_none_entry(self.npz, key):
            return None
        data = self.npz[key]
        return _assign(key, data, value)


def _assign(key: str, data: np.ndarray, value: Any) -> Any:
    """``data`` into ``value``'s place: a NumPy array in place, another library's array as
    a new one of its library, device and dtype, a scalar by its type."""
    from ..tape._variable import Variable
    from ..xp import from_numpy, namespace_of
    from ..xp._namespace import is_array

    if isinstance(value, Variable):
        value = value.array
    if value is None:
        return data
    if isinstance(value, np.ndarray):
        if value.shape != data.shape:
            raise CheckpointError(f"load: expected {key!r} of shape {value.shape}, got "
                                  f"{data.shape}")
        np.copyto(value, data, casting="same_kind")
        return value
    if is_array(value) and not isinstance(value, np.generic):
        if tuple(value.shape) != data.shape:
            raise CheckpointError(f"load: expected {key!r} of shape {tuple(value.shape)}, "
                                  f"got {data.shape}")
        out = from_numpy(data, like=value)
        xp = namespace_of(value)
        return out if out.dtype == value.dtype else xp.astype(out, value.dtype)
    if isinstance(value, str):
        return str(data[()])
    kind = type(value)
    if np.issubdtype(data.dtype, np.number) and not (
            np.issubdtype(data.dtype, np.integer) and isinstance(value, int)) and not (
            np.can_cast(data.dtype, kind, casting="safe")):
        raise CheckpointError(f"load: cannot safely read {key!r} of dtype {data.dtype} into "
                              f"a {kind.__name__}")
    return kind(data[()]) if data.ndim == 0 else kind(data)


def load_npz(file: Any, obj: Any, path: str = "", strict: bool = True,
             ignore_names: Any = None) -> None:
    """Load ``obj`` from an npz file written by :func:`save_npz` or by Chainer.

    Parameters
    ----------
    file
        A path or a binary file object.
    obj
        The object to fill (a link, an optimizer, a trainer).
    path
        Read the values under this prefix (``'updater/model:main/'`` for a model in a
        trainer snapshot).
    strict
        Raise on a missing key (else keep the current value).
    ignore_names
        As :class:`NpzDeserializer`.

    Examples
    --------
    >>> import io
    >>> import portagrad.chainer.links as L
    >>> from portagrad.chainer import serializers
    >>> buf = io.BytesIO(); a, b = L.Linear(2, 3), L.Linear(None, 3)
    >>> serializers.save_npz(buf, a); buf.seek(0)
    0
    >>> serializers.load_npz(buf, b)  # b's W is created by the load
    >>> b.W.shape
    (3, 2)
    """
    try:
        with np.load(file, allow_pickle=False) as f:
            NpzDeserializer(f, path=path, strict=strict, ignore_names=ignore_names).load(obj)
    except FileNotFoundError:
        raise CheckpointError(f"load_npz(file): expected an npz file, got no file at "
                              f"{file!r}") from None


def _h5py() -> Any:
    try:
        import h5py
    except ImportError:
        raise ImportError("save_hdf5/load_hdf5: expected h5py to be installed, got no module "
                          "named 'h5py' (pip install h5py), or use save_npz/load_npz") from None
    return h5py


class HDF5Serializer(Serializer):
    """Write into an h5py group, one group per child (Chainer's ``HDF5Serializer``).

    Parameters
    ----------
    group
        An ``h5py.Group`` (a file is one).
    compression
        The gzip level of arrays with more than one element.
    """

    def __init__(self, group: Any, compression: int = 4) -> None:
        self._h5 = _h5py()
        self.group = group
        self.compression = compression

    def __getitem__(self, key: str) -> HDF5Serializer:
        return HDF5Serializer(self.group.require_group(self.group.name + "/" + key),
                              self.compression)

    def __call__(self, key: str, value: Any) -> Any:
        host = _host(value)
        if host is None:
            self.group.create_dataset(key, data=self._h5.Empty("f"))
        else:
            self.group.create_dataset(key, data=host, compression=None if host.size <= 1
                                      else self.compression)
        return value


class HDF5Deserializer(Deserializer):
    """Read from an h5py group (Chainer's ``HDF5Deserializer``).

    Parameters
    ----------
    group
        An ``h5py.Group``.
    strict
        Raise on a missing key.
    """

    def __init__(self, group: Any, strict: bool = True) -> None:
        _h5py()
        self.group = group
        self.strict = strict

    def __getitem__(self, key: str) -> HDF5Deserializer:
        name = self.group.name + "/" + key if self.group is not None else key
        group = self.group.get(name) if self.group is not None else None
        return HDF5Deserializer(group, self.strict)

    def __call__(self, key: str, value: Any) -> Any:
        if self.group is None or key not in self.group:
            if not self.strict:
                return value
            raise KeyError(f"load_hdf5: expected the key {key!r} in the file, got none")
        ds = self.group[key]
        if ds.shape is None:
            return None
        return _assign(key, np.asarray(ds), value)


def save_hdf5(filename: str, obj: Any, compression: int = 4) -> None:
    """Save ``obj`` to an HDF5 file (needs h5py).

    Parameters
    ----------
    filename
        The file.
    obj
        What to save.
    compression
        The gzip level.
    """
    h5py = _h5py()
    with h5py.File(filename, "w") as f:
        HDF5Serializer(f, compression=compression).save(obj)


def load_hdf5(filename: str, obj: Any) -> None:
    """Load ``obj`` from an HDF5 file written by :func:`save_hdf5` or Chainer (needs h5py).

    Parameters
    ----------
    filename
        The file.
    obj
        The object to fill.
    """
    h5py = _h5py()
    with h5py.File(filename, "r") as f:
        HDF5Deserializer(f).load(obj)
