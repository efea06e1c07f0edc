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


# Bilinear sampling is a polynomial of degree 3 in (x, grid): a finer step keeps the
# central differences' cubic error below the tolerance.
register(OpRecord("spatial_transformer_sampler", ops.spatial_transformer_sampler,
                  _sampler_ref, _sampler_sample, eps=2e-4))


# -- sequences ------------------------------------------------------------------------------
def _crf_sample(rng):
    k = 2
    lengths = (3, 3, 1)  # batch sizes per step, non-increasing
    xs = tuple(_u(rng, -1, 1, (n, k)) for n in lengths)
    ys = tuple(rng.integers(0, k, size=n) for n in lengths)
    return (_u(rng, -1, 1, (k, k)),) + xs + ys + (int(rng.integers(0, 2)),)


def _crf_fn(cost, x0, x1, x2, y0, y1, y2, r):
    return ops.crf1d(cost, [x0, x1, x2], [y0, y1, y2], ("mean", "no")[r])


def _crf_ref(cost, x0, x1, x2, y0, y1, y2, r):
    """Brute force: the log-partition over every label sequence of each batch row."""
    import itertools

    xs, ys = [x0, x1, x2], [y0, y1, y2]
    k = cost.shape[0]
    losses = []
    for row in range(len(x0)):
        steps = [x for x in xs if len(x) > row]

        def score(seq, steps=steps, row=row):
            s = sum(x[row, q] for x, q in zip(steps, seq))
            return s + sum(cost[a, b] for a, b in zip(seq[:-1], seq[1:]))

        logz = np.logaddexp.reduce([score(q) for q in itertools.product(range(k),
                                                                         repeat=len(steps))])
        losses.append(logz - score([y[row] for y, x in zip(ys, xs) if len(x) > row]))
    losses = np.array(losses)
    return losses.sum() / len(x0) if r == 0 else losses


register(OpRecord("crf1d", _crf_fn, _crf_ref, _crf_sample))


def _viterbi_sample(rng):
    """Scores whose best path wins by at least 0.1 (no tie within a difference step)."""
    import itertools

    while True:
        cost, *xs = (_u(rng, -2, 2, (3, 3)),) + tuple(_u(rng, -2, 2, (2, 3)) for _ in range(3))
        margins = []
        for row in range(2):
            totals = sorted(xs[0][row, a] + xs[1][row, b] + xs[2][row, c] + cost[a, b]
                            + cost[b, c] for a, b, c in itertools.product(range(3), repeat=3))
            margins.append(totals[-1] - totals[-2])
        if min(margins) > 0.1:
            return (cost, *xs)


def _viterbi_ref(cost, x0, x1, x2):
    import itertools

    best = []
    for row in range(2):
        best.append(max(x0[row, a] + x1[row, b] + x2[row, c] + cost[a, b] + cost[b, c]
                        for a, b, c in itertools.product(range(3), repeat=3)))
    return np.array(best)


register(OpRecord("argmax_crf1d", lambda c, *xs: ops.argmax_crf1d(c, list(xs))[0],
                  _viterbi_ref, _viterbi_sample))


def _ctc_sample(rng):
    return tuple(_u(rng, -2, 2, (2, 3)) for _ in range(3)) + (
        np.array([[1, 2], [2, 2]]), np.array([3, 2]), np.array([2, 1]))


def _ctc_fn(x0, x1, x2, t, il, ll):
    return ops.connectionist_temporal_classification([x0, x1, x2], t, 0, il, ll, "no")


def _ctc_ref(x0, x1, x2, t, il, ll):
    """Brute force: the probability of every alignment that collapses to the labels."""
    import itertools

    xs = np.stack([x0, x1, x2])
    logp = xs - np.log(np.exp(xs).sum(-1, keepdims=True))
    out = []
    for b in range(xs.shape[1]):
        target = list(t[b, :ll[b]])
        total = []
        for path in itertools.product(range(3), repeat=int(il[b])):
            collapsed = [q for i, q in enumerate(path) if q != 0 and (i == 0 or
                                                                      path[i - 1] != q)]
            if collapsed == target:
                total.append(sum(logp[i, b, q] for i, q in enumerate(path)))
        out.append(-np.logaddexp.reduce(total))
    return np.array(out)


register(OpRecord("connectionist_temporal_classification", _ctc_fn, _ctc_ref, _ctc_sample,
                  diff=(0, 1, 2)))


