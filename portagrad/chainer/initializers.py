"""Chainer's initializers (``chainer.initializers``), all 17 public names.

An initializer is Chainer's protocol: ``init(array)`` fills a NumPy array in place.
Random ones draw from NumPy's global generator exactly as Chainer 7.8 does on the CPU
(``numpy.random.normal``/``uniform`` with the same arguments, in the same order), so
``numpy.random.seed(s)`` gives the same initial weights as Chainer with that seed.
:func:`generate_array` fills a host array and sends it to the device asked for, so links
on CuPy, torch or array-api-strict start from the same values as on NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .config import get_dtype

__all__ = ["Initializer", "Constant", "Zero", "One", "NaN", "Identity", "Normal",
           "LeCunNormal", "GlorotNormal", "HeNormal", "Uniform", "LeCunUniform",
           "GlorotUniform", "HeUniform", "Orthogonal", "UpsamplingDeconvFilter",
           "DownsamplingConvFilter", "generate_array", "get_fans"]


class Initializer:
    """Base class: ``__call__(array)`` fills ``array`` in place; ``dtype`` (if set) is the
    dtype the arrays it fills must have.

    Parameters
    ----------
    dtype
        The dtype of the arrays this initializer makes (None: ``chainer.config.dtype``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> class Twos(initializers.Initializer):
    ...     def __call__(self, array):
    ...         array[...] = 2
    >>> initializers.generate_array(Twos(), (2,), np)
    array([2., 2.], dtype=float32)
    """

    def __init__(self, dtype: Any = None) -> None:
        self.dtype = dtype

    def __call__(self, array: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.__call__ is not defined")

    def _check(self, array: Any) -> None:
        if self.dtype is not None and np.dtype(array.dtype) != np.dtype(self.dtype):
            raise TypeError(f"{type(self).__name__}(array): expected dtype "
                            f"{np.dtype(self.dtype)}, got {array.dtype}")


def get_fans(shape: tuple) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of ``shape`` (out, in, *kernel).

    Examples
    --------
    >>> from portagrad.chainer.initializers import get_fans
    >>> get_fans((4, 3, 2, 2))
    (12, 16)
    """
    if not isinstance(shape, tuple):
        raise ValueError(f"get_fans(shape): expected a tuple, got {type(shape).__name__}")
    if len(shape) < 2:
        raise ValueError(f"get_fans(shape): expected at least 2 dimensions, got {shape}")
    field = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * field, shape[0] * field


class Constant(Initializer):
    """Fill with ``fill_value`` (a number or an array broadcast to the shape).

    Parameters
    ----------
    fill_value
        A number or an array.
    dtype
        As :class:`Initializer`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.Constant(3), (2,), np, dtype=np.float64)
    array([3., 3.])
    """

    def __init__(self, fill_value: Any, dtype: Any = None) -> None:
        if not (np.isscalar(fill_value) or hasattr(fill_value, "shape")):
            raise ValueError(f"Constant(fill_value): expected a number or an array, got "
                             f"{type(fill_value).__name__}")
        self.fill_value = fill_value
        super().__init__(dtype)

    def __call__(self, array: Any) -> None:
        self._check(array)
        from ..xp import to_numpy

        v = self.fill_value
        array[...] = to_numpy(v) if hasattr(v, "shape") and not isinstance(v, np.ndarray) else v


class Zero(Constant):
    """Fill with zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.Zero(), (2,), np)
    array([0., 0.], dtype=float32)
    """

    def __init__(self, dtype: Any = None) -> None:
        super().__init__(0.0, dtype)


class One(Constant):
    """Fill with ones.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.One(), (2,), np)
    array([1., 1.], dtype=float32)
    """

    def __init__(self, dtype: Any = None) -> None:
        super().__init__(1.0, dtype)


class NaN(Constant):
    """Fill with NaN (what an uninitialized Chainer parameter holds).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.NaN(), (1,), np)
    array([nan], dtype=float32)
    """

    def __init__(self, dtype: Any = None) -> None:
        super().__init__(np.nan, dtype)


class Identity(Initializer):
    """``scale`` times the identity matrix (square 2-d arrays only).

    Parameters
    ----------
    scale
        The diagonal value.
    dtype
        As :class:`Initializer`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.Identity(2.0), (2, 2), np)
    array([[2., 0.],
           [0., 2.]], dtype=float32)
    """

    def __init__(self, scale: float = 1.0, dtype: Any = None) -> None:
        self.scale = scale
        super().__init__(dtype)

    def __call__(self, array: Any) -> None:
        self._check(array)
        if array.ndim != 2 or array.shape[0] != array.shape[1]:
            raise ValueError(f"Identity(array): expected a square 2-d array, got shape "
                             f"{array.shape}")
        array[...] = np.identity(array.shape[0]) * self.scale


class _Drawn(Initializer):
    """An initializer that draws from ``rng`` (NumPy's global generator when None) with
    a ``scale``."""

    def __init__(self, scale: float, dtype: Any = None, *, rng: Any = None) -> None:
        self.scale = scale
        self.rng = rng
        super().__init__(dtype)

    def _rng(self) -> Any:
        return np.random if self.rng is None else self.rng


class Normal(_Drawn):
    """Draw from N(0, ``scale``²).

    Parameters
    ----------
    scale
        The standard deviation.
    dtype
        As :class:`Initializer`.
    rng
        A ``numpy.random.RandomState`` (or anything with its ``normal``); NumPy's global
        generator when None.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.Normal(0.0), (2,), np)
    array([0., 0.], dtype=float32)
    """

    def __init__(self, scale: float = 0.05, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__(scale, dtype, rng=rng)

    def __call__(self, array: Any) -> None:
        self._check(array)
        rng = self._rng()
        array[...] = rng.normal(loc=0.0, scale=self.scale, size=array.shape)


class Uniform(_Drawn):
    """Draw from U(-``scale``, ``scale``).

    Parameters
    ----------
    scale
        The bound.
    dtype
        As :class:`Initializer`.
    rng
        As :class:`Normal`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> a = initializers.generate_array(initializers.Uniform(0.1), (100,), np)
    >>> bool(abs(a).max() <= 0.1)
    True
    """

    def __init__(self, scale: float = 0.05, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__(scale, dtype, rng=rng)

    def __call__(self, array: Any) -> None:
        self._check(array)
        rng = self._rng()
        array[...] = rng.uniform(low=-self.scale, high=self.scale, size=array.shape)


class _Scaled(_Drawn):
    """A normal or uniform draw whose scale comes from the fans of the array."""

    _kind: type = Normal

    def __init__(self, scale: float = 1.0, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__(scale, dtype, rng=rng)

    def _factor(self, fan_in: int, fan_out: int) -> float:
        raise NotImplementedError

    def __call__(self, array: Any) -> None:
        self._check(array)
        fan_in, fan_out = get_fans(array.shape)
        self._kind(self.scale * self._factor(fan_in, fan_out), rng=self.rng)(array)


class LeCunNormal(_Scaled):
    """N(0, s²) with ``s = scale * sqrt(1 / fan_in)`` (Chainer's default for weights).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.LeCunNormal(), (3, 4), np).shape
    (3, 4)
    """

    def _factor(self, fan_in: int, fan_out: int) -> float:
        return float(np.sqrt(1.0 / fan_in))


class GlorotNormal(_Scaled):
    """N(0, s²) with ``s = scale * sqrt(2 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.GlorotNormal(), (3, 4), np).dtype
    dtype('float32')
    """

    def _factor(self, fan_in: int, fan_out: int) -> float:
        return float(np.sqrt(2.0 / (fan_in + fan_out)))


class HeNormal(_Scaled):
    """N(0, s²) with ``s = scale * sqrt(2 / fan)``, ``fan`` the fan in or out.

    Parameters
    ----------
    scale
        The factor.
    dtype
        As :class:`Initializer`.
    fan_option
        ``'fan_in'`` or ``'fan_out'``.
    rng
        As :class:`Normal`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.HeNormal(fan_option="fan_out"), (3, 4),
    ...                             np).shape
    (3, 4)
    """

    def __init__(self, scale: float = 1.0, dtype: Any = None, fan_option: str = "fan_in",
                 *, rng: Any = None) -> None:
        if fan_option not in ("fan_in", "fan_out"):
            raise ValueError(f"HeNormal(fan_option): expected 'fan_in' or 'fan_out', got "
                             f"{fan_option!r}")
        self.fan_option = fan_option
        super().__init__(scale, dtype, rng=rng)

    def _factor(self, fan_in: int, fan_out: int) -> float:
        return float(np.sqrt(2.0 / (fan_in if self.fan_option == "fan_in" else fan_out)))


class LeCunUniform(_Scaled):
    """U(-s, s) with ``s = scale * sqrt(3 / fan_in)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.LeCunUniform(), (3, 4), np).shape
    (3, 4)
    """

    _kind = Uniform

    def _factor(self, fan_in: int, fan_out: int) -> float:
        return float(np.sqrt(3.0 / fan_in))


class GlorotUniform(_Scaled):
    """U(-s, s) with ``s = scale * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.GlorotUniform(), (3, 4), np).shape
    (3, 4)
    """

    _kind = Uniform

    def _factor(self, fan_in: int, fan_out: int) -> float:
        return float(np.sqrt(6.0 / (fan_in + fan_out)))


class HeUniform(_Scaled):
    """U(-s, s) with ``s = scale * sqrt(6 / fan_in)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.HeUniform(), (3, 4), np).shape
    (3, 4)
    """

    _kind = Uniform

    def _factor(self, fan_in: int, fan_out: int) -> float:
        return float(np.sqrt(6.0 / fan_in))


_ORTHOGONAL_MODES = {"auto": (False, False), "projection": (False, True),
                     "embedding": (True, False), "basis": (True, True)}


class Orthogonal(_Drawn):
    """A random orthogonal matrix (rows or columns orthonormal) times ``scale``, from the QR
    decomposition of a normal draw, with Chainer's sign convention.

    Parameters
    ----------
    scale
        The factor.
    dtype
        As :class:`Initializer`.
    mode
        ``'auto'``, ``'projection'``, ``'embedding'`` or ``'basis'``: which of the input
        and output dimensions must be the larger.
    rng
        As :class:`Normal`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> q = initializers.generate_array(initializers.Orthogonal(1.0), (3, 3), np,
    ...                                 dtype=np.float64)
    >>> np.allclose(q @ q.T, np.eye(3))
    True
    """

    def __init__(self, scale: float = 1.1, dtype: Any = None, mode: str = "auto", *,
                 rng: Any = None) -> None:
        if mode not in _ORTHOGONAL_MODES:
            raise ValueError(f"Orthogonal(mode): expected one of "
                             f"{', '.join(map(repr, _ORTHOGONAL_MODES))}, got {mode!r}")
        self.mode = mode
        super().__init__(scale, dtype, rng=rng)

    def __call__(self, array: Any) -> None:
        self._check(array)
        rng = self._rng()
        if array.ndim == 0:
            array[...] = self.scale * (2 * int(rng.randint(2)) - 1)
            return
        if array.size == 0:
            raise ValueError("Orthogonal(array): expected a non-empty array, got size 0")
        out_dim = array.shape[0]
        in_dim = int(np.prod(array.shape[1:]))
        checks = _ORTHOGONAL_MODES[self.mode]
        if (in_dim > out_dim and checks[0]) or (in_dim < out_dim and checks[1]):
            raise ValueError(f"Orthogonal(array): cannot make an orthogonal {self.mode} of "
                             f"shape {array.shape} ({in_dim} inputs, {out_dim} outputs)")
        a = np.asarray(rng.normal(size=(out_dim, in_dim)))
        flip = in_dim > out_dim
        if flip:
            a = a.T
        q, r = np.linalg.qr(a)
        q = q * np.copysign(self.scale, np.diag(r))
        if flip:
            q = q.T
        array[...] = q.reshape(array.shape)


def _linear_filter(size: int, ndim: int, upsampling: bool) -> np.ndarray:
    factor = (size + 1) // 2
    center = factor - 1.0 if size % 2 == 1 else factor - 0.5
    filt: Any = 1.0
    for g in np.ogrid[(slice(size),) * ndim]:
        filt = filt * (1.0 - abs(g - center) / factor)
    if not upsampling:
        filt = filt / filt.sum()
    return filt


class _SamplingFilter(Initializer):
    _upsampling = True

    def __init__(self, interpolation: str = "linear", dtype: Any = None) -> None:
        if interpolation != "linear":
            raise ValueError(f"{type(self).__name__}(interpolation): expected 'linear', got "
                             f"{interpolation!r}")
        self.interpolation = interpolation
        super().__init__(dtype)

    def __call__(self, array: Any) -> None:
        self._check(array)
        in_c, out_c = array.shape[:2]
        if not (in_c == out_c or out_c == 1):
            raise ValueError(f"{type(self).__name__}(array): expected equal channel counts "
                             f"or one output channel, got shape {array.shape}")
        ks = set(array.shape[2:])
        if len(ks) != 1:
            raise ValueError(f"{type(self).__name__}(array): expected the same kernel size "
                             f"on every axis, got shape {array.shape}")
        filt = _linear_filter(array.shape[2], array.ndim - 2, self._upsampling)
        array[...] = 0.0
        idx = np.arange(in_c)
        array[(idx, np.zeros_like(idx) if out_c == 1 else idx)] = filt


class UpsamplingDeconvFilter(_SamplingFilter):
    """Bilinear upsampling kernels for a deconvolution (one per channel).

    Parameters
    ----------
    interpolation
        ``'linear'`` (the only one Chainer has).
    dtype
        As :class:`Initializer`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.UpsamplingDeconvFilter(), (1, 1, 2, 2),
    ...                             np)[0, 0]
    array([[0.25, 0.25],
           [0.25, 0.25]], dtype=float32)
    """


class DownsamplingConvFilter(_SamplingFilter):
    """Linear downsampling kernels (each summing to one) for a convolution.

    Parameters
    ----------
    interpolation
        ``'linear'``.
    dtype
        As :class:`Initializer`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> float(initializers.generate_array(initializers.DownsamplingConvFilter(),
    ...                                   (1, 1, 3, 3), np).sum())
    1.0
    """

    _upsampling = False


def generate_array(initializer: Any, shape: Any, xp: Any, dtype: Any = None,
                   device: Any = None) -> Any:
    """A new array of ``shape`` filled by ``initializer``, of library ``xp``.

    Parameters
    ----------
    initializer
        A callable that fills a NumPy array in place.
    shape
        The shape.
    xp
        The array module (``numpy``, ``cupy`` or an Array API namespace).
    dtype
        The dtype; defaults to the initializer's, else ``chainer.config.dtype``.
    device
        A Chainer device specifier; its library must be ``xp``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import initializers
    >>> initializers.generate_array(initializers.One(), (2,), np, dtype=np.float16)
    array([1., 1.], dtype=float16)
    """
    own = getattr(initializer, "dtype", None)
    if dtype is not None and own is not None and np.dtype(dtype) != np.dtype(own):
        raise ValueError(f"generate_array(dtype): expected the initializer's dtype "
                         f"{np.dtype(own)}, got {np.dtype(dtype)}")
    dtype = get_dtype(dtype if dtype is not None else own)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    host = np.empty(shape, dtype=dtype)
    initializer(host)
    from .device import _namespace_device, get_device

    if device is not None:
        d = get_device(device)
    elif xp is np:
        return host
    else:
        d = _namespace_device(xp, None)
    return d.send(host)


def _get_initializer(initializer: Any, default: Any = None) -> Any:
    """Chainer's rule: None gives ``default`` (LeCunNormal), a number or an array a
    :class:`Constant`, a callable itself."""
    if initializer is None:
        return LeCunNormal() if default is None else default
    if np.isscalar(initializer) or hasattr(initializer, "shape"):
        return Constant(initializer)
    if not callable(initializer):
        raise TypeError(f"initializer: expected an initializer, a number or an array, got "
                        f"{type(initializer).__name__}")
    return initializer
