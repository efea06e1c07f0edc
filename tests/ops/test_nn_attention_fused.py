"""Scaled dot-product attention runs as one fused primitive without dropout: it must give
what the composite of portagrad ops gives -- outputs, gradients, gradients of gradients and
third derivatives, forward-mode tangents -- causal, with boolean and additive masks, on
numpy and array-api-strict; multi-head attention takes it too."""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.nn import Parameter
from portagrad.ops.nn.attention_fused import attention_fused


def _composite(q, k, v, mask, causal, scale):
    s = ops.matmul(q, ops.matrix_transpose(k)) * scale
    if causal:
        s = ops.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -math.inf)
    if mask is not None:
        s = ops.where(mask, s, -math.inf) if mask.dtype == bool else s + mask
    return ops.matmul(ops.softmax(s, axis=-1), v)


def _run(f, arrays, go, vs, us):
    ps = [Parameter(a.copy()) for a in arrays]
    y = f(*ps)
    gs = pg.grad(y, ps, grad_outputs=go, create_graph=True)
    dot = sum(ops.sum(g * vi) for g, vi in zip(gs, vs))
    hv = pg.grad(dot, ps, allow_unused=True, create_graph=True)
    hv = [ops.zeros_like(p) if h is None else h for h, p in zip(hv, ps)]
    third = pg.grad(sum(ops.sum(h * u) for h, u in zip(hv, us)), ps, allow_unused=True)
    ps2 = [Parameter(a.copy()) for a in arrays]
    f(*ps2).backward(go)
    with pg.autograd.forward_ad.dual_level():
        duals = [pg.autograd.forward_ad.make_dual(Parameter(a.copy()), vi)
                 for a, vi in zip(arrays, vs)]
        tan = pg.autograd.forward_ad.unpack_dual(f(*duals)).tangent.array
    return ([y.array], [g.array for g in gs], [h.array for h in hv],
            [np.zeros_like(a) if t is None else t.array for t, a in zip(third, arrays)],
            [p.grad for p in ps2], [tan])


_CASES = {
    "plain": (None, False),
    "causal": (None, True),
    "bool": ("bool", False),
    "additive": ("float", False),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_fused_matches_composite_to_third_order(case):
    rng = np.random.default_rng(0)
    kind, causal = _CASES[case]
    b, h, n_l, n_s, e, ev = 2, 2, 3, 3 if causal else 4, 3, 2
    arrays = [rng.uniform(-1, 1, (b, h, n_l, e)), rng.uniform(-1, 1, (b, h, n_s, e)),
              rng.uniform(-1, 1, (b, h, n_s, ev))]
    mask = None
    if kind == "bool":
        mask = rng.random((h, n_l, n_s)) < 0.7
        mask[..., 0] = True  # every query sees a key
    elif kind == "float":
        mask = rng.uniform(-2, 0, (n_l, n_s))
    scale = 0.7
    go = rng.standard_normal((b, h, n_l, ev))
    vs = [rng.standard_normal(a.shape) for a in arrays]
    us = [rng.standard_normal(a.shape) for a in arrays]
    keep = kind == "bool"
    fused = _run(lambda q, k, v: attention_fused(q, k, v, mask, keep, causal, scale),
                 arrays, go, vs, us)
    comp = _run(lambda q, k, v: _composite(q, k, v, mask, causal, scale), arrays, go, vs, us)
    for group, tol in zip(range(6), (1e-12, 1e-11, 1e-10, 1e-9, 1e-11, 1e-11)):
        for got, want in zip(fused[group], comp[group]):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_sdpa_takes_the_fused_primitive_without_dropout():
    q = Parameter(np.ones((2, 3, 4)))
    assert ops.scaled_dot_product_attention(q, q, q).creator.prim.name == "sdpa"
    m = np.ones((3, 3), dtype=bool)
    assert ops.scaled_dot_product_attention(q, q, q, attn_mask=m).creator.prim.name == "sdpa"
    # A mask that needs a gradient, or mixed dtypes: the composite.
    mv = Parameter(np.zeros((3, 3)))
    assert ops.scaled_dot_product_attention(q, q, q, attn_mask=mv).creator.prim.name != "sdpa"
    q32 = np.ones((2, 3, 4), np.float32)
    assert ops.scaled_dot_product_attention(q32, q, q).dtype == np.float64


def test_fully_masked_queries_give_nan_as_the_composite():
    q = np.ones((1, 2, 2))
    m = np.array([[True, False], [False, False]])
    with np.errstate(invalid="ignore"):
        y = ops.scaled_dot_product_attention(q, q, q, attn_mask=m).array
    assert np.isfinite(y[0, 0]).all() and np.isnan(y[0, 1]).all()


def test_fused_on_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(2)
    arrays = [rng.uniform(-1, 1, (2, 4, 3)) for _ in range(3)]
    go = rng.standard_normal((2, 4, 3))
    outs = []
    for conv in (np.asarray, xps.asarray):
        ps = [Parameter(conv(a.copy())) for a in arrays]
        y = ops.scaled_dot_product_attention(*ps, is_causal=True)
        y.backward(conv(go))
        outs.append([np.asarray(pg.xp.to_numpy(a)) for a in
                     [y.array] + [p.grad for p in ps]])
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("need_weights", [False, True])
def test_multi_head_attention_fused_matches_composite(need_weights):
    rng = np.random.default_rng(3)
    e, heads, n_l, n = 8, 2, 5, 3
    x = rng.standard_normal((n_l, n, e))
    w_in, b_in = rng.standard_normal((3 * e, e)) * 0.3, rng.standard_normal(3 * e) * 0.1
    w_out, b_out = rng.standard_normal((e, e)) * 0.3, rng.standard_normal(e) * 0.1
    mask = np.triu(np.full((n_l, n_l), -np.inf), 1)
    kpm = np.zeros((n, n_l), dtype=bool)
    kpm[1, -1] = True
    go = rng.standard_normal((n_l, n, e))

    def run(dropout_p):
        ps = [Parameter(a.copy()) for a in (x, w_in, b_in, w_out, b_out)]
        out, _ = ops.multi_head_attention(ps[0], ps[0], ps[0], heads, *ps[1:],
                                          attn_mask=mask, key_padding_mask=kpm,
                                          need_weights=need_weights, dropout_p=dropout_p)
        out.backward(go)
        return [out.array] + [p.grad for p in ps]

    fused = run(0.0)
    # dropout_p of 1e-300 drops nothing (in any draw) but takes the composite.
    comp = run(1e-300)
    for got, want in zip(fused, comp):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
