"""Records of products, shape manipulation, indexing, sorting and moves between devices."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import portagrad.ops as ops
from conformance._db import OpRecord, register
from portagrad import DeviceMismatchError, NamespaceMismatchError, ShapeError

_ints = st.integers


# -- products -----------------------------------------------------------------------------
def _matmul_args(S):
    def build(dims):
        n, k, m, kind = dims
        shapes = {0: ((n, k), (k, m)), 1: ((k,), (2, k, m)), 2: ((2, n, k), (k,)),
                  3: ((k,), (k,)), 4: ((2, 1, n, k), (3, k, m))}[kind]
        return st.tuples(S.floats(shapes[0], -1, 1), S.floats(shapes[1], -1, 1))

    return st.tuples(_ints(0, 3), _ints(0, 3), _ints(0, 3), _ints(0, 4)).flatmap(build)


def _other_namespace(rng):
    import array_api_strict

    return np.ones((2, 3)), array_api_strict.ones((3, 2))


register(OpRecord("matmul", ops.matmul, np.matmul, strategy=_matmul_args,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 3))), ShapeError),
                          (_other_namespace, (NamespaceMismatchError, DeviceMismatchError))]))


def _tensordot_args(S):
    def build(k):
        a, b = {0: ((2, 3), (2,)), 1: ((2, 3), (3, 4)), 2: ((2, 3, 4), (3, 4, 2))}[k]
        return st.tuples(S.floats(a, -1, 1), S.floats(b, -1, 1), st.just(k))

    return _ints(0, 2).flatmap(build)


register(OpRecord("tensordot", lambda a, b, k: ops.tensordot(a, b, axes=k),
                  lambda a, b, k: np.tensordot(a, b, axes=k), strategy=_tensordot_args,
                  diff=(0, 1)))


def _vecdot_args(S):
    return st.tuples(S.broadcastable_shapes(2, 0, 2), _ints(0, 3)).flatmap(
        lambda sk: st.tuples(S.floats((*sk[0][0], sk[1]), -1, 1),
                             S.floats((*sk[0][1], sk[1]), -1, 1)))


register(OpRecord("vecdot", ops.vecdot, lambda a, b: np.sum(a * b, axis=-1),
                  strategy=_vecdot_args,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 4))), ShapeError)]))


# -- shapes -------------------------------------------------------------------------------
def _x(S, min_dims=0, max_dims=3, min_side=0):
    return S.floats(S.shapes(min_dims, max_dims, min_side, 3))


def _with(S, extra, min_dims=0, max_dims=3, min_side=0):
    """(x, *extra(shape)) for x of a drawn shape."""
    return S.shapes(min_dims, max_dims, min_side, 3).flatmap(
        lambda s: st.tuples(S.floats(s), *extra(s)))


register(OpRecord("matrix_transpose", ops.matrix_transpose, lambda x: np.swapaxes(x, -1, -2),
                  strategy=lambda S: _x(S, 2).map(lambda x: (x,))))
register(OpRecord("reshape", lambda x: ops.reshape(x, (-1,)), lambda x: x.reshape(-1),
                  strategy=lambda S: _x(S).map(lambda x: (x,))))
register(OpRecord("permute_dims", lambda x, p: ops.permute_dims(x, p),
                  lambda x, p: np.transpose(x, p), diff=(0,),
                  strategy=lambda S: _with(S, lambda s: (
                      st.permutations(range(len(s))).map(tuple),))))


def _broadcast_to_args(S):
    return S.shapes(0, 3, 0, 3).flatmap(lambda s: st.tuples(
        S.floats(s), S.xps.broadcastable_shapes(s, max_dims=4, min_side=0).map(
            lambda t: np.broadcast_shapes(s, t))))


register(OpRecord("broadcast_to", lambda x, t: ops.broadcast_to(x, t), np.broadcast_to,
                  strategy=_broadcast_to_args, diff=(0,),
                  errors=[(lambda rng: (np.ones((2, 3)), (4, 3)), ShapeError)]))
register(OpRecord("broadcast_arrays", lambda a, b: tuple(ops.broadcast_arrays(a, b)),
                  lambda a, b: tuple(np.broadcast_arrays(a, b)),
                  strategy=lambda S: S.broadcastable_shapes(2, min_side=0).flatmap(
                      lambda s: st.tuples(S.floats(s[0]), S.floats(s[1])))))


def _np_sum_to(x, shape):
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1)
    return np.sum(x, axis=axes, keepdims=True).reshape(shape)


def _sum_to_args(S):
    return S.shapes(0, 3, 1, 3).flatmap(lambda t: S.xps.broadcastable_shapes(t).map(
        lambda o: (np.broadcast_shapes(t, o), t))).flatmap(
        lambda st_: st.tuples(S.floats(st_[0]), st.just(st_[1])))


register(OpRecord("sum_to", lambda x, t: ops.sum_to(x, t), _np_sum_to,
                  strategy=_sum_to_args, diff=(0,)))
register(OpRecord("expand_dims", lambda x, a: ops.expand_dims(x, axis=a),
                  lambda x, a: np.expand_dims(x, a), diff=(0,),
                  strategy=lambda S: _with(S, lambda s: (_ints(-len(s) - 1, len(s)),))))


def _squeeze_args(S):
    def build(s):
        ones = [i for i, d in enumerate(s) if d == 1]
        axis = st.sampled_from(ones) | st.just(tuple(ones)) if ones else st.just(())
        return st.tuples(S.floats(s), axis)

    return S.shapes(0, 3, 0, 2).flatmap(build)


register(OpRecord("squeeze", lambda x, a: ops.squeeze(x, axis=a), np.squeeze,
                  strategy=_squeeze_args, diff=(0,),
                  errors=[(lambda rng: (np.ones((2, 3)), 0), ShapeError)]))


def _joined_args(S, same_shape):
    def build(s):
        axis = st.integers(-len(s), len(s) - 1)

        def other(a):
            t = list(s)
            if not same_shape:
                t[a] = 2
            return S.floats(tuple(t))

        return axis.flatmap(lambda a: st.tuples(S.floats(s), other(a), st.just(a)))

    return S.shapes(1, 3, 0, 3).flatmap(build)


register(OpRecord("concat", lambda a, b, axis: ops.concat([a, b], axis=axis),
                  lambda a, b, axis: np.concatenate([a, b], axis=axis),
                  strategy=lambda S: _joined_args(S, False), diff=(0, 1),
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((3, 3)), 1), ShapeError)]))
register(OpRecord("stack", lambda a, b, axis: ops.stack([a, b], axis=axis),
                  lambda a, b, axis: np.stack([a, b], axis=axis),
                  strategy=lambda S: _joined_args(S, True), diff=(0, 1),
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((3, 3)), 0), ShapeError)]))
register(OpRecord("unstack", lambda x, a: ops.unstack(x, axis=a),
                  lambda x, a: tuple(np.moveaxis(x, a, 0)), diff=(0,),
                  strategy=lambda S: _with(S, lambda s: (_ints(-len(s), len(s) - 1),), 1,
                                           min_side=1)))
register(OpRecord("flip", lambda x, a: ops.flip(x, axis=a), lambda x, a: np.flip(x, a),
                  diff=(0,), strategy=lambda S: _with(S, lambda s: (S.axes(len(s)),))))


def _roll_args(S):
    def build(s):
        axis = st.none() | (st.integers(-len(s), len(s) - 1) if s else st.nothing())
        return st.tuples(S.floats(s), _ints(-4, 4), axis)

    return S.shapes(0, 3, 0, 3).flatmap(build)


register(OpRecord("roll", lambda x, k, a: ops.roll(x, k, axis=a),
                  lambda x, k, a: np.roll(x, k, a), strategy=_roll_args, diff=(0,)))
register(OpRecord("moveaxis", lambda x, s, d: ops.moveaxis(x, s, d), np.moveaxis, diff=(0,),
                  strategy=lambda S: _with(S, lambda s: (
                      _ints(-len(s), len(s) - 1), _ints(-len(s), len(s) - 1)), 1)))


def _repeat_args(S):
    def build(s):
        axis = st.none() | (st.integers(-len(s), len(s) - 1) if s else st.nothing())
        return st.tuples(S.floats(s), _ints(0, 3), axis)

    return S.shapes(0, 3, 0, 3).flatmap(build)


register(OpRecord("repeat", lambda x, r, a: ops.repeat(x, r, axis=a),
                  lambda x, r, a: np.repeat(x, r, a), strategy=_repeat_args, diff=(0,)))
register(OpRecord("tile", lambda x, r: ops.tile(x, r), np.tile, diff=(0,),
                  strategy=lambda S: _with(S, lambda s: (
                      st.lists(_ints(0, 3), min_size=0, max_size=3).map(tuple),))))


def _device_round_trip(x):
    x = ops.asarray(x)
    info = x.xp.__array_namespace_info__()
    # JAX answers None ("its default") where to_device takes a device, and lists it too.
    default = info.default_device()
    if default is None:
        default = next(d for d in info.devices() if d is not None)
    return ops.to_device(ops.to_device(x, default) * 2.0, x.device)


register(OpRecord("to_device", _device_round_trip, lambda x: x * 2.0,
                  strategy=lambda S: _x(S).map(lambda x: (x,))))
register(OpRecord("astype", lambda x: ops.astype(x, x.dtype), lambda x: x,
                  strategy=lambda S: _x(S).map(lambda x: (x,))))
register(OpRecord("sort", lambda x, a: ops.sort(x, axis=a), lambda x, a: np.sort(x, axis=a),
                  diff=(0,), strategy=lambda S: S.shapes(1, 3, 0, 3).flatmap(
                      lambda s: st.tuples(S.floats(s, distinct=True),
                                          _ints(-len(s), len(s) - 1)))))


# -- indexing -----------------------------------------------------------------------------
register(OpRecord("getitem", lambda x, key: ops.getitem(x, key), lambda x, key: x[key],
                  diff=(0,), strategy=lambda S: S.shapes(0, 3, 0, 3).flatmap(
                      lambda s: st.tuples(S.floats(s), S.indices(s))),
                  errors=[(lambda rng: (np.ones((2, 3)), (0, 0, 0)), IndexError),
                          (lambda rng: (np.ones((2, 3)), (5,)), IndexError)]))


def _take_args(S):
    def build(s_axis):
        s, axis = s_axis
        return st.tuples(S.floats(s), S.integer_indices(s[axis], 0, 5), st.just(axis))

    return S.shapes(1, 3, 1, 3).flatmap(
        lambda s: st.tuples(st.just(s), _ints(0, len(s) - 1))).flatmap(build)


register(OpRecord("take", lambda x, i, a: ops.take(x, i, axis=a),
                  lambda x, i, a: np.take(x, i, axis=a), strategy=_take_args, diff=(0,)))


def _take_along_args(S):
    def build(s_axis):
        s, axis, n = s_axis
        shape = list(s)
        shape[axis] = n
        idx = st.lists(_ints(0, s[axis] - 1), min_size=int(np.prod(shape)),
                       max_size=int(np.prod(shape))).map(
            lambda v: np.asarray(v, dtype=np.int64).reshape(shape))
        return st.tuples(S.floats(s), idx, st.just(axis))

    return S.shapes(1, 3, 1, 3).flatmap(
        lambda s: st.tuples(st.just(s), _ints(0, len(s) - 1), _ints(0, 4))).flatmap(build)


register(OpRecord("take_along_axis", lambda x, i, a: ops.take_along_axis(x, i, axis=a),
                  lambda x, i, a: np.take_along_axis(x, i, axis=a),
                  strategy=_take_along_args, diff=(0,)))
