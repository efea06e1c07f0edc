"""Chainer's recurrent links: StatefulLSTM/StatelessLSTM/StatefulGRU/StatelessGRU against
NumPy references of their equations, state handling (reset, set, shorter batches) and
gradients through several steps."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad.gradcheck import check_backward


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def _lstm_ref(link, c, h, x):
    wu, bu = link.upward.W.array, link.upward.b.array
    a = x @ wu.T + bu
    if h is not None:
        a = a + h @ link.lateral.W.array.T
    n = a.shape[1] // 4
    i, f, g, o = _sig(a[:, :n]), _sig(a[:, n:2 * n]), np.tanh(a[:, 2 * n:3 * n]), \
        _sig(a[:, 3 * n:])
    c = np.zeros((x.shape[0], n)) if c is None else c
    c_new = f * c + i * g
    return c_new, o * np.tanh(c_new)


def _gru_ref(link, h, x):
    lin = {k: (getattr(link, k).W.array, getattr(link, k).b.array)
           for k in ("W_r", "W_z", "W", "U_r", "U_z", "U")}

    def f(k, v):
        w, b = lin[k]
        return v @ w.T + b

    if h is None:
        return _sig(f("W_z", x)) * np.tanh(f("W", x))
    r = _sig(f("W_r", x) + f("U_r", h))
    z = _sig(f("W_z", x) + f("U_z", h))
    hb = np.tanh(f("W", x) + f("U", r * h))
    return (1 - z) * h + z * hb


def test_stateful_lstm_steps_match_the_equations():
    rng = np.random.default_rng(0)
    link = pg.nn.StatefulLSTM(3, 4, forget_bias_init=1.0)
    xs = rng.standard_normal((3, 5, 3)).astype(np.float32)
    link(xs[0])  # parameters now exist
    link.reset_state()
    # The forget gate's bias starts at 1, the others at 0 (gate blocks i, f, g, o).
    np.testing.assert_array_equal(link.upward.b.array, np.repeat([0.0, 1.0, 0.0, 0.0], 4))
    c = h = None
    for x in xs:
        y = link(x)
        c, h = _lstm_ref(link, c, h, x.astype(np.float64))
        np.testing.assert_allclose(y.array, h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(link.c.array, c, rtol=1e-5, atol=1e-6)
    link.reset_state()
    assert link.h is None and link.c is None


def test_shorter_batches_advance_only_their_rows():
    rng = np.random.default_rng(1)
    link = pg.nn.StatefulLSTM(2, 3)
    x = rng.standard_normal((4, 2))
    h1 = link(x).array.copy()
    c1 = link.c.array.copy()
    h2 = link(x[:2]).array
    np.testing.assert_array_equal(h2[2:], h1[2:])
    c_ref, h_ref = _lstm_ref(link, c1[:2], h1[:2], x[:2])
    np.testing.assert_allclose(h2[:2], h_ref, rtol=1e-12)
    with pytest.raises(ValueError, match="reset_state"):
        link(rng.standard_normal((5, 2)))


def test_stateless_lstm_and_set_state():
    rng = np.random.default_rng(2)
    link = pg.nn.StatelessLSTM(2, 3)
    x, c0, h0 = rng.standard_normal((2, 2)), rng.standard_normal((2, 3)), \
        rng.standard_normal((2, 3))
    c, h = link(c0, h0, x)
    c_ref, h_ref = _lstm_ref(link, c0, h0, x)
    np.testing.assert_allclose(c.array, c_ref, rtol=1e-12)
    np.testing.assert_allclose(h.array, h_ref, rtol=1e-12)
    stateful = pg.nn.StatefulLSTM(2, 3)
    stateful.upward, stateful.lateral = link.upward, link.lateral
    stateful.set_state(c0, h0)
    np.testing.assert_allclose(stateful(x).array, h_ref, rtol=1e-12)


def test_gru_links_match_the_equations():
    rng = np.random.default_rng(3)
    link = pg.nn.StatefulGRU(3, 4)
    xs = rng.standard_normal((3, 2, 3))
    h = None
    for x in xs:
        y = link(x)
        h = _gru_ref(link, h, x)
        np.testing.assert_allclose(y.array, h, rtol=1e-12)
    stateless = pg.nn.StatelessGRU(3, 4)
    h0 = rng.standard_normal((2, 4))
    np.testing.assert_allclose(stateless(h0, xs[0]).array, _gru_ref(stateless, h0, xs[0]),
                               rtol=1e-12)


@pytest.mark.parametrize("cls", [pg.nn.StatefulLSTM, pg.nn.StatefulGRU])
def test_gradients_through_three_steps(cls):
    rng = np.random.default_rng(4)
    link = cls(2, 3)
    xs = rng.standard_normal((3, 2, 2))
    link(xs[0])
    link.reset_state()

    def run(x0, x1, x2):
        link.reset_state()
        return link(x0) + link(x1) * 0.5 + link(x2)

    check_backward(run, [xs[0], xs[1], xs[2]])
