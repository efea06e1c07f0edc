"""Records of the Chainer-named connection, pooling and normalization functions.

References are NumPy float64 loops written from Chainer's definitions: ``cover_all``
output sizes, ``-inf`` padding for max pooling, ``col2im`` cropping for unpooling.
Samples are small so that third-order checks stay fast.
"""

from __future__ import annotations

import itertools

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _distinct, _u, np_conv, np_conv_transpose
from portagrad import DTypeError, ShapeError


def _rec(name, fn, ref, sample, **kw):
    register(OpRecord(name, fn, ref, sample, **kw))


def _outsize(size, k, s, p, cover_all, d=1):
    dk = k + (k - 1) * (d - 1)
    return (size + 2 * p - dk + (s - 1 if cover_all else 0)) // s + 1


def _pad_cover(x, k, s, p, cover_all, value, d=None):
    """``x`` padded by ``p`` and by what ``cover_all`` adds at the high end."""
    nd = x.ndim - 2
    d = d or (1,) * nd
    widths = [(0, 0), (0, 0)]
    for i in range(nd):
        o = _outsize(x.shape[2 + i], k[i], s[i], p[i], cover_all, d[i])
        need = (o - 1) * s[i] + k[i] + (k[i] - 1) * (d[i] - 1)
        widths.append((p[i], max(p[i], need - x.shape[2 + i] - p[i])))
    return np.pad(x, widths, constant_values=value)


# -- connection -----------------------------------------------------------------------------
def _conv_sample(nd):
    def sample(rng):
        k = tuple(int(v) for v in rng.integers(1, 3, size=nd))
        s = tuple(int(v) for v in rng.integers(1, 3, size=nd))
        p = tuple(int(v) for v in rng.integers(0, 2, size=nd))
        d = tuple(int(v) for v in rng.integers(1, 3, size=nd)) if nd < 3 else (1,) * nd
        side = {1: 5, 2: 4, 3: 3}[nd]
        x = _u(rng, -1, 1, (2, 2) + (side,) * nd)
        w = _u(rng, -1, 1, (2, 2) + k)
        b = _u(rng, -1, 1, (2,)) if rng.random() < 0.5 else None
        return x, w, b, (s, p, d, bool(rng.integers(0, 2)))

    return sample


def _conv_ref(x, w, b, cfg):
    s, p, d, cover = cfg
    xp = _pad_cover(x, w.shape[2:], s, p, cover, 0.0, d)
    return np_conv(xp, w, b, s, 0, d)


def _conv_fn(name):
    f = getattr(ops, name)
    return lambda x, w, b, cfg: f(x, w, b, cfg[0], cfg[1], cfg[3], cfg[2])


_CONV_ERR = [(lambda rng: (np.ones((2, 3, 4)), np.ones((2, 3, 3, 3)), None,
                           ((1, 1), (0, 0), (1, 1), False)), ShapeError)]
_rec("convolution_nd", _conv_fn("convolution_nd"), _conv_ref,
     lambda rng: _conv_sample(int(rng.integers(1, 3)))(rng), errors=_CONV_ERR)
for _nd in (1, 2, 3):
    _rec(f"convolution_{_nd}d", _conv_fn(f"convolution_{_nd}d"), _conv_ref, _conv_sample(_nd))
_rec("dilated_convolution_2d",
     lambda x, w, b, cfg: ops.dilated_convolution_2d(x, w, b, cfg[0], cfg[1], cfg[2], cfg[3]),
     _conv_ref, _conv_sample(2))


def _deconv_sample(nd):
    def sample(rng):
        k = tuple(int(v) for v in rng.integers(1, 4, size=nd))
        s = tuple(int(v) for v in rng.integers(1, 3, size=nd))
        p = tuple(min(int(rng.integers(0, 2)), kk - 1) for kk in k)
        x = _u(rng, -1, 1, (2, 2) + (2,) * nd)
        w = _u(rng, -1, 1, (2, 2) + k)
        b = _u(rng, -1, 1, (2,)) if rng.random() < 0.5 else None
        extra = tuple(int(rng.integers(0, ss)) for ss in s)
        return x, w, b, (s, p, extra)

    return sample


def _deconv_fn(name):
    f = getattr(ops, name)

    def fn(x, w, b, cfg):
        s, p, extra = cfg
        size = tuple(ss * (n - 1) + kk - 2 * pp + e for n, kk, ss, pp, e in
                     zip(x.shape[2:], w.shape[2:], s, p, extra))
        return f(x, w, b, s, p, size)

    return fn


