"""Records of the neural-network functions: activations, losses, connections, convolution,
pooling, normalization, noise and recurrent cells.

References are written independently in NumPy float64 (loops for convolution and pooling).
Samples are small (batch 2, 2-3 channels, spatial 3-5) so that third-order checks of
convolution stay fast.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import portagrad.ops as ops
from conformance._db import NON_DIFFERENTIABLE, OpRecord, register
from portagrad import DTypeError, ShapeError

NON_DIFFERENTIABLE.update({"accuracy", "is_train_mode"})


def _u(rng, lo, hi, shape):
    return np.asarray(rng.uniform(lo, hi, size=shape))


def _away(rng, lo, hi, shape):
    return np.asarray(_u(rng, lo, hi, shape) * rng.choice([-1.0, 1.0], size=shape))


def _shape(rng, min_dims=1, max_dims=3):
    nd = int(rng.integers(min_dims, max_dims + 1))
    return tuple(int(d) for d in rng.integers(1, 4, size=nd))


def _avoid(rng, shape, lo, hi, kinks, gap=0.15):
    """Uniform in [lo, hi], moved away from each kink by at least ``gap``."""
    x = _u(rng, lo, hi, shape)
    for k in kinks:
        near = np.abs(x - k) < gap
        x = np.where(near, k + np.sign(x - k + 1e-12) * gap * 2, x)
    return x


_INT_ERR = [(lambda rng: (np.arange(3),), DTypeError)]


# -- activations ----------------------------------------------------------------------------
def _np_sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def _np_softplus(x):
    return np.logaddexp(0.0, x)


def _np_elu(x, a=1.0):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


_SELU_A = 1.6732632423543772848170429916717
_SELU_S = 1.0507009873554804934193349852946


def _activation(name, ref, lo=-2.0, hi=2.0, kinks=(), order=3, fn=None):
    def sample(rng):
        return (_avoid(rng, _shape(rng, 0), lo, hi, kinks),)

    register(OpRecord(name, fn or getattr(ops, name), ref, sample, order=order,
                      errors=_INT_ERR))


_activation("relu", lambda x: np.maximum(x, 0), kinks=(0,))
_activation("relu6", lambda x: np.clip(x, 0, 6), lo=-2, hi=8, kinks=(0, 6))
_activation("leaky_relu", lambda x: np.where(x > 0, x, 0.2 * x), kinks=(0,),
            fn=lambda x: ops.leaky_relu(x, 0.2))
_activation("elu", lambda x: _np_elu(x, 1.5), kinks=(0,), fn=lambda x: ops.elu(x, 1.5))
_activation("selu", lambda x: _SELU_S * _np_elu(x, _SELU_A), kinks=(0,))
_activation("celu", lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2)),
            kinks=(0,), fn=lambda x: ops.celu(x, 2.0))
_np_erf = np.vectorize(math.erf)


def _np_gelu(x, approx):
    if approx:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _np_erf(x / math.sqrt(2)))


register(OpRecord(
    "gelu", lambda x, a: ops.gelu(x, approximate="tanh" if a else "none"), _np_gelu,
    lambda rng: (_u(rng, -4, 4, _shape(rng, 0)), bool(rng.integers(0, 2))),
    errors=[(lambda rng: (np.arange(3), False), DTypeError)]))
_activation("sigmoid", _np_sigmoid, -4, 4)
_activation("log_sigmoid", lambda x: -_np_softplus(-x), -4, 4)
_activation("softplus", lambda x: _np_softplus(2 * x) / 2, -3, 3,
            fn=lambda x: ops.softplus(x, beta=2.0))
_activation("silu", lambda x: x * _np_sigmoid(x), -4, 4)
_activation("mish", lambda x: x * np.tanh(_np_softplus(x)), -3, 3)
_activation("hard_sigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1), -5, 5, kinks=(-3, 3))
_activation("hard_tanh", lambda x: np.clip(x, -1, 1), -2, 2, kinks=(-1, 1))
_activation("softsign", lambda x: x / (1 + np.abs(x)), kinks=(0,))
_activation("hard_swish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), -5, 5, kinks=(-3, 3))
_activation("softshrink", lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.7, 0),
            kinks=(-0.7, 0.7), fn=lambda x: ops.softshrink(x, 0.7))
_activation("hardshrink", lambda x: np.where(np.abs(x) > 0.7, x, 0.0), kinks=(-0.7, 0.7),
            fn=lambda x: ops.hardshrink(x, 0.7))
_activation("tanhshrink", lambda x: x - np.tanh(x), -3, 3)
_activation("threshold", lambda x: np.where(x > 0.5, x, -1.0), kinks=(0.5,),
            fn=lambda x: ops.threshold(x, 0.5, -1.0))


def _glu_sample(rng):
    shape = _shape(rng, 1, 3)
    axis = int(rng.integers(-len(shape), len(shape)))
    shape = tuple(2 * s if i == axis % len(shape) else s for i, s in enumerate(shape))
    return _u(rng, -3, 3, shape), axis


def _np_glu(x, axis):
    a, b = np.split(x, 2, axis=axis)
    return a * _np_sigmoid(b)


register(OpRecord("glu", lambda x, a: ops.glu(x, axis=a), _np_glu, _glu_sample, diff=(0,),
                  errors=[(lambda rng: (np.ones((2, 3)), -1), ShapeError)]))


def _np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _softmax_sample(rng):
    shape = _shape(rng, 1, 3)
    return _u(rng, -3, 3, shape), int(rng.integers(-len(shape), len(shape)))


register(OpRecord("softmax", lambda x, a: ops.softmax(x, axis=a),
                  lambda x, a: np.exp(_np_log_softmax(x, a)), _softmax_sample, diff=(0,),
                  errors=[(lambda rng: (np.arange(3), 0), DTypeError)]))
register(OpRecord("log_softmax", lambda x, a: ops.log_softmax(x, axis=a), _np_log_softmax,
                  _softmax_sample, diff=(0,),
                  errors=[(lambda rng: (np.arange(3), 0), DTypeError)]))


def _maxout_sample(rng):
    n = int(rng.integers(1, 3))
    c = 2 * int(rng.integers(1, 3))
    x = (rng.permutation(n * c * 2) * 0.3 + rng.uniform(0, 0.1, n * c * 2)).reshape(n, c, 2)
    return (x - 1.0,)


register(OpRecord("maxout", lambda x: ops.maxout(x, 2, axis=1),
                  lambda x: x.reshape(x.shape[0], -1, 2, x.shape[2]).max(axis=2),
                  _maxout_sample,
                  errors=[(lambda rng: (np.ones((2, 3)),), ShapeError)]))


def _prelu_sample(rng):
    shape = (2, 3) + _shape(rng, 0, 1)
    return _away(rng, 0.2, 2, shape), _u(rng, 0.05, 0.5, (3,))


def _np_prelu(x, w):
    wb = w.reshape((3,) + (1,) * (x.ndim - 2))
    return np.where(x > 0, x, wb * x)


register(OpRecord("prelu", ops.prelu, _np_prelu, _prelu_sample,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones(4)), ShapeError)]))


# -- losses -----------------------------------------------------------------------------------
def _np_class_nll(logp, t, ignore=-1, w=None, eps=0.0, reduction="mean", mean_by="count"):
    """Reference: loops over samples, labels on axis 1. ``mean_by``: "count" (Chainer's
    normalize=True), "batch" (normalize=False) or "weights" (PyTorch's)."""
    lp = np.moveaxis(logp, 1, -1).reshape(-1, logp.shape[1])
    tt = t.reshape(-1)
    c = logp.shape[1]
    w = np.ones(c) if w is None else np.asarray(w)
    losses = np.zeros(len(tt))
    weights = count = 0.0
    for i, label in enumerate(tt):
        if label == ignore:
            continue
        nll = -lp[i, label] * w[label]
        smooth = -(lp[i] * w).sum()
        losses[i] = (1 - eps) * nll + eps / c * smooth
        weights += w[label]
        count += 1
    if reduction == "none":
        return losses.reshape(t.shape)
    if reduction == "sum":
        return losses.sum()
    if mean_by == "weights":
        return losses.sum() / weights
    return losses.sum() / max(count if mean_by == "count" else t.shape[0], 1)


def _np_soft_xent(x, p, w=None, eps=0.0, kl=False):
    """Reference of soft targets: the mean over positions of -sum_c w_c p_c log q_c."""
    c = x.shape[1]
    logq = _np_log_softmax(x, 1)
    p = p * (1 - eps) + eps / c if eps else p
    terms = p * logq - (p * np.log(p + 1e-7) if kl else 0.0)
    if w is not None:
        terms = terms * np.reshape(w, (1, c) + (1,) * (x.ndim - 2))
    return -terms.sum(1).mean()


def _labels(rng, shape, c, ignore=True):
    t = rng.integers(0, c, size=shape)
    if ignore:
        t = np.where(rng.random(shape) < 0.25, -1, t)
    return t


# Variants of the class-label losses: (reduction, class weights, label smoothing, mean_by).
_SCE = [("mean", False, 0.0, "count"), ("sum", True, 0.0, "count"),
        ("none", False, 0.2, "count"), ("mean", True, 0.2, "count"),
        ("mean", True, 0.0, "weights"), ("mean", True, 0.2, "weights"),
        ("mean", True, 0.0, "batch")]
_SOFT = [(False, 0.0, False), (True, 0.3, True)]  # soft targets: (weights, smoothing, kl)


def _sce_sample(rng):
    n, c = int(rng.integers(1, 4)), int(rng.integers(2, 5))
    extra = (int(rng.integers(1, 3)),) if rng.random() < 0.3 else ()
    x = _u(rng, -3, 3, (n, c) + extra)
    cw = tuple(float(v) for v in rng.uniform(0.5, 2.0, c))
    variant = int(rng.integers(0, len(_SCE) + len(_SOFT)))
    if variant >= len(_SCE):
        p = rng.dirichlet(np.ones(c), size=(n,) + extra)
        return x, np.moveaxis(p, -1, 1) * 0.9 + 0.1 / c, cw, variant
    t = _labels(rng, (n,) + extra, c)
    if _SCE[variant][3] == "weights" and np.all(t == -1):
        t.flat[0] = 0  # PyTorch's mean over no label is NaN
    return x, t, cw, variant


def _sce_fn(x, t, cw, variant):
    if variant >= len(_SCE):
        weighted, eps, kl = _SOFT[variant - len(_SCE)]
        return ops.softmax_cross_entropy(
            x, t, class_weight=cw if weighted else None, label_smoothing=eps,
            soft_target_loss="kl-divergence" if kl else "cross-entropy")
    red, weighted, eps, mean_by = _SCE[variant]
    return ops.softmax_cross_entropy(
        x, t, class_weight=cw if weighted else None, label_smoothing=eps, reduction=red,
        normalize=mean_by != "batch", weighted_mean=mean_by == "weights")


def _sce_ref(x, t, cw, variant):
    if variant >= len(_SCE):
        weighted, eps, kl = _SOFT[variant - len(_SCE)]
        return _np_soft_xent(x, t, cw if weighted else None, eps, kl)
    red, weighted, eps, mean_by = _SCE[variant]
    return _np_class_nll(_np_log_softmax(x, 1), t, -1, cw if weighted else None, eps, red,
                         mean_by)


register(OpRecord("softmax_cross_entropy", _sce_fn, _sce_ref, _sce_sample, diff=(0,),
                  errors=[(lambda rng: (np.ones((2, 3)), np.zeros(3, dtype=np.int64), None,
                                        0), ShapeError),
                          (lambda rng: (np.ones((2, 3)), np.zeros(2), None, 0), DTypeError)]))


def _nll_sample(rng):
    while True:
        x, t, cw, variant = _sce_sample(rng)
        if variant < len(_SCE) and not _SCE[variant][2]:
            return _np_log_softmax(x, 1), t, cw, variant


def _nll_fn(lp, t, cw, v):
    red, weighted, _, mean_by = _SCE[v]
    return ops.nll_loss(lp, t, class_weight=cw if weighted else None, reduction=red,
                        normalize=mean_by != "batch", weighted_mean=mean_by == "weights")


def _nll_ref(lp, t, cw, v):
    red, weighted, _, mean_by = _SCE[v]
    return _np_class_nll(lp, t, -1, cw if weighted else None, 0.0, red, mean_by)


register(OpRecord("nll_loss", _nll_fn, _nll_ref, _nll_sample, diff=(0,)))


_RED = ("mean", "sum", "none", "mean")


def _np_reduce(loss, reduction):
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def _sig_ce_sample(rng):
    shape = _shape(rng, 1, 2)
    x = _u(rng, -3, 3, shape)
    r = int(rng.integers(0, 5))
    if r == 4 or (r < 3 and rng.random() < 0.5):
        return x, _labels(rng, shape, 2), r
    return x, _u(rng, 0, 1, shape), r


# r: the reduction of _RED; 3: probabilities with weight and pos_weight (PyTorch's);
# 4: labels with normalize=False (the mean over the batch, Chainer's)
def _sig_ce_fn(x, t, r):
    if r == 3:
        w = np.linspace(0.5, 1.5, x.shape[-1])
        return ops.sigmoid_cross_entropy(x, t, weight=w, pos_weight=w[::-1].copy())
    return ops.sigmoid_cross_entropy(x, t, reduction=_RED[r % 4], normalize=r != 4)


def _sig_ce_ref(x, t, r):
    if r == 3:
        w = np.linspace(0.5, 1.5, x.shape[-1])
        pw = w[::-1]
        return (w * (pw * t * _np_softplus(-x) + (1 - t) * _np_softplus(x))).mean()
    loss = _np_softplus(x) - x * np.where(t < 0, 0, t)
    if t.dtype.kind == "i":
        loss = np.where(t < 0, 0.0, loss)
        if _RED[r % 4] == "mean":
            return loss.sum() / max((t >= 0).sum() if r != 4 else x.shape[0], 1)
    return _np_reduce(loss, _RED[r % 4])


register(OpRecord("sigmoid_cross_entropy", _sig_ce_fn, _sig_ce_ref, _sig_ce_sample,
                  errors=[(lambda rng: (np.ones(3), np.ones(2), 0), ShapeError)]))


def _pair_sample(lo0, hi0, lo1, hi1, gap=None):
    def sample(rng):
        shape = _shape(rng, 1, 3)
        a = _u(rng, lo0, hi0, shape)
        if gap is None:
            b = _u(rng, lo1, hi1, shape)
        else:
            b = a + _away(rng, gap[0], gap[1], shape)
        return a, b, int(rng.integers(0, 3))

    return sample


_PAIR_ERR = [(lambda rng: (np.ones(3), np.ones(2), 0), ShapeError)]
register(OpRecord("binary_cross_entropy",
                  lambda p, t, r: ops.binary_cross_entropy(p, t, reduction=_RED[r]),
                  lambda p, t, r: _np_reduce(-(t * np.log(p) + (1 - t) * np.log1p(-p)),
                                             _RED[r]),
                  _pair_sample(0.25, 0.75, 0.0, 1.0), errors=_PAIR_ERR, eps=1e-4))
register(OpRecord("mean_squared_error",
                  lambda a, b, r: ops.mean_squared_error(a, b, reduction=_RED[r]),
                  lambda a, b, r: _np_reduce((a - b) ** 2, _RED[r]),
                  _pair_sample(-2, 2, -2, 2), errors=_PAIR_ERR))
register(OpRecord("mean_absolute_error",
                  lambda a, b, r: ops.mean_absolute_error(a, b, reduction=_RED[r]),
                  lambda a, b, r: _np_reduce(np.abs(a - b), _RED[r]),
                  _pair_sample(-2, 2, 0, 0, gap=(0.2, 1.0)), errors=_PAIR_ERR))


def _np_huber(x, t, r):
    d = x - t
    loss = np.where(np.abs(d) < 1.0, 0.5 * d * d, np.abs(d) - 0.5)
    return _np_reduce(loss, _RED[r])


def _huber_sample(rng):
    shape = _shape(rng, 1, 3)
    x = _u(rng, -2, 2, shape)
    mag = np.where(rng.random(shape) < 0.5, rng.uniform(0.1, 0.85, shape),
                   rng.uniform(1.15, 2.0, shape))
    return x, x + mag * rng.choice([-1.0, 1.0], size=shape), int(rng.integers(0, 3))


register(OpRecord("huber_loss", lambda x, t, r: ops.huber_loss(x, t, reduction=_RED[r]),
                  _np_huber, _huber_sample, errors=_PAIR_ERR))


def _kl_sample(rng):
    shape = (int(rng.integers(1, 3)), int(rng.integers(2, 4)))
    lq = np.log(_u(rng, 0.1, 1.0, shape))
    p = _u(rng, 0.1, 1.0, shape)
    return lq, p, int(rng.integers(0, 5))


_KL_RED = ("mean", "sum", "none", "batchmean", "log_target")


def _kl_fn(lq, p, r):
    if r == 4:
        return ops.kl_divergence(lq, ops.log(p), log_target=True, reduction="sum")
    return ops.kl_divergence(lq, p, reduction=_KL_RED[r])


def _kl_ref(lq, p, r):
    loss = p * (np.log(p) - lq)
    if r == 3:
        return loss.sum() / lq.shape[0]
    if r == 4:
        return loss.sum()
    return _np_reduce(loss, _KL_RED[r])


register(OpRecord("kl_divergence", _kl_fn, _kl_ref, _kl_sample, errors=_PAIR_ERR))


def _gnll_sample(rng):
    shape = _shape(rng, 1, 2)
    return (_u(rng, -2, 2, shape), _u(rng, -2, 2, shape), _u(rng, -1, 1, shape),
            int(rng.integers(0, 3)))


register(OpRecord(
    "gaussian_nll", lambda x, m, lv, r: ops.gaussian_nll(x, m, lv, reduction=_RED[r]),
    lambda x, m, lv, r: _np_reduce(0.5 * (np.log(2 * np.pi) + lv + (x - m) ** 2 * np.exp(-lv)),
                                   _RED[r]),
    _gnll_sample,
    errors=[(lambda rng: (np.ones(3), np.ones(2), np.ones(3), 0), ShapeError)]))


# -- connections ------------------------------------------------------------------------------
def _linear_sample(rng):
    i, o = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    lead = _shape(rng, 1, 2)
    b = _u(rng, -1, 1, (o,)) if rng.random() < 0.7 else None
    return _u(rng, -1, 1, lead + (i,)), _u(rng, -1, 1, (o, i)), b


register(OpRecord("linear", ops.linear,
                  lambda x, w, b: x @ w.T + (0 if b is None else b), _linear_sample,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((4, 2)), None), ShapeError),
                          (lambda rng: (np.ones((2, 3)), np.ones((4, 3)), np.ones(3)),
                           ShapeError)]))


