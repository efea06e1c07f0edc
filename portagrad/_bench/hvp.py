"""Hessian-vector product of the MLP loss, against a plain forward + backward.

Two products are timed, each in the same rounds as a forward + backward of the same
implementation, and reported as ratios to it:

- ``hvp``: a product from scratch (forward, gradient and product in one call).
  portagrad calls :func:`portagrad.hvp` on the model as a function of its weights
  (``pg.nn.functional_call``): reverse-over-forward, the gradient of the directional
  derivative that one forward pass in forward mode records. PyTorch differentiates the
  gradient again (double backward, ``create_graph=True``; its reverse-over-forward with
  ``torch.func``, ``grad`` of ``jvp``, measured within 5 % of it). Hand-written NumPy
  computes the product in one forward and backward pass plus Pearlmutter's R-pass
  (forward-over-reverse), skipping the weight gradients themselves.
- ``hvp at a point``: one more product at weights and a batch whose gradient graph is
  kept, the inner step of conjugate gradients (Hessian-free optimization), Lanczos or
  power iteration on the Hessian (PyHessian): portagrad and PyTorch differentiate the
  kept gradient (``create_graph=True`` once) with ``grad_outputs=v`` and
  ``retain_graph=True``; NumPy runs the R-pass on the activations and gradients it kept.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import mlp
from ._common import Backend, Config, Result, Row, Spec, Target, check_close, problem_of, uniform
from ._timing import interleave, paired_ratios

TITLE = "Hessian-vector product of the MLP loss / plain forward + backward"


def direction(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The vector ``v`` of the product: one (vW, vb) pair per layer, float32."""
    rng = np.random.default_rng(seed + 1)
    return [(uniform(rng, w.shape, 1.0), uniform(rng, b.shape, 1.0))
            for w, b in mlp.problem(seed, n_batches=1).params]


@dataclass
class Problem:
    """The MLP's weights and one batch (``mlp``), and the direction ``v`` of the product."""

    mlp: mlp.Problem
    v: list[tuple[np.ndarray, np.ndarray]]


def problem(seed: int) -> Problem:
    return Problem(mlp.problem(seed, n_batches=1), direction(seed))


# -- hand-written NumPy -------------------------------------------------------------------
def numpy_r_forward(params: list, v: list, x: np.ndarray) -> tuple[list, list]:
    """The MLP's forward pass with its R-forward (``R{a}``, the directional derivative of
    each activation ``a`` along ``v``): the activations and their R's, input first, the
    logits last. ReLU's masks are constants of the R-pass (its second derivative is 0)."""
    n_layers = len(params)
    hs = [x]
    rhs: list[np.ndarray | None] = [None]
    h, rh = x, None
    for i, ((w, b), (vw, vb)) in enumerate(zip(params, v)):
        a = h @ w.T
        a += b
        ra = h @ vw.T
        ra += vb
        if rh is not None:
            ra += rh @ w.T
        if i < n_layers - 1:
            mask = a > 0
            a *= mask
            ra *= mask
        hs.append(a)
        rhs.append(ra)
        h, rh = a, ra
    return hs, rhs


def numpy_hvp(params: list, v: list, x: np.ndarray, t: np.ndarray) -> list:
    """H v for the MLP cross-entropy, H the Hessian with respect to every W and b: the
    R-forward, then the backward pass with its R-backward."""
    n_layers = len(params)
    hs, rhs = numpy_r_forward(params, v, x)
    h, rh = hs[-1], rhs[-1]
    n = x.shape[0]
    z = h - h.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    g = p.copy()
    g[np.arange(n), t] -= 1.0
    g *= np.float32(1.0 / n)
    rg = rh - (p * rh).sum(axis=1, keepdims=True)
    rg *= p
    rg *= np.float32(1.0 / n)
    out = []
    for i in range(n_layers - 1, -1, -1):
        (w, _), (vw, _) = params[i], v[i]
        hin, rhin = hs[i], rhs[i]
        rgw = rg.T @ hin
        if rhin is not None:
            rgw += g.T @ rhin
        out.append((rgw, rg.sum(axis=0)))
        if i > 0:
            mask = hin > 0
            new_rg = rg @ w
            new_rg += g @ vw
            new_rg *= mask
            if i > 1:  # the first layer's R-backward needs no g (its input is constant)
                g = g @ w
                g *= mask
            rg = new_rg
    out.reverse()
    return out


