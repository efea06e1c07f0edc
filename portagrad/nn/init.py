"""Initializers: callables ``init(shape, *, xp, device, dtype) -> array``.

Each draws from :mod:`portagrad.random` (the default generator unless ``rng=`` is given),
in the library and on the device it is asked for, so a lazily created parameter is drawn
where its first input lives. Fans follow the usual convention for weights of shape
``(out, in, *kernel)``: ``fan_in = in * prod(kernel)``, ``fan_out = out * prod(kernel)``.

Examples
--------
>>> import array_api_compat.numpy as xp
>>> from portagrad.nn import init
>>> w = init.HeNormal()((64, 32), xp=xp, device="cpu", dtype=xp.float32)
>>> w.shape, w.dtype
((64, 32), dtype('float32'))
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["Initializer", "Constant", "Zeros", "Ones", "Normal", "Uniform", "LeCunNormal",
           "LeCunUniform", "GlorotNormal", "GlorotUniform", "XavierNormal", "XavierUniform",
           "HeNormal", "HeUniform", "KaimingNormal", "KaimingUniform", "Orthogonal",
           "fans"]


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *kernel)``.

    Examples
    --------
    >>> from portagrad.nn.init import fans
    >>> fans((16, 3, 5, 5))
    (75, 400)
    """
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """Base class: subclasses implement ``__call__(shape, *, xp, device, dtype)``."""

    def __init__(self, rng: Any = None) -> None:
        self.rng = rng

    def _gen(self) -> Any:
        if self.rng is not None:
            return self.rng
        from .. import random

        return random.default_generator()

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "rng")
        return f"{type(self).__name__}({fields})"


class Constant(Initializer):
    """Every element equal to ``value``.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.nn.init import Constant
    >>> Constant(2.0)((2,), xp=xp, dtype=xp.float64)
    array([2., 2.])
    """

    def __init__(self, value: float = 0.0) -> None:
        super().__init__()
        self.value = float(value)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        return xp.full(shape, self.value, dtype=dtype, device=device)


class Zeros(Constant):
    """All zeros (biases)."""

    def __init__(self) -> None:
        super().__init__(0.0)


class Ones(Constant):
    """All ones (normalization scales)."""

    def __init__(self) -> None:
        super().__init__(1.0)


class Normal(Initializer):
    """Normal samples with mean ``mean`` and standard deviation ``std``."""

    def __init__(self, std: float = 0.05, mean: float = 0.0, rng: Any = None) -> None:
        super().__init__(rng)
        self.std = float(std)
        self.mean = float(mean)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        return self._gen().normal(shape, self.mean, self.std, xp=xp, device=device,
                                  dtype=dtype)


class Uniform(Initializer):
    """Uniform samples on ``[-scale, scale)``."""

    def __init__(self, scale: float = 0.05, rng: Any = None) -> None:
        super().__init__(rng)
        self.scale = float(scale)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        return self._gen().uniform(shape, -self.scale, self.scale, xp=xp, device=device,
                                   dtype=dtype)


class _Scaled(Initializer):
    """Variance ``gain**2 / fan`` with ``fan`` from ``mode``; normal or uniform."""

    mode = "fan_in"
    distribution = "normal"
    base = 1.0

    def __init__(self, gain: float = 1.0, rng: Any = None) -> None:
        super().__init__(rng)
        self.gain = float(gain)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        fan_in, fan_out = fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[
            self.mode]
        std = self.gain * math.sqrt(self.base / max(fan, 1))
        gen = self._gen()
        if self.distribution == "normal":
            return gen.normal(shape, 0.0, std, xp=xp, device=device, dtype=dtype)
        bound = std * math.sqrt(3.0)
        return gen.uniform(shape, -bound, bound, xp=xp, device=device, dtype=dtype)


class LeCunNormal(_Scaled):
    """Normal with variance ``gain**2 / fan_in``."""


class LeCunUniform(_Scaled):
    """Uniform with variance ``gain**2 / fan_in``."""

    distribution = "uniform"


class GlorotNormal(_Scaled):
    """Glorot (Xavier) normal: variance ``gain**2 * 2 / (fan_in + fan_out)``."""

    mode = "fan_avg"


class GlorotUniform(_Scaled):
    """Glorot (Xavier) uniform: bound ``gain * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.nn.init import GlorotUniform
    >>> w = GlorotUniform()((300, 200), xp=xp, dtype=xp.float64)
    >>> bool(abs(w).max() <= (6 / 500) ** 0.5)
    True
    """

    mode = "fan_avg"
    distribution = "uniform"


class HeNormal(_Scaled):
    """He (Kaiming) normal: variance ``gain**2 * 2 / fan_in`` (for ReLU layers)."""

    base = 2.0


class HeUniform(_Scaled):
    """He (Kaiming) uniform: bound ``gain * sqrt(6 / fan_in)``."""

    base = 2.0
    distribution = "uniform"


XavierNormal = GlorotNormal
XavierUniform = GlorotUniform
KaimingNormal = HeNormal
KaimingUniform = HeUniform


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times ``gain``; extra axes are flattened into columns.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.nn.init import Orthogonal
    >>> q = Orthogonal()((3, 5), xp=xp, dtype=xp.float64)
    >>> bool(xp.all(xp.abs(q @ q.T - xp.eye(3)) < 1e-12))
    True
    """

    def __init__(self, gain: float = 1.0, rng: Any = None) -> None:
        super().__init__(rng)
        self.gain = float(gain)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        if len(shape) < 2:
            raise ValueError(f"Orthogonal(shape): expected at least 2 dimensions, got {shape}")
        rows = shape[0]
        cols = math.prod(shape[1:])
        big, small = max(rows, cols), min(rows, cols)
        a = self._gen().normal((big, small), xp=xp, device=device, dtype=dtype)
        q, r = xp.linalg.qr(a)
        # Sign correction makes the distribution uniform (Haar) over orthogonal matrices.
        d = xp.linalg.diagonal(r) if hasattr(xp.linalg, "diagonal") else xp.diagonal(r)
        one = xp.ones_like(d)
        q = q * xp.where(d < 0, -one, one)
        if rows < cols:
            q = xp.permute_dims(q, (1, 0))
        return xp.reshape(q * self.gain, shape)
