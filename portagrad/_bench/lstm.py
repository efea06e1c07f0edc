"""LSTM language model: vocabulary 10000, embedding and one LSTM layer of 200 units, 35
time steps (truncated BPTT), batch 20, softmax cross-entropy over every position, plain
SGD; float32.

Each step starts from zero hidden and cell states, so the three implementations take
exactly the same steps. Gate order in the weights is PyTorch's: input, forget, cell, output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._common import (
    Backend,
    Config,
    Result,
    portagrad_sgd_steps,
    problem_of,
    run_training,
    speed_target,
    torch_sgd_steps,
    training_specs,
    uniform,
)
from .mlp import softmax_xent_numpy

VOCAB = 10000
HIDDEN = 200
LAYERS = 1
SEQ = 35
BATCH = 20
LR = 1.0
N_BATCHES = 2
TITLE = (f"LSTM LM: vocab {VOCAB}, embed/hidden {HIDDEN}, {LAYERS} LSTM layer, seq {SEQ}, "
         f"batch {BATCH}, SGD: one training step")


@dataclass
class Problem:
    """Embedding (V, H); per layer (W_ih (4H, in), W_hh (4H, H), b_ih, b_hh); output
    (W (V, H), b (V,)); batches of time-major token ids (inputs (T, B), targets (T, B))."""

    embed: np.ndarray
    layers: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    out: tuple[np.ndarray, np.ndarray]
    batches: list[tuple[np.ndarray, np.ndarray]]


def problem(seed: int, n_batches: int = N_BATCHES) -> Problem:
    rng = np.random.default_rng(seed)
    bound = 0.1
    embed = uniform(rng, (VOCAB, HIDDEN), bound)
    layers = [(uniform(rng, (4 * HIDDEN, HIDDEN), bound), uniform(rng, (4 * HIDDEN, HIDDEN),
                                                                  bound),
               uniform(rng, (4 * HIDDEN,), bound), uniform(rng, (4 * HIDDEN,), bound))
              for _ in range(LAYERS)]
    out = (uniform(rng, (VOCAB, HIDDEN), bound), uniform(rng, (VOCAB,), bound))
    batches = []
    for _ in range(n_batches):
        tokens = rng.integers(0, VOCAB, size=(SEQ + 1, BATCH))
        batches.append((tokens[:-1].copy(), tokens[1:].copy()))
    return Problem(embed, layers, out, batches)


# -- hand-written NumPy -------------------------------------------------------------------
def _sigmoid(x: np.ndarray) -> np.ndarray:
    # 0.5 * (1 + tanh(x / 2)) is sigmoid without overflow in exp for large |x|.
    out = np.multiply(x, 0.5, dtype=x.dtype)
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    return out


def _lstm_layer_forward(xs: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray,
                        bias: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Run one layer over (T, B, in); returns hs (T, B, H) and what backward needs."""
    t_len, batch, _ = xs.shape
    hid = w_hh.shape[1]
    pre = (xs.reshape(t_len * batch, -1) @ w_ih.T).reshape(t_len, batch, 4 * hid)
    pre += bias
    acts = np.empty_like(pre)  # i, f, g, o after their nonlinearities
    cs = np.empty((t_len, batch, hid), dtype=xs.dtype)
    tcs = np.empty_like(cs)
    hs = np.empty_like(cs)
    h = np.zeros((batch, hid), dtype=xs.dtype)
    c = np.zeros_like(h)
    w_hh_t = w_hh.T
    for t in range(t_len):
        g = pre[t]
        g += h @ w_hh_t
        a = acts[t]
        a[:, :2 * hid] = _sigmoid(g[:, :2 * hid])
        np.tanh(g[:, 2 * hid:3 * hid], out=a[:, 2 * hid:3 * hid])
        a[:, 3 * hid:] = _sigmoid(g[:, 3 * hid:])
        c = a[:, hid:2 * hid] * c
        c += a[:, :hid] * a[:, 2 * hid:3 * hid]
        cs[t] = c
        np.tanh(c, out=tcs[t])
        h = hs[t]
        np.multiply(a[:, 3 * hid:], tcs[t], out=h)
    return hs, (xs, acts, cs, tcs, hs)


