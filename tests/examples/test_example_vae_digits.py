"""The VAE example, shortened: the test ELBO rises; the picture is written."""

import math

import numpy as np

import portagrad as pg


def test_vae_learns(load_example, backend, tmp_path):
    ex = load_example("vae_digits")
    strict = backend[0] == "array_api_strict"
    r = ex.train(epochs=2 if strict else 8, hidden=64, lr=3e-3, backend_name=backend[0],
                 device=backend[1], log_every=0, out=str(tmp_path))
    # 64 binary pixels at probability 1/2 would score 64 log(1/2) = -44.4 nats.
    assert r["initial_elbo"] < -40
    # Measured gains: 24 nats (2 epochs) and 29 nats (8 epochs).
    assert r["elbo"] > r["initial_elbo"] + (15 if strict else 20)
    from PIL import Image

    with Image.open(r["png"]) as img:
        # 10 test digits, 10 reconstructions, 30 samples, each group labelled on the left.
        assert img.size == (1200, 720)
        gray = np.asarray(img.convert("L"), dtype=np.float32)
    # The row labels are dark text in the left margin; the digits start right of them.
    assert gray[80:700, :150].min() < 100
    assert gray[:, :3].min() > 200


def test_elbo_terms_against_closed_form(load_example):
    ex = load_example("vae_digits")
    model = ex.VAE(4, 3, 2)
    for layer in (model.mu, model.ln_var):
        layer.weight.set_array(np.zeros_like(layer.weight.array))
    model.mu.bias.set_array(np.array([1.0, -2.0], np.float32))
    model.ln_var.bias.set_array(np.array([0.0, math.log(4.0)], np.float32))
    x = np.array([[1.0, 0.0, 1.0, 1.0]], np.float32)
    log_px, kl = model.elbo(x, pg.random.Generator(0))
    # KL(N(mu, s^2) || N(0, 1)) = (mu^2 + s^2 - log s^2 - 1) / 2 per dimension.
    expected = 0.5 * (1.0 + 1.0 - 0.0 - 1.0) + 0.5 * (4.0 + 4.0 - math.log(4.0) - 1.0)
    np.testing.assert_allclose(kl.array, [expected], rtol=1e-6)
    assert float(log_px.array[0]) < 0.0
