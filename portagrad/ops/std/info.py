"""The inspection API (``__array_namespace_info__``) and the standard's constants."""

from __future__ import annotations

import math
from typing import Any

from ...xp import default_namespace
from .dtype_functions import isdtype
from .dtypes import BY_NAME, dtype_name

__all__ = ["__array_namespace_info__", "e", "inf", "nan", "pi", "newaxis"]

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None


class Info:
    """What the namespace offers, answered for the default namespace (NumPy unless
    :func:`portagrad.xp.set_default_namespace` says else); dtypes are portagrad's.

    Examples
    --------
    >>> import portagrad as pg
    >>> info = pg.ops.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    portagrad.ops.float64
    >>> sorted(info.dtypes(kind="complex floating"))
    ['complex128', 'complex64']
    """

    def _backend(self) -> Any:
        return default_namespace().__array_namespace_info__()

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work wherever the library has them."""
        caps = dict(self._backend().capabilities())
        caps.setdefault("boolean indexing", True)
        caps.setdefault("data-dependent shapes", True)
        caps.setdefault("max dimensions", None)
        return caps

    def default_device(self) -> Any:
        """The default namespace's default device."""
        return self._backend().default_device()

    def devices(self) -> list[Any]:
        """The default namespace's devices, as a list (the standard's type)."""
        return list(self._backend().devices())

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        """Default dtypes per kind, as portagrad dtype objects."""
        raw = self._backend().default_dtypes(device=device)
        return {k: BY_NAME.get(dtype_name(v) or "", v) for k, v in raw.items()}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        """The standard's dtypes the default namespace supports, optionally of ``kind``."""
        raw = self._backend().dtypes(device=device)
        out = {}
        for name in raw:
            dt = BY_NAME.get(name)
            if dt is not None and (kind is None or isdtype(dt, kind)):
                out[name] = dt
        return out


_INFO = Info()


def __array_namespace_info__() -> Info:
    """The namespace's inspection object (see :class:`Info`).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.__array_namespace_info__().capabilities()["boolean indexing"]
    True
    """
    return _INFO
