"""portagrad.nn.utils against torch.nn.utils: clipping, parameter vectors, packed
sequences (and an LSTM reading them)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
import portagrad.nn.utils as U
from portagrad.nn.utils import rnn as R

torch = pytest.importorskip("torch")
TU = torch.nn.utils

rng = np.random.default_rng(0)
GRADS = [rng.normal(size=(3, 4)), rng.normal(size=(5,)), rng.normal(size=(2, 2, 2)) * 10]


def _params():
    ours, theirs = [], []
    for g in GRADS:
        p = pg.nn.Parameter(np.zeros(g.shape))
        p.grad = g.copy()
        t = torch.zeros(g.shape, dtype=torch.float64, requires_grad=True)
        t.grad = torch.tensor(g)
        ours.append(p)
        theirs.append(t)
    return ours, theirs


@pytest.mark.parametrize("max_norm", [0.5, 1e6])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, "inf", 0.5])
def test_clip_grad_norm_matches_torch(max_norm, norm_type):
    ours, theirs = _params()
    n = U.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    tn = TU.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(n, pg.Variable) and n.shape == ()
    np.testing.assert_allclose(float(n), float(tn), rtol=1e-12)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-12)


def test_total_norm_and_clip_with_norm_match_torch():
    ours, theirs = _params()
    n = U.get_total_norm([p.grad for p in ours], 2.0)
    tn = TU.get_total_norm([t.grad for t in theirs], 2.0)
    np.testing.assert_allclose(float(n), float(tn), rtol=1e-12)
    U.clip_grads_with_norm_(ours, 1.0, n)
    TU.clip_grads_with_norm_(theirs, 1.0, tn)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases():
    p = pg.nn.Parameter(np.zeros(2))
    assert float(U.clip_grad_norm_([p], 1.0)) == 0.0  # no gradients
    assert float(U.clip_grad_norm_(p, 1.0)) == 0.0  # a single Variable
    p.grad = np.array([np.inf, 1.0])
    with pytest.raises(pg.NonFiniteError, match="non-finite"):
        U.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    f = pg.nn.Parameter(np.zeros(2, dtype=np.float32))
    f.grad = np.array([3.0, 4.0], dtype=np.float32)
    tf = torch.zeros(2, requires_grad=True)
    tf.grad = torch.tensor([3.0, 4.0])
    n, tn = U.clip_grad_norm_([f], 1.0, foreach=True), TU.clip_grad_norm_([tf], 1.0)
    assert n.dtype == np.float32 and f.grad.dtype == np.float32
    np.testing.assert_array_equal(f.grad, tf.grad.numpy())
    assert float(n) == float(tn)
    with pytest.raises(TypeError):
        U.clip_grad_norm_([p], 1.0, norm_type="two")


def test_clipping_makes_a_new_gradient_array():
    p = pg.nn.Parameter(np.zeros(2))
    h = p * 1.0
    h.retain_grad()
    h.sum().backward()
    kept = h.grad
    U.clip_grad_norm_([p], 0.1)
    np.testing.assert_array_equal(kept, [1.0, 1.0])  # what was handed out is unchanged


def test_clip_grad_value_matches_torch():
    ours, theirs = _params()
    U.clip_grad_value_(ours, 0.7)
    TU.clip_grad_value_(theirs, 0.7)
    for p, t in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad, t.grad.numpy())


def test_parameters_to_vector_and_back_match_torch():
    shapes = [(2, 3), (4,), (1, 2, 2)]
    ours = [pg.nn.Parameter(rng.normal(size=s)) for s in shapes]
    theirs = [torch.tensor(p.array, requires_grad=True) for p in ours]
    v, tv = U.parameters_to_vector(ours), TU.parameters_to_vector(theirs)
    np.testing.assert_array_equal(v.array, tv.detach().numpy())
    w = np.linspace(0, 1, v.shape[0])
    (v * w).sum().backward()
    (tv * torch.tensor(w)).sum().backward()
    for p, t in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad, t.grad.numpy())
    new = np.arange(float(v.shape[0]))
    U.vector_to_parameters(new, ours)
    with torch.no_grad():
        TU.vector_to_parameters(torch.tensor(new), theirs)
    for p, t in zip(ours, theirs):
        np.testing.assert_array_equal(p.array, t.detach().numpy())
        assert p.grad is not None
    with pytest.raises(pg.ShapeError):
        U.vector_to_parameters(new[:-1], ours)
    with pytest.raises(TypeError):
        U.parameters_to_vector(ours[0])


SEQS = [rng.normal(size=(n, 3)) for n in (4, 2, 5, 2, 1)]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, side):
    ours = R.pad_sequence(SEQS, batch_first=batch_first, padding_value=-1.0,
                          padding_side=side)
    theirs = TU.rnn.pad_sequence([torch.tensor(s) for s in SEQS], batch_first=batch_first,
                                 padding_value=-1.0, padding_side=side)
    np.testing.assert_array_equal(ours.array, theirs.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_unpack_match_torch(batch_first):
    padded = R.pad_sequence(SEQS, batch_first=batch_first)
    tpadded = TU.rnn.pad_sequence([torch.tensor(s) for s in SEQS], batch_first=batch_first)
    lengths = [len(s) for s in SEQS]
    p = R.pack_padded_sequence(padded, lengths, batch_first=batch_first, enforce_sorted=False)
    tp = TU.rnn.pack_padded_sequence(tpadded, lengths, batch_first=batch_first,
                                     enforce_sorted=False)
    np.testing.assert_array_equal(p.data.array, tp.data.numpy())
    for name in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        assert getattr(p, name).tolist() == getattr(tp, name).tolist()
    out, lens = R.pad_packed_sequence(p, batch_first=batch_first, padding_value=7.0,
                                      total_length=6)
    tout, tlens = TU.rnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=7.0,
                                             total_length=6)
    np.testing.assert_array_equal(out.array, tout.numpy())
    assert lens.tolist() == tlens.tolist()
    for a, b in zip(R.unpack_sequence(p), TU.rnn.unpack_sequence(tp)):
        np.testing.assert_array_equal(a.array, b.numpy())


def test_pack_sequence_sorted_and_errors_like_torch():
    seqs = sorted(SEQS, key=len, reverse=True)
    p = R.pack_sequence(seqs)
    tp = TU.rnn.pack_sequence([torch.tensor(s) for s in seqs])
    np.testing.assert_array_equal(p.data.array, tp.data.numpy())
    assert p.sorted_indices is None and tp.sorted_indices is None
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        R.pack_sequence(SEQS)
    with pytest.raises(ValueError, match="total_length"):
        R.pad_packed_sequence(p, total_length=2)
    with pytest.raises(ValueError, match="greater than 0"):
        R.pack_padded_sequence(np.zeros((3, 2)), [3, 0])


def test_packing_is_differentiable():
    xs = [pg.Variable(s.copy()) for s in SEQS]
    ts = [torch.tensor(s, requires_grad=True) for s in SEQS]
    p = R.pack_sequence(xs, enforce_sorted=False)
    tp = TU.rnn.pack_sequence(ts, enforce_sorted=False)
    out, _ = R.pad_packed_sequence(p, batch_first=True)
    tout, _ = TU.rnn.pad_packed_sequence(tp, batch_first=True)
    w = rng.normal(size=out.shape)
    (out * out * w).sum().backward()
    (tout * tout * torch.tensor(w)).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-12)


@pytest.mark.skipif(not hasattr(pg.nn.LSTM(1, 1), "weight_ih_l0"),
                    reason="needs pg.nn.LSTM with torch's parameter names")
def test_lstm_reads_packed_sequences_like_torch():
    torch.manual_seed(0)
    tl = torch.nn.LSTM(3, 4, batch_first=True).double()
    lstm = pg.nn.LSTM(3, 4, batch_first=True, dtype=np.float64)
    lstm.load_state_dict({k: v.detach().numpy() for k, v in tl.state_dict().items()})
    p = R.pack_sequence([pg.Variable(s.copy()) for s in SEQS], enforce_sorted=False)
    tp = TU.rnn.pack_sequence([torch.tensor(s) for s in SEQS], enforce_sorted=False)
    out, (h, c) = lstm(p)
    tout, (th, tc) = tl(tp)
    assert isinstance(out, R.PackedSequence)
    np.testing.assert_allclose(out.data.array, tout.data.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(h.array, th.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(c.array, tc.detach().numpy(), rtol=1e-10)
