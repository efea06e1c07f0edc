"""Records of the linalg extension.

Samples are well conditioned (condition number below 4): ``Q1 diag(s) Q2^T`` with
orthogonal ``Q1, Q2`` and singular values ``s`` in [1, 3.2] at least 0.6 apart, so the
eigenvalues and singular values are distinct, as the vector gradients need. Symmetric
inputs are symmetrized inside the record (the decompositions read one triangle, the
gradients are symmetric). Outputs whose sign is arbitrary (eigenvectors, singular vectors,
QR factors) are compared through sign-invariant functions of them.
"""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from portagrad import DTypeError, ShapeError

L = ops.linalg
_TOL = {"float32": (2e-4, 2e-3), "float64": (1e-9, 1e-8)}
_GRAD_TOL = (1e-5, 1e-4)


def _orthogonal(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def _spectrum(rng, k):
    return np.sort(1.0 + 0.6 * np.arange(k) + rng.uniform(0, 0.2, size=k) +
                   rng.uniform(0, 0.6))[::-1]


def well_conditioned(rng, m, n, batch=()):
    """A (stack of) ``m x n`` matrices with distinct singular values in [1, 3.2]."""
    out = np.empty((*batch, m, n))
    for idx in np.ndindex(*batch):
        k = min(m, n)
        s = np.zeros((m, n))
        s[:k, :k] = np.diag(_spectrum(rng, k))
        out[idx] = _orthogonal(rng, m) @ s @ _orthogonal(rng, n).T
    return out


def spd(rng, n, batch=()):
    """Symmetric positive-definite matrices with distinct eigenvalues in [1, 3.2]."""
    out = np.empty((*batch, n, n))
    for idx in np.ndindex(*batch):
        q = _orthogonal(rng, n)
        out[idx] = (q * _spectrum(rng, n)) @ q.T
    return out


def _batch(rng):
    return () if rng.random() < 0.6 else (2,)


def _square(rng):
    n = int(rng.integers(1, 4))
    return (well_conditioned(rng, n, n, _batch(rng)),)


def _sym(a):
    return ops.multiply(ops.add(a, ops.matrix_transpose(a)), 0.5)


def _like(values, v):
    """Host ``values`` in the library, dtype and device of ``v``."""
    return ops.asarray(np.asarray(values).tolist(), dtype=v.dtype, device=v.device)


def _np_sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


_NOT_SQUARE = [(lambda rng: (np.ones((2, 3)),), ShapeError),
               (lambda rng: (np.ones((2, 2), dtype=np.int64),), DTypeError)]


def _rec(name, fn, ref, sample, **kw):
    kw.setdefault("order", 2)
    kw.setdefault("tol", _TOL)
    kw.setdefault("grad_tol", _GRAD_TOL)
    # Vector gradients grow like 1/gap: a smaller step keeps central differences exact.
    if "eps" in OpRecord.__dataclass_fields__:
        kw.setdefault("eps", 1e-4)
    register(OpRecord(f"linalg.{name}", fn, ref, sample=sample, **kw))


_rec("inv", L.inv, np.linalg.inv, _square, errors=_NOT_SQUARE)
_rec("det", L.det, np.linalg.det, _square, errors=_NOT_SQUARE)
_rec("slogdet", lambda a: tuple(L.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)),
     _square, errors=_NOT_SQUARE)


def _solve_sample(rng):
    n = int(rng.integers(1, 4))
    batch = _batch(rng)
    a = well_conditioned(rng, n, n, batch)
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return a, rng.standard_normal(n)
    if kind == 1:
        return a, rng.standard_normal((*batch, n, int(rng.integers(1, 3))))
    return a, rng.standard_normal((n, 2))


def _np_solve(a, b):
    if b.ndim == 1:
        return np.linalg.solve(a, b[:, None])[..., 0]
    return np.linalg.solve(a, np.broadcast_to(b, (*a.shape[:-2], *b.shape[-2:])))


_rec("solve", L.solve, _np_solve, _solve_sample,
     errors=[(lambda rng: (np.eye(2), np.ones(3)), ShapeError)])


