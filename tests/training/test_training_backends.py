"""The same model code trains on NumPy, array-api-strict and torch to the same accuracy."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import portagrad as pg
from portagrad._cli.train import build_model
from portagrad.training import extensions as E


def _train(xp, device, tmp_path, model_kind="mlp", epochs=2):
    pg.random.seed(0)
    train, test = pg.data.load_digits(ndim=3 if model_kind == "cnn" else 1)
    model = pg.training.Classifier(build_model(model_kind))
    opt = pg.optim.Adam(model, lr=4e-3)
    it = pg.data.SerialIterator(train, 128, seed=0)
    up = pg.training.StandardUpdater(it, opt, xp=xp, device=device)
    trainer = pg.training.Trainer(up, (epochs, "epoch"), out=tmp_path)
    ev = E.Evaluator(pg.data.SerialIterator(test, 512, repeat=False, shuffle=False), model,
                     xp=xp, device=device)
    trainer.run()
    for p in model.parameters():
        assert pg.xp.namespace_of(p.array) is xp
    return ev.evaluate()["main/accuracy"]


def _backends():
    import array_api_compat.numpy as np_xp
    import array_api_strict as strict

    out = [("numpy", np_xp, "cpu"), ("array_api_strict", strict, strict.Device("device1"))]
    if importlib.util.find_spec("torch") is not None:
        import array_api_compat.torch as torch_xp

        out.append(("torch", torch_xp, "cpu"))
    return out


@pytest.mark.slow
def test_mlp_accuracy_agrees_across_backends(tmp_path):
    acc = {name: _train(xp, dev, tmp_path / name) for name, xp, dev in _backends()}
    assert acc["numpy"] > 0.85
    # NumPy and array-api-strict draw the same numbers from the same host generator.
    assert acc["array_api_strict"] == pytest.approx(acc["numpy"], abs=0.01)
    if "torch" in acc:  # torch has its own generator: same code, other draws
        assert acc["torch"] == pytest.approx(acc["numpy"], abs=0.04)


def test_cnn_runs_on_array_api_strict(tmp_path):
    import array_api_strict as strict

    dev = strict.Device("device1")
    pg.random.seed(0)
    model = build_model("cnn")
    x = pg.xp.from_numpy(np.ones((2, 1, 8, 8), np.float32), xp=strict, device=dev)
    y = model(x)
    assert y.shape == (2, 10) and y.array.device == dev
    assert all(p.array.device == dev for p in model.parameters())
