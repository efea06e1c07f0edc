"""save/load of anything with ``state_dict()``/``load_state_dict()``: modules, optimizers,
iterators, trainers, or a plain nested dict.

A state is a tree of dicts (string keys), lists, arrays and JSON scalars. Arrays become
safetensors tensors named by their path (``"model/fc1.weight"``; a module saved on its own
gives plain ``"fc1.weight"``, so other safetensors readers load it); the rest of the tree is
JSON in the header's ``__metadata__["portagrad.state"]`` with ``{"__tensor__": name}``
where each array was.
"""

from __future__ import annotations

import math
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .._errors import CheckpointError, describe
from ..xp import to_numpy
from ..xp._namespace import is_array
from ._format import (
    dtype_code,
    file_size,
    open_regular,
    parse_json,
    read_header,
    read_tensor,
    write_tensors,
)
from ._validate import check_kinds, check_state_tree

__all__ = ["save", "load", "atomic_write", "read_state", "remove_stale_temps"]

_STATE_KEY = "portagrad.state"
_MAX_TREE_DEPTH = 64
_RESERVED = ("__tensor__", "__float__")
# The temporary files atomic_write makes: "." + target name + "." + tempfile.mkstemp's 8
# random characters + ".tmp". Only such names are ever removed as leftovers.
_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
# A leftover younger than this is left alone even when unlocked: it closes the window
# between a writer's mkstemp and its flock.
STALE_TEMP_SECONDS = 2.0
# Where files cannot be locked, only the age tells a leftover from a slow live writer.
STALE_UNLOCKED_SECONDS = 24 * 3600.0


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Write a file so that readers see the old content or the new, never a torn one.

    ``write(f)`` fills a unique temporary file in the same folder; it is flushed and
    fsynced, renamed over ``path`` with :func:`os.replace`, and the folder is fsynced so
    the rename survives a power cut. On any error the temporary file is removed.

    A writer holds an exclusive ``flock`` on its temporary file until the rename, so a
    process killed mid-write (``SIGKILL``, a power cut) leaves an unlocked
    ``.<name>.<8 characters>.tmp``; each call first removes such leftovers from the folder:
    only names of that pattern, only regular files that no live writer holds locked, and
    only when at least ``STALE_TEMP_SECONDS`` old (``STALE_UNLOCKED_SECONDS`` where the
    filesystem has no locks). Concurrent writers in one folder thus never remove each
    other's files.

    Parameters
    ----------
    path
        The file to write.
    write
        Called with the temporary file (opened for binary writing) to fill it.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from portagrad.io import atomic_write
    >>> d = tempfile.mkdtemp()
    >>> atomic_write(os.path.join(d, "x.bin"), lambda f: f.write(b"hello"))
    >>> pathlib.Path(d, "x.bin").read_bytes(), os.listdir(d)
    (b'hello', ['x.bin'])
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    remove_stale_temps(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        # Held until after the rename, so no cleaner ever sees this file unlocked.
        _lock(fd, blocking=True)
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:  # folders cannot be opened on some platforms; the rename is done
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _lock(fd: int, blocking: bool) -> bool | None:
    """Take an exclusive flock: ``True`` taken, ``False`` held by another process,
    ``None`` when the platform or filesystem has no such locks."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def remove_stale_temps(folder: str | os.PathLike) -> list[str]:
    """Remove the temporary files that killed :func:`atomic_write` calls left in ``folder``.

    Returns the names removed. Called by :func:`atomic_write` (and so by every save);
    see there for which files count as leftovers. Errors (a folder that cannot be listed,
    a file removed by someone else meanwhile) are ignored: cleaning up must never make a
    save fail.

    Parameters
    ----------
    folder
        The folder to clean.

    Examples
    --------
    >>> import os, tempfile
    >>> from portagrad.io import remove_stale_temps
    >>> d = tempfile.mkdtemp()
    >>> leftover = os.path.join(d, ".m.safetensors.abcd1234.tmp")
    >>> open(leftover, "wb").close()
    >>> os.utime(leftover, (0, 0))  # as if left by a save killed long ago
    >>> remove_stale_temps(d), os.listdir(d)
    (['.m.safetensors.abcd1234.tmp'], [])
    """
    removed = []
    try:
        names = [n for n in os.listdir(folder) if _TEMP_NAME.fullmatch(n)]
    except OSError:
        return removed
    now = time.time()
    for name in names:
        p = os.path.join(folder, name)
        try:
            # Opened for writing: NFS emulates flock with byte-range locks, which need it.
            fd = os.open(p, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0))
        except OSError:  # gone, a symlink, or not ours to open
            continue
        try:
            st = os.fstat(fd)
            age = now - st.st_mtime
            if not stat.S_ISREG(st.st_mode) or age < STALE_TEMP_SECONDS:
                continue
            locked = _lock(fd, blocking=False)
            if locked is False or (locked is None and age < STALE_UNLOCKED_SECONDS):
                continue
            # Remove only the file we hold: the name may have been reused meanwhile.
            try:
                if os.stat(p, follow_symlinks=False).st_ino == st.st_ino:
                    os.unlink(p)
                    removed.append(name)
            except OSError:
                pass
        finally:
            os.close(fd)
    return removed


def _state_of(obj: Any) -> Any:
    if hasattr(obj, "state_dict"):
        return obj.state_dict()
    if isinstance(obj, dict):
        return obj
    raise TypeError(f"save(obj): expected an object with state_dict() or a dict, got "
                    f"{describe(obj)}")


def _encode(state: Any) -> tuple[Any, dict[str, np.ndarray]]:
    tensors: dict[str, np.ndarray] = {}

    def walk(v: Any, path: tuple[str, ...]) -> Any:
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                if isinstance(k, int) and not isinstance(k, bool):
                    # Integer keys (an optimizer's parameter indices) are stored as their
                    # decimal strings; their loader converts them back.
                    k = str(k)
                if not isinstance(k, str):
                    raise CheckpointError(f"save: expected string or integer keys, got "
                                          f"{k!r} at {'/'.join(path) or '<root>'}")
                if k in _RESERVED:
                    raise CheckpointError(f"save: the key {k!r} is reserved")
                out[k] = walk(item, (*path, k))
            return out
        if isinstance(v, (list, tuple)):
            return [walk(item, (*path, str(i))) for i, item in enumerate(v)]
        if getattr(v, "__portagrad_lazy__", False):
            raise CheckpointError(f"save: {'/'.join(path)} is not initialized yet (its "
                                  f"shape is inferred at the first call); run the model once "
                                  f"before saving")
        arr = getattr(v, "array", v) if not isinstance(v, (str, bytes)) else v
        if isinstance(arr, np.ndarray) or (is_array(arr) and not isinstance(arr, np.generic)):
            name = "/".join(path)
            if name in tensors or not name:
                raise CheckpointError(f"save: two arrays would be stored as {name!r}; "
                                      f"keys must not contain '/'")
            tensors[name] = np.asarray(to_numpy(arr))
            return {"__tensor__": name}
        if isinstance(v, np.generic):
            v = v.item()
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"__float__": repr(v)}
        raise CheckpointError(f"save: cannot store {describe(v)} at {'/'.join(path)}; a "
                              f"state holds dicts, lists, arrays, numbers, strings and None")

    return walk(state, ()), tensors


def save(path: str | os.PathLike, obj: Any, metadata: dict[str, str] | None = None) -> None:
    """Save ``obj.state_dict()`` (or a state dict) to ``path`` atomically.

    Parameters
    ----------
    path
        Target file; written through a temporary file in the same folder and renamed.
    obj
        A Module, Optimizer, iterator, Trainer... or a nested dict of arrays and JSON
        values. Arrays of any library and device are copied to the host.
    metadata
        Extra string-to-string entries for the header's ``__metadata__``.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import portagrad as pg
    >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    >>> pg.io.save(path, {"w": np.arange(3.0), "step": 7})
    >>> state = pg.io.load(path)
    >>> state["w"], state["step"]
    (array([0., 1., 2.]), 7)
    """
    import json

    tree, tensors = _encode(_state_of(obj))
    meta = {"format": "pt"}
    if metadata:
        meta.update({str(k): str(v) for k, v in metadata.items()})
    meta[_STATE_KEY] = json.dumps(tree, separators=(",", ":"), allow_nan=False)
    atomic_write(path, lambda f: write_tensors(f, tensors, meta))


def _tensor_paths(tree: Any, out: dict[str, Any], depth: int = 0) -> None:
    """Collect ``{"__tensor__": name}`` leaves of a decoded tree; validates its shape."""
    if depth > _MAX_TREE_DEPTH:
        raise CheckpointError("load: the state tree is nested too deeply")
    if isinstance(tree, dict):
        if "__tensor__" in tree:
            name = tree["__tensor__"]
            if set(tree) != {"__tensor__"} or not isinstance(name, str):
                raise CheckpointError(f"load: malformed tensor reference {str(tree)[:80]}")
            if name in out:
                raise CheckpointError(f"load: tensor {name!r} is referenced twice")
            out[name] = tree
            return
        if "__float__" in tree:
            if set(tree) != {"__float__"} or tree["__float__"] not in ("nan", "inf", "-inf"):
                raise CheckpointError(f"load: malformed float {str(tree)[:80]}")
            return
        for v in tree.values():
            _tensor_paths(v, out, depth + 1)
    elif isinstance(tree, list):
        for v in tree:
            _tensor_paths(v, out, depth + 1)


def _expected(state: Any, path: tuple[str, ...], out: dict[str, Any]) -> None:
    """Arrays (or ``None`` placeholders of lazy parameters) of a live state, by path.

    A dict marked ``__portagrad_open__`` (an optimizer's per-parameter state, which
    depends on the steps taken) accepts any arrays under it: ``path/`` maps to ``...``.
    """
    if getattr(state, "__portagrad_open__", False):
        out["/".join(path) + "/"] = ...
        return
    if isinstance(state, dict):
        for k, v in state.items():
            _expected(v, (*path, str(k)), out)
    elif isinstance(state, (list, tuple)):
        for i, v in enumerate(state):
            _expected(v, (*path, str(i)), out)
    else:
        arr = getattr(state, "array", state)
        if getattr(state, "__portagrad_lazy__", False):
            out["/".join(path)] = None
        elif is_array(arr) and not isinstance(arr, np.generic):
            out["/".join(path)] = arr


def read_state(path: str | os.PathLike, expected: dict[str, Any] | None = None,
               strict: bool = True) -> Any:
    """Validate ``path`` and return its state tree with NumPy arrays.

    With ``expected`` (path -> live array or ``None`` for "any shape"), names, shapes and
    dtypes are checked before any tensor is read.
    """
    path = os.fspath(path)
    f = open_regular(path)
    with f:
        size = file_size(f)
        header = read_header(f, size, path)
        meta_tree = header.metadata.get(_STATE_KEY)
        if meta_tree is None:
            tree: Any = {name: {"__tensor__": name} for name in header.tensors}
        else:
            tree = parse_json(meta_tree, "the state tree")
        refs: dict[str, Any] = {}
        _tensor_paths(tree, refs)
        missing = [n for n in refs if n not in header.tensors]
        extra = [n for n in header.tensors if n not in refs]
        if missing or extra:
            raise CheckpointError(f"load({path}): the state tree and the tensors disagree: "
                                  f"{missing[:3]} referenced but absent, {extra[:3]} "
                                  f"stored but not referenced")
        if expected is not None:
            _check_expected(path, header, expected, strict)
        arrays = {name: read_tensor(f, header, name) for name in header.tensors}
    state = _decode(tree, arrays)
    check_state_tree(state, path)
    return state


def _check_expected(path: str, header: Any, expected: dict[str, Any], strict: bool) -> None:
    from ..nn._module import _dtype_name

    stored = header.tensors
    open_prefixes = tuple(n for n, v in expected.items() if v is ...)
    expected = {n: v for n, v in expected.items() if v is not ...}
    if strict:
        missing = [n for n in expected if n not in stored]
        unexpected = [n for n in stored if n not in expected
                      and not (open_prefixes and n.startswith(open_prefixes))]
        if missing or unexpected:
            raise CheckpointError(
                f"load({path}): expected the arrays of the target, got {len(missing)} "
                f"missing {missing[:5]} and {len(unexpected)} unexpected {unexpected[:5]}. "
                f"Pass strict=False to load what matches."
            )
    for name, live in expected.items():
        if live is None or name not in stored:
            continue
        dtype, shape, _, _ = stored[name]
        if tuple(live.shape) != shape:
            raise CheckpointError(f"load({path}): {name}: expected shape "
                                  f"{tuple(live.shape)}, got {shape}")
        want = _dtype_name(live.dtype)
        if want != _dtype_name(dtype) and not (want == "bool" and dtype.kind == "b"):
            raise CheckpointError(f"load({path}): {name}: expected dtype {want}, got "
                                  f"{dtype_code(dtype)}")


def _decode(tree: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(tree, dict):
        if "__tensor__" in tree:
            return arrays[tree["__tensor__"]]
        if "__float__" in tree:
            return float(tree["__float__"])
        return {k: _decode(v, arrays) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_decode(v, arrays) for v in tree]
    return tree


def load(path: str | os.PathLike, obj: Any = None, strict: bool = True) -> Any:
    """Load a file written by :func:`save` (or any safetensors file) into ``obj``.

    The file is validated before anything is allocated: it must be a regular file (a FIFO,
    a device or a directory is refused without blocking), then header size cap, JSON
    without duplicates, dtype allow-list, offsets inside the file, consistent, without
    overlap or gap, the metadata's checksum; then (with ``strict``) the stored arrays must
    be exactly those of ``obj.state_dict()`` with the same shapes and dtypes, and each
    scalar of the state must have the kind (bool, int, number) of ``obj``'s. Every tensor
    is checked against its CRC-32 as it is read. Any of these failures raises
    :class:`portagrad.CheckpointError` before ``obj`` is touched; values that only
    ``obj.load_state_dict`` can judge (an optimizer's step count and hyperparameters, an
    iterator's order) are checked there and raise the same error. Files written before
    checksums existed load with every check but the checksums. No code in the file is
    ever executed (there is no pickle).

    Returns the loaded state tree (NumPy arrays); with ``obj``, also calls
    ``obj.load_state_dict(state)``, which moves arrays to ``obj``'s library and device.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import portagrad as pg
    >>> m = pg.nn.Linear(2, 3)
    >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> pg.io.save(path, m)
    >>> m2 = pg.nn.Linear(2, 3)
    >>> _ = pg.io.load(path, m2)
    >>> bool(np.all(m2.weight.array == m.weight.array))
    True
    >>> _ = pg.io.load(path, pg.nn.Linear(2, 4))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    portagrad._errors.CheckpointError: load(...): weight: expected shape (4, 2), got (3, 2)
    """
    expected = None
    live = None
    if obj is not None:
        expected = {}
        live = _state_of(obj)
        _expected(live, (), expected)
    state = read_state(path, expected, strict)
    if obj is not None and hasattr(obj, "load_state_dict"):
        check_kinds(state, live, os.fspath(path))
        try:
            if strict:
                obj.load_state_dict(state)
            else:
                _load_lenient(obj, state)
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError,
                ArithmeticError, RecursionError) as e:
            raise CheckpointError(f"load({os.fspath(path)}): the file's state does not fit "
                                  f"{type(obj).__name__}: {type(e).__name__}: {e}") from e
    return state


def _load_lenient(obj: Any, state: Any) -> None:
    try:
        obj.load_state_dict(state, strict=False)
    except TypeError:
        obj.load_state_dict(state)
