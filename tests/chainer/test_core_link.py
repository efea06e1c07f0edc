"""Chainer's Link/Chain/ChainList/Sequential, Variable, Parameter, config and devices."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from portagrad import chainer, chainerx
from portagrad.chainer import functions as F
from portagrad.chainer import links as L


class MLP(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 3)
            self.l2 = L.Linear(3, 2)
        self.not_registered = L.Linear(2, 2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


def test_chain_registers_only_inside_init_scope_and_names_paths_sorted():
    m = MLP()
    assert [n for n, _ in m.namedparams()] == ["/l1/W", "/l1/b", "/l2/W", "/l2/b"]
    assert [n for n, _ in m.namedparams(include_uninit=False)] == ["/l1/b", "/l2/W", "/l2/b"]
    assert [n for n, _ in m.namedlinks()] == ["/", "/l1", "/l2"]
    assert [n for n, _ in m.namedlinks(skipself=True)] == ["/l1", "/l2"]
    assert list(m.children()) == [m.l1, m.l2]
    assert m.l1.name == "l1" and m.name is None
    assert m.within_init_scope is False


def test_lazy_linear_flattens_like_chainer():
    lin = L.Linear(None, 5)
    assert lin.W.array is None and not lin.W.is_initialized
    y = lin(np.ones((3, 2, 2), np.float32))
    assert lin.W.shape == (5, 4) and y.shape == (3, 5)
    assert L.Linear(4, 5, True).b is None  # the third argument is nobias


def test_parameter_interface():
    p = chainer.Parameter(chainer.initializers.Constant(2.0))
    assert p.update_rule is None and not p.is_initialized and p.array is None
    p.initialize((2, 3))
    assert p.data.dtype == np.float32 and p.grad is None
    p.grad = np.ones((2, 3), np.float32)
    assert p.grad_var.array is p.grad
    p.cleargrad()
    assert p.grad is None


def test_cleargrads_zerograds_addgrads_copyparams():
    a, b = MLP(), MLP()
    x = np.ones((2, 4), np.float32)
    a(x), b(x)
    F.sum(a(x)).backward()
    F.sum(b(x)).backward()
    g = a.l2.W.grad.copy()
    a.addgrads(b)
    np.testing.assert_allclose(a.l2.W.grad, g + b.l2.W.grad)
    a.cleargrads()
    assert all(p.grad is None for p in a.params())
    with pytest.warns(DeprecationWarning):
        a.zerograds()
    assert all((p.grad == 0).all() for p in a.params())
    a.copyparams(b)
    np.testing.assert_array_equal(a.l1.W.array, b.l1.W.array)
    assert a.count_params() == 4 * 3 + 3 + 3 * 2 + 2


def test_copy_modes_and_repeat():
    m = MLP()
    m(np.ones((1, 4), np.float32))
    share, cp, init = m.copy("share"), m.copy("copy"), m.copy("init")
    assert share.l1.W.array is m.l1.W.array and share.l1.W is not m.l1.W
    assert cp.l1.W.array is not m.l1.W.array
    np.testing.assert_array_equal(cp.l1.W.array, m.l1.W.array)
    assert not np.allclose(init.l1.W.array, m.l1.W.array)
    seq = m.l2.repeat(3)
    assert isinstance(seq, chainer.Sequential) and len(seq) == 3
    assert [n for n, _ in seq.namedparams()][:2] == ["/0/W", "/0/b"]
    with pytest.raises(ValueError):
        m.copy("deep")


def test_chainlist_and_sequential():
    cl = chainer.ChainList(L.Linear(2, 3), L.Linear(3, 1))
    cl.append(L.Linear(1, 1))
    assert len(cl) == 3 and cl[2].name == "2"
    assert [n for n, _ in cl.namedlinks(skipself=True)] == ["/0", "/1", "/2"]
    seq = chainer.Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2))
    assert seq(np.ones((5, 3), np.float32)).shape == (5, 2)
    assert [n for n, _ in seq.namedparams()] == ["/0/W", "/0/b", "/1/W", "/1/b"]
    assert len(seq[0:2]) == 2


def test_variable_chainer_spelling():
    x = chainer.Variable(np.array([3.0]))
    h = x * x
    y = h * 2
    assert isinstance(y, chainer.Variable)
    y.backward(retain_grad=True)
    np.testing.assert_allclose(x.grad, [12.0])
    np.testing.assert_allclose(h.grad, [2.0])
    y.backward()  # the graph is kept, as in Chainer: gradients accumulate
    np.testing.assert_allclose(x.grad, [24.0])
    z = chainer.Variable(np.array([1.0, 2.0]))
    w = z * 3
    w.grad = np.array([1.0, 10.0])
    w.backward()
    np.testing.assert_allclose(z.grad, [3.0, 30.0])
    assert w.data is w.array and w.node.data is w.array
    v = chainer.Variable(np.array([2.0]))
    (g,) = chainer.grad([v ** 3], [v], enable_double_backprop=True)
    (gg,) = chainer.grad([g], [v])
    np.testing.assert_allclose(gg.array, [12.0])
    (v * v).backward(enable_double_backprop=True)
    assert v.grad_var.creator is not None


def test_loss_scale_multiplies_the_seed():
    p = chainer.Parameter(np.array([1.0, 2.0], np.float32))
    (F.sum(p * p)).backward(loss_scale=8.0)
    np.testing.assert_allclose(p.grad, [16.0, 32.0])
    assert p.loss_scale == 8.0


def test_config_drives_dropout_and_backprop():
    x = np.ones(1000)
    assert chainer.config.train is True
    with chainer.using_config("train", False):
        assert chainer.config.train is False
        np.testing.assert_array_equal(F.dropout(x).array, x)
    assert chainer.config.train is True
    v = chainer.Variable(np.ones(2))
    with chainer.no_backprop_mode():
        assert chainer.config.enable_backprop is False
        assert (v * 2).creator is None
        with chainer.force_backprop_mode():
            assert (v * 2).creator is not None
    assert chainer.config.dtype == np.float32
    with chainer.using_config("dtype", np.float64):
        assert L.Linear(2, 3).W.dtype == np.float64
    assert L.Linear(2, 3).W.dtype == np.float32


def test_devices():
    import array_api_strict as xps

    cpu = chainer.get_device("@numpy")
    assert cpu == chainer.get_device(-1) and cpu.xp is np
    with pytest.raises(chainer.backend.DeviceUnavailableError, match="cupy"):
        chainer.get_device("@cupy:0")
    with pytest.raises(chainer.backend.DeviceUnavailableError):
        chainer.get_device(0)
    with pytest.raises(ValueError):
        chainer.get_device("nonsense")
    m = MLP().to_device(xps)  # l1.W is not created yet: it will be on the device
    assert m.xp is xps and m.l1.device == chainer.get_device(xps)
    y = m(xps.ones((2, 4), dtype=xps.float32))
    assert type(y.array).__module__.startswith("array_api_strict")
    assert type(m.l1.W.array).__module__.startswith("array_api_strict")
    m.to_cpu()
    assert isinstance(m.l1.W.array, np.ndarray) and m.xp is np
    assert chainerx.is_available() is False
    assert m.device.xp is not chainerx


def test_link_deepcopy_and_hooks():
    m = MLP()
    c = copy.deepcopy(m)
    assert c.l2.W is not m.l2.W
    seen = []

    class Hook(chainer.LinkHook):
        name = "h"

        def forward_postprocess(self, args):
            seen.append((args.link.name, args.out.shape))

    m.l2.add_hook(Hook())
    m(np.ones((1, 4), np.float32))
    assert seen == [("l2", (1, 2))]
    m.l2.delete_hook("h")


def test_function_node_and_old_style_function():
    class Cube(chainer.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            (x,) = inputs
            return x ** 3, x * 2

        def backward(self, indexes, grad_outputs):
            (x,) = self.get_retained_inputs()
            gy, gz = grad_outputs
            g = 3 * x * x * gy if gy is not None else 0
            return (g + 2 * gz if gz is not None else g),

    x = chainer.Variable(np.array([2.0, -1.0]))
    y, z = Cube().apply((x,))
    assert isinstance(y, chainer.Variable)
    (g,) = chainer.grad([F.sum(y) + F.sum(z)], [x], enable_double_backprop=True)
    np.testing.assert_allclose(g.array, 3 * x.array ** 2 + 2)
    (gg,) = chainer.grad([F.sum(g)], [x])
    np.testing.assert_allclose(gg.array, 6 * x.array)

    class Scale3(chainer.Function):
        def forward(self, inputs):
            return inputs[0] * 3,

        def backward(self, inputs, grad_outputs):
            return grad_outputs[0] * 3,

    v = chainer.Variable(np.array([1.0, 2.0]))
    F.sum(Scale3()(v)).backward()
    np.testing.assert_allclose(v.grad, [3.0, 3.0])


def test_registration_by_name_and_update_switches():
    link = chainer.Link(W=(2, 3), b=((3,), np.float64))
    assert link.W.shape == (2, 3) and np.isnan(link.W.array).all()
    assert link.b.dtype == np.float64
    link.add_param("c", (1,), initializer=chainer.initializers.One())
    link.add_persistent("step", 0)
    link.other = np.zeros(2)
    link.register_persistent("other")
    with pytest.raises(AttributeError):
        link.add_param("c")
    assert [n for n, _ in link.namedparams()] == ["/W", "/b", "/c"]
    assert sorted(chainer.serializers.serialize(link)) == ["W", "b", "c", "other", "step"]

    class Rule:
        enabled = True

    for p in link.params():
        p.update_rule = Rule()
    assert link.update_enabled
    link.disable_update()
    assert not link.update_enabled and not any(p.update_rule.enabled for p in link.params())
    link.enable_update()
    assert link.update_enabled
    del link.c
    assert [n for n, _ in link.namedparams()] == ["/W", "/b"]


# Chainer 7.8.1's top-level public names (``dir(chainer)`` without modules and the
# ``absolute_import`` left by a __future__ import).
CHAINER_TOP_LEVEL = (
    "AbstractSerializer", "Chain", "ChainList", "DebugMode", "Deserializer", "DeviceResident",
    "DictSummary", "Distribution", "Fallback", "Function", "FunctionAdapter", "FunctionHook",
    "FunctionNode", "GradientMethod", "Initializer", "Link", "LinkHook", "Optimizer",
    "Parameter", "Reporter", "Sequential", "Serializer", "Summary", "UpdateRule", "Variable",
    "as_array", "as_variable", "backward", "config", "cross_entropy",
    "disable_experimental_feature_warning", "force_backprop_mode", "get_array_types",
    "get_compute_mode", "get_cpu_array_types", "get_current_reporter", "get_device",
    "get_dtype", "get_function_hooks", "global_config", "grad", "is_arrays_compatible",
    "is_debug", "kl_divergence", "mixed16", "no_backprop_mode", "print_runtime_info",
    "register_kl", "report", "report_scope", "set_debug", "should_use_cudnn",
    "should_use_cudnn_tensor_core", "static_code", "static_graph", "using_config",
    "using_device")
# Defined by the optimizers and distributions of the face.
_ELSEWHERE = {"Optimizer", "GradientMethod", "UpdateRule", "Distribution", "cross_entropy",
              "kl_divergence", "register_kl"}


def test_chainers_top_level_names():
    assert len(CHAINER_TOP_LEVEL) == 57
    missing = [n for n in CHAINER_TOP_LEVEL if n not in _ELSEWHERE and not hasattr(chainer, n)]
    assert not missing
    with chainer.DebugMode(True):
        assert chainer.is_debug() and chainer.config.debug
    assert not chainer.is_debug()


def test_grad_var_is_a_chainer_variable():
    x = chainer.Variable(np.array([1.0, 2.0]))
    F.sum(x * x).backward()
    assert type(x.grad_var) is chainer.Variable and x.grad_var.data is x.grad
    F.sum(x * x).backward()  # reading grad_var does not disturb accumulation
    np.testing.assert_allclose(x.grad, [4.0, 8.0])
