"""Variational autoencoder on the bundled 8x8 digits: ELBO, reconstructions and samples.

The digits are binarized (pixel > 0.5), so the decoder is a product of Bernoullis and the
ELBO is a lower bound on the log-likelihood of the test images, in nats:

    ELBO(x) = E_q(z|x)[log p(x|z)] - KL(q(z|x) || N(0, I))

with a Gaussian encoder ``q(z|x) = N(mu(x), exp(ln_var(x)))`` and the reparameterization
``z = mu + exp(ln_var / 2) * eps``, ``eps`` drawn by ``portagrad.random`` in the data's own
library and device. Coin flips would score 64 log(1/2) = -44.4 nats; the untrained model
scores about -52. The PNG shows test digits, their reconstructions and digits decoded
from prior samples.

    python examples/vae_digits.py                       # 15 seconds on 2 CPU cores
    python examples/vae_digits.py --epochs 5 --backend array_api_strict
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
from _shared import Timer, add_backend_arguments, asarray, backend, host, tile

import portagrad as pg
from portagrad import ops


class VAE(pg.nn.Module):
    def __init__(self, n_in: int = 64, hidden: int = 256, latent: int = 8) -> None:
        self.encoder = pg.nn.Sequential(pg.nn.Linear(n_in, hidden), pg.nn.ReLU())
        self.mu = pg.nn.Linear(hidden, latent)
        self.ln_var = pg.nn.Linear(hidden, latent)
        self.decoder = pg.nn.Sequential(pg.nn.Linear(latent, hidden), pg.nn.ReLU(),
                                        pg.nn.Linear(hidden, n_in))
        self.latent = latent

    def encode(self, x: Any) -> tuple[pg.Variable, pg.Variable]:
        h = self.encoder(x)
        return self.mu(h), self.ln_var(h)

    def decode(self, z: Any) -> pg.Variable:
        """Bernoulli logits of every pixel."""
        return self.decoder(z)

    def elbo(self, x: Any, gen: pg.random.Generator) -> tuple[pg.Variable, pg.Variable]:
        """Per-image reconstruction term ``E_q[log p(x|z)]`` and KL, each ``(N,)``."""
        mu, ln_var = self.encode(x)
        eps = gen.normal(mu.shape, like=mu)
        z = mu + ops.exp(ln_var * 0.5) * eps
        log_px = -ops.sum(ops.sigmoid_cross_entropy(self.decode(z), x, reduction="none"),
                          axis=1)
        kl = ops.sum(mu * mu + ops.exp(ln_var) - ln_var - 1.0, axis=1) * 0.5
        return log_px, kl


def load(xp: Any, device: Any) -> tuple[Any, Any]:
    train, test = pg.data.load_digits()
    binarize = lambda d: (d.columns[0] > 0.5).astype(np.float32)  # noqa: E731
    return asarray(binarize(train), xp, device), asarray(binarize(test), xp, device)


def test_elbo(model: VAE, x: Any, gen: pg.random.Generator, samples: int = 10) -> float:
    """Mean ELBO per test image (nats), averaged over ``samples`` draws of ``z``."""
    with pg.no_grad():
        vals = []
        for _ in range(samples):
            log_px, kl = model.elbo(x, gen)
            vals.append(float(ops.mean(log_px - kl).array))
    return float(np.mean(vals))


def picture(model: VAE, x_test: Any, gen: pg.random.Generator, path: Path) -> Path:
    """Rows: 10 test digits, their reconstructions (means), then 30 prior samples, each
    group labelled, 1200x720 pixels."""
    with pg.no_grad():
        x = x_test[:10, ...]
        mu, _ = model.encode(x)
        recon = ops.sigmoid(model.decode(mu))
        z = gen.normal((30, model.latent), like=mu)
        samples = ops.sigmoid(model.decode(z))
    groups = [("test digits", host(x)), ("reconstructions", host(recon)),
              ("prior samples", host(samples))]
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("drawing samples.png needs matplotlib: pip install "
                         "'portagrad[examples]'") from None
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    # Panel heights in the tiles' own pixels (9 per row of digits, plus the border), so
    # that every digit is drawn at the same size and the panels leave no gaps.
    heights = [9 * (len(images) // 10) + 1 for _, images in groups]
    fig = Figure(figsize=(8, 4.8), dpi=150, layout="constrained")
    axes = fig.subplots(len(groups), 1, gridspec_kw={"height_ratios": heights})
    for ax, (label, images) in zip(axes, groups):
        ax.imshow(tile(images.reshape(-1, 8, 8), cols=10, scale=1), cmap="gray",
                  vmin=0.0, vmax=1.0, interpolation="nearest")
        ax.set_ylabel(label, rotation=0, ha="right", va="center", fontsize=11)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"VAE on 8x8 digits (latent size {model.latent})", fontsize=13)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def train(epochs: int = 300, batch_size: int = 64, hidden: int = 256, latent: int = 8,
          lr: float = 1e-3, backend_name: str = "numpy", device: str = "cpu", seed: int = 0,
          log_every: int = 50, out: str | None = "result/vae_digits") -> dict:
    xp, dev = backend(backend_name, device)
    pg.random.seed(seed)
    gen = pg.random.Generator(seed)
    x_train, x_test = load(xp, dev)
    model = VAE(x_train.shape[1], hidden, latent).to_device(dev, xp)
    opt = pg.optim.Adam(model, lr=lr)
    initial = test_elbo(model, x_test, gen)
    timer, history = Timer(), []
    n = x_train.shape[0]
    for epoch in range(1, epochs + 1):
        perm = gen.permutation(n, xp=xp, device=dev)
        total = 0.0
        for i in range(0, n, batch_size):
            x = xp.take(x_train, perm[i:min(i + batch_size, n)], axis=0)
            log_px, kl = model.elbo(x, gen)
            loss = -ops.mean(log_px - kl)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.array) * x.shape[0]
        history.append(-total / n)
        if log_every and epoch % log_every == 0:
            print(f"epoch {epoch:4d}  train ELBO {history[-1]:7.2f}  test ELBO "
                  f"{test_elbo(model, x_test, gen):7.2f}  {float(timer):5.0f} s")
    seconds = float(timer)
    final = test_elbo(model, x_test, gen)
    png = picture(model, x_test, gen, Path(out) / "samples.png") if out else None
    return {"initial_elbo": initial, "elbo": final, "history": history, "seconds": seconds,
            "png": png, "model": model}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--latent", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/vae_digits", help="folder of samples.png")
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    r = train(args.epochs, args.batch_size, args.hidden, args.latent, args.lr, args.backend,
              args.device, args.seed, out=args.out)
    print(f"test ELBO {r['elbo']:.2f} nats per digit (untrained {r['initial_elbo']:.2f}; "
          f"{-r['elbo'] / 64 / math.log(2):.3f} bits per pixel) after {args.epochs} epochs, "
          f"{r['seconds']:.0f} s; samples in {r['png']}")
    return r


if __name__ == "__main__":
    main()
