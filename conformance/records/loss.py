"""Records of the losses and distances with PyTorch's conventions: CTC on given
log-probabilities, the Poisson likelihood, the margin losses and the distances.

References are NumPy float64 written from the definitions (loops where the indexing is
involved); samples keep every hinge and absolute value at least a step away from its kink.
"""

from __future__ import annotations

import itertools

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _away, _u
from portagrad import DTypeError, ShapeError

_RED = ("mean", "sum", "none")


def _reduce(loss, r):
    return loss if _RED[r] == "none" else loss.sum() if _RED[r] == "sum" else loss.mean()


def _rec(name, fn, ref, sample, **kw):
    register(OpRecord(name, fn, ref, sample, **kw))


# -- CTC on log-probabilities taken as given ---------------------------------------------
def _ctc_sample(rng):
    # unnormalized on purpose: ctc_loss does not normalize
    lp = _u(rng, -2.0, 0.5, (3, 2, 3))
    return lp, np.array([[1, 2], [2, 2]]), np.array([3, 2]), np.array([2, 1]), int(
        rng.integers(0, 3))


def _ctc_fn(lp, t, il, tl, r):
    return ops.ctc_loss(lp, t, il, tl, reduction=_RED[r])


def _ctc_ref(lp, t, il, tl, r):
    """Brute force: the log of the summed probability of every alignment that collapses
    to the labels."""
    out = []
    for b in range(lp.shape[1]):
        target = list(t[b, :tl[b]])
        total = []
        for path in itertools.product(range(3), repeat=int(il[b])):
            collapsed = [q for i, q in enumerate(path) if q != 0 and (i == 0 or
                                                                      path[i - 1] != q)]
            if collapsed == target:
                total.append(sum(lp[i, b, q] for i, q in enumerate(path)))
        out.append(-np.logaddexp.reduce(total))
    out = np.array(out)
    if _RED[r] == "mean":
        return (out / np.maximum(tl, 1)).mean()
    return _reduce(out, r)


_rec("ctc_loss", _ctc_fn, _ctc_ref, _ctc_sample, diff=(0,),
     errors=[(lambda rng: (np.zeros((2, 1, 1, 3)), np.array([[1]]), np.array([2]),
                           np.array([1]), 0), ShapeError),
             (lambda rng: (np.zeros((2, 1, 3)), np.array([[1.0]]), np.array([2]),
                           np.array([1]), 0), DTypeError)])


# -- Poisson likelihood -----------------------------------------------------------------
def _poisson_sample(rng):
    shape = (2, 3)
    variant = int(rng.integers(0, 4))
    x = _u(rng, -1, 1, shape) if variant % 2 == 0 else _u(rng, 0.3, 2.0, shape)
    # counts away from 1, where Stirling's term starts
    t = rng.choice([0.0, 2.0, 3.5], size=shape) + _u(rng, 0, 0.2, shape)
    return x, t, variant, int(rng.integers(0, 3))


def _poisson_fn(x, t, variant, r):
    return ops.poisson_nll(x, t, log_input=variant % 2 == 0, full=variant >= 2,
                           reduction=_RED[r])


def _poisson_ref(x, t, variant, r):
    loss = np.exp(x) - t * x if variant % 2 == 0 else x - t * np.log(x + 1e-8)
    if variant >= 2:
        ts = np.where(t > 1, t, 2.0)
        loss = loss + np.where(t > 1, ts * np.log(ts) - ts + 0.5 * np.log(2 * np.pi * ts), 0)
    return _reduce(loss, r)


_rec("poisson_nll", _poisson_fn, _poisson_ref, _poisson_sample,
     errors=[(lambda rng: (np.arange(3), np.ones(3), 0, 0), DTypeError)])


# -- margin losses ----------------------------------------------------------------------
def _soft_margin_sample(rng):
    return (_u(rng, -2, 2, (2, 3)), rng.choice([-1.0, 1.0], size=(2, 3)),
            int(rng.integers(0, 3)))


_rec("soft_margin_loss", lambda x, t, r: ops.soft_margin_loss(x, t, reduction=_RED[r]),
     lambda x, t, r: _reduce(np.logaddexp(0.0, -t * x), r), _soft_margin_sample, diff=(0,))


def _multi_margin_sample(rng):
    # scores on a grid of step 1 plus a small jitter: margin - x[y] + x[i] (margin 0.5)
    # stays at least 0.3 from 0
    x = rng.integers(-2, 3, size=(3, 4)) + _u(rng, -0.1, 0.1, (3, 4))
    return x, rng.integers(0, 4, size=3), _u(rng, 0.5, 2.0, (4,)), int(rng.integers(0, 4))


def _multi_margin_fn(x, t, w, v):
    return ops.multi_margin_loss(x, t, p=1 + v % 2, margin=0.5, weight=w if v >= 2 else None,
                                 reduction=_RED[v % 3])


def _multi_margin_ref(x, t, w, v):
    n, c = x.shape
    loss = np.zeros(n)
    for i in range(n):
        for k in range(c):
            if k != t[i]:
                loss[i] += max(0.0, 0.5 - x[i, t[i]] + x[i, k]) ** (1 + v % 2)
        loss[i] *= (w[t[i]] if v >= 2 else 1.0) / c
    return _reduce(loss, v % 3)


