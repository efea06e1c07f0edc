"""Records of the Chainer-named losses; references are NumPy float64 from Chainer's
formulas."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _away, _u
from portagrad import DTypeError, ShapeError


def _rec(name, fn, ref, sample, **kw):
    register(OpRecord(name, fn, ref, sample, **kw))


_INT_PAIR = [(lambda rng: (np.arange(3), np.arange(3)), DTypeError)]
_rec("absolute_error", ops.absolute_error, lambda a, b: np.abs(a - b),
     lambda r: (_u(r, -1, 1, (2, 3)), _u(r, -1, 1, (2, 3)) + np.sign(r.uniform(-1, 1, (2, 3)))
                * 3), errors=[(lambda rng: (np.ones(2), np.ones(3)), ShapeError)])
_rec("squared_error", ops.squared_error, lambda a, b: (a - b) ** 2,
     lambda r: (_u(r, -1, 1, (2, 3)), _u(r, -1, 1, (2, 3))))


def _red(loss, reduce, how=np.sum):
    return how(loss) if reduce != "no" else loss


_REDUCE2 = ("sum", "no")
_rec("bernoulli_nll", lambda x, y, k: ops.bernoulli_nll(x, y, _REDUCE2[k]),
     lambda x, y, k: _red(np.logaddexp(0, y) - x * y, _REDUCE2[k]),
     lambda r: (_u(r, 0, 1, (2, 3)), _u(r, -2, 2, (2, 3)), int(r.integers(0, 2))),
     errors=[(lambda rng: (np.ones(2), np.arange(2), 0), DTypeError)])
_rec("gaussian_kl_divergence", lambda m, v, k: ops.gaussian_kl_divergence(m, v, _REDUCE2[k]),
     lambda m, v, k: _red((m * m + np.exp(v) - v - 1) / 2, _REDUCE2[k]),
     lambda r: (_u(r, -1, 1, (2, 3)), _u(r, -1, 1, (2, 3)), int(r.integers(0, 2))),
     errors=[(lambda rng: (np.ones(2), np.ones(3), 0), ShapeError)])
_REDUCE_M = ("mean", "no")


def _contrastive_ref(a, b, y, k):
    d = np.sqrt(((a - b) ** 2).sum(1))
    loss = (y * d * d + (1 - y) * np.maximum(1.5 - d, 0) ** 2) / 2
    return loss.sum() / len(a) if k == 0 else loss


def _contrastive_sample(rng):
    a = _u(rng, -1, 1, (4, 2))
    # distances kept away from 0 (sqrt) and from the margin 1.5 (kink)
    direction = rng.standard_normal((4, 2))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    dist = rng.choice([0.5, 0.9, 2.0, 2.5], size=(4, 1)) + rng.uniform(0, 0.2, (4, 1))
    return a, a + direction * dist, rng.integers(0, 2, size=4), int(rng.integers(0, 2))


_rec("contrastive", lambda a, b, y, k: ops.contrastive(a, b, y, 1.5, _REDUCE_M[k]),
     _contrastive_ref, _contrastive_sample, diff=(0, 1))


def _hinge_ref(x, t, norm, k):
    sign = np.where(np.arange(x.shape[1])[None, :] == t[:, None], -1.0, 1.0)
    h = np.maximum(1 + sign * x, 0)
    h = h if norm == 0 else h * h
    return h.sum() / len(x) if k == 0 else h


def _hinge_sample(rng):
    x = _away(rng, 0.15, 2, (3, 4)) + rng.choice([-1.0, 1.0], size=(3, 4))
    x = np.where(np.abs(np.abs(x) - 1) < 0.15, x * 1.3, x)
    return x, rng.integers(0, 4, size=3), int(rng.integers(0, 2)), int(rng.integers(0, 2))


_rec("hinge", lambda x, t, n, k: ops.hinge(x, t, ("L1", "L2")[n], _REDUCE_M[k]), _hinge_ref,
     _hinge_sample, diff=(0,),
     errors=[(lambda rng: (np.ones((2, 3)), np.zeros(2), 0, 0), DTypeError)])


def _triplet_ref(a, p, n, k):
    loss = np.maximum(((a - p) ** 2 - (a - n) ** 2).sum(1) + 0.2, 0)
    return loss.mean() if k == 0 else loss


def _triplet_sample(rng):
    a, p, n = (_u(rng, -1, 1, (3, 2)) for _ in range(3))
    while True:
        d = ((a - p) ** 2 - (a - n) ** 2).sum(1) + 0.2
        if np.all(np.abs(d) > 0.1):
            return a, p, n, int(rng.integers(0, 2))
        n = _u(rng, -1, 1, (3, 2))


_rec("triplet", lambda a, p, n, k: ops.triplet(a, p, n, 0.2, _REDUCE_M[k]), _triplet_ref,
     _triplet_sample, diff=(0, 1, 2))
_REDUCE_H = ("half_squared_sum", "no")


def _decov_ref(h, k):
    c = h - h.mean(0)
    cov = c.T @ c / len(h)
    cov = cov - np.diag(np.diag(cov))
    return (cov ** 2).sum() / 2 if k == 0 else cov


_rec("decov", lambda h, k: ops.decov(h, _REDUCE_H[k]), _decov_ref,
     lambda r: (_u(r, -1, 1, (4, 3)), int(r.integers(0, 2))))


def _xcov_ref(y, z, k):
    cov = (y - y.mean(0)).T @ (z - z.mean(0)) / len(y)
    return (cov ** 2).sum() / 2 if k == 0 else cov


_rec("cross_covariance", lambda y, z, k: ops.cross_covariance(y, z, _REDUCE_H[k]), _xcov_ref,
     lambda r: (_u(r, -1, 1, (4, 3)), _u(r, -1, 1, (4, 2)), int(r.integers(0, 2))))


def _disc_ref(emb, labels, norm):
    b, d = emb.shape[:2]

    def nrm(v, axis):
        return np.abs(v).sum(axis) if norm == 1 else np.sqrt((v * v).sum(axis))

    masks = [(labels == c + 1)[:, None] for c in range(d)]
    means = np.stack([(emb * m).sum((2, 3)) / np.maximum(m.sum((1, 2, 3)), 1)[:, None]
                      for m in masks])  # (D, B, D)
    l_var = 0.0
    for c, m in enumerate(masks):
        dist = nrm((means[c][:, :, None, None] - emb) * m, 1)
        l_var += (np.maximum(dist - 0.3, 0) ** 2).sum() / max(m.sum(), 1)
    l_dist, pairs = 0.0, 0
    for a in range(d):
        for c in range(a + 1, d):
            l_dist += (np.maximum(2.0 - nrm(means[a] - means[c], 1), 0) ** 2).sum()
            pairs += 1
    l_reg = nrm(means, (1, 2)).sum() / (d * b)
    return l_var / d, l_dist / max(pairs * b, 1), 0.01 * l_reg


def _disc_kinks(emb, labels, norm):
    """Distances of the loss's arguments from its kinks (abs at 0, the two hinges)."""
    d = emb.shape[1]

    def nrm(v, axis):
        return np.abs(v).sum(axis) if norm == 1 else np.sqrt((v * v).sum(axis))

    gaps = []
    means = []
    for c in range(d):
        m = (labels == c + 1)[:, None]
        mean = (emb * m).sum((2, 3)) / np.maximum(m.sum((1, 2, 3)), 1)[:, None]
        means.append(mean)
        diff = (mean[:, :, None, None] - emb)[np.broadcast_to(m, emb.shape)]
        if norm == 1 and m.sum((1, 2, 3)).max() > 1:
            gaps.append(np.abs(diff))
        dist = nrm((mean[:, :, None, None] - emb) * m, 1)[m[:, 0]]
        gaps.append(np.abs(dist - 0.3))
    for a in range(d):
        for c in range(a + 1, d):
            gaps.append(np.abs(nrm(means[a] - means[c], 1) - 2.0))
            # abs at 0 (norm 1), or the curvature of sqrt near 0 (norm 2)
            gaps.append(np.abs(means[a] - means[c]).ravel() if norm == 1 else
                        nrm(means[a] - means[c], 1) - 0.15)
    gaps.append(np.abs(np.stack(means)).ravel())
    return min(float(np.min(g)) for g in gaps if np.size(g))


def _disc_sample(rng):
    while True:
        emb = _away(rng, 0.2, 1.5, (2, 2, 3, 3))
        labels = rng.integers(0, 3, size=(2, 3, 3))
        norm = int(rng.integers(1, 3))
        if _disc_kinks(emb, labels, norm) > 0.05:
            return emb, labels, norm


_rec("discriminative_margin_based_clustering_loss",
     lambda e, lab, n: ops.discriminative_margin_based_clustering_loss(e, lab, 0.3, 1.0, 2, n,
                                                                        gamma=0.01),
     _disc_ref, _disc_sample, diff=(0,), eps=2e-4)
