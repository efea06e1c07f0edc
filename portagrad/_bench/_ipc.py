"""What the benchmark's coordinator and its worker processes share: the problem file and
the shape of a timed unit.

This module imports only the standard library and NumPy, so that a worker running in
another interpreter (Chainer's virtual environment, with its own NumPy) can load it by
path. A problem -- initial weights and batches, drawn once on the host -- is written as
one ``.npz`` file: the arrays, plus a JSON outline of the nested dataclasses, dicts, lists
and tuples that held them. Loading gives the same nesting back, with each dataclass as a
:class:`types.SimpleNamespace` of its fields.
"""

from __future__ import annotations

import dataclasses
import json
import types
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["save_problem", "load_problem", "training_unit", "Unit"]

# (check, timed): ``check()`` returns the values every implementation must agree on (the
# first steps' losses, a gradient); ``timed()`` is what one round times.
Unit = tuple[Callable[[], Any], Callable[[], Any]]


def _outline(obj: Any, arrays: dict[str, np.ndarray]) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"ns": {f.name: _outline(getattr(obj, f.name), arrays)
                       for f in dataclasses.fields(obj)}}
    if isinstance(obj, types.SimpleNamespace):
        return {"ns": {k: _outline(v, arrays) for k, v in vars(obj).items()}}
    if isinstance(obj, dict):
        return {"dict": {str(k): _outline(v, arrays) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {"list" if isinstance(obj, list) else "tuple":
                [_outline(v, arrays) for v in obj]}
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {"array": key}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    raise TypeError(f"save_problem(problem): expected dataclasses, dicts, lists, tuples, "
                    f"arrays and scalars, got {type(obj).__name__}")


def _rebuild(outline: dict, arrays: Any) -> Any:
    (kind, body), = outline.items()
    if kind == "ns":
        return types.SimpleNamespace(**{k: _rebuild(v, arrays) for k, v in body.items()})
    if kind == "dict":
        return {k: _rebuild(v, arrays) for k, v in body.items()}
    if kind == "list":
        return [_rebuild(v, arrays) for v in body]
    if kind == "tuple":
        return tuple(_rebuild(v, arrays) for v in body)
    if kind == "array":
        return np.array(arrays[body])
    return body


def save_problem(path: str, problem: Any) -> None:
    """Write ``problem`` (nested dataclasses, dicts, lists, tuples of arrays) to ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from portagrad._bench._ipc import load_problem, save_problem
    >>> path = os.path.join(tempfile.mkdtemp(), "p.npz")
    >>> save_problem(path, {"w": [np.ones(2, np.float32), (np.zeros(1), 3)]})
    >>> load_problem(path)["w"][1]
    (array([0.]), 3)
    """
    arrays: dict[str, np.ndarray] = {}
    outline = _outline(problem, arrays)
    meta = np.frombuffer(json.dumps(outline).encode(), dtype=np.uint8)
    np.savez(path, __outline__=meta, **arrays)


def load_problem(path: str) -> Any:
    """The problem :func:`save_problem` wrote, dataclasses as namespaces of their fields."""
    with np.load(path, allow_pickle=False) as f:
        outline = json.loads(bytes(f["__outline__"]).decode())
        return _rebuild(outline, f)


def training_unit(step: Callable[[int], float], check_steps: int) -> Unit:
    """A training step ``step(batch) -> loss`` as a unit: the check takes ``check_steps``
    steps on batch 0 and returns their losses; each timed call is the next step, cycling
    through the batches."""
    counter = iter(range(1 << 62))

    def check() -> np.ndarray:
        return np.array([step(0) for _ in range(check_steps)], dtype=np.float64)

    return check, lambda: step(next(counter))
