"""``torch.nn.functional``'s remaining spellings: the ``*_with_indices`` pools,
``gumbel_softmax``, ``conv_tbc`` and ``channel_shuffle``, each a thin adapter over its
canonical op."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._adapters import adapts
from ..ops._core import int_arg, var
from ..ops.std._axes import _flag
from ..tape._variable import Variable
from ._functional_adaptive import _adaptive_max
from ._functional_pool import _max_pool

__all__ = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "gumbel_softmax", "conv_tbc",
           "channel_shuffle", "native_channel_shuffle"]


@adapts(ops.max_pool1d)
def max_pool1d_with_indices(input: Any, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """:func:`max_pool1d` returning ``(output, indices)``.

    Parameters
    ----------
    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`portagrad.nn.functional.max_pool1d` (``return_indices`` defaults to
        ``True``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool1d_with_indices(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    >>> y.array, i.array
    (array([[[3., 2.]]]), array([[[1, 2]]]))
    """
    return _max_pool(ops.max_pool1d, 1, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@adapts(ops.max_pool2d)
def max_pool2d_with_indices(input: Any, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """:func:`max_pool2d` returning ``(output, indices)``.

    Parameters
    ----------
    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`portagrad.nn.functional.max_pool2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool2d_with_indices(np.arange(16.0).reshape(1, 1, 4, 4), 2)
    >>> i.array.ravel()
    array([ 5,  7, 13, 15])
    """
    return _max_pool(ops.max_pool2d, 2, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@adapts(ops.max_pool3d)
def max_pool3d_with_indices(input: Any, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """:func:`max_pool3d` returning ``(output, indices)``.

    Parameters
    ----------
    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`portagrad.nn.functional.max_pool3d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool3d_with_indices(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    >>> float(y.array.ravel()[0]), int(i.array.ravel()[0])
    (7.0, 7)
    """
    return _max_pool(ops.max_pool3d, 3, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@adapts(ops.adaptive_max_pool)
def adaptive_max_pool1d_with_indices(input: Any, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """:func:`adaptive_max_pool1d` returning ``(output, indices)`` (the canonical
    ``adaptive_max_pool``).

    Parameters
    ----------
    input, output_size, return_indices
        As :func:`portagrad.nn.functional.adaptive_max_pool1d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> F.adaptive_max_pool1d_with_indices(x, 2)[1].array
    array([[[1, 3]]])
    """
    return _adaptive_max(1, input, output_size, return_indices)


@adapts(ops.adaptive_max_pool)
def adaptive_max_pool2d_with_indices(input: Any, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """:func:`adaptive_max_pool2d` returning ``(output, indices)`` (the canonical
    ``adaptive_max_pool``).

    Parameters
    ----------
    input, output_size, return_indices
        As :func:`portagrad.nn.functional.adaptive_max_pool2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.arange(4.0).reshape(1, 1, 2, 2)
    >>> F.adaptive_max_pool2d_with_indices(x, 1)[1].array
    array([[[[3]]]])
    """
    return _adaptive_max(2, input, output_size, return_indices)


@adapts(ops.adaptive_max_pool)
def adaptive_max_pool3d_with_indices(input: Any, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """:func:`adaptive_max_pool3d` returning ``(output, indices)`` (the canonical
    ``adaptive_max_pool``).

    Parameters
    ----------
    input, output_size, return_indices
        As :func:`portagrad.nn.functional.adaptive_max_pool3d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.arange(2.0).reshape(1, 1, 1, 1, 2)
    >>> F.adaptive_max_pool3d_with_indices(x, 1)[1].array
    array([[[[[1]]]]])
    """
    return _adaptive_max(3, input, output_size, return_indices)


@adapts(ops.gumbel_softmax)
def gumbel_softmax(logits: Any, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Variable:
    """Samples of the Gumbel-softmax distribution, :func:`portagrad.ops.gumbel_softmax`
    with torch's arguments; ``hard`` gives one-hot samples whose gradient is the soft
    sample's (straight-through).

    Parameters
    ----------
    logits
        Unnormalized log-probabilities.
    tau
        Temperature.
    hard
        One-hot output with the soft sample's gradient.
    eps
        Accepted (torch's deprecated argument).
    dim
        The class axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> import portagrad.nn.functional as F
    >>> pg.random.seed(0)
    >>> y = F.gumbel_softmax(np.zeros((2, 3)), hard=True)
    >>> y.array.sum(axis=-1)
    array([1., 1.])
    """
    x = var(logits, "gumbel_softmax", "logits")
    y = ops.gumbel_softmax(x, tau=tau, axis=dim)
    if not _flag(hard, "gumbel_softmax", "hard"):
        return y
    xp = x.xp
    a = y.array
    idx = xp.argmax(a, axis=dim, keepdims=True)
    pos = xp.arange(a.shape[dim], device=a.device)
    shape = [1] * a.ndim
    shape[dim] = a.shape[dim]
    one_hot = xp.astype(xp.reshape(pos, tuple(shape)) == idx, a.dtype)
    return y - y.detach() + one_hot


@adapts(ops.conv1d)
def conv_tbc(input: Any, weight: Any, bias: Any, pad: int = 0) -> Variable:
    """1-d convolution in time-batch-channel layout (``torch.nn.functional.conv_tbc``):
    ``input`` ``(T, N, C_in)``, ``weight`` ``(K, C_in, C_out)``, ``bias`` ``(C_out,)``.

    Parameters
    ----------
    input, weight, bias
        In that layout.
    pad
        Zero padding on both ends of the time axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_tbc(np.ones((5, 2, 3)), np.ones((3, 3, 4)), np.zeros(4), 1).shape
    (5, 2, 4)
    """
    x = ops.permute_dims(var(input, "conv_tbc", "input"), (1, 2, 0))
    w = ops.permute_dims(var(weight, "conv_tbc", "weight"), (2, 1, 0))
    y = ops.conv1d(x, w, bias, padding=int_arg("conv_tbc", "pad", pad))
    return ops.permute_dims(y, (2, 0, 1))


@adapts(ops.permute_dims)
def channel_shuffle(input: Any, groups: int) -> Variable:
    """Interleave ``groups`` groups of the channels (axis 1) of ``(N, C, *)``: the
    ``(groups, C // groups)`` channel grid transposed (ShuffleNet's shuffle).

    Parameters
    ----------
    input
        ``(N, C, *)`` with ``C`` divisible by ``groups``.
    groups
        Number of groups.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.channel_shuffle(np.arange(4.0).reshape(1, 4, 1), 2).array.ravel()
    array([0., 2., 1., 3.])
    """
    from .._errors import ShapeError

    v = var(input, "channel_shuffle")
    g = int_arg("channel_shuffle", "groups", groups)
    if v.ndim < 3 or g <= 0 or int(v.shape[1]) % g:
        raise ShapeError(f"channel_shuffle(input): expected (N, C, *) with C divisible by "
                         f"groups={g}, got shape {tuple(v.shape)}")
    n, c, rest = int(v.shape[0]), int(v.shape[1]), tuple(int(d) for d in v.shape[2:])
    y = ops.reshape(v, (n, g, c // g) + rest)
    y = ops.permute_dims(y, (0, 2, 1) + tuple(range(3, y.ndim)))
    return ops.reshape(y, (n, c) + rest)


native_channel_shuffle = channel_shuffle