def _spd_sample(rng):
    return (spd(rng, int(rng.integers(1, 4)), _batch(rng)),)


_NOT_SQUARE_SYM = [(lambda rng: (np.ones((2, 3)),), ShapeError)]
_rec("cholesky", lambda a: L.cholesky(_sym(a)), lambda a: np.linalg.cholesky(_np_sym(a)),
     _spd_sample, errors=_NOT_SQUARE_SYM)


def _qr_sample(rng):
    m, n = sorted(int(d) for d in rng.integers(1, 4, size=2))
    if rng.random() < 0.3:
        m, n = n, m  # wide
    return (well_conditioned(rng, m, n, _batch(rng)),)


def _qr_fn(a):
    # R's diagonal made positive: the factorization is then unique.
    q, r = L.qr(a)
    d = ops.sign(L.diagonal(r)).detach()
    return q * ops.expand_dims(d, axis=-2), r * ops.expand_dims(d, axis=-1)


def _qr_ref(a):
    q, r = np.linalg.qr(a)
    k = min(a.shape[-2:])
    d = np.sign(r[..., np.arange(k), np.arange(k)])
    return q * d[..., None, :], r * d[..., :, None]


_rec("qr", _qr_fn, _qr_ref, _qr_sample,
     errors=[(lambda rng: (np.ones(3),), ShapeError)])


def _eigh_fn(a):
    w, v = L.eigh(_sym(a))
    weights = _like(np.arange(1.0, w.shape[-1] + 1), w)
    return w, v * v, (v * weights) @ ops.matrix_transpose(v)


def _eigh_ref(a):
    w, v = np.linalg.eigh(_np_sym(a))
    weights = np.arange(1.0, w.shape[-1] + 1)
    return w, v * v, (v * weights) @ np.swapaxes(v, -1, -2)


_rec("eigh", _eigh_fn, _eigh_ref, _spd_sample, errors=_NOT_SQUARE_SYM)
_rec("eigvalsh", lambda a: L.eigvalsh(_sym(a)), lambda a: np.linalg.eigvalsh(_np_sym(a)),
     _spd_sample, errors=_NOT_SQUARE_SYM)


def _rect_sample(rng):
    m, n = (int(d) for d in rng.integers(1, 4, size=2))
    return (well_conditioned(rng, m, n, _batch(rng)), bool(rng.integers(0, 2)))


def _svd_fn(a, full):
    u, s, vh = L.svd(a, full_matrices=full)
    k = s.shape[-1]
    lead = (slice(None),) * (a.ndim - 2)
    u = u[(*lead, slice(None), slice(0, k))]
    vh = vh[(*lead, slice(0, k), slice(None))]
    weights = _like(np.arange(1.0, k + 1), s)
    return s, u * u, vh * vh, (u * weights) @ vh


def _svd_ref(a, full):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    weights = np.arange(1.0, s.shape[-1] + 1)
    return s, u * u, vh * vh, (u * weights) @ vh


_rec("svd", _svd_fn, _svd_ref, _rect_sample, diff=(0,),
     errors=[(lambda rng: (np.ones(3), False), ShapeError)])
_rec("svdvals", lambda a, _: L.svdvals(a), lambda a, _: np.linalg.svd(a, compute_uv=False),
     _rect_sample, diff=(0,))
_rec("pinv", lambda a, _: L.pinv(a), lambda a, _: np.linalg.pinv(a), _rect_sample, diff=(0,))


def _power_sample(rng):
    return (*_square(rng), int(rng.integers(-3, 4)))


_rec("matrix_power", L.matrix_power, np.linalg.matrix_power, _power_sample, diff=(0,),
     errors=[(lambda rng: (np.ones((2, 3)), 2), ShapeError)])


def _norm_sample(rng):
    ords = ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
    o = ords[int(rng.integers(0, len(ords)))]
    m, n = (int(d) for d in rng.integers(1, 4, size=2))
    a = well_conditioned(rng, m, n, _batch(rng))
    if o in (1, -1, np.inf, -np.inf):
        # Magnitudes away from 0 (abs is smooth) and distinct column and row sums (max and
        # min are smooth).
        mag = 0.5 + 0.3 * np.arange(m * n).reshape(m, n) + rng.uniform(0, 0.1, (m, n))
        a = np.broadcast_to(mag, a.shape) * rng.choice([-1.0, 1.0], size=a.shape)
    return a, o, bool(rng.integers(0, 2))


