"""oneMKL's products (portagrad.xp._mkl): NumPy's results in every layout they take, the
layouts and dtypes they decline, the split over threads, and the self-test's refusal."""

from __future__ import annotations

import importlib.metadata
import itertools

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _mkl, _threads, mkl_in_use, native_in_use, pure_standard, set_mkl
from portagrad.xp._conv import conv_forward, conv_input_grad, conv_weight_grad
from portagrad.xp._matmul import matmul, matmul_into


def _installed() -> bool:
    try:
        importlib.metadata.distribution("mkl")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_mkl = pytest.mark.skipif(not _installed(), reason="the mkl wheel is not installed")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _layout(x, kind):
    """``x`` (2-d) with the same values in layout ``kind``."""
    if kind == "C":
        return np.ascontiguousarray(x)
    if kind == "F":
        return np.asfortranarray(x)
    if kind == "rows":  # contiguous rows, a leading dimension past the row's end
        big = np.zeros((x.shape[0], x.shape[1] + 3), dtype=x.dtype)
        big[:, 1:x.shape[1] + 1] = x
        return big[:, 1:x.shape[1] + 1]
    big = np.zeros((x.shape[0] + 5, x.shape[1]), dtype=x.dtype, order="F")  # columns
    big[2:x.shape[0] + 2] = x
    return big[2:x.shape[0] + 2]


@needs_mkl
def test_installed_mkl_passes_its_self_test():
    assert mkl_in_use(), _mkl.why_declined()
    assert _mkl.why_declined() == ""


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("la", ["C", "F", "rows", "cols"])
@pytest.mark.parametrize("lb", ["C", "F", "rows", "cols"])
def test_product_equals_numpys_in_every_layout(rng, dtype, la, lb):
    a = _layout(rng.standard_normal((67, 45)).astype(dtype), la)
    b = _layout(rng.standard_normal((45, 33)).astype(dtype), lb)
    want = np.ascontiguousarray(a) @ np.ascontiguousarray(b)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    got = _mkl.product(a, b)
    assert got.dtype == dtype and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    for lc in ("C", "F", "rows", "cols"):
        out = _layout(np.ones(want.shape, dtype), lc)
        assert _mkl.product_into(a, b, out, accumulate=True)
        np.testing.assert_allclose(out, want + 1, rtol=tol, atol=tol * 10)
        assert _mkl.product_into(a, b, out)
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol * 10)


@needs_mkl
@pytest.mark.parametrize("case", ["int", "float16", "complex", "mixed", "strided", "aliased",
                                  "read-only", "small", "1-d", "big-endian"])
def test_what_mkl_declines_numpy_computes(rng, case):
    dtype = {"int": np.int64, "float16": np.float16, "complex": np.complex128,
             "big-endian": np.dtype(">f8")}.get(case, np.float64)
    a = (rng.standard_normal((40, 50)) * 4).astype(dtype)
    b = (rng.standard_normal((50, 30)) * 4).astype(dtype)
    out = np.zeros((40, 30), dtype=dtype)
    if case == "mixed":
        b = b.astype(np.float32)
    elif case == "strided":
        a = np.repeat(a, 2, axis=1)[:, ::2]
    elif case == "aliased":
        a, b = out, np.zeros((30, 30), dtype)  # the output itself as an operand
    elif case == "small":
        a, b, out = a[:4, :5], b[:5, :3], out[:4, :3]
    elif case == "1-d":
        b = b[:, 0]
    if case == "read-only":
        out.flags.writeable = False
    if case != "1-d":
        assert _mkl.product(a, b) is None or case in ("aliased", "read-only")
    assert not _mkl.product_into(a, b, out)
    got = matmul(npx, a, b)
    np.testing.assert_allclose(got, np.asarray(a) @ np.asarray(b), rtol=1e-3, atol=1e-3)


