"""The Chainer face on other Array API libraries (a ported model moved with
``to_device(chainer.get_device(namespace))``), printing as Chainer prints, and the
serializers' public names."""

from __future__ import annotations

import io

import numpy as np
import pytest

from portagrad import chainer
from portagrad.chainer import functions as F
from portagrad.chainer import links as L
from portagrad.chainer import serializers


class Net(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(None, 2, 3, pad=1)
            self.bn = L.BatchNormalization(2)
            self.fc = L.Linear(None, 3)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))))


def _backends():
    out = [pytest.param("array_api_strict", id="array_api_strict")]
    try:
        import torch  # noqa: F401

        out.append(pytest.param("torch", id="torch"))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("lib", _backends())
def test_a_model_moved_to_another_library_computes_what_it_computes_on_numpy(lib):
    if lib == "torch":
        import array_api_compat.torch as xp
    else:
        import array_api_strict as xp
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    np.random.seed(0)
    ref = Net()
    y_ref = ref(x)
    F.sum(y_ref * y_ref).backward()
    np.random.seed(0)
    model = Net().to_device(chainer.get_device(xp))
    xd = chainer.get_device(xp).send(x)
    y = model(xd)
    F.sum(y * y).backward()
    assert model.xp is xp
    from portagrad.xp import to_numpy

    np.testing.assert_allclose(to_numpy(y.array), y_ref.array, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(model.conv.W.grad), ref.conv.W.grad, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(to_numpy(model.bn.avg_mean), ref.bn.avg_mean, rtol=1e-5,
                               atol=1e-6)
    buf = io.BytesIO()
    serializers.save_npz(buf, model)  # the file holds host arrays, Chainer's layout
    buf.seek(0)
    back = Net()
    serializers.load_npz(buf, back)
    np.testing.assert_allclose(back.fc.W.array, to_numpy(model.fc.W.array))
    buf.seek(0)
    again = Net().to_device(chainer.get_device(xp))
    serializers.load_npz(buf, again)  # loads into the library's own arrays
    assert type(again.fc.W.array) is type(model.fc.W.array)


def test_printing_is_chainers():
    v = chainer.Variable(np.ones((2, 2), np.float32))
    assert repr(v) == "variable([[1., 1.],\n          [1., 1.]])"
    assert repr(chainer.Parameter()) == "variable(None)"
    assert str(L.Linear(2, 3)) == "Linear(in_size=2, out_size=3, nobias=False)"


def test_serializer_names():
    names = ("DictionarySerializer", "HDF5Deserializer", "HDF5Serializer", "NpzDeserializer",
             "load_hdf5", "load_npz", "save_hdf5", "save_npz")
    assert all(hasattr(serializers, n) for n in names)


def test_recurrent_links_on_another_library():
    import array_api_strict as xps

    from portagrad.xp import to_numpy

    d = chainer.get_device(xps)
    xs = [np.ones((2, 3), np.float32), np.full((3, 3), 0.5, np.float32)]
    np.random.seed(0)
    ref = L.NStepBiLSTM(1, 3, 2, 0.0)
    np.random.seed(0)
    model = L.NStepBiLSTM(1, 3, 2, 0.0).to_device(d)
    hy, cy, ys = model(None, None, [d.send(x) for x in xs])
    hy0, cy0, ys0 = ref(None, None, xs)
    for a, b in zip([hy, cy, *ys], [hy0, cy0, *ys0]):
        np.testing.assert_allclose(to_numpy(a.array), b.array, rtol=1e-5, atol=1e-6)
    lstm = L.LSTM(3, 2).to_device(d)
    lstm(d.send(xs[1]))
    assert lstm(d.send(xs[0])).shape == (2, 2)  # a smaller batch updates the first rows


def test_sampling_links_send_their_samples_to_the_device():
    import array_api_strict as xps

    d = chainer.get_device(xps)
    x = d.send(np.ones((2, 3), np.float32))
    t = d.send(np.array([0, 1], np.int32))
    ns = L.NegativeSampling(3, [1, 2, 3], 2).to_device(d)
    np.testing.assert_allclose(float(ns(x, t).array), 2 * 3 * np.log(2), rtol=1e-6)
    bo = L.BlackOut(3, [1, 2, 3], 2)
    bo.W.array[...] = 0.0
    bo.to_device(d)
    # All scores 0: each example's loss is -(log(1/3) + 2 log(2/3)).
    np.testing.assert_allclose(float(bo(x, t).array), -(np.log(1 / 3) + 2 * np.log(2 / 3)),
                               rtol=1e-6)


def test_chainer_backends_import_lines_work():
    # Chainer code writes ``from chainer.backends import cuda``; after the import line
    # changes it must still find the module.
    import portagrad.chainer.backends.cuda as cuda2
    from portagrad.chainer.backends import cuda

    from portagrad import chainer

    assert cuda is cuda2 is chainer.cuda is chainer.backends.cuda
    assert cuda.available in (True, False) and chainer.backends.cpu.CpuDevice is not None


def test_absent_backends_device_classes_exist_and_refuse_creation():
    # Chainer's CIFAR example tests ``isinstance(device, backend.ChainerxDevice)``.
    from portagrad.chainer import backend
    from portagrad.chainer.device import DeviceUnavailableError

    for cls, name in ((backend.ChainerxDevice, "ChainerX"), (backend.Intel64Device, "iDeep")):
        assert not isinstance(chainer.get_device("@numpy"), cls)
        with pytest.raises(DeviceUnavailableError, match=f"{cls.__name__}.*{name}"):
            cls()


def test_chainer_configuration_module_import_lines_work():
    # Chainer's CIFAR custom loop writes ``from chainer import configuration``.
    import portagrad.chainer.configuration as configuration2

    from portagrad.chainer import configuration

    assert configuration is configuration2 is chainer.configuration
    assert configuration.config is chainer.config
    with configuration.using_config("train", False):
        assert chainer.config.train is False
    assert chainer.config.train is True
