"""The LSTM update runs as one fused primitive: it must give what the composite of
portagrad ops gives -- both outputs, gradients and gradients of gradients -- whichever
outputs the loss uses, on numpy and array-api-strict."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_backward, check_double_backward
from portagrad.nn import Parameter


def _composite(c, gates):
    n = gates.shape[-1] // 4
    i, f, g, o = (gates[..., k * n:(k + 1) * n] for k in range(4))
    c_new = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    return c_new, ops.sigmoid(o) * ops.tanh(c_new)


def _loss(c_new, h_new, use, wc, wh):
    if use == "c":
        return ops.sum(c_new * wc)
    if use == "h":
        return ops.sum(h_new * wh)
    return ops.sum(c_new * wc) + ops.sum(ops.tanh(h_new) * wh)


@pytest.mark.parametrize("use", ["c", "h", "both"])
@pytest.mark.parametrize("shape", [(3, 2), (2, 3, 4)])
def test_fused_matches_composite_to_second_order(use, shape):
    rng = np.random.default_rng(0)
    c0 = rng.standard_normal(shape)
    a0 = rng.standard_normal(shape[:-1] + (4 * shape[-1],)) * 2.0
    wc, wh = rng.standard_normal(shape), rng.standard_normal(shape)
    vc, va = rng.standard_normal(c0.shape), rng.standard_normal(a0.shape)

    def run(f):
        c, a = Parameter(c0.copy()), Parameter(a0.copy())
        gs = pg.grad(_loss(*f(c, a), use, wc, wh), [c, a], create_graph=True)
        hv = pg.grad(ops.sum(gs[0] * vc) + ops.sum(gs[1] * va), [c, a], allow_unused=True)
        c2, a2 = Parameter(c0.copy()), Parameter(a0.copy())
        out = f(c2, a2)
        _loss(*out, use, wc, wh).backward()
        return ([o.array for o in out], [g.array for g in gs],
                [np.zeros_like(p) if h is None else h.array for h, p in zip(hv, (c0, a0))],
                [c2.grad, a2.grad])

    fused, comp = run(ops.lstm), run(_composite)
    for got_group, want_group in zip(fused, comp):
        for got, want in zip(got_group, want_group):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    # The raw-array backward equals the recorded one.
    for got, want in zip(fused[3], comp[1]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_fused_numerical_second_order():
    rng = np.random.default_rng(1)
    c0 = rng.standard_normal((2, 3))
    a0 = rng.standard_normal((2, 12))

    def f(c, a):
        c_new, h_new = ops.lstm(c, a)
        return c_new * 0.5 + h_new

    check_backward(f, [c0, a0], rtol=1e-5, atol=1e-6)
    check_double_backward(f, [c0, a0], rtol=1e-4, atol=1e-5)


def test_fused_on_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(2)
    c0, a0 = rng.standard_normal((3, 2)), rng.standard_normal((3, 8))
    g = rng.standard_normal((3, 2))
    outs = []
    for conv in (np.asarray, xps.asarray):
        c, a = Parameter(conv(c0.copy())), Parameter(conv(a0.copy()))
        c_new, h_new = ops.lstm(c, a)
        ops.sum(h_new * conv(g)).backward()
        outs.append([pg.xp.to_numpy(x) for x in (c_new.array, h_new.array, c.grad, a.grad)])
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_mixed_dtypes_promote_as_the_composite():
    c = np.zeros((1, 2), np.float32)
    a = np.ones((1, 8), np.float64)
    c_new, h_new = ops.lstm(c, a)
    assert c_new.dtype == np.float64 and h_new.dtype == np.float64
    c32, h32 = ops.lstm(c, a.astype(np.float32))
    assert c32.dtype == np.float32
    np.testing.assert_allclose(h32.array, h_new.array, rtol=1e-6)


def test_n_step_lstm_matches_a_loop_of_composite_cells():
    rng = np.random.default_rng(3)
    t, n, i, h = 4, 2, 3, 5
    xs, h0, c0 = rng.standard_normal((t, n, i)), rng.standard_normal((n, h)), \
        rng.standard_normal((n, h))
    w_ih, w_hh = rng.standard_normal((4 * h, i)) * 0.3, rng.standard_normal((4 * h, h)) * 0.3
    b_ih, b_hh = rng.standard_normal(4 * h), rng.standard_normal(4 * h)
    ps = [Parameter(a.copy()) for a in (w_ih, w_hh, b_ih, b_hh)]
    ys, hT, cT = ops.n_step_lstm(xs, h0, c0, *ps)
    ops.sum(ys * ys).backward()
    qs = [Parameter(a.copy()) for a in (w_ih, w_hh, b_ih, b_hh)]
    hh, cc, outs = pg.Variable(h0), pg.Variable(c0), []
    for k in range(t):
        gates = ops.matmul(xs[k], ops.matrix_transpose(qs[0])) + qs[2] + ops.matmul(
            hh, ops.matrix_transpose(qs[1])) + qs[3]
        cc, hh = _composite(cc, gates)
        outs.append(hh)
    ref = ops.stack(outs, axis=0)
    ops.sum(ref * ref).backward()
    np.testing.assert_allclose(ys.array, ref.array, rtol=1e-10)
    np.testing.assert_allclose(cT.array, cc.array, rtol=1e-10)
    for p, q in zip(ps, qs):
        np.testing.assert_allclose(p.grad, q.grad, rtol=1e-9, atol=1e-12)


def _seq_inputs(rng, t=4, n=2, i=3, h=5, bias=True):
    arrays = [rng.standard_normal((t, n, i)), rng.standard_normal((n, h)),
              rng.standard_normal((n, h)), rng.standard_normal((4 * h, i)) * 0.4,
              rng.standard_normal((4 * h, h)) * 0.4]
    arrays += [rng.standard_normal(4 * h), rng.standard_normal(4 * h)] if bias else [None, None]
    return arrays


@pytest.mark.parametrize("use", ["ys", "h", "c", "all"])
@pytest.mark.parametrize("bias", [True, False])
def test_sequence_matches_per_step_ops_to_second_order(use, bias):
    from portagrad.ops.nn.recurrent_fused import lstm_sequence, lstm_steps

    rng = np.random.default_rng(4)
    arrays = _seq_inputs(rng, bias=bias)
    weights = [rng.standard_normal(s) for s in ((4, 2, 5), (2, 5), (2, 5))]
    vs = [None if a is None else rng.standard_normal(a.shape) for a in arrays]

    def loss(outs):
        terms = {"ys": [0], "h": [1], "c": [2], "all": [0, 1, 2]}[use]
        return sum(ops.sum(ops.tanh(outs[k]) * weights[k]) for k in terms)

    def run(f):
        ps = [None if a is None else Parameter(a.copy()) for a in arrays]
        live = [p for p in ps if p is not None]
        gs = pg.grad(loss(f(*ps)), live, create_graph=True, allow_unused=True)
        dot = sum(ops.sum(g * v) for g, v in zip(gs, [v for v in vs if v is not None])
                  if g is not None)
        hv = pg.grad(dot, live, allow_unused=True)
        qs = [None if a is None else Parameter(a.copy()) for a in arrays]
        loss(f(*qs)).backward()
        first = [p.grad for p in qs if p is not None]
        return ([None if g is None else g.array for g in gs],
                [None if h is None else h.array for h in hv], first)

    fused, steps = run(lstm_sequence), run(lstm_steps)
    for got_group, want_group in zip(fused, steps):
        for got, want in zip(got_group, want_group):
            if want is None:
                assert got is None or not np.any(got)
                continue
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    for got, want in zip(fused[2], steps[0]):  # the raw-array backward
        np.testing.assert_allclose(got, 0 if want is None else want, rtol=1e-9, atol=1e-12)


def test_sequence_backward_twice_with_retain_graph():
    rng = np.random.default_rng(5)
    arrays = _seq_inputs(rng)
    ps = [Parameter(a.copy()) for a in arrays]
    ys, h, c = ops.n_step_lstm(*ps)
    loss = ops.sum(ys * ys) + ops.sum(c)
    loss.backward(retain_graph=True)
    first = [p.grad.copy() for p in ps]
    loss.backward()
    for p, g in zip(ps, first):
        np.testing.assert_allclose(p.grad, 2 * g, rtol=1e-12)


def test_sequence_with_constant_inputs_and_numerical_check():
    rng = np.random.default_rng(6)
    xs, h0, c0, w_ih, w_hh, b_ih, b_hh = _seq_inputs(rng, t=3, n=2, i=2, h=2)

    def f(w_ih, w_hh, b):
        ys, h, c = ops.n_step_lstm(xs, h0, c0, w_ih, w_hh, b, None)
        return ops.sum(ys, axis=0) + c

    check_backward(f, [w_ih, w_hh, b_ih], rtol=1e-5, atol=1e-6)
    check_double_backward(f, [w_ih, w_hh, b_ih], rtol=1e-4, atol=1e-5)
