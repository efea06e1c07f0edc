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
    grads = pg.grad([y], [pv[i] for i in diff], grad_outputs=[gy], allow_unused=True)
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
    # output_padding at or above the stride, below the dilation (PyTorch allows it)
    case("conv_transpose2d", [rand(2, 2, 3, 4), rand(2, 1, 2, 3), rand(1)],
         {"stride": (1, 2), "padding": (2, 1), "output_padding": (1, 1), "dilation": 2},
         id="conv_transpose2d-wide-output-padding"),
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


# --------------------------------------------------------------------- normalization, dropout
@needs_torch
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 2, 2)])
def test_batch_norm_matches_torch_and_updates_running_stats(training, affine, shape):
    x = rand(*shape)
    rm, rv = rand(3), rand(3, lo=0.5, hi=2.0)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    wb = [rand(3), rand(3)] if affine else [None, None]
    args = [x, rm, rv, *wb]
    xv = pg.Variable(x.copy())
    pv = [pg.Variable(a.copy()) if a is not None else None for a in wb]
    y = F.batch_norm(xv, rm, rv, *pv, training=training, momentum=0.3, eps=1e-4)
    tx = torch.tensor(x, requires_grad=True)
    tw = [torch.tensor(a, requires_grad=True) if a is not None else None for a in wb]
    ty = TF.batch_norm(tx, trm, trv, *tw, training=training, momentum=0.3, eps=1e-4)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rm, trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv, trv.numpy(), rtol=1e-12)
    gy = rand(*shape)
    ins = [xv] + [v for v in pv if v is not None]
    tins = [tx] + [t for t in tw if t is not None]
    for g, tg in zip(pg.grad([y], ins, grad_outputs=[gy]),
                     torch.autograd.grad([ty], tins, grad_outputs=[torch.tensor(gy)]),
                     strict=True):
        np.testing.assert_allclose(g.array, tg.numpy(), rtol=1e-8, atol=1e-10)
    assert args[1] is rm  # updated in place, not rebound


@needs_torch
def test_instance_norm_running_stats_match_torch():
    x = rand(2, 3, 4)
    rm, rv = rand(3), rand(3, lo=0.5, hi=2.0)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    F.instance_norm(x, rm, rv, momentum=0.3)
    TF.instance_norm(torch.tensor(x), trm, trv, momentum=0.3)
    np.testing.assert_allclose(rm, trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv, trv.numpy(), rtol=1e-12)


