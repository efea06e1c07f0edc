"""Transposed convolution: one n-d implementation (:func:`conv_transpose`, the gradient of
:func:`~portagrad.ops.conv` in its input), its fixed-dimension forms and Chainer's
deconvolution functions, each a thin adapter of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from ..array.indexing import pad as _pad
from ._window import ints
from .conv import _SHAPES, _conv_input_grad, add_bias, conv_inputs

__all__ = ["conv_transpose", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "deconvolution_nd", "deconvolution_1d", "deconvolution_2d", "deconvolution_3d"]


def conv_transpose(x: Any, weight: Any, bias: Any = None, *,
                   stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                   output_padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                   groups: int = 1, output_size: int | Sequence[int] | None = None) -> Variable:
    """N-dimensional transposed convolution (the gradient of :func:`conv` in its input).

    Parameters
    ----------
    x
        Input ``(N, C_in, *spatial)``.
    weight
        ``(C_in, C_out // groups, *kernel)`` (PyTorch's layout for transposed convolution).
    bias
        Optional ``(C_out,)``.
    stride, padding, dilation, groups
        Those of the convolution being transposed.
    output_padding
        Extra size added at the end of each spatial dimension, below the stride or the
        dilation (PyTorch's rule): it picks among the sizes a strided convolution maps to
        the same size, or reads further into the uncropped result.
    output_size
        The spatial output size instead of ``output_padding``.

    The output size is ``(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 +
    output_padding``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.conv_transpose(np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2)), stride=2)
    >>> y.shape, float(y.array.sum())
    ((1, 1, 4, 4), 16.0)
    """
    return _transposed("conv_transpose", None, x, weight, bias, stride, padding,
                       output_padding, dilation, groups, output_size)


def _transposed(op: str, nd: int | None, x: Any, weight: Any, bias: Any, stride: Any,
                padding: Any, output_padding: Any, dilation: Any, groups: int,
                output_size: Any, size_arg: str = "output_size") -> Variable:
    """:func:`conv_transpose`, its errors naming ``op`` (and ``size_arg`` for the output
    size); ``nd`` fixes the spatial axes."""
    xv, wv, nd = conv_inputs(op, x, weight, nd)
    ksize = tuple(wv.array.shape[2:])
    stride_t = ints(stride, nd, op, "stride", 1)
    dil = ints(dilation, nd, op, "dilation", 1)
    pads = ints(padding, nd, op, "padding", 0)
    c_in = xv.array.shape[1]
    if not isinstance(groups, int) or groups < 1 or c_in % groups:
        raise PortagradValueError(
            f"{op}(groups): expected a positive divisor of the input channels "
            f"{c_in}, got {groups!r}")
    if wv.array.shape[0] != c_in:
        raise ShapeError(f"{op}(weight): expected {c_in} filters on axis 0 (x has {c_in} "
                         f"channels), got weight of shape {tuple(wv.array.shape)}")
    spatial = tuple(xv.array.shape[2:])
    base = tuple((s - 1) * st - 2 * p + d * (k - 1) + 1
                 for s, st, p, d, k in zip(spatial, stride_t, pads, dil, ksize))
    if output_size is not None:
        size = (output_size,) * nd if isinstance(output_size, int) else tuple(
            int(v) for v in output_size)
        if len(size) != nd:
            raise PortagradValueError(f"{op}({size_arg}): expected {nd} sizes, got {output_size!r}")
        extra = tuple(s - b for s, b in zip(size, base))
    else:
        extra = ints(output_padding, nd, op, "output_padding", 0)
        size = tuple(b + e for b, e in zip(base, extra))
    limit = tuple(max(st, d) for st, d in zip(stride_t, dil))
    if any(not 0 <= e < m for e, m in zip(extra, limit)):
        top = tuple(b + m - 1 for b, m in zip(base, limit))
        raise ShapeError(f"{op}({size_arg}): expected sizes from {base} to {top} "
                         f"(output_padding below the stride or the dilation) for x of shape "
                         f"{tuple(xv.array.shape)}, got {size}")
    if any(s < 1 for s in size):
        raise ShapeError(f"{op}(x): expected a positive output size, got {size}")
    p = {"stride": stride_t, "dilation": dil, "groups": groups}
    if all(e < st for e, st in zip(extra, stride_t)):
        y = _conv_input_grad(xv, wv, pad=tuple((q, q) for q in pads), in_size=size, **p)
    else:
        y = _wide(xv, wv, p, base, pads, extra)
    return add_bias(y, bias, op, wv.array.shape[1] * groups)


def _wide(x: Variable, w: Variable, p: dict, base: tuple, pads: tuple,
          extra: tuple) -> Variable:
    """An ``output_padding`` of at least the stride (allowed below the dilation): the
    uncropped transposed convolution, cut by ``padding`` at the low end and read
    ``output_padding`` further at the high end, zeros past its last position."""
    nd = len(pads)
    full = tuple(b + 2 * q for b, q in zip(base, pads))
    y = _conv_input_grad(x, w, pad=((0, 0),) * nd, in_size=full, **p)
    beyond = [max(0, e - q) for e, q in zip(extra, pads)]
    if any(beyond):
        y = _pad(y, [(0, 0), (0, 0)] + [(0, m) for m in beyond], "constant")
    return y[(slice(None), slice(None)) + tuple(
        slice(q, q + b + e) for q, b, e in zip(pads, base, extra))]


def _fixed(nd: int, name: str) -> Any:
    @adapts(conv_transpose)
    def f(x: Any, weight: Any, bias: Any = None, *, stride: int | Sequence[int] = 1,
          padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0,
          dilation: int | Sequence[int] = 1, groups: int = 1,
          output_size: Sequence[int] | None = None) -> Variable:
        return _transposed(name, nd, x, weight, bias, stride, padding, output_padding,
                           dilation, groups, output_size)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d transposed convolution: :func:`conv_transpose` of
    ``x`` of shape ``{_SHAPES[nd]}``.

    Parameters
    ----------
    x, weight, bias, stride, padding, output_padding, dilation, groups, output_size
        As :func:`conv_transpose`, with {nd} spatial dimension(s).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.ones((2, 3) + (4,) * {nd})
    >>> pg.ops.{name}(x, np.ones((3, 2) + (3,) * {nd}), stride=2, padding=1).shape
    (2, 2{", 7" * nd})
    """
    return f


conv_transpose1d = _fixed(1, "conv_transpose1d")
conv_transpose2d = _fixed(2, "conv_transpose2d")
conv_transpose3d = _fixed(3, "conv_transpose3d")


# -- Chainer's names and arguments ----------------------------------------------------------
@adapts(conv_transpose)
def deconvolution_nd(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                     pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
                     dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
    """Chainer's n-d transposed convolution: :func:`conv_transpose` with Chainer's names.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    W, b
        Filters ``(C, O // groups, *k)`` and optional bias ``(O,)``.
    stride, pad, dilate, groups
        As ``stride``, ``padding``, ``dilation`` and ``groups`` of :func:`conv_transpose`.
    outsize
        The output's spatial size, among those the stride allows (default
        ``stride (size - 1) + dk - 2 pad``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.deconvolution_nd(np.ones((1, 1, 2)), np.ones((1, 1, 2)), stride=2).array
    array([[[1., 1., 1., 1.]]])
    """
    return _transposed("deconvolution_nd", None, x, W, b, stride, pad, 0, dilate, groups,
                       outsize, "outsize")


def _chainer_fixed(nd: int, name: str) -> Any:
    @adapts(conv_transpose)
    def f(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
          pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
          dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
        return _transposed(name, nd, x, W, b, stride, pad, 0, dilate, groups, outsize,
                           "outsize")

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Chainer's {nd}-d transposed convolution: :func:`deconvolution_nd` of
    ``{_SHAPES[nd]}``.

    Parameters
    ----------
    x, W, b, stride, pad, outsize, dilate, groups
        As :func:`deconvolution_nd`, with {nd} spatial dimension(s).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (2,) * {nd}), np.ones((3, 5) + (3,) * {nd})).shape
    (2, 5{", 4" * nd})
    """
    return f


deconvolution_1d = _chainer_fixed(1, "deconvolution_1d")
deconvolution_2d = _chainer_fixed(2, "deconvolution_2d")
deconvolution_3d = _chainer_fixed(3, "deconvolution_3d")
