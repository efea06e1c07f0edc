"""Records of the Chainer-named normalization functions.

References are NumPy float64 written from Chainer's definitions (``eps=2e-5`` for batch
normalization, ``alpha`` undivided in local response normalization, ZCA whitening by
``eigh``).
"""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _np_norm, _spread, _u
from portagrad import ShapeError


def _rec(name, fn, ref, sample, **kw):
    register(OpRecord(name, fn, ref, sample, **kw))


def _b(v, x, axes):
    return v.reshape(tuple(1 if i in axes else x.shape[i] for i in range(x.ndim)))


def _bn_sample(rng):
    x = _spread(rng, (3, 2) + tuple(int(v) for v in rng.integers(1, 3, size=int(
        rng.integers(0, 2)))))
    return x, _u(rng, 0.5, 1.5, (2,)), _u(rng, -1, 1, (2,))


def _bn_ref(x, g, b, eps=2e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    return _np_norm(x, axes, eps) * _b(g, x, axes) + _b(b, x, axes)


def _bn_any_sample(rng):
    """Channels on axis 1, or (half the time) parameters over axes 1 and 2: Chainer's
    ``axis`` rule keeps axes ``1 .. gamma.ndim``."""
    if rng.random() < 0.5:
        return _bn_sample(rng)
    x = _spread(rng, (3, 2, 2) + tuple(int(v) for v in rng.integers(1, 3, size=int(
        rng.integers(0, 2)))))
    return x, _u(rng, 0.5, 1.5, (2, 2)), _u(rng, -1, 1, (2, 2))


def _bn_any_ref(x, g, b, eps=2e-5):
    axes = (0,) + tuple(range(g.ndim + 1, x.ndim))
    return _np_norm(x, axes, eps) * _b(g, x, axes) + _b(b, x, axes)


_rec("batch_normalization", ops.batch_normalization, _bn_any_ref, _bn_any_sample,
     errors=[(lambda rng: (np.ones((3, 2)), np.ones(3), np.ones(3)), ShapeError)])


def _brn_ref(x, g, b, rm, rv):
    axes = (0,) + tuple(range(2, x.ndim))
    sigma = np.sqrt(rv + 2e-5)
    std = np.sqrt(x.var(axis=axes) + 2e-5)
    r = np.clip(std / sigma, 1 / 1.5, 1.5)
    d = np.clip((x.mean(axis=axes) - rm) / sigma, -0.5, 0.5)
    return (_np_norm(x, axes, 2e-5) * _b(r, x, axes) + _b(d, x, axes)) * _b(g, x, axes) + _b(
        b, x, axes)


# Running statistics far from the batch's saturate both clips, so r and d are locally
# constant and finite differences see the same derivative as the stopped gradient.
_rec("batch_renormalization",
     lambda x, g, b, rm, rv: ops.batch_renormalization(x, g, b, 1.5, 0.5, running_mean=rm,
                                                       running_var=rv),
     _brn_ref, lambda rng: _bn_sample(rng) + (rng.choice([-20.0, 20.0], size=2),
                                              _u(rng, 0.01, 0.02, (2,))), diff=(0, 1, 2))


def _fbn_ref(x, g, b, m, v):
    axes = (0,) + tuple(range(2, x.ndim))
    return (x - _b(m, x, axes)) / np.sqrt(_b(v, x, axes) + 2e-5) * _b(g, x, axes) + _b(
        b, x, axes)


def _fbn_sample(rng):
    x, g, b = _bn_sample(rng)
    return x, g, b, _u(rng, -1, 1, (2,)), _u(rng, 0.5, 2, (2,))


_rec("fixed_batch_normalization", ops.fixed_batch_normalization, _fbn_ref, _fbn_sample,
     errors=[(lambda rng: (np.ones((3, 2)), np.ones(2), np.ones(2), np.ones(3), np.ones(2)),
              ShapeError)])
_rec("fixed_batch_renormalization", ops.fixed_batch_renormalization, _fbn_ref, _fbn_sample)
_rec("layer_normalization", ops.layer_normalization,
     lambda x, g, b: _np_norm(x, tuple(range(1, x.ndim)), 1e-5) * g + b,
     lambda rng: (lambda x: (x, _u(rng, 0.5, 1.5, x.shape[1:]), _u(rng, -1, 1, x.shape[1:])))(
         _spread(rng, (2, 3) + ((2,) if rng.random() < 0.5 else ()))),
     errors=[(lambda rng: (np.ones((2, 3)), np.ones(4), np.ones(4)), ShapeError)])


def _gn_ref(x, g, w, b):
    y = _np_norm(x.reshape(x.shape[0], g, -1), (2,), 1e-5).reshape(x.shape)
    return y * _b(w, x, (0,) + tuple(range(2, x.ndim))) + _b(
        b, x, (0,) + tuple(range(2, x.ndim)))


_rec("group_normalization", ops.group_normalization, _gn_ref,
     lambda rng: (_spread(rng, (2, 4, 3)), int(rng.choice([1, 2, 4])), _u(rng, 0.5, 1.5, (4,)),
                  _u(rng, -1, 1, (4,))))


def _lrn_ref(x, n, k, alpha, beta):
    c = x.shape[1]
    out = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - n // 2), min(c, ch + n // 2 + 1)
        out[:, ch] = x[:, ch] / (k + alpha * (x[:, lo:hi] ** 2).sum(1)) ** beta
    return out


_rec("local_response_normalization",
     lambda x, n: ops.local_response_normalization(x, n, 1.5, 0.3, 0.75),
     lambda x, n: _lrn_ref(x, n, 1.5, 0.3, 0.75),
     lambda rng: (_u(rng, -2, 2, (2, 5, 2)), int(rng.integers(1, 6))))


def _zca_ref(x, groups, eps):
    b, c = x.shape[:2]
    moved = np.moveaxis(x, 1, 0)
    xh = moved.reshape(groups, c // groups, -1)
    d = xh - xh.mean(axis=2, keepdims=True)
    out = np.empty_like(d)
    for g in range(groups):
        cov = d[g] @ d[g].T / d.shape[2] + eps * np.eye(c // groups)
        vals, vecs = np.linalg.eigh(cov)
        out[g] = vecs @ np.diag(vals ** -0.5) @ vecs.T @ d[g]
    return np.moveaxis(out.reshape(moved.shape), 0, 1)


def _zca_sample(rng):
    """Well-conditioned groups: distinct covariance eigenvalues keep eigh's derivatives
    moderate."""
    x = rng.standard_normal((6, 4)) @ np.diag([1.0, 2.0, 1.0, 3.0]) + np.array(
        [[0.3, 0.0, 0.1, 0.0]])
    return x, int(rng.choice([1, 2]))


register(OpRecord("decorrelated_batch_normalization",
                  lambda x, g: ops.decorrelated_batch_normalization(x, groups=g, eps=1e-2),
                  lambda x, g: _zca_ref(x, g, 1e-2), _zca_sample,
                  grad_tol=(1e-4, 1e-3),
                  errors=[(lambda rng: (np.ones((3, 5)), 2), ShapeError)]))


def _fzca_ref(x, m, p):
    moved = np.moveaxis(x, 1, 0)
    xh = moved.reshape(2, 2, -1) - m[:, :, None]
    return np.moveaxis((p @ xh).reshape(moved.shape), 0, 1)


register(OpRecord("fixed_decorrelated_batch_normalization",
                  lambda x, m, p: ops.fixed_decorrelated_batch_normalization(x, m, p, 2),
                  _fzca_ref,
                  lambda rng: (_u(rng, -1, 1, (3, 4, 2)), _u(rng, -1, 1, (2, 2)),
                               _u(rng, -1, 1, (2, 2, 2)))))