NORM = [
    case("instance_norm", [rand(2, 3, 4)]),
    case("instance_norm", [rand(2, 3, 4, 2), rand(3), rand(3, lo=0.5, hi=2), rand(3), rand(3)],
         {"use_input_stats": False}, diff=[0, 3, 4], id="instance_norm-running"),
    case("layer_norm", [rand(2, 3, 4), (3, 4), rand(3, 4), rand(3, 4)]),
    case("layer_norm", [rand(2, 3, 4), [4]], {"eps": 1e-3}, id="layer_norm-eps"),
    case("group_norm", [rand(2, 6, 4), 3, rand(6), rand(6)]),
    case("group_norm", [rand(2, 6, 2, 2), 2], id="group_norm-plain"),
    case("local_response_norm", [rand(2, 6, 4), 3]),
    case("local_response_norm", [rand(2, 5, 2, 3), 2], {"alpha": 0.5, "beta": 0.6, "k": 2.0},
         id="lrn-params"),
    case("rms_norm", [rand(2, 3, 4), (4,), rand(4)]),
    case("rms_norm", [rand(2, 3, 4), (3, 4)], {"eps": 1e-3}, id="rms_norm-eps"),
    case("embedding", [np.array([[0, 2, 2], [5, 1, 2]]), rand(6, 3)]),
    case("embedding", [np.array([[0, 2, 2], [5, 1, 2]]), rand(6, 3)], {"padding_idx": 2},
         id="embedding-padding"),
    case("embedding", [np.array([[0, 2, 2], [5, 1, 2]]), rand(6, 3)],
         {"scale_grad_by_freq": True, "padding_idx": -1}, id="embedding-freq"),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", NORM)
def test_norms_match_torch(name, args, kwargs, diff, tkw, tol):
    run_case(name, args, kwargs, diff, tkw, tol)


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalizes_weight_like_torch(norm_type):
    ids = np.array([[0, 2, 2], [5, 1, 2]])
    w = rand(6, 3) * 3
    tw = torch.tensor(w.copy())
    y = F.embedding(ids, w, max_norm=1.5, norm_type=norm_type)
    ty = TF.embedding(torch.tensor(ids), tw, max_norm=1.5, norm_type=norm_type)
    np.testing.assert_allclose(y.array, ty.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w, tw.numpy(), rtol=1e-12)


def test_norms_against_numpy():
    x = rand(4, 3, 5)
    rm, rv = np.zeros(3), np.ones(3)
    y = F.batch_norm(x, rm, rv, training=True, momentum=0.25, eps=0.0).array
    mu, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(y, (x - mu[:, None]) / np.sqrt(var[:, None]), rtol=1e-10)
    np.testing.assert_allclose(rm, 0.25 * mu, rtol=1e-12)
    np.testing.assert_allclose(rv, 0.75 + 0.25 * x.var(axis=(0, 2), ddof=1), rtol=1e-12)
    y = F.batch_norm(x, rm, rv, eps=0.0).array  # evaluation: the running statistics
    np.testing.assert_allclose(y, (x - rm[:, None]) / np.sqrt(rv[:, None]), rtol=1e-10)
    w = rand(5)
    np.testing.assert_allclose(F.rms_norm(x, (5,), w, eps=1e-6).array,
                               x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6) * w)
    ids = np.array([[1, 0], [1, 1]])
    wv = pg.Variable(rand(3, 2))
    (g,) = pg.grad([F.embedding(ids, wv, scale_grad_by_freq=True)], [wv],
                   grad_outputs=[np.ones((2, 2, 2))])
    np.testing.assert_allclose(g.array, [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(F.one_hot(np.array([[0, 2], [1, 0]]), 4).array,
                                  np.eye(4, dtype=np.int64)[[[0, 2], [1, 0]]])
    assert F.one_hot(np.array([3, 1])).shape == (2, 4)


@needs_torch
def test_one_hot_matches_torch():
    ids = np.array([[0, 2, 2], [5, 1, 2]])
    for n in (-1, 7):
        np.testing.assert_array_equal(F.one_hot(ids, n).array,
                                      TF.one_hot(torch.tensor(ids), n).numpy())


def test_dropout_family():
    pg.random.seed(0)
    x = np.ones((64, 16, 3, 3))
    for p in (0.0, 0.3):
        y = F.dropout(x, p).array
        assert set(np.unique(y)) <= {0.0, 1 / (1 - p)}
        assert abs((y == 0).mean() - p) < 0.02
    np.testing.assert_array_equal(F.dropout(x, 1.0).array, 0 * x)
    np.testing.assert_array_equal(F.dropout(x, 0.5, training=False).array, x)
    for f, shape in ((F.dropout1d, (64, 16, 9)), (F.dropout2d, x.shape),
                     (F.dropout3d, (64, 16, 1, 3, 3))):
        y = f(np.ones(shape), 0.25).array.reshape(64, 16, -1)
        assert (y.std(axis=-1) == 0).all()  # whole channels
        assert abs((y[..., 0] == 0).mean() - 0.25) < 0.05
    z = RNG.standard_normal(40000)
    y = F.alpha_dropout(z, 0.3, training=True).array
    assert abs(y.mean()) < 0.03 and abs(y.std() - 1) < 0.03
    assert len(np.unique(y[z == z.max()])) == 1
    y = F.feature_alpha_dropout(np.ones((8, 4, 5)), 0.5, training=True).array
    assert (y.std(axis=-1) == 0).all()
    np.testing.assert_array_equal(F.alpha_dropout(z, 0.5).array, z)  # training=False default
    v = pg.Variable(np.ones(1000))
    (g,) = pg.grad([F.dropout(v, 0.5)], [v], grad_outputs=[np.ones(1000)])
    assert set(np.unique(g.array)) == {0.0, 2.0}


# --------------------------------------------------------------------- losses and distances
_X, _T = rand(5, 4), np.array([0, 3, -100, 1, 3])
_X3 = rand(3, 4, 2, 2)
_T3 = RNG.integers(0, 4, (3, 2, 2))
_T3[0, 0, 0] = -100
_W = rand(4, lo=0.2, hi=2)
_P = np.abs(rand(5, 4))
_P /= _P.sum(1, keepdims=True)
LOSSES = []
for _red in ("mean", "sum", "none"):
    _r = {"reduction": _red}
    for _kw in ({}, {"weight": _W}, {"label_smoothing": 0.2},
                {"weight": _W, "label_smoothing": 0.3}):
        for _x, _t, _s in ((_X, _T, "2d"), (_X3, _T3, "4d")):
            LOSSES.append(case("cross_entropy", [_x, _t], dict(_kw, **_r), diff=[0],
                               id=f"ce-{_s}-{sorted(_kw)}-{_red}"))
            if "label_smoothing" not in _kw:
                LOSSES.append(case("nll_loss", [_x, _t], dict(_kw, **_r), diff=[0],
                                   id=f"nll-{_s}-{sorted(_kw)}-{_red}"))
        LOSSES.append(case("cross_entropy", [_X, _P], dict(_kw, **_r),
                           id=f"ce-prob-{sorted(_kw)}-{_red}"))
    LOSSES += [
        case("cross_entropy", [_X, np.array([0, 3, 1, 1, 3])], {"ignore_index": 3, **_r},
             diff=[0], id=f"ce-ignore3-{_red}"),
        case("cross_entropy", [rand(4), np.array(2)], _r, diff=[0], id=f"ce-1d-{_red}"),
        case("nll_loss", [rand(4), np.array(2)], _r, diff=[0], id=f"nll-1d-{_red}"),
        case("binary_cross_entropy", [rand(6, 3, lo=0.01, hi=0.99), rand(6, 3, lo=0, hi=1),
                                      rand(6, 3, lo=0, hi=1)], _r, diff=[0, 1],
             id=f"bce-{_red}"),
        # PyTorch's input gradient at and near p = 0 and 1: (p - t) / max(p (1 - p), 1e-12)
        case("binary_cross_entropy", [np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-50, 1e-13]),
                                      np.array([0.0, 1.0, 1.0, 0.0, 0.3, 1.0, 0.5])], _r,
             diff=[0], tol={"rtol": 1e-6}, id=f"bce-edges-{_red}"),
        case("binary_cross_entropy_with_logits",
             [rand(6, 3, lo=-30, hi=30), rand(6, 3, lo=0, hi=1), rand(6, 3, lo=0, hi=1)],
             dict(_r, pos_weight=rand(3, lo=0.5, hi=3)), diff=[0, 1], id=f"bcel-{_red}"),
        case("binary_cross_entropy_with_logits", [rand(6, 3), rand(6, 3, lo=0, hi=1)], _r,
             id=f"bcel-plain-{_red}"),
        case("kl_div", [np.log(np.abs(rand(4, 3)) + 0.1), np.abs(rand(4, 3)) * [[0], [1],
                                                                                 [1], [1]]],
             _r, diff=[0], id=f"kl-zero-target-{_red}"),
        case("kl_div", [np.log(np.abs(rand(4, 3)) + 0.1), np.abs(rand(4, 3)) + 0.1], _r,
             id=f"kl-{_red}"),
        case("kl_div", [np.log(np.abs(rand(4, 3)) + 0.1), rand(4, 3)],
             dict(_r, log_target=True), id=f"kl-log-{_red}"),
        case("gaussian_nll_loss", [rand(5, 3), rand(5, 3), 0.5], _r, id=f"gnll-float-{_red}"),
        case("soft_margin_loss", [rand(5, 3), np.sign(rand(5, 3))], _r, diff=[0],
             id=f"softmargin-{_red}"),
        case("multilabel_soft_margin_loss", [rand(5, 3), (rand(5, 3) > 0) * 1.0, rand(3)], _r,
             diff=[0, 1], id=f"mlsm-{_red}"),
        case("multi_margin_loss", [rand(3), np.array(1)], _r, diff=[0], id=f"mm-1d-{_red}"),
        case("mse_loss", [rand(4, 3), rand(3)], _r, id=f"mse-broadcast-{_red}"),
        case("triplet_margin_with_distance_loss", [rand(4, 3), rand(4, 3), rand(4, 3)],
             dict(_r, swap=True), id=f"tmwd-{_red}"),
    ]
    for _li in (True, False):
        for _full in (True, False):
            _x = rand(5, 3)
            LOSSES.append(case("poisson_nll_loss", [_x if _li else np.abs(_x) + 0.1,
                                                    RNG.integers(0, 5, (5, 3)) * 1.0],
                               dict(_r, log_input=_li, full=_full), diff=[0],
                               id=f"pnll-{_li}-{_full}-{_red}"))
    for _vs in ((5, 3), (5, 1), (5,)):
        _v = rand(*_vs, lo=0.1, hi=2)
        _v.flat[0] = 1e-8  # below eps: clamped in value, gradient passes
        for _full in (True, False):
            LOSSES.append(case("gaussian_nll_loss", [rand(5, 3), rand(5, 3), _v],
                               dict(_r, full=_full), id=f"gnll-{_vs}-{_full}-{_red}"))
    _xm = np.round(rand(5, 3) * 2) / 2  # margins hit 0 exactly
    for _p in (1, 2):
        LOSSES.append(case("multi_margin_loss", [_xm, np.array([0, 2, 1, 2, 0])],
                           dict(_r, p=_p), diff=[0], id=f"mm-{_p}-{_red}"))
        LOSSES.append(case("multi_margin_loss", [rand(5, 3), np.array([0, 2, 1, 2, 0]), _p,
                                                 0.5, rand(3)], _r, diff=[0],
                           id=f"mm-w-{_p}-{_red}"))
    _x, _t = rand(4, 3), rand(4, 3)
    _t[0] = _x[0]  # zero differences: PyTorch's l1 gradient 0 there
    _t[1, 0], _t[1, 1] = _x[1, 0] + 1.0, _x[1, 1] - 0.5  # |d| at beta / delta
    _w = rand(4, 3, lo=0.1, hi=1)
    for _n in ("mse_loss", "l1_loss", "huber_loss"):
        LOSSES.append(case(_n, [_x, _t], _r, id=f"{_n}-{_red}"))
        LOSSES.append(case(_n, [_x, _t], dict(_r, weight=_w), diff=[0, 1],
                           id=f"{_n}-w-{_red}"))
    for _b in (1.0, 0.5, 0.0):
        LOSSES.append(case("smooth_l1_loss", [_x, _t], dict(_r, beta=_b),
                           id=f"sl1-{_b}-{_red}"))
        LOSSES.append(case("huber_loss", [_x, _t], dict(_r, delta=_b or 2.0),
                           id=f"huber-{_b}-{_red}"))
    _y = np.sign(rand(6))
    _x1 = rand(6)
    for _m in (0.0, 0.5):
        # input2 chosen so that the hinge is exactly 0 for margin 0.5
        LOSSES.append(case("margin_ranking_loss", [_x1, _x1 + _y * 0.5, _y],
                           dict(_r, margin=_m), diff=[0, 1], id=f"mrank-{_m}-{_red}"))
        LOSSES.append(case("cosine_embedding_loss", [rand(4, 5), rand(4, 5),
                                                     np.array([1, -1, 1, -1])],
                           dict(_r, margin=_m), diff=[0, 1], id=f"cosemb-{_m}-{_red}"))
        LOSSES.append(case("cosine_embedding_loss", [rand(5), rand(5), np.array(-1)],
                           dict(_r, margin=_m), diff=[0, 1], id=f"cosemb-1d-{_m}-{_red}"))
    _h = rand(6)
    _h[0] = 1.0  # margin - input == 0
    for _m in (1.0, 0.5):
        LOSSES.append(case("hinge_embedding_loss", [_h, _y], dict(_r, margin=_m), diff=[0],
                           id=f"hinge-{_m}-{_red}"))
    for _p in (2.0, 1.0):
        for _sw in (False, True):
            LOSSES.append(case("triplet_margin_loss", [rand(4, 3), rand(4, 3), rand(4, 3)],
                               dict(_r, p=_p, swap=_sw, margin=0.5),
                               id=f"triplet-{_p}-{_sw}-{_red}"))