def numpy_point(params: list, x: np.ndarray, t: np.ndarray) -> tuple[list, np.ndarray, list]:
    """What products at one point reuse: the activations (input first, logits last), the
    softmax probabilities, and the loss's gradient with respect to each layer's output
    (the first layer's is not needed)."""
    n_layers = len(params)
    hs = [x]
    h = x
    for i, (w, b) in enumerate(params):
        a = h @ w.T
        a += b
        if i < n_layers - 1:
            np.maximum(a, 0.0, out=a)
        hs.append(a)
        h = a
    z = h - h.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    g = p.copy()
    g[np.arange(x.shape[0]), t] -= 1.0
    g *= np.float32(1.0 / x.shape[0])
    gs = [g]
    for i in range(n_layers - 1, 1, -1):
        g = g @ params[i][0]
        g *= hs[i] > 0
        gs.append(g)
    gs.reverse()
    return hs, p, [None, *gs]


def numpy_hvp_at(params: list, point: tuple[list, np.ndarray, list], v: list) -> list:
    """H v at the point :func:`numpy_point` kept: the R-forward from the kept activations,
    then the R-backward with the kept gradients."""
    hs, p, gs = point
    n_layers = len(params)
    rhs: list[np.ndarray | None] = [None]
    rh = None
    for i, ((w, _), (vw, vb)) in enumerate(zip(params, v)):
        ra = hs[i] @ vw.T
        ra += vb
        if rh is not None:
            ra += rh @ w.T
        if i < n_layers - 1:
            ra *= hs[i + 1] > 0
        rhs.append(ra)
        rh = ra
    rg = rh - (p * rh).sum(axis=1, keepdims=True)
    rg *= p
    rg *= np.float32(1.0 / hs[0].shape[0])
    out = []
    for i in range(n_layers - 1, -1, -1):
        (w, _), (vw, _) = params[i], v[i]
        g = gs[i]
        rgw = rg.T @ hs[i]
        if rhs[i] is not None:
            rgw += g.T @ rhs[i]
        out.append((rgw, rg.sum(axis=0)))
        if i > 0:
            new_rg = rg @ w
            new_rg += g @ vw
            new_rg *= hs[i] > 0
            rg = new_rg
    out.reverse()
    return out


Variants = tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any]]


def _numpy(cfg: Config) -> Variants:
    whole = problem_of(cfg, problem)
    prob = whole.mlp
    params = [[w.copy(), b.copy()] for w, b in prob.params]
    v = whole.v
    x, t = prob.batches[0]
    point = numpy_point(params, x, t)

    def fwd_bwd() -> Any:
        return mlp.numpy_forward_backward(params, x, t)[1]

    def hvp() -> Any:
        return numpy_hvp(params, v, x, t)

    def hvp_at() -> Any:
        return numpy_hvp_at(params, point, v)

    return fwd_bwd, hvp, hvp_at


# -- PyTorch ------------------------------------------------------------------------------
def _torch(cfg: Config) -> Variants:
    import torch

    device = Backend(cfg.backend).torch_device()
    whole = problem_of(cfg, problem)
    prob = whole.mlp
    model = mlp.torch_model(prob, device)
    params = [p for lin in model if isinstance(lin, torch.nn.Linear)
              for p in (lin.weight, lin.bias)]
    v = [torch.from_numpy(a).to(device) for pair in whole.v for a in pair]
    x, t = (torch.from_numpy(a).to(device) for a in prob.batches[0])
    xent = torch.nn.functional.cross_entropy
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def fwd_bwd() -> Any:
        gs = torch.autograd.grad(xent(model(x), t), params)
        sync()
        return gs

    def hvp() -> Any:
        gs = torch.autograd.grad(xent(model(x), t), params, create_graph=True)
        dot = sum((g * vi).sum() for g, vi in zip(gs, v))
        hv = torch.autograd.grad(dot, params)
        sync()
        return hv

    kept = torch.autograd.grad(xent(model(x), t), params, create_graph=True)

    def hvp_at() -> Any:
        hv = torch.autograd.grad(kept, params, grad_outputs=v, retain_graph=True)
        sync()
        return hv

    return fwd_bwd, hvp, hvp_at


# -- portagrad ----------------------------------------------------------------------------
def _portagrad(cfg: Config) -> Variants:
    import portagrad as pg

    backend = Backend(cfg.backend)
    whole = problem_of(cfg, problem)
    prob = whole.mlp
    model = mlp.portagrad_model(prob, backend)
    params = mlp.portagrad_params(model)
    v = [backend.asarray(a) for pair in whole.v for a in pair]
    x, t = (backend.asarray(a) for a in prob.batches[0])
    xent = pg.ops.softmax_cross_entropy
    names = [n for n, p in model.named_parameters()]
    arrays = tuple(p.array for p in params)
    assert names == [n for n, p in model.named_parameters() if any(p is q for q in params)]

    def loss(*weights: Any) -> Any:
        return xent(pg.nn.functional_call(model, dict(zip(names, weights)), (x,)), t)

    def fwd_bwd() -> Any:
        gs = pg.grad(xent(model(x), t), params)
        backend.sync()
        return gs

    def hvp() -> Any:
        hv = pg.hvp(loss, arrays, tuple(v))[1]
        backend.sync()
        return hv

    kept = pg.grad(xent(model(x), t), params, create_graph=True)

    def hvp_at() -> Any:
        hv = pg.grad(kept, params, grad_outputs=v, retain_graph=True)
        backend.sync()
        return hv

    return fwd_bwd, hvp, hvp_at


