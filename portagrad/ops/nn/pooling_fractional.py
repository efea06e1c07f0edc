"""Fractional max pooling (Graham, 2014) with PyTorch's pseudo-random windows: one n-d
implementation (:func:`fractional_max_pool`) and PyTorch's 2-d and 3-d forms, thin
adapters of it.

Each ``(N, C)`` plane draws one number ``u`` in ``[0, 1)`` per spatial axis. On an axis of
length ``L`` pooled by windows of ``k`` into ``out`` positions, window ``i < out - 1``
starts at ``floor((i + u) a) - floor(u a)`` with ``a = (L - k) / (out - 1)`` (computed in
the input's dtype, as PyTorch does), and the last one at ``L - k``. Given the same numbers
(``_random_samples``) the result is PyTorch's. Each output is the first maximum (row-major)
of its window, gathered from ``x``, so the gradient goes to that element and every order
follows from the gather's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._errors import DTypeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._adapters import adapts
from .._core import check_elements, float_arg, same_library, var
from ..std.indexing import take_along_axis
from ..std.shape import reshape
from ._window import ints, pool_input
from .config import generator_or_default

__all__ = ["fractional_max_pool", "fractional_max_pool2d", "fractional_max_pool3d"]


def _output_sizes(op: str, spatial: tuple, k: tuple, output_size: Any,
                  output_ratio: Any) -> tuple[int, ...]:
    nd = len(spatial)
    if output_size is not None:
        out = ints(output_size, nd, op, "output_size", 1)
    elif output_ratio is not None:
        ratios = (output_ratio if isinstance(output_ratio, (tuple, list))
                  else (output_ratio,) * nd)
        if len(ratios) != nd:
            raise PortagradValueError(f"{op}(output_ratio): expected a number or {nd} of "
                                      f"them, got {output_ratio!r}")
        rs = tuple(float_arg(op, "output_ratio", r) for r in ratios)
        if not all(0.0 < r < 1.0 for r in rs):
            raise PortagradValueError(f"{op}(output_ratio): expected values in (0, 1), got "
                                      f"{output_ratio!r}")
        out = tuple(int(n * r) for n, r in zip(spatial, rs))
    else:
        raise PortagradValueError(f"{op}(output_size): expected an output_size or an "
                                  f"output_ratio, got neither")
    for n, kk, o in zip(spatial, k, out):
        if o < 1 or o + kk - 1 > n:
            raise ShapeError(f"{op}(output_size): expected each output size at least 1 and "
                             f"at most the input size minus the kernel plus 1, got output "
                             f"{out} for input {spatial} and kernel {k}")
    return out


def _samples(op: str, xv: Variable, nd: int, samples: Any, generator: Any) -> Any:
    xp, a = xv.xp, xv.array
    shape = (a.shape[0], a.shape[1], nd)
    if samples is None:
        return generator_or_default(generator).uniform(shape, like=a)
    sv = var(samples, op, "_random_samples")
    same_library(op, [("x", xv), ("_random_samples", sv)])
    s = sv.array
    if tuple(s.shape) != shape:
        raise ShapeError(f"{op}(_random_samples): expected shape {shape} (N, C, one per "
                         f"spatial axis), got {tuple(s.shape)}")
    if not xp.isdtype(s.dtype, "real floating"):
        raise DTypeError(f"{op}(_random_samples): expected a real floating array, got dtype "
                         f"{s.dtype}")
    s = xp.astype(s, a.dtype)
    if s.shape[0] * s.shape[1] and not bool(xp.all((s >= 0) & (s < 1))):
        raise PortagradValueError(f"{op}(_random_samples): expected values in [0, 1), got "
                                  f"values from {float(xp.min(s))} to {float(xp.max(s))}")
    return s


def _starts(xp: Any, u: Any, n: int, k: int, o: int, idt: Any) -> Any:
    """Window starts ``(N, C, o)`` on an axis of length ``n`` for samples ``u (N, C)``."""
    last = xp.full(tuple(u.shape) + (1,), n - k, dtype=idt, device=u.device)
    if o == 1:
        return last
    dt = u.dtype
    alpha = xp.asarray(n - k, dtype=dt, device=u.device) / xp.asarray(o - 1, dtype=dt,
                                                                       device=u.device)
    i = xp.arange(o - 1, dtype=dt, device=u.device)
    u = u[..., None]
    seq = (xp.astype(xp.floor((i + u) * alpha), idt)
           - xp.astype(xp.floor(u * alpha), idt))
    return xp.concat([seq, last], axis=-1)


def _pool(op: str, x: Any, kernel_size: Any, output_size: Any, output_ratio: Any,
          return_indices: bool, samples: Any, generator: Any, nd: int | None,
          axis_order: Sequence[int] | None = None) -> Any:
    xv, nd = pool_input(x, op, nd)
    xp, a = xv.xp, xv.array
    if not xp.isdtype(a.dtype, "real floating"):
        raise DTypeError(f"{op}(x): expected a real floating array, got dtype {a.dtype}")
    spatial = tuple(a.shape[2:])
    k = ints(kernel_size, nd, op, "kernel_size", 1)
    out = _output_sizes(op, spatial, k, output_size, output_ratio)
    n, c = a.shape[0], a.shape[1]
    check_elements(op, "output_size", n * c * math.prod(out) * math.prod(k))
    u = _samples(op, xv, nd, samples, generator)
    order = tuple(range(nd)) if axis_order is None else tuple(axis_order)
    idt = index_dtype(xp)
    # The flat index in its plane of every element of every window: (N, C, *out, *k).
    flat = None
    for ax in range(nd):
        starts = _starts(xp, u[:, :, order[ax]], spatial[ax], k[ax], out[ax], idt)
        rows = starts[..., None] + xp.arange(k[ax], dtype=idt, device=a.device)
        shape = ([n, c] + [out[i] if i == ax else 1 for i in range(nd)]
                 + [k[i] if i == ax else 1 for i in range(nd)])
        term = xp.reshape(rows, tuple(shape)) * math.prod(spatial[ax + 1:])
        flat = term if flat is None else flat + term
    plane = math.prod(spatial)
    windows = xp.reshape(xp.broadcast_to(flat, (n, c) + out + k),
                         (n, c, math.prod(out), math.prod(k)))
    raw = xp.take_along_axis(xp.reshape(a, (n, c, 1, plane)),
                             xp.reshape(windows, (n, c, -1))[:, :, None, :], axis=-1)
    raw = xp.reshape(raw, tuple(windows.shape))
    pick = xp.argmax(raw, axis=-1, keepdims=True)
    winners = xp.reshape(xp.take_along_axis(windows, pick, axis=-1), (n, c, -1))
    y = reshape(take_along_axis(reshape(xv, (n, c, plane)), winners, axis=-1), (n, c) + out)
    if not return_indices:
        return y
    return y, xp.reshape(winners, (n, c) + out)


def fractional_max_pool(x: Any, kernel_size: int | Sequence[int],
                        output_size: int | Sequence[int] | None = None,
                        output_ratio: float | Sequence[float] | None = None,
                        return_indices: bool = False, samples: Any = None, *,
                        generator: Any = None) -> Any:
    """Fractional max pooling of ``x (N, C, *spatial)``: windows of ``kernel_size`` at
    pseudo-random starts, to ``output_size`` positions per axis.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    kernel_size
        An int or one per spatial axis.
    output_size
        An int or one per spatial axis; each at most ``size - kernel + 1``.
    output_ratio
        Instead of ``output_size``: the fraction of each input size to keep, in
        ``(0, 1)`` (the output size is ``int(size * ratio)``).
    return_indices
        Also return, as an integer array ``(N, C, *out)``, the flat index of each maximum
        in its ``(N, C)`` plane.
    samples
        ``(N, C, nd)`` numbers in ``[0, 1)``, one per plane and spatial axis (in the order
        of the axes), that place the windows; drawn from ``generator`` when ``None``.
    generator
        A :class:`portagrad.random.Generator` (default: portagrad's).

    Window ``i < out - 1`` of an axis of length ``L`` starts at ``floor((i + u) a) -
    floor(u a)`` with ``a = (L - k) / (out - 1)`` in ``x``'s dtype; the last starts at
    ``L - k``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(10.0).reshape(1, 1, 10)
    >>> y, idx = pg.ops.fractional_max_pool(x, 2, 4, samples=np.full((1, 1, 1), 0.5),
    ...                                     return_indices=True)
    >>> y.array, idx
    (array([[[1., 4., 6., 9.]]]), array([[[1, 4, 6, 9]]]))
    """
    return _pool("fractional_max_pool", x, kernel_size, output_size, output_ratio,
                 return_indices, samples, generator, None)


def _fixed(nd: int, name: str, order: tuple[int, ...]) -> Any:
    @adapts(fractional_max_pool)
    def f(input: Any, kernel_size: int | Sequence[int],  # noqa: A002 - torch's name
          output_size: int | Sequence[int] | None = None,
          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
          _random_samples: Any = None, *, generator: Any = None) -> Any:
        xv = input
        shape = tuple(getattr(getattr(xv, "array", xv), "shape", ()))
        unbatched = len(shape) == nd + 1
        if unbatched:
            from ..std.shape import expand_dims

            xv = expand_dims(xv, axis=0)
        res = _pool(name, xv, kernel_size, output_size, output_ratio, return_indices,
                    _random_samples, generator, nd, order)
        if not unbatched:
            return res
        if return_indices:
            return reshape(res[0], tuple(res[0].shape[1:])), res[1][0]
        return reshape(res, tuple(res.shape[1:]))

    f.__name__ = f.__qualname__ = name
    which = ("(width, height), as PyTorch" if nd == 2 else "(depth, height, width)")
    f.__doc__ = f"""{nd}-d fractional max pooling with PyTorch's arguments:
    :func:`fractional_max_pool` of ``(N, C, *{nd} axes)`` or an unbatched ``(C, ...)``.

    Parameters
    ----------
    input, kernel_size, output_size, output_ratio, return_indices
        As :func:`fractional_max_pool`.
    _random_samples
        ``(N, C, {nd})`` numbers in ``[0, 1)`` placing the windows, per plane in the order
        {which}; given the same numbers, the result is PyTorch's.
    generator
        Draws the numbers when ``_random_samples`` is ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (6,) * {nd}), 2, output_size=3).shape
    (2, 3{", 3" * nd})
    """
    return f


fractional_max_pool2d = _fixed(2, "fractional_max_pool2d", (1, 0))
fractional_max_pool3d = _fixed(3, "fractional_max_pool3d", (0, 1, 2))
