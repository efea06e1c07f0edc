"""Records of the Chainer-named stacked RNNs. Weights travel as flat positional
arguments; references run the recurrences in NumPy, row-masked by sequence length."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _u
from portagrad import ShapeError

_SIZES = (2, 2, 1)  # batch size per time step
_I, _N = 2, 2


def _sig(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def _np_cell(kind, x, state, w, b):
    def lin(k, v):
        return v @ w[k].T + b[k]

    if kind == "rnn":
        return [np.tanh(lin(0, x) + lin(1, state[0]))]
    if kind == "gru":
        h = state[0]
        r = _sig(lin(0, x) + lin(3, h))
        z = _sig(lin(1, x) + lin(4, h))
        return [(1 - z) * np.tanh(lin(2, x) + r * lin(5, h)) + z * h]
    h, c = state
    g = [lin(k, x) + lin(k + 4, h) for k in range(4)]
    c = _sig(g[1]) * c + _sig(g[0]) * np.tanh(g[2])
    return [_sig(g[3]) * np.tanh(c), c]


def _np_stack(kind, layers, dirs, states, ws, bs, xs):
    finals = []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            st = [s[k].copy() for s in states]
            ys = [None] * len(xs)
            for t in (reversed(range(len(xs))) if d else range(len(xs))):
                n = len(xs[t])
                new = _np_cell(kind, xs[t], [s[:n] for s in st], ws[k], bs[k])
                for s, v in zip(st, new):
                    s[:n] = v
                ys[t] = new[0]
            outs.append(ys)
            finals.append(st)
        xs = outs[0] if dirs == 1 else [np.concatenate([f, r], 1) for f, r in zip(*outs)]
    return [np.stack([f[j] for f in finals]) for j in range(len(states))], xs


_KINDS = {"n_step_rnn": ("rnn", 2, 1, 2, 1), "n_step_birnn": ("rnn", 1, 2, 2, 1),
          "n_step_bigru": ("gru", 1, 2, 6, 1), "n_step_bilstm": ("lstm", 1, 2, 8, 2)}


def _sample(name):
    kind, layers, dirs, n_w, n_s = _KINDS[name]

    def sample(rng):
        args = [_u(rng, -1, 1, (layers * dirs, _SIZES[0], _N)) for _ in range(n_s)]
        for k in range(layers * dirs):
            width = _I if k < dirs else _N * dirs
            args += [_u(rng, -1, 1, (_N, width if j < n_w // 2 else _N)) for j in range(n_w)]
            args += [_u(rng, -0.5, 0.5, (_N,)) for _ in range(n_w)]
        return tuple(args) + tuple(_u(rng, -1, 1, (n, _I)) for n in _SIZES)

    return sample


def _unpack(name, args):
    kind, layers, dirs, n_w, n_s = _KINDS[name]
    states, rest = list(args[:n_s]), list(args[n_s:])
    ws, bs = [], []
    for _ in range(layers * dirs):
        ws.append(rest[:n_w])
        bs.append(rest[n_w:2 * n_w])
        rest = rest[2 * n_w:]
    return states, ws, bs, rest


def _fn(name):
    def fn(*args):
        states, ws, bs, xs = _unpack(name, args)
        layers = _KINDS[name][1]
        out = getattr(ops, name)(layers, 0.0, *states, ws, bs, xs)
        return (*out[:-1], *out[-1])

    return fn


def _ref(name):
    def ref(*args):
        states, ws, bs, xs = _unpack(name, args)
        kind, layers, dirs, _, _ = _KINDS[name]
        finals, ys = _np_stack(kind, layers, dirs, states, ws, bs, xs)
        return (*finals, *ys)

    return ref


def _bad_hx(rng):
    good = _sample("n_step_rnn")(rng)
    return (np.ones((2, 2)),) + good[1:]  # hx without its layer axis


for _name in _KINDS:
    # Many inputs make the third derivative along a random direction large: a smaller
    # step keeps the finite differences within tolerance.
    register(OpRecord(_name, _fn(_name), _ref(_name), _sample(_name), eps=2e-4,
                      errors=[(_bad_hx, ShapeError)] if _name == "n_step_rnn" else []))
