"""Transformer language model: token embedding (vocabulary 5000) plus learned positions,
2 pre-LN encoder layers (d_model 256, 4 heads, feed-forward 1024 with GELU), a final layer
norm and a linear head; causal self-attention over 128 tokens, batch 8, next-token
softmax cross-entropy over the 5000 tokens, Adam; float32, no dropout.

Both frameworks use their ``nn.TransformerEncoderLayer`` (``norm_first=True``,
``batch_first=True``, ``activation="gelu"``) with the same additive causal mask; the
weights are named as PyTorch's state dict names them, which portagrad's modules share.
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
    torch_sgd_steps,
    training_specs,
    uniform,
)

VOCAB = 5000
D_MODEL = 256
HEADS = 4
FFN = 1024
LAYERS = 2
SEQ = 128
BATCH = 8
LR = 1e-3
N_BATCHES = 2
TITLE = (f"transformer LM: vocab {VOCAB} + learned positions, {LAYERS} pre-LN encoder "
         f"layers, d_model {D_MODEL}, {HEADS} heads, FFN {FFN} GELU, causal, seq {SEQ}, "
         f"batch {BATCH}, Adam")
CHECK_RTOL = 1e-3


@dataclass
class Problem:
    """``state``: initial weights by state-dict name; batches of token ids (inputs (B, T),
    next tokens (B, T))."""

    state: dict[str, np.ndarray]
    batches: list[tuple[np.ndarray, np.ndarray]]


def problem(seed: int, n_batches: int = N_BATCHES) -> Problem:
    rng = np.random.default_rng(seed)
    d, f = D_MODEL, FFN
    state = {"embed.weight": uniform(rng, (VOCAB, d), 0.1),
             "pos": uniform(rng, (SEQ, d), 0.1)}
    for i in range(LAYERS):
        p = f"layers.{i}."
        for name, shape, fan_in in (("self_attn.in_proj", (3 * d, d), d),
                                    ("self_attn.out_proj", (d, d), d),
                                    ("linear1", (f, d), d), ("linear2", (d, f), f)):
            bound = 1.0 / np.sqrt(fan_in)
            state[p + name + ("_weight" if name.endswith("in_proj") else ".weight")] = \
                uniform(rng, shape, bound)
            state[p + name + ("_bias" if name.endswith("in_proj") else ".bias")] = \
                uniform(rng, shape[:1], bound)
        for norm in ("norm1", "norm2"):
            state[f"{p}{norm}.weight"] = np.ones(d, np.float32)
            state[f"{p}{norm}.bias"] = np.zeros(d, np.float32)
    state["norm.weight"] = np.ones(d, np.float32)
    state["norm.bias"] = np.zeros(d, np.float32)
    state["out.weight"] = uniform(rng, (VOCAB, d), 1.0 / np.sqrt(d))
    state["out.bias"] = uniform(rng, (VOCAB,), 1.0 / np.sqrt(d))
    batches = []
    for _ in range(n_batches):
        tokens = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1))
        batches.append((tokens[:, :-1].copy(), tokens[:, 1:].reshape(-1).copy()))
    return Problem(state, batches)


def causal_mask() -> np.ndarray:
    """(T, T) additive mask: -inf above the diagonal (a query sees itself and the past)."""
    return np.triu(np.full((SEQ, SEQ), -np.inf, dtype=np.float32), 1)


def model(nn: Any, parameter: Callable[[Any], Any], mask: Any) -> Any:
    """The network in ``nn`` (``torch.nn`` or ``portagrad.nn``: the same names)."""

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D_MODEL)
            self.pos = parameter(np.zeros((SEQ, D_MODEL), np.float32))
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True) for _ in range(LAYERS))
            self.norm = nn.LayerNorm(D_MODEL)
            self.out = nn.Linear(D_MODEL, VOCAB)

        def forward(self, x: Any) -> Any:
            h = self.embed(x) + self.pos
            for layer in self.layers:
                h = layer(h, src_mask=mask, is_causal=True)
            return self.out(self.norm(h)).reshape(-1, VOCAB)

    return LM()


def _load(net: Any, state: dict[str, Any]) -> None:
    missing, unexpected = net.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"transformer: state names differ: missing {missing}, "
                           f"unexpected {unexpected}")


def torch_transformer(cfg: Config) -> Callable[[int], float]:
    import torch

    device = Backend(cfg.backend).torch_device()
    prob = problem_of(cfg, problem)
    mask = torch.from_numpy(causal_mask()).to(device)
    net = model(torch.nn, lambda a: torch.nn.Parameter(torch.from_numpy(a)), mask)
    _load(net, {k: torch.from_numpy(v) for k, v in prob.state.items()})
    net.to(device).train()
    batches = [(torch.from_numpy(x).to(device), torch.from_numpy(t).to(device))
               for x, t in prob.batches]
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    return torch_sgd_steps(net, batches, LR, opt)


def portagrad_transformer(cfg: Config) -> Callable[[int], float]:
    import portagrad as pg

    backend = Backend(cfg.backend)
    prob = problem_of(cfg, problem)
    mask = backend.asarray(causal_mask())
    net = model(pg.nn, backend.parameter, mask)
    _load(net, {k: backend.asarray(v) for k, v in prob.state.items()})
    net.train()
    batches = [(backend.asarray(x), backend.asarray(t)) for x, t in prob.batches]
    opt = pg.optim.Adam(net.parameters(), lr=LR)
    return portagrad_sgd_steps(net, batches, LR, opt)


BUILDERS = {"torch": torch_transformer, "portagrad": portagrad_transformer}
SPECS = training_specs(BUILDERS)


def run(cfg: Config) -> Result:
    """In one process (``run_benchmarks``): no hand-written NumPy version of this one."""
    return run_training("transformer", TITLE, cfg, BUILDERS, rtol=CHECK_RTOL)
