"""PyTorch-named layers: containers, losses, bilinear, PReLU, adaptive pooling, Elman RNNs
(Chainer's links are tested in test_nn_compat_chainer.py).

Values are checked against torch.nn (same module, weights copied) when torch is installed,
and against hand-computed or NumPy references otherwise.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import portagrad as pg
from portagrad import nn

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")


def _np(v):
    return pg.xp.to_numpy(getattr(v, "array", v))


def _t(a):
    import torch

    return torch.tensor(np.asarray(a))


# -- containers ---------------------------------------------------------------------------
def test_module_dict_registers_and_round_trips():
    d = nn.ModuleDict({"enc": nn.Linear(3, 2)})
    d.update([("dec", nn.Linear(2, 3))])
    assert list(d) == ["enc", "dec"] and len(d) == 2 and "dec" in d
    assert list(d.state_dict()) == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    other = nn.ModuleDict({"enc": nn.Linear(3, 2), "dec": nn.Linear(2, 3)})
    other.load_state_dict(d.state_dict())
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(other["dec"](other["enc"](x)).array,
                                  d["dec"](d["enc"](x)).array)
    popped = d.pop("enc")
    assert isinstance(popped, nn.Linear) and list(d.state_dict()) == ["dec.weight", "dec.bias"]
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []


@pytest.mark.parametrize("key, err", [("a.b", KeyError), ("keys", KeyError),
                                      ("training", KeyError), (3, TypeError)])
def test_module_dict_rejects_bad_keys(key, err):
    with pytest.raises(err):
        nn.ModuleDict()[key] = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="Module"):
        nn.ModuleDict()["x"] = 3


def test_identity_passes_values_through():
    x = np.array([1.0, -2.0])
    y = nn.Identity(3, anything=1)(x)
    assert isinstance(y, pg.Variable)
    np.testing.assert_array_equal(y.array, x)


# -- losses -----------------------------------------------------------------------------
def test_losses_hand_computed():
    x, t = np.array([0.5, 3.0]), np.zeros(2)
    assert float(nn.MSELoss()(x, t).array) == pytest.approx((0.25 + 9.0) / 2)
    assert float(nn.L1Loss(reduction="sum")(x, t).array) == pytest.approx(3.5)
    np.testing.assert_allclose(nn.HuberLoss(reduction="none", delta=2.0)(x, t).array,
                               [0.125, 2.0 * (3.0 - 1.0)])
    np.testing.assert_allclose(nn.SmoothL1Loss(reduction="none", beta=2.0)(x, t).array,
                               [0.0625, 2.0])
    np.testing.assert_allclose(nn.SmoothL1Loss(reduction="none", beta=0.0)(x, t).array,
                               [0.5, 3.0])
    # pos_weight 3: -(3 t log s(x) + (1 - t) log(1 - s(x))) at x = 0, t = 1 is 3 log 2.
    loss = nn.BCEWithLogitsLoss(pos_weight=np.array([3.0]), reduction="none")
    np.testing.assert_allclose(loss(np.array([0.0, 0.0]), np.array([1.0, 0.0])).array,
                               [3 * np.log(2), np.log(2)])
    ce = nn.CrossEntropyLoss(ignore_index=1)
    x2 = np.array([[2.0, 0.0], [0.0, 0.0]])
    assert float(ce(x2, np.array([0, 1])).array) == pytest.approx(np.log1p(np.exp(-2.0)))


def test_loss_errors():
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(pg.DTypeError, match="binary_cross_entropy_with_logits"):
        nn.BCEWithLogitsLoss()(np.zeros(2), np.array([0, 1]))
    with pytest.raises(pg.ShapeError, match="probabilities"):
        nn.CrossEntropyLoss()(np.zeros((2, 3)), np.zeros((2, 2)))


_CASES = [
    ("CrossEntropyLoss", {}, "labels"),
    ("CrossEntropyLoss", {"weight": "w", "label_smoothing": 0.2, "ignore_index": 2}, "labels"),
    ("CrossEntropyLoss", {"reduction": "sum", "weight": "w"}, "labels"),
    ("CrossEntropyLoss", {"reduction": "none", "label_smoothing": 0.1}, "labels"),
    ("CrossEntropyLoss", {"weight": "w", "label_smoothing": 0.3}, "probs"),
    ("NLLLoss", {"weight": "w"}, "logprobs"),
    ("NLLLoss", {"reduction": "none"}, "logprobs"),
    ("MSELoss", {}, "real"),
    ("L1Loss", {"reduction": "sum"}, "real"),
    ("HuberLoss", {"delta": 0.7}, "real"),
    ("SmoothL1Loss", {"beta": 0.5}, "real"),
    ("BCEWithLogitsLoss", {}, "probs"),
    ("BCEWithLogitsLoss", {"weight": "w", "pos_weight": "w"}, "probs"),
    ("BCELoss", {"weight": "w"}, "sigmoid"),
    ("KLDivLoss", {"reduction": "batchmean"}, "kl"),
    ("KLDivLoss", {"log_target": True, "reduction": "sum"}, "kl_log"),
]


def _loss_inputs(kind, rng):
    x = rng.normal(size=(5, 4))
    if kind == "labels":
        return x, np.array([0, 3, 2, 1, 2])
    if kind == "logprobs":
        return x - np.log(np.exp(x).sum(1, keepdims=True)), np.array([0, 3, 2, 1, 2])
    if kind == "probs":
        return x, rng.dirichlet(np.ones(4), size=5)
    if kind == "sigmoid":
        return 1 / (1 + np.exp(-x)), rng.uniform(size=(5, 4))
    if kind == "kl":
        return np.log(rng.dirichlet(np.ones(4), size=5)), rng.dirichlet(np.ones(4), size=5)
    if kind == "kl_log":
        return (np.log(rng.dirichlet(np.ones(4), size=5)),
                np.log(rng.dirichlet(np.ones(4), size=5)))
    return x, rng.normal(size=(5, 4))


@needs_torch
@pytest.mark.parametrize("name, kwargs, kind", _CASES)
def test_losses_match_torch(name, kwargs, kind, rng):
    import torch

    x, t = _loss_inputs(kind, rng)
    w = rng.uniform(0.5, 2.0, size=4)
    ours = {k: (w if v == "w" else v) for k, v in kwargs.items()}
    theirs = {k: (_t(w) if v == "w" else v) for k, v in kwargs.items()}
    xv = pg.Variable(x, requires_grad=True)
    loss = getattr(nn, name)(**ours)(xv, t)
    xt = _t(x).requires_grad_(True)
    ref = getattr(torch.nn, name)(**theirs)(xt, _t(t))
    np.testing.assert_allclose(loss.array, ref.detach().numpy(), rtol=1e-12, atol=1e-14)
    pg.ops.sum(loss).backward()
    ref.sum().backward()
    np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_losses_on_backends(backend, rng):
    x, t = _loss_inputs("labels", rng)
    expected = float(nn.CrossEntropyLoss(label_smoothing=0.1)(x, t).array)
    got = nn.CrossEntropyLoss(label_smoothing=0.1)(backend.asarray(x), backend.asarray(t))
    assert float(_np(got)) == pytest.approx(expected, rel=1e-12)
    p, q = _loss_inputs("probs", rng)
    expected = float(nn.BCEWithLogitsLoss(pos_weight=[2.0] * 4)(p, q).array)
    got = nn.BCEWithLogitsLoss(pos_weight=[2.0] * 4)(backend.asarray(p), backend.asarray(q))
    assert float(_np(got)) == pytest.approx(expected, rel=1e-12)


# -- Bilinear, PReLU, adaptive pooling ---------------------------------------------------
def test_bilinear_matches_einsum_and_round_trips(rng):
    bl = nn.Bilinear(3, 4, 2, dtype=np.float64)
    assert np.abs(bl.weight.array).max() <= 1 / np.sqrt(3)
    x1, x2 = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 4))
    ref = np.einsum("...i,kij,...j->...k", x1, bl.weight.array, x2) + bl.bias.array
    # A product then a sum, in another order than einsum's: the rounding of O(1) terms,
    # which an output that nearly cancels shows relatively (the weights are drawn from
    # the global generator, so which output does depends on the tests run before).
    tol = dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(bl(x1, x2).array, ref, **tol)
    other = nn.Bilinear(3, 4, 2, dtype=np.float64)
    other.load_state_dict(bl.state_dict())
    np.testing.assert_allclose(other(x1, x2).array, ref, **tol)


def test_prelu_slopes():
    y = nn.PReLU(2, init=0.1)(np.array([[-1.0, -2.0], [3.0, -4.0]], np.float32))
    np.testing.assert_allclose(y.array, [[-0.1, -0.2], [3.0, -0.4]], rtol=1e-6)


def test_adaptive_pools_hand_computed():
    x = np.arange(10.0).reshape(1, 1, 2, 5)
    # Windows along the axis of 5 for 3 outputs: [0, 2), [1, 4), [3, 5).
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d((1, 3))(x).array,
                               [[[[(0 + 1 + 5 + 6) / 4, (1 + 2 + 3 + 6 + 7 + 8) / 6,
                                   (3 + 4 + 8 + 9) / 4]]]])
    np.testing.assert_array_equal(nn.AdaptiveMaxPool2d((1, 3))(x).array, [[[[6, 8, 9]]]])
    np.testing.assert_array_equal(nn.AdaptiveMaxPool1d(2)(x[0, :, 0]).array, [[2.0, 4.0]])
    assert nn.AdaptiveAvgPool3d(1)(np.ones((2, 3, 2, 2, 2))).shape == (2, 3, 1, 1, 1)
    with pytest.raises(pg.ShapeError, match="spatial"):
        nn.AdaptiveMaxPool2d(1)(np.ones((2, 2)))


@needs_torch
@pytest.mark.parametrize("size", [1, (3, 2), (None, 4), (6, 5)])
def test_adaptive_pools_match_torch(size, rng):
    import torch

    x = rng.normal(size=(2, 3, 7, 5))
    for ours, theirs in ((nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d),
                         (nn.AdaptiveMaxPool2d, torch.nn.AdaptiveMaxPool2d)):
        xv = pg.Variable(x, requires_grad=True)
        y = ours(size)(xv)
        xt = _t(x).requires_grad_(True)
        ref = theirs(size)(xt)
        np.testing.assert_allclose(y.array, ref.detach().numpy(), rtol=1e-12)
        g = rng.normal(size=ref.shape)
        pg.ops.sum(y * g).backward()
        (ref * _t(g)).sum().backward()
        np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-14)
    unbatched = nn.AdaptiveMaxPool2d(size)(x[0]).array
    np.testing.assert_array_equal(unbatched, torch.nn.AdaptiveMaxPool2d(size)(_t(x[0])))


def test_adaptive_pools_on_backends(backend, rng):
    x = rng.normal(size=(1, 2, 5, 4))
    for cls in (nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d):
        np.testing.assert_allclose(_np(cls((2, 3))(backend.asarray(x))),
                                   cls((2, 3))(x).array, rtol=1e-12)


# -- Elman RNN ------------------------------------------------------------------------------
def _elman_reference(xs, h, w_ih, w_hh, b_ih, b_hh, act):
    ys = []
    for x in xs:
        h = act(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
        ys.append(h)
    return np.stack(ys), h


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_matches_numpy_and_mask(nonlinearity, rng):
    rnn = nn.RNN(3, 4, nonlinearity=nonlinearity, dtype=np.float64)
    act = np.tanh if nonlinearity == "tanh" else (lambda a: np.maximum(a, 0))
    xs, h0 = rng.normal(size=(5, 2, 3)), rng.normal(size=(2, 4))
    params = [p.array for p in (rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0,
                                rnn.bias_hh_l0)]
    ys, h = rnn(xs, h0[None])
    ref_ys, ref_h = _elman_reference(xs, h0, *params, act)
    np.testing.assert_allclose(ys.array, ref_ys, rtol=1e-12)
    np.testing.assert_allclose(h.array[0], ref_h, rtol=1e-12)
    cell = nn.RNNCell(3, 4, nonlinearity=nonlinearity, dtype=np.float64)
    cell.load_state_dict({k[:-3]: v for k, v in rnn.state_dict().items()})
    np.testing.assert_allclose(cell(xs[0], h0).array, ref_ys[0], rtol=1e-12)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")


@needs_torch
def test_rnn_matches_torch(rng):
    import torch

    rnn = nn.RNN(3, 4, dtype=np.float64)
    ref = torch.nn.RNN(3, 4).double()
    rnn.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    xs = rng.normal(size=(4, 2, 3))
    ys, h = rnn(xs)
    ys_t, h_t = ref(_t(xs))
    np.testing.assert_allclose(ys.array, ys_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.array, h_t.detach().numpy(), rtol=1e-12)


def test_rnn_on_backends(backend, rng):
    ref = nn.RNN(5, 4)
    xp, dev = backend.xp, backend.device
    rnn = nn.RNN(5, 4, xp=xp, device=dev)
    xs = rng.normal(size=(3, 2, 5)).astype(np.float32)
    rnn.load_state_dict(ref.state_dict())
    ys, h = rnn(backend.asarray(xs))
    assert type(rnn.weight_ih_l0.array).__module__.split(".")[0] == type(
        ys.array).__module__.split(".")[0]
    # float32 products of two libraries: an absolute tolerance for outputs near zero.
    np.testing.assert_allclose(_np(ys), ref(xs)[0].array, rtol=1e-5, atol=1e-6)


