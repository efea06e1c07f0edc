"""The binding to NumPy's bundled OpenBLAS: its self-test, its switch, and the plain path
that runs wherever it is off or declined."""

from __future__ import annotations

import os
import subprocess
import sys

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _openblas, bundled_blas_in_use, pure_standard, set_bundled_blas, set_mkl
from portagrad.xp._matmul import matmul, matmul_into
from portagrad.xp._optim import adam_update, momentum_update, sgd_update

HAS_LIBRARY = _openblas.library() is not None
needs_library = pytest.mark.skipif(not HAS_LIBRARY, reason="NumPy bundles no scipy-openblas")
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


@pytest.fixture(autouse=True)
def openblas_products():
    """The OpenBLAS binding's own paths: MKL, where it is installed, off (test_mkl.py)."""
    was = set_mkl(False)
    yield
    set_mkl(was)


@pytest.fixture
def fresh(monkeypatch):
    """A binding that has not run its self-test yet (restored after the test)."""
    state = _openblas._Binding()
    state.enabled = True
    monkeypatch.setattr(_openblas, "_STATE", state)
    return state


def _workload(rng):
    """Results of every caller of the binding: a product in transposed form (as on the
    SkylakeX kernels), products added into gradients (both layouts of the sum), and the
    three optimizer updates, all on fresh copies of the same draws."""
    x = rng.standard_normal((64, 600)).astype(np.float32)
    w = rng.standard_normal((1024, 600)).astype(np.float32)
    out = []
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((5, 7)).astype(dtype)
        b = rng.standard_normal((7, 3)).astype(dtype)
        for order in "CF":
            c = np.asarray(rng.standard_normal((5, 3)), dtype=dtype, order=order)
            out.append(matmul_into(npx, a, b, c.copy(order=order)))
        p, g, v = (rng.standard_normal((9, 4)).astype(dtype) for _ in range(3))
        out.append(sgd_update(npx, p.copy(), g, 0.1))
        out.extend(momentum_update(npx, p.copy(), g, v.copy(), 0.05, 0.9))
        out.extend(adam_update(npx, p.copy(), g, v.copy(), v * v, None, 0.9, 0.99, 1e-3,
                               0.01, 0.995)[:3])
    out.append(matmul(npx, x, w.mT))
    return out


def _plain(rng):
    """The same results with the binding switched off: NumPy's plain path."""
    was = set_bundled_blas(False)
    try:
        return _workload(rng)
    finally:
        set_bundled_blas(was)


@needs_library
def test_the_self_test_passes_with_numpys_own_library(fresh):
    assert bundled_blas_in_use()
    assert _openblas.why_declined() == ""
    assert _openblas.corename()
    for dtype in (F32, F64):
        assert callable(_openblas.gemm(dtype)) and callable(_openblas.axpy(dtype))
    assert _openblas.gemm(np.dtype(np.float16)) is None
    assert _openblas.axpy(np.dtype(">f8")) is None


def _broken(kind):
    """A ``_bind`` whose ``kind`` kernel is wrong, raises, or is missing; and the calls
    the broken kernel received."""
    real = _openblas._bind
    calls = []

    def bind(lib):
        kernels, core = real(lib)
        if kind == "missing symbol":
            raise AttributeError("undefined symbol: scipy_cblas_saxpy64_")
        stem, dtype = {"sgemm": ("gemm", F32), "dgemm": ("gemm", F64),
                       "somatcopy": ("omatcopy", F32), "domatcopy": ("omatcopy", F64),
                       "saxpy": ("axpy", F32), "daxpy": ("axpy", F64),
                       "raises": ("gemm", F64)}[kind]
        good = kernels[stem][dtype]

        def bad(*args):
            calls.append(args)
            if kind == "raises":
                raise OSError("exception: access violation")
            args = list(args)
            # gemm and omatcopy: alpha (scalar) doubled; axpy: alpha negated
            i = 1 if stem == "axpy" else (6 if stem == "gemm" else 4)
            args[i] = -args[i] if stem == "axpy" else 2 * args[i]
            good(*args)

        kernels[stem][dtype] = bad
        return kernels, core

    return bind, calls


@needs_library
@pytest.mark.parametrize("kind", ["sgemm", "dgemm", "somatcopy", "domatcopy", "saxpy",
                                  "daxpy", "raises", "missing symbol"])
def test_a_broken_kernel_declines_the_binding_and_the_plain_path_runs(fresh, monkeypatch,
                                                                      kind):
    bind, calls = _broken(kind)
    monkeypatch.setattr(_openblas, "_bind", bind)
    assert not bundled_blas_in_use()
    assert _openblas.why_declined()
    assert _openblas.corename() == ""
    assert _openblas.gemm(F32) is None and _openblas.axpy(F64) is None
    tested = len(calls)
    got = _workload(np.random.default_rng(1))
    assert len(calls) == tested  # never called again after the self-test
    plain = _plain(np.random.default_rng(1))
    for a, b in zip(got, plain):
        assert a.dtype == b.dtype and a.flags.c_contiguous == b.flags.c_contiguous
        np.testing.assert_array_equal(a, b)
    # That plain path is the kernels' pure-standard defaults: NumPy's own arithmetic.
    with pure_standard():
        reference = _workload(np.random.default_rng(1))
    for a, b in zip(got, reference):
        np.testing.assert_array_equal(a, b)
    # Switching back on does not bring a declined binding back.
    set_bundled_blas(True)
    assert not bundled_blas_in_use()


def _product(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 600)).astype(np.float32)
    w = rng.standard_normal((1024, 600)).astype(np.float32)
    return x, w.mT


@needs_library
def test_with_the_binding_on_the_fast_paths_agree_with_the_plain_path(fresh):
    got = _workload(np.random.default_rng(2))
    plain = _plain(np.random.default_rng(2))
    for a, b in zip(got, plain):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-4 if a.dtype == np.float32 else 1e-12,
                                   atol=1e-4 if a.dtype == np.float32 else 1e-12)


def test_switched_off_nothing_is_bound_and_products_run_as_written(fresh):
    assert set_bundled_blas(False) is True
    assert not bundled_blas_in_use()
    assert not fresh.checked  # off: the self-test never ran
    assert _openblas.corename() == "" and _openblas.gemm(F32) is None
    x, wt = _product(3)
    np.testing.assert_array_equal(matmul(npx, x, wt), x @ wt)
    a = _openblas.transpose_copy(x)
    assert a.flags.c_contiguous
    np.testing.assert_array_equal(a, x.T)


def test_the_environment_variable_starts_the_process_with_the_binding_off():
    code = ("from portagrad.xp import bundled_blas_in_use, _openblas; "
            "print(bundled_blas_in_use(), _openblas._STATE.checked)")
    env = dict(os.environ, PORTAGRAD_BUNDLED_BLAS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "False"]


@needs_library
def test_the_benchmark_runs(capsys):
    from benchmarks import bench_openblas

    assert bench_openblas.main(["--rounds", "1", "--warmup", "0", "--workloads",
                                "updates"]) == 0
    out = capsys.readouterr().out
    assert "SGD update, MLP parameters, cpu" in out and "load average" in out
    assert bundled_blas_in_use()