LOSSES += [
    case("nll_loss", [_X, _T], {"size_average": False}, diff=[0], id="nll-legacy-sum"),
    case("mse_loss", [_X, _P], {"reduce": False}, id="mse-legacy-none"),
    case("kl_div", [np.log(_P), np.abs(rand(5, 4))], {"reduction": "batchmean"}, id="kl-bm"),
]
_A, _B = rand(4, 5), rand(4, 5)
_Z = _A.copy()
_Z[0], _Z[1] = 0.0, _Z[1] * 1e-10
DISTANCES = [
    case("cosine_similarity", [_A, _B]),
    case("cosine_similarity", [_A, _B], {"dim": 0, "eps": 0.5}, id="cos-dim0-eps"),
    case("cosine_similarity", [rand(3, 1, 5), rand(4, 5)], {"dim": -1}, id="cos-broadcast"),
    case("cosine_similarity", [_Z, _B], id="cos-tiny-norms"),
    case("pdist", [np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])], id="pdist-duplicates"),
] + [case(n, args, dict(kw, p=p), id=f"{n}-{p}-{kw}")
     for p in (2.0, 1.0, 3.0, math.inf)
     for n, args, kw in (("pairwise_distance", [_A, _B], {}),
                         ("pairwise_distance", [_A, _B], {"keepdim": True, "eps": 0.0}),
                         ("pairwise_distance", [_A[0], _B[0]], {}),
                         ("pdist", [rand(5, 3)], {}))]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", LOSSES + DISTANCES)