def _bilinear_sample(rng):
    n, i, j, k = (int(d) for d in rng.integers(1, 4, size=4))
    return (_u(rng, -1, 1, (n, i)), _u(rng, -1, 1, (n, j)), _u(rng, -1, 1, (k, i, j)),
            _u(rng, -1, 1, (k,)))


register(OpRecord("bilinear", ops.bilinear,
                  lambda a, b, w, c: np.einsum("ni,kij,nj->nk", a, w, b) + c, _bilinear_sample,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 2)), np.ones((1, 2, 2)),
                                        None), ShapeError)]))


def _embed_sample(rng):
    n, d = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    pad = bool(rng.integers(0, 2))
    # Rows at padding_idx get no gradient by design (tests/ops/test_nn_connection.py), so
    # the ids drawn here avoid it when it is set.
    ids = rng.integers(1 if pad else 0, n, size=_shape(rng, 1, 2))
    return ids, _u(rng, -1, 1, (n, d)), pad


def _np_embed(ids, w, pad):
    return w[ids]


register(OpRecord("embedding",
                  lambda ids, w, pad: ops.embedding(ids, w, padding_idx=0 if pad else None),
                  _np_embed, _embed_sample,
                  errors=[(lambda rng: (np.ones(2), np.ones((3, 2)), False), DTypeError),
                          (lambda rng: (np.zeros(2, dtype=np.int64), np.ones(3), False),
                           ShapeError)]))


