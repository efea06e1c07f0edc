"""WGAN-GP on eight 2-D Gaussians: a gradient penalty is a gradient of a gradient.

The critic ``D`` is trained to maximise ``E[D(real)] - E[D(fake)]`` while keeping its
gradient norm near 1 on points between real and fake samples (Gulrajani et al., 2017):

    gp = E[(|| d D(x_hat) / d x_hat || - 1)^2]

The inner gradient is taken with ``pg.grad(..., create_graph=True)``; the penalty built
from it is then backpropagated into the critic's parameters, through the backward pass of
the critic (double backward). The generator maps Gaussian noise to the plane.

At the end it reports how many of the 8 modes the generator covers, the share of samples
near a mode and the energy distance to the real distribution, and draws the samples (and
the critic's landscape, with matplotlib) to a PNG.

    python examples/wgan_gp_toy.py                       # a few minutes on 2 CPU cores
    python examples/wgan_gp_toy.py --iterations 100 --backend array_api_strict
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
from _shared import Timer, add_backend_arguments, asarray, backend, host, save_png

import portagrad as pg
from portagrad import ops

SCALE = 2.0 / 1.414
CENTERS = SCALE * np.array([(math.cos(a), math.sin(a)) for a in np.arange(8) * math.pi / 4])
STD = 0.02 / 1.414
NEAR = 0.1  # a sample is "near" a mode within this distance (about 7 standard deviations)


def real_samples(rng: np.random.Generator, n: int) -> np.ndarray:
    k = rng.integers(0, 8, n)
    return (CENTERS[k] + rng.normal(0.0, STD, (n, 2))).astype(np.float32)


def lecun(model: pg.nn.Module, state: dict) -> pg.nn.Module:
    """LeCun-normal weights and zero biases in every Linear, drawn from the random
    ``state`` taken before the model was built (the initialization, and the draws, this
    example was tuned with)."""
    pg.random.set_state(state)
    for m in model.modules():
        if isinstance(m, pg.nn.Linear):
            pg.nn.init.kaiming_normal_(m.weight, nonlinearity="linear")
            pg.nn.init.zeros_(m.bias)
    return model


def mlp(hidden: int, n_out: int) -> pg.nn.Sequential:
    state = pg.random.get_state()
    return lecun(pg.nn.Sequential(pg.nn.Linear(2, hidden), pg.nn.ReLU(),
                                  pg.nn.Linear(hidden, hidden), pg.nn.ReLU(),
                                  pg.nn.Linear(hidden, hidden), pg.nn.ReLU(),
                                  pg.nn.Linear(hidden, n_out)), state)


def gradient_penalty(critic: pg.nn.Module, real: Any, fake: Any,
                     gen: pg.random.Generator) -> pg.Variable:
    eps = gen.uniform((real.shape[0], 1), like=real)
    x_hat = pg.Variable(eps * real + (1.0 - eps) * fake)
    (g,) = pg.grad(ops.sum(critic(x_hat)), x_hat, create_graph=True)
    norm = ops.sqrt(ops.sum(g * g, axis=1) + 1e-12)
    return ops.mean((norm - 1.0) ** 2)


def mode_stats(samples: np.ndarray) -> tuple[int, float]:
    """Modes with at least 1% of the samples near them, and the share of samples near one."""
    d = np.linalg.norm(samples[:, None, :] - CENTERS[None, :, :], axis=2)
    nearest, dist = d.argmin(axis=1), d.min(axis=1)
    good = dist < NEAR
    counts = np.bincount(nearest[good], minlength=8)
    return int((counts >= 0.01 * len(samples)).sum()), float(good.mean())


def energy_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``2 E|A-B| - E|A-A'| - E|B-B'|`` (zero iff the distributions are equal), unbiased."""
    def mean_dist(x: np.ndarray, y: np.ndarray) -> float:
        d = np.linalg.norm(x[:, None, :] - y[None, :, :], axis=2)
        if x is y:  # leave out the zero distances of each point to itself
            return float(d.sum() / (len(x) * (len(x) - 1)))
        return float(d.mean())
    return 2 * mean_dist(a, b) - mean_dist(a, a) - mean_dist(b, b)


def generate(generator: pg.nn.Module, n: int, gen: pg.random.Generator, xp: Any,
             device: Any, noise: int) -> np.ndarray:
    with pg.no_grad():
        return host(generator(gen.normal((n, noise), xp=xp, device=device)))


