"""Checkpoints: the safetensors layout, atomic writes, strict loading, nested states."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

import portagrad as pg


def _model():
    pg.random.seed(0)
    m = pg.nn.Sequential(pg.nn.Linear(3, 4), pg.nn.ReLU(), pg.nn.Linear(4, 2))
    m.register_buffer("count", np.arange(3, dtype=np.int32))
    return m


def test_layout_is_safetensors(tmp_path):
    path = tmp_path / "m.safetensors"
    m = _model()
    pg.io.save(path, m)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert (8 + n) % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"]["format"] == "pt"
    assert set(header) - {"__metadata__"} == {"0.weight", "0.bias", "2.weight", "2.bias",
                                               "count"}
    info = header["0.weight"]
    assert info["dtype"] == "F32" and info["shape"] == [4, 3]
    b, e = info["data_offsets"]
    stored = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<f4").reshape(4, 3)
    np.testing.assert_array_equal(stored, m[0].weight.array)
    assert header["count"]["dtype"] == "I32"


def test_module_round_trip_into_other_library(tmp_path):
    import array_api_strict as xps

    path = tmp_path / "m.safetensors"
    src = _model()
    pg.io.save(path, src)
    dst = pg.nn.Sequential(pg.nn.LazyLinear(4), pg.nn.ReLU(), pg.nn.LazyLinear(2))
    dst.register_buffer("count", np.zeros(3, dtype=np.int32))
    dst(xps.ones((1, 3), dtype=xps.float32))
    pg.io.load(path, dst)
    for (n1, a), (n2, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert n1 == n2
        np.testing.assert_array_equal(pg.xp.to_numpy(b), pg.xp.to_numpy(a))
    assert type(dst[0].weight.array).__module__.startswith("array_api_strict")


def test_nested_state_with_json_values(tmp_path):
    path = tmp_path / "s.safetensors"
    state = {"model": {"w": np.ones((2, 2), np.float64)}, "step": 3, "name": "x",
             "ratio": 0.5, "nothing": None, "flags": [True, False],
             "inf": float("inf"), "seq": [np.arange(2), {"k": np.zeros((), np.bool_)}],
             "big": 2**70, "scalar": np.array(2.5, np.float32),
             "empty": np.zeros((0, 3), np.int8), "strided": np.arange(10.0)[::3]}
    pg.io.save(path, state)
    got = pg.io.load(path)
    assert got["step"] == 3 and got["name"] == "x" and got["nothing"] is None
    assert got["flags"] == [True, False] and got["inf"] == float("inf")
    assert got["big"] == 2**70
    np.testing.assert_array_equal(got["model"]["w"], state["model"]["w"])
    np.testing.assert_array_equal(got["seq"][0], [0, 1])
    assert got["seq"][1]["k"].dtype == np.bool_
    assert got["scalar"].shape == () and got["scalar"] == np.float32(2.5)
    assert got["empty"].shape == (0, 3)
    np.testing.assert_array_equal(got["strided"], [0.0, 3.0, 6.0, 9.0])


def test_loaded_arrays_are_writable(tmp_path):
    path = tmp_path / "a.safetensors"
    pg.io.save(path, {"a": np.arange(4.0)})
    a = pg.io.load(path)["a"]
    a += 1
    np.testing.assert_array_equal(a, [1, 2, 3, 4])


def test_strict_mismatches(tmp_path):
    path = tmp_path / "m.safetensors"
    pg.io.save(path, pg.nn.Linear(3, 2))
    with pytest.raises(pg.CheckpointError, match="shape"):
        pg.io.load(path, pg.nn.Linear(3, 5))
    with pytest.raises(pg.CheckpointError, match="dtype"):
        pg.io.load(path, pg.nn.Linear(3, 2, dtype=np.float64))
    with pytest.raises(pg.CheckpointError, match="unexpected"):
        pg.io.load(path, pg.nn.Linear(3, 2, bias=False))
    # Non-strict loading takes what matches.
    target = pg.nn.Linear(3, 2, bias=False)
    pg.io.load(path, target, strict=False)
    np.testing.assert_array_equal(target.weight.array, pg.io.load(path)["weight"])


def test_failed_load_leaves_the_target_unchanged(tmp_path):
    path = tmp_path / "m.safetensors"
    pg.io.save(path, {"weight": np.zeros((2, 3), np.float32), "bias": np.zeros(7, np.float32)})
    m = pg.nn.Linear(3, 2)
    before = m.weight.array.copy()
    with pytest.raises(pg.CheckpointError):
        pg.io.load(path, m)
    np.testing.assert_array_equal(m.weight.array, before)


def test_atomic_write_keeps_old_file_on_error(tmp_path):
    path = tmp_path / "c.safetensors"
    pg.io.save(path, {"a": np.ones(2)})

    class Exploding:
        def state_dict(self):
            return {"a": np.ones(2), "bad": object()}

    with pytest.raises(pg.CheckpointError, match="cannot store"):
        pg.io.save(path, Exploding())

    def fail(f):
        f.write(b"partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        pg.io.atomic_write(path, fail)
    np.testing.assert_array_equal(pg.io.load(path)["a"], [1.0, 1.0])
    assert sorted(os.listdir(tmp_path)) == ["c.safetensors"]


def test_save_refuses_uninitialized_and_odd_keys(tmp_path):
    with pytest.raises(pg.CheckpointError, match="not initialized"):
        pg.io.save(tmp_path / "x", pg.nn.LazyLinear(2))
    with pytest.raises(pg.CheckpointError, match="string or integer keys"):
        pg.io.save(tmp_path / "x", {1.5: np.ones(1)})
    with pytest.raises(pg.CheckpointError, match="'/'"):
        pg.io.save(tmp_path / "x", {"a/b": np.ones(1), "a": {"b": np.ones(1)}})
    with pytest.raises(pg.CheckpointError, match="reserved"):
        pg.io.save(tmp_path / "x", {"__tensor__": 1})


def test_lazy_model_loads_from_file(tmp_path):
    path = tmp_path / "m.safetensors"
    src = pg.nn.Linear(5, 3)
    pg.io.save(path, src)
    dst = pg.nn.LazyLinear(3)
    pg.io.load(path, dst)
    np.testing.assert_array_equal(dst.weight.array, src.weight.array)


def test_optimizer_round_trip(tmp_path):
    model = pg.nn.Linear(3, 2)
    opt = pg.optim.Adam(model, lr=0.01)
    for _ in range(2):
        opt.zero_grad()
        pg.ops.sum(model(np.ones((4, 3), np.float32)) ** 2).backward()
        opt.step()
    pg.io.save(tmp_path / "o", opt)
    opt2 = pg.optim.Adam(model, lr=0.5)
    pg.io.load(tmp_path / "o", opt2)
    assert opt2.t == 2 and opt2.lr == 0.01
    np.testing.assert_array_equal(opt2.state_dict()["state"][0]["exp_avg_sq"],
                                  opt.state_dict()["state"][0]["exp_avg_sq"])


def test_plain_safetensors_file_without_metadata(tmp_path):
    # A file written by another safetensors writer: tensors only.
    header = {"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "plain.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + np.array([1.5, -2.0]).tobytes())
    np.testing.assert_array_equal(pg.io.load(path)["w"], [1.5, -2.0])


def test_missing_file():
    with pytest.raises(pg.CheckpointError, match="cannot open"):
        pg.io.load("/nonexistent/file.safetensors")
