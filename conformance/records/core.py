"""Records of the core ops: elementwise, reductions, products, shapes and indexing."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from portagrad import DeviceMismatchError, DTypeError, NamespaceMismatchError, ShapeError


def _shape(rng: np.random.Generator, min_dims: int = 0, max_dims: int = 3) -> tuple:
    nd = int(rng.integers(min_dims, max_dims + 1))
    return tuple(int(d) for d in rng.integers(1, 4, size=nd))


def _u(rng: np.random.Generator, lo: float, hi: float, shape: tuple) -> np.ndarray:
    return np.asarray(rng.uniform(lo, hi, size=shape))


def _away(rng: np.random.Generator, lo: float, hi: float, shape: tuple) -> np.ndarray:
    """Magnitudes in [lo, hi] with random signs: away from a kink or pole at 0."""
    return np.asarray(_u(rng, lo, hi, shape) * rng.choice([-1.0, 1.0], size=shape))


def _unary(name: str, ref, lo: float, hi: float, away: bool = False, order: int = 3,
           dtypes=("float32", "float64")) -> None:
    def sample(rng):
        shape = _shape(rng)
        return ((_away if away else _u)(rng, lo, hi, shape),)

    register(OpRecord(name, getattr(ops, name), ref, sample, order=order, dtypes=dtypes,
                      errors=[(lambda rng: (np.arange(3),), DTypeError)]))


for _name, _ref, _lo, _hi, _away_flag in [
    ("exp", np.exp, -2, 2, False), ("expm1", np.expm1, -2, 2, False),
    ("log", np.log, 0.5, 3, False), ("log1p", np.log1p, -0.5, 2, False),
    ("log2", np.log2, 0.5, 3, False), ("log10", np.log10, 0.5, 3, False),
    ("sin", np.sin, -3, 3, False), ("cos", np.cos, -3, 3, False),
    ("tan", np.tan, -1, 1, False), ("asin", np.arcsin, -0.8, 0.8, False),
    ("acos", np.arccos, -0.8, 0.8, False), ("atan", np.arctan, -2, 2, False),
    ("sinh", np.sinh, -2, 2, False), ("cosh", np.cosh, -2, 2, False),
    ("tanh", np.tanh, -2, 2, False), ("asinh", np.arcsinh, -2, 2, False),
    ("acosh", np.arccosh, 1.3, 3, False), ("atanh", np.arctanh, -0.8, 0.8, False),
    ("sqrt", np.sqrt, 0.5, 3, False), ("square", np.square, -2, 2, False),
    ("reciprocal", np.reciprocal, 0.5, 2, True),
]:
    _unary(_name, _ref, _lo, _hi, _away_flag)


def _sample_signed(rng):
    return (_away(rng, 0.2, 2, _shape(rng)),)


register(OpRecord("abs", ops.abs, np.abs, _sample_signed))
register(OpRecord("negative", ops.negative, np.negative, _sample_signed))
register(OpRecord("positive", ops.positive, np.positive, _sample_signed))


def _pair(rng, lo1, hi1, lo2, hi2, away2=False):
    """Two arrays of mutually broadcastable shapes, from the two domains."""
    shape = _shape(rng, 1)
    other = [1 if rng.random() < 0.3 else d for d in shape]
    other = tuple(other[int(rng.integers(0, len(other) + 1)):])
    s1, s2 = (shape, other) if rng.random() < 0.5 else (other, shape)
    return _u(rng, lo1, hi1, s1), (_away if away2 else _u)(rng, lo2, hi2, s2)


def _binary(name, ref, lo1, hi1, lo2, hi2, away2=False):
    register(OpRecord(name, getattr(ops, name), ref,
                      lambda rng: _pair(rng, lo1, hi1, lo2, hi2, away2),
                      errors=[(lambda rng: (np.ones((2, 3)), np.ones((4,))), ShapeError)]))


_binary("add", np.add, -2, 2, -2, 2)
_binary("subtract", np.subtract, -2, 2, -2, 2)
_binary("multiply", np.multiply, -2, 2, -2, 2)
_binary("divide", np.divide, -2, 2, 0.5, 2, away2=True)
_binary("pow", np.power, 0.5, 2, -1.5, 1.5)
_binary("atan2", np.arctan2, 0.5, 2, 0.5, 2)
_binary("hypot", np.hypot, 0.5, 2, 0.5, 2)
_binary("logaddexp", np.logaddexp, -2, 2, -2, 2)


def _no_ties(rng):
    a = _x(rng)
    return a, a + _away(rng, 0.2, 1.0, a.shape)


register(OpRecord("maximum", ops.maximum, np.maximum, _no_ties))
register(OpRecord("minimum", ops.minimum, np.minimum, _no_ties))


def _where_sample(rng):
    shape = _shape(rng, 1)
    return rng.random(shape) < 0.5, _u(rng, -2, 2, shape), _u(rng, -2, 2, shape[-1:])


register(OpRecord("where", ops.where, np.where, _where_sample, diff=(1, 2)))


def _clip_sample(rng):
    shape = _shape(rng, 1)
    x = _u(rng, -2, 2, shape)
    x = np.where(np.abs(np.abs(x) - 1) < 0.1, x * 0.5, x)
    return x, -np.ones(shape[-1:]), np.ones(shape[-1:])


register(OpRecord("clip", lambda x, lo, hi: ops.clip(x, lo, hi), np.clip, _clip_sample))


# -- reductions -----------------------------------------------------------------------------
def _axis_sample(rng, lo=-2, hi=2, distinct=False, away=False):
    shape = _shape(rng, 1)
    nd = len(shape)
    choice = rng.integers(0, 3)
    if choice == 0:
        axis = None
    elif choice == 1:
        axis = int(rng.integers(-nd, nd))
    else:
        axis = tuple(sorted({int(a) for a in rng.integers(0, nd, size=2)}))
    size = int(np.prod(shape))
    if distinct:
        x = (rng.permutation(size) * 0.3 + rng.uniform(0, 0.1, size)).reshape(shape) - 0.5
    elif away:
        x = _away(rng, 0.5, 1.5, shape)
    else:
        x = _u(rng, lo, hi, shape)
    return x, axis, bool(rng.integers(0, 2))


def _reduction(name, ref, **kw):
    register(OpRecord(
        name, lambda x, axis, keepdims: getattr(ops, name)(x, axis=axis, keepdims=keepdims),
        lambda x, axis, keepdims: ref(x, axis=axis, keepdims=keepdims),
        lambda rng: _axis_sample(rng, **kw), diff=(0,)))


_reduction("sum", np.sum)
_reduction("mean", np.mean)
_reduction("prod", np.prod, away=True)
_reduction("max", np.max, distinct=True)
_reduction("min", np.min, distinct=True)


def _np_logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


_reduction("logsumexp", _np_logsumexp)


def _var_sample(rng):
    x, axis, keepdims = _axis_sample(rng)
    if x.size == 1 or (axis is not None and np.prod(
            [x.shape[a] for a in np.atleast_1d(axis)]) == 1):
        x = _u(rng, -2, 2, (3, 2))
        axis = 0
    return x, axis, keepdims, float(rng.integers(0, 2))


register(OpRecord("var", lambda x, a, k, c: ops.var(x, axis=a, keepdims=k, correction=c),
                  lambda x, a, k, c: np.var(x, axis=a, keepdims=k, ddof=c), _var_sample,
                  diff=(0,)))
register(OpRecord("std", lambda x, a, k, c: ops.std(x, axis=a, keepdims=k, correction=c),
                  lambda x, a, k, c: np.std(x, axis=a, keepdims=k, ddof=c), _var_sample,
                  diff=(0,)))


def _cumsum_sample(rng):
    shape = _shape(rng, 1)
    return _u(rng, -2, 2, shape), int(rng.integers(0, len(shape))), bool(rng.integers(0, 2))


def _np_cumsum(x, axis, include_initial):
    out = np.cumsum(x, axis=axis)
    if include_initial:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        out = np.pad(out, pad)
    return out


register(OpRecord("cumulative_sum", lambda x, a, i: ops.cumulative_sum(
    x, axis=a, include_initial=i), _np_cumsum, _cumsum_sample, diff=(0,)))


# -- products -----------------------------------------------------------------------------
def _matmul_sample(rng):
    n, k, m = (int(d) for d in rng.integers(1, 4, size=3))
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return _u(rng, -1, 1, (n, k)), _u(rng, -1, 1, (k, m))
    if kind == 1:
        return _u(rng, -1, 1, (k,)), _u(rng, -1, 1, (2, k, m))
    if kind == 2:
        return _u(rng, -1, 1, (2, n, k)), _u(rng, -1, 1, (k,))
    if kind == 3:
        return _u(rng, -1, 1, (k,)), _u(rng, -1, 1, (k,))
    return _u(rng, -1, 1, (2, 1, n, k)), _u(rng, -1, 1, (3, k, m))


register(OpRecord("matmul", ops.matmul, np.matmul, _matmul_sample,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 3))), ShapeError),
                          (lambda rng: (np.ones((2, 3)), __import__("array_api_strict")
                                        .ones((3, 2))),
                           (NamespaceMismatchError, DeviceMismatchError))]))


def _tensordot_sample(rng):
    k = int(rng.integers(0, 3))
    shapes = {0: ((2, 3), (2,)), 1: ((2, 3), (3, 4)), 2: ((2, 3, 4), (3, 4, 2))}[k]
    return _u(rng, -1, 1, shapes[0]), _u(rng, -1, 1, shapes[1]), k


register(OpRecord("tensordot", lambda a, b, k: ops.tensordot(a, b, axes=k),
                  lambda a, b, k: np.tensordot(a, b, axes=k), _tensordot_sample, diff=(0, 1)))


def _vecdot_sample(rng):
    return _u(rng, -1, 1, (2, 3)), _u(rng, -1, 1, (3,))


register(OpRecord("vecdot", ops.vecdot, lambda a, b: np.sum(a * b, axis=-1), _vecdot_sample))
register(OpRecord("matrix_transpose", ops.matrix_transpose, lambda x: np.swapaxes(x, -1, -2),
                  lambda rng: (_u(rng, -1, 1, _shape(rng, 2, 3)),)))


# -- shapes -------------------------------------------------------------------------------
def _x(rng, min_dims=1, max_dims=3):
    return _u(rng, -2, 2, _shape(rng, min_dims, max_dims))


register(OpRecord("reshape", lambda x: ops.reshape(x, (-1,)), lambda x: x.reshape(-1),
                  lambda rng: (_x(rng),)))
register(OpRecord("permute_dims", lambda x: ops.permute_dims(x, (2, 0, 1)),
                  lambda x: np.transpose(x, (2, 0, 1)), lambda rng: (_x(rng, 3, 3),)))
register(OpRecord("broadcast_to", lambda x: ops.broadcast_to(x, (2, *x.shape)),
                  lambda x: np.broadcast_to(x, (2, *x.shape)), lambda rng: (_x(rng),)))
register(OpRecord("broadcast_arrays", lambda a, b: ops.broadcast_arrays(a, b),
                  lambda a, b: np.broadcast_arrays(a, b),
                  lambda rng: (_u(rng, -1, 1, (2, 1)), _u(rng, -1, 1, (3,)))))
register(OpRecord("sum_to", lambda x: ops.sum_to(x, (1, x.shape[-1])),
                  lambda x: np.sum(x, axis=0, keepdims=True), lambda rng: (_x(rng, 2, 2),)))
register(OpRecord("expand_dims", lambda x: ops.expand_dims(x, axis=1),
                  lambda x: np.expand_dims(x, 1), lambda rng: (_x(rng),)))
register(OpRecord("squeeze", lambda x: ops.squeeze(x, axis=1), lambda x: np.squeeze(x, 1),
                  lambda rng: (_u(rng, -1, 1, (2, 1, 3)),)))
register(OpRecord("concat", lambda a, b: ops.concat([a, b], axis=1),
                  lambda a, b: np.concatenate([a, b], axis=1),
                  lambda rng: (_u(rng, -1, 1, (2, 3)), _u(rng, -1, 1, (2, 1)))))
register(OpRecord("stack", lambda a, b: ops.stack([a, b], axis=1),
                  lambda a, b: np.stack([a, b], axis=1),
                  lambda rng: (_u(rng, -1, 1, (2, 3)), _u(rng, -1, 1, (2, 3)))))
register(OpRecord("unstack", lambda x: ops.unstack(x, axis=1),
                  lambda x: tuple(np.moveaxis(x, 1, 0)), lambda rng: (_x(rng, 2, 3),)))
register(OpRecord("flip", lambda x: ops.flip(x, axis=0), lambda x: np.flip(x, 0),
                  lambda rng: (_x(rng),)))
register(OpRecord("roll", lambda x: ops.roll(x, 1, axis=0), lambda x: np.roll(x, 1, 0),
                  lambda rng: (_x(rng),)))
register(OpRecord("moveaxis", lambda x: ops.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1),
                  lambda rng: (_x(rng, 2, 3),)))
register(OpRecord("repeat", lambda x: ops.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, 0),
                  lambda rng: (_x(rng),)))
register(OpRecord("tile", lambda x: ops.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1)),
                  lambda rng: (_x(rng, 1, 2),)))
def _device_round_trip(x):
    x = ops.asarray(x)
    default = x.xp.__array_namespace_info__().default_device()
    return ops.to_device(ops.to_device(x, default) * 2.0, x.device)


register(OpRecord("to_device", _device_round_trip, lambda x: x * 2.0, lambda rng: (_x(rng),)))
register(OpRecord("astype", lambda x: ops.astype(x, x.dtype), lambda x: x,
                  lambda rng: (_x(rng),)))


def _sort_sample(rng):
    shape = _shape(rng, 1)
    size = int(np.prod(shape))
    return ((rng.permutation(size) * 0.3).reshape(shape) - 0.5,)


register(OpRecord("sort", lambda x: ops.sort(x, axis=-1), lambda x: np.sort(x, axis=-1),
                  _sort_sample))


# -- indexing -----------------------------------------------------------------------------
_KEYS = [
    (slice(1, None), slice(None, None, 2)),
    (0,),
    (Ellipsis, 1),
    (None, slice(None), 1),
    (np.array([2, 0, 2]),),
    (slice(None), np.array([[1, 1], [0, 2]])),
    (np.array([0, 1]), np.array([2, 2])),
    (np.array([True, False, True]),),
    (1, slice(None), np.array([0, 0])),
]


def _getitem_sample(rng):
    key = _KEYS[int(rng.integers(0, len(_KEYS)))]
    return _u(rng, -2, 2, (3, 3, 2)), key


register(OpRecord("getitem", lambda x, key: ops.getitem(x, key),
                  lambda x, key: x[key], _getitem_sample, diff=(0,)))


def _take_sample(rng):
    x = _u(rng, -2, 2, (4, 3))
    return x, rng.integers(0, 4, size=5), 0


register(OpRecord("take", lambda x, i, a: ops.take(x, i, axis=a),
                  lambda x, i, a: np.take(x, i, axis=a), _take_sample, diff=(0,)))


def _tak_sample(rng):
    x = _u(rng, -2, 2, (3, 4))
    return x, rng.integers(0, 4, size=(3, 5))


register(OpRecord("take_along_axis", lambda x, i: ops.take_along_axis(x, i, axis=1),
                  lambda x, i: np.take_along_axis(x, i, axis=1), _tak_sample, diff=(0,)))