def _lstm_layer_backward(dhs: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray,
                         saved: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gradients (dxs, dW_ih, dW_hh, dbias) of one layer, by backpropagation through time."""
    xs, acts, cs, tcs, hs = saved
    t_len, batch, hid = hs.shape
    dgates = np.empty_like(acts)
    dh_next = np.zeros((batch, hid), dtype=hs.dtype)
    dc_next = np.zeros_like(dh_next)
    for t in range(t_len - 1, -1, -1):
        a = acts[t]
        i, f, g, o = (a[:, k * hid:(k + 1) * hid] for k in range(4))
        dh = dhs[t] + dh_next
        tc = tcs[t]
        dc = dh * o
        dc *= 1.0 - tc * tc
        dc += dc_next
        c_prev = cs[t - 1] if t > 0 else 0.0
        d = dgates[t]
        np.multiply(dc, g * i * (1.0 - i), out=d[:, :hid])
        np.multiply(dc, c_prev * f * (1.0 - f), out=d[:, hid:2 * hid])
        np.multiply(dc, i * (1.0 - g * g), out=d[:, 2 * hid:3 * hid])
        np.multiply(dh, tc * o * (1.0 - o), out=d[:, 3 * hid:])
        dc_next = dc * f
        dh_next = d @ w_hh
    dg2 = dgates.reshape(t_len * batch, 4 * hid)
    dw_ih = dg2.T @ xs.reshape(t_len * batch, -1)
    dw_hh = dgates[1:].reshape(-1, 4 * hid).T @ hs[:-1].reshape(-1, hid)
    dxs = (dg2 @ w_ih).reshape(xs.shape)
    return dxs, dw_ih, dw_hh, dg2.sum(axis=0)


def numpy_lstm(cfg: Config) -> Callable[[int], float]:
    prob = problem_of(cfg, problem)
    embed = prob.embed.copy()
    layers = [[a.copy() for a in layer] for layer in prob.layers]
    w_out, b_out = prob.out[0].copy(), prob.out[1].copy()
    lr = np.float32(LR)

    def step(k: int) -> float:
        x, tgt = prob.batches[k % len(prob.batches)]
        hs = embed[x]  # (T, B, H)
        saved = []
        for w_ih, w_hh, b_ih, b_hh in layers:
            hs, s = _lstm_layer_forward(hs, w_ih, w_hh, b_ih + b_hh)
            saved.append(s)
        flat = hs.reshape(SEQ * BATCH, HIDDEN)
        z = flat @ w_out.T
        z += b_out
        loss, dz = softmax_xent_numpy(z, tgt.reshape(-1))
        gw_out = dz.T @ flat
        gb_out = dz.sum(axis=0)
        dhs = (dz @ w_out).reshape(SEQ, BATCH, HIDDEN)
        grads = []
        for layer, s in zip(reversed(layers), reversed(saved)):
            dhs, dw_ih, dw_hh, db = _lstm_layer_backward(dhs, layer[0], layer[1], s)
            grads.append((dw_ih, dw_hh, db))
        g_embed = np.zeros_like(embed)
        np.add.at(g_embed, x.reshape(-1), dhs.reshape(-1, HIDDEN))
        # update
        g_embed *= lr
        np.subtract(embed, g_embed, out=embed)
        for layer, (dw_ih, dw_hh, db) in zip(reversed(layers), grads):
            layer[0] -= lr * dw_ih
            layer[1] -= lr * dw_hh
            db *= lr
            layer[2] -= db
            layer[3] -= db
        np.subtract(w_out, lr * gw_out, out=w_out)
        np.subtract(b_out, lr * gb_out, out=b_out)
        return loss

    return step


# -- PyTorch ------------------------------------------------------------------------------
def torch_lstm(cfg: Config, loop: bool = False) -> Callable[[int], float]:
    """``nn.LSTM`` over the sequence, or (``loop``) ``nn.LSTMCell`` called once per step."""
    import torch

    nn = torch.nn
    device = Backend(cfg.backend).torch_device()
    prob = problem_of(cfg, problem)

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(VOCAB, HIDDEN)
            if loop:
                self.cells = nn.ModuleList(nn.LSTMCell(HIDDEN, HIDDEN) for _ in range(LAYERS))
            else:
                self.lstm = nn.LSTM(HIDDEN, HIDDEN, num_layers=LAYERS)
            self.out = nn.Linear(HIDDEN, VOCAB)

        def forward(self, x: Any) -> Any:
            hs = self.embed(x)
            if loop:
                for cell in self.cells:
                    state = None
                    outs = []
                    for t in range(hs.shape[0]):
                        state = cell(hs[t], state)
                        outs.append(state[0])
                    hs = torch.stack(outs)
            else:
                hs, _ = self.lstm(hs)
            return self.out(hs.reshape(-1, HIDDEN))

    model = LM()
    with torch.no_grad():
        model.embed.weight.copy_(torch.from_numpy(prob.embed))
        for k, layer in enumerate(prob.layers):
            for name, a in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), layer):
                target = getattr(model.cells[k], name) if loop else \
                    getattr(model.lstm, f"{name}_l{k}")
                target.copy_(torch.from_numpy(a))
        model.out.weight.copy_(torch.from_numpy(prob.out[0]))
        model.out.bias.copy_(torch.from_numpy(prob.out[1]))
    model.to(device)
    batches = [(torch.from_numpy(x).to(device), torch.from_numpy(t).reshape(-1).to(device))
               for x, t in prob.batches]
    return torch_sgd_steps(model, batches, LR)


# -- portagrad ----------------------------------------------------------------------------
def portagrad_lstm(cfg: Config, loop: bool = False) -> Callable[[int], float]:
    """``ops.n_step_lstm`` over the sequence, or (``loop``) ``nn.LSTMCell`` once per step."""
    import portagrad as pg

    nn = pg.nn
    ops = pg.ops
    backend = Backend(cfg.backend)
    prob = problem_of(cfg, problem)

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(VOCAB, HIDDEN)
            self.embed.weight = backend.parameter(prob.embed)
            self.cells = nn.ModuleList()
            for w_ih, w_hh, b_ih, b_hh in prob.layers:
                cell = nn.LSTMCell(HIDDEN, HIDDEN)
                cell.weight_ih, cell.weight_hh = backend.parameter(w_ih), \
                    backend.parameter(w_hh)
                cell.bias_ih, cell.bias_hh = backend.parameter(b_ih), backend.parameter(b_hh)
                self.cells.append(cell)
            self.out = nn.Linear(HIDDEN, VOCAB)
            self.out.weight = backend.parameter(prob.out[0])
            self.out.bias = backend.parameter(prob.out[1])
            self.zeros = backend.asarray(np.zeros((BATCH, HIDDEN), dtype=np.float32))

        def forward(self, x: Any) -> Any:
            hs = self.embed(x)
            for cell in self.cells:
                if loop:
                    state = None
                    outs = []
                    for t in range(hs.shape[0]):
                        state = cell(hs[t], state)
                        outs.append(state[0])
                    hs = ops.stack(outs)
                else:
                    hs, _, _ = ops.n_step_lstm(hs, self.zeros, self.zeros, cell.weight_ih,
                                               cell.weight_hh, cell.bias_ih, cell.bias_hh)
            return self.out(ops.reshape(hs, (-1, HIDDEN)))

    model = LM()
    batches = [(backend.asarray(x), backend.asarray(t.reshape(-1))) for x, t in prob.batches]
    return portagrad_sgd_steps(model, batches, LR)


BUILDERS = {"numpy": numpy_lstm, "torch": torch_lstm, "portagrad": portagrad_lstm}
# Every variant takes the same steps, so all their losses agree (one check group).
SPECS = {**training_specs(BUILDERS, "fused", group=""),
         **training_specs({"torch": lambda cfg: torch_lstm(cfg, loop=True),
                           "portagrad": lambda cfg: portagrad_lstm(cfg, loop=True)},
                          "loop", group="")}


def run(cfg: Config) -> Result:
    result = run_training("lstm", TITLE, cfg, BUILDERS)
    result.targets.append(speed_target(result, "LSTM step / PyTorch", "portagrad", "torch",
                                       1.0, cfg))
    return result