def _deconv_ref(x, w, b, cfg):
    s, p, extra = cfg
    return np_conv_transpose(x, w, b, s, p, extra)


_rec("deconvolution_nd", _deconv_fn("deconvolution_nd"), _deconv_ref,
     lambda rng: _deconv_sample(int(rng.integers(1, 3)))(rng))
for _nd in (1, 2, 3):
    _rec(f"deconvolution_{_nd}d", _deconv_fn(f"deconvolution_{_nd}d"), _deconv_ref,
         _deconv_sample(_nd))


def _depthwise_ref(x, w, b, cfg):
    m, c = w.shape[:2]
    wg = np.transpose(w, (1, 0, 2, 3)).reshape(c * m, 1, *w.shape[2:])
    return np_conv(x, wg, b, cfg[0], cfg[1], 1, c)


def _depthwise_sample(rng):
    x = _u(rng, -1, 1, (2, 2, 4, 4))
    w = _u(rng, -1, 1, (int(rng.integers(1, 3)), 2, 2, 2))
    b = _u(rng, -1, 1, (2 * w.shape[0],)) if rng.random() < 0.5 else None
    return x, w, b, (int(rng.integers(1, 3)), int(rng.integers(0, 2)))


_rec("depthwise_convolution_2d",
     lambda x, w, b, cfg: ops.depthwise_convolution_2d(x, w, b, cfg[0], cfg[1]),
     _depthwise_ref, _depthwise_sample,
     errors=[(lambda rng: (np.ones((1, 3, 4, 4)), np.ones((1, 2, 2, 2)), None, (1, 0)),
              ShapeError)])