# -- convolution ------------------------------------------------------------------------------
def np_conv(x, w, b=None, stride=1, pad=0, dil=1, groups=1):
    """Direct n-d convolution by loops over output positions (the reference)."""
    nd = x.ndim - 2
    stride, pad, dil = (tuple([v] * nd) if isinstance(v, int) else tuple(v)
                        for v in (stride, pad, dil))
    k = w.shape[2:]
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = tuple((xpad.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1
                for i in range(nd))
    n, o = x.shape[0], w.shape[0]
    cg, og = x.shape[1] // groups, o // groups
    y = np.zeros((n, o) + out)
    axes = tuple(range(1, nd + 2))
    for pos in itertools.product(*(range(v) for v in out)):
        region = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dil[i] * (k[i] - 1) + 1,
                             dil[i]) for i in range(nd))
        for g in range(groups):
            patch = xpad[(slice(None), slice(g * cg, (g + 1) * cg)) + region]
            y[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                patch, w[g * og:(g + 1) * og], axes=(axes, axes))
    if b is not None:
        y = y + b.reshape((o,) + (1,) * nd)
    return y


def np_conv_transpose(x, w, b=None, stride=1, pad=0, out_pad=0, dil=1, groups=1):
    """Transposed convolution by scattering each input position (the reference)."""
    nd = x.ndim - 2
    stride, pad, out_pad, dil = (tuple([v] * nd) if isinstance(v, int) else tuple(v)
                                 for v in (stride, pad, out_pad, dil))
    k = w.shape[2:]
    size = tuple((x.shape[2 + i] - 1) * stride[i] - 2 * pad[i] + dil[i] * (k[i] - 1) + 1
                 + out_pad[i] for i in range(nd))
    n, cin = x.shape[0], x.shape[1]
    cg_in, cg_out = cin // groups, w.shape[1]
    full = np.zeros((n, cg_out * groups) + tuple(s + 2 * p for s, p in zip(size, pad)))
    for pos in itertools.product(*(range(v) for v in x.shape[2:])):
        region = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dil[i] * (k[i] - 1) + 1,
                             dil[i]) for i in range(nd))
        for g in range(groups):
            xin = x[(slice(None), slice(g * cg_in, (g + 1) * cg_in)) + pos]
            contrib = np.tensordot(xin, w[g * cg_in:(g + 1) * cg_in], axes=([1], [0]))
            key = (slice(None), slice(g * cg_out, (g + 1) * cg_out)) + region
            full[key] += contrib
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, size))
    y = full[crop]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * nd)
    return y


