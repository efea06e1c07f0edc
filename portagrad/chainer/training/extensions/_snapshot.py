"""Chainer's ``snapshot`` and ``snapshot_object``: the trainer (or any object with
``serialize``) saved as an npz file with Chainer's keys, which Chainer loads too.

``autoload=True`` loads the newest matching file of ``trainer.out`` when training
starts, so rerunning a script resumes it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ...._errors import PortagradTypeError
from ..extension import Extension

__all__ = ["snapshot", "snapshot_object"]


def _find_snapshot_files(fmt: str, path: str) -> list[tuple[float, str]]:
    prefix = fmt.split("{")[0]
    suffix = fmt.split("}")[-1]
    if not os.path.isdir(path):
        return []
    found = [f for f in os.listdir(path) if f.startswith(prefix) and f.endswith(suffix)
             and not f.startswith(".")]
    return sorted((os.stat(os.path.join(path, f)).st_mtime, f) for f in found)


def _find_latest_snapshot(fmt: str, path: str) -> str | None:
    files = _find_snapshot_files(fmt, path)
    return files[-1][1] if files else None


def _save_npz(path: str, target: Any) -> None:
    from ... import serializers

    serializers.save_npz(path, target)


def _load_npz(path: str, target: Any) -> None:
    from ... import serializers

    serializers.load_npz(path, target)


class _Snapshot(Extension):
    trigger = (1, "epoch")
    priority = -100

    def __init__(self, target: Any, condition: Callable[[], bool] | None,
                 savefun: Callable[[str, Any], None], filename: Any,
                 snapshot_on_error: bool, n_retains: int, autoload: bool) -> None:
        self._target = target
        self.filename = filename
        self.condition = condition or (lambda: True)
        self._savefun = savefun
        self._snapshot_on_error = snapshot_on_error
        self.n_retains = n_retains
        self.autoload = autoload

    def initialize(self, trainer: Any) -> None:
        if not self.autoload:
            return
        target = trainer if self._target is None else self._target
        if not isinstance(self.filename, str):
            raise PortagradTypeError("snapshot(autoload=True): needs filename to be a "
                                     "format string (to find the files), not a function")
        name = _find_latest_snapshot(self.filename, trainer.out)
        if name is not None:
            _load_npz(os.path.join(trainer.out, name), target)

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        if self._snapshot_on_error:
            self._make_snapshot(trainer)

    def __call__(self, trainer: Any) -> None:
        if self.condition():
            self._make_snapshot(trainer)

    def _make_snapshot(self, trainer: Any) -> None:
        target = trainer if self._target is None else self._target
        filename = self.filename(trainer) if callable(self.filename) \
            else self.filename.format(trainer)
        os.makedirs(trainer.out, exist_ok=True)
        path = os.path.join(trainer.out, filename)
        # Written beside and renamed, so a run killed mid-write keeps the old snapshots.
        root, ext = os.path.splitext(filename)
        tmp = os.path.join(trainer.out, f".{root}.tmp{os.getpid()}{ext or '.npz'}")
        try:
            self._savefun(tmp, target)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        if self.n_retains > 0 and isinstance(self.filename, str):
            files = _find_snapshot_files(self.filename, trainer.out)
            for _, old in files[:max(len(files) - self.n_retains, 0)]:
                os.remove(os.path.join(trainer.out, old))


def snapshot(savefun: Callable[[str, Any], None] | None = None,
             filename: Any = "snapshot_iter_{.updater.iteration}",
             **kwargs: Any) -> Extension:
    """Save the trainer's state (Chainer's ``extensions.snapshot``).

    Parameters
    ----------
    savefun
        ``savefun(path, target)``; default ``serializers.save_npz``.
    filename
        A format string applied to the trainer (``'snapshot_iter_{.updater.iteration}'``)
        or a function of the trainer.
    target
        What to save (default the trainer).
    condition
        Save only when ``condition()`` is True.
    writer
        Not supported (Chainer's asynchronous writers); an error names it.
    snapshot_on_error
        Also save when the training loop raises.
    n_retains
        Keep only the newest ``n`` files (``-1``: all).
    autoload
        Load the newest matching file of ``trainer.out`` when training starts.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> s = extensions.snapshot(filename="snap_{.updater.epoch}", autoload=True)
    >>> s.trigger, s.filename, s.autoload
    ((1, 'epoch'), 'snap_{.updater.epoch}', True)
    """
    if "num_retain" in kwargs:
        kwargs["n_retains"] = kwargs.pop("num_retain")
    target = kwargs.pop("target", None)
    condition = kwargs.pop("condition", None)
    writer = kwargs.pop("writer", None)
    snapshot_on_error = bool(kwargs.pop("snapshot_on_error", False))
    n_retains = int(kwargs.pop("n_retains", -1))
    autoload = bool(kwargs.pop("autoload", False))
    if kwargs:
        raise PortagradTypeError(f"snapshot(): unexpected arguments {sorted(kwargs)}")
    if writer is not None:
        raise PortagradTypeError("snapshot(writer): Chainer's snapshot writers (threads, "
                                 "processes, queues) are not supported; the snapshot is "
                                 "written synchronously and atomically. Pass savefun= to "
                                 "change how it is written")
    return _Snapshot(target, condition, savefun or _save_npz, filename, snapshot_on_error,
                     n_retains, autoload)


def snapshot_object(target: Any, filename: Any, savefun: Any = None,
                    **kwargs: Any) -> Extension:
    """Save ``target`` (a link, an optimizer...) instead of the trainer.

    Parameters
    ----------
    target
        The object (anything with ``serialize``).
    filename
        As for :func:`snapshot` (formatted with the trainer).
    savefun
        As for :func:`snapshot`.
    **kwargs
        The other arguments of :func:`snapshot`.

    Examples
    --------
    >>> from portagrad.chainer import links as L
    >>> from portagrad.chainer.training import extensions
    >>> s = extensions.snapshot_object(L.Linear(2, 3), "model_{.updater.epoch}")
    >>> s.filename
    'model_{.updater.epoch}'
    """
    if "num_retain" in kwargs:
        kwargs["n_retains"] = kwargs.pop("num_retain")
    return snapshot(savefun=savefun, filename=filename, target=target, **kwargs)
