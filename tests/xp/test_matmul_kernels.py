"""Matrix-product kernels: the NumPy fast paths give the products of the default, in the
layouts they promise, and decline what they were not measured on."""

from __future__ import annotations

import array_api_compat.numpy as npx
import array_api_strict as xs
import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import _matmul, _openblas, pure_standard, set_mkl
from portagrad.xp._matmul import matmul, matmul_into, matmul_like


@pytest.fixture(autouse=True)
def openblas_products():
    """The OpenBLAS paths: MKL, where it is installed, off (tests/xp/test_mkl.py)."""
    was = set_mkl(False)
    yield
    set_mkl(was)


@pytest.fixture
def transposed_core(monkeypatch):
    """Run as on a CPU whose OpenBLAS kernels take the transposed form."""
    monkeypatch.setattr(_matmul, "_transposed_core", lambda: True)


@pytest.fixture
def plain_core(monkeypatch):
    monkeypatch.setattr(_matmul, "_transposed_core", lambda: False)


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape", [(128, 1000, 1000), (64, 9216, 128), (8, 1000, 600),
                                   (256, 512, 600)])
def test_transposed_form_equals_the_product_in_rows(rng, transposed_core, shape):
    m, k, n = shape
    x, w = _f32(rng, (m, k)), _f32(rng, (n, k))
    y = matmul(npx, x, w.mT)
    assert y.flags.c_contiguous and y.shape == (m, n) and y.dtype == np.float32
    np.testing.assert_allclose(y, x.astype(np.float64) @ w.T.astype(np.float64),
                               rtol=2e-4, atol=2e-4 * np.sqrt(k))
    with pure_standard():
        ref = matmul(npx, x, w.mT)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))


@pytest.mark.parametrize("case", ["float64", "rows>256", "short inner", "narrow", "small",
                                  "rows operand transposed", "right operand in rows"])
def test_transposed_form_declines_what_was_not_measured(rng, transposed_core, case):
    m, k, n = 64, 600, 300
    dtype = np.float64 if case == "float64" else np.float32
    if case == "rows>256":
        m, n = 257, 1000
    elif case == "short inner":
        k = 511
    elif case == "narrow":
        n = 2 * m - 1
    elif case == "small":
        m, n = 4, 8
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    if case == "rows operand transposed":
        x = np.asfortranarray(x)
    b = np.ascontiguousarray(w.T) if case == "right operand in rows" else w.T
    assert _matmul._matmul_numpy(npx, x, b) is NotImplemented
    np.testing.assert_array_equal(matmul(npx, x, b), x @ b)


def test_other_cores_run_the_product_as_written(rng, plain_core):
    x, w = _f32(rng, (128, 1000)), _f32(rng, (1000, 1000))
    assert _matmul._matmul_numpy(npx, x, w.mT) is NotImplemented
    np.testing.assert_array_equal(matmul(npx, x, w.mT), x @ w.T)


@pytest.mark.parametrize("order", ["C", "F"])
def test_matmul_like_takes_the_layout_of_like(rng, transposed_core, order):
    a, b = _f32(rng, (128, 700)), _f32(rng, (700, 300))
    like = np.zeros((128, 300), dtype=np.float32, order=order)
    g = matmul_like(npx, a, b, like)
    assert g.flags.f_contiguous if order == "F" else g.flags.c_contiguous
    np.testing.assert_allclose(g, a @ b, rtol=1e-5, atol=1e-4)


def test_matmul_like_on_a_library_without_layouts(rng):
    a, b = xs.asarray(_f32(rng, (3, 4))), xs.asarray(_f32(rng, (4, 2)))
    g = matmul_like(xs, a, b, xs.zeros((3, 2)))
    np.testing.assert_array_equal(np.asarray(g), np.asarray(a @ b))


