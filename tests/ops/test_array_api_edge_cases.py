"""Corners of the standard's functions: error types it prescribes, argument dtypes it
allows. Each expectation is checked against NumPy or array-api-strict doing the same."""

from __future__ import annotations

import array_api_strict as xs
import numpy as np
import pytest

import portagrad as pg
from portagrad import AxisError, DTypeError, GradientError, ShapeError
from portagrad.xp import to_numpy

o = pg.ops


@pytest.mark.parametrize("axis", [3, -4, 7])
def test_expand_dims_axis_out_of_range_is_an_index_error(backend, axis):
    # The standard asks expand_dims for an IndexError; array-api-strict raises one too.
    with pytest.raises(IndexError):
        xs.expand_dims(xs.zeros((2, 0)), axis=axis)
    x = pg.Variable(backend.asarray(np.zeros((2, 0))))
    with pytest.raises(IndexError, match=r"expand_dims\(axis\): expected an axis in \[-3, 3\)"):
        o.expand_dims(x, axis=axis)


@pytest.mark.parametrize(("axis", "shape"), [(0, (1, 2, 3)), (1, (2, 1, 3)), (-1, (2, 3, 1)),
                                           (-3, (1, 2, 3))])
def test_expand_dims_takes_axis_by_position_or_keyword_with_default_0(backend, axis, shape):
    # The 2024.12 signature is expand_dims(x, /, axis); the release text had axis
    # keyword-only with default 0, which code written against it still relies on.
    x = pg.Variable(backend.asarray(np.arange(6.0).reshape(2, 3)), requires_grad=True)
    by_position = o.expand_dims(x, axis)
    assert by_position.shape == shape
    assert o.expand_dims(x, axis=axis).shape == shape
    assert o.expand_dims(x).shape == (1, 2, 3)
    np.testing.assert_array_equal(to_numpy(by_position.array).reshape(2, 3),
                                  np.arange(6.0).reshape(2, 3))
    o.sum(by_position * by_position).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), 2 * np.arange(6.0).reshape(2, 3))
    assert xs.expand_dims(xs.zeros((2, 3)), axis).shape == shape  # the reference agrees


def test_expand_dims_refuses_a_tuple_of_axes_before_2025_12(backend):
    x = pg.Variable(backend.asarray(np.zeros((2, 3))))
    with pytest.raises(TypeError, match=r"expand_dims\(axis\): expected an integer"):
        o.expand_dims(x, (0, 1))


def test_axis_error_is_still_a_shape_error():
    # Code that caught ShapeError/ValueError for a bad axis keeps working, as with NumPy's
    # AxisError (a ValueError and an IndexError).
    assert issubclass(AxisError, ShapeError)
    assert issubclass(AxisError, ValueError) and issubclass(AxisError, IndexError)
    assert issubclass(np.exceptions.AxisError, ValueError)
    with pytest.raises(ShapeError):
        o.sum(pg.Variable(np.zeros((2, 3))), axis=2)


@pytest.mark.parametrize("dtype", ["uint8", "uint64", "int16", "int64"])
def test_repeat_counts_of_any_integer_dtype(backend, dtype):
    x = np.array([[1.5, -2.0, 3.0], [4.0, 5.0, 6.0]])
    counts = np.array([2, 0, 3], dtype=dtype)
    expected = np.repeat(x, counts.astype(np.int64), axis=1)
    got = o.repeat(pg.Variable(backend.asarray(x)), pg.Variable(backend.asarray(counts)),
                   axis=1)
    np.testing.assert_array_equal(to_numpy(got.array), expected)
    # Gradient: each input element collects its copies.
    xv = pg.Variable(backend.asarray(x), requires_grad=True)
    o.sum(o.repeat(xv, pg.Variable(backend.asarray(counts)), axis=1)).backward()
    np.testing.assert_array_equal(to_numpy(xv.grad), np.broadcast_to([2.0, 0.0, 3.0], x.shape))


def test_repeat_empty_uint64_counts_on_an_empty_array():
    # The case NumPy's own repeat refuses (uint64 counts cannot be cast to intp "safely").
    with pytest.raises(TypeError):
        np.repeat(np.array([], dtype=bool), np.array([], dtype=np.uint64))
    got = o.repeat(pg.Variable(np.array([], dtype=bool)),
                   pg.Variable(np.array([], dtype=np.uint64)))
    assert got.shape == (0,) and got.dtype == np.bool_


def test_repeat_rejects_non_integer_counts(backend):
    x = pg.Variable(backend.asarray(np.array([1.0, 2.0])))
    with pytest.raises(DTypeError, match=r"repeat\(repeats\): expected an int or an integer"):
        o.repeat(x, pg.Variable(backend.asarray(np.array([1.0, 2.0]))))


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "uint16"])
def test_square_of_integers_keeps_the_dtype(backend, dtype):
    # The standard's square takes any numeric dtype; the result keeps it (wrapping as
    # NumPy's does).
    host = np.array([[0, 3], [-5, 15]]).astype(dtype)
    got = o.square(pg.Variable(backend.asarray(host)))
    expected = np.square(host)
    assert to_numpy(got.array).dtype == expected.dtype
    np.testing.assert_array_equal(to_numpy(got.array), expected)
    np.testing.assert_array_equal(
        to_numpy(got.array), to_numpy(xs.square(xs.asarray(host)))
    )