def _local_ref(x, w, b, s):
    o, oh, ow = w.shape[:3]
    kh, kw = w.shape[4:]
    y = np.zeros((x.shape[0], o, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        patch = x[:, :, i * s:i * s + kh, j * s:j * s + kw]
        y[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w[:, i, j])
    return y + (0 if b is None else b[None])


def _local_sample(rng):
    s = int(rng.integers(1, 3))
    o = (4 - 2) // s + 1
    w = _u(rng, -1, 1, (2, o, o, 2, 2, 2))
    return (_u(rng, -1, 1, (2, 2, 4, 4)), w,
            _u(rng, -1, 1, (2, o, o)) if rng.random() < 0.5 else None, s)


_rec("local_convolution_2d", ops.local_convolution_2d, _local_ref, _local_sample)


def _embed_sample(rng):
    return rng.integers(-1, 4, size=(2, 3)), _u(rng, -1, 1, (4, 2)), bool(rng.integers(0, 2))


def _embed_ref(ids, w, ignore):
    y = w[np.where(ids < 0, 0, ids)]
    return np.where((ids < 0)[..., None] & ignore, 0.0, y)


_rec("embed_id", lambda i, w, ig: ops.embed_id(i, w, -1 if ig else None), _embed_ref,
     lambda rng: (lambda a: (np.where(a[2], a[0], np.abs(a[0])), a[1], a[2]))(
         _embed_sample(rng)),
     errors=[(lambda rng: (np.ones(2), np.ones((3, 2)), False), DTypeError)])


def _im2col_ref(x, k, s, p, cover, d):
    xp = _pad_cover(x, k, s, p, cover, 0.0, d)
    n, c = x.shape[:2]
    oh = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    col = np.zeros((n, c, k[0], k[1], oh, ow))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        col[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0],
                             j * d[1]:j * d[1] + s[1] * ow:s[1]]
    return col.reshape(n, -1, oh, ow)


def _im2col_sample(rng):
    k = tuple(int(v) for v in rng.integers(1, 4, size=2))
    return (_u(rng, -1, 1, (1, 2, 5, 6)), (k, tuple(int(v) for v in rng.integers(1, 3, 2)),
                                           tuple(int(v) for v in rng.integers(0, 2, 2)),
                                           bool(rng.integers(0, 2)),
                                           tuple(int(v) for v in rng.integers(1, 3, 2))))


_rec("im2col", lambda x, cfg: ops.im2col(x, *cfg), lambda x, cfg: _im2col_ref(x, *cfg),
     _im2col_sample, errors=[(lambda rng: (np.ones((2, 4, 4)), (2, 1, 0, False, 1)),
                              ShapeError)])


# -- pooling --------------------------------------------------------------------------------
def _windows(xp, k, s):
    """Windows of an already padded array: (N, C, *out, prod(k))."""
    nd = xp.ndim - 2
    out = tuple((xp.shape[2 + i] - k[i]) // s[i] + 1 for i in range(nd))
    parts = []
    for off in itertools.product(*(range(kk) for kk in k)):
        key = (slice(None), slice(None)) + tuple(
            slice(off[i], off[i] + s[i] * out[i], s[i]) for i in range(nd))
        parts.append(xp[key])
    return np.stack(parts, axis=-1)


def _max_ref(x, cfg):
    k, s, p, cover = cfg
    return _windows(_pad_cover(x, k, s, p, cover, -np.inf), k, s).max(-1)


def _pool_cfg(rng, nd, kind):
    k = tuple(int(v) for v in rng.integers(2, 4, size=nd))
    s = tuple(int(rng.integers(1, kk + 1)) for kk in k)
    if kind == "max":  # no window wholly in the padding
        p = tuple(int(rng.integers(0, kk - ss + 1)) for kk, ss in zip(k, s))
        return k, s, p, bool(rng.integers(0, 2))
    # every window keeps an input element (pad < ksize): no mean over nothing
    return k, s, tuple(int(rng.integers(0, kk)) for kk in k), bool(rng.integers(0, 2))


def _pool_sample(nd, kind):
    def sample(rng):
        side = {1: 5, 2: 4, 3: 3}[nd]
        x = _distinct(rng, (2, 2) + (side,) * nd) if kind == "max" else _u(
            rng, -1, 1, (2, 2) + (side,) * nd)
        return x, _pool_cfg(rng, nd, kind)

    return sample


def _max_fn(name):
    f = getattr(ops, name)
    return lambda x, cfg: f(x, cfg[0], cfg[1], cfg[2], cfg[3])


_rec("max_pooling_nd", _max_fn("max_pooling_nd"), _max_ref,
     lambda rng: _pool_sample(int(rng.integers(1, 3)), "max")(rng),
     errors=[(lambda rng: (np.ones((2, 3)), ((2,), (1,), (0,), True)), ShapeError)])
for _nd in (1, 2, 3):
    _rec(f"max_pooling_{_nd}d", _max_fn(f"max_pooling_{_nd}d"), _max_ref,
         _pool_sample(_nd, "max"))


def _avg_ref(x, cfg):
    k, s, p, exclude = cfg
    nd = x.ndim - 2
    total = _windows(_pad_cover(x, k, s, p, False, 0.0), k, s).sum(-1)
    if exclude:
        ones = np.ones((1, 1) + x.shape[2:])
        return total / _windows(_pad_cover(ones, k, s, p, False, 0.0), k, s).sum(-1)
    return total / np.prod(k[:nd])


def _avg_fn(name):
    f = getattr(ops, name)
    if name == "average_pooling_2d":
        return lambda x, cfg: f(x, cfg[0], cfg[1], cfg[2])
    return lambda x, cfg: f(x, cfg[0], cfg[1], cfg[2], None if cfg[3] else 0)


def _avg2d_sample(rng):
    x, (k, s, p, _) = _pool_sample(2, "avg")(rng)
    return x, (k, s, p, False)


_rec("average_pooling_nd", _avg_fn("average_pooling_nd"), _avg_ref,
     lambda rng: _pool_sample(int(rng.integers(1, 3)), "avg")(rng))
for _nd in (1, 3):
    _rec(f"average_pooling_{_nd}d", _avg_fn(f"average_pooling_{_nd}d"), _avg_ref,
         _pool_sample(_nd, "avg"))
_rec("average_pooling_2d", _avg_fn("average_pooling_2d"), _avg_ref, _avg2d_sample)


def _col2im(col, s, p, out):
    """Chainer's col2im: add each window back, then crop ``[p, p + out)`` (zero-extended)."""
    nd = len(s)
    k = col.shape[2:2 + nd]
    ins = col.shape[2 + nd:]
    full = np.zeros(col.shape[:2] + tuple((n - 1) * ss + kk + pp + oo for n, ss, kk, pp, oo in
                                          zip(ins, s, k, p, out)))
    for pos in itertools.product(*(range(n) for n in ins)):
        for off in itertools.product(*(range(kk) for kk in k)):
            key = (slice(None), slice(None)) + tuple(pos[i] * s[i] + off[i] for i in range(nd))
            full[key] += col[(slice(None), slice(None)) + off + pos]
    return full[(slice(None), slice(None)) + tuple(slice(pp, pp + oo) for pp, oo in zip(p, out))]


def _unpool_ref(x, cfg):
    k, s, p, cover = cfg
    nd = x.ndim - 2
    out = tuple(ss * (n - 1) + kk - (ss - 1 if cover else 0) - 2 * pp
                for n, kk, ss, pp in zip(x.shape[2:], k, s, p))
    col = np.broadcast_to(x[(slice(None), slice(None)) + (None,) * nd],
                          x.shape[:2] + k + x.shape[2:])
    return _col2im(col, s, p, out)


def _unpool_sample(nd):
    def sample(rng):
        k = tuple(int(v) for v in rng.integers(1, 4, size=nd))
        s = tuple(int(rng.integers(1, kk + 1)) for kk in k)
        p = tuple(int(rng.integers(0, (kk + 1) // 2)) for kk in k)
        return _u(rng, -1, 1, (2, 2) + (2,) * nd), (k, s, p, bool(rng.integers(0, 2)))

    return sample


def _unpool_fn(name):
    f = getattr(ops, name)
    return lambda x, cfg: f(x, cfg[0], cfg[1], cfg[2], None, cfg[3])


_rec("unpooling_nd", _unpool_fn("unpooling_nd"), _unpool_ref,
     lambda rng: _unpool_sample(int(rng.integers(1, 3)))(rng),
     errors=[(lambda rng: (np.ones(3), ((2,), (2,), (0,), True)), ShapeError)])
for _nd in (1, 2, 3):
    _rec(f"unpooling_{_nd}d", _unpool_fn(f"unpooling_{_nd}d"), _unpool_ref, _unpool_sample(_nd))


def _upsample_sample(rng):
    x = _u(rng, -1, 1, (2, 2, 2, 3))
    return x, rng.integers(0, 4, size=x.shape), int(rng.integers(0, 2))


def _upsample_ref(x, idx, p):
    onehot = (idx[:, :, None] == np.arange(4)[None, None, :, None, None]).astype(float)
    col = (onehot * x[:, :, None]).reshape(2, 2, 2, 2, *x.shape[2:])
    out = tuple(2 * (n - 1) + 2 - 1 - 2 * p for n in x.shape[2:])
    return _col2im(col, (2, 2), (p, p), out)


_rec("upsampling_2d", lambda x, i, p: ops.upsampling_2d(x, i, 2, 2, p), _upsample_ref,
     _upsample_sample,
     errors=[(lambda rng: (np.ones((1, 1, 2, 2)), np.zeros((1, 1, 2, 2)), 0), DTypeError)])


def _spp_ref(x, h):
    ys = []
    for level in range(h):
        bins = 2 ** level
        k = tuple(-(-n // bins) for n in x.shape[2:])
        p = tuple((kk * bins - n) // 2 for kk, n in zip(k, x.shape[2:]))
        ys.append(_max_ref(x, (k, k, p, True)).reshape(x.shape[0], -1, 1, 1))
    return np.concatenate(ys, axis=1)


_rec("spatial_pyramid_pooling_2d", lambda x, h: ops.spatial_pyramid_pooling_2d(x, h),
     _spp_ref, lambda rng: (_distinct(rng, (2, 2, 4, 5)), int(rng.integers(1, 3))))


def _resize_ref(x, out, mode):
    n_h, n_w = x.shape[2:]
    y = np.zeros(x.shape[:2] + out)

    def pos(o, n_in, n_out):
        if mode == 0:
            return 0.0 if n_out == 1 else o * (n_in - 1) / (n_out - 1)
        return max((o + 0.5) * n_in / n_out - 0.5, 0.0)

    for i, j in itertools.product(range(out[0]), range(out[1])):
        if mode == 2:
            v, u = min(int(i * n_h / out[0]), n_h - 1), min(int(j * n_w / out[1]), n_w - 1)
            y[:, :, i, j] = x[:, :, v, u]
            continue
        v, u = pos(i, n_h, out[0]), pos(j, n_w, out[1])
        v0, u0 = int(v), int(u)
        v1, u1 = min(v0 + 1, n_h - 1), min(u0 + 1, n_w - 1)
        a, b = v - v0, u - u0
        y[:, :, i, j] = ((1 - a) * (1 - b) * x[:, :, v0, u0] + (1 - a) * b * x[:, :, v0, u1]
                         + a * (1 - b) * x[:, :, v1, u0] + a * b * x[:, :, v1, u1])
    return y


_rec("resize_images",
     lambda x, out, m: ops.resize_images(x, out, mode="nearest" if m == 2 else "bilinear",
                                         align_corners=m == 0), _resize_ref,
     lambda rng: (_u(rng, -1, 1, (1, 2, 3, 4)),
                  tuple(int(v) for v in rng.integers(1, 6, size=2)), int(rng.integers(0, 3))))