_rec("matrix_norm", lambda a, o, k: L.matrix_norm(a, ord=o, keepdims=k),
     lambda a, o, k: np.linalg.norm(a, ord=o, axis=(-2, -1), keepdims=k), _norm_sample,
     diff=(0,), errors=[(lambda rng: (np.ones(3), "fro", False), ShapeError)])


def _vnorm_sample(rng):
    ords = [2, 1, 3, 0.5, np.inf, -np.inf, -1.5]
    o = ords[int(rng.integers(0, len(ords)))]
    shape = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(1, 3))))
    x = rng.uniform(0.3, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if o in (np.inf, -np.inf):
        x = x + np.sign(x) * np.arange(x.size).reshape(shape) * 0.3
    axis = None if rng.random() < 0.5 else -1
    return x, o, axis, bool(rng.integers(0, 2))


def _np_vnorm(x, o, axis, keepdims):
    if axis is None:
        out = np.linalg.norm(x.reshape(-1), ord=o)
        return np.reshape(out, (1,) * x.ndim) if keepdims else np.asarray(out)
    return np.linalg.norm(x, ord=o, axis=axis, keepdims=keepdims)


_rec("vector_norm", lambda x, o, a, k: L.vector_norm(x, ord=o, axis=a, keepdims=k),
     _np_vnorm, _vnorm_sample, diff=(0,), order=3,
     errors=[(lambda rng: (np.arange(3), 2, None, False), DTypeError)])


def _offset_sample(rng):
    m, n = (int(d) for d in rng.integers(1, 4, size=2))
    return rng.uniform(-2, 2, size=(*_batch(rng), m, n)), int(rng.integers(-1, 2))


_rec("diagonal", lambda x, k: L.diagonal(x, offset=k),
     lambda x, k: np.diagonal(x, offset=k, axis1=-2, axis2=-1), _offset_sample, diff=(0,),
     order=3, errors=[(lambda rng: (np.ones(3), 0), ShapeError)])
_rec("trace", lambda x, k: L.trace(x, offset=k),
     lambda x, k: np.trace(x, offset=k, axis1=-2, axis2=-1), _offset_sample, diff=(0,),
     order=3, errors=[(lambda rng: (np.ones(3), 0), ShapeError)])


def _vectors(rng):
    return rng.uniform(-2, 2, size=int(rng.integers(1, 4))), rng.uniform(-2, 2, size=3)


_rec("outer", L.outer, np.outer, _vectors, order=3,
     errors=[(lambda rng: (np.ones((2, 2)), np.ones(2)), ShapeError)])


def _cross_sample(rng):
    return rng.uniform(-2, 2, size=(*_batch(rng), 3)), rng.uniform(-2, 2, size=(2, 3))


_rec("cross", L.cross, np.cross, _cross_sample, order=3,
     errors=[(lambda rng: (np.ones(2), np.ones(2)), ShapeError)])


# The products shared with the main namespace.
def _mat_pair(rng):
    n, k, m = (int(d) for d in rng.integers(1, 4, size=3))
    return rng.uniform(-1, 1, size=(n, k)), rng.uniform(-1, 1, size=(k, m))


_rec("matmul", L.matmul, np.matmul, _mat_pair, order=3,
     errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 3))), ShapeError)])
_rec("tensordot", lambda a, b: L.tensordot(a, b, axes=1), lambda a, b: np.tensordot(a, b, 1),
     _mat_pair, order=3)
_rec("vecdot", L.vecdot, lambda a, b: np.sum(a * b, axis=-1),
     lambda rng: (rng.uniform(-1, 1, size=(2, 3)), rng.uniform(-1, 1, size=3)), order=3)
_rec("matrix_transpose", L.matrix_transpose, lambda x: np.swapaxes(x, -1, -2),
     lambda rng: (rng.uniform(-1, 1, size=(2, 3)),), order=3)
