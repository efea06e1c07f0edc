"""Layer normalization runs as two fused primitives (the normalization and its gradient):
they must give what the composite of portagrad ops gives -- outputs, gradients of every
input, gradients of gradients and third derivatives -- with and without affine parameters,
over one or two trailing axes, on numpy and array-api-strict."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_backward, check_double_backward
from portagrad.nn import Parameter
from portagrad.ops.nn.layer_norm_fused import layer_norm_fused
from portagrad.ops.nn.normalization import _normalize_over

EPS = 1e-3


def _composite(x, w, b, nd):
    y = _normalize_over(x, tuple(range(x.ndim - nd, x.ndim)), EPS)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def _inputs(rng, shape, nd, affine):
    x = rng.standard_normal(shape) * 3.0 + 1.0
    ns = shape[len(shape) - nd:]
    w = rng.uniform(0.5, 1.5, ns) if affine in ("wb", "w") else None
    b = rng.uniform(-1, 1, ns) if affine == "wb" else None
    return x, w, b


def _run(f, x, w, b, gy, v, u):
    ps = [Parameter(a.copy()) if a is not None else None for a in (x, w, b)]
    live = [p for p in ps if p is not None]
    y = f(*ps)
    gs = pg.grad(y, live, grad_outputs=gy, create_graph=True)
    dot = sum(ops.sum(g * vi) for g, vi in zip(gs, v))
    hv = pg.grad(dot, live, allow_unused=True, create_graph=True)
    hv = [ops.zeros_like(p) if h is None else h for h, p in zip(hv, live)]
    dot3 = sum(ops.sum(h * ui) for h, ui in zip(hv, u))
    third = pg.grad(dot3, live, allow_unused=True) if dot3.requires_grad else [None] * 3
    ps2 = [Parameter(a.copy()) if a is not None else None for a in (x, w, b)]
    y2 = f(*ps2)
    y2.backward(gy)
    raw = [p.grad for p in ps2 if p is not None]
    third = [np.zeros_like(p.array) if t is None else t.array for t, p in zip(third, live)]
    return y.array, [g.array for g in gs], [h.array for h in hv], third, raw


@pytest.mark.parametrize("shape,nd", [((5, 4), 1), ((2, 3, 4), 1), ((3, 2, 3), 2), ((4,), 1)])
@pytest.mark.parametrize("affine", ["wb", "w", "none"])
def test_fused_matches_composite_to_third_order(shape, nd, affine):
    rng = np.random.default_rng(0)
    x, w, b = _inputs(rng, shape, nd, affine)
    gy = rng.standard_normal(shape)
    v = [rng.standard_normal(a.shape) for a in (x, w, b) if a is not None]
    u = [rng.standard_normal(a.shape) for a in (x, w, b) if a is not None]
    fused = _run(lambda x, w, b: layer_norm_fused(x, w, b, nd, EPS), x, w, b, gy, v, u)
    comp = _run(lambda x, w, b: _composite(x, w, b, nd), x, w, b, gy, v, u)
    np.testing.assert_allclose(fused[0], comp[0], rtol=1e-10, atol=1e-12)
    for i, tol in ((1, 1e-9), (2, 1e-8), (3, 1e-7), (4, 1e-9)):
        for got, want in zip(fused[i], comp[1 if i == 4 else i]):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_layer_norm_takes_the_fused_primitive():
    x = Parameter(np.ones((2, 3)))
    y = ops.layer_norm(x, 3, np.ones(3), np.zeros(3))
    assert y.creator.prim.name == "ln"
    # float32 parameters on a float64 input: the composite, which promotes.
    y = ops.layer_norm(np.ones((2, 3), np.float32), 3, np.ones(3), None)
    assert y.dtype == np.float64


def test_fused_numerical_second_order():
    rng = np.random.default_rng(1)
    x, w, b = _inputs(rng, (3, 4), 1, "wb")

    def f(x, w, b):
        return ops.layer_norm(x, 4, w, b, eps=EPS)

    check_backward(f, [x, w, b], rtol=1e-5, atol=1e-6)
    check_double_backward(f, [x, w, b], rtol=1e-4, atol=1e-5)


def test_fused_on_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(2)
    x, w, b = _inputs(rng, (4, 3, 5), 1, "wb")
    gy = rng.standard_normal(x.shape)
    outs = []
    for conv in (np.asarray, xps.asarray):
        ps = [Parameter(conv(a.copy())) for a in (x, w, b)]
        y = ops.layer_norm(ps[0], 5, ps[1], ps[2], eps=EPS)
        y.backward(conv(gy))
        outs.append([np.asarray(pg.xp.to_numpy(a)) for a in
                     (y.array, ps[0].grad, ps[1].grad, ps[2].grad)])
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_rows_near_the_largest_float_are_standardized():
    x = Parameter(np.array([[1e300, -1e300, 3e300], [1.0, 2.0, 4.0]]))
    y = ops.layer_norm(x, eps=0.0)
    r = x.array / np.array([[1e300], [1.0]])
    want = (r - r.mean(1, keepdims=True)) / r.std(1, keepdims=True)
    np.testing.assert_allclose(y.array, want, rtol=1e-12)
    y.backward(np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    assert np.isfinite(x.grad).all()


def test_float32_matches_float64():
    rng = np.random.default_rng(3)
    x, w, b = _inputs(rng, (6, 8), 1, "wb")
    gy = rng.standard_normal(x.shape)
    res = []
    for dt in (np.float64, np.float32):
        ps = [Parameter(a.astype(dt)) for a in (x, w, b)]
        y = ops.layer_norm(ps[0], 8, ps[1], ps[2])
        y.backward(gy.astype(dt))
        assert y.dtype == dt and ps[0].grad.dtype == dt
        res.append([y.array, ps[0].grad, ps[1].grad, ps[2].grad])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
