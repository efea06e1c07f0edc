"""Records of the functions behind PyTorch's fractional max pooling, EmbeddingBag,
MultiheadAttention and AdaptiveLogSoftmaxWithLoss.

References are written independently in NumPy float64 (loops over windows, bags, heads
and rows).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from portagrad import DTypeError, PortagradValueError, ShapeError


def _distinct(rng, shape):
    """Values at least 0.3 apart: no ties for a maximum, so it is smooth there."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(0, 0.1, size)).reshape(shape) - 1.0


# -- fractional max pooling -----------------------------------------------------------------
def _starts(u, n, k, o):
    if o == 1:
        return [n - k]
    alpha = (n - k) / (o - 1)
    return [int(math.floor((i + u) * alpha)) - int(math.floor(u * alpha))
            for i in range(o - 1)] + [n - k]


def np_fractional_max_pool(x, samples, k, out, order):
    nd = x.ndim - 2
    y = np.zeros(x.shape[:2] + tuple(out))
    for b, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        seqs = [_starts(samples[b, c, order[i]], x.shape[2 + i], k[i], out[i])
                for i in range(nd)]
        for pos in itertools.product(*(range(o) for o in out)):
            box = tuple(slice(seqs[i][pos[i]], seqs[i][pos[i]] + k[i]) for i in range(nd))
            y[(b, c) + pos] = x[(b, c) + box].max()
    return y


def _fmp_sample(nd):
    def sample(rng):
        k = tuple(int(v) for v in rng.integers(1, 3, size=nd))
        spatial = tuple(int(v) for v in rng.integers(3, 6 if nd < 3 else 5, size=nd))
        out = tuple(int(rng.integers(1, n - kk + 2)) for n, kk in zip(spatial, k))
        x = _distinct(rng, (2, 2) + spatial)
        return x, rng.uniform(0, 0.999, size=(2, 2, nd)), (k, out)
    return sample


_FMP_ERRORS = [
    (lambda rng: (np.ones((1, 1, 4, 4)), np.full((1, 1, 2), 0.5), ((2, 2), (4, 4))),
     ShapeError),
    (lambda rng: (np.ones((1, 1, 4, 4)), np.full((1, 1, 2), 1.5), ((2, 2), (2, 2))),
     PortagradValueError),
    (lambda rng: (np.ones((1, 1, 4, 4)), np.full((2, 1, 2), 0.5), ((2, 2), (2, 2))),
     ShapeError),
]

register(OpRecord(
    "fractional_max_pool",
    lambda x, s, cfg: ops.fractional_max_pool(x, cfg[0], cfg[1], samples=s),
    lambda x, s, cfg: np_fractional_max_pool(x, s, cfg[0], cfg[1], range(x.ndim - 2)),
    lambda rng: _fmp_sample(int(rng.integers(1, 4)))(rng), diff=(0,), errors=_FMP_ERRORS))
register(OpRecord(
    "fractional_max_pool2d",
    lambda x, s, cfg: ops.fractional_max_pool2d(x, cfg[0], cfg[1], _random_samples=s),
    lambda x, s, cfg: np_fractional_max_pool(x, s, cfg[0], cfg[1], (1, 0)),
    _fmp_sample(2), diff=(0,), errors=_FMP_ERRORS))
register(OpRecord(
    "fractional_max_pool3d",
    lambda x, s, cfg: ops.fractional_max_pool3d(x, cfg[0], cfg[1], _random_samples=s),
    lambda x, s, cfg: np_fractional_max_pool(x, s, cfg[0], cfg[1], (0, 1, 2)),
    _fmp_sample(3), diff=(0,)))


# -- bags of embeddings -----------------------------------------------------------------------
def np_embedding_bag(ids, w, offsets, psw, cfg):
    mode, pad = cfg
    starts = list(offsets)
    ends = starts[1:] + [len(ids)]
    out = np.zeros((len(starts), w.shape[1]))
    for b, (s, e) in enumerate(zip(starts, ends)):
        rows = [w[ids[j]] * (psw[j] if mode == "sum" else 1.0) for j in range(s, e)
                if ids[j] != pad]
        if not rows:
            continue
        stack = np.stack(rows)
        out[b] = {"sum": stack.sum(0), "mean": stack.mean(0), "max": stack.max(0)}[mode]
    return out


def _bag_sample(rng):
    n = int(rng.integers(1, 8))
    ids = rng.integers(0, 5, size=n)
    cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(0, 3))))
    offsets = np.concatenate([[0], cuts]).astype(np.int64)
    mode = ("sum", "mean", "max")[int(rng.integers(0, 3))]
    pad = int(rng.integers(-1, 5))
    return ids, _distinct(rng, (5, 3)), offsets, rng.uniform(0.5, 1.5, size=n), (mode, pad)


def _bag_fn(ids, w, offsets, psw, cfg):
    mode, pad = cfg
    return ops.embedding_bag(ids, w, offsets, mode=mode,
                             per_sample_weights=psw if mode == "sum" else None,
                             padding_idx=None if pad < 0 else pad)


