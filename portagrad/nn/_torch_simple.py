"""``torch.nn``'s modules without learned parameters, each a thin module over its
function of :mod:`portagrad.nn.functional` (the options are held, ``forward`` calls the
function): activations, dropout, pooling, padding, resampling, reshaping, distances and
losses. PReLU, whose slopes are learned, is here too."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._adapters import adapts
from ..ops._core import var
from . import functional as F
from . import init as _init
from ._module import Module, check_input
from ._torch_common import new_param, ntuple, resolve

_REQUIRED = inspect.Parameter.empty
_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KW = inspect.Parameter.KEYWORD_ONLY
_REDUCTIONS = ("mean", "sum", "none")
_HIDDEN = ("size_average", "reduce", "inplace")


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    # PyTorch's deprecated pair: reduce=False gives per-element losses, else
    # size_average=False sums.
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _module(name: str, call: Callable[..., Any], params: str = "", doc: str = "",
            buffers: tuple[str, ...] = (), nin: int = 1,
            of: Callable[..., Any] | None = None) -> type:
    """A module class ``name`` whose constructor takes ``params`` (``"a=1, *, b=None"``
    in Python syntax, defaults evaluated) and whose ``forward`` is ``call(self, *inputs)``;
    ``of`` names the function ``call`` hands its work to, declaring ``forward`` its adapter.
    """
    sig = inspect.signature(eval(f"lambda {params}: None"))  # noqa: S307 - our literal

    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}(): {e}") from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        if "reduction" in values:
            values["reduction"] = _legacy_reduction(values.pop("size_average", None),
                                                    values.pop("reduce", None),
                                                    values["reduction"])
            allowed = _REDUCTIONS + (("batchmean",) if name == "KLDivLoss" else ())
            if values["reduction"] not in allowed:
                raise ValueError(f"{values['reduction']} is not a valid value for reduction")
        if "label_smoothing" in values and not 0.0 <= float(values["label_smoothing"]) <= 1.0:
            raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                             f"{values['label_smoothing']}")
        for k, v in values.items():
            if k in buffers:
                self.register_buffer(k, _as_array(v, f"{name}({k})"))
            else:
                object.__setattr__(self, k, v)
        self.__dict__["_arg_names"] = tuple(k for k in values if k not in _HIDDEN)

    def forward(self: Module, *inputs: Any) -> Any:
        if len(inputs) != nin and not (nin < 0 and len(inputs) >= -nin):
            raise TypeError(f"{name}.forward() expected {abs(nin)} inputs, got {len(inputs)}")
        if buffers:
            _follow_input(self, buffers, inputs[0])
        return call(self, *inputs)

    if of is not None:
        forward = adapts(of)(forward)

    def extra_repr(self: Module) -> str:
        parts = []
        names = self.__dict__.get("_arg_names", ())
        if name.endswith("Dropout") or "Dropout" in name:
            names = ("p", "inplace")
        for k in names:
            if k in buffers:
                continue
            parts.append(f"{k}={getattr(self, k)!r}")
        return ", ".join(parts)

    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", _POS)] + list(sig.parameters.values()))
    full_doc = (doc or f"``torch.nn.{name}``.") + (
        f"\n\nParameters\n----------\n{params or 'none'}\n    As ``torch.nn.{name}``; see "
        f"the matching function of :mod:`portagrad.nn.functional`.\n")
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": full_doc,
                                  "__module__": __name__})


def _as_array(v: Any, what: str) -> Any:
    """A weight buffer: an array of any library kept as it is; a list or tuple of numbers
    becomes an array of the default library."""
    if v is None:
        return None
    v = getattr(v, "array", v)
    if isinstance(v, (list, tuple)):
        from ..xp import default_namespace

        xp = default_namespace()
        return xp.asarray(v, dtype=xp.float64 if any(isinstance(e, float) for e in v)
                          else None)
    return v


def _follow_input(module: Module, names: tuple[str, ...], x: Any) -> None:
    """Move weight buffers given in another library (a list, a NumPy array) to the
    input's library and device once, as the module's own buffers: they are constants."""
    from ..xp import from_numpy, namespace_of, to_numpy
    from ..xp._namespace import is_array

    a = getattr(x, "array", x)
    if not is_array(a):
        return
    for n in names:
        b = getattr(module, n)
        if b is not None and (namespace_of(b) is not namespace_of(a) or b.device != a.device):
            setattr(module, n, from_numpy(to_numpy(b), like=a))


def _ip(s: Module) -> dict[str, Any]:
    return {"inplace": s.inplace} if getattr(s, "inplace", False) else {}


# -- activations -------------------------------------------------------------------------
ReLU = _module("ReLU", lambda s, x: F.relu(x, **_ip(s)), "inplace=False",
               "``max(x, 0)`` elementwise.")
ReLU6 = _module("ReLU6", lambda s, x: F.relu6(x, **_ip(s)), "inplace=False")
LeakyReLU = _module("LeakyReLU", lambda s, x: F.leaky_relu(x, s.negative_slope, **_ip(s)),
                    "negative_slope=0.01, inplace=False")
ELU = _module("ELU", lambda s, x: F.elu(x, s.alpha, **_ip(s)), "alpha=1.0, inplace=False")
SELU = _module("SELU", lambda s, x: F.selu(x, **_ip(s)), "inplace=False")
CELU = _module("CELU", lambda s, x: F.celu(x, s.alpha, **_ip(s)), "alpha=1.0, inplace=False")
GELU = _module("GELU", lambda s, x: F.gelu(x, approximate=s.approximate), "approximate='none'")
SiLU = _module("SiLU", lambda s, x: F.silu(x, **_ip(s)), "inplace=False")
Mish = _module("Mish", lambda s, x: F.mish(x, **_ip(s)), "inplace=False")
Sigmoid = _module("Sigmoid", lambda s, x: F.sigmoid(x))
Tanh = _module("Tanh", lambda s, x: F.tanh(x))
Softplus = _module("Softplus", lambda s, x: F.softplus(x, s.beta, s.threshold),
                   "beta=1.0, threshold=20.0")
Softsign = _module("Softsign", lambda s, x: F.softsign(x))
Hardtanh = _module("Hardtanh", lambda s, x: F.hardtanh(
    x, s.min_val if s.min_value is None else s.min_value,
    s.max_val if s.max_value is None else s.max_value, **_ip(s)),
    "min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None")
Hardsigmoid = _module("Hardsigmoid", lambda s, x: F.hardsigmoid(x, **_ip(s)), "inplace=False")
Hardswish = _module("Hardswish", lambda s, x: F.hardswish(x, **_ip(s)), "inplace=False")
Hardshrink = _module("Hardshrink", lambda s, x: F.hardshrink(x, s.lambd), "lambd=0.5")
Softshrink = _module("Softshrink", lambda s, x: F.softshrink(x, s.lambd), "lambd=0.5")
Tanhshrink = _module("Tanhshrink", lambda s, x: F.tanhshrink(x))
LogSigmoid = _module("LogSigmoid", lambda s, x: F.logsigmoid(x))
Softmax = _module("Softmax", lambda s, x: F.softmax(x, s.dim), "dim=None")
LogSoftmax = _module("LogSoftmax", lambda s, x: F.log_softmax(x, s.dim), "dim=None")
Softmin = _module("Softmin", lambda s, x: F.softmin(x, s.dim), "dim=None")
Softmax2d = _module("Softmax2d", lambda s, x: F.softmax(_rank(x, (3, 4), "Softmax2d"), -3),
                    "", "Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)``.")
GLU = _module("GLU", lambda s, x: F.glu(x, s.dim), "dim=-1")
Threshold = _module("Threshold", lambda s, x: F.threshold(x, s.threshold, s.value, **_ip(s)),
                    "threshold, value, inplace=False")
RReLU = _module("RReLU", lambda s, x: F.rrelu(x, s.lower, s.upper, s.training, **_ip(s)),
                "lower=0.125, upper=1.0 / 3.0, inplace=False")


def _rank(x: Any, ranks: tuple[int, ...], op: str) -> Any:
    v = var(x, op)
    if v.ndim not in ranks:
        raise ShapeError(f"{op}: expected an input of {' or '.join(map(str, ranks))} "
                         f"dimensions, got shape {tuple(v.shape)}")
    return v


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with learned slopes (``torch.nn.PReLU``): one, or
    one per channel (axis 1).

    Parameters
    ----------
    num_parameters
        1 or the number of channels.
    init
        Initial slope.
    device, dtype, xp
        As :class:`Linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.PReLU()(np.array([-2.0, 3.0], np.float32)).array
    array([-0.5,  3. ], dtype=float32)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        self.num_parameters = int(num_parameters)
        self.init = float(init)
        self.weight = new_param(_init.Constant(self.init), (self.num_parameters,),
                                resolve(xp, device, dtype))

    def forward(self, input: Any) -> Any:
        check_input(self, input, "PReLU", self.weight)
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


# -- dropout -----------------------------------------------------------------------------
def _dropout(name: str, fn: Callable[..., Any], doc: str) -> type:
    def call(s: Module, x: Any) -> Any:
        return fn(x, s.p, s.training, **_ip(s))

    cls = _module(name, call, "p=0.5, inplace=False", doc)
    orig = cls.__init__

    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        orig(self, *args, **kwargs)
        if not 0.0 <= float(self.p) <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got "
                             f"{self.p}")

    __init__.__signature__ = orig.__signature__  # type: ignore[attr-defined]
    cls.__init__ = __init__
    return cls


Dropout = _dropout("Dropout", F.dropout, "Zero elements with probability ``p`` while "
                   "training, scaling the rest by ``1 / (1 - p)``; identity in eval mode.")
Dropout1d = _dropout("Dropout1d", F.dropout1d, "Zero whole channels of ``(N, C, L)``.")
Dropout2d = _dropout("Dropout2d", F.dropout2d, "Zero whole channels of ``(N, C, H, W)``.")
Dropout3d = _dropout("Dropout3d", F.dropout3d, "Zero whole channels of ``(N, C, D, H, W)``.")
AlphaDropout = _dropout("AlphaDropout", F.alpha_dropout,
                        "Dropout that keeps SELU's self-normalizing mean and variance.")
FeatureAlphaDropout = _dropout("FeatureAlphaDropout", F.feature_alpha_dropout,
                               "Alpha dropout of whole channels.")

# -- pooling -----------------------------------------------------------------------------
_MAXPOOL = "kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False"


def _maxpool(nd: int) -> type:
    fn = getattr(F, f"max_pool{nd}d")
    return _module(f"MaxPool{nd}d", lambda s, x: fn(
        x, s.kernel_size, s.stride, s.padding, s.dilation, ceil_mode=s.ceil_mode,
        return_indices=s.return_indices), _MAXPOOL, f"Max pooling over {nd} spatial axes.")


def _avgpool(nd: int) -> type:
    fn = getattr(F, f"avg_pool{nd}d")
    if nd == 1:
        return _module("AvgPool1d", lambda s, x: fn(x, s.kernel_size, s.stride, s.padding,
                                                     s.ceil_mode, s.count_include_pad),
                       "kernel_size, stride=None, padding=0, ceil_mode=False, "
                       "count_include_pad=True", "Average pooling over 1 spatial axis.")
    return _module(f"AvgPool{nd}d", lambda s, x: fn(
        x, s.kernel_size, s.stride, s.padding, s.ceil_mode, s.count_include_pad,
        s.divisor_override), "kernel_size, stride=None, padding=0, ceil_mode=False, "
        "count_include_pad=True, divisor_override=None",
        f"Average pooling over {nd} spatial axes.")


def _lppool(nd: int) -> type:
    fn = getattr(F, f"lp_pool{nd}d")
    return _module(f"LPPool{nd}d", lambda s, x: fn(x, s.norm_type, s.kernel_size, s.stride,
                                                     s.ceil_mode),
                   "norm_type, kernel_size, stride=None, ceil_mode=False",
                   f"Power-average pooling ``(sum x**p)**(1/p)`` over {nd} spatial axes.")


def _adaptive(nd: int, kind: str) -> type:
    if kind == "avg":
        fn = getattr(F, f"adaptive_avg_pool{nd}d")
        return _module(f"AdaptiveAvgPool{nd}d", lambda s, x: fn(x, s.output_size),
                       "output_size", f"Average pooling to a fixed size over {nd} axes, "
                       f"with torch's windows.")
    fn = getattr(F, f"adaptive_max_pool{nd}d")
    return _module(f"AdaptiveMaxPool{nd}d", lambda s, x: fn(x, s.output_size,
                                                              s.return_indices),
                   "output_size, return_indices=False",
                   f"Max pooling to a fixed size over {nd} axes, with torch's windows.")


def _unpool(nd: int) -> type:
    fn = getattr(F, f"max_unpool{nd}d")
    return _module(f"MaxUnpool{nd}d", lambda s, x, idx, output_size=None: fn(
        x, idx, s.kernel_size, s.stride, s.padding, output_size),
        "kernel_size, stride=None, padding=0",
        f"The inverse of MaxPool{nd}d with ``return_indices``: ``forward(input, indices, "
        f"output_size=None)``.", nin=-2)


MaxPool1d, MaxPool2d, MaxPool3d = (_maxpool(n) for n in (1, 2, 3))
AvgPool1d, AvgPool2d, AvgPool3d = (_avgpool(n) for n in (1, 2, 3))
LPPool1d, LPPool2d, LPPool3d = (_lppool(n) for n in (1, 2, 3))
AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = (_adaptive(n, "avg")
                                                           for n in (1, 2, 3))
AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d = (_adaptive(n, "max")
                                                           for n in (1, 2, 3))
MaxUnpool1d, MaxUnpool2d, MaxUnpool3d = (_unpool(n) for n in (1, 2, 3))


# -- padding -----------------------------------------------------------------------------
def _pad(kind: str, nd: int) -> type:
    mode = {"Zero": "constant", "Constant": "constant", "Reflection": "reflect",
            "Replication": "replicate", "Circular": "circular"}[kind]
    name = f"{kind}Pad{nd}d"

    def call(s: Module, x: Any) -> Any:
        pad = ntuple(s.padding, 2 * nd, f"{name}(padding)")
        value = getattr(s, "value", 0.0) if mode == "constant" else None
        return F.pad(x, pad, mode, value) if value is not None else F.pad(x, pad, mode)

    params = "padding, value" if kind == "Constant" else "padding"
    return _module(name, call, params,
                   f"Pad the last {nd} axes ({mode} mode); ``padding`` is an int or "
                   f"``(left, right{', top, bottom' if nd > 1 else ''}"
                   f"{', front, back' if nd > 2 else ''})``.")


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_pad("Zero", n) for n in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_pad("Constant", n) for n in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_pad("Reflection", n) for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_pad("Replication", n)
                                                         for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_pad("Circular", n) for n in (1, 2, 3))

# -- resampling and reshaping ------------------------------------------------------------
Upsample = _module("Upsample", lambda s, x: F.interpolate(
    x, s.size, s.scale_factor, s.mode, s.align_corners,
    recompute_scale_factor=s.recompute_scale_factor),
    "size=None, scale_factor=None, mode='nearest', align_corners=None, "
    "recompute_scale_factor=None", "Resize by :func:`portagrad.nn.functional.interpolate`.")
UpsamplingNearest2d = _module("UpsamplingNearest2d", lambda s, x: F.interpolate(
    x, s.size, s.scale_factor, "nearest"), "size=None, scale_factor=None",
    "Nearest-neighbour upsampling of ``(N, C, H, W)``.")
UpsamplingBilinear2d = _module("UpsamplingBilinear2d", lambda s, x: F.interpolate(
    x, s.size, s.scale_factor, "bilinear", True), "size=None, scale_factor=None",
    "Bilinear upsampling of ``(N, C, H, W)`` with ``align_corners=True``.")
PixelShuffle = _module("PixelShuffle", lambda s, x: F.pixel_shuffle(x, s.upscale_factor),
                       "upscale_factor", "``(N, C r^2, H, W)`` to ``(N, C, H r, W r)``.")
PixelUnshuffle = _module("PixelUnshuffle",
                         lambda s, x: F.pixel_unshuffle(x, s.downscale_factor),
                         "downscale_factor", "The inverse of PixelShuffle.")


ChannelShuffle = _module("ChannelShuffle", lambda s, x: F.channel_shuffle(x, s.groups), "groups",
                         "Interleave ``groups`` groups of channels (ShuffleNet's shuffle).")


def _flatten(s: Module, x: Any) -> Any:
    v = var(x, "Flatten")
    nd = v.ndim
    if nd == 0:
        return ops.reshape(v, (1,))
    a, b = s.start_dim % nd, s.end_dim % nd
    shape = tuple(int(d) for d in v.shape)
    size = 1
    for d in shape[a:b + 1]:
        size *= d
    return ops.reshape(v, shape[:a] + (size,) + shape[b + 1:])


def _unflatten(s: Module, x: Any) -> Any:
    v = var(x, "Unflatten")
    d = s.dim % v.ndim
    shape = tuple(int(i) for i in v.shape)
    new = tuple(int(i) for i in s.unflattened_size)
    return ops.reshape(v, shape[:d] + new + shape[d + 1:])


Flatten = _module("Flatten", _flatten, "start_dim=1, end_dim=-1",
                  "Merge axes ``start_dim`` to ``end_dim`` into one.")
Unflatten = _module("Unflatten", _unflatten, "dim, unflattened_size",
                    "Split axis ``dim`` into ``unflattened_size``.")
Fold = _module("Fold", lambda s, x: F.fold(x, s.output_size, s.kernel_size, s.dilation,
                                           s.padding, s.stride),
               "output_size, kernel_size, dilation=1, padding=0, stride=1",
               "Sum sliding blocks ``(N, C k, L)`` back into ``(N, C, *output_size)``.")
Unfold = _module("Unfold", lambda s, x: F.unfold(x, s.kernel_size, s.dilation, s.padding,
                                                 s.stride),
                 "kernel_size, dilation=1, padding=0, stride=1",
                 "Extract sliding blocks of ``(N, C, H, W)`` as columns.")
CosineSimilarity = _module("CosineSimilarity", lambda s, a, b: F.cosine_similarity(
    a, b, s.dim, s.eps), "dim=1, eps=1e-08", "Cosine similarity along ``dim``.", nin=2)
PairwiseDistance = _module("PairwiseDistance", lambda s, a, b: F.pairwise_distance(
    a, b, s.p, s.eps, s.keepdim), "p=2.0, eps=1e-06, keepdim=False",
    "``p``-norm distance of each pair of rows.", nin=2)

# -- losses ------------------------------------------------------------------------------
_LEGACY = "size_average=None, reduce=None, reduction='mean'"
L1Loss = _module("L1Loss", lambda s, x, t: F.l1_loss(x, t, reduction=s.reduction), _LEGACY,
                 "Mean absolute error.", nin=2)
MSELoss = _module("MSELoss", lambda s, x, t: F.mse_loss(x, t, reduction=s.reduction),
                  _LEGACY, "Mean squared error.", nin=2, of=F.mse_loss)
CrossEntropyLoss = _module(
    "CrossEntropyLoss", lambda s, x, t: F.cross_entropy(
        x, t, s.weight, ignore_index=s.ignore_index, reduction=s.reduction,
        label_smoothing=s.label_smoothing),
    "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean', "
    "label_smoothing=0.0", "Cross entropy of logits against class indices or "
    "probabilities; ``weight`` is a buffer.", buffers=("weight",), nin=2, of=F.cross_entropy)
NLLLoss = _module("NLLLoss", lambda s, x, t: F.nll_loss(
    x, t, s.weight, ignore_index=s.ignore_index, reduction=s.reduction),
    "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
    "Negative log likelihood of log-probabilities.", buffers=("weight",), nin=2,
    of=F.nll_loss)
NLLLoss2d = _module("NLLLoss2d", lambda s, x, t: F.nll_loss(
    x, t, s.weight, ignore_index=s.ignore_index, reduction=s.reduction),
    "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
    "NLLLoss (torch's older name for image targets).", buffers=("weight",), nin=2,
    of=F.nll_loss)
BCELoss = _module("BCELoss", lambda s, x, t: F.binary_cross_entropy(
    x, t, s.weight, reduction=s.reduction), "weight=None, " + _LEGACY,
    "Binary cross entropy of probabilities.", buffers=("weight",), nin=2)
BCEWithLogitsLoss = _module("BCEWithLogitsLoss", lambda s, x, t: (
    F.binary_cross_entropy_with_logits(x, t, s.weight, reduction=s.reduction,
                                       pos_weight=s.pos_weight)),
    "weight=None, " + _LEGACY + ", pos_weight=None",
    "Binary cross entropy of logits.", buffers=("weight", "pos_weight"), nin=2)
KLDivLoss = _module("KLDivLoss", lambda s, x, t: F.kl_div(
    x, t, reduction=s.reduction, log_target=s.log_target), _LEGACY + ", log_target=False",
    "Kullback-Leibler divergence of log-probabilities.", nin=2)
HuberLoss = _module("HuberLoss", lambda s, x, t: F.huber_loss(
    x, t, reduction=s.reduction, delta=s.delta), "reduction='mean', delta=1.0",
    "Huber loss.", nin=2)
SmoothL1Loss = _module("SmoothL1Loss", lambda s, x, t: F.smooth_l1_loss(
    x, t, reduction=s.reduction, beta=s.beta), _LEGACY + ", beta=1.0", "Smooth L1 loss.",
    nin=2)
SoftMarginLoss = _module("SoftMarginLoss", lambda s, x, t: F.soft_margin_loss(
    x, t, reduction=s.reduction), _LEGACY, "Logistic loss of ``+-1`` targets.", nin=2)
MultiLabelSoftMarginLoss = _module("MultiLabelSoftMarginLoss", lambda s, x, t: (
    F.multilabel_soft_margin_loss(x, t, s.weight, reduction=s.reduction)),
    "weight=None, " + _LEGACY, "Multi-label logistic loss.", buffers=("weight",), nin=2)
MultiLabelMarginLoss = _module("MultiLabelMarginLoss", lambda s, x, t: (
    F.multilabel_margin_loss(x, t, reduction=s.reduction)), _LEGACY,
    "Multi-label hinge loss.", nin=2)
MultiMarginLoss = _module("MultiMarginLoss", lambda s, x, t: F.multi_margin_loss(
    x, t, s.p, s.margin, s.weight, reduction=s.reduction),
    "p=1, margin=1.0, weight=None, " + _LEGACY, "Multi-class hinge loss.",
    buffers=("weight",), nin=2)
MarginRankingLoss = _module("MarginRankingLoss", lambda s, a, b, t: F.margin_ranking_loss(
    a, b, t, s.margin, reduction=s.reduction), "margin=0.0, " + _LEGACY,
    "Ranking hinge loss.", nin=3)
HingeEmbeddingLoss = _module("HingeEmbeddingLoss", lambda s, x, t: F.hinge_embedding_loss(
    x, t, s.margin, reduction=s.reduction), "margin=1.0, " + _LEGACY,
    "Hinge embedding loss.", nin=2)
CosineEmbeddingLoss = _module("CosineEmbeddingLoss", lambda s, a, b, t: (
    F.cosine_embedding_loss(a, b, t, s.margin, reduction=s.reduction)),
    "margin=0.0, " + _LEGACY, "Cosine embedding loss.", nin=3)
TripletMarginLoss = _module("TripletMarginLoss", lambda s, a, p, n: F.triplet_margin_loss(
    a, p, n, s.margin, s.p, s.eps, s.swap, reduction=s.reduction),
    "margin=1.0, p=2.0, eps=1e-06, swap=False, " + _LEGACY, "Triplet margin loss.", nin=3)
TripletMarginWithDistanceLoss = _module(
    "TripletMarginWithDistanceLoss", lambda s, a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=s.distance_function, margin=s.margin, swap=s.swap,
        reduction=s.reduction),
    "*, distance_function=None, margin=1.0, swap=False, reduction='mean'",
    "Triplet margin loss with a distance function of your choice.", nin=3)
PoissonNLLLoss = _module("PoissonNLLLoss", lambda s, x, t: F.poisson_nll_loss(
    x, t, s.log_input, s.full, eps=s.eps, reduction=s.reduction),
    "log_input=True, full=False, size_average=None, eps=1e-08, reduce=None, "
    "reduction='mean'", "Poisson negative log likelihood.", nin=2)
GaussianNLLLoss = _module("GaussianNLLLoss", lambda s, x, t, v: F.gaussian_nll_loss(
    x, t, v, s.full, s.eps, s.reduction), "*, full=False, eps=1e-06, reduction='mean'",
    "Gaussian negative log likelihood: ``forward(input, target, var)``.", nin=3)
CTCLoss = _module("CTCLoss", lambda s, lp, t, il, tl: F.ctc_loss(
    lp, t, il, tl, s.blank, s.reduction, s.zero_infinity),
    "blank=0, reduction='mean', zero_infinity=False",
    "Connectionist temporal classification loss: ``forward(log_probs, targets, "
    "input_lengths, target_lengths)``.", nin=4)


class DataParallel(Module):
    """``torch.nn.DataParallel`` on one device: the wrapped ``module`` (``state_dict`` keys
    ``module.*``, as torch) called as it is. Several devices of one process are not
    split; for data-parallel training over processes use :mod:`portagrad.parallel`.

    Parameters
    ----------
    module
        The model.
    device_ids
        ``None`` or one device.
    output_device, dim
        Accepted (one device: nothing is gathered).

    Examples
    --------
    >>> import portagrad as pg
    >>> list(pg.nn.DataParallel(pg.nn.Linear(2, 1)).state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if device_ids is not None and len(list(device_ids)) > 1:
            raise ValueError("DataParallel(device_ids): expected at most one device; split "
                             "work across processes with portagrad.parallel instead")
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = int(dim)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class Container(Module):
    """``torch.nn.Container`` (deprecated there): a module holding the modules given as
    keyword arguments.

    Parameters
    ----------
    **kwargs
        Name to module.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        for k, v in kwargs.items():
            self.add_module(k, v)


__all__ = [n for n, v in list(globals().items())
           if isinstance(v, type) and issubclass(v, Module) and v.__module__ == __name__]
