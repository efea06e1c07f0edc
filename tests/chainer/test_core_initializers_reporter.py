"""Chainer's initializers against Chainer 7.8.1's draws (fixture), and the reporter's
observer names."""

from __future__ import annotations

import os

import numpy as np
import pytest

from portagrad import chainer
from portagrad import reporter as pg_reporter
from portagrad.chainer import initializers as I
from portagrad.chainer import links as L

_FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "core", "initializers.npz"))

_MAKERS = {
    "Constant": lambda: I.Constant(0.25), "Zero": I.Zero, "One": I.One, "NaN": I.NaN,
    "Identity": lambda: I.Identity(2.0), "Normal": lambda: I.Normal(0.3),
    "LeCunNormal": I.LeCunNormal, "GlorotNormal": I.GlorotNormal, "HeNormal": I.HeNormal,
    "HeNormal_fan_out": lambda: I.HeNormal(fan_option="fan_out"),
    "Uniform": lambda: I.Uniform(0.2), "LeCunUniform": I.LeCunUniform,
    "GlorotUniform": I.GlorotUniform, "HeUniform": I.HeUniform,
    "Orthogonal": I.Orthogonal, "Orthogonal_wide": I.Orthogonal,
    "UpsamplingDeconvFilter": I.UpsamplingDeconvFilter,
    "DownsamplingConvFilter": I.DownsamplingConvFilter,
}
_SHAPES = {"Identity": (3, 3), "Orthogonal_wide": (3, 5),
           "UpsamplingDeconvFilter": (2, 2, 4, 4), "DownsamplingConvFilter": (2, 2, 3, 3)}

CHAINER_INITIALIZERS = ("Constant", "DownsamplingConvFilter", "GlorotNormal", "GlorotUniform",
                        "HeNormal", "HeUniform", "Identity", "LeCunNormal", "LeCunUniform",
                        "NaN", "Normal", "One", "Orthogonal", "Uniform",
                        "UpsamplingDeconvFilter", "Zero", "generate_array")


@pytest.mark.parametrize("name", sorted(_MAKERS))
def test_initializer_draws_what_chainer_draws(name):
    np.random.seed(7)
    got = I.generate_array(_MAKERS[name](), _SHAPES.get(name, (4, 3, 2)), np,
                           dtype=np.float64)
    np.testing.assert_allclose(got, _FIX[name], rtol=1e-12, atol=0, equal_nan=True)


def test_all_17_names_and_the_config_dtype():
    assert all(hasattr(I, n) for n in CHAINER_INITIALIZERS) and len(CHAINER_INITIALIZERS) == 17
    assert I.generate_array(I.One(), (2,), np).dtype == np.float32
    with chainer.using_config("dtype", np.float16):
        assert I.generate_array(I.One(), (2,), np).dtype == np.float16
    with pytest.raises(ValueError, match="dtype"):
        I.generate_array(I.One(dtype=np.float32), (2,), np, dtype=np.float64)
    with pytest.raises(ValueError, match="square"):
        I.generate_array(I.Identity(), (2, 3), np)


def test_report_uses_the_registered_observer_name():
    model = L.Classifier(L.Linear(3, 2))
    rep = chainer.Reporter()
    rep.add_observer("main", model)
    rep.add_observers("main", model.namedlinks(skipself=True))
    obs = {}
    with rep.scope(obs):
        chainer.report({"loss": 1.5}, model)
        chainer.report({"norm": 2.0}, model.predictor)
        chainer.report({"plain": 3.0})
    assert obs == {"main/loss": 1.5, "main/predictor/norm": 2.0, "plain": 3.0}
    with pytest.raises(KeyError, match="not registered"), rep.scope({}):
        chainer.report({"x": 1.0}, L.Linear(1, 1))


def test_reported_variables_are_detached_copies():
    rep = chainer.Reporter()
    x = chainer.Variable(np.array(2.0))
    y = x * 3
    with rep.scope(obs := {}):
        chainer.report({"y": y})
    assert obs["y"].creator is None and float(obs["y"].array) == 6.0


def test_without_a_chainer_reporter_values_reach_portagrads_reporting():
    model = L.Classifier(L.Linear(3, 2))
    obs = {}
    with pg_reporter.report_scope(obs):
        model(np.ones((2, 3), np.float32), np.array([0, 1], np.int32))
        chainer.report({"loss": 0.5}, model.predictor)
    assert set(obs) == {"main/loss", "main/accuracy", "main/predictor/loss"}
    chainer.report({"nothing": 1.0})  # no scope: nothing happens, as in Chainer


def test_summaries():
    d = chainer.DictSummary()
    d.add({"a": np.float32(1.0), "b": chainer.Variable(np.array(2.0))})
    d.add({"a": (np.float32(4.0), 2), "text": "ignored"})
    stats = d.make_statistics()
    np.testing.assert_allclose(d.compute_mean()["a"], 3.0)
    np.testing.assert_allclose(stats["a.std"], np.sqrt(2.0))
    assert set(stats) == {"a", "a.std", "b", "b.std"}
