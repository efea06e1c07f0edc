"""Records of the Chainer-named array, math and activation functions.

References are NumPy float64 written from Chainer's documented formulas; the
connection, pooling and normalization records are in ``chainer_nn.py``.
"""

from __future__ import annotations

import math

import numpy as np

import portagrad.ops as ops
from conformance._db import NON_DIFFERENTIABLE, OpRecord, register
from conformance.records.nn import _away, _shape, _u
from portagrad import DTypeError, ShapeError
from portagrad.xp import namespace_of

NON_DIFFERENTIABLE.update({"fix", "binary_accuracy", "classification_summary", "precision",
                           "recall", "f1_score", "r2_score"})


def _sig(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def _rec(name, fn, ref, sample, **kw):
    register(OpRecord(name, fn, ref, sample, **kw))


def _x(shape_fn, lo=-1.0, hi=1.0):
    return lambda rng: (_u(rng, lo, hi, shape_fn(rng)),)


# -- array ----------------------------------------------------------------------------------
_rec("transpose", lambda x: ops.transpose(x), np.transpose, _x(lambda r: _shape(r, 0, 3)))
_rec("swapaxes", lambda x: ops.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1),
     _x(lambda r: _shape(r, 1, 3)), errors=[(lambda rng: (np.ones(()),), ValueError)])
_rec("rollaxis", lambda x: ops.rollaxis(x, -1, 0), lambda x: np.rollaxis(x, -1, 0),
     _x(lambda r: _shape(r, 1, 3)))
_rec("flatten", ops.flatten, np.ravel, _x(lambda r: _shape(r, 0, 3)))
_rec("fliplr", ops.fliplr, np.fliplr, _x(lambda r: _shape(r, 2, 3)),
     errors=[(lambda rng: (np.ones(3),), ShapeError)])
_rec("flipud", ops.flipud, np.flipud, _x(lambda r: _shape(r, 1, 3)))
_rec("hstack", lambda a, b: ops.hstack([a, b]), lambda a, b: np.hstack([a, b]),
     lambda r: (_u(r, -1, 1, (2, 1)), _u(r, -1, 1, (2, 3))))
_rec("vstack", lambda a, b: ops.vstack([a, b]), lambda a, b: np.vstack([a, b]),
     lambda r: (_u(r, -1, 1, (3,)), _u(r, -1, 1, (2, 3))))
_rec("dstack", lambda a, b: ops.dstack([a, b]), lambda a, b: np.dstack([a, b]),
     lambda r: (_u(r, -1, 1, (2, 3)), _u(r, -1, 1, (2, 3, 2))))
_rec("split_axis", lambda x: ops.split_axis(x, [1, 3], 1),
     lambda x: tuple(np.split(x, [1, 3], axis=1)), _x(lambda r: (2, int(r.integers(3, 6)))))
_rec("separate", lambda x: ops.separate(x, 1), lambda x: tuple(np.moveaxis(x, 1, 0)),
     _x(lambda r: (2, 3)))
_rec("broadcast", lambda a, b: ops.broadcast(a, b), lambda a, b: np.broadcast_arrays(a, b),
     lambda r: (_u(r, -1, 1, (2, 1)), _u(r, -1, 1, (3,))))
def _widest_float(x):
    # float64 where the device has it; JAX without x64 refuses it (a DTypeError).
    info = namespace_of(getattr(x, "array", x)).__array_namespace_info__()
    return ops.float64 if "float64" in info.dtypes(kind="real floating") else ops.float32


_rec("cast", lambda x: ops.cast(ops.cast(x, _widest_float(x)), x.dtype), lambda x: x,
     _x(lambda r: _shape(r, 0, 2)))
_rec("get_item", lambda x: ops.get_item(x, (slice(1, None), 0)), lambda x: x[1:, 0],
     _x(lambda r: (3, 2)))
_rec("select_item", ops.select_item, lambda x, t: x[np.arange(len(t)), t],
     lambda r: (_u(r, -1, 1, (3, 4)), r.integers(0, 4, size=3)),
     errors=[(lambda rng: (np.ones((2, 3)), np.zeros(3, dtype=np.int64)), ShapeError),
             (lambda rng: (np.ones((2, 3)), np.zeros(2)), DTypeError)])


