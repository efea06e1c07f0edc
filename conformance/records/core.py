"""Records of the core elementwise functions and reductions.

Inputs come from hypothesis strategies of the namespace under test: every shape from 0-d
to 3-d, size-0 arrays where the op is defined on them, mutually broadcastable operands,
every form of ``axis`` with ``keepdims``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import portagrad.ops as ops
from conformance._db import OpRecord, register
from portagrad import DTypeError, ShapeError

_INT_INPUT = [(lambda rng: (np.arange(3),), DTypeError)]


# -- unary --------------------------------------------------------------------------------
# Chainer's (NumPy's) names that are these functions themselves.
_ALIASES = {"abs": ("absolute",), "acos": ("arccos",), "asin": ("arcsin",), "atan": ("arctan",),
            "atan2": ("arctan2",), "atanh": ("arctanh",)}


def _unary(name: str, ref, lo: float, hi: float, away: bool = False, errors=None) -> None:
    def strategy(S):
        return S.floats(S.shapes(0, 3, 0, 3), lo, hi, away=away).map(lambda x: (x,))

    register(OpRecord(name, getattr(ops, name), ref, strategy=strategy,
                      errors=_INT_INPUT if errors is None else errors,
                      covers=_ALIASES.get(name, ())))


for _name, _ref, _lo, _hi in [
    ("exp", np.exp, -2, 2), ("expm1", np.expm1, -2, 2), ("log", np.log, 0.5, 3),
    ("log1p", np.log1p, -0.5, 2), ("log2", np.log2, 0.5, 3), ("log10", np.log10, 0.5, 3),
    ("sin", np.sin, -3, 3), ("cos", np.cos, -3, 3), ("tan", np.tan, -1, 1),
    ("asin", np.arcsin, -0.8, 0.8), ("acos", np.arccos, -0.8, 0.8), ("atan", np.arctan, -2, 2),
    ("sinh", np.sinh, -2, 2), ("cosh", np.cosh, -2, 2), ("tanh", np.tanh, -2, 2),
    ("asinh", np.arcsinh, -2, 2), ("acosh", np.arccosh, 1.3, 3),
    ("atanh", np.arctanh, -0.7, 0.7), ("sqrt", np.sqrt, 0.5, 3),
]:
    _unary(_name, _ref, _lo, _hi)
# The standard's square takes any numeric dtype (integers square without a gradient).
_unary("square", np.square, -2, 2,
       errors=[(lambda rng: (np.array([True, False]),), DTypeError)])
_unary("reciprocal", np.reciprocal, 0.5, 2, away=True)
# abs has a kink at 0: magnitudes stay above 0.2, well past the finite-difference step.
_unary("abs", np.abs, 0.2, 2, away=True, errors=[])
_unary("negative", np.negative, -2, 2, errors=[])
_unary("positive", np.positive, -2, 2, errors=[])


# -- binary -------------------------------------------------------------------------------
def _pair(S, lo1, hi1, lo2, hi2, away2=False, min_side=0):
    return S.broadcastable_shapes(2, min_side=min_side).flatmap(lambda s: st.tuples(
        S.floats(s[0], lo1, hi1), S.floats(s[1], lo2, hi2, away=away2)))


_BAD_SHAPES = [(lambda rng: (np.ones((2, 3)), np.ones((4,))), ShapeError)]


def _binary(name, ref, lo1, hi1, lo2, hi2, away2=False):
    register(OpRecord(name, getattr(ops, name), ref,
                      strategy=lambda S: _pair(S, lo1, hi1, lo2, hi2, away2),
                      errors=_BAD_SHAPES, covers=_ALIASES.get(name, ())))


_binary("add", np.add, -2, 2, -2, 2)
_binary("subtract", np.subtract, -2, 2, -2, 2)
_binary("multiply", np.multiply, -2, 2, -2, 2)
_binary("divide", np.divide, -2, 2, 0.5, 2, away2=True)
_binary("pow", np.power, 0.5, 2, -1.5, 1.5)
_binary("atan2", np.arctan2, 0.5, 2, 0.5, 2)
_binary("hypot", np.hypot, 0.5, 2, 0.5, 2)
_binary("logaddexp", np.logaddexp, -2, 2, -2, 2)


def _no_ties(S):
    """Operands on two interleaved grids 0.15 apart: never equal, whatever broadcasts."""
    def snap(pair):
        a, b = pair
        return np.asarray(np.round(a / 0.3) * 0.3), np.asarray(np.round(b / 0.3) * 0.3 + 0.15)

    return _pair(S, -2, 2, -2, 2).map(snap)


register(OpRecord("maximum", ops.maximum, np.maximum, strategy=_no_ties, errors=_BAD_SHAPES))
register(OpRecord("minimum", ops.minimum, np.minimum, strategy=_no_ties, errors=_BAD_SHAPES))


def _where_args(S):
    return S.broadcastable_shapes(3, min_side=0).flatmap(lambda s: st.tuples(
        S.booleans(s[0]), S.floats(s[1]), S.floats(s[2])))


register(OpRecord("where", ops.where, np.where, strategy=_where_args, diff=(1, 2),
                  errors=[(lambda rng: (np.ones(3), np.ones(3), np.ones(3)), DTypeError)]))


def _clip_args(S):
    def away_from_bounds(args):
        x, lo, hi = args
        # Keep x at least 0.1 from either bound: clip has kinks there.
        near = (np.abs(x - np.broadcast_to(lo, x.shape)) < 0.1) | (
            np.abs(x - np.broadcast_to(hi, x.shape)) < 0.1)
        return np.asarray(np.where(near, x + 0.25, x)), lo, hi

    return S.broadcastable_shapes(3, min_dims=1, min_side=1).filter(
        lambda s: np.broadcast_shapes(*s) == s[0]).flatmap(lambda s: st.tuples(
            S.floats(s[0], -2, 2), S.floats(s[1], -1.2, -0.8), S.floats(s[2], 0.8, 1.2))
    ).map(away_from_bounds)


register(OpRecord("clip", lambda x, lo, hi: ops.clip(x, lo, hi), np.clip,
                  strategy=_clip_args))


# -- reductions ---------------------------------------------------------------------------
def _axis_args(S, min_side=1, **floats):
    return S.shapes(0, 3, min_side, 3).flatmap(lambda s: st.tuples(
        S.floats(s, **floats), S.axes(len(s)), S.keepdims()))


def _reduction(name, ref, min_side=1, **floats):
    register(OpRecord(
        name, lambda x, axis, keepdims: getattr(ops, name)(x, axis=axis, keepdims=keepdims),
        lambda x, axis, keepdims: ref(x, axis=axis, keepdims=keepdims),
        strategy=lambda S: _axis_args(S, min_side, **floats), diff=(0,),
        errors=[(lambda rng: (np.ones((2, 3)), 2, False), ShapeError)]))


_reduction("sum", np.sum, min_side=0)
_reduction("mean", np.mean)
_reduction("prod", np.prod, lo=0.5, hi=1.5, away=True)
_reduction("max", np.max, distinct=True)
_reduction("min", np.min, distinct=True)


def _np_logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if keepdims:
        return out
    return np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


_reduction("logsumexp", _np_logsumexp)


def _moments_args(S, distinct, min_dims=0, min_side=1):
    def build(s):
        # Reducing over no axis (axis=()) leaves one element per variance: std's kink.
        axes = S.axes(len(s)).filter(lambda a: a != ()) if distinct else S.axes(len(s))
        return st.tuples(S.floats(s, distinct=distinct), axes, S.keepdims(),
                         st.sampled_from([0.0, 1.0]))

    def fit(args):
        x, axis, keepdims, correction = args
        axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
        count = int(np.prod([x.shape[a] for a in axes]))
        return x, axis, keepdims, correction if count > correction else 0.0

    return S.shapes(min_dims, 3, min_side, 3).flatmap(build).map(fit)


register(OpRecord("var", lambda x, a, k, c: ops.var(x, axis=a, keepdims=k, correction=c),
                  lambda x, a, k, c: np.var(x, axis=a, keepdims=k, ddof=c),
                  strategy=lambda S: _moments_args(S, False), diff=(0,)))
# std has a kink where the variance is 0 (a single element, all values equal): distinct
# values (at least two per reduction) keep the variance away from it.
register(OpRecord("std", lambda x, a, k, c: ops.std(x, axis=a, keepdims=k, correction=c),
                  lambda x, a, k, c: np.std(x, axis=a, keepdims=k, ddof=c),
                  strategy=lambda S: _moments_args(S, True, min_dims=1, min_side=2),
                  diff=(0,)))


def _cumsum_args(S):
    return S.shapes(1, 3, 0, 3).flatmap(lambda s: st.tuples(
        S.floats(s), st.integers(-len(s), len(s) - 1), st.booleans()))


def _np_cumsum(x, axis, include_initial):
    out = np.cumsum(x, axis=axis)
    if include_initial:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        out = np.pad(out, pad)
    return out


register(OpRecord("cumulative_sum", lambda x, a, i: ops.cumulative_sum(
    x, axis=a, include_initial=i), _np_cumsum, strategy=_cumsum_args, diff=(0,)))
