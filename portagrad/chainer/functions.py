"""Chainer's functions (``chainer.functions``, imported as ``F``): all 216 public names of
Chainer 7.8.1 with its signatures and defaults, each the canonical function of
:mod:`portagrad.ops` called through a declared adapter (:func:`portagrad.ops._adapters.
adapts`) that passes Chainer's conventions.

Each name binds its arguments by Chainer's signature (recorded in ``SIGNATURES``, so
``F.sum(x, 1)`` and ``F.concat(xs)`` mean what they mean in Chainer), renames the few
arguments portagrad spells differently, applies Chainer's defaults (``softmax`` and
``log_softmax`` over axis 1, ``concat`` along axis 1, ``leaky_relu`` slope 0.2,
``hard_sigmoid`` slope 0.2, ``huber_loss`` summed along the second axis, ``gaussian_nll``
summed, ``softmax_cross_entropy`` weighted by class and divided by the count, ``prelu``
with gradient 1 at 0), and returns Chainer Variables (:class:`portagrad.chainer.Variable`).
The functions whose conventions need more than renaming are written out below:
``add``, ``bilinear``, ``fft``, ``linear`` (``n_batch_axes``), ``lstm`` (Chainer's
interleaved gates ``a, i, f, o`` per unit), ``matmul`` (``transa``/``transb``),
``n_step_lstm``/``n_step_gru`` (Chainer's lists of weights), ``normalize``
(``x / (||x|| + eps)``), ``selu`` (``alpha``, ``scale``), ``sparse_matmul`` and
``squeeze`` (all unit axes by default).

Chainer's performance switches that do not change a result are accepted
(``softmax_cross_entropy(cache_score=, enable_double_backprop=)``: portagrad's
gradients are always differentiable again); an argument that cannot be honoured raises.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from .. import ops
from .._errors import PortagradTypeError, PortagradValueError, ShapeError
from ..ops._adapters import adapts
from .variable import Variable, _cast

SIGNATURES = {
    'absolute': '(self)',
    'absolute_error': '(x0, x1)',
    'accuracy': '(y, t, ignore_label=None)',
    'add': '(*xs)',
    'arccos': '(x)',
    'arcsin': '(x)',
    'arctan': '(x)',
    'arctan2': '(x1, x2)',
    'arctanh': '(x)',
    'argmax': '(x, axis=None)',
    'argmax_crf1d': '(cost, xs)',
    'argmin': '(x, axis=None)',
    'as_strided': '(x, shape, strides, storage_offset=None)',
    'average': '(x, axis=None, weights=None, keepdims=False)',
    'average_pooling_1d': '(x, ksize, stride=None, pad=0, pad_value=0)',
    'average_pooling_2d': '(x, ksize, stride=None, pad=0)',
    'average_pooling_3d': '(x, ksize, stride=None, pad=0, pad_value=0)',
    'average_pooling_nd': '(x, ksize, stride=None, pad=0, pad_value=0)',
    'batch_det': '(a)',
    'batch_inv': '(a)',
    'batch_l2_norm_squared': '(x)',
    'batch_matmul': '(a, b, transa=False, transb=False)',
    'batch_normalization': '(x, gamma, beta, **kwargs)',
    'batch_renormalization': '(x, gamma, beta, rmax, dmax, eps=2e-05, running_mean=None, running_var=None, decay=0.9, update_statistics=False)',  # noqa: E501
    'bernoulli_nll': "(x, y, reduce='sum')",
    'bias': '(x, y, axis=1)',
    'bilinear': '(e1, e2, W, V1=None, V2=None, b=None)',
    'binary_accuracy': '(y, t)',
    'black_out': "(x, t, W, samples, reduce='mean')",
    'broadcast': '(*args)',
    'broadcast_to': '(x, shape)',
    'cast': '(x, typ)',
    'ceil': '(x)',
    'cholesky': '(a)',
    'classification_summary': '(y, t, label_num=None, beta=1.0, ignore_label=-1)',
    'clip': '(x, x_min, x_max)',
    'clipped_relu': '(x, z=20.0)',
    'concat': '(xs, axis=1)',
    'connectionist_temporal_classification': "(x, t, blank_symbol, input_length=None, label_length=None, reduce='mean')",  # noqa: E501
    'contrastive': "(x0, x1, y, margin=1, reduce='mean')",
    'convolution_1d': '(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1)',
    'convolution_2d': '(x, W, b=None, stride=1, pad=0, cover_all=False, **kwargs)',
    'convolution_3d': '(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1)',
    'convolution_nd': '(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1)',
    'copy': '(x, dst)',
    'cos': '(x)',
    'cosh': '(x)',
    'crelu': '(x, axis=1)',
    'crf1d': "(cost, xs, ys, reduce='mean')",
    'cross_covariance': "(y, z, reduce='half_squared_sum')",
    'cumprod': '(x, axis=None)',
    'cumsum': '(x, axis=None)',
    'deconvolution_1d': '(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1)',
    'deconvolution_2d': '(x, W, b=None, stride=1, pad=0, outsize=None, **kwargs)',
    'deconvolution_3d': '(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1)',
    'deconvolution_nd': '(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1)',
    'decorrelated_batch_normalization': '(x, **kwargs)',
    'decov': "(h, reduce='half_squared_sum')",
    'deformable_convolution_2d_sampler': '(x, offset, W, b=None, stride=1, pad=0)',
    'depth2space': '(X, r)',
    'depthwise_convolution_2d': '(x, W, b=None, stride=1, pad=0)',
    'det': '(a)',
    'diagonal': '(x, offset=0, axis1=0, axis2=1)',
    'digamma': '(x)',
    'dilated_convolution_2d': '(x, W, b=None, stride=1, pad=0, dilate=1, cover_all=False)',
    'discriminative_margin_based_clustering_loss': '(embeddings, labels, delta_v, delta_d, max_embedding_dim, norm=1, alpha=1.0, beta=1.0, gamma=0.001)',  # noqa: E501
    'dropout': '(x, ratio=0.5, **kwargs)',
    'dstack': '(xs)',
    'einsum': '(*operands)',
    'elu': '(x, alpha=1.0)',
    'embed_id': '(x, W, ignore_label=None)',
    'erf': '(x)',
    'erfc': '(x)',
    'erfcinv': '(x)',
    'erfcx': '(x)',
    'erfinv': '(x)',
    'exp': '(x)',
    'expand_dims': '(x, axis)',
    'expm1': '(x)',
    'f1_score': '(y, t, label_num=None, ignore_label=-1)',
    'fft': '(x)',
    'fix': '(x)',
    'fixed_batch_normalization': '(x, gamma, beta, mean, var, eps=2e-05, axis=None)',
    'fixed_batch_renormalization': '(x, gamma, beta, mean, var, eps=2e-05)',
    'fixed_decorrelated_batch_normalization': '(x, mean, projection, groups=16)',
    'flatten': '(x)',
    'flip': '(x, axis)',
    'fliplr': '(a)',
    'flipud': '(a)',
    'floor': '(x)',
    'fmod': '(x, divisor)',
    'forget': '(func, *xs)',
    'gaussian': '(mean, ln_var, **kwargs)',
    'gaussian_kl_divergence': "(mean, ln_var, reduce='sum')",
    'gaussian_nll': "(x, mean, ln_var, reduce='sum')",
    'get_item': '(x, slices)',
    'group_normalization': '(x, groups, gamma, beta, eps=1e-05)',
    'gumbel_softmax': '(log_pi, tau=0.1, axis=1)',
    'hard_sigmoid': '(x)',
    'hinge': "(x, t, norm='L1', reduce='mean')",
    'hstack': '(xs)',
    'huber_loss': "(x, t, delta, reduce='sum_along_second_axis')",
    'identity': '(*inputs)',
    'ifft': '(x)',
    'im2col': '(x, ksize, stride=1, pad=0, cover_all=False, dilate=1)',
    'inv': '(a)',
    'layer_normalization': '(x, gamma, beta, eps=1e-05)',
    'leaky_relu': '(x, slope=0.2)',
    'lgamma': '(x)',
    'linear': '(x, W, b=None, n_batch_axes=1)',
    'linear_interpolate': '(p, x, y)',
    'local_convolution_2d': '(x, W, b=None, stride=1)',
    'local_response_normalization': '(x, n=5, k=2, alpha=0.0001, beta=0.75)',
    'log': '(x)',
    'log10': '(x)',
    'log1p': '(x)',
    'log2': '(x)',
    'log_ndtr': '(x)',
    'log_softmax': '(x, axis=1)',
    'logsumexp': '(x, axis=None)',
    'lstm': '(c_prev, x)',
    'matmul': '(a, b, transa=False, transb=False)',
    'max': '(x, axis=None, keepdims=False)',
    'max_pooling_1d': '(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False)',
    'max_pooling_2d': '(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False)',
    'max_pooling_3d': '(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False)',
    'max_pooling_nd': '(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False)',
    'maximum': '(x1, x2)',
    'maxout': '(x, pool_size, axis=1)',
    'mean': '(x, axis=None, weights=None, keepdims=False)',
    'mean_absolute_error': '(x0, x1)',
    'mean_squared_error': '(x0, x1)',
    'min': '(x, axis=None, keepdims=False)',
    'minimum': '(x1, x2)',
    'moveaxis': '(x, source, destination)',
    'n_step_bigru': '(n_layers, dropout_ratio, hx, ws, bs, xs, **kwargs)',
    'n_step_bilstm': '(n_layers, dropout_ratio, hx, cx, ws, bs, xs, **kwargs)',
    'n_step_birnn': "(n_layers, dropout_ratio, hx, ws, bs, xs, activation='tanh', **kwargs)",
    'n_step_gru': '(n_layers, dropout_ratio, hx, ws, bs, xs, **kwargs)',
    'n_step_lstm': '(n_layers, dropout_ratio, hx, cx, ws, bs, xs, **kwargs)',
    'n_step_rnn': "(n_layers, dropout_ratio, hx, ws, bs, xs, activation='tanh', **kwargs)",
    'ndtr': '(x)',
    'ndtri': '(x)',
    'negative_sampling': "(x, t, W, sampler, sample_size, reduce='sum', **kwargs)",
    'normalize': '(x, eps=1e-05, axis=1)',
    'pad': '(x, pad_width, mode, **keywords)',
    'pad_sequence': '(xs, length=None, padding=0)',
    'permutate': '(x, indices, axis=0, inv=False)',
    'polygamma': '(n, x)',
    'precision': '(y, t, label_num=None, ignore_label=-1)',
    'prelu': '(x, W)',
    'prod': '(x, axis=None, keepdims=False)',
    'r2_score': "(pred, true, sample_weight=None, multioutput='uniform_average')",
    'recall': '(y, t, label_num=None, ignore_label=-1)',
    'relu': '(x)',
    'relu6': '(x)',
    'repeat': '(x, repeats, axis=None)',
    'reshape': '(x, shape)',
    'resize_images': "(x, output_shape, *, mode='bilinear', align_corners=True)",
    'roi_average_align_2d': '(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None)',
    'roi_average_pooling_2d': '(x, rois, roi_indices, outsize, spatial_scale)',
    'roi_max_align_2d': '(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None)',
    'roi_max_pooling_2d': '(x, rois, roi_indices, outsize, spatial_scale)',
    'roi_pooling_2d': '(x, rois, outh, outw, spatial_scale)',
    'rollaxis': '(x, axis, start=0)',
    'rrelu': '(x, l=0.125, u=0.3333333333333333, **kwargs)',
    'rsqrt': '(x)',
    'scale': '(x, y, axis=1)',
    'scatter_add': '(a, slices, b)',
    'select_item': '(x, t)',
    'selu': '(x, alpha=1.6732632423543772, scale=1.0507009873554805)',
    'separate': '(x, axis=0)',
    'shift': '(x, ksize=3, dilate=1)',
    'sigmoid': '(x)',
    'sigmoid_cross_entropy': "(x, t, normalize=True, reduce='mean')",
    'sign': '(x)',
    'simplified_dropconnect': '(x, W, b=None, ratio=0.5, train=True, mask=None, use_batchwise_mask=True)',  # noqa: E501
    'sin': '(x)',
    'sinh': '(x)',
    'slstm': '(c_prev1, c_prev2, x1, x2)',
    'softmax': '(x, axis=1)',
    'softmax_cross_entropy': "(x, t, normalize=True, cache_score=True, class_weight=None, ignore_label=-1, reduce='mean', enable_double_backprop=False, soft_target_loss='cross-entropy')",  # noqa: E501
    'softplus': '(x, beta=1.0)',
    'space2depth': '(X, r)',
    'sparse_matmul': '(a, b, transa=False, transb=False)',
    'spatial_pyramid_pooling_2d': '(x, pyramid_height, pooling=None)',
    'spatial_transformer_grid': '(theta, output_shape, **kwargs)',
    'spatial_transformer_sampler': '(x, grid, **kwargs)',
    'split_axis': '(x, indices_or_sections, axis, force_tuple=True)',
    'sqrt': '(x)',
    'square': '(x)',
    'squared_difference': '(x1, x2)',
    'squared_error': '(x0, x1)',
    'squeeze': '(x, axis=None)',
    'stack': '(xs, axis=0)',
    'sum': '(x, axis=None, keepdims=False)',
    'sum_to': '(x, shape)',
    'swapaxes': '(x, axis1, axis2)',
    'swish': '(x, beta)',
    'tan': '(x)',
    'tanh': '(x)',
    'tensordot': '(a, b, axes=2)',
    'tile': '(x, reps)',
    'transpose': '(x, axes=None)',
    'transpose_sequence': '(xs)',
    'tree_lstm': '(*inputs)',
    'triplet': "(anchor, positive, negative, margin=0.2, reduce='mean')",
    'unpooling_1d': '(x, ksize, stride=None, pad=0, outsize=None, cover_all=True)',
    'unpooling_2d': '(x, ksize, stride=None, pad=0, outsize=None, cover_all=True)',
    'unpooling_3d': '(x, ksize, stride=None, pad=0, outsize=None, cover_all=True)',
    'unpooling_nd': '(x, ksize, stride=None, pad=0, outsize=None, cover_all=True)',
    'upsampling_2d': '(x, indexes, ksize, stride=None, pad=0, outsize=None, cover_all=True)',
    'vstack': '(xs)',
    'where': '(condition, x, y)',
    'zeta': '(x, q)',
    'zoneout': '(h, x, ratio=0.5, **kwargs)',
}

# portagrad's name for an argument where it differs from Chainer's.
_RENAMES: dict[str, dict[str, str]] = {
    "absolute": {"self": "x"},
    "clip": {"x_min": "min", "x_max": "max"},
    "concat": {"xs": "arrays"},
    "stack": {"xs": "arrays"},
    "gaussian_nll": {"reduce": "reduction"},
    "huber_loss": {"reduce": "reduction"},
    "leaky_relu": {"slope": "negative_slope"},
    "prelu": {"W": "weight"},
    "sigmoid_cross_entropy": {"reduce": "reduction"},
    "softmax_cross_entropy": {"reduce": "reduction"},
    "tensordot": {"a": "x1", "b": "x2"},
    "tile": {"reps": "repetitions"},
    "where": {"x": "x1", "y": "x2"},
}

# Arguments portagrad needs to reproduce Chainer's convention, passed with every call.
_FIXED: dict[str, dict[str, Any]] = {
    "hard_sigmoid": {"slope": 0.2, "offset": 0.5},
    "prelu": {"positive_at_zero": True},
    "softmax_cross_entropy": {"weighted_mean": False},
}

# Chainer arguments that only choose how a result is computed, not what it is.
_PERFORMANCE_ONLY: dict[str, tuple[str, ...]] = {
    "softmax_cross_entropy": ("cache_score", "enable_double_backprop"),
}

# Chainer's name -> the canonical function, where the names differ.
_TARGETS: dict[str, Callable[..., Any]] = {"mean": ops.average}

_REDUCE_VALUES = {"no": "none"}


def _signature(name: str) -> inspect.Signature:
    namespace: dict[str, Any] = {}
    exec(f"def f{SIGNATURES[name]}: pass", namespace)  # noqa: S102 - the recorded table
    return inspect.signature(namespace["f"])


def _face(name: str) -> Callable[..., Any]:
    """Chainer's ``name`` over ``ops.<name>``: bind by Chainer's signature, rename, call."""
    target = _TARGETS.get(name) or getattr(ops, name)
    chainer_sig = _signature(name)
    target_params = list(inspect.signature(target).parameters.values())
    renames = _RENAMES.get(name, {})
    fixed = _FIXED.get(name, {})
    dropped = _PERFORMANCE_ONLY.get(name, ())
    positional = [p.name for p in target_params if p.kind is p.POSITIONAL_ONLY]
    var_positional = next((p.name for p in target_params if p.kind is p.VAR_POSITIONAL), None)
    # Chainer's arguments before a ``*args`` of its own go positionally, in its order.
    kinds = [p.kind for p in chainer_sig.parameters.values()]
    leading = ([p.name for p in chainer_sig.parameters.values()][
        :kinds.index(inspect.Parameter.VAR_POSITIONAL)]
        if inspect.Parameter.VAR_POSITIONAL in kinds else [])

    params = list(chainer_sig.parameters.values())
    simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    names = [p.name for p in params]
    defaults = [(p.name, p.default) for p in params if p.default is not p.empty]
    required = [p.name for p in params if p.default is p.empty]

    def bind(args: tuple, kwargs: dict) -> dict:
        # The usual call (Chainer's plain parameters, no duplicates) is bound by hand;
        # anything else goes through inspect, which also words the errors.
        if simple and len(args) <= len(names):
            values = dict(zip(names, args))
            for k, v in kwargs.items():
                if k not in values and k in chainer_sig.parameters:
                    values[k] = v
                else:
                    break
            else:
                if all(r in values for r in required):
                    for k, d in defaults:
                        values.setdefault(k, d)
                    return values
        try:
            bound = chainer_sig.bind(*args, **kwargs)
        except TypeError as e:
            raise PortagradTypeError(f"{name}: {e} (Chainer's signature is "
                                     f"{name}{SIGNATURES[name]})") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    # Per Chainer parameter: 0 a plain argument (with portagrad's name, None if dropped,
    # and whether it is a ``reduce`` value to translate), 1 its ``*args``, 2 its ``**kw``.
    plan = {}
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            plan[p.name] = (1, None, False)
        elif p.kind is p.VAR_KEYWORD:
            plan[p.name] = (2, None, False)
        else:
            tname = None if p.name in dropped else renames.get(p.name, p.name)
            plan[p.name] = (0, tname, tname == "reduction")
    reorder = bool(leading or positional or var_positional is not None)

    @adapts(target)
    def adapter(*args: Any, **kwargs: Any) -> Any:
        call_kw: dict[str, Any] = {}
        call_pos: list[Any] = []
        for pname, value in bind(args, kwargs).items():
            kind, tname, is_reduce = plan[pname]
            if kind == 0:
                if tname is not None:
                    call_kw[tname] = _REDUCE_VALUES.get(value, value) if is_reduce else value
            elif kind == 1:
                call_pos.extend(value)
            else:
                call_kw.update(value)
        if fixed:
            call_kw.update(fixed)
        if reorder:
            if leading:
                call_pos = [call_kw.pop(renames.get(p, p)) for p in leading] + call_pos
            if positional:
                call_pos = [call_kw.pop(p) for p in positional if p in call_kw] + call_pos
            if var_positional is not None and var_positional in call_kw:
                call_pos.extend(call_kw.pop(var_positional))
        return _cast(target(*call_pos, **call_kw))

    functools.update_wrapper(adapter, target, assigned=("__doc__",), updated=())
    adapter.__name__ = adapter.__qualname__ = name
    adapter.__signature__ = chainer_sig  # type: ignore[attr-defined]
    adapter.__doc__ = (f"Chainer's ``{name}{SIGNATURES[name]}``: "
                       f"``portagrad.ops.{target.__name__}`` with Chainer's conventions.\n\n"
                       + (target.__doc__ or ""))
    adapter.__module__ = target.__module__  # its examples are the canonical function's
    return adapter


def _chainer(name: str, target: Callable[..., Any]) -> Callable[[Callable], Callable]:
    """Declare a written-out adapter of ``target`` with Chainer's signature ``name``."""

    def mark(fn: Callable) -> Callable:
        fn = adapts(target)(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return _cast(fn(*args, **kwargs))

        wrapper.__portagrad_adapts__ = target  # type: ignore[attr-defined]
        return wrapper

    return mark


def _reduce(name: str, reduce: str, allowed: tuple[str, ...] = ("mean", "sum", "no")) -> str:
    if reduce not in allowed:
        raise PortagradValueError(f"{name}(reduce): expected one of {allowed}, got {reduce!r}")
    return _REDUCE_VALUES.get(reduce, reduce)


# -- the adapters written out ---------------------------------------------------------------
@_chainer("add", ops.add)
def add(*xs: Any) -> Any:
    """Chainer's ``add(*xs)``: the elementwise sum of two or more arrays of one shape.

    Parameters
    ----------
    xs
        Two or more arrays or Variables of one shape.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.add(np.ones(2), np.ones(2), np.ones(2)).array
    array([3., 3.])
    """
    if len(xs) < 2:
        raise PortagradTypeError(f"add(*xs): expected at least two arrays, got {len(xs)}")
    shapes = {tuple(x.shape) for x in xs}
    if len(shapes) != 1:
        raise ShapeError(f"add(*xs): expected arrays of one shape, got shapes "
                         f"{[tuple(x.shape) for x in xs]}")
    total = ops.add(xs[0], xs[1])
    for x in xs[2:]:
        total = ops.add(total, x)
    return total


@_chainer("bilinear", ops.bilinear)
def bilinear(e1: Any, e2: Any, W: Any, V1: Any = None, V2: Any = None, b: Any = None) -> Any:
    """Chainer's ``bilinear(e1, e2, W, V1=None, V2=None, b=None)``:
    ``y[n, l] = sum_jk e1[n, j] e2[n, k] W[j, k, l] + e1 @ V1 + e2 @ V2 + b``.

    Parameters
    ----------
    e1, e2
        ``(N, J)`` and ``(N, K)`` (further axes of each are flattened).
    W
        ``(J, K, L)``.
    V1, V2, b
        ``(J, L)``, ``(K, L)`` and ``(L,)``, all given or none.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.bilinear(np.ones((1, 2)), np.ones((1, 3)), np.ones((2, 3, 1))).array
    array([[6.]])
    """
    given = [v is not None for v in (V1, V2, b)]
    if any(given) and not all(given):
        raise PortagradValueError("bilinear(V1, V2, b): expected all three or none of them")
    e1 = ops.reshape(e1, (e1.shape[0], -1))
    e2 = ops.reshape(e2, (e2.shape[0], -1))
    y = ops.bilinear(e1, e2, ops.permute_dims(W, (2, 0, 1)))
    if V1 is not None:
        y = y + ops.matmul(e1, V1) + ops.matmul(e2, V2) + b
    return y


@_chainer("fft", ops.fft.fft)
def fft(x: Sequence[Any]) -> Any:
    """Chainer's ``fft(x)``: the discrete Fourier transform over the last axis of the pair
    ``x = (real, imag)``; returns the result's ``(real, imag)``.

    Parameters
    ----------
    x
        The real and imaginary parts, of one shape and a real floating dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> re, im = F.fft((np.array([1.0, 1.0]), np.array([0.0, 0.0])))
    >>> re.array, im.array
    (array([2., 0.]), array([0., 0.]))
    """
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise PortagradTypeError(f"fft(x): expected a pair (real, imag) of arrays, got "
                                 f"{type(x).__name__}")
    re, im = ops.asarray(x[0]) if not hasattr(x[0], "creator") else x[0], x[1]
    dtype = re.dtype
    ctype = re.xp.complex64 if dtype == re.xp.float32 else re.xp.complex128
    z = ops.astype(re, ctype) + ops.astype(im, ctype) * 1j
    y = ops.fft.fft(z)
    return ops.astype(ops.real(y), dtype), ops.astype(ops.imag(y), dtype)


@_chainer("linear", ops.linear)
def linear(x: Any, W: Any, b: Any = None, n_batch_axes: int = 1) -> Any:
    """Chainer's ``linear(x, W, b=None, n_batch_axes=1)``: ``x`` flattened after its first
    ``n_batch_axes`` axes, times ``W.T``, plus ``b``.

    Parameters
    ----------
    x
        ``(N..., I...)``: the axes after the batch axes are flattened to ``I``.
    W
        ``(O, I)``.
    b
        ``(O,)`` or None.
    n_batch_axes
        How many leading axes are batch axes (at least 1).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.linear(np.ones((2, 2, 3)), np.ones((4, 6))).shape
    (2, 4)
    """
    if n_batch_axes < 1:
        raise PortagradValueError(f"linear(n_batch_axes): expected at least 1, got "
                                  f"{n_batch_axes}")
    shape = tuple(x.shape)
    if len(shape) != n_batch_axes + 1:
        x = ops.reshape(x, shape[:n_batch_axes] + (-1,))
    return ops.linear(x, W, b)


def _gates_to_blocks(x: Any) -> Any:
    """Chainer's gates, interleaved per unit ``(a, i, f, o)``, as portagrad's blocks
    ``(i, f, a, o)``."""
    n, four_h = x.shape[0], x.shape[1]
    if four_h % 4:
        raise ShapeError(f"lstm(x): expected a second axis divisible by 4, got shape "
                         f"{tuple(x.shape)}")
    r = ops.reshape(x, (n, four_h // 4, 4))
    r = ops.take(r, _index(r, [1, 2, 0, 3]), axis=2)
    return ops.reshape(ops.permute_dims(r, (0, 2, 1)), (n, four_h))


def _index(like: Any, values: list[int]) -> Any:
    from ..xp import namespace_of

    a = like.array if hasattr(like, "array") else like
    xp = namespace_of(a)
    return xp.asarray(values, device=a.device)


@_chainer("lstm", ops.lstm)
def lstm(c_prev: Any, x: Any) -> Any:
    """Chainer's ``lstm(c_prev, x)``: ``x`` ``(N, 4H)`` holds the gates interleaved per
    unit, ``x[:, 4k:4k+4] = (a, i, f, o)`` of unit ``k``; returns ``(c, h)`` with
    ``c = tanh(a) sigmoid(i) + sigmoid(f) c_prev`` and ``h = sigmoid(o) tanh(c)``.

    Parameters
    ----------
    c_prev
        ``(N, H)``.
    x
        ``(N, 4H)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> c, h = F.lstm(np.zeros((1, 1)), np.array([[0.0, 0.0, 0.0, 0.0]]))
    >>> c.array, h.array
    (array([[0.]]), array([[0.]]))
    """
    if x.shape[0] > c_prev.shape[0]:
        raise ShapeError(f"lstm(x): expected at most {c_prev.shape[0]} rows as c_prev, got "
                         f"shape {tuple(x.shape)}")
    n = x.shape[0]
    if n == c_prev.shape[0]:
        return ops.lstm(c_prev, _gates_to_blocks(x))
    # Chainer lets x be shorter than c_prev: the remaining rows keep their cells.
    c_head, h_head = ops.lstm(c_prev[:n], _gates_to_blocks(x))
    return ops.concat([c_head, c_prev[n:]], axis=0), h_head


@_chainer("matmul", ops.matmul)
def matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Any:
    """Chainer's ``matmul(a, b, transa=False, transb=False)``: the (batched) matrix product
    with either operand's last two axes swapped first.

    Parameters
    ----------
    a, b
        Arrays of at least 1 dimension.
    transa, transb
        Swap the last two axes of ``a`` (``b``) first.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.matmul(np.ones((3, 2)), np.ones((3, 4)), transa=True).shape
    (2, 4)
    """
    if transa and a.ndim >= 2:
        a = ops.matrix_transpose(a)
    if transb and b.ndim >= 2:
        b = ops.matrix_transpose(b)
    return ops.matmul(a, b)


@_chainer("n_step_lstm", ops.n_step_lstm)
def n_step_lstm(n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Any, bs: Any,
                xs: Any, **kwargs: Any) -> Any:
    """Chainer's stacked LSTM ``n_step_lstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs)``:
    eight matrices and biases per layer (``W0..W3`` on the input for the input and forget
    gates, the cell input and the output gate, ``W4..W7`` on the state); returns
    ``(hy, cy, ys)``.

    Parameters
    ----------
    n_layers, dropout_ratio
        Layers, and the dropout of the inputs of the layers above the first.
    hx, cx
        ``(n_layers, B, N)``.
    ws, bs
        Per layer ``[W0, .., W7]`` and ``[b0, .., b7]``.
    xs
        A list over time of ``(B_t, I)`` arrays, ``B_t`` non-increasing.
    kwargs
        None accepted (Chainer's removed ``train``/``use_cudnn`` raise).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> ws, bs = [[np.zeros((2, 2))] * 8], [[np.zeros(2)] * 8]
    >>> hy, cy, ys = F.n_step_lstm(1, 0.0, np.zeros((1, 1, 2)), np.ones((1, 1, 2)), ws, bs,
    ...                            [np.zeros((1, 2))])
    >>> cy.array
    array([[[0.5, 0.5]]])
    """
    from ..ops.nn.recurrent_stacked import _hx, _stack

    _no_kwargs("n_step_lstm", kwargs)
    states, ys = _stack("n_step_lstm", ops.n_step_lstm, n_layers, dropout_ratio,
                        [_hx(hx, "n_step_lstm", "hx", n_layers),
                         _hx(cx, "n_step_lstm", "cx", n_layers)], ws, bs, xs, 8, False)
    return states[0], states[1], ys


@_chainer("n_step_gru", ops.n_step_gru)
def n_step_gru(n_layers: int, dropout_ratio: float, hx: Any, ws: Any, bs: Any, xs: Any,
               **kwargs: Any) -> Any:
    """Chainer's stacked GRU ``n_step_gru(n_layers, dropout_ratio, hx, ws, bs, xs)``: six
    matrices and biases per layer (``W0..W2`` on the input for the reset and update gates
    and the candidate, ``W3..W5`` on the state); returns ``(hy, ys)``.

    Parameters
    ----------
    n_layers, dropout_ratio, xs
        As :func:`n_step_lstm`.
    hx
        ``(n_layers, B, N)``.
    ws, bs
        Per layer ``[W0, .., W5]`` and ``[b0, .., b5]``.
    kwargs
        None accepted.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> ws, bs = [[np.zeros((2, 2))] * 6], [[np.zeros(2)] * 6]
    >>> hy, ys = F.n_step_gru(1, 0.0, np.ones((1, 1, 2)), ws, bs, [np.zeros((1, 2))])
    >>> ys[0].array
    array([[0.5, 0.5]])
    """
    from ..ops.nn.recurrent_stacked import _hx, _stack

    _no_kwargs("n_step_gru", kwargs)
    states, ys = _stack("n_step_gru", ops.n_step_gru, n_layers, dropout_ratio,
                        [_hx(hx, "n_step_gru", "hx", n_layers)], ws, bs, xs, 6, False)
    return states[0], ys


def _no_kwargs(name: str, kwargs: dict) -> None:
    if kwargs:
        raise PortagradTypeError(f"{name}: unexpected argument(s) {sorted(kwargs)} (Chainer 7 "
                                 f"removed train= and use_cudnn=; use chainer.using_config)")


@_chainer("normalize", ops.linalg.vector_norm)
def normalize(x: Any, eps: float = 1e-5, axis: int = 1) -> Any:
    """Chainer's ``normalize(x, eps=1e-5, axis=1)``: ``x / (||x||_2 + eps)`` along ``axis``
    (Chainer adds ``eps`` to the norm; :func:`portagrad.ops.normalize` floors it).

    Parameters
    ----------
    x
        A floating array.
    eps
        Added to the norm.
    axis
        The axis (or axes) of the vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.normalize(np.array([[3.0, 4.0]]), eps=0.0).array
    array([[0.6, 0.8]])
    """
    norm = ops.linalg.vector_norm(x, axis=axis, keepdims=True)
    return x / (norm + eps)


@_chainer("selu", ops.elu)
def selu(x: Any, alpha: float = 1.6732632423543772, scale: float = 1.0507009873554805) -> Any:
    """Chainer's ``selu(x, alpha=1.6732..., scale=1.0507...)``: ``scale * elu(x, alpha)``.

    Parameters
    ----------
    x
        A floating array.
    alpha, scale
        The constants (Klambauer et al.'s by default).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.selu(np.array([1.0]), scale=2.0).array
    array([2.])
    """
    return scale * ops.elu(x, alpha)


class CooMatrix:
    """A sparse matrix in coordinate form (Chainer's ``chainer.utils.CooMatrix``):
    ``data[k]`` at ``(row[k], col[k])`` of a ``shape`` matrix (a batch of them when
    ``data`` is 2-d).

    Parameters
    ----------
    data, row, col
        The values and their coordinates (1-d, or ``(B, nnz)`` for a batch).
    shape
        The matrix shape ``(M, N)``.
    order
        Accepted as in Chainer (``'C'``, ``'F'`` or None); it does not change values.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.functions import CooMatrix
    >>> CooMatrix(np.array([2.0]), np.array([0]), np.array([1]), (2, 2)).to_dense()
    array([[0., 2.],
           [0., 0.]])
    """

    def __init__(self, data: Any, row: Any, col: Any, shape: tuple[int, int],
                 order: str | None = None, requires_grad: bool = False) -> None:
        if order not in (None, "C", "F"):
            raise PortagradValueError(f"CooMatrix(order): expected 'C', 'F' or None, got "
                                      f"{order!r}")
        self.data = data if isinstance(data, Variable) else Variable(
            data, requires_grad=requires_grad)
        self.row, self.col = row, col
        self.shape = tuple(shape)
        self.order = order

    def to_dense(self) -> Any:
        """The dense array (values at repeated coordinates add up)."""
        return _coo_dense(self).array


def _coo_dense(a: CooMatrix) -> Any:
    """The dense matrix of ``a``, differentiable in ``a.data``."""
    from ..xp import namespace_of

    arr = a.data.array
    xp = namespace_of(arr)
    m, n = a.shape
    flat = xp.asarray(a.row, device=arr.device) * n + xp.asarray(a.col, device=arr.device)
    if arr.ndim == 1:
        dense = ops.scatter_add(ops.zeros((m * n,), dtype=arr.dtype, device=arr.device),
                                flat, a.data)
        return ops.reshape(dense, (m, n))
    rows = [ops.reshape(ops.scatter_add(ops.zeros((m * n,), dtype=arr.dtype,
                                                  device=arr.device), flat[i], a.data[i]),
                        (m, n)) for i in range(arr.shape[0])]
    return ops.stack(rows, axis=0)


@_chainer("sparse_matmul", ops.matmul)
def sparse_matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Any:
    """Chainer's ``sparse_matmul(a, b, transa=False, transb=False)``: the product of a sparse
    :class:`CooMatrix` and a dense matrix (either may be the sparse one), differentiable
    in the sparse values and the dense operand.

    Parameters
    ----------
    a, b
        One :class:`CooMatrix` and one dense array (2-d, or 3-d for a batch).
    transa, transb
        Transpose ``a`` (``b``) first.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> sp = F.CooMatrix(np.array([2.0]), np.array([0]), np.array([1]), (2, 2))
    >>> F.sparse_matmul(sp, np.eye(2)).array
    array([[0., 2.],
           [0., 0.]])
    """
    sa, sb = isinstance(a, CooMatrix), isinstance(b, CooMatrix)
    if sa == sb:
        raise PortagradTypeError("sparse_matmul(a, b): expected exactly one CooMatrix, got "
                                 f"{type(a).__name__} and {type(b).__name__}")
    da = _coo_dense(a) if sa else a
    db = _coo_dense(b) if sb else b
    return matmul.__wrapped__(da, db, transa, transb)  # type: ignore[attr-defined]


@_chainer("squeeze", ops.squeeze)
def squeeze(x: Any, axis: Any = None) -> Any:
    """Chainer's ``squeeze(x, axis=None)``: remove unit axes, all of them when ``axis`` is
    None.

    Parameters
    ----------
    x
        An array.
    axis
        An axis or a tuple of axes of size one, or None.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.squeeze(np.ones((1, 2, 1))).shape
    (2,)
    """
    if axis is None:
        axis = tuple(i for i, s in enumerate(x.shape) if s == 1)
    return ops.squeeze(x, axis)


@_chainer("copy", ops.copy)
def copy(x: Any, dst: Any) -> Any:
    """Chainer's ``copy(x, dst)``: ``x`` copied to the device ``dst`` (a Chainer device
    specifier: ``-1`` or ``'@numpy'`` the CPU, ``N`` or ``'@cupy:N'`` a GPU); the gradient
    is copied back.

    Parameters
    ----------
    x
        An array or Variable.
    dst
        The destination device; it must hold arrays of ``x``'s library.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import functions as F
    >>> F.copy(np.array([1.0, 2.0]), -1).array
    array([1., 2.])
    """
    from ..xp import namespace_name, namespace_of
    from .device import CpuDevice, GpuDevice, get_device

    d = get_device(dst)
    a = x.array if hasattr(x, "array") else x
    lib = namespace_name(namespace_of(a))
    if isinstance(d, CpuDevice):
        if lib != "numpy":
            raise PortagradValueError(f"copy(dst): expected a device of {lib} for a {lib} "
                                      f"array, got {d.name}; move it with "
                                      f"chainer.get_device(...).send first")
        return ops.copy(x, a.device)
    if isinstance(d, GpuDevice):
        if lib != "cupy":
            raise PortagradValueError(f"copy(dst): expected a CuPy array for {d.name}, got "
                                      f"a {lib} array")
        return ops.copy(x, d.device)
    return ops.copy(x, d.device)


_WRITTEN = {"add": add, "copy": copy, "bilinear": bilinear, "fft": fft, "linear": linear,
            "lstm": lstm,
            "matmul": matmul, "n_step_lstm": n_step_lstm, "n_step_gru": n_step_gru,
            "normalize": normalize, "selu": selu, "sparse_matmul": sparse_matmul,
            "squeeze": squeeze}

_FACES = {name: _WRITTEN[name] if name in _WRITTEN else _face(name) for name in SIGNATURES}
globals().update({k: v for k, v in _FACES.items() if k not in _WRITTEN})

__all__ = sorted(SIGNATURES) + ["CooMatrix"]
