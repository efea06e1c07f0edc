"""Chainer's truncated backpropagation through time with its own idioms: a stateful LSTM
language model, ``loss += ...`` over a window, ``loss.backward()`` then
``loss.unchain_backward()``, ``reset_state()``, evaluation under ``no_backprop_mode``."""

from __future__ import annotations

import numpy as np

from portagrad import chainer
from portagrad.chainer import functions as F
from portagrad.chainer import links as L


class RNNLM(chainer.Chain):
    def __init__(self, n_vocab, n_units):
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units)
            self.l1 = L.LSTM(n_units, n_units)
            self.l2 = L.Linear(n_units, n_vocab)

    def reset_state(self):
        self.l1.reset_state()

    def forward(self, x):
        return self.l2(self.l1(F.dropout(self.embed(x), 0.0)))


def test_truncated_bptt_learns_a_cycle():
    np.random.seed(0)
    seq = np.array([0, 1, 2, 3, 4] * 40, np.int32)
    model = L.Classifier(RNNLM(5, 8))
    batch = 4
    offsets = [i * len(seq) // batch for i in range(batch)]
    lr = 0.5
    for it in range(60):
        loss = 0
        for j in range(5):  # a window of five steps, then cut the graph
            pos = [(o + it * 5 + j) % len(seq) for o in offsets]
            x = seq[pos]
            t = seq[[(p + 1) % len(seq) for p in pos]]
            loss += model(x, t)
        model.cleargrads()
        loss.backward()
        loss.unchain_backward()
        assert loss.creator is None
        for p in model.params():
            p.array -= lr * p.grad
    model.predictor.reset_state()
    correct = 0
    with chainer.no_backprop_mode(), chainer.using_config("train", False):
        for i in range(10):
            y = model.predictor(seq[i:i + 1])
            correct += int(y.array.argmax() == seq[i + 1])
            assert y.creator is None
    assert correct >= 9
