"""Per-op overhead: 1000 chained ``y = y * w + b`` on 4-element float32 arrays, with backward.

The arrays are so small that the time is the framework's own: recording two ops per link,
then running their vjps. The NumPy variant makes the raw ufunc calls of the same forward
and backward math, with no framework at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import (
    IMPLS,
    Backend,
    Config,
    Result,
    Spec,
    check_close,
    problem_of,
    rows_from_times,
    speed_target,
)
from ._timing import interleave

N_LINKS = 1000  # chained y = y*w + b, two ops each
N_OPS = 2 * N_LINKS
TITLE = f"per-op overhead: {N_LINKS} chained y = y*w + b on 4 elements, forward + backward"


def _data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.9, 1.0, 4).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, 4).astype(np.float32)
    x = rng.standard_normal(4).astype(np.float32)
    return w, b, x


def numpy_chain(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of ``sum(y)`` with respect to ``w`` and ``b``, one ufunc call per op."""
    ys = [x]
    y = x
    for _ in range(N_LINKS):
        y = np.multiply(y, w)
        y = np.add(y, b)
        ys.append(y)
    g = np.ones_like(y)
    gw = np.zeros_like(w)
    gb = np.zeros_like(b)
    for i in range(N_LINKS, 0, -1):
        gb = np.add(gb, g)
        gw = np.add(gw, np.multiply(g, ys[i - 1]))
        g = np.multiply(g, w)
    return gw, gb


def _numpy(cfg: Config) -> Callable[[], Any]:
    w, b, x = problem_of(cfg, _data)
    return lambda: numpy_chain(w, b, x)


def _torch(cfg: Config) -> Callable[[], Any]:
    import torch

    device = Backend(cfg.backend).torch_device()
    w_h, b_h, x_h = problem_of(cfg, _data)
    w = torch.tensor(w_h, requires_grad=True, device=device)
    b = torch.tensor(b_h, requires_grad=True, device=device)
    x = torch.tensor(x_h, device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def chain() -> Any:
        w.grad = None
        b.grad = None
        y = x
        for _ in range(N_LINKS):
            y = y * w + b
        y.sum().backward()
        sync()
        return w.grad, b.grad

    return chain


def _portagrad(cfg: Config) -> Callable[[], Any]:
    import portagrad as pg

    backend = Backend(cfg.backend)
    w_h, b_h, x_h = problem_of(cfg, _data)
    w = pg.Variable(backend.asarray(w_h))
    b = pg.Variable(backend.asarray(b_h))
    x = pg.Variable(backend.asarray(x_h), requires_grad=False)
    total = pg.ops.sum

    def chain() -> Any:
        w.cleargrad()
        b.cleargrad()
        y = x
        for _ in range(N_LINKS):
            y = y * w + b
        total(y).backward()
        backend.sync()
        return w.grad, b.grad

    return chain


def _host(a: Any) -> np.ndarray:
    if hasattr(a, "detach"):
        return a.detach().cpu().numpy()
    if hasattr(a, "get"):
        return a.get()
    return np.asarray(a)


def _spec(impl: str, build: Callable[[Config], Callable[[], Any]]) -> Spec:
    def unit(cfg: Config) -> tuple[Callable[[], Any], Callable[[], Any]]:
        chain = build(cfg)
        return (lambda: np.concatenate([_host(g) for g in chain()])), chain

    return Spec(impl, unit)


problem = _data
SPECS = {impl: _spec(impl, build) for impl, build in
         (("numpy", _numpy), ("torch", _torch), ("portagrad", _portagrad))}
CHECK_RTOL = 1e-5
CHECK = "close"


def run(cfg: Config) -> Result:
    builders = {"numpy": _numpy, "torch": _torch, "portagrad": _portagrad}
    impls = [i for i in IMPLS if i != "torch" or cfg.use_torch()]
    chains = {impl: builders[impl](cfg) for impl in impls}
    result = Result("dispatch", TITLE)
    grads = {impl: np.concatenate([_host(g) for g in chains[impl]()]) for impl in impls}
    result.checks.append(check_close("dispatch", "gradient of w and b", grads, rtol=1e-5))
    times = interleave(chains, rounds=cfg.steps, warmup=cfg.warmup)
    has_torch = "torch" in impls
    result.rows = rows_from_times(times, {i: i for i in impls}, "numpy",
                                  "torch" if has_torch else None)
    for r in result.rows:
        r.variant = "numpy (raw ufunc calls)" if r.impl == "numpy" else r.impl
    result.notes.append(
        "per op (" + ", ".join(f"{r.impl} {r.value * 1e3 / N_OPS:.2f} us"
                               for r in result.rows) + f"), {N_OPS} ops per chain")
    result.targets.append(speed_target(result, "dispatch / PyTorch", "portagrad", "torch", 1.0,
                                       cfg))
    return result