@needs_mkl
@pytest.mark.parametrize("shape", [(300, 200, 100), (40, 200, 600)])
def test_split_over_threads_equals_one_product(rng, monkeypatch, shape):
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    one = _mkl.product(a, b)
    calls = []
    call = _mkl._call
    monkeypatch.setattr(_mkl, "_call", lambda *args: calls.append(args[3].shape) or call(*args))
    monkeypatch.setattr(_threads, "blas_threads", lambda: 2)
    monkeypatch.setattr(_mkl, "SPLIT_WORK", 1)
    monkeypatch.setattr(_mkl, "_pooled", lambda *args: False)  # the Python threads' split
    two = _mkl.product(a, b)
    # Along the longer of the output's axes, one part per thread.
    assert len(calls) == 2 and sum(c[0 if m >= n else 1] for c in calls) == max(m, n)
    np.testing.assert_allclose(two, one, rtol=1e-6, atol=1e-6)
    out = np.ones((m, n), np.float32, order="F")
    assert _mkl.product_into(a, b, out, accumulate=True)
    np.testing.assert_allclose(out, one + 1, rtol=1e-5, atol=1e-5)


@needs_mkl
@pytest.mark.skipif(not native_in_use(), reason="the compiled loops are not built here")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_threads", [2, 3])
def test_split_on_the_compiled_pool_equals_one_product(rng, monkeypatch, dtype, n_threads):
    monkeypatch.setattr(_mkl, "SPLIT_WORK", 1)
    pooled, calls = _mkl._pooled, []
    monkeypatch.setattr(_mkl, "_pooled", lambda *args: calls.append(1) or pooled(*args))
    for (m, k, n), la, lb in itertools.product([(300, 20, 100), (40, 20, 601), (1, 64, 700)],
                                               ("C", "F", "rows"), ("C", "F")):
        a = _layout(rng.standard_normal((m, k)).astype(dtype), la)
        b = _layout(rng.standard_normal((k, n)).astype(dtype), lb)
        bias = rng.standard_normal(n).astype(dtype)
        monkeypatch.setattr(_threads, "blas_threads", lambda: 1)
        one = _mkl.product(a, b)
        with_bias = _mkl.product(a, b, bias)
        monkeypatch.setattr(_threads, "blas_threads", lambda: n_threads)
        calls.clear()
        tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12)
        np.testing.assert_allclose(_mkl.product(a, b), one, **tol)
        np.testing.assert_allclose(_mkl.product(a, b, bias), with_bias, **tol)
        np.testing.assert_allclose(with_bias, one + bias, **tol)
        out = np.ones((m, n), dtype)
        assert _mkl.product_into(a, b, out, accumulate=True)
        np.testing.assert_allclose(out, one + 1, **tol)
        assert len(calls) == 3


@needs_mkl
@pytest.mark.skipif(not native_in_use(), reason="the compiled loops are not built here")
def test_the_compiled_pool_serves_several_callers_and_forked_children(rng, monkeypatch):
    import os
    import threading

    monkeypatch.setattr(_mkl, "SPLIT_WORK", 1)
    monkeypatch.setattr(_threads, "blas_threads", lambda: 2)
    a = rng.standard_normal((200, 64)).astype(np.float32)
    b = rng.standard_normal((64, 300)).astype(np.float32)
    want = a.astype(np.float64) @ b
    bad = []

    def caller():
        for _ in range(50):
            if not np.allclose(_mkl.product(a, b), want, rtol=1e-4, atol=1e-4):
                bad.append(1)

    # A second caller while the pool is busy runs its parts itself: the same results.
    workers = [threading.Thread(target=caller) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not bad
    pid = os.fork()
    if pid == 0:  # the child has no workers of the parent's: it starts its own
        ok = np.allclose(_mkl.product(a, b), want, rtol=1e-4, atol=1e-4)
        os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0


@needs_mkl
def test_stacked_products_broadcast_and_accumulate(rng):
    a = rng.standard_normal((2, 32, 40))
    b = rng.standard_normal((3, 1, 40, 50))
    out = np.ones((3, 2, 32, 50))
    assert _mkl.stacked_product(a, b, out, accumulate=True)
    np.testing.assert_allclose(out, 1 + a @ b, rtol=1e-12, atol=1e-12)
    assert _mkl.stacked_product(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)
    # Column-major matrices of the output and a transposed operand.
    bt = np.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2)
    out_t = np.ones((3, 2, 50, 32)).swapaxes(-1, -2)
    assert _mkl.stacked_product(a, bt, out_t, accumulate=True)
    np.testing.assert_allclose(out_t, 1 + a @ b, rtol=1e-12, atol=1e-12)
    assert not _mkl.stacked_product(a, b, np.ones((2, 32, 50)))  # out's axes too few
    assert not _mkl.stacked_product(a, b[..., ::2, :], out[..., :])  # a strided operand


