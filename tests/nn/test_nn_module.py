"""Module, Parameter, lazy initialization, state dicts and moves between libraries."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import nn


class TwoLayer(nn.Module):
    def __init__(self, hidden=5, out=3):
        self.fc1 = nn.LazyLinear(hidden)
        self.fc2 = nn.LazyLinear(out)
        self.register_buffer("steps", np.zeros((), dtype=np.int64))

    def forward(self, x):
        return self.fc2(pg.ops.relu(self.fc1(x)))


def test_registration_order_and_names():
    m = TwoLayer()
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                    "fc2.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "fc2"]
    # PyTorch's order: a module's own parameters and buffers, then its children's.
    assert list(m.state_dict()) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    # Reassigning an attribute to a plain value unregisters it.
    m.fc2 = None
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias"]


def test_shared_parameter_listed_once():
    m = nn.Module()
    m.a = nn.Linear(2, 2)
    m.b = nn.Linear(2, 2)
    m.b.weight = m.a.weight
    assert [n for n, _ in m.named_parameters()] == ["a.weight", "a.bias", "b.bias"]


def test_train_eval_reaches_submodules():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
    m.eval()
    assert all(not sub.training for sub in m.modules())
    m.train()
    assert all(sub.training for sub in m.modules())


def test_lazy_parameters_follow_first_input(backend):
    pg.random.seed(1)
    m = TwoLayer()
    assert not m.fc1.weight.is_initialized
    x = backend.asarray(np.ones((4, 7)), dtype=np.float32)
    y = m(x)
    assert y.shape == (4, 3)
    assert m.fc1.weight.shape == (5, 7)
    for _, p in m.named_parameters():
        assert pg.xp.namespace_of(p.array) is backend.xp
        assert p.array.device == x.device
        assert str(p.array.dtype).endswith("float32")


def test_linear_matches_numpy_and_gradients(backend, rng):
    w = rng.normal(size=(3, 4))
    b = rng.normal(size=3)
    x = rng.normal(size=(2, 4))
    layer = nn.Linear(4, 3, xp=backend.xp, device=backend.device, dtype="float64")
    layer.load_state_dict({"weight": w, "bias": b})
    y = layer(backend.asarray(x))
    np.testing.assert_allclose(pg.xp.to_numpy(y.array), x @ w.T + b, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(pg.xp.to_numpy(layer.weight.grad), np.ones((2, 3)).T @ x)
    np.testing.assert_allclose(pg.xp.to_numpy(layer.bias.grad), [2.0, 2.0, 2.0])


def test_state_dict_round_trip_across_libraries():
    import array_api_strict as xps

    pg.random.seed(0)
    src = TwoLayer()
    src(np.ones((1, 6), dtype=np.float32))
    dst = TwoLayer()
    dst(xps.ones((1, 6), dtype=xps.float32))
    dst.load_state_dict(src.state_dict())
    for (n1, p1), (n2, p2) in zip(src.named_parameters(), dst.named_parameters()):
        assert n1 == n2
        assert type(p2.array).__module__.startswith("array_api_strict")
        np.testing.assert_array_equal(pg.xp.to_numpy(p2.array), p1.array)


def test_load_state_dict_strict_errors_change_nothing():
    m = nn.Linear(2, 3)
    before = m.weight.array.copy()
    with pytest.raises(pg.CheckpointError, match='Missing key.*"bias"'):
        m.load_state_dict({"weight": np.zeros((3, 2), np.float32)})
    with pytest.raises(pg.CheckpointError, match="size mismatch for weight"):
        m.load_state_dict({"weight": np.zeros((2, 2), np.float32),
                           "bias": np.zeros(3, np.float32)})
    with pytest.raises(pg.CheckpointError, match="size mismatch"):
        m.load_state_dict({"weight": np.zeros((2, 2), np.float32)}, strict=False)
    np.testing.assert_array_equal(m.weight.array, before)
    # As torch's copy_, another dtype is cast to the parameter's.
    m.load_state_dict({"weight": np.ones((3, 2)), "bias": np.zeros(3)})
    assert m.weight.dtype == np.float32 and float(m.weight.array.sum()) == 6.0
    m.load_state_dict({"bias": np.ones(3, np.float32)}, strict=False)
    np.testing.assert_array_equal(m.bias.array, np.ones(3))


def test_load_fills_lazy_parameters():
    src = nn.Linear(4, 2)
    dst = nn.LazyLinear(2)
    assert dst.state_dict()["weight"] is nn.UNINITIALIZED
    dst.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(dst.weight.array, src.weight.array)
    assert dst(np.ones((1, 4), np.float32)).shape == (1, 2)


def test_to_device_moves_library():
    import array_api_strict as xps

    m = TwoLayer()
    m(np.ones((2, 3), dtype=np.float32))
    ref = m(np.ones((2, 3), dtype=np.float32)).array
    dev = xps.Device("device1")
    m.to_device(dev, xp=xps)
    assert all(type(p.array).__module__.startswith("array_api_strict")
               and p.array.device == dev
               for p in m.parameters())
    out = m(xps.ones((2, 3), dtype=xps.float32, device=dev))
    np.testing.assert_allclose(pg.xp.to_numpy(out.array), ref, rtol=1e-6)


def test_input_in_other_library_is_a_clear_error():
    import array_api_strict as xps

    m = nn.Linear(3, 2)
    with pytest.raises(pg.NamespaceMismatchError, match=r"Linear\(x\).*numpy.*array_api"):
        m(xps.ones((1, 3), dtype=xps.float32))


def test_input_on_other_device_is_a_clear_error():
    import array_api_strict as xps

    m = nn.LazyLinear(2)
    m(xps.ones((1, 3), dtype=xps.float32, device=xps.Device("device1")))
    with pytest.raises(pg.DeviceMismatchError, match="device1"):
        m(xps.ones((1, 3), dtype=xps.float32))


def test_wrong_feature_size_is_a_shape_error():
    m = nn.LazyLinear(2)
    m(np.ones((1, 3), np.float32))
    with pytest.raises(pg.ShapeError, match="3"):
        m(np.ones((1, 4), np.float32))


def test_parameter_rejects_integer_arrays():
    with pytest.raises(pg.GradientError, match="floating"):
        nn.Parameter(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="initializer"):
        nn.Parameter()


def test_uninitialized_parameter_reports_itself():
    p = nn.Parameter(initializer=nn.init.Zeros())
    with pytest.raises(pg.ShapeError, match="not initialized"):
        p.shape  # noqa: B018
    assert "uninitialized" in repr(p)
