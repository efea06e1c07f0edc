"""How batches cross from a loader's worker process to the main process, without pickle.

A message is one JSON header describing the structure, then the raw bytes of each array
as a separate message on the same connection. Arrays travel as NumPy host arrays; arrays
of another library are copied to the host and rebuilt in that library (on its default
device) on arrival. Anything else than arrays, numbers, strings, bytes, None, lists,
tuples, named tuples and dicts is refused with an error naming its type.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np

from ..xp import from_numpy, to_numpy
from ..xp._namespace import is_array, namespace_of

__all__ = ["send", "receive"]


def _resolve(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _encode(obj: Any, buffers: list) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) >= 2 ** 63:
            return {"t": "bigint", "v": str(obj)}
        return obj
    if isinstance(obj, np.generic) or isinstance(obj, np.ndarray):
        arr = np.asarray(obj)
        if arr.dtype.kind == "O":
            raise TypeError("a NumPy array of dtype object cannot be sent from a DataLoader "
                            "worker; return arrays of numbers or strings")
        buffers.append(np.ascontiguousarray(arr))
        return {"t": "nd" if isinstance(obj, np.ndarray) else "np", "d": arr.dtype.str,
                "s": list(arr.shape)}
    if is_array(obj):
        xp = namespace_of(obj)
        host = np.ascontiguousarray(to_numpy(obj))
        buffers.append(host)
        return {"t": "xp", "m": xp.__name__, "d": host.dtype.str, "s": list(host.shape)}
    if isinstance(obj, complex):
        return {"t": "c", "v": [obj.real, obj.imag]}
    if isinstance(obj, bytes):
        buffers.append(np.frombuffer(obj, dtype=np.uint8))
        return {"t": "b", "s": [len(obj)]}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        cls = type(obj)
        return {"t": "nt", "m": cls.__module__, "q": cls.__qualname__,
                "v": [_encode(v, buffers) for v in obj]}
    if isinstance(obj, (list, tuple)):
        return {"t": "l" if isinstance(obj, list) else "u",
                "v": [_encode(v, buffers) for v in obj]}
    if isinstance(obj, dict):
        return {"t": "d", "v": [[_encode(k, buffers), _encode(v, buffers)]
                                for k, v in obj.items()]}
    raise TypeError(f"a {type(obj).__module__}.{type(obj).__qualname__} cannot be sent from "
                    f"a DataLoader worker (portagrad sends arrays, numbers, strings, bytes, "
                    f"None, lists, tuples, named tuples and dicts, and never pickles); "
                    f"return one of those from the dataset and collate_fn")


def send(conn: Any, header: dict, payload: Any = None) -> None:
    """Send ``header`` (JSON-able) and ``payload`` (a batch) on ``conn``."""
    buffers: list = []
    header = dict(header)
    header["payload"] = _encode(payload, buffers)
    header["nbuf"] = len(buffers)
    conn.send_bytes(json.dumps(header).encode())
    for b in buffers:
        conn.send_bytes(b.reshape(-1).view(np.uint8) if b.size else b"")


def _decode(tree: Any, arrays: list) -> Any:
    if not isinstance(tree, dict):
        return tree
    t = tree["t"]
    if t in ("nd", "np", "xp", "b"):
        a = arrays.pop()
        if t == "b":
            return a.tobytes()
        if t == "np":
            return a[()]
        if t == "xp":
            return from_numpy(a, xp=importlib.import_module(tree["m"]))
        return a
    if t == "bigint":
        return int(tree["v"])
    if t == "c":
        return complex(*tree["v"])
    if t == "l":
        return [_decode(v, arrays) for v in tree["v"]]
    if t == "u":
        return tuple(_decode(v, arrays) for v in tree["v"])
    if t == "nt":
        return _resolve(tree["m"], tree["q"])(*(_decode(v, arrays) for v in tree["v"]))
    if t == "d":
        return {_decode(k, arrays): _decode(v, arrays) for k, v in tree["v"]}
    raise ValueError(f"DataLoader: a worker sent an unknown item kind {t!r}")


def _specs(tree: Any, out: list) -> None:
    if isinstance(tree, dict):
        t = tree["t"]
        if t in ("nd", "np", "xp"):
            out.append((np.dtype(tree["d"]), tuple(tree["s"])))
        elif t == "b":
            out.append((np.dtype(np.uint8), tuple(tree["s"])))
        elif t in ("l", "u", "nt"):
            for v in tree["v"]:
                _specs(v, out)
        elif t == "d":
            for k, v in tree["v"]:
                _specs(k, out)
                _specs(v, out)


def receive(conn: Any) -> tuple[dict, Any]:
    """Read one message sent by :func:`send`: ``(header, payload)``."""
    header = json.loads(conn.recv_bytes().decode())
    specs: list = []
    _specs(header["payload"], specs)
    arrays = []
    for dtype, shape in specs:
        a = np.empty(shape, dtype=dtype)
        if a.size:
            conn.recv_bytes_into(a.reshape(-1).view(np.uint8))
        else:
            conn.recv_bytes()
        arrays.append(a)
    arrays.reverse()  # popped from the end in the order they were written
    return header, _decode(header.pop("payload"), arrays)