def test_gradients_of_a_transposed_operand_come_in_its_layout(rng, transposed_core):
    # The gradient of a column-major input is column-major, and summed with the others
    # of the same variable without a copy across layouts.
    x = pg.Variable(np.asfortranarray(_f32(rng, (64, 600))), requires_grad=True)
    w = pg.Variable(_f32(rng, (300, 600)), requires_grad=True)
    y = pg.ops.linear(x, w) + pg.ops.matmul(x, w.mT)
    gx, gw = pg.grad(pg.ops.sum(y * y), [x, w])
    assert gx.array.flags.f_contiguous and gw.array.flags.c_contiguous
    x64, w64 = x.array.astype(np.float64), w.array.astype(np.float64)
    gy = 2 * (2 * x64 @ w64.T)
    np.testing.assert_allclose(gx.array, 2 * gy @ w64, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(gw.array, 2 * gy.T @ x64, rtol=1e-4, atol=1e-2)


def test_linear_layer_on_the_transposed_form_trains_as_the_plain_one(rng, monkeypatch):
    """One SGD step of a 784-1000-10 MLP (batch 128): the transposed form and the plain
    one give the same loss and gradients to float32 rounding, and their second-order
    products (a Hessian-vector product) agree too."""
    x, t = _f32(rng, (128, 784)), rng.integers(0, 10, 128)
    w0, w1, v0 = _f32(rng, (1000, 784)) * 0.03, _f32(rng, (10, 1000)) * 0.03, _f32(
        rng, (1000, 784))

    def loss(a, b):
        return pg.ops.softmax_cross_entropy(pg.ops.linear(pg.ops.relu(pg.ops.linear(x, a)),
                                                           b), t)

    results = []
    for core in (True, False):
        monkeypatch.setattr(_matmul, "_transposed_core", lambda core=core: core)
        ws = [pg.Variable(w0, requires_grad=True), pg.Variable(w1, requires_grad=True)]
        value = loss(*ws)
        grads = pg.grad(value, ws)
        _, hv = pg.hvp(loss, (w0, w1), (v0, np.zeros_like(w1)))
        results.append([value.array, *(g.array for g in grads), *(h.array for h in hv)])
    for fast, plain in zip(*results):
        np.testing.assert_allclose(fast, plain, rtol=1e-4, atol=1e-6)


def test_openblas_core_name_is_known_or_empty():
    name = _openblas.corename()
    assert isinstance(name, str)
    if _openblas.library() is not None:
        assert name  # NumPy's wheels: OpenBLAS names the kernels it picked


@pytest.mark.parametrize("shape", [(1000, 128), (3, 1), (0, 4), (5, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_transpose_copy_is_a_row_major_transpose(rng, shape, dtype):
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    out = _openblas.transpose_copy(a)
    assert out.flags.c_contiguous and out.dtype == a.dtype
    np.testing.assert_array_equal(out, a.T)
    view = _openblas.transpose_copy(a[::-1])  # not row-major: NumPy's copy
    np.testing.assert_array_equal(view, a[::-1].T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("orders", ["CCC", "CFC", "FCC", "FFC", "CCF", "CFF", "FCF", "FFF"])
def test_matmul_into_adds_the_product_in_place(rng, dtype, orders):
    a = np.asarray(rng.standard_normal((5, 7)), dtype=dtype, order=orders[0])
    b = np.asarray(rng.standard_normal((7, 3)), dtype=dtype, order=orders[1])
    out = np.asarray(rng.standard_normal((5, 3)), dtype=dtype, order=orders[2])
    expected = out + a @ b
    assert _matmul._matmul_into_numpy(npx, a, b, out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("case", ["float16", "complex", "int", "big-endian", "shape", "strided",
                                  "aliased", "read-only"])
def test_matmul_into_declines_and_the_default_still_adds(rng, case):
    dtype = {"float16": np.float16, "complex": np.complex128, "int": np.int64,
             "big-endian": np.dtype(">f8")}.get(case, np.float64)
    a = (rng.standard_normal((4, 6)) * 4).astype(dtype)
    b = (rng.standard_normal((6, 4)) * 4).astype(dtype)
    out = (rng.standard_normal((4, 4)) * 4).astype(dtype)
    if case == "shape":
        b = b[:, :3]
        out = out[:, :3].copy()
    elif case == "strided":
        a = np.repeat(a, 2, axis=1)[:, ::2]
    elif case == "aliased":
        a = out
        b = b[:4]
    expected = out + a @ b
    if case == "read-only":
        out.flags.writeable = False
    assert _matmul._matmul_into_numpy(npx, a, b, out) is NotImplemented
    if case == "read-only":
        return
    got = matmul_into(npx, a, b, out)
    np.testing.assert_allclose(got, expected, rtol=1e-3 if dtype == np.float16 else 1e-12)


def test_matmul_into_pure_standard(rng):
    a, b, out = (xs.asarray(rng.standard_normal(s)) for s in ((3, 4), (4, 2), (3, 2)))
    expected = np.asarray(out) + np.asarray(a) @ np.asarray(b)
    with pure_standard():
        got = matmul_into(xs, a, b, out)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_backward_sums_products_of_one_variable_into_one_array(rng, dtype):
    """A weight used by three products, an input squared by a product with itself: the
    later products are added where the first one is (GEMM with beta = 1), and the sums are
    the gradients."""
    def draw(*shape):
        v = rng.standard_normal(shape)
        return (v + 1j * rng.standard_normal(shape) if dtype == np.complex128 else v).astype(
            dtype)

    x, y, w, s = draw(4, 5), draw(3, 5), draw(6, 5), draw(5, 5)
    wv, sv = pg.Variable(w), pg.Variable(s)
    out = (pg.ops.sum(pg.ops.linear(x, wv)) + pg.ops.sum(pg.ops.linear(y, wv))
           + pg.ops.sum(pg.ops.matmul(wv, sv)) + pg.ops.sum(pg.ops.matmul(sv, sv)))
    gw, gs = pg.grad(out, [wv, sv])
    c = np.conj
    one = np.ones
    ew = one((4, 6)).T @ c(x) + one((3, 6)).T @ c(y) + one((6, 5)) @ c(s).T
    es = c(w).T @ one((6, 5)) + one((5, 5)) @ c(s).T + c(s).T @ one((5, 5))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(gw.array, ew, rtol=tol, atol=tol)
    np.testing.assert_allclose(gs.array, es, rtol=tol, atol=tol)
    wv2 = pg.Variable(w)
    (pg.ops.sum(pg.ops.linear(x, wv2)) + pg.ops.sum(pg.ops.linear(y, wv2))).backward()
    first = wv2.grad_var
    kept = first.array.copy()
    (pg.ops.sum(pg.ops.linear(x, wv2)) + pg.ops.sum(pg.ops.linear(y, wv2))).backward()
    np.testing.assert_array_equal(first.array, kept)  # the earlier .grad is not summed into
    np.testing.assert_allclose(wv2.grad_var.array, 2 * kept, rtol=tol)
