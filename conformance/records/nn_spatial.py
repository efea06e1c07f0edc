"""Records of the spatial neural-network functions beyond convolution and pooling by
windows: unfold and fold, adaptive max and power-average pooling, unpooling at indices,
interpolation, pixel shuffles, affine grids and grid sampling, and scaled dot-product
attention.

References are written independently in NumPy float64 (loops over positions).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import portagrad.ops as ops
from conformance._db import NON_DIFFERENTIABLE, OpRecord, register
from portagrad import DTypeError, ShapeError

# Integer-valued encodings: no gradient to check.
NON_DIFFERENTIABLE.update({"one_hot"})


def _u(rng, lo, hi, shape):
    return np.asarray(rng.uniform(lo, hi, size=shape))


def _distinct(rng, shape):
    """Values at least 0.3 apart: no ties for a maximum, so it is smooth there."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(0, 0.1, size)).reshape(shape) - 1.0


# -- unfold and fold ----------------------------------------------------------------------
def _windows(spatial, k, s, p, d):
    out = tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                for n, kk, ss, pp, dd in zip(spatial, k, s, p, d))
    return out, list(itertools.product(*(range(kk) for kk in k)))


def np_unfold(x, k, s, p, d):
    nd = x.ndim - 2
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(pp, pp) for pp in p])
    out, offs = _windows(x.shape[2:], k, s, p, d)
    n, c = x.shape[:2]
    y = np.zeros((n, c, len(offs)) + out)
    for j, off in enumerate(offs):
        for pos in itertools.product(*(range(o) for o in out)):
            src = tuple(pos[i] * s[i] + off[i] * d[i] for i in range(nd))
            y[(slice(None), slice(None), j) + pos] = xpad[(slice(None), slice(None)) + src]
    return y.reshape((n, c * len(offs)) + out)


def np_fold(cols, size, k, s, p, d):
    nd = len(size)
    out, offs = _windows(size, k, s, p, d)
    n = cols.shape[0]
    c = cols.shape[1] // len(offs)
    cols = cols.reshape((n, c, len(offs)) + out)
    full = np.zeros((n, c) + tuple(sz + 2 * pp for sz, pp in zip(size, p)))
    for j, off in enumerate(offs):
        for pos in itertools.product(*(range(o) for o in out)):
            dst = tuple(pos[i] * s[i] + off[i] * d[i] for i in range(nd))
            full[(slice(None), slice(None)) + dst] += cols[(slice(None), slice(None), j) + pos]
    return full[(slice(None), slice(None)) + tuple(slice(pp, pp + sz) for pp, sz in
                                                  zip(p, size))]


def _unfold_cfg(rng, nd):
    k = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    s = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    p = tuple(int(rng.integers(0, 2)) for _ in range(nd))
    d = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    size = tuple(max(3, dd * (kk - 1) + 1) for kk, dd in zip(k, d))
    return size, (k, s, p, d)


def _unfold_sample(rng):
    nd = int(rng.integers(1, 3))
    size, cfg = _unfold_cfg(rng, nd)
    return _u(rng, -1, 1, (2, 2) + size), cfg


def _fold_sample(rng):
    nd = int(rng.integers(1, 3))
    size, cfg = _unfold_cfg(rng, nd)
    k, s, p, d = cfg
    out, offs = _windows(size, k, s, p, d)
    return _u(rng, -1, 1, (2, 2 * len(offs)) + out), (size, cfg)


register(OpRecord("unfold", lambda x, c: ops.unfold(x, c[0], stride=c[1], padding=c[2],
                                                    dilation=c[3]),
                  lambda x, c: np_unfold(x, *c), _unfold_sample,
                  errors=[(lambda rng: (np.ones(3), ((2,), (1,), (0,), (1,))), ShapeError)]))
register(OpRecord("fold", lambda x, c: ops.fold(x, c[0], c[1][0], stride=c[1][1],
                                                padding=c[1][2], dilation=c[1][3]),
                  lambda x, c: np_fold(x, c[0], *c[1]), _fold_sample,
                  errors=[(lambda rng: (np.ones((1, 3, 2)), ((4,), ((2,), (1,), (0,), (1,)))),
                           ShapeError)]))