def test_square_of_floats_still_differentiates(backend):
    x = pg.Variable(backend.asarray(np.array([1.5, -2.0])), requires_grad=True)
    o.sum(o.square(x)).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, -4.0])


def test_square_rejects_booleans():
    with pytest.raises(TypeError):
        xs.square(xs.asarray([True]))
    with pytest.raises(DTypeError, match=r"square\(x\): expected a numeric array"):
        o.square(np.array([True]))


@pytest.mark.parametrize("shape, mask_shape", [((2, 3), (3,)), ((2, 3), (2, 2)),
                                              ((0, 0), (0, 1)), ((3,), (2,))])
def test_boolean_mask_of_the_wrong_shape_is_an_index_error(backend, shape, mask_shape):
    # NumPy and array-api-strict refuse a mask that does not match the axes it selects
    # from; selecting through its nonzero positions would silently pick the wrong elements.
    host, mask = np.zeros(shape), np.ones(mask_shape, dtype=bool)
    with pytest.raises(IndexError):
        host[mask]
    with pytest.raises(IndexError):
        xs.zeros(shape)[xs.asarray(mask)]
    x = pg.Variable(backend.asarray(host))
    with pytest.raises(IndexError, match=r"getitem\(key\): expected a boolean mask of shape"):
        x[backend.asarray(mask)]


@pytest.mark.parametrize("key", [
    np.array([True, False]),
    (slice(None), np.array([True, False, True])),
    np.array([[True, False, True], [False, False, True]]),
    (np.array([False, True]), 1),
    np.zeros((0,), dtype=bool),  # an empty mask selects nothing, as in NumPy
])
def test_boolean_masks_that_match_select_as_numpy(backend, key):
    host = np.arange(6.0).reshape(2, 3)
    bkey = tuple(backend.asarray(k) if isinstance(k, np.ndarray) else k for k in key) \
        if isinstance(key, tuple) else backend.asarray(key)
    got = pg.Variable(backend.asarray(host))[bkey]
    np.testing.assert_array_equal(to_numpy(got.array), host[key])


def _hermitian_and_wide(rng):
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    w = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    return a @ a.conj().T + 3 * np.eye(3), a, w


def test_decompositions_take_complex_matrices_as_numpy(backend, rng):
    # The standard's cholesky, qr, eigh, eigvalsh, svd, svdvals and pinv take any
    # floating-point dtype, complex included.
    L = pg.ops.linalg
    h, a, w = _hermitian_and_wide(rng)

    def v(m):
        return pg.Variable(backend.asarray(m), requires_grad=False)

    np.testing.assert_allclose(to_numpy(L.cholesky(v(h)).array), np.linalg.cholesky(h))
    np.testing.assert_allclose(to_numpy(L.cholesky(v(h), upper=True).array),
                               np.linalg.cholesky(h).conj().T)
    for m in (a, w):  # square and wide (the wide one is factored in two parts)
        q, r = L.qr(v(m))
        np.testing.assert_allclose(to_numpy((q @ r).array), m, atol=1e-12)
        np.testing.assert_allclose(to_numpy(r.array), np.triu(to_numpy(r.array)))
        np.testing.assert_allclose(to_numpy((q.mT @ pg.ops.conj(q)).array).conj(),
                                   np.eye(q.shape[-1]), atol=1e-12)
    eig = L.eigh(v(h))
    assert to_numpy(eig.eigenvalues.array).dtype == np.float64  # real eigenvalues
    np.testing.assert_allclose(to_numpy(eig.eigenvalues.array), np.linalg.eigvalsh(h))
    np.testing.assert_allclose(to_numpy(L.eigvalsh(v(h)).array), np.linalg.eigvalsh(h))
    np.testing.assert_allclose(to_numpy(L.svd(v(w)).S.array),
                               np.linalg.svd(w, compute_uv=False))
    np.testing.assert_allclose(to_numpy(L.svdvals(v(a)).array),
                               np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose(to_numpy(L.pinv(v(w)).array), np.linalg.pinv(w), atol=1e-12)
    np.testing.assert_allclose(to_numpy(L.matrix_norm(v(a), ord="nuc").array),
                               np.linalg.norm(a, ord="nuc"))
    np.testing.assert_allclose(
        to_numpy(xs.linalg.svdvals(xs.asarray(a))), np.linalg.svd(a, compute_uv=False))


@pytest.mark.parametrize("op", ["cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals",
                                "pinv"])
def test_complex_decompositions_refuse_a_gradient_instead_of_a_wrong_one(rng, op):
    h, _, _ = _hermitian_and_wide(rng)
    x = pg.Variable(h, requires_grad=True)
    out = getattr(pg.ops.linalg, op)(x)
    first = out if isinstance(out, pg.Variable) else out[0]
    loss = pg.ops.sum(pg.ops.real(first) if "complex" in str(first.dtype) else first)
    with pytest.raises(GradientError, match=r"expected a real floating input to differentiate"):
        loss.backward()