@needs_mkl
def test_products_through_the_kernels_and_convolutions_equal_the_pure_path(rng):
    a = rng.standard_normal((64, 300)).astype(np.float32)
    b = rng.standard_normal((300, 200)).astype(np.float32).T.copy().T  # column-major
    out = rng.standard_normal((64, 200)).astype(np.float32)
    with pure_standard():
        want, want_into = matmul(npx, a, b), matmul_into(npx, a, b, out.copy())
    np.testing.assert_allclose(matmul(npx, a, b), want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(matmul_into(npx, a, b, out), want_into, rtol=1e-5, atol=1e-4)
    x = rng.standard_normal((3, 16, 12, 12)).astype(np.float32)
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    args = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    y = conv_forward(npx, x, w, *args)
    gy = rng.standard_normal(y.shape).astype(np.float32)
    fast = (y, conv_input_grad(npx, gy, w, *args, (12, 12)),
            conv_weight_grad(npx, x, gy, *args, (3, 3)))
    with pure_standard():
        pure = (conv_forward(npx, x, w, *args), conv_input_grad(npx, gy, w, *args, (12, 12)),
                conv_weight_grad(npx, x, gy, *args, (3, 3)))
    for f, p in zip(fast, pure):
        np.testing.assert_allclose(f, p, rtol=1e-4, atol=1e-4 * np.abs(p).max())


def test_switched_off_numpy_runs_every_product(rng):
    a = rng.standard_normal((64, 64))
    was = set_mkl(False)
    try:
        assert not mkl_in_use()
        assert _mkl.product(a, a) is None
        assert not _mkl.product_into(a, a, np.empty((64, 64)))
        np.testing.assert_array_equal(matmul(npx, a, a), a @ a)
    finally:
        set_mkl(was)


def test_a_kernel_that_differs_is_declined(monkeypatch):
    state = _mkl._State()
    monkeypatch.setattr(_mkl, "_STATE", state)
    # A "gemm" that leaves C as it was: the self-test finds it and declines MKL.
    monkeypatch.setattr(_mkl, "library", lambda: object())
    monkeypatch.setattr(_mkl, "_bind", lambda lib: {d: (lambda *args: None)
                                                    for d in _mkl._DTYPES})
    assert not mkl_in_use()
    assert "differs from NumPy's" in _mkl.why_declined()
    assert _mkl.product(np.ones((64, 64)), np.ones((64, 64))) is None


def test_without_the_library_mkl_is_declined(monkeypatch):
    monkeypatch.setattr(_mkl, "_STATE", _mkl._State())
    monkeypatch.setattr(_mkl, "library", lambda: None)
    assert not mkl_in_use()
    assert "not installed" in _mkl.why_declined()


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(_mkl.VECTOR_FUNCTIONS))
def test_vector_functions_agree_with_numpy_on_threads_and_in_place(rng, monkeypatch, dtype,
                                                                   name):
    import math

    x = (rng.standard_normal(70001) * 5).astype(dtype)
    if name == "log":
        x = np.abs(x)
    with np.errstate(all="ignore"):
        want = (np.vectorize(math.erf)(x.astype(np.float64)).astype(dtype) if name == "erf"
                else getattr(np, name)(x))
    eps = np.finfo(dtype).eps
    one = _mkl.vector_math(name, x)
    np.testing.assert_allclose(one, want, rtol=4 * eps, atol=4 * eps)
    monkeypatch.setattr(_threads, "blas_threads", lambda: 2)
    monkeypatch.setattr(_mkl, "VECTOR_SPLIT", 1)
    y = x.copy()
    assert _mkl.vector_math(name, y, out=y) is y
    np.testing.assert_array_equal(y, one)
    assert _mkl.vector_math(name, x[::2]) is None  # not contiguous
    assert _mkl.vector_math(name, x.astype(np.float16)) is None


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_gelu_kernels_in_blocks_equal_the_pure_formulas(rng, monkeypatch, dtype, n_threads):
    from portagrad.xp import _activation

    monkeypatch.setattr(_threads, "blas_threads", lambda: n_threads)
    monkeypatch.setattr(_activation, "GELU_BLOCK", 1000)  # several blocks and a ragged one
    x = (rng.standard_normal((37, 201)) * 4).astype(dtype)
    gy = rng.standard_normal(x.shape).astype(dtype)
    fast = (_activation.gelu(npx, x), _activation.gelu_slope(npx, x),
            _activation.gelu_slope(npx, x, gy))
    assert _activation._gelu_numpy(npx, x) is not NotImplemented
    with pure_standard():
        pure = (_activation.gelu(npx, x), _activation.gelu_slope(npx, x),
                _activation.gelu_slope(npx, x, gy))
    tol = 4 * np.finfo(dtype).eps
    for f, p in zip(fast, pure):
        assert f.dtype == dtype and f.shape == x.shape
        np.testing.assert_allclose(f, p, rtol=tol * 4, atol=tol * 4)
    # Layouts and dtypes the blocks do not take go to the formulas.
    assert _activation._gelu_numpy(npx, np.asfortranarray(x)) is NotImplemented
    assert _activation._gelu_slope_numpy(npx, x, gy.astype(np.float16)) is NotImplemented
    # float32's compiled loop makes the NumPy blocks' operations in their order: the same
    # bits, infinities and NaN included.
    from portagrad.xp import native_in_use, set_native

    if dtype == np.float32 and native_in_use():
        x.reshape(-1)[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
        with np.errstate(invalid="ignore"):
            compiled = (_activation.gelu(npx, x), _activation.gelu_slope(npx, x, gy))
            was = set_native(False)
            try:
                blocks = (_activation.gelu(npx, x), _activation.gelu_slope(npx, x, gy))
            finally:
                set_native(was)
        for c, b in zip(compiled, blocks):
            np.testing.assert_array_equal(c, b)


@needs_mkl
def test_softmax_cross_entropy_gradient_from_the_kept_exponentials(rng):
    from portagrad.xp import set_native
    from portagrad.xp._loss import softmax_xent, softmax_xent_grad

    x = (rng.standard_normal((50, 300)) * 3).astype(np.float32)
    t = rng.integers(0, 300, (50, 1))
    w = np.float32(1.0)
    gl = rng.standard_normal(50).astype(np.float32)
    cache: list = []
    was = set_native(False)  # NumPy's passes on MKL (the compiled rows keep no exp)
    try:
        loss = softmax_xent(npx, x, 1, t, w, cache=cache)
        assert len(cache[0]) == 3  # max, sum and exp(x - max)
        g1 = softmax_xent_grad(npx, x, gl, 1, t, w, cache)
        g2 = softmax_xent_grad(npx, x, gl, 1, t, w, cache)  # the cache serves again
    finally:
        set_native(was)
    with pure_standard():
        want_loss = softmax_xent(npx, x, 1, t, w)
        want = softmax_xent_grad(npx, x, gl, 1, t, w, cache)  # the default reads it too
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g1, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(g1, g2)


@needs_mkl
@pytest.mark.parametrize("shape", [(), (1,), (3, 0), (5, 7)])
def test_erf_keeps_the_shape_of_its_input(shape):
    from portagrad.xp._special import erf

    x = np.full(shape, 0.5)
    got = erf(npx, x)
    assert got.shape == shape and got.dtype == x.dtype
    np.testing.assert_allclose(got, np.full(shape, 0.5204998778130465), rtol=1e-15)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_on_mkl_within_ulps_of_the_default_and_declines_past_its_range(dtype):
    from portagrad.xp import _activation

    x = np.linspace(-79, 120, 21000).astype(dtype).reshape(7, -1)
    fast = _activation.sigmoid(npx, x)
    assert _activation._sigmoid_numpy(npx, x) is not NotImplemented
    with pure_standard():
        pure = _activation.sigmoid(npx, x)
    assert fast.dtype == dtype and fast.shape == x.shape
    np.testing.assert_allclose(fast, pure, rtol=4 * np.finfo(dtype).eps, atol=0)
    for shape in ((), (1,), (2, 0)):  # a 0-d array stays an array
        y = _activation.sigmoid(npx, np.full(shape, 0.0, dtype=dtype))
        assert type(y) is np.ndarray and y.shape == shape and np.all(y == 0.5)
    # Subnormal results, infinities and NaN: the default's digits.
    for bad in (-1000.0, np.nan):
        y = np.array([bad, 0.0], dtype=dtype)
        assert _activation._sigmoid_numpy(npx, y) is NotImplemented