# -- adaptive max and power-average pooling -------------------------------------------------
def np_adaptive_max(x, size):
    nd = x.ndim - 2
    out = np.zeros(x.shape[:2] + tuple(size))
    for pos in itertools.product(*(range(o) for o in size)):
        box = tuple(slice((q * n) // o, -((-(q + 1) * n) // o))
                    for q, n, o in zip(pos, x.shape[2:], size))
        out[(slice(None), slice(None)) + pos] = x[(slice(None), slice(None)) + box].max(
            axis=tuple(range(2, 2 + nd)))
    return out


def _adaptive_sample(rng):
    nd = int(rng.integers(1, 3))
    spatial = tuple(int(v) for v in rng.integers(2, 5, size=nd))
    size = tuple(int(rng.integers(1, s + 1)) for s in spatial)
    return _distinct(rng, (2, 2) + spatial), size


register(OpRecord("adaptive_max_pool", lambda x, sz: ops.adaptive_max_pool(x, sz),
                  np_adaptive_max, _adaptive_sample,
                  errors=[(lambda rng: (np.ones(3), (1,)), ShapeError)]))


def np_lp_pool(x, p, k, s):
    nd = x.ndim - 2
    out = tuple((n - kk) // ss + 1 for n, kk, ss in zip(x.shape[2:], k, s))
    y = np.zeros(x.shape[:2] + out)
    for pos in itertools.product(*(range(o) for o in out)):
        box = tuple(slice(pos[i] * s[i], pos[i] * s[i] + k[i]) for i in range(nd))
        y[(slice(None), slice(None)) + pos] = (x[(slice(None), slice(None)) + box] ** p).sum(
            axis=tuple(range(2, 2 + nd))) ** (1.0 / p)
    return y


def _lp_sample(rng):
    nd = int(rng.integers(1, 3))
    k = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    s = tuple(int(v) for v in rng.integers(1, 3, size=nd))
    x = _u(rng, 0.5, 1.5, (2, 2) + tuple(int(v) for v in rng.integers(2, 5, size=nd)))
    return x, (float(rng.choice([1.0, 2.0, 3.0])), k, s)


register(OpRecord("lp_pool", lambda x, c: ops.lp_pool(x, c[0], c[1], c[2]),
                  lambda x, c: np_lp_pool(x, *c), _lp_sample,
                  errors=[(lambda rng: (np.ones(3), (2.0, (2,), (1,))), ShapeError)]))


# -- unpooling at indices -------------------------------------------------------------------
def np_max_unpool(x, idx, size, accumulate):
    n, c = x.shape[:2]
    plane = int(np.prod(size))
    y = np.zeros((n, c, plane))
    xf, idf = x.reshape(n, c, -1), idx.reshape(n, c, -1)
    for a in range(n):
        for b in range(c):
            for v, i in zip(xf[a, b], idf[a, b]):
                y[a, b, i] = y[a, b, i] + v if accumulate else v
    return y.reshape((n, c) + tuple(size))


def _unpool_sample(rng):
    nd = int(rng.integers(1, 3))
    size = tuple(int(v) for v in rng.integers(2, 5, size=nd))
    plane = int(np.prod(size))
    count = int(rng.integers(1, plane + 1))
    accumulate = bool(rng.integers(0, 2))
    shape = (2, 2, count) + (1,) * (nd - 1)
    # Repeated targets only where they add up: a kept last value is not smooth in the rest.
    idx = (rng.integers(0, plane, size=shape) if accumulate else
           np.stack([np.stack([rng.permutation(plane)[:count] for _ in range(2)])
                     for _ in range(2)]).reshape(shape))
    return _u(rng, -1, 1, shape), idx.astype(np.int64), (size, accumulate)


register(OpRecord("max_unpool", lambda x, i, c: ops.max_unpool(x, i, c[0], accumulate=c[1]),
                  lambda x, i, c: np_max_unpool(x, i, c[0], c[1]), _unpool_sample,
                  diff=(0,),
                  errors=[(lambda rng: (np.ones((1, 1, 2)), np.ones((1, 1, 2)), ((4,), False)),
                           DTypeError)]))


# -- interpolation and pixel shuffles -------------------------------------------------------
def _np_axis(x, axis, out, mode, align):
    """One axis resampled by PyTorch's formulas for sizes (no scale factor)."""
    n = x.shape[axis]
    x = np.moveaxis(x, axis, -1)
    y = np.zeros(x.shape[:-1] + (out,))
    for o in range(out):
        if mode == "nearest":
            y[..., o] = x[..., min(int(np.floor(np.float32(o) * np.float32(n / out))), n - 1)]
            continue
        if align:
            src = o * (n - 1) / (out - 1) if out > 1 else 0.0
        else:
            src = (o + 0.5) * n / out - 0.5
        if mode == "linear":
            src = max(src, 0.0)
            lo = min(int(src), n - 1)
            hi = min(lo + 1, n - 1)
            y[..., o] = x[..., lo] * (1 - (src - lo)) + x[..., hi] * (src - lo)
        else:  # cubic, A = -0.75, edges replicated
            b = math.floor(src)
            t = src - b
            a = -0.75
            w = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                 ((a + 2) * t - (a + 3)) * t * t + 1,
                 ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                 ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]
            y[..., o] = sum(w[j] * x[..., min(max(b - 1 + j, 0), n - 1)] for j in range(4))
    return np.moveaxis(y, -1, axis)


def np_interpolate(x, size, mode, align):
    kind = {"bicubic": "cubic", "bilinear": "linear", "linear": "linear",
            "trilinear": "linear"}.get(mode, mode)
    for i, out in enumerate(size):
        if out != x.shape[2 + i]:  # a kept size is copied, as PyTorch
            x = _np_axis(x, 2 + i, out, kind, align)
    return x


def _interp_sample(rng):
    mode = str(rng.choice(["nearest", "linear", "bilinear", "bicubic"]))
    nd = 1 if mode == "linear" else (2 if mode in ("bilinear", "bicubic") else
                                     int(rng.integers(1, 3)))
    spatial = tuple(int(v) for v in rng.integers(2, 5, size=nd))
    size = tuple(int(v) for v in rng.integers(1, 7, size=nd))
    align = None if mode == "nearest" else bool(rng.integers(0, 2))
    return _u(rng, -1, 1, (2, 2) + spatial), (size, mode, align)


register(OpRecord("interpolate",
                  lambda x, c: ops.interpolate(x, c[0], mode=c[1], align_corners=c[2]),
                  lambda x, c: np_interpolate(x, c[0], c[1], bool(c[2])), _interp_sample,
                  errors=[(lambda rng: (np.ones((1, 1, 3)), ((4,), "bilinear", None)),
                           ShapeError)]))


def np_pixel_shuffle(x, r):
    n, c, h, w = x.shape
    y = np.zeros((n, c // (r * r), h * r, w * r))
    for ch in range(c):
        o, i, j = ch // (r * r), (ch // r) % r, ch % r
        y[:, o, i::r, j::r] = x[:, ch]
    return y


def np_pixel_unshuffle(x, r):
    n, c, h, w = x.shape
    y = np.zeros((n, c * r * r, h // r, w // r))
    for ch in range(c * r * r):
        o, i, j = ch // (r * r), (ch // r) % r, ch % r
        y[:, ch] = x[:, o, i::r, j::r]
    return y


def _shuffle_sample(rng):
    r = int(rng.integers(1, 4))
    return _u(rng, -1, 1, (2, 2 * r * r, 2, 3)), r


def _unshuffle_sample(rng):
    r = int(rng.integers(1, 4))
    return _u(rng, -1, 1, (2, 2, 2 * r, r)), r


register(OpRecord("pixel_shuffle", ops.pixel_shuffle, np_pixel_shuffle, _shuffle_sample,
                  errors=[(lambda rng: (np.ones((1, 3, 2, 2)), 2), ShapeError)]))
register(OpRecord("pixel_unshuffle", ops.pixel_unshuffle, np_pixel_unshuffle,
                  _unshuffle_sample,
                  errors=[(lambda rng: (np.ones((1, 1, 3, 2)), 2), ShapeError)]))


# -- affine grids and grid sampling ---------------------------------------------------------
def _np_base(n, align):
    if n == 1:
        return np.zeros(1)
    pts = np.linspace(-1.0, 1.0, n)
    return pts if align else pts * (n - 1) / n


def np_affine_grid(theta, size, align):
    spatial = size[2:]
    axes = [_np_base(n, align) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # D, H, W
    coords = np.stack([m.reshape(-1) for m in mesh[::-1]] + [np.ones(mesh[0].size)], axis=1)
    grid = np.einsum("pk,nck->npc", coords, theta)
    return grid.reshape((size[0],) + tuple(spatial) + (len(spatial),))


def _affine_sample(rng):
    nd = int(rng.integers(2, 4))
    size = (2, 1) + tuple(int(v) for v in rng.integers(1, 4, size=nd))
    return _u(rng, -1, 1, (2, nd, nd + 1)), (size, bool(rng.integers(0, 2)))


register(OpRecord("affine_grid", lambda t, c: ops.affine_grid(t, c[0], c[1]),
                  lambda t, c: np_affine_grid(t, *c), _affine_sample,
                  errors=[(lambda rng: (np.ones((1, 2, 3)), ((1, 1, 2, 2, 2), False)),
                           ShapeError)]))


def np_grid_sample(x, grid, padding, align):
    n, c, h, w = x.shape
    ho, wo = grid.shape[1:3]
    y = np.zeros((n, c, ho, wo))

    def source(v, size):
        u = (v + 1) * (size - 1) / 2 if align else ((v + 1) * size - 1) / 2
        return min(max(u, 0.0), size - 1.0) if padding == "border" else u

    for a, i, j in itertools.product(range(n), range(ho), range(wo)):
        u, v = source(grid[a, i, j, 0], w), source(grid[a, i, j, 1], h)
        u0, v0 = math.floor(u), math.floor(v)
        for du, dv in itertools.product((0, 1), (0, 1)):
            uu, vv = u0 + du, v0 + dv
            if 0 <= uu < w and 0 <= vv < h:
                wt = (1 - abs(u - uu)) * (1 - abs(v - vv))
                y[a, :, i, j] += wt * x[a, :, vv, uu]
    return y


def _grid_sample_sample(rng):
    h, w = (int(v) for v in rng.integers(2, 5, size=2))
    align = bool(rng.integers(0, 2))
    padding = str(rng.choice(["zeros", "border"]))
    ho, wo = (int(v) for v in rng.integers(1, 4, size=2))

    def coords(size, shape):
        # Pixel coordinates inside the image with fractional parts in [0.2, 0.8]: away from
        # the kinks of bilinear interpolation and of the border clipping.
        pix = rng.integers(0, size - 1, size=shape) + rng.uniform(0.2, 0.8, size=shape)
        return pix * 2 / (size - 1) - 1 if align else (2 * pix + 1) / size - 1

    grid = np.stack([coords(w, (2, ho, wo)), coords(h, (2, ho, wo))], axis=-1)
    return _u(rng, -1, 1, (2, 2, h, w)), grid, (padding, align)


register(OpRecord("grid_sample",
                  lambda x, g, c: ops.grid_sample(x, g, "bilinear", c[0], c[1]),
                  lambda x, g, c: np_grid_sample(x, g, *c), _grid_sample_sample,
                  errors=[(lambda rng: (np.ones((1, 1, 2, 2)), np.ones((1, 2, 2, 3)),
                                        ("zeros", False)), ShapeError)]))


# -- attention ------------------------------------------------------------------------------
# Variants: 0 no mask, 1 causal, 2 a boolean mask (True takes part), 3 an additive mask.
def np_sdpa(q, k, v, variant, mask):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if variant == 1:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
    elif variant == 2:
        scores = np.where(mask > 0, scores, -np.inf)
    elif variant == 3:
        scores = scores + mask
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def _sdpa_sample(rng):
    b, heads = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    n_l, n_s, e, ev = (int(v) for v in rng.integers(1, 4, size=4))
    variant = int(rng.integers(0, 4))
    if variant == 1:
        n_s = n_l
    # A (L, S) mask broadcast over batch and heads; every query keeps its first key.
    mask = _u(rng, -2, 0, (n_l, n_s))
    if variant == 2:
        mask = np.where(rng.random((n_l, n_s)) < 0.6, 1.0, 0.0)
        mask[:, 0] = 1.0
    return (_u(rng, -1, 1, (b, heads, n_l, e)), _u(rng, -1, 1, (b, heads, n_s, e)),
            _u(rng, -1, 1, (b, heads, n_s, ev)), variant, mask)


def _sdpa_fn(q, k, v, variant, mask):
    if variant == 2:
        m = mask.array if hasattr(mask, "array") else mask
        return ops.scaled_dot_product_attention(q, k, v, attn_mask=m > 0)
    return ops.scaled_dot_product_attention(q, k, v, is_causal=variant == 1,
                                            attn_mask=mask if variant == 3 else None)


register(OpRecord("scaled_dot_product_attention", _sdpa_fn, np_sdpa, _sdpa_sample,
                  diff=(0, 1, 2),
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 1)),
                                        0, np.zeros((2, 4))), ShapeError)]))