def _conv_config(rng, nd):
    groups = int(rng.choice([1, 1, 2]))
    cin = 2 * groups if groups > 1 else int(rng.integers(1, 4))
    cout = groups * int(rng.integers(1, 3))
    side = {1: 5, 2: 4, 3: 3}[nd]
    kmax = 2 if nd == 3 else 3
    k = tuple(int(v) for v in rng.integers(1, kmax + 1, size=nd))
    stride = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    dil = tuple(int(v) for v in rng.integers(1, 3, size=nd)) if nd < 3 else (1,) * nd
    pad = tuple(int(rng.integers(0, kk)) for kk in k)
    spatial = tuple(max(side, d * (kk - 1) + 1) for d, kk in zip(dil, k))
    return groups, cin, cout, k, stride, dil, pad, spatial


def _winograd_sample(rng):
    """A 3 x 3 convolution at stride 1 with channels and output sizes that NumPy's compiled
    Winograd loops take in float32 (``portagrad.xp._conv_fast.WINOGRAD_MIN_CHANNELS`` and
    ``WINOGRAD_MIN_SIZE``), odd sizes among them."""
    cin, cout = (int(v) for v in rng.integers(8, 10, size=2))
    pad = tuple(int(v) for v in rng.integers(0, 3, size=2))
    spatial = tuple(10 - 2 * p + int(rng.integers(0, 2)) for p in pad)
    x = _u(rng, -1, 1, (2, cin) + spatial)
    w = _u(rng, -1, 1, (cout, cin, 3, 3))
    b = _u(rng, -1, 1, (cout,)) if rng.random() < 0.5 else None
    return x, w, b, ((1, 1), pad, (1, 1), 1)


