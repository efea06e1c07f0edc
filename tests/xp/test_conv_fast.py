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


def _spy_on_native(monkeypatch) -> list:
    """The names of the compiled loops the convolutions call from now on, in order."""
    calls = []
    real = _conv_fast.native

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(real(), name)

    monkeypatch.setattr(_conv_fast, "native", lambda: None if real() is None else Spy())
    return calls


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
    monkeypatch.setattr(_conv_fast, "WINOGRAD_MIN_CHANNELS", 1 << 30)  # the products here
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
    monkeypatch.setattr(_conv_fast, "WINOGRAD_MIN_CHANNELS", 1 << 30)
    calls = _spy_on_native(monkeypatch)
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


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tiles", [256, 40])
def test_winograd_equals_the_pure_standard_path(threads, tiles, monkeypatch):
    from portagrad.xp import mkl_in_use, native_in_use

    if not (mkl_in_use() and native_in_use()):
        pytest.skip("the Winograd loops call MKL; one of the two is missing here")
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    # 40 tiles a block: several samples to a block where outputs are small, and a last
    # block of fewer
    monkeypatch.setattr(_conv_fast, "WINOGRAD_TILES", tiles)
    calls = _spy_on_native(monkeypatch)
    rng = np.random.default_rng(2)
    cases = [  # (batch, channels in and out, spatial, pad, bias)
        (3, 8, 8, (16, 16), ((1, 1), (1, 1)), True),
        (5, 9, 12, (9, 13), ((0, 2), (1, 0)), False),  # odd outputs: 9 x 12
        (2, 33, 8, (10, 10), ((0, 0), (0, 0)), True),  # no padding: 8 x 8
        (3, 8, 17, (8, 11), ((2, 2), (2, 1)), False),  # more padding than the reach
    ]
    for n, c, o, spatial, pad, with_bias in cases:
        x = rng.standard_normal((n, c) + spatial).astype(np.float32)
        w = rng.standard_normal((o, c, 3, 3)).astype(np.float32)
        b = rng.standard_normal(o).astype(np.float32) if with_bias else None
        args = ((1, 1), pad, (1, 1), 1)
        y = conv_forward(xp, x, w, *args, bias=b)
        gy = rng.standard_normal(y.shape).astype(np.float32)
        before = len(calls)
        fast = _kernels(x, w, b, gy, args)
        ran = calls[before:]
        assert {"conv_winograd_forward", "conv_winograd_weight_grad"} <= set(ran)
        if all(lo <= 2 and hi <= 2 for lo, hi in pad):  # the input gradient's forward too
            assert ran.count("conv_winograd_forward") == 2
        with pure_standard():
            pure = _kernels(x, w, b, gy, args)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == np.float32 and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=2e-5, atol=2e-6 * np.abs(p).max())