register(OpRecord(
    "embedding_bag", _bag_fn, np_embedding_bag, _bag_sample, diff=(1, 3),
    errors=[(lambda rng: (np.zeros(3, np.int64), np.ones((4, 2)), np.array([1]), np.ones(3),
                          ("sum", -1)), PortagradValueError),
            (lambda rng: (np.zeros(3), np.ones((4, 2)), np.array([0]), np.ones(3),
                          ("sum", -1)), DTypeError)]))


# -- multi-head attention ---------------------------------------------------------------------
def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_multi_head_attention(q, k, v, w_in, b_in, w_out, b_out, kpm, heads):
    tgt, n, e = q.shape
    hd = e // heads
    pq, pk, pv = (x @ w_in[i * e:(i + 1) * e].T + b_in[i * e:(i + 1) * e]
                  for i, x in enumerate((q, k, v)))
    out = np.zeros((tgt, n, e))
    weights = np.zeros((n, heads, tgt, k.shape[0]))
    for b in range(n):
        for h in range(heads):
            sl = slice(h * hd, (h + 1) * hd)
            scores = pq[:, b, sl] @ pk[:, b, sl].T / math.sqrt(hd)
            scores = scores + np.where(kpm[b], -np.inf, 0.0)
            a = _softmax(scores)
            weights[b, h] = a
            out[:, b, sl] = a @ pv[:, b, sl]
    return np.concatenate([(out @ w_out.T + b_out).ravel(), weights.mean(1).ravel()])


def _mha_sample(rng):
    # Fixed shapes (a masked key varies): JAX compiles each new shape once.
    e, heads, tgt, src, n = 4, 2, 2, 3, 2
    kpm = np.zeros((n, src), bool)
    kpm[1, -1] = bool(rng.integers(0, 2))
    u = lambda *s: rng.uniform(-1, 1, size=s)  # noqa: E731
    return (u(tgt, n, e), u(src, n, e), u(src, n, e), u(3 * e, e), u(3 * e), u(e, e), u(e),
            kpm, heads)


def _mha_fn(q, k, v, w_in, b_in, w_out, b_out, kpm, heads):
    out, weights = ops.multi_head_attention(q, k, v, heads, w_in, b_in, w_out, b_out,
                                            key_padding_mask=kpm)
    return ops.concat([ops.reshape(out, (-1,)), ops.reshape(weights, (-1,))])


register(OpRecord(
    "multi_head_attention", _mha_fn, np_multi_head_attention, _mha_sample,
    diff=(0, 1, 2, 3, 4, 5, 6),
    errors=[(lambda rng: (np.ones((2, 1, 4)), np.ones((2, 1, 4)), np.ones((2, 1, 4)),
                          np.ones((12, 4)), np.ones(12), np.ones((4, 4)), np.ones(4),
                          np.zeros((1, 2), bool), 3), PortagradValueError)]))


# -- adaptive softmax ---------------------------------------------------------------------------
def _np_log_softmax(a):
    m = a.max(1, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(1, keepdims=True))


def np_adaptive_log_prob(x, head, p1, o1, p2, o2, cuts):
    h = _np_log_softmax(x @ head.T)
    parts = [h[:, :cuts[0]]]
    for i, (p, o) in enumerate(((p1, o1), (p2, o2))):
        parts.append(_np_log_softmax((x @ p.T) @ o.T) + h[:, cuts[0] + i:cuts[0] + i + 1])
    return np.concatenate(parts, axis=1)


def _asm_sample(rng):
    cuts = [2, 4, 7]
    n = 4  # a fixed shape (the targets vary): JAX compiles each new shape once
    u = lambda *s: rng.uniform(-1, 1, size=s)  # noqa: E731
    return (u(n, 3), rng.integers(0, 7, size=n), u(4, 3), u(2, 3), u(2, 2), u(1, 3), u(3, 1),
            cuts)


register(OpRecord(
    "adaptive_log_softmax_with_loss",
    lambda x, t, head, p1, o1, p2, o2, cuts: ops.adaptive_log_softmax_with_loss(
        x, t, head, [(p1, o1), (p2, o2)], cuts)[0],
    lambda x, t, head, p1, o1, p2, o2, cuts: np_adaptive_log_prob(
        x, head, p1, o1, p2, o2, cuts)[np.arange(len(t)), t],
    _asm_sample, diff=(0, 2, 3, 4, 5, 6),
    errors=[(lambda rng: (np.ones((2, 3)), np.array([0, 7]), np.ones((4, 3)), np.ones((2, 3)),
                          np.ones((2, 2)), np.ones((1, 3)), np.ones((3, 1)), [2, 4, 7]),
             PortagradValueError)]))
register(OpRecord(
    "adaptive_log_prob",
    lambda x, head, p1, o1, p2, o2, cuts: ops.adaptive_log_prob(
        x, head, [(p1, o1), (p2, o2)], cuts),
    np_adaptive_log_prob,
    lambda rng: (lambda a: (a[0],) + a[2:])(_asm_sample(rng)),
    errors=[(lambda rng: (np.ones(3), np.ones((4, 3)), np.ones((2, 3)), np.ones((2, 2)),
                          np.ones((1, 3)), np.ones((3, 1)), [2, 4, 7]), ShapeError)]))
