"""Records of einsum, scatter_add, forget, shift and the spatial transformer."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _u
from portagrad import ShapeError

_EINSUM = ("ij,jk->ik", "bij,bjk->bki", "ii,j", "ij,jk,kl->il", "...ij,...j->...i",
           "ijk->j", "ij,ij->", "i,j->ij")
_SHAPES = {0: [(2, 3), (3, 2)], 1: [(2, 2, 3), (2, 3, 2)], 2: [(3, 3), (2,)],
           3: [(2, 3), (3, 2), (2, 2)], 4: [(2, 3, 2), (2, 2)], 5: [(2, 3, 2)],
           6: [(2, 3), (2, 3)], 7: [(2,), (3,)]}


def _einsum_sample(rng):
    k = int(rng.integers(0, len(_EINSUM)))
    return (k,) + tuple(_u(rng, -1, 1, s) for s in _SHAPES[k])


register(OpRecord("einsum", lambda k, *xs: ops.einsum(_EINSUM[k], *xs),
                  lambda k, *xs: np.einsum(_EINSUM[k], *xs), _einsum_sample,
                  errors=[(lambda rng: (0, np.ones((2, 3)), np.ones((2, 3))), ShapeError)]))


def _scatter_ref(a, idx, b):
    out = a.copy()
    np.add.at(out, idx, b)
    return out


register(OpRecord("scatter_add", lambda a, i, b: ops.scatter_add(a, i, b), _scatter_ref,
                  lambda rng: (_u(rng, -1, 1, (4, 2)), rng.integers(0, 4, size=3),
                               _u(rng, -1, 1, (3, 2)))))


def _forget_fn(a, b):
    return ops.forget(lambda x, y: ops.tanh(x) * y + x * x, a, b)


register(OpRecord("forget", _forget_fn, lambda a, b: np.tanh(a) * b + a * a,
                  lambda rng: (_u(rng, -1, 1, (2, 3)), _u(rng, -1, 1, (2, 3)))))


def _shift_ref(x, k, d):
    n, c, h, w = x.shape
    groups = k * k
    xp = np.pad(x, ((0, 0), (0, 0), (k // 2 * d, k // 2 * d), (k // 2 * d, k // 2 * d)))
    out = np.empty_like(x)
    size = c // groups
    for i in range(groups):
        g = {(groups - 1) // 2: groups - 1, groups - 1: (groups - 1) // 2}.get(i, i)
        ky, kx = g // k - k // 2, g % k - k // 2
        hs, ws = k // 2 * d - ky * d, k // 2 * d - kx * d
        ce = (i + 1) * size if i < groups - 1 else c
        out[:, i * size:ce] = xp[:, i * size:ce, hs:hs + h, ws:ws + w]
    return out


register(OpRecord("shift", lambda x, k, d: ops.shift(x, k, d), _shift_ref,
                  lambda rng: (_u(rng, -1, 1, (2, 9 + int(rng.integers(0, 3)), 3, 4)), 3,
                               int(rng.integers(1, 3))),
                  errors=[(lambda rng: (np.ones((1, 4, 3, 3)), 3, 1), ShapeError)]))


def _grid_ref(theta, h, w):
    ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing="ij")
    coords = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])
    return (theta @ coords).reshape(len(theta), 2, h, w)


register(OpRecord("spatial_transformer_grid",
                  lambda t, h, w: ops.spatial_transformer_grid(t, (h, w)), _grid_ref,
                  lambda rng: (_u(rng, -1, 1, (2, 2, 3)), int(rng.integers(2, 4)),
                               int(rng.integers(2, 5))),
                  errors=[(lambda rng: (np.ones((2, 3, 3)), 2, 2), ShapeError)]))


def _sampler_ref(x, grid):
    b, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    u = np.clip((grid[:, 0] + 1) * (w - 1) / 2 + 1, 0, w + 1)
    v = np.clip((grid[:, 1] + 1) * (h - 1) / 2 + 1, 0, h + 1)
    out = np.zeros((b, c) + grid.shape[2:])
    for n in range(b):
        for i, j in np.ndindex(*grid.shape[2:]):
            uu, vv = u[n, i, j], v[n, i, j]
            u0, v0 = min(int(np.floor(uu)), w), min(int(np.floor(vv)), h)
            for dv in (0, 1):
                for du in (0, 1):
                    wt = (uu - u0 if du else u0 + 1 - uu) * (vv - v0 if dv else v0 + 1 - vv)
                    out[n, :, i, j] += wt * xp[n, :, v0 + dv, u0 + du]
    return out


def _sampler_sample(rng):
    grid = _u(rng, -1.1, 1.1, (2, 2, 2, 3))
    # keep sample points off the pixel lattice, where the bilinear weights have kinks
    x = _u(rng, -1, 1, (2, 2, 3, 4))
    for axis, size in ((0, 4), (1, 3)):
        pix = (grid[:, axis] + 1) * (size - 1) / 2
        frac = pix - np.floor(pix)
        grid[:, axis] += np.where(frac < 0.1, 0.15, np.where(frac > 0.9, -0.15, 0.0)) * (
            2 / (size - 1))
    grid = np.where(np.abs(np.abs(grid) - 1.0) < 0.02, grid * 0.9, grid)
    return x, grid


register(OpRecord("spatial_transformer_sampler", ops.spatial_transformer_sampler,
                  _sampler_ref, _sampler_sample))