def _sig(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def _slstm_ref(c1, c2, x1, x2):
    g1, g2 = x1.reshape(len(x1), -1, 4), x2.reshape(len(x2), -1, 4)
    c = (np.tanh(g1[..., 0]) * _sig(g1[..., 1]) + np.tanh(g2[..., 0]) * _sig(g2[..., 1])
         + _sig(g1[..., 2]) * c1 + _sig(g2[..., 2]) * c2)
    return c, _sig(g1[..., 3] + g2[..., 3]) * np.tanh(c)


register(OpRecord("slstm", ops.slstm, _slstm_ref,
                  lambda rng: (_u(rng, -1, 1, (2, 2)), _u(rng, -1, 1, (2, 2)),
                               _u(rng, -1, 1, (2, 8)), _u(rng, -1, 1, (2, 8)))))


def _tree_ref(c1, c2, x):
    g = x.reshape(len(x), 5, -1)
    c = np.tanh(g[:, 0]) * _sig(g[:, 1]) + _sig(g[:, 3]) * c1 + _sig(g[:, 4]) * c2
    return c, _sig(g[:, 2]) * np.tanh(c)


register(OpRecord("tree_lstm", ops.tree_lstm, _tree_ref,
                  lambda rng: (_u(rng, -1, 1, (2, 2)), _u(rng, -1, 1, (2, 2)),
                               _u(rng, -1, 1, (2, 10)))))


def _ns_ref(x, w, t, s):
    wx = np.einsum("bd,bkd->bk", x, w[np.where(t[:, None] >= 0, np.concatenate(
        [t[:, None], s[:, 1:]], 1), 0)])
    wx[:, 0] *= -1
    return np.where(t >= 0, np.logaddexp(wx, 0).sum(1), 0.0)


register(OpRecord("negative_sampling",
                  lambda x, w, t, s: ops.negative_sampling(x, t, w, lambda shape: s, 2, "no"),
                  _ns_ref,
                  lambda rng: (_u(rng, -1, 1, (3, 2)), _u(rng, -1, 1, (4, 2)),
                               np.array([0, -1, 3]), rng.integers(0, 4, size=(3, 3))),
                  diff=(0, 1)))


def _bo_ref(x, w, t, s):
    pos = (w[t] * x).sum(1, keepdims=True)
    neg = np.einsum("bd,bkd->bk", x, w[s])
    logz = np.logaddexp.reduce(np.concatenate([pos, neg], 1), axis=1, keepdims=True)
    return -((pos - logz)[:, 0] + np.log(1 - np.exp(neg - logz)).sum(1))


register(OpRecord("black_out", lambda x, w, t, s: ops.black_out(x, t, w, s, "no"), _bo_ref,
                  lambda rng: (_u(rng, -1, 1, (3, 2)), _u(rng, -1, 1, (5, 2)),
                               rng.integers(0, 5, size=3), rng.integers(0, 5, size=(3, 2))),
                  diff=(0, 1)))


def _deform_ref(x, offset, w, b):
    n, c, h, wd = x.shape
    out_c, _, kh, kw = w.shape
    oh, ow = offset.shape[2:]
    kk = kh * kw
    ys = np.arange(oh)[None, None, :, None]
    xs = np.arange(ow)[None, None, None, :]
    fx = (np.arange(kk) % kw)[None, :, None, None]
    fy = (np.arange(kk) // kw)[None, :, None, None]
    gx = ((offset[:, :kk] + xs + fx) / (wd - 1) - 0.5) * 2
    gy = ((offset[:, kk:] + ys + fy) / (h - 1) - 0.5) * 2
    grid = np.concatenate([gx, gy], 1).reshape(n, 2, kk, oh * ow)
    sampled = _sampler_ref(x, grid)  # (N, C, kk, oh ow)
    y = np.einsum("nckp,ock->nop", sampled, w.reshape(out_c, c, kk))
    return y.reshape(n, out_c, oh, ow) + b[None, :, None, None]


def _deform_sample(rng):
    """Offsets keep every tap inside the image and off the pixel lattice (the bilinear
    weights' kinks)."""
    x = _u(rng, -1, 1, (1, 2, 4, 4))
    frac = rng.uniform(0.15, 0.85, size=(1, 8, 3, 3))
    shift = rng.integers(-1, 1, size=(1, 8, 3, 3))
    return x, frac + shift * (rng.random((1, 8, 3, 3)) < 0.3), _u(
        rng, -1, 1, (2, 2, 2, 2)), _u(rng, -1, 1, (2,))


register(OpRecord("deformable_convolution_2d_sampler",
                  ops.deformable_convolution_2d_sampler, _deform_ref, _deform_sample, eps=2e-4))