def test_winograd_leaves_what_it_does_not_take_to_the_other_paths(monkeypatch):
    from portagrad.xp import mkl_in_use, native_in_use

    if not (mkl_in_use() and native_in_use()):
        pytest.skip("the Winograd loops call MKL; one of the two is missing here")
    calls = _spy_on_native(monkeypatch)
    rng = np.random.default_rng(3)
    cases = [  # (x, w, stride, pad, dilation): none is a Winograd case
        (rng.standard_normal((2, 8, 12, 12)), rng.standard_normal((8, 8, 3, 3)), 1, 1, 1),
        (rng.standard_normal((2, 16, 24, 12)).astype(np.float32)[:, ::2],
         rng.standard_normal((8, 8, 3, 3)), 1, 1, 1),  # samples not contiguous
        (rng.standard_normal((2, 4, 12, 12)), rng.standard_normal((8, 4, 3, 3)), 1, 1, 1),
        (rng.standard_normal((2, 8, 12, 12)), rng.standard_normal((8, 8, 3, 3)), 2, 1, 1),
        (rng.standard_normal((2, 8, 12, 12)), rng.standard_normal((8, 8, 3, 3)), 1, 2, 2),
        (rng.standard_normal((2, 8, 6, 6)), rng.standard_normal((8, 8, 3, 3)), 1, 1, 1),
        (rng.standard_normal((2, 8, 12, 12)), rng.standard_normal((8, 8, 5, 5)), 1, 2, 1),
    ]
    for i, (x, w, s, p, d) in enumerate(cases):
        x = x.astype(np.float32, copy=False) if i else x  # the first in float64
        w = w.astype(x.dtype)
        args = ((s, s), ((p, p), (p, p)), (d, d), 1)
        y = conv_forward(xp, x, w, *args)
        gy = rng.standard_normal(y.shape).astype(x.dtype)
        conv_weight_grad(xp, x, gy, *args, tuple(w.shape[2:]))
        assert not [name for name in calls if "winograd" in name], i
        with pure_standard():
            ref = conv_forward(xp, x, w, *args)
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("check", ["fastpath", "order1", "order2", "order3"])
def test_conformance_reaches_winograd(check, monkeypatch):
    """The conformance record of conv2d draws Winograd's cases too; on one of them its
    checks run through the compiled loops (float32 for the fastpath check)."""
    from conformance import reproduce
    from conformance.records.nn import _winograd_sample
    from portagrad.xp import mkl_in_use, native_in_use

    if not (mkl_in_use() and native_in_use()):
        pytest.skip("the Winograd loops call MKL; one of the two is missing here")
    calls = _spy_on_native(monkeypatch)
    args = _winograd_sample(np.random.default_rng(4))
    assert reproduce("conv2d", check, "numpy", args) == "pass"
    if check == "fastpath":
        assert {"conv_winograd_forward", "conv_winograd_weight_grad"} <= set(calls)


@pytest.mark.parametrize("where", ["x", "w", "gy"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_winograd_declines_what_is_not_finite(where, value):
    """Winograd's transforms would spread an infinity or NaN over its tile (inf - inf, a
    NaN times a zero coefficient); the direct sums keep it to the outputs it reaches."""
    rng = np.random.default_rng(5)
    arrays = {"x": rng.standard_normal((2, 8, 12, 12)).astype(np.float32),
              "w": rng.standard_normal((8, 8, 3, 3)).astype(np.float32),
              "gy": rng.standard_normal((2, 8, 12, 12)).astype(np.float32)}
    arrays[where][(0, 1, 5, 6) if where != "w" else (2, 3, 1, 1)] = value
    x, w, gy = arrays["x"], arrays["w"], arrays["gy"]
    args = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    with np.errstate(invalid="ignore"):
        fast = _kernels(x, w, None, gy, args)
        with pure_standard():
            pure = _kernels(x, w, None, gy, args)
    for f, p in zip(fast, pure):
        np.testing.assert_array_equal(np.isnan(f), np.isnan(p))
        np.testing.assert_array_equal(np.isinf(f), np.isinf(p))
        keep = np.isfinite(p)
        np.testing.assert_allclose(f[keep], p[keep], rtol=2e-5, atol=2e-5 * np.abs(p[keep]).max())


def test_winograd_declines_where_its_transforms_overflow():
    """Inputs near float32's largest: an input tile's transform (sums of up to four)
    overflows, the direct sums of the products by small weights do not."""
    rng = np.random.default_rng(6)
    x = (np.sign(rng.standard_normal((2, 8, 12, 12))) * 1.5e38).astype(np.float32)
    w = (rng.standard_normal((8, 8, 3, 3)) * 1e-4).astype(np.float32)
    gy = (np.sign(rng.standard_normal((2, 8, 12, 12))) * 1.5e38).astype(np.float32)
    args = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    with np.errstate(over="ignore", invalid="ignore"):
        fast = _kernels(x, w, None, gy, args)
        with pure_standard():
            pure = _kernels(x, w, None, gy, args)
    for f, p in zip(fast[:2], pure[:2]):  # the weight gradient overflows either way
        assert np.isfinite(p).all()
        np.testing.assert_allclose(f, p, rtol=1e-4, atol=1e-4 * np.abs(p).max())
