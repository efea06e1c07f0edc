"""NumPy's convolution fast path split over threads, and OpenBLAS's thread count around it."""

from __future__ import annotations

import itertools
import os
import threading

import array_api_compat.numpy as xp
import numpy as np
import pytest

from portagrad.xp import _conv_fast, _openblas, _threads, pure_standard
from portagrad.xp._conv import conv_forward, conv_input_grad, conv_weight_grad


def _kernels(x, w, b, gy, args):
    return (conv_forward(xp, x, w, *args, bias=b),
            conv_input_grad(xp, gy, w, *args, tuple(x.shape[2:])),
            conv_weight_grad(xp, x, gy, *args, tuple(w.shape[2:])))


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parts_on_threads_equal_the_pure_standard_path(threads, dtype, monkeypatch):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    parts = []
    split = _conv_fast._parts
    monkeypatch.setattr(_conv_fast, "_parts",
                        lambda m, n: parts.append(len(split(m, n))) or split(m, n))
    rng = np.random.default_rng(0)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for nd, k, s, d, g, n in itertools.product((1, 2), (1, 3), (1, 2), (1, 2), (1, 2),
                                               (1, 2, 5)):
        x = rng.standard_normal((n, 4) + (7,) * nd).astype(dtype)
        w = rng.standard_normal((6, 4 // g) + (k,) * nd).astype(dtype)
        b = rng.standard_normal(6).astype(dtype)
        args = ((s,) * nd, ((1, s),) * nd, (d,) * nd, g)
        y = conv_forward(xp, x, w, *args)
        gy = rng.standard_normal(y.shape).astype(dtype)
        fast = _kernels(x, w, b, gy, args)
        with pure_standard():
            pure = _kernels(x, w, b, gy, args)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == dtype and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=tol, atol=tol * np.abs(p).max())
    # Batches of 5 ran in as many parts as threads; a sample is never split.
    assert max(parts) == threads and min(parts) == 1


def test_parts_cover_the_batch_in_order():
    assert _conv_fast._parts(np, 0) == [slice(0, 0)]
    for n in (1, 2, 7, 32):
        parts = _conv_fast._parts(np, n)
        assert parts[0].start == 0 and parts[-1].stop == n
        assert all(a.stop == b.start for a, b in zip(parts, parts[1:]))
        assert all(p.stop > p.start for p in parts)


def test_an_error_in_a_part_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(_threads, "blas_threads", lambda: 2)

    def fail(part):
        if part.start:
            raise ValueError("part failed")
        return part

    with pytest.raises(ValueError, match="part failed"):
        _conv_fast._in_parts([slice(0, 1), slice(1, 2)], fail)
    assert _conv_fast._in_parts([slice(0, 1), slice(1, 2)], lambda p: p.stop) == [1, 2]


@pytest.fixture
def two_blas_threads(monkeypatch):
    # A count of our own: not the process's, which MKL's first use holds at one thread.
    monkeypatch.setattr(_openblas, "_THREADS", _openblas._ThreadCount())
    kernels = _openblas._kernels()
    if kernels is None:
        pytest.fail(f"NumPy's OpenBLAS binding declined: {_openblas.why_declined()}")
    get, set_ = kernels["threads"]["get"], kernels["threads"]["set"]
    before = get()
    set_(2)
    yield get
    set_(before)


def test_one_blas_thread_restores_the_count_after_the_last_block(two_blas_threads):
    get = two_blas_threads
    assert _openblas.blas_threads() == 2
    with _openblas.one_blas_thread():
        assert get() == 1
        # Inside, the count the caller asked for is still what blas_threads reports.
        assert _openblas.blas_threads() == 2
        with _openblas.one_blas_thread():
            assert get() == 1
        assert get() == 1
    assert get() == 2


def test_held_at_one_thread_a_count_set_later_is_taken(two_blas_threads):
    get = two_blas_threads
    _openblas.hold_one_thread()
    assert get() == 1 and _openblas.blas_threads() == 2
    kernels = _openblas._kernels()
    kernels["threads"]["set"](3)  # as threadpoolctl would
    assert _openblas.blas_threads() == 3 and get() == 1
    with _openblas.one_blas_thread():
        assert _openblas.blas_threads() == 3
    assert get() == 1  # the hold outlives every block
    _openblas.hold_one_thread()  # once is enough
    assert _openblas._THREADS.depth == 1


def test_one_blas_thread_in_overlapping_threads(two_blas_threads):
    get = two_blas_threads
    entered, release = threading.Event(), threading.Event()

    def other():
        with _openblas.one_blas_thread():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=other)
    with _openblas.one_blas_thread():
        t.start()
        assert entered.wait(10)
    # The other thread's block is still open: one thread until it ends.
    assert get() == 1
    release.set()
    t.join(10)
    assert get() == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stride_one_input_gradient_as_the_flipped_forward(dtype, monkeypatch):
    calls = []
    forward = _conv_fast._conv_forward_fast
    monkeypatch.setattr(_conv_fast, "_conv_forward_fast",
                        lambda *a, **k: calls.append(1) or forward(*a, **k))
    rng = np.random.default_rng(3)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    cases = 0
    for nd, k, d, g, (c, o) in itertools.product((1, 2, 3), (1, 2, 3), (1, 2), (1, 2),
                                                 ((6, 4), (4, 4), (4, 6))):
        if nd == 3 and (k == 3 or d == 2):
            continue
        reach = d * (k - 1)
        # Pads within the kernel's reach (low and high apart) and one beyond it.
        for pad in ((0, reach), (reach, 0), (1, 1)):
            x_size = 6
            w = rng.standard_normal((o, c // g) + (k,) * nd).astype(dtype)
            args = ((1,) * nd, (pad,) * nd, (d,) * nd, g)
            out = x_size + pad[0] + pad[1] - reach
            gy = rng.standard_normal((3, o) + (out,) * nd).astype(dtype)
            before = len(calls)
            gx = conv_input_grad(xp, gy, w, *args, (x_size,) * nd)
            flipped = len(calls) > before
            assert flipped == (c >= o and max(pad) <= reach)
            cases += flipped
            with pure_standard():
                want = conv_input_grad(xp, gy, w, *args, (x_size,) * nd)
            assert gx.dtype == want.dtype == dtype and gx.shape == want.shape
            np.testing.assert_allclose(gx, want, rtol=tol, atol=tol * np.abs(want).max())
    assert cases > 20


def _parts_in_child(queue):
    queue.put(_conv_fast._in_parts([slice(0, 1), slice(1, 3)], lambda p: p.stop - p.start))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_gets_a_pool_of_its_own():
    import multiprocessing

    # The parent's pool exists (and has threads) before the fork.
    assert _conv_fast._in_parts([slice(0, 1), slice(1, 2)], lambda p: p.stop) == [1, 2]
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_parts_in_child, args=(queue,))
    child.start()
    child.join(30)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0
    assert queue.get(timeout=5) == [1, 2]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_implicit_products_equal_the_pure_standard_path(threads, dtype, monkeypatch):
    from portagrad.xp import mkl_in_use

    if not mkl_in_use():
        pytest.skip("the implicit products run on MKL, which is not in use here")
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    calls = []
    for name in ("forward", "weight_grad"):
        original = getattr(_conv_fast._Implicit, name)
        monkeypatch.setattr(_conv_fast._Implicit, name,
                            lambda self, *a, _o=original, _n=name: calls.append(_n) or _o(self, *a))
    rng = np.random.default_rng(0)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    cases = [  # (spatial, kernel, pad, dilation, sliced input)
        ((12, 12), (3, 3), ((1, 1), (1, 1)), (1, 1), False),
        ((9, 10), (3, 2), ((0, 1), (2, 0)), (1, 1), True),
        ((11, 11), (3, 3), ((0, 0), (0, 0)), (2, 1), False),
        ((13,), (5,), ((2, 2),), (1,), False),
        ((16, 16), (5, 5), ((2, 2), (2, 2)), (1, 1), False),
    ]
    # Many input channels: every kernel implicit; few input and many output channels:
    # the input gradient alone (the flipped forward over gy's channels).
    for (spatial, ksize, pad, dilation, sliced), (c, o) in itertools.product(
            cases, ((33, 5), (8, 40))):
        n = 3
        x = rng.standard_normal((n, 2 * c if sliced else c) + spatial).astype(dtype)
        if sliced:
            x = x[:, ::2]  # samples that are not contiguous
        w = rng.standard_normal((o, c) + ksize).astype(dtype)
        b = rng.standard_normal(o).astype(dtype)
        args = ((1,) * len(spatial), pad, dilation, 1)
        before = len(calls)
        y = conv_forward(xp, x, w, *args, bias=b)
        gy = rng.standard_normal(y.shape).astype(dtype)
        fast = _kernels(x, w, b, gy, args)
        within = all(lo <= d * (k - 1) and hi <= d * (k - 1)
                     for (lo, hi), d, k in zip(pad, dilation, ksize))
        assert len(calls) > before or (c < o and not within)  # col2im past the reach
        with pure_standard():
            pure = _kernels(x, w, b, gy, args)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == dtype and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=tol, atol=tol * np.abs(p).max())
    assert {"forward", "weight_grad"} <= set(calls)


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_implicit_loops_equal_the_python_ones(threads, monkeypatch):
    from portagrad.xp import mkl_in_use, native_in_use, set_native

    if not (mkl_in_use() and native_in_use()):
        pytest.skip("the compiled loops call MKL; one of the two is missing here")
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    calls = []
    real = _conv_fast.native

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(real(), name)

    monkeypatch.setattr(_conv_fast, "native", lambda: None if real() is None else Spy())
    rng = np.random.default_rng(1)
    cases = [  # (spatial, kernel, pad, bias): each one's output has the flat layout
        ((10, 9), (3, 3), ((1, 1), (1, 1)), True),
        ((9, 10), (3, 2), ((0, 1), (2, 0)), False),
        ((16, 16), (3, 3), ((0, 0), (0, 0)), True),
        ((13,), (5,), ((2, 2),), True),
        ((10, 9), (3, 1), ((1, 1), (0, 0)), False),  # a last kernel axis of 1: not folded
    ]
    for spatial, ksize, pad, with_bias in cases:
        x = rng.standard_normal((3, 33) + spatial).astype(np.float32)
        w = rng.standard_normal((7, 33) + ksize).astype(np.float32)
        b = rng.standard_normal(7).astype(np.float32) if with_bias else None
        args = ((1,) * len(spatial), pad, (1,) * len(spatial), 1)
        y = conv_forward(xp, x, w, *args, bias=b)
        gy = rng.standard_normal(y.shape).astype(np.float32)
        was = set_native(False)
        try:
            python = _kernels(x, w, b, gy, args)
        finally:
            set_native(was)
        before = len(calls)
        compiled = _kernels(x, w, b, gy, args)
        assert {"conv_implicit_forward", "conv_implicit_weight_grad"} <= set(calls[before:])
        # The compiled loops fold the last kernel axis into their products (the forward
        # and the flipped input gradient where there are few channels): other sums.
        for c, p in zip(compiled, python):
            np.testing.assert_allclose(c, p, rtol=1e-5, atol=1e-5 * np.abs(p).max())
