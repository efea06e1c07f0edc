"""``x[key] = value`` on Variables: the standard's assignment for constants, refused where
a gradient would silently change."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import DTypeError, GradientError, IndexOutOfRangeError, ShapeError
from portagrad.xp import to_numpy

o = pg.ops

KEYS = [
    (1, 5.0),
    (slice(1, 3), 5.0),
    ((slice(None), 0), np.array([7.0, 8.0, 9.0])),
    ((Ellipsis, slice(None, None, -2)), np.array([1.0, 2.0])),
    ((slice(None, None, -1), 1), np.array([1.0, 2.0, 3.0])),
    ((0, Ellipsis), np.arange(4.0)),
    ((-1, -1), 4.5),
]


@pytest.mark.parametrize("key,value", KEYS, ids=[repr(k) for k, _ in KEYS])
def test_assignment_matches_numpy(backend, key, value):
    host = np.arange(12.0).reshape(3, 4)
    x = pg.Variable(backend.asarray(host), requires_grad=False)
    before = x.array
    v = backend.asarray(value) if isinstance(value, np.ndarray) else value
    x[key] = v
    expected = host.copy()
    expected[key] = value
    np.testing.assert_array_equal(to_numpy(x.array), expected)
    np.testing.assert_array_equal(to_numpy(before), host)  # the old array is left alone


def test_masks_integer_arrays_and_variable_keys(backend):
    host = np.arange(6.0)
    x = pg.Variable(backend.asarray(host), requires_grad=False)
    x[pg.Variable(backend.asarray(host > 3), requires_grad=False)] = 0.0
    np.testing.assert_array_equal(to_numpy(x.array), [0.0, 1.0, 2.0, 3.0, 0.0, 0.0])
    ids = backend.asarray(np.array([0, 2]))
    value = pg.Variable(backend.asarray(np.array([9.0, 8.0])), requires_grad=False)
    if backend.name == "array_api_strict":  # integer-array assignment is optional
        with pytest.raises(IndexOutOfRangeError, match=r"__setitem__\(key\).*refused"):
            x[ids] = value
        return
    x[ids] = value
    np.testing.assert_array_equal(to_numpy(x.array), [9.0, 1.0, 8.0, 3.0, 0.0, 0.0])


def test_ops_that_used_the_variable_keep_what_it_was():
    x = o.asarray([1.0, 2.0, 3.0])
    w = pg.Variable(np.array([1.0, 1.0, 1.0]))
    y_binary = o.sum(x * w)  # an operator
    y_prim = o.sum(o.matmul(o.reshape(x, (1, 3)), o.reshape(w, (3, 1))))  # a primitive
    g2 = pg.grad(o.sum(w * w * x), [w], create_graph=True)[0]  # kept for a second order
    x[:] = 0.0
    np.testing.assert_array_equal(pg.grad(y_binary, [w])[0].array, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(pg.grad(y_prim, [w])[0].array, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(pg.grad(o.sum(g2), [w])[0].array, [2.0, 4.0, 6.0])


def test_views_taken_before_do_not_change():
    x = o.asarray(np.arange(4.0))
    head = x[:2]
    x[0] = 10.0
    np.testing.assert_array_equal(head.array, [0.0, 1.0])
    np.testing.assert_array_equal(x.array, [10.0, 1.0, 2.0, 3.0])


def test_a_detached_copy_takes_assignments():
    w = pg.Variable(np.zeros(3))
    y = w.detach()
    y[1] = 1.0
    np.testing.assert_array_equal(y.array, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(w.array, [0.0, 0.0, 0.0])


def test_refused_where_a_gradient_would_change():
    w = pg.Variable(np.zeros(3))
    with pytest.raises(GradientError, match=r"__setitem__: expected a Variable that does not"):
        w[0] = 1.0
    h = w * 2.0
    with pytest.raises(GradientError, match="does not require gradients"):
        h[0] = 1.0
    c = o.zeros(3)
    with pytest.raises(GradientError, match=r"__setitem__\(value\)"):
        c[0:1] = w[0:1]
    with pg.no_grad():
        c[0:1] = w[0:1]  # nothing is recorded: the value is taken as it is
    import portagrad.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        d = fwAD.make_dual(np.zeros(3), np.ones(3))
        with pytest.raises(GradientError, match="tangent"):
            d[0] = 1.0


def test_bad_keys_values_and_dtypes_get_clear_errors():
    x = o.asarray([1, 2, 3])
    with pytest.raises(IndexOutOfRangeError, match=r"__setitem__\(key\).*out of bounds"):
        x[5] = 1
    with pytest.raises(ShapeError, match=r"broadcasts to the selected shape \(2,\)"):
        x[:2] = o.asarray([1, 2, 3])
    with pytest.raises(DTypeError, match="Python scalar that fits int64"):
        x[0] = 1.5
    with pytest.raises(DTypeError, match="without widening"):
        x[0] = o.asarray(1.5)
    with pytest.raises(TypeError, match="expected an array, a Variable or a Python scalar"):
        x[0] = "a"
    b = o.asarray([True, False])
    with pytest.raises(DTypeError):
        b[0] = 1
    b[0] = False
    x[0] = True  # bool fits every dtype
    z = o.asarray([1.0 + 0j])
    z[0] = 2  # an int into a complex array
    np.testing.assert_array_equal(x.array, [1, 2, 3])
    np.testing.assert_array_equal(z.array, [2.0 + 0j])


def test_mixed_namespaces_are_refused():
    torch = pytest.importorskip("torch")
    x = o.zeros(3)
    with pytest.raises(pg.NamespaceMismatchError):
        x[0:1] = torch.ones(1, dtype=torch.float64)


def test_a_leaf_kept_while_it_required_gradients_is_refused():
    x = pg.Variable(np.array([1.0, 2.0, 3.0]))
    w = pg.Variable(np.ones(3))
    y = o.sum(x * w)
    x.requires_grad_(False)
    with pytest.raises(GradientError, match="kept"):
        x[0] = 100.0
    np.testing.assert_array_equal(pg.grad(y, [w])[0].array, [1.0, 2.0, 3.0])
    z = pg.Variable(np.array([1.0, 2.0]))  # never used by a recorded op
    z.requires_grad_(False)
    z[0] = 5.0
    np.testing.assert_array_equal(z.array, [5.0, 2.0])


def test_masks_of_several_axes_with_negative_steps(backend):
    host = np.arange(24.0).reshape(2, 3, 4)
    mask = np.array([[True, False, True], [False, True, False]])
    for value in (-1.0, np.array([7.0, 8.0])):
        x = pg.Variable(backend.asarray(host), requires_grad=False)
        key = (backend.asarray(mask), slice(None, None, -2))
        if backend.name == "array_api_strict":  # one boolean key alone is the standard's
            with pytest.raises(IndexError):
                x[key] = backend.asarray(value) if isinstance(value, np.ndarray) else value
            continue
        x[key] = backend.asarray(value) if isinstance(value, np.ndarray) else value
        expected = host.copy()
        expected[mask, ::-2] = value
        np.testing.assert_array_equal(to_numpy(x.array), expected)


def test_tangents_are_kept_as_they_were():
    import portagrad.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        t = pg.Variable(np.ones(2), requires_grad=False)
        c = fwAD.make_dual(np.array([2.0, 3.0]), t)
        w = pg.Variable(np.ones(2))
        y = o.sum(c * w * w)
        t[...] = 100.0  # the caller's Variable; the dual keeps its own tangent
        (g,) = pg.grad(y, [w])
        np.testing.assert_array_equal(fwAD.unpack_dual(g).tangent.array, [2.0, 2.0])
        out = fwAD.unpack_dual(c).tangent
        out[0] = 5.0  # what unpack_dual hands out is the caller's too
        np.testing.assert_array_equal(fwAD.unpack_dual(c).tangent.array, [1.0, 1.0])
        p = fwAD.make_dual(np.array([1.0, 2.0]), np.ones(2))
        z = o.zeros(3)
        with pytest.raises(GradientError, match=r"__setitem__\(value\).*tangent"):
            z[1:] = p * 3.0
