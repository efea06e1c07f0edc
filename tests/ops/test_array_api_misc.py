"""The rest of the standard: creation, searching, sets, bitwise and logical functions,
statistics and utilities, and the array object's methods."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import portagrad as pg
from portagrad import DTypeError, GradientError, ShapeError
from portagrad.xp import to_numpy

o = pg.ops


def _np(v):
    return to_numpy(v.array)


def test_creation(backend, rng):
    a = backend.asarray(np.array([1.0, 2.0, 3.0]))
    b = backend.asarray(np.array([4.0, 5.0]))
    for ix in ("xy", "ij"):
        got = o.meshgrid(a, b, indexing=ix)
        for g, w in zip(got, np.meshgrid([1.0, 2.0, 3.0], [4.0, 5.0], indexing=ix)):
            np.testing.assert_array_equal(_np(g), w)
    m = rng.standard_normal((2, 3, 4))
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(_np(o.tril(backend.asarray(m), k=k)), np.tril(m, k))
        np.testing.assert_array_equal(_np(o.triu(backend.asarray(m), k=k)), np.triu(m, k))
    ints = backend.asarray(np.arange(9).reshape(3, 3))
    np.testing.assert_array_equal(_np(o.tril(ints)), np.tril(np.arange(9).reshape(3, 3)))


def test_from_dlpack_and_dlpack_methods():
    x = np.arange(4.0)
    v = pg.Variable(x)
    assert v.__dlpack_device__() == x.__dlpack_device__()
    np.testing.assert_array_equal(np.from_dlpack(v), x)
    np.testing.assert_array_equal(o.from_dlpack(x).array, x)
    np.testing.assert_array_equal(o.from_dlpack(v).array, x)


def test_triangles_and_grids_are_differentiable():
    x = pg.Variable(np.arange(1.0, 7.0).reshape(2, 3))
    o.sum(o.tril(x) * 2.0 + o.triu(x, k=1)).backward()
    np.testing.assert_array_equal(x.grad, [[2.0, 1.0, 1.0], [2.0, 2.0, 1.0]])
    a, b = pg.Variable(np.array([1.0, 2.0])), pg.Variable(np.array([3.0, 4.0, 5.0]))
    ga, gb = o.meshgrid(a, b)
    o.sum(ga * gb).backward()
    np.testing.assert_allclose(a.grad, [12.0, 12.0])
    np.testing.assert_allclose(b.grad, [3.0, 3.0, 3.0])


def test_asarray_of_variables_stacks_them():
    x, y = pg.Variable(np.array(2.0)), pg.Variable(np.array(3.0))
    v = o.asarray([x, y])
    np.testing.assert_array_equal(v.array, [2.0, 3.0])
    o.sum(v * np.array([5.0, 7.0])).backward()
    assert float(x.grad) == 5.0 and float(y.grad) == 7.0


def test_searching(backend):
    x = backend.asarray(np.array([[0.0, 3.0, 1.0], [2.0, 0.0, 0.0]]))
    r, c = o.nonzero(x)
    np.testing.assert_array_equal(_np(r), [0, 0, 1])
    np.testing.assert_array_equal(_np(c), [1, 2, 0])
    np.testing.assert_array_equal(_np(o.count_nonzero(x, axis=1)), [2, 1])
    assert int(_np(o.count_nonzero(x))) == 3
    s = backend.asarray(np.array([1.0, 2.0, 2.0, 5.0]))
    q = backend.asarray(np.array([2.0, 6.0, 0.0]))
    np.testing.assert_array_equal(_np(o.searchsorted(s, q)), [1, 4, 0])
    np.testing.assert_array_equal(_np(o.searchsorted(s, q, side="right")), [3, 4, 0])
    np.testing.assert_array_equal(_np(o.argsort(x, axis=1, descending=True)),
                                  [[1, 2, 0], [0, 1, 2]])
    with pytest.raises(ShapeError):
        o.searchsorted(x, q)


def test_sets(backend):
    x = backend.asarray(np.array([3, 1, 3, 2, 1, 3]))
    r = o.unique_all(x)
    np.testing.assert_array_equal(_np(r.values), [1, 2, 3])
    np.testing.assert_array_equal(_np(r.counts), [2, 1, 3])
    np.testing.assert_array_equal(_np(r.values)[_np(r.inverse_indices)], [3, 1, 3, 2, 1, 3])
    np.testing.assert_array_equal(to_numpy(x)[_np(r.indices)], [1, 2, 3])
    assert [a.tolist() for a in map(_np, o.unique_counts(x))] == [[1, 2, 3], [2, 1, 3]]
    np.testing.assert_array_equal(_np(o.unique_inverse(x).inverse_indices),
                                  [2, 0, 2, 1, 0, 2])
    np.testing.assert_array_equal(_np(o.unique_values(x)), [1, 2, 3])
    np.testing.assert_array_equal(_np(o.isin(x, backend.asarray(np.array([2, 3])))),
                                  [True, False, True, True, False, True])


def test_bitwise_functions_and_operators(backend):
    a = pg.Variable(backend.asarray(np.array([6, 5, 12], dtype=np.int32)))
    b = backend.asarray(np.array([3, 1, 2], dtype=np.int32))
    np.testing.assert_array_equal(_np(o.bitwise_and(a, b)), [2, 1, 0])
    np.testing.assert_array_equal(_np(a | b), [7, 5, 14])
    np.testing.assert_array_equal(_np(a ^ b), [5, 4, 14])
    np.testing.assert_array_equal(_np(a << 1), [12, 10, 24])
    np.testing.assert_array_equal(_np(a >> b), [0, 2, 3])
    np.testing.assert_array_equal(_np(~a), [-7, -6, -13])
    np.testing.assert_array_equal(_np(o.bitwise_invert(a)), [-7, -6, -13])
    t = pg.Variable(backend.asarray(np.array([True, False])))
    np.testing.assert_array_equal(_np(~t), [False, True])
    np.testing.assert_array_equal(_np(t & backend.asarray(np.array([True, True]))),
                                  [True, False])
    with pytest.raises(DTypeError, match="bitwise_and"):
        o.bitwise_and(backend.asarray(np.ones(2)), b)


def test_floor_divide_with_an_infinite_operand_is_floor_of_the_quotient(backend):
    """The standard's preferred results (NumPy and Python give nan and -1 there)."""
    inf = np.inf
    x = backend.asarray(np.array([inf, inf, -inf, -inf, 1.0, 1.0, -1.0, -1.0, inf, 7.0]))
    y = backend.asarray(np.array([2.0, -2.0, 2.0, -2.0, inf, -inf, inf, -inf, -0.0, 2.0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        got = _np(o.floor_divide(x, y))
        scalar = _np(o.floor_divide(backend.asarray(np.array([inf, 1.0])), -2.0))
    want = np.array([inf, -inf, -inf, inf, 0.0, -0.0, -0.0, 0.0, -inf, 3.0])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(scalar, [-inf, -1.0])
    ints = _np(o.floor_divide(backend.asarray(np.array([7, -7])), 2))
    np.testing.assert_array_equal(ints, [3, -4])
    with warnings.catch_warnings():  # nothing invalid is left to warn about
        warnings.simplefilter("error")
        fixed = _np(o.floor_divide(backend.asarray(np.array([inf, 1.0, -inf])),
                                   backend.asarray(np.array([3.0, -inf, 0.5]))))
    np.testing.assert_array_equal(fixed, [inf, -0.0, -inf])


def test_elementwise_extras(backend):
    x = backend.asarray(np.array([7.5, -7.5, 2.0, -0.0]))
    y = backend.asarray(np.array([2.0, 2.0, -3.0, 1.0]))
    np.testing.assert_array_equal(_np(o.floor_divide(x, y)), np.floor_divide(_np(
        pg.Variable(x)), _np(pg.Variable(y))))
    np.testing.assert_array_equal(_np(o.remainder(x, y)), [1.5, 0.5, -1.0, 0.0])
    np.testing.assert_array_equal(_np(o.copysign(x, y)), [7.5, 7.5, -2.0, 0.0])
    np.testing.assert_array_equal(_np(o.signbit(x)), [False, True, False, True])
    nxt = _np(o.nextafter(backend.asarray(np.array([1.0])), 2.0))
    assert nxt[0] == np.nextafter(1.0, 2.0)


def test_statistics_and_utilities(backend):
    x = backend.asarray(np.array([[1.0, 2.0, 3.0], [4.0, 0.5, 2.0]]))
    np.testing.assert_allclose(_np(o.cumulative_prod(x, axis=1)),
                               np.cumprod(_np(pg.Variable(x)), axis=1))
    np.testing.assert_allclose(_np(o.cumulative_prod(x, axis=0, include_initial=True)),
                               [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [4.0, 1.0, 6.0]])
    np.testing.assert_allclose(_np(o.diff(x, axis=1)), [[1.0, 1.0], [-3.5, 1.5]])
    np.testing.assert_allclose(_np(o.diff(x, axis=0, n=1, append=x)),
                               [[3.0, -1.5, -1.0], [-3.0, 1.5, 1.0], [3.0, -1.5, -1.0]])
    np.testing.assert_array_equal(_np(o.all(x > 0.7, axis=0)), [True, False, True])
    np.testing.assert_array_equal(_np(o.any(x > 3.0, axis=1, keepdims=True)), [[False],
                                                                               [True]])


def test_gradients_of_extras():
    x = pg.Variable(np.array([1.0, -2.0, 3.0]))
    o.sum(o.cumulative_prod(x) * np.array([1.0, 1.0, 1.0])).backward()
    # d/dx (x0 + x0 x1 + x0 x1 x2)
    np.testing.assert_allclose(x.grad, [1 + -2.0 + -6.0, 1.0 + 3.0, -2.0])
    x = pg.Variable(np.array([5.5, -1.0]))
    y = pg.Variable(np.array([2.0, 0.75]))
    o.sum(o.remainder(x, y)).backward()
    np.testing.assert_allclose(x.grad, [1.0, 1.0])
    np.testing.assert_allclose(y.grad, [-2.0, 2.0])  # -floor(x / y)
    x = pg.Variable(np.array([1.5, -2.0]))
    o.sum(o.copysign(x, np.array([-1.0, -1.0]))).backward()
    np.testing.assert_allclose(x.grad, [-1.0, 1.0])


def test_in_place_operators_rebind_and_keep_gradients_right():
    x = pg.Variable(np.array([1.0, 2.0]))
    y = x * 3.0
    z = y
    z += 1.0
    assert z is not y
    np.testing.assert_array_equal(y.array, [3.0, 6.0])
    z *= y
    o.sum(z).backward()
    np.testing.assert_allclose(x.grad, 2 * 9 * x.array + 3.0)  # d/dx (3x + 1) 3x
    i = pg.Variable(np.array([6, 3]))
    i //= 2
    i %= 2
    i <<= 1
    np.testing.assert_array_equal(i.array, [2, 2])


def test_setitem_is_refused_with_a_hint():
    x = pg.Variable(np.zeros(3))
    with pytest.raises(GradientError, match="where"):
        x[0] = 1.0


def test_non_differentiable_results_are_outside_the_graph():
    x = pg.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    for out in (o.count_nonzero(x), o.searchsorted(x[0], x[1]), o.all(x), o.any(x),
                o.signbit(x), o.floor_divide(x, 2.0), o.nextafter(x, 0.0), o.unique_values(x),
                o.linalg.matrix_rank(x), *o.nonzero(x), *o.unique_all(x)):
        assert out.creator is None and not out.requires_grad
