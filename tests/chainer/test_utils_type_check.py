"""``chainer.utils.type_check`` and the ``chainer.utils`` helpers against Chainer 7.8.1:
each case of ``fixtures/core/type_check.json`` (made by
``scripts/make_chainer_fixtures_type_check.py``) runs the code Chainer ran, here under
``portagrad.chainer``, and must give Chainer's value or Chainer's exception and message;
then what Chainer's fixtures cannot show: the check on other array libraries, the check
running before ``forward``, and light mode taking the arrays themselves."""

from __future__ import annotations

import collections
import json
import pickle
from pathlib import Path

import numpy
import pytest

import portagrad.chainer as chainer
from portagrad.chainer.utils import argument, type_check

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "core" / "type_check.json")
                     .read_text())


@pytest.fixture(scope="module")
def env():
    env = {"chainer": chainer, "numpy": numpy, "type_check": type_check,
           "argument": argument, "pickle": pickle, "collections": collections}
    exec(FIXTURE["prelude"], env)
    return env


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: c["code"][:60])
def test_as_chainer(case, env):
    code = case["code"]
    if "error" in case:
        with pytest.raises(Exception) as info:
            eval(code, env)
        assert type(info.value).__name__ == case["error"], info.value
        assert str(info.value) == case["message"]
    else:
        assert repr(eval(code, env)) == case["value"]


class Affine(chainer.FunctionNode):
    def check_type_forward(self, in_types):
        type_check._argname(in_types, ("x", "W"))
        x_type, w_type = in_types
        type_check.expect(x_type.dtype == numpy.float32, x_type.ndim == 2,
                          x_type.shape[1] == w_type.shape[1])

    def forward(self, inputs):
        x, w = inputs
        return x @ w.T,

    def backward(self, indexes, grad_outputs):
        import portagrad.chainer.functions as F

        x, w = self.inputs
        (gy,) = grad_outputs
        return tuple(F.matmul(gy, w) if i == 0 else F.matmul(gy, x, transa=True)
                     for i in indexes)


@pytest.mark.parametrize("name", ["numpy", "torch", "array_api_strict"])
def test_check_on_each_library(name):
    xp = pytest.importorskip(name)
    x = xp.ones((2, 3), dtype=xp.float32)
    w = xp.ones((4, 3), dtype=xp.float32)
    (y,) = Affine().apply((x, w))
    assert tuple(y.shape) == (2, 4)
    # The dtype compares with NumPy's whatever the library: float64 is named as such.
    with pytest.raises(type_check.InvalidType) as info:
        Affine().apply((xp.ones((2, 3), dtype=xp.float64), w))
    assert str(info.value).endswith(
        "Expect: x.dtype == <class 'numpy.float32'>\n"
        "Actual: float64 != <class 'numpy.float32'>")
    with pytest.raises(type_check.InvalidType, match=r"Expect: x.shape\[1\] == W.shape"
                                                     r"\[1\]\nActual: 3 != 5"):
        Affine().apply((x, xp.ones((4, 5), dtype=xp.float32)))


def test_the_check_runs_before_forward_and_light_mode_sees_the_arrays():
    seen = []

    class Probe(chainer.FunctionNode):
        def check_type_forward(self, in_types):
            seen.append((type(in_types).__name__, type_check.in_light_mode(),
                         type(in_types[0]).__name__))
            type_check.expect(in_types[0].ndim == 1)

        def forward(self, inputs):
            seen.append("forward")
            return inputs[0] * 2,

    Probe().apply((numpy.ones(3),))
    assert seen == [("LightTypeInfoTuple", True, "ndarray"), "forward"]
    seen.clear()
    with pytest.raises(type_check.InvalidType):
        Probe().apply((numpy.ones((3, 1)),))
    # The light check fails, the full check explains why, forward never runs.
    assert seen == [("LightTypeInfoTuple", True, "ndarray"),
                    ("TypeInfoTuple", False, "Variable")]
    assert not type_check.in_light_mode()


def test_a_checked_function_still_differentiates():
    x = chainer.Variable(numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
    w = chainer.Variable(numpy.ones((4, 3), numpy.float32))
    (y,) = Affine().apply((x, w))
    y.grad = numpy.ones((2, 4), numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.full((2, 3), 4.0))
    numpy.testing.assert_array_equal(w.grad, numpy.tile([3.0, 5.0, 7.0], (4, 1)))


def test_expect_takes_only_comparisons():
    with pytest.raises(TypeError, match="expected comparisons"):
        type_check.expect(True)


def test_experimental_warns_unless_disabled(monkeypatch):
    with pytest.warns(FutureWarning, match="mylib.f is experimental"):
        chainer.utils.experimental("mylib.f")
    monkeypatch.setattr(chainer, "disable_experimental_feature_warning", True)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chainer.utils.experimental("mylib.f")


def test_import_spellings():
    import portagrad.chainer.utils.type_check as tc
    from portagrad.chainer.utils.conv import get_deconv_outsize
    from portagrad.chainer.utils.walker_alias import WalkerAlias

    assert tc is type_check and chainer.utils.type_check is tc
    assert get_deconv_outsize is chainer.utils.get_deconv_outsize
    assert WalkerAlias is chainer.utils.WalkerAlias
    import portagrad.chainer.links as L

    assert L.NegativeSampling(3, [1, 2], 2).sampler.__class__ is WalkerAlias