def _conv_sample_nd(nd):
    def sample(rng):
        if nd == 2 and rng.random() < 0.4:
            return _winograd_sample(rng)
        groups, cin, cout, k, stride, dil, pad, spatial = _conv_config(rng, nd)
        x = _u(rng, -1, 1, (2, cin) + spatial)
        w = _u(rng, -1, 1, (cout, cin // groups) + k)
        b = _u(rng, -1, 1, (cout,)) if rng.random() < 0.5 else None
        return x, w, b, (stride, pad, dil, groups)

    return sample


def _conv_any_sample(rng):
    return _conv_sample_nd(int(rng.integers(1, 4)))(rng)


def _conv_fn(name):
    f = getattr(ops, name)

    def fn(x, w, b, cfg):
        stride, pad, dil, groups = cfg
        return f(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups)

    return fn


def _conv_ref(x, w, b, cfg):
    stride, pad, dil, groups = cfg
    return np_conv(x, w, b, stride, pad, dil, groups)


_CONV_ERR = [(lambda rng: (np.ones((2, 3, 4, 4)), np.ones((2, 2, 3, 3)), None,
                           (1, 0, 1, 1)), ShapeError),
             (lambda rng: (np.ones((2, 3, 4)), np.ones((2, 3, 3, 3)), None, (1, 0, 1, 1)),
              ShapeError)]
_CONV_TOL = {"float32": (1e-5, 1e-4), "float64": (1e-10, 1e-8)}
register(OpRecord("conv", _conv_fn("conv"), _conv_ref, _conv_any_sample,
                  errors=_CONV_ERR, tol=_CONV_TOL))
for _nd in (1, 2, 3):
    register(OpRecord(f"conv{_nd}d", _conv_fn(f"conv{_nd}d"), _conv_ref,
                      _conv_sample_nd(_nd), tol=_CONV_TOL))


def _convt_sample_nd(nd):
    def sample(rng):
        groups, cin, cout, k, stride, dil, pad, _ = _conv_config(rng, nd)
        side = {1: 3, 2: 3, 3: 2}[nd]
        x = _u(rng, -1, 1, (2, cin) + (side,) * nd)
        w = _u(rng, -1, 1, (cin, cout // groups) + k)
        b = _u(rng, -1, 1, (cout,)) if rng.random() < 0.5 else None
        out_pad = tuple(int(rng.integers(0, s)) for s in stride)
        pad = tuple(min(p, (side - 1) * s // 2) for p, s in zip(pad, stride))
        return x, w, b, (stride, pad, out_pad, dil, groups)

    return sample


def _convt_any_sample(rng):
    return _convt_sample_nd(int(rng.integers(1, 4)))(rng)


def _convt_fn(name):
    f = getattr(ops, name)

    def fn(x, w, b, cfg):
        stride, pad, out_pad, dil, groups = cfg
        return f(x, w, b, stride=stride, padding=pad, output_padding=out_pad, dilation=dil,
                 groups=groups)

    return fn


def _convt_ref(x, w, b, cfg):
    stride, pad, out_pad, dil, groups = cfg
    return np_conv_transpose(x, w, b, stride, pad, out_pad, dil, groups)


register(OpRecord("conv_transpose", _convt_fn("conv_transpose"), _convt_ref,
                  _convt_any_sample, tol=_CONV_TOL,
                  errors=[(lambda rng: (np.ones((2, 3, 4, 4)), np.ones((2, 2, 3, 3)), None,
                                        (1, 0, 0, 1, 1)), ShapeError)]))
for _nd in (1, 2, 3):
    register(OpRecord(f"conv_transpose{_nd}d", _convt_fn(f"conv_transpose{_nd}d"),
                      _convt_ref, _convt_sample_nd(_nd), tol=_CONV_TOL))


# -- noise ------------------------------------------------------------------------------------
def _dropout_fn(x):
    from portagrad.random import Generator

    return ops.dropout(x, 0.4, train=True, generator=Generator(7))


def _dropout_ref(x):
    from portagrad.random import Generator

    keep = Generator(7).bernoulli(x.shape, 0.6)
    return np.where(keep, x / 0.6, 0.0)


_MASK_SKIP = {"torch": "the mask comes from torch's generator, not the host stream the "
                       "reference replays (tests/ops/test_nn_noise.py)",
              "cupy": "the mask comes from CuPy's generator, not the host stream"}
register(OpRecord("dropout", _dropout_fn, _dropout_ref,
                  lambda rng: (_u(rng, -2, 2, _shape(rng, 1, 3)),), errors=_INT_ERR,
                  skip=_MASK_SKIP))


def _alpha_dropout_fn(x):
    from portagrad.random import Generator

    return ops.alpha_dropout(x, 0.3, train=True, generator=Generator(8),
                             noise_shape=x.shape[:1] + (1,) * (x.ndim - 1))


def _alpha_dropout_ref(x):
    from portagrad.random import Generator

    keep = Generator(8).bernoulli(x.shape[:1] + (1,) * (x.ndim - 1), 0.7)
    alpha = -_SELU_A * _SELU_S
    a = (0.7 * (1 + 0.3 * alpha * alpha)) ** -0.5
    return np.where(keep, x, alpha) * a - a * alpha * 0.3


register(OpRecord("alpha_dropout", _alpha_dropout_fn, _alpha_dropout_ref,
                  lambda rng: (_u(rng, -2, 2, _shape(rng, 1, 3)),), errors=_INT_ERR,
                  skip=_MASK_SKIP))



# -- pooling ----------------------------------------------------------------------------------
def _pool_geometry(shape, k, s, p, d, ceil):
    """Output sizes and right padding of a pooling (PyTorch's documented formulas)."""
    out, extra = [], []
    for size, kk, ss, pp, dd in zip(shape, k, s, p, d):
        eff = dd * (kk - 1) + 1
        o = (math.ceil if ceil else math.floor)((size + 2 * pp - eff) / ss) + 1
        if ceil and (o - 1) * ss >= size + pp:
            o -= 1
        out.append(o)
        extra.append(max(0, (o - 1) * ss + eff - size - 2 * pp))
    return tuple(out), tuple(extra)


def np_max_pool(x, k, s, p, d, ceil):
    nd = x.ndim - 2
    out, extra = _pool_geometry(x.shape[2:], k, s, p, d, ceil)
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(pp, pp + e) for pp, e in zip(p, extra)],
                  constant_values=-np.inf)
    y = np.zeros(x.shape[:2] + out)
    for pos in itertools.product(*(range(o) for o in out)):
        region = tuple(slice(pos[i] * s[i], pos[i] * s[i] + d[i] * (k[i] - 1) + 1, d[i])
                       for i in range(nd))
        y[(slice(None), slice(None)) + pos] = xpad[(slice(None), slice(None)) + region].max(
            axis=tuple(range(2, 2 + nd)))
    return y


def np_avg_pool(x, k, s, p, ceil, include_pad):
    nd = x.ndim - 2
    shape = x.shape[2:]
    out, extra = _pool_geometry(shape, k, s, p, (1,) * nd, ceil)
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(pp, pp + e) for pp, e in zip(p, extra)])
    y = np.zeros(x.shape[:2] + out)
    for pos in itertools.product(*(range(o) for o in out)):
        region = tuple(slice(pos[i] * s[i], pos[i] * s[i] + k[i]) for i in range(nd))
        count = 1
        for i in range(nd):
            start = pos[i] * s[i] - p[i]
            end = min(start + k[i], shape[i] + p[i])
            count *= (end - start) if include_pad else (min(end, shape[i]) - max(start, 0))
        y[(slice(None), slice(None)) + pos] = xpad[(slice(None), slice(None)) + region].sum(
            axis=tuple(range(2, 2 + nd))) / count
    return y


def _distinct(rng, shape):
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(0, 0.1, size)).reshape(shape) - 1.0


def _pool_sample_nd(nd, kind):
    def sample(rng):
        side = {1: 5, 2: 4, 3: 3}[nd]
        k = tuple(int(v) for v in rng.integers(1, 3 if nd == 3 else 4, size=nd))
        s = tuple(int(v) for v in rng.integers(1, 3, size=nd))
        p = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
        d = tuple(int(v) for v in rng.integers(1, 3, size=nd)) if kind == "max" else (1,) * nd
        spatial = tuple(max(side, dd * (kk - 1) + 1) for dd, kk in zip(d, k))
        x = _distinct(rng, (2, 2) + spatial)
        return x, (k, s, p, d, bool(rng.integers(0, 2)), bool(rng.integers(0, 2)))

    return sample


def _pool_fn(name):
    f = getattr(ops, name)

    def fn(x, cfg):
        k, s, p, d, ceil, include = cfg
        if "max" in name:
            return f(x, k, s, p, d, ceil)
        return f(x, k, s, p, ceil, include)

    return fn


def _pool_ref(kind):
    def ref(x, cfg):
        k, s, p, d, ceil, include = cfg
        return np_max_pool(x, k, s, p, d, ceil) if kind == "max" else np_avg_pool(
            x, k, s, p, ceil, include)

    return ref


for _kind in ("max", "avg"):
    register(OpRecord(f"{_kind}_pool", _pool_fn(f"{_kind}_pool"), _pool_ref(_kind),
                      lambda rng, _k=_kind: _pool_sample_nd(int(rng.integers(1, 4)), _k)(rng),
                      errors=[(lambda rng: (np.ones((2, 3)), ((2,), (1,), (0,), (1,), False,
                                                              False)), ShapeError)]))
    for _nd in (1, 2, 3):
        register(OpRecord(f"{_kind}_pool{_nd}d", _pool_fn(f"{_kind}_pool{_nd}d"),
                          _pool_ref(_kind), _pool_sample_nd(_nd, _kind),
                          ))


def np_adaptive_avg(x, size):
    nd = x.ndim - 2
    y = x
    for i in range(nd):
        length, o = y.shape[2 + i], size[i]
        parts = []
        for q in range(o):
            start, end = (q * length) // o, -((-(q + 1) * length) // o)
            idx = [slice(None)] * y.ndim
            idx[2 + i] = slice(start, end)
            parts.append(y[tuple(idx)].mean(axis=2 + i, keepdims=True))
        y = np.concatenate(parts, axis=2 + i)
    return y


def _adaptive_sample(rng):
    nd = int(rng.integers(1, 3))
    spatial = tuple(int(v) for v in rng.integers(2, 6, size=nd))
    size = tuple(int(rng.integers(1, s + 1)) for s in spatial)
    return _u(rng, -1, 1, (2, 2) + spatial), size


register(OpRecord("adaptive_avg_pool", lambda x, sz: ops.adaptive_avg_pool(x, sz),
                  np_adaptive_avg, _adaptive_sample,
                  errors=[(lambda rng: (np.ones(3), (1,)), ShapeError)]))
register(OpRecord("global_avg_pool", ops.global_avg_pool,
                  lambda x: x.reshape(x.shape[0], x.shape[1], -1).mean(axis=2),
                  lambda rng: (_u(rng, -1, 1, (2, 2) + _shape(rng, 1, 2)),),
                  errors=[(lambda rng: (np.ones(3),), ShapeError)]))


def np_unpool(x, k, s, p):
    nd = x.ndim - 2
    size = tuple((n - 1) * ss - 2 * pp + kk for n, ss, pp, kk in zip(x.shape[2:], s, p, k))
    full = np.zeros(x.shape[:2] + tuple(sz + 2 * pp for sz, pp in zip(size, p)))
    for pos in itertools.product(*(range(v) for v in x.shape[2:])):
        region = tuple(slice(pos[i] * s[i], pos[i] * s[i] + k[i]) for i in range(nd))
        full[(slice(None), slice(None)) + region] += x[(slice(None), slice(None)) + pos][
            (...,) + (None,) * nd]
    return full[(slice(None), slice(None)) + tuple(slice(pp, pp + sz) for pp, sz in
                                                  zip(p, size))]


def _unpool_sample(rng):
    nd = int(rng.integers(1, 3))
    k = tuple(int(v) for v in rng.integers(1, 4, size=nd))
    s = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    p = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
    spatial = tuple(int(v) for v in rng.integers(2, 4, size=nd))
    return _u(rng, -1, 1, (2, 2) + spatial), (k, s, p)


register(OpRecord("unpool", lambda x, cfg: ops.unpool(x, cfg[0], cfg[1], cfg[2]),
                  lambda x, cfg: np_unpool(x, *cfg), _unpool_sample,
                  errors=[(lambda rng: (np.ones(3), ((2,), (2,), (0,))), ShapeError)]))


# -- normalization ----------------------------------------------------------------------------
def _np_norm(x, axes, eps):
    mu = x.mean(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def _spread(rng, shape):
    """Values at least 0.9 apart: every normalized group has a variance well above eps,
    so derivatives stay moderate and finite differences accurate."""
    size = int(np.prod(shape))
    v = rng.permutation(size) * 1.0 + rng.uniform(0, 0.1, size)
    return (v - v.mean()).reshape(shape)


def _bshape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _bn_sample(rng):
    shape = (3, 2) + _shape(rng, 0, 2)
    return _spread(rng, shape), _u(rng, 0.5, 1.5, (2,)), _u(rng, -1, 1, (2,))


register(OpRecord(
    "batch_norm", lambda x, w, b: ops.batch_norm(x, w, b, train=True, eps=1e-3),
    lambda x, w, b: _np_norm(x, (0,) + tuple(range(2, x.ndim)), 1e-3) * w.reshape(_bshape(x))
    + b.reshape(_bshape(x)), _bn_sample,
    errors=[(lambda rng: (np.ones((3, 2)), np.ones(3), None), ShapeError)]))


def _fbn_sample(rng):
    x, w, b = _bn_sample(rng)
    return x, w, b, _u(rng, -1, 1, (2,)), _u(rng, 0.5, 2, (2,))


register(OpRecord(
    "fixed_batch_norm", lambda x, w, b, m, v: ops.fixed_batch_norm(x, w, b, m, v, eps=1e-3),
    lambda x, w, b, m, v: (x - m.reshape(_bshape(x))) / np.sqrt(v.reshape(_bshape(x)) + 1e-3)
    * w.reshape(_bshape(x)) + b.reshape(_bshape(x)), _fbn_sample,
    errors=[(lambda rng: (np.ones((3, 2)), None, None, np.ones(3), np.ones(2)), ShapeError)]))


def _ln_sample(rng):
    lead = _shape(rng, 1, 2)
    ns = tuple(int(v) for v in rng.integers(2, 4, size=int(rng.integers(1, 3))))
    return _spread(rng, lead + ns), _u(rng, 0.5, 1.5, ns), _u(rng, -1, 1, ns)


register(OpRecord(
    "layer_norm", lambda x, w, b: ops.layer_norm(x, w.shape, w, b, eps=1e-3),
    lambda x, w, b: _np_norm(x, tuple(range(x.ndim - w.ndim, x.ndim)), 1e-3) * w + b,
    _ln_sample,
    errors=[(lambda rng: (np.ones((2, 3)), np.ones(4), np.ones(4)), ShapeError)]))


def _gn_sample(rng):
    g = int(rng.integers(1, 3))
    c = 2 * g
    return (_spread(rng, (2, c) + _shape(rng, 1, 2)), g, _u(rng, 0.5, 1.5, (c,)),
            _u(rng, -1, 1, (c,)))


def _np_gn(x, g, w, b):
    y = _np_norm(x.reshape(x.shape[0], g, -1), (2,), 1e-3).reshape(x.shape)
    return y * w.reshape(_bshape(x)) + b.reshape(_bshape(x))


register(OpRecord("group_norm", lambda x, g, w, b: ops.group_norm(x, g, w, b, eps=1e-3),
                  _np_gn, _gn_sample))
register(OpRecord(
    "instance_norm", lambda x, w, b: ops.instance_norm(x, w, b, eps=1e-3),
    lambda x, w, b: _np_norm(x, tuple(range(2, x.ndim)), 1e-3) * w.reshape(_bshape(x))
    + b.reshape(_bshape(x)),
    lambda rng: (_spread(rng, (2, 2, 2) + _shape(rng, 0, 1)), _u(rng, 0.5, 1.5, (2,)),
                 _u(rng, -1, 1, (2,))),
    errors=[(lambda rng: (np.ones((2, 2)), None, None), ShapeError)]))


def np_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    out = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        s = (x[:, lo:hi] ** 2).sum(axis=1)
        out[:, ch] = x[:, ch] / (k + alpha / size * s) ** beta
    return out


register(OpRecord(
    "local_response_norm", lambda x, n: ops.local_response_norm(x, n, 0.5, 0.75, 1.0),
    lambda x, n: np_lrn(x, n, 0.5, 0.75, 1.0),
    lambda rng: (_u(rng, -2, 2, (2, 4) + _shape(rng, 0, 2)), int(rng.integers(1, 5)))))
register(OpRecord(
    "normalize", lambda x, p: ops.normalize(x, axis=1, ord=p),
    lambda x, p: x / (np.abs(x) ** p).sum(axis=1, keepdims=True) ** (1 / p),
    lambda rng: (_away(rng, 0.3, 2, (2, 3) + _shape(rng, 0, 1)), float(rng.choice([2, 3]))),
    diff=(0,)))


def _rms_sample(rng):
    x, w, _ = _ln_sample(rng)
    return x, w


register(OpRecord(
    "rms_norm", lambda x, w: ops.rms_norm(x, w.shape, w, eps=1e-3),
    lambda x, w: x / np.sqrt((x * x).mean(axis=tuple(range(x.ndim - w.ndim, x.ndim)),
                                          keepdims=True) + 1e-3) * w,
    _rms_sample, errors=[(lambda rng: (np.ones((2, 3)), np.ones(4)), ShapeError)]))


# -- recurrent --------------------------------------------------------------------------------
def _np_lstm(c, g):
    i, f, gg, o = np.split(g, 4, axis=-1)
    c_new = _np_sigmoid(f) * c + _np_sigmoid(i) * np.tanh(gg)
    return c_new, _np_sigmoid(o) * np.tanh(c_new)


def _np_gru(xg, h, whh, bhh):
    hg = h @ whh.T + bhh
    xr, xz, xn = np.split(xg, 3, axis=-1)
    hr, hz, hn = np.split(hg, 3, axis=-1)
    r, z = _np_sigmoid(xr + hr), _np_sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h


register(OpRecord("lstm", ops.lstm, _np_lstm,
                  lambda rng: (_u(rng, -1, 1, (2, 2)), _u(rng, -2, 2, (2, 8))),
                  errors=[(lambda rng: (np.ones((2, 2)), np.ones((2, 6))), ShapeError)]))


def _cell_sample(k, with_c):
    def sample(rng):
        n, i, h = 2, int(rng.integers(1, 3)), 2
        args = [_u(rng, -1, 1, (n, i)), _u(rng, -1, 1, (n, h))]
        if with_c:
            args.append(_u(rng, -1, 1, (n, h)))
        args += [_u(rng, -1, 1, (k * h, i)), _u(rng, -1, 1, (k * h, h)),
                 _u(rng, -0.5, 0.5, (k * h,)), _u(rng, -0.5, 0.5, (k * h,))]
        return tuple(args)

    return sample


def _np_lstm_cell(x, h, c, wih, whh, bih, bhh):
    c_new, h_new = _np_lstm(c, x @ wih.T + bih + h @ whh.T + bhh)
    return h_new, c_new


register(OpRecord("lstm_cell", ops.lstm_cell, _np_lstm_cell, _cell_sample(4, True)))
register(OpRecord("gru_cell", ops.gru_cell,
                  lambda x, h, wih, whh, bih, bhh: _np_gru(x @ wih.T + bih, h, whh, bhh),
                  _cell_sample(3, False)))


def _seq_sample(k, with_c):
    def sample(rng):
        t, n, i, h = 3, 2, 2, 2
        lengths = rng.integers(1, t + 1, size=n)
        mask = np.arange(t)[:, None] < lengths[None, :] if rng.random() < 0.6 else None
        args = [_u(rng, -1, 1, (t, n, i)), _u(rng, -1, 1, (n, h))]
        if with_c:
            args.append(_u(rng, -1, 1, (n, h)))
        args += [_u(rng, -1, 1, (k * h, i)), _u(rng, -1, 1, (k * h, h)),
                 _u(rng, -0.5, 0.5, (k * h,)), _u(rng, -0.5, 0.5, (k * h,)), mask]
        return tuple(args)

    return sample


def _np_run(xs, states, mask, step):
    ys = []
    for t in range(xs.shape[0]):
        new = step(xs[t], states)
        if mask is not None:
            m = mask[t][:, None]
            new = [np.where(m, a, b) for a, b in zip(new, states)]
            ys.append(np.where(m, new[0], 0.0))
        else:
            ys.append(new[0])
        states = new
    return np.stack(ys), states


def _np_n_step_lstm(xs, h0, c0, wih, whh, bih, bhh, mask):
    def step(x, s):
        return list(_np_lstm_cell(x, s[0], s[1], wih, whh, bih, bhh))

    ys, (h, c) = _np_run(xs, [h0, c0], mask, step)
    return ys, h, c


def _np_n_step_gru(xs, h0, wih, whh, bih, bhh, mask):
    ys, (h,) = _np_run(xs, [h0], mask,
                       lambda x, s: [_np_gru(x @ wih.T + bih, s[0], whh, bhh)])
    return ys, h


register(OpRecord("n_step_lstm",
                  lambda xs, h, c, wih, whh, bih, bhh, m: ops.n_step_lstm(
                      xs, h, c, wih, whh, bih, bhh, mask=m),
                  _np_n_step_lstm, _seq_sample(4, True),
                  errors=[(lambda rng: (np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2)),
                                        np.ones((8, 2)), np.ones((8, 2)), None, None, None),
                           ShapeError)]))
register(OpRecord("n_step_gru",
                  lambda xs, h, wih, whh, bih, bhh, m: ops.n_step_gru(
                      xs, h, wih, whh, bih, bhh, mask=m),
                  _np_n_step_gru, _seq_sample(3, False)))
