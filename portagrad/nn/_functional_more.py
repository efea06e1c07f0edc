"""More of ``torch.nn.functional`` under PyTorch's names and signatures, each an adapter of
the function of :mod:`portagrad.ops` that computes it: fractional max pooling with
indices, bags of embeddings, the functional multi-head attention, the cross entropy of a
linear map, and the in-place activations (``relu_``...).

The in-place forms write into the input's array, as PyTorch, when that cannot corrupt a
recorded computation: the input is an array, or a Variable that was not computed by an op
and does not require grad (or any leaf inside ``no_grad``). A Variable on the tape is
refused with an error naming the out-of-place form: the tape records values, not
versions, so an overwrite there would give wrong gradients.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import ops
from .._errors import GradientError, PortagradTypeError, PortagradValueError, ShapeError
from ..ops._adapters import adapts
from ..ops._core import float_arg, int_arg, var, wrap
from ..tape._mode import is_grad_enabled, no_grad
from ..tape._variable import Variable
from ..xp import namespace_of
from . import _functional_activation as _act
from . import _functional_piecewise as _pw
from . import _functional_softmax as _sm
from ._functional_conv import embedding as _embedding
from ._functional_loss import cross_entropy as _cross_entropy

__all__ = ["fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
           "embedding_bag", "multi_head_attention_forward", "linear_cross_entropy",
           "relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "rrelu_",
           "threshold_"]


@adapts(ops.fractional_max_pool2d)
def fractional_max_pool2d_with_indices(input: Any, kernel_size: int | Sequence[int],  # noqa: A002
                                       output_size: int | Sequence[int] | None = None,
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple:
    """:func:`portagrad.ops.fractional_max_pool2d` returning ``(output, indices)``.

    Parameters
    ----------
    input, kernel_size, output_size, output_ratio, _random_samples
        As :func:`portagrad.ops.fractional_max_pool2d`.
    return_indices
        Ignored: the indices are always returned (PyTorch's signature).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, idx = F.fractional_max_pool2d_with_indices(np.ones((1, 1, 5, 5)), 2, 3)
    >>> y.shape, idx.shape
    ((1, 1, 3, 3), (1, 1, 3, 3))
    """
    return ops.fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                     _random_samples)


@adapts(ops.fractional_max_pool3d)
def fractional_max_pool3d_with_indices(input: Any, kernel_size: int | Sequence[int],  # noqa: A002
                                       output_size: int | Sequence[int] | None = None,
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple:
    """:func:`portagrad.ops.fractional_max_pool3d` returning ``(output, indices)``.

    Parameters
    ----------
    input, kernel_size, output_size, output_ratio, _random_samples
        As :func:`portagrad.ops.fractional_max_pool3d`.
    return_indices
        Ignored: the indices are always returned (PyTorch's signature).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, idx = F.fractional_max_pool3d_with_indices(np.ones((1, 1, 4, 4, 4)), 2, 2)
    >>> y.shape
    (1, 1, 2, 2, 2)
    """
    return ops.fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                     _random_samples)


@adapts(ops.embedding_bag)
def embedding_bag(input: Any, weight: Any, offsets: Any = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Any = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Variable:
    """Sums, means or maxima of bags of rows of ``weight``:
    :func:`portagrad.ops.embedding_bag` with PyTorch's positional order.

    Parameters
    ----------
    input, weight, offsets
        Ids (2-d, one bag per row, or 1-d with ``offsets``), the table, the bags' starts.
    max_norm, norm_type
        First rescale, in place, the looked-up rows whose norm exceeds ``max_norm``, as
        :func:`embedding`.
    scale_grad_by_freq, mode, per_sample_weights, include_last_offset, padding_idx
        As :func:`portagrad.ops.embedding_bag`.
    sparse
        Accepted; gradients are always dense.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> w = np.arange(6.0).reshape(3, 2)
    >>> F.embedding_bag(np.array([0, 2, 1]), w, np.array([0, 2])).array
    array([[2., 3.],
           [2., 3.]])
    """
    if max_norm is not None:
        # The renormalization of the looked-up rows, written into weight as embedding does.
        _embedding(input, weight, max_norm=max_norm, norm_type=norm_type)
    return ops.embedding_bag(input, weight, offsets, mode=mode,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=include_last_offset, padding_idx=padding_idx,
                             scale_grad_by_freq=scale_grad_by_freq)


@adapts(ops.multi_head_attention)
def multi_head_attention_forward(query: Any, key: Any, value: Any, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Any, in_proj_bias: Any,
                                 bias_k: Any, bias_v: Any, add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Any, out_proj_bias: Any,
                                 training: bool = True, key_padding_mask: Any = None,
                                 need_weights: bool = True, attn_mask: Any = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight: Any = None, k_proj_weight: Any = None,
                                 v_proj_weight: Any = None, static_k: Any = None,
                                 static_v: Any = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Any, Any]:
    """PyTorch's functional multi-head attention: :func:`portagrad.ops.multi_head_attention`
    (the maths of :class:`portagrad.nn.MultiheadAttention`) with PyTorch's arguments.

    Parameters
    ----------
    query, key, value
        Time-major ``(L, N, E)``, ``(S, N, Ek)``, ``(S, N, Ev)``, or unbatched ``(L, E)``...
    embed_dim_to_check
        ``E``, checked against ``query``.
    num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn
        As :func:`portagrad.ops.multi_head_attention`.
    dropout_p, training
        Dropout on the attention weights, only while ``training``.
    out_proj_weight, out_proj_bias, key_padding_mask, need_weights, attn_mask
        As :func:`portagrad.ops.multi_head_attention`.
    use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight
        Use the three projections instead of ``in_proj_weight``.
    static_k, static_v, average_attn_weights
        As :func:`portagrad.ops.multi_head_attention`.
    is_causal
        A hint that ``attn_mask`` is the causal mask (which must then be given).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.ones((3, 2, 4))
    >>> out, w = F.multi_head_attention_forward(x, x, x, 4, 2, np.ones((12, 4)), None, None,
    ...                                         None, False, 0.0, np.eye(4), None)
    >>> out.shape, w.shape
    ((3, 2, 4), (2, 3, 3))
    """
    op = "multi_head_attention_forward"
    q = var(query, op, "query")
    if q.ndim not in (2, 3):
        raise ShapeError(f"{op}(query): expected (L, N, E) or unbatched (L, E), got shape "
                         f"{tuple(q.shape)}")
    if is_causal and attn_mask is None:
        raise PortagradValueError(f"{op}(is_causal): need attn_mask if specifying the "
                                  f"is_causal hint")
    if int(q.shape[-1]) != int_arg(op, "embed_dim_to_check", embed_dim_to_check):
        raise ShapeError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                         f"{int(q.shape[-1])}")
    batched = q.ndim == 3
    if not batched:
        query, key, value = (ops.expand_dims(var(a, op), axis=1) for a in (q, key, value))
        if key_padding_mask is not None:
            m = getattr(key_padding_mask, "array", key_padding_mask)
            key_padding_mask = namespace_of(m).expand_dims(m, axis=0)
    out, weights = ops.multi_head_attention(
        query, key, value, num_heads, None if use_separate_proj_weight else in_proj_weight,
        in_proj_bias, out_proj_weight, out_proj_bias, q_proj_weight=q_proj_weight,
        k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, bias_k=bias_k,
        bias_v=bias_v, add_zero_attn=add_zero_attn,
        dropout_p=float_arg(op, "dropout_p", dropout_p) if training else 0.0,
        key_padding_mask=key_padding_mask,
        attn_mask=attn_mask, need_weights=need_weights,
        average_attn_weights=average_attn_weights, static_k=static_k, static_v=static_v)
    if not batched:
        out = ops.squeeze(out, axis=1)
        weights = None if weights is None else ops.squeeze(weights, axis=0)
    return out, weights


@adapts(ops.softmax_cross_entropy)
def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *,  # noqa: A002
                         linear_bias: Any = None, weight: Any = None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options: Any = None) -> Variable:
    """The cross entropy of the logits ``linear(input, linear_weight, linear_bias)``:
    :func:`portagrad.ops.linear` then :func:`cross_entropy` (which is
    :func:`portagrad.ops.softmax_cross_entropy`), as PyTorch defines it.

    Parameters
    ----------
    input
        ``(N, in_features)`` or ``(in_features,)``.
    linear_weight
        ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)`` for a K-dimensional
        loss (the logits are then ``(N, C, d_1, ..., d_K)``).
    target
        Class indices or class probabilities, as :func:`cross_entropy`.
    linear_bias
        ``(C, d_1, ..., d_K)`` or ``None``.
    weight, reduction, label_smoothing
        As :func:`cross_entropy`.
    ignore_index
        As :func:`cross_entropy` (``None``: -100 for class indices).
    options
        PyTorch's chunking options (memory only); accepted, the result does not depend on
        them.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x, w = np.ones((2, 3)), np.zeros((4, 3))
    >>> round(float(F.linear_cross_entropy(x, w, np.array([0, 3])).array), 6)
    1.386294
    """
    op = "linear_cross_entropy"
    x = var(input, op, "input")
    w = var(linear_weight, op, "linear_weight")
    if x.ndim not in (1, 2):
        raise ShapeError(f"{op}(input): expected input with dimensionality 1 or 2, got "
                         f"{x.ndim}")
    if w.ndim < 2 or int(w.shape[-1]) != int(x.shape[-1]):
        raise ShapeError(f"{op}(linear_weight): expected (C, ..., in_features) with "
                         f"in_features {int(x.shape[-1])}, got shape {tuple(w.shape)}")
    classes, extra = int(w.shape[0]), tuple(int(s) for s in w.shape[1:-1])
    if extra and x.ndim == 1:
        raise ShapeError(f"{op}(input): a K-dimensional loss (linear_weight of shape "
                         f"{tuple(w.shape)}) requires batched input (N, {int(x.shape[-1])})")
    flat = classes * math.prod(extra)
    b = None
    if linear_bias is not None:
        b = var(linear_bias, op, "linear_bias")
        if tuple(b.shape) != (classes,) + extra:
            raise ShapeError(f"{op}(linear_bias): expected shape {(classes,) + extra}, got "
                             f"{tuple(b.shape)}")
        b = ops.reshape(b, (flat,))
    logits = ops.linear(x, ops.reshape(w, (flat, int(x.shape[-1]))), b)
    logits = ops.reshape(logits, tuple(x.shape[:-1]) + (classes,) + extra)
    tshape = tuple(getattr(target, "shape", ()))
    if tshape == tuple(logits.shape) and ignore_index is not None:
        raise PortagradValueError(f"{op}(ignore_index): cannot be specified when target "
                                  f"contains probabilities")
    return _cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                          else ignore_index, reduction=reduction,
                          label_smoothing=label_smoothing)


# -- in-place forms -----------------------------------------------------------------------
def _in_place(op: str, alt: str, input: Any, compute: Any) -> Any:  # noqa: A002
    """Write ``compute(input)`` into ``input``'s array and return ``input`` (a Variable
    over the array when an array was given)."""
    if isinstance(input, Variable):
        if input.creator is not None or (input.requires_grad and is_grad_enabled()):
            raise GradientError(
                f"{op}(input): cannot change in place a Variable that "
                f"{'was computed by an op' if input.creator is not None else 'requires grad'}"
                f" (the tape keeps values, not versions); use the out-of-place form and "
                f"rebind: x = F.{alt}(x)")
        target = input.array
    else:
        target = input
    with no_grad():
        y = compute(input)
    xp = namespace_of(target)
    try:
        target[...] = xp.astype(y.array, target.dtype)
    except (TypeError, ValueError) as err:
        raise PortagradTypeError(f"{op}(input): expected a mutable array, got "
                                 f"{type(target).__name__} ({err}); use the out-of-place "
                                 f"F.{alt}(input)") from err
    return input if isinstance(input, Variable) else wrap(target, xp)


_DOC = """{what}, in place: :func:`{alt}` written into ``input``'s array.

    Parameters
    ----------
    input
        A floating array, or a Variable off the tape (not computed by an op, and not
        requiring grad unless inside ``no_grad``); others raise
        :class:`portagrad.GradientError` naming :func:`{alt}`.
    {params}

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([-1.0, 0.5])
    >>> _ = F.{name}(x{args})
    >>> x
    {result}
    """


@adapts(ops.relu)
def relu_(input: Any) -> Any:  # noqa: A002
    return _in_place("relu_", "relu", input, lambda x: _act.relu(x))


@adapts(ops.elu)
def elu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    return _in_place("elu_", "elu", input, lambda x: _act.elu(x, alpha))


@adapts(ops.celu)
def celu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    return _in_place("celu_", "celu", input, lambda x: _act.celu(x, alpha))


@adapts(ops.selu)
def selu_(input: Any) -> Any:  # noqa: A002
    return _in_place("selu_", "selu", input, lambda x: _act.selu(x))


@adapts(ops.leaky_relu)
def leaky_relu_(input: Any, negative_slope: float = 0.01) -> Any:  # noqa: A002
    return _in_place("leaky_relu_", "leaky_relu", input,
                     lambda x: _act.leaky_relu(x, negative_slope))


@adapts(ops.hard_tanh)
def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:  # noqa: A002
    return _in_place("hardtanh_", "hardtanh", input,
                     lambda x: _pw.hardtanh(x, min_val, max_val))


@adapts(ops.rrelu)
def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False) -> Any:
    return _in_place("rrelu_", "rrelu", input, lambda x: _sm.rrelu(x, lower, upper, training))


@adapts(ops.threshold)
def threshold_(input: Any, threshold: float, value: float) -> Any:  # noqa: A002
    return _in_place("threshold_", "threshold", input,
                     lambda x: _sm.threshold(x, threshold, value))


for _fn, _what, _params, _args, _result in [
    (relu_, "``max(input, 0)``", "", "", "array([0. , 0.5])"),
    (elu_, "ELU", "alpha\n        As :func:`elu`.", "", "array([-0.63212056,  0.5       ])"),
    (celu_, "CELU", "alpha\n        As :func:`celu`.", "", "array([-0.63212056,  0.5       ])"),
    (selu_, "SELU", "", "", "array([-1.11133074,  0.52535049])"),
    (leaky_relu_, "Leaky ReLU", "negative_slope\n        As :func:`leaky_relu`.", ", 0.1",
     "array([-0.1,  0.5])"),
    (hardtanh_, "``input`` clipped", "min_val, max_val\n        As :func:`hardtanh`.",
     ", -0.5, 0.4", "array([-0.5,  0.4])"),
    (rrelu_, "Randomized leaky ReLU", "lower, upper, training\n        As :func:`rrelu`.",
     "", "array([-0.22916667,  0.5       ])"),
    (threshold_, "Thresholding", "threshold, value\n        As :func:`threshold`.",
     ", 0.0, 9.0", "array([9. , 0.5])"),
]:
    _alt = _fn.__name__[:-1]
    _fn.__doc__ = _DOC.format(what=_what, alt=_alt, name=_fn.__name__, args=_args,
                              params=_params or "", result=_result)
