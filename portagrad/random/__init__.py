"""Seeded random numbers for any array library, with a state that can be saved and resumed.

A :class:`Generator` holds one seed and, lazily, one engine per library and device it has
drawn for (see :mod:`portagrad.xp._random`): NumPy's PCG64 on the host for NumPy and for
libraries without a generator of their own (array-api-strict, JAX), a ``torch.Generator``
for torch, a counter-based stream for CuPy. ``get_state()`` returns a JSON-able dict;
``set_state()`` on a generator made with any seed resumes exactly where the saved one was.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> g = pg.random.Generator(0)
>>> a = g.uniform((2,), like=np.zeros(1))
>>> state = g.get_state()
>>> b = g.normal((3,), like=np.zeros(1))
>>> g2 = pg.random.Generator(123)
>>> g2.set_state(state)
>>> bool(np.all(g2.normal((3,), like=np.zeros(1)) == b))
True
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import ShapeError, describe
from ..xp import default_float, default_namespace, is_array, namespace_of
from ..xp._random import engine_key, make_engine

__all__ = ["Generator", "default_generator", "seed", "manual_seed", "initial_seed",
           "get_state", "set_state"]


def _shape(shape: Any, op: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        out = tuple(int(d) for d in shape)
    except TypeError:
        raise ShapeError(f"{op}(shape): expected a tuple of non-negative ints, got "
                         f"{describe(shape)}") from None
    if any(d < 0 for d in out):
        raise ShapeError(f"{op}(shape): expected non-negative sizes, got {out}")
    return out


class Generator:
    """A seeded source of random arrays for every array library.

    Parameters
    ----------
    seed
        A non-negative integer. ``None`` draws one from the operating system's entropy.

    Each method takes ``like=`` (an array or Variable whose library, device and, for
    floating draws, dtype are used) or ``xp=``/``device=``/``dtype=``; with none of them
    it uses the default namespace (NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> g = pg.random.Generator(42)
    >>> x = g.normal((2, 3), like=np.zeros(1, dtype=np.float32))
    >>> x.shape, x.dtype
    ((2, 3), dtype('float32'))
    >>> g.permutation(4).shape
    (4,)
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise TypeError(f"Generator(seed): expected a non-negative int or None, got "
                            f"{describe(seed)}")
        self.seed = int(seed)
        self._engines: dict[str, Any] = {}
        self._lock = threading.Lock()

    # -- where a draw goes -----------------------------------------------------------------
    def _target(self, like: Any, xp: Any, device: Any, dtype: Any,
                floating: bool) -> tuple[Any, Any, Any]:
        if like is not None:
            arr = getattr(like, "array", like)
            if not is_array(arr):
                raise TypeError(f"random(like): expected an array or Variable, got "
                                f"{describe(like)}")
            xp = namespace_of(arr)
            device = arr.device if device is None else device
            if dtype is None and floating and xp.isdtype(arr.dtype, "real floating"):
                dtype = arr.dtype
        if xp is None:
            xp = default_namespace()
        if device is None:
            try:
                device = xp.__array_namespace_info__().default_device()
            except Exception:  # noqa: BLE001 - namespaces without the inspection API
                device = None
        if floating and dtype is None:
            dtype = default_float(xp, device)
        return xp, device, dtype

    def _engine(self, xp: Any, device: Any) -> Any:
        key = engine_key(xp, device)
        eng = self._engines.get(key)
        if eng is None:
            with self._lock:
                eng = self._engines.get(key)
                if eng is None:
                    eng = make_engine(self.seed, key, device)
                    self._engines[key] = eng
        return eng

    # -- draws -----------------------------------------------------------------------------
    def uniform(self, shape: Sequence[int] | int, low: float = 0.0, high: float = 1.0, *,
                like: Any = None, xp: Any = None, device: Any = None,
                dtype: Any = None) -> Any:
        """Samples from the uniform distribution on ``[low, high)``.

        Examples
        --------
        >>> import portagrad as pg
        >>> u = pg.random.Generator(0).uniform((1000,), -1.0, 1.0)
        >>> bool(u.min() >= -1.0 and u.max() < 1.0)
        True
        """
        shape = _shape(shape, "uniform")
        xp, device, dtype = self._target(like, xp, device, dtype, True)
        return self._engine(xp, device).uniform(shape, float(low), float(high), xp, device,
                                                dtype)

    def normal(self, shape: Sequence[int] | int, mean: float = 0.0, std: float = 1.0, *,
               like: Any = None, xp: Any = None, device: Any = None, dtype: Any = None) -> Any:
        """Samples from the normal distribution with the given mean and standard deviation.

        Examples
        --------
        >>> import portagrad as pg
        >>> z = pg.random.Generator(0).normal((20000,), 1.0, 2.0)
        >>> round(float(z.mean()), 1), round(float(z.std()), 1)
        (1.0, 2.0)
        """
        if std < 0:
            raise ValueError(f"normal(std): expected a non-negative value, got {std}")
        shape = _shape(shape, "normal")
        xp, device, dtype = self._target(like, xp, device, dtype, True)
        return self._engine(xp, device).normal(shape, float(mean), float(std), xp, device,
                                               dtype)

    def bernoulli(self, shape: Sequence[int] | int, p: float = 0.5, *, like: Any = None,
                  xp: Any = None, device: Any = None) -> Any:
        """A boolean array, each element ``True`` with probability ``p``.

        Examples
        --------
        >>> import portagrad as pg
        >>> m = pg.random.Generator(0).bernoulli((10000,), 0.25)
        >>> m.dtype, round(float(m.mean()), 2)
        (dtype('bool'), 0.25)
        """
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli(p): expected a probability in [0, 1], got {p}")
        shape = _shape(shape, "bernoulli")
        xp, device, _ = self._target(like, xp, device, None, False)
        return self._engine(xp, device).bernoulli(shape, p, xp, device)

    def integers(self, low: int, high: int, shape: Sequence[int] | int = (), *,
                 like: Any = None, xp: Any = None, device: Any = None) -> Any:
        """Uniform int64 samples from ``[low, high)``.

        Examples
        --------
        >>> import portagrad as pg
        >>> k = pg.random.Generator(0).integers(0, 3, (100,))
        >>> sorted(set(k.tolist()))
        [0, 1, 2]
        """
        if int(high) <= int(low):
            raise ValueError(f"integers(high): expected high > low, got low={low}, high={high}")
        shape = _shape(shape, "integers")
        xp, device, _ = self._target(like, xp, device, None, False)
        return self._engine(xp, device).integers(shape, int(low), int(high), xp, device)

    def permutation(self, n: int, *, like: Any = None, xp: Any = None,
                    device: Any = None) -> Any:
        """A random permutation of ``0 .. n-1`` (int64).

        Examples
        --------
        >>> import portagrad as pg
        >>> sorted(pg.random.Generator(0).permutation(5).tolist())
        [0, 1, 2, 3, 4]
        """
        if int(n) < 0:
            raise ValueError(f"permutation(n): expected a non-negative int, got {n}")
        xp, device, _ = self._target(like, xp, device, None, False)
        return self._engine(xp, device).permutation(int(n), xp, device)

    def manual_seed(self, seed: int) -> Generator:
        """Restart every engine from ``seed`` and return ``self`` (PyTorch's spelling).

        Parameters
        ----------
        seed
            A non-negative integer.

        Examples
        --------
        >>> import portagrad as pg
        >>> g = pg.random.Generator().manual_seed(5)
        >>> g.seed, bool((g.uniform((2,)) == pg.random.Generator(5).uniform((2,))).all())
        (5, True)
        """
        fresh = Generator(seed)
        with self._lock:
            self.seed, self._engines = fresh.seed, fresh._engines
        return self

    def initial_seed(self) -> int:
        """The seed the engines started from."""
        return self.seed

    # -- state -----------------------------------------------------------------------------
    def get_state(self) -> dict:
        """The seed and every engine's state, as a JSON-able dict.

        Examples
        --------
        >>> import json
        >>> import portagrad as pg
        >>> g = pg.random.Generator(3)
        >>> _ = g.uniform((2,))
        >>> isinstance(json.dumps(g.get_state()), str)
        True
        """
        return {"seed": self.seed,
                "engines": {k: e.get_state() for k, e in sorted(self._engines.items())}}

    def set_state(self, state: dict) -> None:
        """Resume from a dict returned by :meth:`get_state`.

        Engines the saved generator had not used yet start from the saved seed, so every
        later draw equals the saved generator's.

        Examples
        --------
        >>> import portagrad as pg
        >>> g = pg.random.Generator(0)
        >>> s = g.get_state()
        >>> a = g.uniform((3,))
        >>> g.set_state(s)
        >>> bool((g.uniform((3,)) == a).all())
        True
        """
        if not isinstance(state, dict) or "seed" not in state or "engines" not in state:
            raise ValueError(f"Generator.set_state(state): expected a dict from get_state(), "
                             f"got {describe(state)}")
        self.seed = int(state["seed"])
        engines: dict[str, Any] = {}
        for key, s in state["engines"].items():
            device = key.split(":", 1)[1] if ":" in key else None
            if key.startswith("cupy:"):
                device = None
            eng = make_engine(self.seed, key, device)
            eng.set_state(s)
            engines[key] = eng
        self._engines = engines

    def __repr__(self) -> str:
        return f"Generator(seed={self.seed}, engines={sorted(self._engines)})"


_global_default: list[Generator] = []


def default_generator() -> Generator:
    """The generator used when none is passed (one per process; reseed with :func:`seed`).

    Examples
    --------
    >>> import portagrad as pg
    >>> isinstance(pg.random.default_generator(), pg.random.Generator)
    True
    """
    if not _global_default:
        _global_default.append(Generator())
    return _global_default[0]


def seed(n: int) -> None:
    """Reseed the default generator (all engines restart from ``n``).

    Everything that draws from the default generator restarts with it: initializers and
    dropout without a generator of their own, the shuffling of ``pg.data.DataLoader``,
    ``RandomSampler``, ``random_split``, ``SerialIterator`` (made with ``seed=None``) and
    the seeds of DataLoader worker processes. Two runs of one program after the same
    ``seed(n)`` see the same numbers.

    Parameters
    ----------
    n
        A non-negative integer.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.random.seed(0)
    >>> a = pg.random.default_generator().uniform((2,))
    >>> pg.random.seed(0)
    >>> bool((pg.random.default_generator().uniform((2,)) == a).all())
    True
    """
    default_generator().manual_seed(n)


def manual_seed(n: int) -> Generator:
    """:func:`seed`, by PyTorch's name: reseed the default generator and return it.

    Parameters
    ----------
    n
        A non-negative integer.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.manual_seed(1) is pg.random.default_generator()
    True
    """
    seed(n)
    return default_generator()


def initial_seed() -> int:
    """The seed of the default generator.

    Examples
    --------
    >>> import portagrad as pg
    >>> _ = pg.manual_seed(3)
    >>> pg.random.initial_seed()
    3
    """
    return default_generator().seed


def get_state() -> dict:
    """State of the default generator (see :meth:`Generator.get_state`)."""
    return default_generator().get_state()


def set_state(state: dict) -> None:
    """Restore the default generator (see :meth:`Generator.set_state`)."""
    default_generator().set_state(state)