def test_losses_match_torch(name, args, kwargs, diff, tkw, tol):
    run_case(name, args, kwargs, diff, tkw, tol)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_matches_torch(reduction):
    # PyTorch's gradient in log_probs is that of the loss composed with log_softmax (its
    # kernel assumes normalized inputs), so the gradients are compared in the scores.
    z = rand(6, 3, 4)
    rest = [RNG.integers(1, 4, (3, 3)), np.array([6, 5, 6]), np.array([3, 2, 1])]
    zv, zt = pg.Variable(z.copy()), torch.tensor(z, requires_grad=True)
    y = F.ctc_loss(F.log_softmax(zv, dim=-1), *rest, reduction=reduction)
    ty = TF.ctc_loss(TF.log_softmax(zt, -1), *map(torch.tensor, rest), reduction=reduction)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-10)
    gy = RNG.standard_normal(tuple(ty.shape))
    (g,) = pg.grad([y], [zv], grad_outputs=[gy])
    (tg,) = torch.autograd.grad([ty], [zt], grad_outputs=[torch.tensor(gy)])
    np.testing.assert_allclose(g.array, tg.numpy(), rtol=1e-8, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_impossible_alignment(zero_infinity):
    lp = TF.log_softmax(torch.tensor(rand(6, 3, 4)), -1).numpy()
    args = [lp, np.array([[1, 1, 1], [2, 2, 2], [1, 2, 3]]), np.array([6, 2, 6]),
            np.array([3, 3, 3])]
    y = F.ctc_loss(*args, reduction="none", zero_infinity=zero_infinity)
    ty = TF.ctc_loss(*map(torch.tensor, args), reduction="none", zero_infinity=zero_infinity)
    np.testing.assert_allclose(y.array, ty.numpy(), rtol=1e-10)


def _log_softmax(x, axis=1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def test_losses_against_numpy():
    x, t, w = rand(6, 4), np.array([0, 3, 2, -100, 1, 3]), rand(4, lo=0.5, hi=2.0)
    lp = _log_softmax(x)
    keep = t != -100
    tt = np.where(keep, t, 0)
    picked = lp[np.arange(6), tt]
    np.testing.assert_allclose(F.cross_entropy(x, t).array, -picked[keep].mean())
    wt = w[tt] * keep
    np.testing.assert_allclose(F.cross_entropy(x, t, w).array, -(picked * wt).sum() / wt.sum())
    ls = 0.1
    smooth = -(lp * w).sum(1) * keep
    ref = (1 - ls) * -(picked * wt).sum() / wt.sum() + ls / 4 * smooth.sum() / wt.sum()
    np.testing.assert_allclose(F.cross_entropy(x, t, w, label_smoothing=ls).array, ref)
    p = np.abs(rand(6, 4))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(F.cross_entropy(x, p, label_smoothing=ls).array,
                               -((p * (1 - ls) + ls / 4) * lp).sum(1).mean())
    np.testing.assert_allclose(F.nll_loss(lp, t, reduction="none").array,
                               np.where(keep, -picked, 0.0))
    q, y = rand(5, lo=0.05, hi=0.95), rand(5, lo=0, hi=1)
    np.testing.assert_allclose(F.binary_cross_entropy(q, y).array,
                               -(y * np.log(q) + (1 - y) * np.log(1 - q)).mean())
    assert float(F.binary_cross_entropy(np.array([0.0]), np.array([1.0])).array) == 100.0
    z, pw = rand(5, 3), rand(3, lo=0.5, hi=2)
    yz = rand(5, 3, lo=0, hi=1)
    sig = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(
        F.binary_cross_entropy_with_logits(z, yz, pos_weight=pw).array,
        -(pw * yz * np.log(sig) + (1 - yz) * np.log(1 - sig)).mean())
    lq, tp = np.log(p), np.abs(rand(6, 4))
    tp[0, 0] = 0.0
    kl = np.where(tp > 0, tp * np.log(np.where(tp > 0, tp, 1)), 0) - tp * lq
    np.testing.assert_allclose(F.kl_div(lq, tp, reduction="batchmean").array, kl.sum() / 6)
    var = rand(5, 3, lo=0.5, hi=2)
    np.testing.assert_allclose(F.gaussian_nll_loss(z, yz, var, full=True).array,
                               (0.5 * (np.log(var) + (z - yz) ** 2 / var)
                                + 0.5 * np.log(2 * np.pi)).mean())
    k = np.array([0.0, 1.0, 3.0])
    r = np.array([0.5, -0.2, 1.0])
    np.testing.assert_allclose(F.poisson_nll_loss(r, k, full=True, reduction="none").array,
                               np.exp(r) - k * r + [0, 0, 3 * np.log(3) - 3 + 0.5 * np.log(
                                   6 * np.pi)])
    s = np.array([[0.1, 0.8, 0.3]])
    np.testing.assert_allclose(F.multi_margin_loss(s, np.array([1])).array,
                               (max(0, 1 - 0.8 + 0.1) + max(0, 1 - 0.8 + 0.3)) / 3)
    a, b = rand(4, 5), rand(4, 5)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(F.cosine_similarity(a, b).array, cos)
    np.testing.assert_allclose(F.cosine_embedding_loss(a, b, np.array([1, -1, 1, -1]),
                                                       reduction="none").array,
                               np.where([1, 0, 1, 0], 1 - cos, np.maximum(cos, 0)))
    np.testing.assert_allclose(F.pairwise_distance(a, b, p=3.0, eps=0.0).array,
                               (np.abs(a - b) ** 3).sum(1) ** (1 / 3))
    d = F.pdist(a).array
    iu = np.triu_indices(4, 1)
    np.testing.assert_allclose(d, np.linalg.norm(a[iu[0]] - a[iu[1]], axis=1))
    dp = np.linalg.norm(a - b + 1e-6, axis=1)
    dn = np.linalg.norm(a - b[::-1] + 1e-6, axis=1)
    np.testing.assert_allclose(F.triplet_margin_loss(a, b, b[::-1]).array,
                               np.maximum(1 + dp - dn, 0).mean())
    e = np.array([0.2, -0.5, 3.0])
    np.testing.assert_allclose(F.smooth_l1_loss(e, 0 * e, beta=0.5, reduction="none").array,
                               [0.04, 0.25, 2.75])
    np.testing.assert_allclose(F.huber_loss(e, 0 * e, delta=0.5, reduction="none").array,
                               [0.02, 0.125, 1.375])
    ww = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(F.mse_loss(e, 0 * e, weight=ww).array, (ww * e * e).sum() / 6)


# composites that are new math get numerical gradient checks of orders 1 and 2
GRADCHECK = [
    ("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), 2),
    ("pairwise_distance", lambda a, b: F.pairwise_distance(a, b, p=3.0), 2),
    ("pdist", lambda a, b: F.pdist(a), 2),
    ("triplet", lambda a, b: F.triplet_margin_loss(a, b, b[::-1] * 2, margin=5.0, swap=True),
     2),
    ("cosine_embedding", lambda a, b: F.cosine_embedding_loss(a, b, np.array([1, -1, 1]),
                                                              margin=-1.0), 2),
    ("cross_entropy", lambda a, b: F.cross_entropy(a, np.array([0, 3, 1]),
                                                   weight=np.array([1.0, 2.0, 0.5, 1.5]),
                                                   label_smoothing=0.2), 2),
    ("cross_entropy_prob", lambda a, b: F.cross_entropy(a, F.softmax(b, dim=1),
                                                        label_smoothing=0.1), 2),
    ("nll_loss", lambda a, b: F.nll_loss(a, np.array([0, -100, 2]), reduction="sum"), 2),
    ("bce", lambda a, b: F.binary_cross_entropy(F.sigmoid(a), F.sigmoid(b)), 2),
    ("bce_logits", lambda a, b: F.binary_cross_entropy_with_logits(
        a, F.sigmoid(b), pos_weight=np.array([0.5, 2.0, 1.0, 3.0])), 2),
    ("kl_div", lambda a, b: F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1),
                                     reduction="batchmean"), 2),
    ("poisson", lambda a, b: F.poisson_nll_loss(a, b * b, full=True), 2),
    ("gaussian", lambda a, b: F.gaussian_nll_loss(a, b, a * a + 0.5, full=True), 2),
    ("soft_margin", lambda a, b: F.soft_margin_loss(a, b), 2),
    ("multilabel_soft_margin", lambda a, b: F.multilabel_soft_margin_loss(
        a, F.sigmoid(b), weight=np.array([1.0, 2.0, 0.5, 1.5])), 2),
    ("multi_margin", lambda a, b: F.multi_margin_loss(a, np.array([0, 3, 1]), p=2,
                                                      margin=3.0), 2),
    ("margin_ranking", lambda a, b: F.margin_ranking_loss(a, b, np.sign(b.array) * 1.0,
                                                          margin=5.0), 2),
    ("hinge_embedding", lambda a, b: F.hinge_embedding_loss(a, np.sign(b.array), 5.0), 2),
    ("smooth_l1", lambda a, b: F.smooth_l1_loss(a, b, beta=10.0), 2),
    ("huber", lambda a, b: F.huber_loss(a, b, delta=10.0, weight=b * b), 2),
    ("mse_weighted", lambda a, b: F.mse_loss(a, b, weight=b * b + 1.0), 2),
    ("rms_norm", lambda a, b: F.rms_norm(a, (4,), b[0]), 2),
]


@pytest.mark.parametrize("name, f, order", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_loss_composites_gradcheck(name, f, order):
    a = np.array([[0.3, -1.2, 0.8, 0.5], [1.1, 0.4, -0.6, -1.4], [-0.9, 0.7, 1.3, 0.2]])
    b = np.array([[1.2, 0.1, -0.7, 0.9], [-0.5, 1.4, 0.6, -1.1], [0.8, -1.3, 0.4, 1.6]])
    check_backward(f, [a, b])
    if order >= 2:
        check_double_backward(f, [a, b])


# --------------------------------------------------------------------- other libraries, errors
def _i(*v):
    return np.array(v[0] if len(v) == 1 else v, dtype=np.int64)


STRICT = {  # name: (f(c, *variables) with c moving constants to the library, inputs)
    "hardswish": (lambda c, x: F.hardswish(x), [rand(5)]),
    "softplus": (lambda c, x: F.softplus(x, 2.0, 1.0), [rand(5)]),
    "glu": (lambda c, x: F.glu(x), [rand(2, 4)]),
    "prelu": (lambda c, x, w: F.prelu(x, w), [rand(2, 3, 2), rand(3)]),
    "normalize": (lambda c, x: F.normalize(x), [rand(3, 4)]),
    "conv2d": (lambda c, x, w: F.conv2d(x, w, padding=1, stride=2),
               [rand(1, 2, 5, 5), rand(3, 2, 3, 3)]),
    "fold": (lambda c, x: F.fold(F.unfold(x, 2), (4, 4), 2), [rand(1, 2, 4, 4)]),
    "pixel_shuffle": (lambda c, x: F.pixel_shuffle(x, 2), [rand(1, 4, 2, 2)]),
    "pad": (lambda c, x: F.pad(x, (1, 1, 2, 0), mode="reflect"), [rand(1, 2, 4, 4)]),
    "bilinear": (lambda c, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                 [rand(1, 2, 3, 3)]),
    "bicubic": (lambda c, x: F.interpolate(x, size=(4, 5), mode="bicubic"),
                [rand(1, 2, 3, 3)]),
    "nearest": (lambda c, x: F.interpolate(x, scale_factor=1.5), [rand(1, 2, 3, 3)]),
    "max_pool": (lambda c, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True,
                                           return_indices=True)[0], [rand(1, 2, 5, 5)]),
    "adaptive_max": (lambda c, x: F.adaptive_max_pool2d(x, 2), [rand(1, 2, 5, 5)]),
    "avg_div": (lambda c, x: F.avg_pool2d(x, 2, divisor_override=3), [rand(1, 2, 5, 5)]),
    "rms_norm": (lambda c, x: F.rms_norm(x, (3,)), [rand(2, 3)]),
    "embedding": (lambda c, w: F.embedding(c(_i(1, 0, 1)), w, scale_grad_by_freq=True),
                  [rand(3, 2)]),
    # class weights are constants (PyTorch has no gradient for them)
    "cross_entropy": (lambda c, x: F.cross_entropy(x, c(_i(0, 2, -100, 1)),
                                                   c(np.array([0.5, 1.5, 2.0])),
                                                   label_smoothing=0.1), [rand(4, 3)]),
    "bce": (lambda c, p: F.binary_cross_entropy(p, c(np.array([1.0, 0.0, 0.5]))),
            [np.array([0.0, 1.0, 0.5])]),
    "bce_logits": (lambda c, x: F.binary_cross_entropy_with_logits(
        x, c(np.array([[1.0, 0.0]] * 4)), pos_weight=c(np.array([2.0, 0.5]))), [rand(4, 2)]),
    "kl_div": (lambda c, x, t: F.kl_div(x, t, reduction="batchmean"),
               [rand(4), rand(4, lo=0)]),
    "poisson": (lambda c, x: F.poisson_nll_loss(x, c(np.array([0.0, 1.0, 3.0])), full=True),
                [rand(3)]),
    "gaussian": (lambda c, x, v: F.gaussian_nll_loss(x, x * 0.5, v),
                 [rand(4, 2), rand(4, lo=0.1)]),
    "multi_margin": (lambda c, x: F.multi_margin_loss(x, c(_i(0, 1, 2, 1))), [rand(4, 3)]),
    "ctc": (lambda c, x: F.ctc_loss(F.log_softmax(x, dim=-1), c(_i([1, 2], [1, 1])),
                                    c(_i(5, 5)), c(_i(2, 2))), [rand(5, 2, 3)]),
    "cosine_similarity": (lambda c, a, b: F.cosine_similarity(a, b),
                          [rand(3, 4), rand(3, 4)]),
    "pdist": (lambda c, a: F.pdist(a), [rand(3, 4)]),
    "triplet": (lambda c, a, b, n: F.triplet_margin_loss(a, b, n, swap=True),
                [rand(3, 2), rand(3, 2), rand(3, 2)]),
    "cosine_embedding": (lambda c, a, b: F.cosine_embedding_loss(a, b, c(_i(1, -1, 1))),
                         [rand(3, 2), rand(3, 2)]),
    "huber": (lambda c, a, b: F.huber_loss(a, b, weight=b * b), [rand(3), rand(3)]),
    "attention": (lambda c, q, k: F.scaled_dot_product_attention(q, k, k, is_causal=True),
                  [rand(2, 3, 4), rand(2, 3, 4)]),
    "grid_sample": (lambda c, x, t: F.grid_sample(x, F.affine_grid(t, (1, 2, 3, 4)),
                                                  padding_mode="reflection"),
                    [rand(1, 2, 3, 4), rand(1, 2, 3)]),
    "max_unpool": (lambda c, x: F.max_unpool2d(*F.max_pool2d(x, 3, 1, return_indices=True),
                                               3, 1), [rand(1, 2, 4, 4)]),
    "multilabel_margin": (lambda c, x: F.multilabel_margin_loss(x, c(_i([[2, 0, -1],
                                                                        [1, -1, 0]]))),
                          [rand(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(STRICT))
def test_array_api_strict_matches_numpy(name):
    xs = pytest.importorskip("array_api_strict")
    f, args = STRICT[name]
    dev = xs.Device("device1")

    def host(a):
        if isinstance(a, np.ndarray):
            return a
        return np.asarray(a.to_device(xs.Device("CPU_DEVICE")))

    def run(conv):
        vs = [pg.Variable(conv(a)) for a in args]
        y = f(conv, *vs)
        gs = pg.grad([pg.ops.sum(y * y)], vs)
        return host(y.array), [host(g.array) for g in gs], y

    ref, ref_grads, _ = run(lambda a: a)
    got, grads, y = run(lambda a: xs.asarray(a, device=dev))
    assert y.array.device == dev
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    for g, r in zip(grads, ref_grads, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_batch_norm_updates_strict_arrays_in_place():
    xs = pytest.importorskip("array_api_strict")
    rm, rv = xs.zeros(2, dtype=xs.float64), xs.ones(2, dtype=xs.float64)
    F.batch_norm(xs.asarray([[1.0, 2.0], [3.0, 6.0]]), rm, rv, training=True, momentum=0.5)
    np.testing.assert_allclose(np.asarray(rm), [1.0, 2.0])
    np.testing.assert_allclose(np.asarray(rv), [1.5, 4.5])


@needs_torch
def test_torch_tensors_as_inputs():
    x = torch.tensor(rand(3, 4))
    t = torch.tensor([0, 2, 1])
    y = F.cross_entropy(x, t, label_smoothing=0.1)
    assert isinstance(y.array, torch.Tensor)
    np.testing.assert_allclose(y.array.numpy(), TF.cross_entropy(x, t, label_smoothing=0.1))


ERRORS = [
    (lambda: F.relu(np.array([1, 2])), pg.DTypeError, "relu(input)"),
    (lambda: F.glu(rand(3, 3)), pg.ShapeError, "even size"),
    (lambda: F.prelu(rand(2, 3), rand(4)), pg.ShapeError, "prelu(weight)"),
    (lambda: F.gelu(rand(2), approximate="fast"), ValueError, "gelu(approximate)"),
    (lambda: F.hardtanh(rand(2), 1.0, -1.0), ValueError, "hardtanh(min_val)"),
    (lambda: F.conv2d(rand(2, 3), rand(1, 1, 1, 1)), pg.ShapeError, "conv2d(input)"),
    (lambda: F.fold(rand(1, 4, 5), (3, 3), 2), pg.ShapeError, "fold(input)"),
    (lambda: F.pixel_shuffle(rand(1, 3, 2, 2), 2), pg.ShapeError, "pixel_shuffle"),
    (lambda: F.pad(rand(2, 3), (1, 2, 3)), ValueError, "pad(pad)"),
    (lambda: F.pad(rand(2, 3), (1, 1), mode="edge"), ValueError, "pad(mode)"),
    (lambda: F.pad(rand(2, 3), (3, 0), mode="reflect"), ValueError, "reflect"),
    (lambda: F.interpolate(rand(1, 1, 3), size=4, mode="bilinear"), pg.ShapeError,
     "interpolate(input)"),
    (lambda: F.interpolate(rand(1, 1, 3), size=4, scale_factor=2), ValueError, "exactly one"),
    (lambda: F.interpolate(rand(1, 1, 3), size=4, align_corners=True), ValueError,
     "align_corners"),
    (lambda: F.interpolate(rand(1, 1, 3, 3), size=4, mode="bilinear", antialias=True),
     ValueError, "antialias"),
    (lambda: F.max_pool2d(rand(1, 1, 4, 4), 2, padding=2, return_indices=True), ValueError,
     "max_pool2d(padding)"),
    (lambda: F.adaptive_avg_pool2d(rand(1, 1, 4, 4), (0, 2)), ValueError, "output_size"),
    (lambda: F.avg_pool2d(rand(1, 1, 4, 4), 2, divisor_override=0), ValueError,
     "divisor_override"),
    (lambda: F.batch_norm(rand(4, 3), None, None), ValueError, "batch_norm(running_mean)"),
    (lambda: F.batch_norm(rand(1, 3), np.zeros(3), np.ones(3), training=True),
     pg.ShapeError, "more than one value"),
    (lambda: F.layer_norm(rand(2, 3), (2,)), pg.ShapeError, "layer_norm(normalized_shape)"),
    (lambda: F.dropout(rand(3), 1.5), ValueError, "dropout(p)"),
    (lambda: F.dropout2d(rand(3), 0.5), pg.ShapeError, "dropout2d(input)"),
    (lambda: F.embedding(rand(3), rand(3, 2)), pg.DTypeError, "embedding(input)"),
    (lambda: F.embedding(_i(0), rand(3, 2), padding_idx=3), ValueError, "padding_idx"),
    (lambda: F.one_hot(_i(0, 3), 3), ValueError, "one_hot(tensor)"),
    (lambda: F.cross_entropy(rand(3, 4), _i(0, 4, 1)), IndexError, "cross_entropy(target)"),
    (lambda: F.cross_entropy(rand(3, 4), _i(0, 1)), pg.ShapeError, "cross_entropy(target)"),
    (lambda: F.cross_entropy(rand(3, 4), rand(3, 3)), pg.ShapeError, "probabilities"),
    (lambda: F.cross_entropy(rand(3, 4), _i(0, 1, 2), reduction="avg"), ValueError,
     "cross_entropy(reduction)"),
    (lambda: F.cross_entropy(rand(3, 4), _i(0, 1, 2), label_smoothing=2.0), ValueError,
     "label_smoothing"),
    (lambda: F.nll_loss(rand(3, 4), _i(0, 1, 2), weight=rand(3)), pg.ShapeError,
     "nll_loss(weight)"),
    (lambda: F.binary_cross_entropy(np.array([0.5, 1.5]), np.ones(2)), ValueError,
     "probabilities in [0, 1]"),
    (lambda: F.binary_cross_entropy(rand(3, lo=0, hi=1), rand(2)), pg.ShapeError,
     "binary_cross_entropy(target)"),
    (lambda: F.gaussian_nll_loss(rand(4, 3), rand(4, 3), rand(3, 4)), pg.ShapeError,
     "gaussian_nll_loss(var)"),
    (lambda: F.gaussian_nll_loss(rand(2), rand(2), np.array([1.0, -1.0])), ValueError,
     "non-negative"),
    (lambda: F.multi_margin_loss(rand(2, 3), _i(0, 1), p=3), ValueError, "multi_margin_loss(p)"),
    (lambda: F.smooth_l1_loss(rand(2), rand(2), beta=-1.0), ValueError, "beta"),
    (lambda: F.mse_loss(rand(2, 3), rand(4)), pg.ShapeError, "mse_loss"),
    (lambda: F.pdist(rand(3)), pg.ShapeError, "pdist(input)"),
    (lambda: F.cosine_embedding_loss(rand(2, 3), rand(2, 4), _i(1, 1)), pg.ShapeError,
     "cosine_embedding_loss"),
    (lambda: F.kl_div(rand(2), rand(2), reduction="batch"), ValueError, "kl_div(reduction)"),
    (lambda: F.scaled_dot_product_attention(rand(2, 3), rand(2, 4), rand(2, 3)),
     pg.ShapeError, "scaled_dot_product_attention(key)"),
    (lambda: F.scaled_dot_product_attention(rand(2, 3), rand(2, 3), rand(2, 3), rand(2, 2) > 0,
                                            is_causal=True), ValueError, "is_causal"),
    (lambda: F.affine_grid(rand(1, 2, 3), (1, 1, 2, 2, 2)), pg.ShapeError, "affine_grid(theta)"),
    (lambda: F.grid_sample(rand(1, 1, 2, 2), rand(1, 2, 2, 2), mode="bicubic"), ValueError,
     "grid_sample(mode)"),
    (lambda: F.max_unpool2d(rand(1, 1, 2, 2), _i([[[[0, 1], [2, 9]]]]), 2, output_size=(2, 2)),
     IndexError, "max_unpool2d(indices)"),
    (lambda: F.multilabel_margin_loss(rand(2, 3), _i([0, 1])), pg.ShapeError,
     "multilabel_margin_loss(target)"),
]


@pytest.mark.parametrize("f, error, message", ERRORS, ids=[e[2] for e in ERRORS])
def test_bad_input_raises_a_clear_error(f, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        f()


def test_batch_norm_refuses_immutable_running_stats():
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(TypeError, match="batch_norm\\(running_mean\\): expected a mutable"):
        F.batch_norm(jnp.ones((4, 2)), jnp.zeros(2), jnp.ones(2), training=True)


def test_public_surface():
    assert pg.nn.functional is F
    assert len(F.__all__) == len(set(F.__all__))
    for name in F.__all__:
        f = getattr(F, name)
        assert callable(f) and f.__doc__ and "Examples" in f.__doc__, name


# --------------------------------------------------------------------- attention, sampling
_Q, _K, _V = rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 2)
SAMPLING = [
    case("scaled_dot_product_attention", [_Q, _K, _V], id="sdpa"),
    case("scaled_dot_product_attention", [_Q, rand(2, 3, 4, 5), rand(2, 3, 4, 2)],
         {"is_causal": True}, id="sdpa-causal"),
    case("scaled_dot_product_attention", [_Q, _K, _V], {"attn_mask": rand(4, 6),
                                                        "scale": 0.3}, id="sdpa-float-mask"),
    case("scaled_dot_product_attention", [_Q, _K, _V], {"attn_mask": rand(2, 1, 4, 6) > -1.0},
         id="sdpa-bool-mask"),
    case("scaled_dot_product_attention", [rand(2, 4, 3, 5), rand(2, 2, 6, 5), rand(2, 2, 6, 3)],
         {"enable_gqa": True}, id="sdpa-gqa"),
    case("scaled_dot_product_attention", [rand(3, 5), rand(6, 5), rand(6, 2)], id="sdpa-2d"),
] + [
    case("affine_grid", [rand(2, *th), size], {"align_corners": al}, id=f"affine-{size}-{al}")
    for th, size in (((2, 3), (2, 1, 4, 5)), ((3, 4), (2, 1, 3, 4, 5)))
    for al in (True, False, None)
] + [
    case("grid_sample", [rand(2, 3, 5, 4), rand(2, 3, 4, 2, lo=-1.6, hi=1.6)],
         {"mode": mode, "padding_mode": pm, "align_corners": al},
         id=f"grid_sample-{mode}-{pm}-{al}")
    for mode in ("bilinear", "nearest") for pm in ("zeros", "border", "reflection")
    for al in (True, False)
] + [
    case("multilabel_margin_loss", [np.round(rand(4, 5) * 2) / 2,
                                    np.array([[3, 0, -1, 1, 2], [1, -1, -1, -1, -1],
                                              [0, 1, 2, 3, 4], [4, 4, 2, -1, 0]])],
         {"reduction": red}, diff=[0], id=f"mlm-{red}") for red in ("mean", "sum", "none")
] + [case("multilabel_margin_loss", [rand(5), np.array([3, 0, -1, 1, 2])], diff=[0],
          id="mlm-1d")]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", SAMPLING)
def test_attention_and_sampling_match_torch(name, args, kwargs, diff, tkw, tol):
    run_case(name, args, kwargs, diff, tkw, tol)


@needs_torch
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=1)], ids=str)
def test_max_unpool_matches_torch(nd, kw):
    shape = ((2, 3, 8), (2, 3, 6, 7), (1, 2, 4, 5, 4))[nd - 1]
    y, i = getattr(F, f"max_pool{nd}d")(rand(*shape), **kw, return_indices=True)
    # overlapping windows (stride 1) repeat indices: the value is written once, the gradient
    # reaches every input that names the position (PyTorch's)
    compare(f"max_unpool{nd}d", [y.array, i.array], dict(kw, output_size=shape[2:]), diff=[0])


def test_attention_and_sampling_against_numpy():
    q, k, v = rand(3, 4), rand(5, 4), rand(5, 2)
    s = q @ k.T / 2.0
    s[np.triu_indices(3, 1, 5)] = -np.inf
    w = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(F.scaled_dot_product_attention(q, k, v, is_causal=True).array,
                               (w / w.sum(1, keepdims=True)) @ v)
    x = rand(1, 2, 4, 5)
    ident = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    for al in (True, False):
        g = F.affine_grid(ident, (1, 2, 4, 5), align_corners=al)
        np.testing.assert_allclose(F.grid_sample(x, g, align_corners=al).array, x, atol=1e-12)
    flip = np.array([[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    g = F.affine_grid(flip, (1, 2, 4, 5), align_corners=True)
    np.testing.assert_allclose(F.grid_sample(x, g, mode="nearest", align_corners=True).array,
                               x[..., ::-1])
    y, i = F.max_pool2d(x, 2, return_indices=True)
    up = F.max_unpool2d(y, i, 2, output_size=(4, 5)).array
    ref = np.zeros_like(x).reshape(1, 2, -1)
    np.put_along_axis(ref, i.array.reshape(1, 2, -1), y.array.reshape(1, 2, -1), -1)
    np.testing.assert_array_equal(up, ref.reshape(x.shape))
    xm = np.array([[0.1, 0.2, 0.4, 0.8]])
    ref = sum(max(0, 1 - (xm[0, j] - xm[0, i])) for j in (3, 0) for i in (1, 2)) / 4
    np.testing.assert_allclose(F.multilabel_margin_loss(xm, np.array([[3, 0, -1, 1]])).array,
                               ref)


@pytest.mark.parametrize("f", [
    lambda a, b: F.scaled_dot_product_attention(a, b, b[:, :2] * 2.0, is_causal=True),
    lambda a, b: F.grid_sample(a[None, None], F.affine_grid(
        b[None, :2, :3] * 0.5, (1, 1, 2, 3), align_corners=False), padding_mode="border"),
    lambda a, b: F.multilabel_margin_loss(a, np.array([[0, 3, -1, 1]] * 3)),
])
def test_attention_and_sampling_gradcheck(f):
    a = np.array([[0.3, -1.2, 0.8, 0.5], [1.1, 0.4, -0.6, -1.4], [-0.9, 0.7, 1.3, 0.2]])
    b = np.array([[1.2, 0.1, -0.7, 0.9], [-0.5, 1.4, 0.6, -1.1], [0.8, -1.3, 0.4, 1.6]])
    check_backward(f, [a, b])
    check_double_backward(f, [a, b])


def test_mean_over_no_target_is_nan_without_warning():
    x, t = rand(3, 4), np.full(3, -100)
    for y in (F.cross_entropy(x, t), F.cross_entropy(x, t, label_smoothing=0.1),
              F.cross_entropy(x, t, np.ones(4)), F.nll_loss(x, t)):
        assert np.isnan(y.array)
    assert float(F.cross_entropy(x, t, reduction="sum").array) == 0.0


@needs_torch
def test_pooling_random_configurations_match_torch():
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(80):
        nd = int(rng.integers(1, 4))
        k = [int(v) for v in rng.integers(1, 4, nd)]
        kw = dict(kernel_size=k, stride=[int(v) for v in rng.integers(1, 4, nd)],
                  padding=[int(rng.integers(0, v // 2 + 1)) for v in k],
                  dilation=[int(v) for v in rng.integers(1, 3, nd)],
                  ceil_mode=bool(rng.integers(0, 2)))
        x = np.round(rng.uniform(-2, 2, (1, 2, *rng.integers(3, 8, nd))) * 2) / 2
        try:
            ty, ti = getattr(TF, f"max_pool{nd}d")(torch.tensor(x), **kw, return_indices=True)
        except RuntimeError:
            continue  # a configuration PyTorch refuses
        y, i = getattr(F, f"max_pool{nd}d")(x, **kw, return_indices=True)
        np.testing.assert_array_equal(i.array, ti.numpy(), err_msg=str(kw))
        np.testing.assert_array_equal(getattr(F, f"max_pool{nd}d")(x, **kw).array, ty.numpy())
        del kw["dilation"]
        ta = getattr(TF, f"avg_pool{nd}d")(torch.tensor(x), **kw, count_include_pad=False)
        np.testing.assert_allclose(getattr(F, f"avg_pool{nd}d")(
            x, **kw, count_include_pad=False).array, ta.numpy(), err_msg=str(kw))
        checked += 1
    assert checked > 60


@needs_torch
def test_max_pool_window_longer_than_input_with_ceil_mode():
    # PyTorch keeps one partial window here; pg.ops.max_pool alone refuses the shape.
    compare("max_pool1d", [rand(1, 2, 4)], dict(kernel_size=3, stride=2, dilation=2,
                                                ceil_mode=True))


@needs_torch
def test_convolution_random_configurations_match_torch():
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(40):
        nd, g = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        cin, cout = g * int(rng.integers(1, 3)), g * int(rng.integers(1, 3))
        k, s, d = ([int(v) for v in rng.integers(1, hi, nd)] for hi in (4, 3, 3))
        x = rng.standard_normal((2, cin, *rng.integers(3, 6, nd)))
        kw = dict(stride=s, padding=[int(v) for v in rng.integers(0, 3, nd)], dilation=d,
                  groups=g)
        if rng.integers(0, 2):
            name, w = f"conv_transpose{nd}d", rng.standard_normal((cin, cout // g, *k))
            kw["output_padding"] = [int(rng.integers(0, max(a, b))) for a, b in zip(s, d)]
        else:
            name, w = f"conv{nd}d", rng.standard_normal((cout, cin // g, *k))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(TF, name)(torch.tensor(x), torch.tensor(w), None, **kw)
        except RuntimeError:
            continue  # a configuration PyTorch refuses
        compare(name, [x, w, rng.standard_normal(cout)], kw, atol=1e-9)
        checked += 1
    assert checked > 25


@needs_torch
def test_interpolate_random_configurations_match_torch():
    rng = np.random.default_rng(3)
    modes = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,),
             "bilinear": (2,), "bicubic": (2,), "trilinear": (3,), "area": (1, 2, 3)}
    checked = 0
    for _ in range(150):
        mode = list(modes)[int(rng.integers(0, len(modes)))]
        nd = int(rng.choice(modes[mode]))
        x = rng.standard_normal((1, 2, *rng.integers(1, 7, nd)))
        if rng.integers(0, 2):
            kw = {"size": [int(v) for v in rng.integers(1, 10, nd)]}
        else:
            kw = {"scale_factor": [float(np.round(rng.uniform(0.3, 3.5), 3)) for _ in range(nd)]}
        if mode in ("linear", "bilinear", "bicubic", "trilinear") and rng.integers(0, 2):
            kw["align_corners"] = bool(rng.integers(0, 2))
        kw["mode"] = mode
        try:
            ty = TF.interpolate(torch.tensor(x), **kw)
        except RuntimeError:
            continue  # an empty output PyTorch refuses
        if 0 in ty.shape:
            continue
        y = F.interpolate(x, **kw)
        np.testing.assert_allclose(y.array, ty.numpy(), rtol=1e-10, atol=1e-12, err_msg=str(kw))
        kept = any(o in (n, 2 * n) for o, n in zip(ty.shape[2:], x.shape[2:]))
        if "size" in kw or not kept:  # see interpolate's docstring for the other case
            compare("interpolate", [x], kw)
        checked += 1
    assert checked > 100


# ----------------------------------------------------------------------- forward mode
_STATEFUL = {"batch_norm", "instance_norm", "rrelu"}
FORWARD_CASES = [p for table in (ACTIVATIONS, CONV, RESAMPLE, POOL, NORM, LOSSES, DISTANCES)
                 for p in table
                 if p.values[0] not in _STATEFUL and "dropout" not in p.values[0]]


@pytest.mark.parametrize("name, args, kwargs, diff, tkw, tol", FORWARD_CASES)
def test_forward_mode_agrees_with_reverse_mode(name, args, kwargs, diff, tkw, tol):
    """``<u, J t>`` by one forward pass with tangents equals ``<J^T u, t>`` by backward,
    kinks and conventions included (where PyTorch's own forward mode departs from its
    backward, at prelu's 0 or embedding's padding row, portagrad follows the backward)."""
    import portagrad.autograd.forward_ad as fwAD

    if diff is None:
        diff = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not diff:
        pytest.skip("nothing to differentiate")
    rng = np.random.default_rng(5)
    tans = {i: rng.standard_normal(args[i].shape) for i in diff}
    with fwAD.dual_level():
        vs = {i: pg.Variable(args[i].copy()) for i in diff}
        y = getattr(F, name)(*[fwAD.make_dual(vs[i], tans[i]) if i in diff else a
                               for i, a in enumerate(args)], **kwargs)
        y = y[0] if isinstance(y, tuple) else y
        t = fwAD.unpack_dual(y).tangent
    u = rng.standard_normal(tuple(y.shape))
    lhs = 0.0 if t is None else float(np.sum(np.asarray(t.array) * u))
    gs = (pg.grad([y], [vs[i] for i in diff], [u], allow_unused=True) if y.requires_grad
          else [None] * len(diff))
    rhs = sum(float(np.sum(np.asarray(g.array) * tans[i]))
              for g, i in zip(gs, diff) if g is not None)
    assert lhs == pytest.approx(rhs, rel=1e-8, abs=1e-9, nan_ok=True)