def _flat(obj: Any) -> np.ndarray:
    """One float64 host vector from nested lists/tuples of arrays or Variables."""
    if isinstance(obj, (list, tuple)):
        return np.concatenate([_flat(o) for o in obj])
    a = getattr(obj, "array", obj)  # a portagrad Variable
    if hasattr(a, "detach"):  # torch
        a = a.detach().cpu().numpy()
    elif hasattr(a, "get"):  # cupy
        a = a.get()
    return np.asarray(a, dtype=np.float64).ravel()


KINDS = ("fwd+bwd", "hvp", "hvp at a point")


def _spec(impl: str, build: Callable[[Config], Variants], k: int) -> Spec:
    def unit(cfg: Config) -> tuple[Callable[[], Any], Callable[[], Any]]:
        fn = build(cfg)[k]
        return (lambda: _flat(fn())), fn

    return Spec(impl, unit, KINDS[k])


SPECS = {s.name: s for s in (_spec(impl, build, k) for impl, build in
                             (("numpy", _numpy), ("torch", _torch),
                              ("portagrad", _portagrad)) for k in range(len(KINDS)))}
# What the checks compare: H v at rtol 1e-3, the gradient at 1e-4.
CHECK_RTOL = {"fwd+bwd": 1e-4, "hvp": 1e-3, "hvp at a point": 1e-3}
CHECK = "close"
RATIO_GOALS = [("hvp at a point", "fwd+bwd", 1.6,
                "HVP at a point / (forward+backward), portagrad")]


def run(cfg: Config) -> Result:
    builders = {"numpy": _numpy, "portagrad": _portagrad}
    if cfg.use_torch():
        builders = {"numpy": _numpy, "torch": _torch, "portagrad": _portagrad}
    fns = {impl: dict(zip(KINDS, build(cfg))) for impl, build in builders.items()}
    result = Result("hvp", TITLE)
    for kind in ("hvp", "hvp at a point"):
        hv = {impl: _flat(f[kind]()) for impl, f in fns.items()}
        result.checks.append(check_close("hvp", f"H v ({kind})", hv, rtol=1e-3))
    grads = {impl: _flat(f["fwd+bwd"]()) for impl, f in fns.items()}
    result.checks.append(check_close("hvp", "gradient", grads, rtol=1e-4))

    variants = {f"{impl} {kind}": f[kind] for impl, f in fns.items() for kind in KINDS}
    times = interleave(variants, rounds=cfg.steps, warmup=cfg.warmup)
    has_torch = "torch" in fns
    for impl in fns:
        for kind in KINDS:
            ts = times[f"{impl} {kind}"]
            result.rows.append(Row(
                variant=f"{impl} {kind}", impl=impl, value=statistics.median(ts) * 1e3,
                vs_numpy=paired_ratios(ts, times[f"numpy {kind}"]),
                vs_torch=paired_ratios(ts, times[f"torch {kind}"]) if has_torch else None,
                best=min(ts) * 1e3))
    ratios: dict[tuple[str, str], tuple[float, float]] = {}
    for kind in ("hvp", "hvp at a point"):
        for impl in fns:
            num, den = times[f"{impl} {kind}"], times[f"{impl} fwd+bwd"]
            lo, mid, hi = paired_ratios(num, den)
            best = min(num) / min(den)
            ratios[impl, kind] = (mid, best)
            result.rows.append(Row(variant=f"{impl} {kind}/(fwd+bwd)", impl=impl, value=mid,
                                   unit="x", spread=(lo, hi), best=best))
    # The goal is judged at a point: the reference figures for this ratio (PyTorch 1.6x,
    # Chainer 1.7x, hand-written NumPy 1.8x) lie below what any exact product from scratch
    # costs in multiply-adds alone (2.05x; PyTorch's double backward 2.66x), and are what
    # the product at a point measures (PyTorch and NumPy 1.6-1.75x here).
    mid, best = ratios["portagrad", "hvp at a point"]
    result.targets.append(Target("HVP at a point / (forward+backward), portagrad", mid, 1.6,
                                 best=best))
    mid, best = ratios["portagrad", "hvp"]
    result.notes.append(
        f"HVP from scratch / (forward+backward), portagrad: {mid:.2f} [{best:.2f}]; no goal: "
        "an exact product from scratch costs at least 2.05x in multiply-adds "
        "(benchmarks/README.md)")
    return result
