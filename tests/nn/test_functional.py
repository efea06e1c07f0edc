"""portagrad.nn.functional against torch.nn.functional (when torch is installed) and
against NumPy references and closed forms (always)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import portagrad as pg
import portagrad.nn.functional as F
from portagrad.gradcheck import check_backward, check_double_backward

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - CI without torch
    torch = None
    TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
RNG = np.random.default_rng(0)


def rand(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def compare(name, args, kwargs=None, diff=None, torch_kwargs=None, atol=1e-10, rtol=1e-8):
    """Value and gradients of ``F.name(*args, **kwargs)`` against torch's, float64.

    ``diff``: indices of the args to differentiate (default: the float arrays)."""
    kwargs = kwargs or {}
    torch_kwargs = kwargs if torch_kwargs is None else torch_kwargs
    if diff is None:
        diff = [i for i, a in enumerate(args)
                if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    pv = [pg.Variable(a.copy()) if i in diff else a for i, a in enumerate(args)]
    tv = [torch.tensor(a, requires_grad=i in diff) if isinstance(a, np.ndarray) else a
          for i, a in enumerate(args)]
    y = getattr(F, name)(*pv, **kwargs)
    with warnings.catch_warnings():  # PyTorch's own deprecation and broadcasting notes
        warnings.simplefilter("ignore")
        ty = getattr(TF, name)(*tv, **torch_kwargs)
    if isinstance(ty, tuple):
        y, ty = y[0], ty[0]
    np.testing.assert_allclose(np.asarray(y.array), ty.detach().numpy(), atol=atol, rtol=rtol,
                               err_msg=f"{name} value")
    assert tuple(y.shape) == tuple(ty.shape), name
    if not diff:
        return y
    gy = RNG.standard_normal(tuple(ty.shape))
    grads = pg.grad([y], [pv[i] for i in diff], grad_outputs=[gy])
    tgrads = torch.autograd.grad([ty], [tv[i] for i in diff], grad_outputs=[torch.tensor(gy)],
                                 allow_unused=True)
    for i, g, tg in zip(diff, grads, tgrads, strict=True):
        tg = np.zeros(args[i].shape) if tg is None else tg.numpy()
        got = np.zeros(args[i].shape) if g is None else np.asarray(g.array)
        np.testing.assert_allclose(got, tg, atol=atol, rtol=rtol,
                                   err_msg=f"{name} gradient of arg {i}")
    return y


KINKS = np.array([-7.0, -6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 25.0])


def tensors(kw):
    return {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}


def case(name, args, kwargs=None, *, diff=None, tkw=None, tol=None, id=None):
    tol = tol or {}
    return pytest.param(name, args, kwargs or {}, diff, tkw, tol, id=id or name)


def run_case(name, args, kwargs, diff, tkw, tol):
    torch_kwargs = tensors(kwargs) if tkw is None else tkw
    compare(name, args, kwargs, diff=diff, torch_kwargs=torch_kwargs, **tol)


# --------------------------------------------------------------------- activations
X = np.concatenate([KINKS, -KINKS[1:], rand(8)])
ACTIVATIONS = [
    case(n, [X], kw, id=f"{n}-{kw}") for n, kw in [
        ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
        ("elu", {}), ("elu", {"alpha": 2.0}), ("selu", {}), ("celu", {}), ("celu", {"alpha": 2.0}),
        ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
        ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 5.0}), ("softsign", {}),
        ("softshrink", {}), ("softshrink", {"lambd": 1.0}), ("hardshrink", {}),
        ("hardshrink", {"lambd": 1.0}), ("tanhshrink", {}), ("hardtanh", {}),
        ("hardtanh", {"min_val": -3.0, "max_val": 6.0}), ("hardswish", {}), ("sigmoid", {}),
        ("tanh", {}), ("logsigmoid", {}), ("rrelu", {"lower": 0.1, "upper": 0.3})]
] + [
    # PyTorch's hardsigmoid gradient uses a single-precision 1/6.
    case("hardsigmoid", [X], tol={"rtol": 1e-6}),
    case("threshold", [X, 1.0, -2.0]), case("threshold", [X, 0.0, 0.0], id="threshold-0"),
    case("glu", [rand(3, 4)]), case("glu", [rand(4, 3)], {"dim": 0}, id="glu-dim0"),
    case("prelu", [np.concatenate([KINKS, rand(12)]).reshape(2, 2, 6), np.array([0.25, 0.5])]),
    case("prelu", [X, np.array([0.3])], id="prelu-shared"),
    case("normalize", [rand(3, 4)]), case("normalize", [rand(3, 4)], {"p": 1.0, "dim": 0},
                                          id="normalize-p1"),
    case("normalize", [np.zeros((2, 3))], id="normalize-zero"),
] + [case(n, [rand(3, 4, 5)], {"dim": d}, id=f"{n}-{d}")
     for n in ("softmax", "log_softmax", "softmin") for d in (0, 1, -1)]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", ACTIVATIONS)
def test_activations_match_torch(name, args, kwargs, diff, tkw, tol):
    run_case(name, args, kwargs, diff, tkw, tol)


@needs_torch
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 3, 2, 2)])
def test_softmax_without_dim_takes_pytorchs_axis(shape):
    for name in ("softmax", "log_softmax", "softmin"):
        compare(name, [rand(*shape)])


@needs_torch
def test_softmax_dtype():
    x = rand(2, 3).astype(np.float32)
    y = F.softmax(x, dim=1, dtype=np.float64)
    assert y.dtype == np.float64
    ty = TF.softmax(torch.tensor(x), dim=1, dtype=torch.float64)
    np.testing.assert_allclose(y.array, ty.numpy(), rtol=1e-12)


def test_activations_closed_forms():
    x = np.array([-4.0, -3.0, -1.0, 0.0, 1.0, 3.0, 4.0])
    np.testing.assert_allclose(F.hardswish(x).array, x * np.clip(x + 3, 0, 6) / 6)
    np.testing.assert_allclose(F.hardsigmoid(x).array, np.clip(x / 6 + 0.5, 0, 1))
    np.testing.assert_allclose(F.relu6(x * 2).array, np.clip(x * 2, 0, 6))
    np.testing.assert_allclose(F.softshrink(x, 1.0).array, np.sign(x) * np.maximum(
        np.abs(x) - 1, 0))
    np.testing.assert_allclose(F.softplus(np.array([1.0, 30.0]), beta=2.0).array,
                               [np.log1p(np.exp(2.0)) / 2, 30.0])
    np.testing.assert_allclose(F.glu(np.array([[1.0, 2.0, 0.0, 3.0]])).array,
                               [[1.0 / 2, 2.0 / (1 + np.exp(-3.0))]])
    v = rand(4, 5)
    np.testing.assert_allclose(F.softmin(v, dim=1).array,
                               np.exp(-v) / np.exp(-v).sum(1, keepdims=True))
    np.testing.assert_allclose(F.normalize(v, p=3.0, dim=0).array,
                               v / (np.abs(v) ** 3).sum(0) ** (1 / 3))


def test_activation_gradients_at_kinks_closed_form():
    x = pg.Variable(np.array([-3.0, 0.0, 3.0, 6.0]))
    for f, expect in ((F.hardswish, [0.0, 0.5, 1.0, 1.0]), (F.relu6, [0.0, 0.0, 1.0, 0.0]),
                      (F.relu, [0.0, 0.0, 1.0, 1.0]), (F.hardtanh, [0.0, 1.0, 0.0, 0.0]),
                      (F.elu, [np.exp(-3.0), 1.0, 1.0, 1.0])):
        (g,) = pg.grad([f(x)], [x], grad_outputs=[np.ones(4)])
        np.testing.assert_allclose(g.array, expect, err_msg=f.__name__)


@pytest.mark.parametrize("f", [
    lambda x: F.hardswish(x), lambda x: F.softplus(x, 2.0, 3.0), lambda x: F.glu(x, 0),
    lambda x: F.normalize(x, 3.0, 1), lambda x: F.log_softmax(x, 0), lambda x: F.softmin(x, 1),
    lambda x: F.elu(x, 2.0), lambda x: F.tanhshrink(x)])
def test_activation_composites_gradcheck(f):
    x = np.array([[-2.5, -0.7, 0.4, 1.3], [2.2, -1.6, 0.9, -0.2]])
    check_backward(f, [x])
    check_double_backward(f, [x])


# --------------------------------------------------------------------- linear, conv, resample
CONV = [
    case("linear", [rand(3, 4), rand(2, 4), rand(2)]),
    case("linear", [rand(5, 3, 4), rand(2, 4)], id="linear-nobias"),
    case("bilinear", [rand(3, 4), rand(3, 2), rand(5, 4, 2), rand(5)]),
    case("conv1d", [rand(2, 4, 7), rand(6, 2, 3), rand(6)], {"stride": 2, "padding": 1,
                                                             "groups": 2}),
    case("conv1d", [rand(2, 4, 7), rand(6, 4, 3)], {"padding": "same", "dilation": 2},
         id="conv1d-same"),
    case("conv2d", [rand(2, 3, 6, 5), rand(4, 3, 3, 2), rand(4)],
         {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    case("conv2d", [rand(3, 6, 5), rand(4, 3, 3, 3)], {"padding": "valid"},
         id="conv2d-unbatched"),
    case("conv2d", [rand(1, 2, 5, 5), rand(2, 2, 2, 2)], {"padding": "same"},
         id="conv2d-same-even"),
    case("conv3d", [rand(1, 2, 4, 4, 4), rand(2, 1, 2, 2, 2)], {"groups": 2, "padding": 1}),
    case("conv_transpose1d", [rand(2, 4, 5), rand(4, 3, 3), rand(6)],
         {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    case("conv_transpose2d", [rand(2, 2, 3, 4), rand(2, 3, 3, 2), rand(3)],
         {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2)}),
    case("conv_transpose2d", [rand(2, 2, 3, 4), rand(2, 3, 3, 2)], {"dilation": 2, "stride": 2},
         id="conv_transpose2d-dilated"),
    case("conv_transpose3d", [rand(1, 2, 2, 3, 2), rand(2, 1, 2, 2, 2)], {"stride": 2}),
    case("unfold", [rand(2, 3, 5, 6)], {"kernel_size": (2, 3), "dilation": (1, 2),
                                        "padding": 1, "stride": (2, 1)}),
    case("unfold", [rand(3, 5, 6)], {"kernel_size": 2}, id="unfold-unbatched"),
    case("fold", [rand(2, 12, 42)], {"output_size": (5, 6), "kernel_size": 2, "padding": 1}),
    case("fold", [rand(2, 18, 9)], {"output_size": (5, 7), "kernel_size": (2, 3),
                                     "dilation": (1, 2), "stride": 2, "padding": 1},
         id="fold-strided"),
    case("pixel_shuffle", [rand(2, 8, 3, 2), 2]),
    case("pixel_shuffle", [rand(9, 2, 3), 3], id="pixel_shuffle-unbatched"),
    case("pixel_unshuffle", [rand(2, 2, 4, 6), 2]),
] + [case("pad", [rand(2, 3, 4, 5), widths], {"mode": mode}, id=f"pad-{mode}-{len(widths)}")
     for mode in ("constant", "reflect", "replicate", "circular")
     for widths in ((1, 2, 2, 1), (0, 3, 1, 0))] + [
    case("pad", [rand(2, 3, 4, 5), (1, 2, 2, 1, 0, 1)], {"value": 3.0}, id="pad-value"),
    case("pad", [rand(2, 3, 4, 5), (-1, 2, 1, -2)], id="pad-crop"),
    case("pad", [rand(2, 3, 4, 5, 3), (1, 2, 2, 1, 1, 1)], {"mode": "replicate"}, id="pad-3d"),
]

RESAMPLE = []
for _mode, _shape in [("nearest", (1, 2, 5)), ("nearest", (2, 2, 5, 3)),
                      ("nearest-exact", (2, 2, 5, 3)), ("linear", (1, 2, 5)),
                      ("bilinear", (2, 2, 5, 3)), ("bicubic", (2, 2, 5, 4)),
                      ("trilinear", (1, 2, 3, 4, 3)), ("area", (2, 2, 6, 4))]:
    _nd = len(_shape) - 2
    _x = rand(*_shape)
    for _kw in ({"size": (7, 3, 4)[:_nd]}, {"size": (2, 8, 5)[:_nd]}, {"scale_factor": 1.7},
                {"scale_factor": 0.6}, {"scale_factor": 2}):
        _aligns = (None, True, False) if _mode in ("linear", "bilinear", "bicubic",
                                                   "trilinear") else (None,)
        for _al in _aligns:
            _k = dict(_kw, mode=_mode)
            if _al is not None:
                _k["align_corners"] = _al
            RESAMPLE.append(case("interpolate", [_x], _k, id=f"{_mode}-{_kw}-{_al}"))
    if _mode != "area":
        RESAMPLE.append(case("interpolate", [_x], {"scale_factor": 1.7, "mode": _mode,
                                                   "recompute_scale_factor": True},
                             id=f"{_mode}-recompute"))


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", CONV + RESAMPLE)
def test_maps_match_torch(name, args, kwargs, diff, tkw, tol):
    run_case(name, args, kwargs, diff, tkw, tol)


def test_maps_against_numpy():
    x = rand(2, 3, 4, 5)
    cols = F.unfold(x, (2, 3), padding=1).array
    xp_ = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.stack([xp_[:, :, i:i + 2, j:j + 3].reshape(2, -1)
                    for i in range(5) for j in range(5)], axis=-1)
    np.testing.assert_allclose(cols, ref)
    # fold is unfold's adjoint: <unfold(x), c> == <x, fold(c)>
    c = rand(*cols.shape)
    lhs = (cols * c).sum()
    rhs = (x * F.fold(c, (4, 5), (2, 3), padding=1).array).sum()
    assert math.isclose(lhs, rhs, rel_tol=1e-12)
    y = F.pixel_unshuffle(F.pixel_shuffle(x[:, :, :2, :2].reshape(2, 12, 1, 1) * 1.0, 2), 2)
    np.testing.assert_array_equal(y.array, x[:, :, :2, :2].reshape(2, 12, 1, 1))
    np.testing.assert_allclose(F.pad(x, (1, 2), mode="reflect").array,
                               np.pad(x, ((0, 0), (0, 0), (0, 0), (1, 2)), mode="reflect"))
    np.testing.assert_allclose(F.pad(x, (1, 1, 2, 0), mode="circular").array,
                               np.pad(x, ((0, 0), (0, 0), (2, 0), (1, 1)), mode="wrap"))
    w = rand(4, 3, 2, 2)
    ref = np.einsum("nchw,ochw->no", x[:, :, :2, :2], w)
    np.testing.assert_allclose(F.conv2d(x, w).array[:, :, 0, 0], ref)
    up = F.interpolate(np.array([[[0.0, 1.0, 4.0]]]), size=5, mode="linear",
                       align_corners=True).array
    np.testing.assert_allclose(up, [[[0.0, 0.5, 1.0, 2.5, 4.0]]])
    up = F.interpolate(np.array([[[0.0, 1.0]]]), scale_factor=2, mode="linear").array
    np.testing.assert_allclose(up, [[[0.0, 0.25, 0.75, 1.0]]])
    np.testing.assert_allclose(F.interpolate(x, scale_factor=2).array,
                               x.repeat(2, axis=2).repeat(2, axis=3))
    np.testing.assert_allclose(F.interpolate(x, size=(2, 1), mode="area").array,
                               x[:, :, :, :].reshape(2, 3, 2, 2, 5).mean(axis=(3, 4))[..., None])


@pytest.mark.parametrize("f", [
    lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"),
    lambda x: F.interpolate(x, size=(3, 5), mode="bilinear", align_corners=True),
    lambda x: F.fold(F.unfold(x, 2, padding=1) * 1.5, (3, 4), 2, padding=1),
    lambda x: F.pixel_unshuffle(x[:, :, :2, :4], 2),
    lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect")])
def test_map_composites_gradcheck(f):
    x = rand(1, 2, 3, 4)
    check_backward(f, [x])
    check_double_backward(f, [x])


# --------------------------------------------------------------------- pooling
POOL_ARGS = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
             dict(kernel_size=2, stride=2, ceil_mode=True),
             dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)]
POOL = []
for _nd, _shape in ((1, (2, 3, 9)), (2, (2, 3, 7, 6)), (3, (1, 2, 5, 4, 5))):
    for _ties in (False, True):
        _x = rand(*_shape)
        _x = np.round(_x) if _ties else _x
        _t = "ties" if _ties else "distinct"
        for _kw in POOL_ARGS + [dict(kernel_size=2, dilation=2, padding=1, stride=1)]:
            POOL.append(case(f"max_pool{_nd}d", [_x], _kw, id=f"max{_nd}d-{_kw}-{_t}"))
        for _kw in POOL_ARGS:
            POOL.append(case(f"avg_pool{_nd}d", [_x], _kw, id=f"avg{_nd}d-{_kw}-{_t}"))
            POOL.append(case(f"avg_pool{_nd}d", [_x], dict(_kw, count_include_pad=False),
                             id=f"avg{_nd}d-{_kw}-excl-{_t}"))
            if _nd > 1:
                POOL.append(case(f"avg_pool{_nd}d", [_x], dict(_kw, divisor_override=3),
                                 id=f"avg{_nd}d-{_kw}-div-{_t}"))
        for _o in (1, 3, (2, None, 3)[:_nd] if _nd > 1 else 4):
            POOL.append(case(f"adaptive_avg_pool{_nd}d", [_x], {"output_size": _o},
                             id=f"aavg{_nd}d-{_o}-{_t}"))
            POOL.append(case(f"adaptive_max_pool{_nd}d", [_x], {"output_size": _o},
                             id=f"amax{_nd}d-{_o}-{_t}"))
        _pos = np.abs(_x) + 0.1
        POOL.append(case(f"lp_pool{_nd}d", [_pos], dict(norm_type=2, kernel_size=2),
                         id=f"lp{_nd}d-2-{_t}"))
        POOL.append(case(f"lp_pool{_nd}d", [_pos], dict(norm_type=3, kernel_size=3, stride=2,
                                                        ceil_mode=True), id=f"lp{_nd}d-3-{_t}"))
POOL.append(case("max_pool2d", [rand(3, 6, 5)], {"kernel_size": 2}, id="max2d-unbatched"))


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", POOL)
def test_pooling_matches_torch(name, args, kwargs, diff, tkw, tol):
    run_case(name, args, kwargs, diff, tkw, tol)


@needs_torch
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", POOL_ARGS + [{"output_size": 3}], ids=str)
def test_pooling_indices_match_torch(nd, kw):
    shape = ((2, 3, 9), (2, 3, 7, 6), (1, 2, 5, 4, 5))[nd - 1]
    x = np.round(rand(*shape))  # ties: the first maximum wins
    name = f"adaptive_max_pool{nd}d" if "output_size" in kw else f"max_pool{nd}d"
    y, i = getattr(F, name)(x, **kw, return_indices=True)
    ty, ti = getattr(TF, name)(torch.tensor(x), **kw, return_indices=True)
    assert i.dtype == np.int64
    np.testing.assert_array_equal(i.array, ti.numpy())
    np.testing.assert_array_equal(y.array, ty.numpy())


def test_pooling_against_numpy():
    x = rand(2, 3, 6, 4)
    blocks = x.reshape(2, 3, 3, 2, 2, 2)
    np.testing.assert_allclose(F.max_pool2d(x, 2).array, blocks.max(axis=(3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(x, 2).array, blocks.mean(axis=(3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(x, 2, divisor_override=3).array,
                               blocks.sum(axis=(3, 5)) / 3)
    np.testing.assert_allclose(F.lp_pool2d(np.abs(x), 2, 2).array,
                               np.sqrt((blocks ** 2).sum(axis=(3, 5))))
    np.testing.assert_allclose(F.adaptive_max_pool2d(x, 1).array,
                               x.max(axis=(2, 3), keepdims=True))
    y, i = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 3, -1),
                                                     i.array.reshape(2, 3, -1), -1),
                                  y.array.reshape(2, 3, -1))
    # ties: the gradient goes to the first maximum only
    v = pg.Variable(np.ones((1, 1, 2, 2)))
    (g,) = pg.grad([F.max_pool2d(v, 2, return_indices=True)[0]], [v],
                   grad_outputs=[np.ones((1, 1, 1, 1))])
    np.testing.assert_array_equal(g.array.ravel(), [1.0, 0.0, 0.0, 0.0])
