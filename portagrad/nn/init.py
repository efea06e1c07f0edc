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


# -- PyTorch's in-place initialization functions -------------------------------------------
_GAINS = {"linear": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
          "conv_transpose1d": 1.0, "conv_transpose2d": 1.0, "conv_transpose3d": 1.0,
          "sigmoid": 1.0, "tanh": 5.0 / 3.0, "relu": math.sqrt(2.0), "selu": 3.0 / 4.0}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain of ``nonlinearity`` (PyTorch's values).

    Parameters
    ----------
    nonlinearity
        ``"linear"``, ``"conv2d"``..., ``"sigmoid"``, ``"tanh"``, ``"relu"``,
        ``"leaky_relu"`` or ``"selu"``.
    param
        The negative slope of ``"leaky_relu"`` (default 0.01).

    Examples
    --------
    >>> from portagrad.nn.init import calculate_gain
    >>> round(calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    return _GAINS[nonlinearity]


def _fill(tensor: Any, init: Initializer) -> Any:
    """Replace the array of Parameter ``tensor`` by ``init``'s draw of its shape, library,
    device and dtype (in place for the Parameter: its identity is kept)."""
    a = getattr(tensor, "array", None)
    if a is None:
        raise ValueError("init: expected an initialized Parameter (run a lazy module once "
                         "first)")
    new = init(tuple(a.shape), xp=tensor.xp, device=a.device, dtype=a.dtype)
    tensor.set_array(new) if hasattr(tensor, "set_array") else setattr(tensor, "array", new)
    return tensor


class _Range(Initializer):
    def __init__(self, a: float, b: float) -> None:
        super().__init__()
        self.a, self.b = float(a), float(b)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        return self._gen().uniform(shape, self.a, self.b, xp=xp, device=device, dtype=dtype)


def _fan(tensor: Any, mode: str) -> float:
    fan_in, fan_out = fans(tuple(tensor.array.shape))
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Any, a: float = 0.0, b: float = 1.0) -> Any:
    """Fill Parameter ``tensor`` from ``U(a, b)``.

    Parameters
    ----------
    tensor
        A Parameter (or Variable).
    a, b
        The bounds.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.nn.init.uniform_(pg.nn.Parameter(np.zeros(1000)), -2.0, -1.0)
    >>> bool((w.array >= -2).all() and (w.array < -1).all())
    True
    """
    return _fill(tensor, _Range(a, b))


def normal_(tensor: Any, mean: float = 0.0, std: float = 1.0) -> Any:
    """Fill Parameter ``tensor`` from ``N(mean, std**2)``.

    Parameters
    ----------
    tensor
        A Parameter.
    mean, std
        Of the normal distribution.
    """
    return _fill(tensor, Normal(std, mean))


def constant_(tensor: Any, val: float) -> Any:
    """Fill Parameter ``tensor`` with ``val``.

    Parameters
    ----------
    tensor
        A Parameter.
    val
        The value.
    """
    return _fill(tensor, Constant(val))


def zeros_(tensor: Any) -> Any:
    """Fill Parameter ``tensor`` with zeros.

    Parameters
    ----------
    tensor
        A Parameter.
    """
    return _fill(tensor, Zeros())


def ones_(tensor: Any) -> Any:
    """Fill Parameter ``tensor`` with ones.

    Parameters
    ----------
    tensor
        A Parameter.
    """
    return _fill(tensor, Ones())


def xavier_uniform_(tensor: Any, gain: float = 1.0) -> Any:
    """Glorot-uniform fill, bound ``gain * sqrt(6 / (fan_in + fan_out))``.

    Parameters
    ----------
    tensor
        A Parameter of at least 2 dimensions.
    gain
        Scale.
    """
    return _fill(tensor, GlorotUniform(gain))


def xavier_normal_(tensor: Any, gain: float = 1.0) -> Any:
    """Glorot-normal fill, std ``gain * sqrt(2 / (fan_in + fan_out))``.

    Parameters
    ----------
    tensor
        A Parameter of at least 2 dimensions.
    gain
        Scale.
    """
    return _fill(tensor, GlorotNormal(gain))


def kaiming_uniform_(tensor: Any, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Any:
    """He-uniform fill, bound ``gain * sqrt(3 / fan)`` (PyTorch's ``kaiming_uniform_``).

    Parameters
    ----------
    tensor
        A Parameter.
    a
        Negative slope for ``"leaky_relu"``.
    mode
        ``"fan_in"`` or ``"fan_out"``.
    nonlinearity
        As :func:`calculate_gain`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.nn.init.kaiming_uniform_(pg.nn.Parameter(np.zeros((64, 100))), a=5 ** 0.5)
    >>> bool(abs(w.array).max() <= 0.1)
    True
    """
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / max(_fan(tensor, mode), 1))
    return _fill(tensor, Uniform(bound))


def kaiming_normal_(tensor: Any, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Any:
    """He-normal fill, std ``gain / sqrt(fan)`` (PyTorch's ``kaiming_normal_``).

    Parameters
    ----------
    tensor
        A Parameter.
    a, mode, nonlinearity
        As :func:`kaiming_uniform_`.
    """
    std = calculate_gain(nonlinearity, a) / math.sqrt(max(_fan(tensor, mode), 1))
    return _fill(tensor, Normal(std))


def orthogonal_(tensor: Any, gain: float = 1.0) -> Any:
    """(Semi-)orthogonal fill times ``gain``.

    Parameters
    ----------
    tensor
        A Parameter of at least 2 dimensions.
    gain
        Scale.
    """
    return _fill(tensor, Orthogonal(gain))


__all__ += ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_",
            "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
            "orthogonal_"]