def draw(path: Path, fake: np.ndarray, real: np.ndarray, critic: pg.nn.Module, xp: Any,
         device: Any) -> Path:
    """Samples over the critic's values (matplotlib), or a plain density image (Pillow)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lim = 2.0
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # Without matplotlib: generated points white, real points grey, on black.
        size = 256
        img = np.zeros((size, size, 3), np.float32)
        for pts, value in ((real, 0.4), (fake, 1.0)):
            ij = ((pts + lim) / (2 * lim) * (size - 1)).round().astype(int)
            ok = ((ij >= 0) & (ij < size)).all(axis=1)
            img[size - 1 - ij[ok, 1], ij[ok, 0]] = value
        return save_png(path, img)
    grid = np.linspace(-lim, lim, 101, dtype=np.float32)
    gx, gy = np.meshgrid(grid, grid)
    with pg.no_grad():
        pts = asarray(np.stack([gx.ravel(), gy.ravel()], axis=1), xp, device)
        values = host(critic(pts)).reshape(gx.shape)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.contourf(gx, gy, values, levels=20, cmap="coolwarm", alpha=0.6)
    ax.scatter(real[:, 0], real[:, 1], s=2, c="black", label="real")
    ax.scatter(fake[:, 0], fake[:, 1], s=2, c="tab:green", label="generated")
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.legend(loc="upper right", markerscale=4)
    ax.set_title("WGAN-GP samples over the critic's values")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def train(iterations: int = 2000, critic_iters: int = 5, batch_size: int = 256,
          hidden: int = 128, noise: int = 2, lr: float = 1e-3, gp_weight: float = 0.1,
          backend_name: str = "numpy", device: str = "cpu", seed: int = 0,
          log_every: int = 500, out: str | None = "result/wgan_gp_toy") -> dict:
    """``iterations`` generator updates, each after ``critic_iters`` critic updates."""
    xp, dev = backend(backend_name, device)
    pg.random.seed(seed)
    gen = pg.random.Generator(seed)
    rng = np.random.default_rng(seed)
    generator, critic = mlp(hidden, 2).to_device(dev, xp), mlp(hidden, 1).to_device(dev, xp)
    opt_g = pg.optim.Adam(generator, lr=lr, betas=(0.5, 0.9))
    opt_d = pg.optim.Adam(critic, lr=lr, betas=(0.5, 0.9))
    eval_real = real_samples(np.random.default_rng(seed + 1), 1000)
    before = generate(generator, 1000, gen, xp, dev, noise)
    timer, w_history = Timer(), []
    for it in range(1, iterations + 1):
        # The learning rates decay linearly to 0, which settles the two-player oscillation.
        opt_g.lr = opt_d.lr = lr * (1.0 - (it - 1) / iterations)
        for _ in range(critic_iters):
            real = asarray(real_samples(rng, batch_size), xp, dev)
            with pg.no_grad():
                fake = generator(gen.normal((batch_size, noise), like=real)).array
            w = ops.mean(critic(real)) - ops.mean(critic(fake))
            loss_d = -w + gp_weight * gradient_penalty(critic, real, fake, gen)
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
        z = gen.normal((batch_size, noise), xp=xp, device=dev)
        loss_g = -ops.mean(critic(generator(z)))
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        w_history.append(float(w.array))
        if log_every and it % log_every == 0:
            fake_np = generate(generator, 1000, gen, xp, dev, noise)
            modes, near = mode_stats(fake_np)
            print(f"iteration {it:5d}  critic's W estimate {np.mean(w_history[-100:]):.3f}  "
                  f"modes {modes}/8  near a mode {near:.2f}  energy distance "
                  f"{energy_distance(fake_np, eval_real):.4f}  {float(timer):5.0f} s")
    seconds = float(timer)
    fake_np = generate(generator, 1000, gen, xp, dev, noise)
    modes, near = mode_stats(fake_np)
    png = draw(Path(out) / "samples.png", fake_np, eval_real, critic, xp, dev) if out else None
    return {"modes": modes, "near": near, "energy": energy_distance(fake_np, eval_real),
            "energy_before": energy_distance(before, eval_real),
            # Two samples of the data itself differ by this much: the noise of the estimate.
            "energy_floor": energy_distance(real_samples(np.random.default_rng(seed + 2), 1000),
                                            eval_real),
            "w_history": w_history,
            "seconds": seconds, "png": png, "samples": fake_np}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2000, help="generator updates")
    ap.add_argument("--critic-iters", type=int, default=5, help="critic updates per one")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--gp-weight", type=float, default=0.1, help="lambda of the penalty")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/wgan_gp_toy", help="folder of samples.png")
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    r = train(args.iterations, args.critic_iters, args.batch_size, args.hidden, lr=args.lr,
              gp_weight=args.gp_weight, backend_name=args.backend, device=args.device,
              seed=args.seed, log_every=max(args.iterations // 10, 1), out=args.out)
    print(f"modes covered {r['modes']}/8, samples near a mode {r['near']:.2f}, energy distance "
          f"to the data {r['energy']:.4f} (untrained {r['energy_before']:.4f}, between two "
          f"samples of the data {r['energy_floor']:.4f}) after {args.iterations} generator "
          f"updates, {r['seconds']:.0f} s; picture in {r['png']}")
    return r


if __name__ == "__main__":
    main()