def _perm_sample(rng):
    return _u(rng, -1, 1, (4, 2)), rng.permutation(4), bool(rng.integers(0, 2))


def _perm_ref(x, p, inv):
    return x[np.argsort(p)] if inv else x[p]


_rec("permutate", lambda x, p, inv: ops.permutate(x, p, 0, inv), _perm_ref, _perm_sample)

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_sample(rng):
    return (_u(rng, -1, 1, (3, 4)), ((int(rng.integers(0, 3)), int(rng.integers(0, 3))),
                                     (int(rng.integers(0, 3)), int(rng.integers(0, 3)))),
            _PAD_MODES[int(rng.integers(0, 5))])


def _pad_fn(x, w, mode):
    kw = {"constant_values": 0.5} if mode == "constant" else {}
    return ops.pad(x, w, mode, **kw)


def _pad_ref(x, w, mode):
    kw = {"constant_values": 0.5} if mode == "constant" else {}
    return np.pad(x, w, mode, **kw)


_rec("pad", _pad_fn, _pad_ref, _pad_sample,
     errors=[(lambda rng: (np.ones(3), ((1, 1), (1, 1)), "constant"), ShapeError)])


def _pad_seq_ref(a, b):
    out = np.full((2, 4, 2), -1.0)
    out[0, :len(a)] = a
    out[1, :len(b)] = b
    return out


_rec("pad_sequence", lambda a, b: ops.pad_sequence([a, b], 4, -1.0), _pad_seq_ref,
     lambda r: (_u(r, -1, 1, (3, 2)), _u(r, -1, 1, (int(r.integers(1, 5)), 2))))


