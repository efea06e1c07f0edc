"""Chainer 7's serialization example (a model and an optimizer saved as NPZ and HDF5 by
one program, loaded into new objects by another), changed from Chainer only in its
imports: the files hold Chainer's key layout, and both loads give the saved values."""

from __future__ import annotations

import h5py
import numpy as np
from test_examples_mnist import run

MODEL_KEYS = ["l1/W", "l1/b", "l2/W", "l2/b", "l3/W", "l3/b", "persistent"]


def _h5_flat(path):
    flat = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda k, v: flat.__setitem__(k, v[()])
                     if isinstance(v, h5py.Dataset) else None)
    return flat


def test_save_then_load_npz_and_hdf5(tmp_path):
    proc = run("serialization_save.py", root=tmp_path, cwd=tmp_path)
    assert "l1/W \t: (100, 784)" in proc.stdout
    assert "  W:(100, 784)" in proc.stdout and "persistent: (10, 10)" in proc.stdout
    with np.load(tmp_path / "model.npz") as npz:
        model = dict(npz)
    assert sorted(model) == MODEL_KEYS
    with np.load(tmp_path / "optimizer.npz") as npz:
        opt = dict(npz)
    per_param = [f"{k}/{s}" for k in MODEL_KEYS[:-1] for s in ("t", "v")]
    assert sorted(opt) == sorted(["epoch", "t", *per_param])
    assert int(opt["t"]) == 1 and int(opt["l1/W/t"]) == 1
    # The step moved the momentum buffers off zero.
    assert np.abs(opt["l1/W/v"]).max() > 0
    # HDF5 holds the same values, under the same names.
    for name, npz_values in (("model", model), ("optimizer", opt)):
        h5 = _h5_flat(tmp_path / f"{name}.h5")
        assert sorted(h5) == sorted(npz_values)
        for key, value in npz_values.items():
            np.testing.assert_array_equal(h5[key], value)

    proc = run("serialization_load.py", root=tmp_path, cwd=tmp_path)
    assert "model.npz and optimizer.npz loaded!" in proc.stdout
    assert "/l1/W (100, 784)" in proc.stdout and "/persistent (10, 10)" in proc.stdout
    assert "optimizer t: 1 1" in proc.stdout
    assert proc.stdout.strip().endswith("optimizer states are equal")