_rec("multi_margin_loss", _multi_margin_fn, _multi_margin_ref, _multi_margin_sample,
     diff=(0,), errors=[(lambda rng: (np.ones((2, 3)), np.array([0, 3]), None, 0),
                         IndexError)])


def _multilabel_sample(rng):
    # on a grid of step 0.4: 1 - (x[y] - x[i]) stays at least 0.1 from 0
    x = 0.4 * rng.integers(-3, 4, size=(2, 4)) + _u(rng, -0.05, 0.05, (2, 4))
    t = np.array([[3, 0, -1, 1], [2, -1, 0, 0]])
    return x, t, int(rng.integers(0, 3))


def _multilabel_ref(x, t, r):
    n, c = x.shape
    loss = np.zeros(n)
    for i in range(n):
        targets = []
        for k in t[i]:
            if k < 0:
                break
            targets.append(k)
        for y in targets:
            for k in range(c):
                if k not in targets:
                    loss[i] += max(0.0, 1.0 - (x[i, y] - x[i, k]))
        loss[i] /= c
    return _reduce(loss, r)


_rec("multilabel_margin_loss",
     lambda x, t, r: ops.multilabel_margin_loss(x, t, reduction=_RED[r]), _multilabel_ref,
     _multilabel_sample, diff=(0,),
     errors=[(lambda rng: (np.ones((2, 3)), np.array([0, 1]), 0), ShapeError)])


def _ranking_sample(rng):
    a = _u(rng, -1, 1, (5,))
    y = rng.choice([-1.0, 1.0], size=5)
    # -y (a - b) + 0.3 kept 0.2 or more from 0
    b = a + y * (_away(rng, 0.2, 1.0, (5,)) - 0.3)
    return a, b, y, int(rng.integers(0, 3))


_rec("margin_ranking_loss",
     lambda a, b, y, r: ops.margin_ranking_loss(a, b, y, 0.3, reduction=_RED[r]),
     lambda a, b, y, r: _reduce(np.maximum(0.0, -y * (a - b) + 0.3), r), _ranking_sample,
     diff=(0, 1))


def _hinge_embedding_sample(rng):
    return (1.0 + _away(rng, 0.2, 1.0, (2, 3)), rng.choice([-1.0, 1.0], size=(2, 3)),
            int(rng.integers(0, 3)))


_rec("hinge_embedding_loss",
     lambda x, t, r: ops.hinge_embedding_loss(x, t, 1.0, reduction=_RED[r]),
     lambda x, t, r: _reduce(np.where(t == 1, x, np.maximum(0.0, 1.0 - x)), r),
     _hinge_embedding_sample, diff=(0,))


def _cos(a, b):
    return (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))


def _cosine_embedding_sample(rng):
    while True:
        a, b = _u(rng, -1, 1, (3, 4)), _u(rng, -1, 1, (3, 4))
        if np.min(np.abs(_cos(a, b) - 0.1)) > 0.1:
            return a, b, np.array([1, -1, -1]), int(rng.integers(0, 3))


_rec("cosine_embedding_loss",
     lambda a, b, t, r: ops.cosine_embedding_loss(a, b, t, 0.1, reduction=_RED[r]),
     lambda a, b, t, r: _reduce(np.where(t == 1, 1.0 - _cos(a, b),
                                         np.maximum(0.0, _cos(a, b) - 0.1)), r),
     _cosine_embedding_sample, diff=(0, 1),
     errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 4)), np.array([1, 1]), 0),
              ShapeError)])


# -- distances --------------------------------------------------------------------------
def _norm_rows(a, axis):
    return np.sqrt((a * a).sum(axis, keepdims=True))


_rec("cosine_similarity", lambda a, b: ops.cosine_similarity(a, b, 1),
     lambda a, b: ((a / _norm_rows(a, 1)) * (b / _norm_rows(b, 1))).sum(1),
     lambda r: (_away(r, 0.3, 1.0, (2, 3, 2)), _away(r, 0.3, 1.0, (2, 3, 2))))
_P = (1.0, 2.0, 3.0)


def _pairwise_sample(rng):
    a = _u(rng, -1, 1, (3, 4))
    return a, a + _away(rng, 0.2, 1.0, (3, 4)), int(rng.integers(0, 3))


_rec("pairwise_distance", lambda a, b, k: ops.pairwise_distance(a, b, _P[k], 0.0),
     lambda a, b, k: (np.abs(a - b) ** _P[k]).sum(-1) ** (1 / _P[k]), _pairwise_sample)


def _pdist_sample(rng):
    x = _u(rng, -1, 1, (4, 3))
    x = x + 3.0 * np.arange(4.0)[:, None]  # rows apart: no difference near 0
    return x, int(rng.integers(0, 3))


def _pdist_ref(x, k):
    n = x.shape[0]
    return np.array([(np.abs(x[i] - x[j]) ** _P[k]).sum() ** (1 / _P[k])
                     for i in range(n) for j in range(i + 1, n)])


_rec("pdist", lambda x, k: ops.pdist(x, _P[k]), _pdist_ref, _pdist_sample,
     errors=[(lambda rng: (np.ones(3), 0), ShapeError)])
