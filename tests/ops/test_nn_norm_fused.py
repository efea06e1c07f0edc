"""Training-mode batch normalization runs as one fused primitive: it must give what the
composite of portagrad ops gives -- outputs, gradients of every input, and gradients of
gradients -- with and without affine parameters, on numpy and array-api-strict."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_backward, check_double_backward
from portagrad.nn import Parameter

EPS = 1e-3


def _composite(x, w, b):
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    mu = ops.mean(x, axis=axes, keepdims=True)
    d = x - mu
    y = d / ops.sqrt(ops.mean(d * d, axis=axes, keepdims=True) + EPS)
    if w is not None:
        y = y * ops.reshape(w, bshape)
    if b is not None:
        y = y + ops.reshape(b, bshape)
    return y


def _inputs(rng, shape, affine):
    x = rng.standard_normal(shape) * 3.0 + 1.0
    c = shape[1]
    w = rng.uniform(0.5, 1.5, c) if affine in ("wb", "w") else None
    b = rng.uniform(-1, 1, c) if affine == "wb" else None
    return x, w, b


@pytest.mark.parametrize("shape", [(5, 3), (4, 2, 3, 5), (3, 2, 4)])
@pytest.mark.parametrize("affine", ["wb", "w", "none"])
def test_fused_matches_composite_to_second_order(shape, affine):
    rng = np.random.default_rng(0)
    x, w, b = _inputs(rng, shape, affine)
    gy = rng.standard_normal(shape)
    v = [rng.standard_normal(a.shape) for a in (x, w, b) if a is not None]

    def run(f):
        ps = [Parameter(a.copy()) if a is not None else None for a in (x, w, b)]
        live = [p for p in ps if p is not None]
        y = f(*ps)
        gs = pg.grad(y, live, grad_outputs=gy, create_graph=True)
        dot = sum(ops.sum(g * vi) for g, vi in zip(gs, v))
        # b enters linearly: its row of the Hessian is zero (no graph reaches it).
        hv = pg.grad(dot, live, allow_unused=True)
        # First order again without create_graph: the raw-array backward.
        ps2 = [Parameter(a.copy()) if a is not None else None for a in (x, w, b)]
        y2 = f(*ps2)
        y2.backward(gy)
        raw = [p.grad for p in ps2 if p is not None]
        hv = [np.zeros_like(p.array) if h is None else h.array for h, p in zip(hv, live)]
        return y.array, [g.array for g in gs], hv, raw

    fused = run(lambda x, w, b: ops.batch_norm(x, w, b, train=True, eps=EPS))
    comp = run(_composite)
    np.testing.assert_allclose(fused[0], comp[0], rtol=1e-10, atol=1e-12)
    for got, want in zip(fused[1], comp[1]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    for got, want in zip(fused[2], comp[2]):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    for got, want in zip(fused[3], comp[1]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def test_fused_numerical_second_order():
    rng = np.random.default_rng(1)
    x, w, b = _inputs(rng, (4, 2, 3), "wb")

    def f(x, w, b):
        return ops.batch_norm(x, w, b, train=True, eps=EPS)

    check_backward(f, [x, w, b], rtol=1e-5, atol=1e-6)
    check_double_backward(f, [x, w, b], rtol=1e-4, atol=1e-5)


def test_fused_on_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(2)
    x, w, b = _inputs(rng, (4, 3, 5), "wb")
    gy = rng.standard_normal(x.shape)
    outs = []
    for conv in (np.asarray, xps.asarray):
        ps = [Parameter(conv(a.copy())) for a in (x, w, b)]
        y = ops.batch_norm(*ps, train=True, eps=EPS)
        y.backward(conv(gy))
        outs.append([np.asarray(pg.xp.to_numpy(a)) for a in
                     (y.array, ps[0].grad, ps[1].grad, ps[2].grad)])
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_mixed_dtype_parameters_promote_as_the_composite():
    # float64 weight on a float32 input: not the fused path; NumPy's promotion applies.
    x = np.random.default_rng(3).standard_normal((4, 2)).astype(np.float32)
    y = ops.batch_norm(x, np.ones(2), np.zeros(2), train=True)
    assert y.dtype == np.float64
    y32 = ops.batch_norm(x, np.ones(2, np.float32), np.zeros(2, np.float32), train=True)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.array, y.array, rtol=1e-5, atol=1e-6)


def test_running_statistics_unchanged_by_fusion():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 3, 2)) * 2.0 + 5.0
    st = ops.BatchNormState(momentum=0.5)
    ops.batch_norm(x, np.ones(3), np.zeros(3), state=st, train=True)
    m = x.mean(axis=(0, 2))
    v = x.var(axis=(0, 2), ddof=1)
    np.testing.assert_allclose(st.mean, 0.5 * m, rtol=1e-12)
    np.testing.assert_allclose(st.var, 0.5 + 0.5 * v, rtol=1e-12)


@pytest.mark.parametrize("shape", [(0, 3), (2, 3, 0)])
def test_empty_batches_take_the_composite(shape):
    x = np.ones(shape, np.float32)
    y = ops.batch_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32), train=True)
    assert y.shape == shape and y.dtype == np.float32