def _d2s_ref(x, r=2):
    n, c, h, w = x.shape
    y = np.zeros((n, c // (r * r), h * r, w * r))
    for i in range(r):
        for j in range(r):
            y[:, :, i::r, j::r] = x[:, (i * r + j) * (c // (r * r)):(i * r + j + 1) * (
                c // (r * r))]
    return y


_rec("depth2space", lambda x: ops.depth2space(x, 2), _d2s_ref,
     _x(lambda r: (2, 4 * int(r.integers(1, 3)), 2, 3)),
     errors=[(lambda rng: (np.ones((1, 3, 2, 2)),), ShapeError)])


def _s2d_ref(x, r=2):
    n, c, h, w = x.shape
    return np.concatenate([x[:, :, i::r, j::r] for i in range(r) for j in range(r)], axis=1)


_rec("space2depth", lambda x: ops.space2depth(x, 2), _s2d_ref,
     _x(lambda r: (2, int(r.integers(1, 3)), 4, 2)))
_rec("diagonal", lambda x: ops.diagonal(x, 1, 1, 0),
     lambda x: np.diagonal(x, 1, 1, 0), _x(lambda r: (3, 4, 2)))
_rec("identity", lambda a, b: ops.identity(a, b), lambda a, b: (a, b),
     lambda r: (_u(r, -1, 1, (2,)), _u(r, -1, 1, (3,))))
_rec("transpose_sequence", lambda a, b: ops.transpose_sequence([a, b]),
     lambda a, b: tuple(np.stack([s[t] for s in (a, b) if len(s) > t])
                        for t in range(len(a))),
     lambda r: (_u(r, -1, 1, (3, 2)), _u(r, -1, 1, (int(r.integers(1, 4)), 2))))
_rec("copy", lambda x: ops.copy(x, x.device), lambda x: x, _x(lambda r: _shape(r, 0, 2)))

# -- math -----------------------------------------------------------------------------------
# absolute, arccos, arcsin, arctan, arctan2 and arctanh are the standard's abs, acos, asin,
# atan, atan2 and atanh themselves, whose records (core.py) cover them; fix is trunc.


def _avg_sample(rng):
    return _u(rng, -1, 1, (3, 4)), _u(rng, 0.5, 2, (4,)), bool(rng.integers(0, 2))


_rec("average", lambda x, w, k: ops.average(x, 1, w, k),
     lambda x, w, k: np.average(x, 1, w, keepdims=k) if k else np.average(x, 1, w),
     _avg_sample, errors=[(lambda rng: (np.ones((2, 3)), np.ones(2), False), ShapeError)])


def _bmm_sample(rng):
    ta, tb = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    a = _u(rng, -1, 1, (2, 4, 3) if ta else (2, 3, 4))
    b = _u(rng, -1, 1, (2, 2, 4) if tb else (2, 4, 2))
    return a, b, ta, tb


def _bmm_ref(a, b, ta, tb):
    return (np.swapaxes(a, 1, 2) if ta else a) @ (np.swapaxes(b, 1, 2) if tb else b)


_rec("batch_matmul", ops.batch_matmul, _bmm_ref, _bmm_sample)
_rec("batch_l2_norm_squared", ops.batch_l2_norm_squared,
     lambda x: (x.reshape(len(x), -1) ** 2).sum(1), _x(lambda r: _shape(r, 1, 3)))
_rec("bias", lambda x, y: ops.bias(x, y, 1), lambda x, y: x + y[None, :, :, None],
     lambda r: (_u(r, -1, 1, (2, 3, 2, 2)), _u(r, -1, 1, (3, 2))),
     errors=[(lambda rng: (np.ones((2, 3)), np.ones(2)), ShapeError)])
_rec("scale", lambda x, y: ops.scale(x, y, 1), lambda x, y: x * y[None, :, None],
     lambda r: (_u(r, -1, 1, (2, 3, 2)), _u(r, -1, 1, (3,))))
_rec("cumsum", lambda x: ops.cumsum(x), lambda x: np.cumsum(x), _x(lambda r: _shape(r, 1, 2)))
_rec("cumprod", lambda x: ops.cumprod(x, 1), lambda x: np.cumprod(x, 1),
     lambda r: (_away(r, 0.5, 1.5, (2, 3)),))


def _fmod_sample(rng):
    d = _away(rng, 0.7, 1.3, (5,))
    q = rng.integers(-3, 4, size=5) + rng.uniform(0.1, 0.9, size=5)
    return q * d, d


_rec("fmod", ops.fmod, np.fmod, _fmod_sample)
_rec("linear_interpolate", ops.linear_interpolate, lambda p, x, y: p * x + (1 - p) * y,
     lambda r: (_u(r, 0, 1, (4,)), _u(r, -1, 1, (4,)), _u(r, -1, 1, (4,))))
_rec("rsqrt", ops.rsqrt, lambda x: 1 / np.sqrt(x), _x(lambda r: _shape(r, 0, 2), 0.5, 2))
_rec("squared_difference", ops.squared_difference, lambda a, b: (a - b) ** 2,
     lambda r: (_u(r, -1, 1, (4,)), _u(r, -1, 1, (4,))))


def _spd(rng, shape):
    a = _u(rng, -1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


_rec("det", ops.det, np.linalg.det, lambda r: (_spd(r, (3, 3)),),
     errors=[(lambda rng: (np.ones((2, 3)),), ShapeError)])
_rec("batch_det", ops.batch_det, np.linalg.det, lambda r: (_spd(r, (2, 2, 2)),),
     errors=[(lambda rng: (np.ones((2, 2)),), ShapeError)])
_rec("inv", ops.inv, np.linalg.inv, lambda r: (_spd(r, (3, 3)),))
_rec("batch_inv", ops.batch_inv, np.linalg.inv, lambda r: (_spd(r, (2, 2, 2)),))
_rec("cholesky", lambda a: ops.cholesky(ops.add(a, ops.matrix_transpose(a)) * 0.5),
     lambda a: np.linalg.cholesky((a + a.T) / 2), lambda r: (_spd(r, (3, 3)),))
_np_erf = np.vectorize(math.erf)
_rec("erf", ops.erf, _np_erf, _x(lambda r: _shape(r, 0, 2), -3, 3))

# -- activations and noise ------------------------------------------------------------------
_rec("clipped_relu", lambda x: ops.clipped_relu(x, 1.5), lambda x: np.clip(x, 0, 1.5),
     lambda r: (_away(r, 0.1, 1.4, (5,)) + r.choice([0.0, 1.5], size=5) * 1.0
                + r.choice([-0.05, 0.05], size=5),),
     errors=[(lambda rng: (np.arange(3),), DTypeError)])
_rec("crelu", lambda x: ops.crelu(x, 1),
     lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], 1),
     lambda r: (_away(r, 0.1, 2, (2, 3)),))
_rec("swish", ops.swish, lambda x, b: x * _sig(b[None, :, None] * x),
     lambda r: (_u(r, -2, 2, (2, 3, 2)), _u(r, 0.5, 2, (3,))),
     errors=[(lambda rng: (np.ones((2, 3)), np.ones(2)), ShapeError)])
_rec("rrelu", lambda x, r_: ops.rrelu(x, r=r_, train=True),
     lambda x, r_: np.where(x >= 0, x, x * r_),
     lambda r: (_away(r, 0.1, 2, (2, 3)), _u(r, 0.125, 0.33, (2, 3))), diff=(0,))
_rec("gaussian", lambda m, v, e: ops.gaussian(m, v, eps=e),
     lambda m, v, e: m + np.exp(v / 2) * e,
     lambda r: (_u(r, -1, 1, (2, 3)), _u(r, -1, 1, (2, 3)), _u(r, -2, 2, (2, 3))), diff=(0, 1))


def _generator_draw(shape, like, seed, low=None):
    from portagrad.random import Generator

    g = Generator(seed)
    if low is None:
        return g.uniform(shape, like=like)
    return g.uniform(shape, low, 1.0, like=like)


def _gumbel_fn(lp):
    from portagrad.random import Generator

    return ops.gumbel_softmax(lp, 0.5, 1, generator=Generator(5))


def _gumbel_ref(lp):
    u = _generator_draw(lp.shape, lp, 5, float(np.finfo(lp.dtype).smallest_normal))
    z = (lp - np.log(-np.log(u))) / 0.5
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


_RANDOM_SKIP = {"torch": "the draw comes from torch's generator, not the host stream the "
                         "reference replays",
                "cupy": "the draw comes from CuPy's generator, not the host stream"}
_rec("gumbel_softmax", _gumbel_fn, _gumbel_ref, lambda r: (_u(r, -2, 0, (2, 3)),),
     skip=_RANDOM_SKIP)


def _zoneout_fn(h, x):
    from portagrad.random import Generator

    return ops.zoneout(h, x, 0.4, train=True, generator=Generator(9))


_rec("zoneout", _zoneout_fn,
     lambda h, x: np.where(_generator_draw(x.shape, x, 9) >= 0.4, x, h),
     lambda r: (_u(r, -1, 1, (3, 4)), _u(r, -1, 1, (3, 4))), skip=_RANDOM_SKIP)


def _dropconnect_ref(x, w, b, mask):
    wm = w * mask / 0.75
    return np.einsum("noi,ni->no", wm, x) + b


_rec("simplified_dropconnect",
     lambda x, w, b, m: ops.simplified_dropconnect(x, w, b, 0.25, True, m),
     _dropconnect_ref,
     lambda r: (_u(r, -1, 1, (2, 3)), _u(r, -1, 1, (4, 3)), _u(r, -1, 1, (4,)),
                r.uniform(size=(2, 4, 3)) > 0.3), diff=(0, 1, 2))


def _strided_ref(x, shape, strides, offset):
    return np.lib.stride_tricks.as_strided(
        x.ravel()[offset:], shape, tuple(s * x.itemsize for s in strides)).copy()


_rec("as_strided", lambda x, sh, st, off: ops.as_strided(x, sh, st, off), _strided_ref,
     lambda r: (_u(r, -1, 1, (2, 4)), (3, 2), (2, 1), int(r.integers(0, 2))),
     errors=[(lambda rng: (np.ones(4), (3, 2), (1, 2), 0), ShapeError)])
