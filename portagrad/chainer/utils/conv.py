"""Chainer's ``chainer.utils.conv``: the output lengths of convolutions and
deconvolutions, one spatial axis at a time."""

from __future__ import annotations

from ...ops.nn._window import chainer_outsize

__all__ = ["get_conv_outsize", "get_deconv_outsize"]


def get_conv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False,
                     d: int = 1) -> int:
    """The output length of a convolution (or pooling) over an axis of ``size``.

    Parameters
    ----------
    size
        The input length.
    k, s, p
        The kernel size, the stride and the padding (each side).
    cover_all
        Whether the last window may pass the padded end, so every input is covered.
    d
        The dilation.

    Examples
    --------
    >>> from portagrad.chainer import utils
    >>> utils.get_conv_outsize(10, 3, 2, 1), utils.get_conv_outsize(10, 3, 2, 1, True)
    (5, 6)
    """
    return chainer_outsize(size, k, s, p, cover_all, d)


def get_deconv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False,
                       d: int = 1) -> int:
    """The output length of a deconvolution (transposed convolution) over an axis of
    ``size``: the length whose convolution with the same ``k``, ``s``, ``p``, ``d`` and
    ``cover_all`` has length ``size``.

    Parameters
    ----------
    size
        The input length.
    k, s, p
        The kernel size, the stride and the padding (each side).
    cover_all
        As for :func:`get_conv_outsize`.
    d
        The dilation.

    Examples
    --------
    >>> from portagrad.chainer import utils
    >>> utils.get_deconv_outsize(5, 3, 2, 1), utils.get_deconv_outsize(5, 3, 2, 1, d=2)
    (9, 11)
    """
    span = (k - 1) * d + 1
    if cover_all:
        return s * (size - 1) + span - s + 1 - 2 * p
    return s * (size - 1) + span - 2 * p
