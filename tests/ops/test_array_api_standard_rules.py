"""Rules of the 2024.12 standard where NumPy, torch or a naive composition would differ:
explicit dtypes of cumulative ops, the casting table, ``finfo``/``iinfo`` field types,
zero-length contractions and 0-d boolean masks. References are NumPy and
array-api-strict (the standard's reference implementation)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import portagrad as pg

o = pg.ops
NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128")


@pytest.mark.parametrize("fn,np_fn", [(o.cumulative_sum, np.cumsum),
                                      (o.cumulative_prod, np.cumprod)])
@pytest.mark.parametrize("src,dst", [("int8", "int8"), ("int8", "int16"),
                                     ("uint8", "uint8"), ("int16", "int32")])
def test_cumulative_ops_keep_an_explicit_integer_dtype(backend, fn, np_fn, src, dst):
    host = np.array([[1, 2, 3], [4, 5, 6]], dtype=src)
    y = fn(backend.asarray(host), axis=1, dtype=getattr(o, dst))
    assert y.dtype == getattr(o, dst)
    np.testing.assert_array_equal(np.asarray(pg.xp.to_numpy(y.array)),
                                  np_fn(host, axis=1, dtype=dst))


@pytest.mark.parametrize("fn", [o.cumulative_sum, o.cumulative_prod])
def test_cumulative_ops_widen_small_integers_without_a_dtype(backend, fn):
    # The standard: the default integer dtype (of the same signedness) when none is given.
    assert fn(backend.asarray(np.array([1, 2], dtype=np.int8))).dtype == o.int64
    if backend.name != "torch":  # torch widens uint8 to int64: it has few uint64 kernels
        assert fn(backend.asarray(np.array([1, 2], dtype=np.uint8))).dtype == o.uint64


def test_cumulative_sum_explicit_dtype_with_include_initial(backend):
    y = o.cumulative_sum(backend.asarray(np.array([100, 100], dtype=np.int8)),
                         dtype=o.int16, include_initial=True)
    assert y.dtype == o.int16
    np.testing.assert_array_equal(pg.xp.to_numpy(y.array), [0, 100, 200])


def test_can_cast_follows_the_standards_table():
    import array_api_strict as strict

    for a, b in itertools.product(NAMES, NAMES):
        expected = strict.can_cast(getattr(strict, a), getattr(strict, b))
        assert o.can_cast(getattr(o, a), getattr(o, b)) == expected, (a, b)


def test_can_cast_refuses_casts_across_kinds_that_numpy_allows(backend):
    assert np.can_cast(np.bool_, np.int8)  # NumPy's safe casting allows it
    assert not o.can_cast(o.bool, o.int8)
    assert not o.can_cast(backend.asarray(np.array([True])), o.int8)
    assert not o.can_cast(o.int64, o.float64)
    assert o.can_cast(o.uint8, o.int16) and not o.can_cast(o.uint8, o.int8)
    assert o.can_cast(o.float32, o.complex64) and not o.can_cast(o.float64, o.complex64)


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_finfo_fields_are_python_numbers(backend, name):
    info = o.finfo(getattr(o, name))
    ref = np.finfo(name)
    for field in ("eps", "max", "min", "smallest_normal"):
        value = getattr(info, field)
        assert type(value) is float, field
        assert value == float(getattr(ref, field)), field
    assert type(info.bits) is int and info.bits == ref.bits
    assert info.dtype == getattr(o, ref.dtype.name)  # float32 for complex64
    from_array = o.finfo(backend.asarray(np.zeros(1, dtype=name)))
    assert type(from_array.eps) is float and from_array.eps == float(ref.eps)


@pytest.mark.parametrize("name", ["int8", "int64", "uint8", "uint64"])
def test_iinfo_fields_are_python_ints(name):
    info = o.iinfo(getattr(o, name))
    ref = np.iinfo(name)
    assert (type(info.bits), type(info.max), type(info.min)) == (int, int, int)
    assert (info.bits, info.max, info.min) == (ref.bits, ref.max, ref.min)
    assert info.dtype == getattr(o, name)


@pytest.mark.parametrize("sa,sb,axes", [((0, 0), (0, 2), 1), ((2, 0), (0, 3), 1),
                                        ((2, 3), (3, 0), 1), ((0, 3), (3, 4), 1),
                                        ((2, 0, 3), (0, 3), 2), ((0,), (0,), 0)])
def test_tensordot_with_zero_length_axes(backend, sa, sb, axes):
    a = np.arange(int(np.prod(sa)), dtype=np.float64).reshape(sa)
    b = np.arange(int(np.prod(sb)), dtype=np.float64).reshape(sb)
    y = o.tensordot(backend.asarray(a), backend.asarray(b), axes=axes)
    expected = np.tensordot(a, b, axes=axes)
    assert y.shape == expected.shape
    np.testing.assert_array_equal(pg.xp.to_numpy(y.array), expected)


@pytest.mark.parametrize("key", [
    (True,), (False,), (True, 0), (slice(None), False), ([True, False], True),
    (Ellipsis, True), (None, False, slice(1, None)),
])
def test_zero_dimensional_boolean_mask_adds_an_axis(backend, key):
    host = np.arange(6.0).reshape(2, 3)
    np_key = tuple(np.asarray(k) if isinstance(k, (bool, list)) else k for k in key)
    our_key = tuple(backend.asarray(k) if isinstance(k, np.ndarray) else k for k in np_key)
    y = backend_var(backend, host)[our_key]
    expected = host[np_key]
    assert y.shape == expected.shape
    np.testing.assert_array_equal(pg.xp.to_numpy(y.array), expected)


def test_zero_dimensional_boolean_mask_on_a_zero_dimensional_array(backend):
    x = backend_var(backend, np.asarray(5.0))
    assert x[backend.asarray(np.asarray(True))].shape == (1,)
    assert x[backend.asarray(np.asarray(False))].shape == (0,)


def test_zero_dimensional_boolean_mask_gradient(backend):
    x = pg.Variable(backend.asarray(np.arange(6.0).reshape(2, 3)))
    y = x[backend.asarray(np.asarray(True)), 1]  # shape (1, 3): row 1 of x
    (g,) = pg.grad(o.sum(y * y), [x])
    expected = np.zeros((2, 3))
    expected[1] = 2 * np.arange(3.0, 6.0)
    np.testing.assert_array_equal(pg.xp.to_numpy(g.array), expected)
    (g,) = pg.grad(o.sum(x[backend.asarray(np.asarray(False))]), [x])
    np.testing.assert_array_equal(pg.xp.to_numpy(g.array), np.zeros((2, 3)))


def backend_var(backend, host):
    return pg.Variable(backend.asarray(host), requires_grad=False)


def test_astype_copy_true_gives_a_new_array_even_for_the_same_dtype(backend):
    for host in (np.array([1.0, 2.0]), np.array([1, 2], dtype=np.int8),
                 np.array([True, False])):
        x = backend_var(backend, host)
        same = getattr(o, host.dtype.name)
        copied = o.astype(x, same)  # copy=True is the default
        assert copied.dtype == same
        np.testing.assert_array_equal(pg.xp.to_numpy(copied.array), host)
        if backend.name == "numpy":
            assert not np.shares_memory(copied.array, x.array)
            assert np.shares_memory(o.astype(x, same, copy=False).array, x.array)
        assert o.astype(x, same, copy=False) is x


def test_astype_copy_of_a_floating_variable_keeps_the_gradient(backend):
    x = pg.Variable(backend.asarray(np.array([1.0, -2.0])))
    (g,) = pg.grad(o.sum(o.astype(x, o.float64) ** 2), [x])
    np.testing.assert_array_equal(pg.xp.to_numpy(g.array), [2.0, -4.0])


@pytest.mark.parametrize("name", ["int8", "int16", "uint8"])
def test_trace_keeps_an_explicit_integer_dtype(backend, name):
    host = np.full((3, 3), 100, dtype=name)
    y = o.linalg.trace(backend.asarray(host), dtype=getattr(o, name))
    assert y.dtype == getattr(o, name)
    assert int(pg.xp.to_numpy(y.array)) == int(np.trace(host, dtype=name))


@pytest.mark.parametrize("name", ["int8", "int64", "uint8"])
def test_vecdot_of_integers(backend, name):
    a = np.array([[100, 2, 3], [4, 5, 6]], dtype=name)
    b = np.array([[1, 2, 3], [7, 8, 9]], dtype=name)
    y = o.vecdot(backend.asarray(a), backend.asarray(b))
    assert y.dtype == getattr(o, name)
    np.testing.assert_array_equal(pg.xp.to_numpy(y.array), np.vecdot(a, b))
    with pytest.raises(pg.DTypeError):
        o.vecdot(backend.asarray(np.array([True])), backend.asarray(np.array([True])))


def test_array_namespace_versions(backend):
    x = backend_var(backend, np.ones(2))
    for version in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=version) is o
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="2019.01")


def test_meshgrid_returns_a_list(backend):
    a = backend.asarray(np.arange(3.0))
    b = backend.asarray(np.arange(2.0))
    grids = o.meshgrid(a, b)
    assert isinstance(grids, list) and len(grids) == 2
    for got, want in zip(grids, np.meshgrid(np.arange(3.0), np.arange(2.0))):
        np.testing.assert_array_equal(pg.xp.to_numpy(got.array), want)


@pytest.mark.parametrize("name", ["int8", "int16", "uint8", "int32"])
def test_small_integer_indices_into_a_long_axis(backend, name):
    host = np.arange(200.0)
    idx = np.array([0, 120, 127] if name == "uint8" else [-1, -100, 3], dtype=name)
    x = backend_var(backend, host)
    i = backend.asarray(idx)
    np.testing.assert_array_equal(pg.xp.to_numpy(o.take(x, i).array), host[idx])
    np.testing.assert_array_equal(pg.xp.to_numpy(x[i].array), host[idx])
    np.testing.assert_array_equal(pg.xp.to_numpy(o.take_along_axis(x, i, axis=0).array),
                                  np.take_along_axis(host, idx, axis=0))
    zero_d = backend.asarray(np.asarray(idx[1]))
    assert float(pg.xp.to_numpy(x[zero_d].array)) == host[idx[1]]


def test_gather_with_small_integer_indices_is_differentiable(backend):
    x = pg.Variable(backend.asarray(np.arange(4.0)))
    (g,) = pg.grad(o.sum(o.take(x, backend.asarray(np.array([-1, -1, 0], dtype=np.int8)))),
                   [x])
    np.testing.assert_array_equal(pg.xp.to_numpy(g.array), [1.0, 0.0, 0.0, 2.0])


def test_count_nonzero_over_no_axis_counts_each_element(backend):
    host = np.array([[1.5, 0.0], [0.0, -2.0]])
    y = o.count_nonzero(backend.asarray(host), axis=())
    assert y.dtype == o.int64 and y.shape == (2, 2)
    np.testing.assert_array_equal(pg.xp.to_numpy(y.array), np.count_nonzero(host, axis=()))
    empty = o.count_nonzero(backend.asarray(np.zeros(0, dtype=bool)), axis=())
    assert empty.shape == (0,)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_diff_of_an_empty_axis(backend, n):
    host = np.zeros((0, 3), dtype=np.int8)
    y = o.diff(backend.asarray(host), axis=0, n=n)
    expected = np.diff(host, axis=0, n=n)
    assert y.shape == expected.shape and y.dtype == o.int8
    short = np.array([4.0, 1.0])
    np.testing.assert_array_equal(pg.xp.to_numpy(o.diff(backend.asarray(short), n=n).array),
                                  np.diff(short, n=n))


def test_count_nonzero_over_no_axis_of_booleans(backend):
    host = np.array([True, False, True])
    y = o.count_nonzero(backend.asarray(host), axis=())
    np.testing.assert_array_equal(pg.xp.to_numpy(y.array), [1, 0, 1])


# -- complex linear algebra -------------------------------------------------------------------
A_C = np.array([[2.0 + 1.0j, 1.0 - 0.5j, 0.2j], [0.3j, 3.0 - 1.0j, 0.5], [1.0, -0.4j, 2.5 + 0.5j]])
B_C = np.array([[1.0j, 2.0], [0.5 - 1.0j, -1.0], [2.0, 1.0 + 1.0j]])


@pytest.mark.parametrize("name,ours,ref", [
    ("inv", lambda a, b: o.linalg.inv(a), lambda a, b: np.linalg.inv(a)),
    ("det", lambda a, b: o.linalg.det(a), lambda a, b: np.linalg.det(a)),
    ("solve", o.linalg.solve, np.linalg.solve),
    ("matrix_power", lambda a, b: o.linalg.matrix_power(a, -2),
     lambda a, b: np.linalg.matrix_power(a, -2)),
    ("matrix_power3", lambda a, b: o.linalg.matrix_power(a, 3),
     lambda a, b: np.linalg.matrix_power(a, 3)),
])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_inverse_family_forward(backend, name, ours, ref, dtype):
    a, b = A_C.astype(dtype), B_C.astype(dtype)
    y = ours(backend.asarray(a), backend.asarray(b))
    assert y.dtype == getattr(o, dtype)
    tol = 1e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(pg.xp.to_numpy(y.array), ref(a, b), rtol=tol, atol=tol)


def test_complex_slogdet_and_matrix_rank(backend):
    r = o.linalg.slogdet(backend.asarray(A_C))
    sign, logabs = np.linalg.slogdet(A_C)
    assert r.sign.dtype == o.complex128 and r.logabsdet.dtype == o.float64
    np.testing.assert_allclose(pg.xp.to_numpy(r.sign.array), sign, rtol=1e-12)
    np.testing.assert_allclose(pg.xp.to_numpy(r.logabsdet.array), logabs, rtol=1e-12)
    low_rank = np.outer([1.0, 1j, 2.0], [1.0, -1j, 0.5])
    assert int(pg.xp.to_numpy(o.linalg.matrix_rank(backend.asarray(low_rank)).array)) == 1
    assert int(pg.xp.to_numpy(o.linalg.matrix_rank(backend.asarray(A_C)).array)) == 3


def _numerical_complex_grad(loss, z, eps=1e-6):
    """dL/dx + i dL/dy of a real loss by central differences (the gradient convention)."""
    g = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for unit in (1.0, 1.0j):
            zp, zm = z.copy(), z.copy()
            zp[idx] += eps * unit
            zm[idx] -= eps * unit
            g[idx] += (loss(zp) - loss(zm)) / (2 * eps) * unit
    return g


W_C = np.array([[0.5 - 1.0j, 2.0, 1.0j], [-1.0, 0.3 + 0.7j, 1.0], [2.0j, 1.0, -0.5 + 0.5j]])


@pytest.mark.parametrize("name,ours,ref", [
    ("inv", lambda a: o.linalg.inv(a), np.linalg.inv),
    ("det", lambda a: o.linalg.det(a), np.linalg.det),
    ("solve", lambda a: o.linalg.solve(a, B_C), lambda a: np.linalg.solve(a, B_C)),
    ("matrix_power", lambda a: o.linalg.matrix_power(a, -2),
     lambda a: np.linalg.matrix_power(a, -2)),
])
def test_complex_inverse_family_gradient(name, ours, ref):
    # L = sum(real(f(A) * conj(W))): a real loss of a complex (holomorphic) function.
    def weights(y):
        return W_C[..., : y.shape[-1]] if np.ndim(y) else W_C[0, 0]

    def loss_np(a):
        y = ref(a)
        return float(np.sum(np.real(y * np.conj(weights(y)))))

    a = pg.Variable(A_C.copy())
    y = ours(a)
    w = weights(pg.xp.to_numpy(y.array))
    (g,) = pg.grad(o.sum(o.real(y * np.conj(w))), [a])
    np.testing.assert_allclose(g.array, _numerical_complex_grad(loss_np, A_C), rtol=1e-6,
                               atol=1e-7)


def test_complex_solve_gradient_with_respect_to_the_right_hand_side():
    b = pg.Variable(B_C.copy())
    w = W_C[:, :2]
    (g,) = pg.grad(o.sum(o.real(o.linalg.solve(A_C, b) * np.conj(w))), [b])
    numerical = _numerical_complex_grad(
        lambda bb: float(np.sum(np.real(np.linalg.solve(A_C, bb) * np.conj(w)))), B_C)
    np.testing.assert_allclose(g.array, numerical, rtol=1e-6, atol=1e-7)


def test_complex_slogdet_gradient():
    a = pg.Variable(A_C.copy())
    (g,) = pg.grad(o.linalg.slogdet(a).logabsdet * 1.5, [a])
    numerical = _numerical_complex_grad(lambda m: 1.5 * np.linalg.slogdet(m)[1], A_C)
    np.testing.assert_allclose(g.array, numerical, rtol=1e-6, atol=1e-7)


def test_complex_inverse_second_order():
    # The gradient of the gradient: d/dA of sum(real(grad_A L * conj(V))), by differences.
    v = W_C[::-1].copy()

    def first(a_np):
        a = pg.Variable(a_np)
        (g,) = pg.grad(o.sum(o.real(o.linalg.inv(a) * np.conj(W_C))), [a])
        return float(np.sum(np.real(g.array * np.conj(v))))

    a = pg.Variable(A_C.copy())
    (g,) = pg.grad(o.sum(o.real(o.linalg.inv(a) * np.conj(W_C))), [a], create_graph=True)
    (gg,) = pg.grad(o.sum(o.real(g * np.conj(v))), [a])
    np.testing.assert_allclose(gg.array, _numerical_complex_grad(first, A_C), rtol=1e-5,
                               atol=1e-6)


def test_inspection_devices_is_a_list():
    info = o.__array_namespace_info__()
    devices = info.devices()
    assert isinstance(devices, list) and info.default_device() in devices
