"""ResNet on 3x32x32 inputs: conv3x3(3->64) + batch norm + ReLU, four basic residual blocks
(64, 64, 128 with stride 2 and a 1x1 projection, 128), global average pool, fc 128->10;
softmax cross-entropy, SGD with momentum 0.9, batch 32, batch norm in training mode,
float32.

A basic block is conv3x3 + BN + ReLU, conv3x3 + BN, plus the shortcut (the input, or its
1x1 strided projection + BN), then ReLU. Convolutions have no bias (batch norm follows).
The weights are named as the PyTorch module's state dict names them; portagrad's modules
carry the same names.
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

BATCH = 32
LR = 0.05
MOMENTUM = 0.9
N_BATCHES = 2
CLASSES = 10
# (in channels, out channels, stride) of the basic blocks
BLOCKS = ((64, 64, 1), (64, 64, 1), (64, 128, 2), (128, 128, 1))
TITLE = ("ResNet: conv3x3(3->64)+BN+ReLU, 4 basic blocks (64, 64, 128/2 + 1x1 projection, "
         "128), avg pool, fc 128->10; 3x32x32, batch 32, BN train, momentum SGD")
CHECK_RTOL = 1e-3


@dataclass
class Problem:
    """``state``: initial weights by state-dict name; batches (x NCHW, t)."""

    state: dict[str, np.ndarray]
    batches: list[tuple[np.ndarray, np.ndarray]]


def problem(seed: int, n_batches: int = N_BATCHES) -> Problem:
    rng = np.random.default_rng(seed)
    state: dict[str, np.ndarray] = {}

    def conv(name: str, c_in: int, c_out: int, k: int) -> None:
        state[f"{name}.weight"] = uniform(rng, (c_out, c_in, k, k), 1.0 / np.sqrt(c_in * k * k))

    def bn(name: str, c: int) -> None:
        state[f"{name}.weight"] = np.ones(c, np.float32)
        state[f"{name}.bias"] = np.zeros(c, np.float32)

    conv("stem", 3, 64, 3)
    bn("stem_bn", 64)
    for i, (c_in, c_out, stride) in enumerate(BLOCKS):
        conv(f"blocks.{i}.conv1", c_in, c_out, 3)
        bn(f"blocks.{i}.bn1", c_out)
        conv(f"blocks.{i}.conv2", c_out, c_out, 3)
        bn(f"blocks.{i}.bn2", c_out)
        if stride != 1 or c_in != c_out:
            conv(f"blocks.{i}.proj", c_in, c_out, 1)
            bn(f"blocks.{i}.proj_bn", c_out)
    state["fc.weight"] = uniform(rng, (CLASSES, 128), 1.0 / np.sqrt(128))
    state["fc.bias"] = uniform(rng, (CLASSES,), 1.0 / np.sqrt(128))
    teacher = rng.standard_normal((3 * 32 * 32, CLASSES)).astype(np.float32)
    batches = []
    for _ in range(n_batches):
        x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
        t = np.argmax(x.reshape(BATCH, -1) @ teacher, axis=1).astype(np.int64)
        batches.append((x, t))
    return Problem(state, batches)


def model(nn: Any, relu: Callable[[Any], Any], pool: Callable[[Any], Any]) -> Any:
    """The network in ``nn`` (``torch.nn`` or ``portagrad.nn``: the same names)."""

    class Block(nn.Module):
        def __init__(self, c_in: int, c_out: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.proj = None
            if stride != 1 or c_in != c_out:
                self.proj = nn.Conv2d(c_in, c_out, 1, stride, bias=False)
                self.proj_bn = nn.BatchNorm2d(c_out)

        def forward(self, x: Any) -> Any:
            h = relu(self.bn1(self.conv1(x)))
            h = self.bn2(self.conv2(h))
            return relu(h + (x if self.proj is None else self.proj_bn(self.proj(x))))

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
            self.stem_bn = nn.BatchNorm2d(64)
            self.blocks = nn.Sequential(*(Block(*b) for b in BLOCKS))
            self.fc = nn.Linear(128, CLASSES)

        def forward(self, x: Any) -> Any:
            h = self.blocks(relu(self.stem_bn(self.stem(x))))
            return self.fc(pool(h))

    return ResNet()


def _load(net: Any, state: dict[str, Any]) -> None:
    missing, unexpected = net.load_state_dict(state, strict=False)
    left = [k for k in missing if not k.endswith(("running_mean", "running_var",
                                                   "num_batches_tracked"))]
    if left or unexpected:
        raise RuntimeError(f"resnet: state names differ: missing {left}, "
                           f"unexpected {unexpected}")


def torch_resnet(cfg: Config) -> Callable[[int], float]:
    import torch

    device = Backend(cfg.backend).torch_device()
    prob = problem_of(cfg, problem)
    net = model(torch.nn, torch.relu, lambda h: h.mean((2, 3)))
    _load(net, {k: torch.from_numpy(v) for k, v in prob.state.items()})
    net.to(device).train()
    batches = [(torch.from_numpy(x).to(device), torch.from_numpy(t).to(device))
               for x, t in prob.batches]
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    return torch_sgd_steps(net, batches, LR, opt)


def portagrad_resnet(cfg: Config) -> Callable[[int], float]:
    import portagrad as pg

    backend = Backend(cfg.backend)
    prob = problem_of(cfg, problem)
    net = model(pg.nn, pg.ops.relu, lambda h: pg.ops.mean(h, axis=(2, 3)))
    _load(net, {k: backend.asarray(v) for k, v in prob.state.items()})
    net.train()
    batches = [(backend.asarray(x), backend.asarray(t)) for x, t in prob.batches]
    opt = pg.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    return portagrad_sgd_steps(net, batches, LR, opt)


BUILDERS = {"torch": torch_resnet, "portagrad": portagrad_resnet}
SPECS = training_specs(BUILDERS)


def run(cfg: Config) -> Result:
    """In one process (``run_benchmarks``): no hand-written NumPy version of this one."""
    return run_training("resnet", TITLE, cfg, BUILDERS, rtol=CHECK_RTOL)
