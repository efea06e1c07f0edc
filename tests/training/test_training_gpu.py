"""Training on a CUDA device through CuPy (skips without CuPy and a device)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg


def _devices() -> int:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy, no driver or no device
        return 0


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(_devices() == 0, reason="needs CuPy and a CUDA device")]


def test_cli_trains_on_cuda(tmp_path, capsys):
    from portagrad.cli import main

    rc = main(["train", "--quiet", "--device", "cuda:0", "--epochs", "3", "--out",
               str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    acc = float(next(s for s in out.splitlines() if s.startswith("test accuracy:")).split()[2])
    assert acc > 0.9
    state = pg.io.load(tmp_path / "model.safetensors")
    assert state["0.weight"].shape == (256, 64)


def test_model_moves_between_host_and_device():
    import cupy

    model = pg.nn.Sequential(pg.nn.Linear(4, 3), pg.nn.BatchNorm1d(3))
    x = np.ones((2, 4), np.float32)
    ref = model(x).array
    opt = pg.optim.Adam(model)
    model.to_device("cuda:0")
    assert all(isinstance(p.array, cupy.ndarray) for p in model.parameters())
    y = model(cupy.asarray(x))
    np.testing.assert_allclose(cupy.asnumpy(y.array), ref, rtol=1e-5)
    pg.ops.sum(y).backward()
    opt.step()
    assert isinstance(opt.state_dict()["state"]["0.weight"]["m"], cupy.ndarray)
    model.to_device("cpu")
    assert all(isinstance(p.array, np.ndarray) for p in model.parameters())
