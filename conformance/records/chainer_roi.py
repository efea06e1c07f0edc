"""Records of the RoI pooling functions; references loop over bins as Fast R-CNN does."""

from __future__ import annotations

import math

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _distinct, _u
from portagrad import ShapeError


def _ref(x, boxes, oh, ow, scale, plus_one, how, empty):
    h, w = x.shape[2:]
    out = np.full((len(boxes), x.shape[1], oh, ow), empty)
    for r, (idx, y1, x1, y2, x2) in enumerate(boxes):
        ys, xs, ye, xe = (round(v * scale) for v in (y1, x1, y2, x2))
        rh, rw = max(ye - ys + plus_one, 1), max(xe - xs + plus_one, 1)
        for i in range(oh):
            h0 = min(max(math.floor(i * rh / oh) + ys, 0), h)
            h1 = min(max(math.ceil((i + 1) * rh / oh) + ys, 0), h)
            for j in range(ow):
                w0 = min(max(math.floor(j * rw / ow) + xs, 0), w)
                w1 = min(max(math.ceil((j + 1) * rw / ow) + xs, 0), w)
                if h1 > h0 and w1 > w0:
                    patch = x[int(idx), :, h0:h1, w0:w1].reshape(x.shape[1], -1)
                    out[r, :, i, j] = patch.max(1) if how == "max" else patch.mean(1)
    return out


def _boxes(rng, n):
    """Boxes of at least 2 x 2 pixels inside a 5 x 6 map: no empty bin."""
    y1 = rng.uniform(0, 2, n)
    x1 = rng.uniform(0, 2, n)
    return np.stack([y1, x1, y1 + rng.uniform(2, 3, n), x1 + rng.uniform(2, 4, n)], 1)


def _sample(max_pool):
    def sample(rng):
        x = _distinct(rng, (2, 2, 5, 6)) if max_pool else _u(rng, -1, 1, (2, 2, 5, 6))
        return x, _boxes(rng, 3), rng.integers(0, 2, size=3)

    return sample


def _fast_rcnn_sample(rng):
    x, b, i = _sample(True)(rng)
    return x, np.concatenate([i[:, None].astype(float), b[:, [1, 0, 3, 2]]], axis=1)


register(OpRecord(
    "roi_pooling_2d", lambda x, rois: ops.roi_pooling_2d(x, rois, 2, 2, 1.0),
    lambda x, rois: _ref(x, [(r[0], r[2], r[1], r[4], r[3]) for r in rois], 2, 2, 1.0, 1,
                         "max", 0.0), _fast_rcnn_sample, diff=(0,),
    errors=[(lambda rng: (np.ones((2, 3, 4)), np.ones((1, 5))), ShapeError)]))
register(OpRecord(
    "roi_max_pooling_2d", lambda x, b, i: ops.roi_max_pooling_2d(x, b, i, (2, 2), 1.0),
    lambda x, b, i: _ref(x, [(i[k], *b[k]) for k in range(len(b))], 2, 2, 1.0, 0, "max",
                         -np.inf), _sample(True), diff=(0,)))
register(OpRecord(
    "roi_average_pooling_2d",
    lambda x, b, i: ops.roi_average_pooling_2d(x, b, i, 2, 1.0),
    lambda x, b, i: _ref(x, [(i[k], *b[k]) for k in range(len(b))], 2, 2, 1.0, 0, "mean",
                         0.0), _sample(False), diff=(0,)))


