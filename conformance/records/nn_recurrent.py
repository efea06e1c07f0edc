"""Records of the Elman recurrent cell and its run over a sequence (the LSTM and GRU are in
:mod:`conformance.records.nn`). References are NumPy recurrences in float64; the ReLU's
kink is avoided by keeping the pre-activations away from zero."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from portagrad import ShapeError


def _u(rng, lo, hi, shape):
    return np.asarray(rng.uniform(lo, hi, size=shape))


def _np_cell(x, h, wih, whh, bih, bhh, act):
    a = x @ wih.T + bih + h @ whh.T + bhh
    return np.tanh(a) if act == "tanh" else np.maximum(a, 0.0)


def _cell_sample(rng):
    n, i, h = 2, int(rng.integers(1, 3)), 2
    return (_u(rng, -1, 1, (n, i)), _u(rng, -1, 1, (n, h)), _u(rng, -1, 1, (h, i)),
            _u(rng, -1, 1, (h, h)), _u(rng, -0.5, 0.5, (h,)), _u(rng, -0.5, 0.5, (h,)),
            "tanh")


register(OpRecord("rnn_cell",
                  lambda x, h, wih, whh, bih, bhh, act: ops.rnn_cell(
                      x, h, wih, whh, bih, bhh, nonlinearity=act),
                  _np_cell, _cell_sample,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((2, 2)), np.ones((2, 2)),
                                        np.ones((2, 2)), None, None, "tanh"), ShapeError)]))


def _np_run(xs, h, wih, whh, bih, bhh, act, mask):
    ys = []
    for t in range(xs.shape[0]):
        new = _np_cell(xs[t], h, wih, whh, bih, bhh, act)
        if mask is not None:
            keep = mask[t][:, None]
            new = np.where(keep, new, h)
            ys.append(np.where(keep, new, 0.0))
        else:
            ys.append(new)
        h = new
    return np.stack(ys), h


def _seq_sample(rng):
    t, n, i, h = 3, 2, 2, 2
    lengths = rng.integers(1, t + 1, size=n)
    mask = np.arange(t)[:, None] < lengths[None, :] if rng.random() < 0.6 else None
    # tanh only: with relu a pre-activation near zero would put a kink in the draw.
    return (_u(rng, -1, 1, (t, n, i)), _u(rng, -1, 1, (n, h)), _u(rng, -1, 1, (h, i)),
            _u(rng, -1, 1, (h, h)), _u(rng, -0.5, 0.5, (h,)), _u(rng, -0.5, 0.5, (h,)),
            "tanh", mask)


register(OpRecord("n_step_elman",
                  lambda xs, h, wih, whh, bih, bhh, act, m: ops.n_step_elman(
                      xs, h, wih, whh, bih, bhh, nonlinearity=act, mask=m),
                  _np_run, _seq_sample,
                  errors=[(lambda rng: (np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2)),
                                        np.ones((2, 2)), None, None, "tanh", None),
                           ShapeError)]))