def _align_ref(x, boxes, idx, oh, ow, ratio, how):
    """Chainer's per-point loop: a grid of bilinear samples per bin, then mean or max."""
    n, c, h, w = x.shape
    out = np.zeros((len(boxes), c, oh, ow))

    def bounds(p, limit):
        if p < -1 or p > limit:
            return None
        low = int(np.floor(p))
        low = low - 1 if low == limit else low
        p = 0.0 if low <= -1 else (limit - 1.0 if low + 1 >= limit else p)
        return p, low, low + 1

    for r, (y1, x1, y2, x2) in enumerate(boxes):
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        gh, gw = ratio or int(np.ceil(rh / oh)), ratio or int(np.ceil(rw / ow))
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(gh):
                    by = bounds(y1 + ph * rh / oh + (iy + 0.5) * rh / oh / gh, h)
                    for ix in range(gw):
                        bx = bounds(x1 + pw * rw / ow + (ix + 0.5) * rw / ow / gw, w)
                        if by is None or bx is None:
                            continue
                        (py, yl, yh), (px, xl, xh) = by, bx
                        v = np.zeros(c)
                        for wt, yy, xx in (((yh - py) * (xh - px), yl, xl),
                                           ((yh - py) * (px - xl), yl, xh),
                                           ((py - yl) * (xh - px), yh, xl),
                                           ((py - yl) * (px - xl), yh, xh)):
                            if wt > 0 and 0 <= yy < h and 0 <= xx < w:
                                v = v + wt * x[idx[r], :, yy, xx]
                        vals.append(v)
                if how == "mean":
                    out[r, :, ph, pw] = np.sum(vals, axis=0) / (gh * gw) if vals else 0.0
                else:
                    out[r, :, ph, pw] = np.max(vals, axis=0) if vals else -np.inf
    return out


def _align_values(x, boxes, idx, ratio):
    """Per bin and channel, the interpolated values at its distinct sample points."""
    h, w = x.shape[2:]
    out = []
    for r, (y1, x1, y2, x2) in enumerate(boxes):
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        gh, gw = ratio or int(np.ceil(rh / 2)), ratio or int(np.ceil(rw / 2))
        for ph in range(2):
            for pw in range(2):
                points = {}
                for iy in range(gh):
                    for ix in range(gw):
                        py = min(max(y1 + ph * rh / 2 + (iy + 0.5) * rh / 2 / gh, 0.0), h - 1.0)
                        px = min(max(x1 + pw * rw / 2 + (ix + 0.5) * rw / 2 / gw, 0.0), w - 1.0)
                        y0, x0 = min(int(py), h - 2), min(int(px), w - 2)
                        a, b = py - y0, px - x0
                        v = ((1 - a) * (1 - b) * x[idx[r], :, y0, x0]
                             + (1 - a) * b * x[idx[r], :, y0, x0 + 1]
                             + a * (1 - b) * x[idx[r], :, y0 + 1, x0]
                             + a * b * x[idx[r], :, y0 + 1, x0 + 1])
                        points[(round(py, 9), round(px, 9))] = v
                out.append(np.stack(list(points.values())))
    return out


def _align_sample(rng):
    """Boxes whose sample points stay off the pixel lattice (the bilinear kinks), and
    whose bins' largest two distinct samples differ (no tie for the max)."""
    while True:
        x = _distinct(rng, (2, 2, 5, 6))
        y1 = rng.integers(0, 2, 3) + 0.25
        x1 = rng.integers(0, 2, 3) + 0.25
        boxes = np.stack([y1, x1, y1 + 2.0 + rng.integers(0, 2, 3),
                          x1 + 2.0 + rng.integers(0, 3, 3)], 1)
        idx = rng.integers(0, 2, size=3)
        ratio = int(rng.integers(1, 3))
        gaps = [np.min(np.diff(np.sort(v, axis=0)[-2:], axis=0)) for v in
                _align_values(x, boxes, idx, ratio) if len(v) > 1]
        if not gaps or min(gaps) > 0.05:
            return x, boxes, idx, ratio


register(OpRecord("roi_max_align_2d",
                  lambda x, b, i, s: ops.roi_max_align_2d(x, b, i, 2, 1.0, s),
                  lambda x, b, i, s: _align_ref(x, b, i, 2, 2, s, "max"), _align_sample,
                  diff=(0,)))
register(OpRecord("roi_average_align_2d",
                  lambda x, b, i, s: ops.roi_average_align_2d(x, b, i, 2, 1.0, s),
                  lambda x, b, i, s: _align_ref(x, b, i, 2, 2, s, "mean"), _align_sample,
                  diff=(0,)))
