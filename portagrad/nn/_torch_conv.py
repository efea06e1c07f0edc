"""``torch.nn``'s convolutions: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy forms,
with torch's arguments (``padding="same"``/``"valid"``, ``padding_mode``, ``groups``,
``dilation``, ``output_padding``), parameter names, layouts and initialization."""

from __future__ import annotations

import math
from typing import Any

from ..ops._core import var
from . import functional as F
from . import init as _init
from ._module import Module, check_input
from ._parameter import Parameter
from ._torch_common import new_param, ntuple, resolve
from ._torch_linear import _materialize

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")
_F_MODE = {"reflect": "reflect", "replicate": "replicate", "circular": "circular"}


class _ConvNd(Module):
    nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0, *, xp: Any = None, _lazy: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        if int(groups) <= 0:
            raise ValueError(f"{name}(groups): expected a positive int, got {groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}(padding_mode): expected one of {_PADDING_MODES}, got "
                             f"{padding_mode!r}")
        self.in_channels = int(in_channels)
        self.out_channels = int(out_channels)
        self.kernel_size = ntuple(kernel_size, self.nd, f"{name}(kernel_size)")
        self.stride = ntuple(stride, self.nd, f"{name}(stride)")
        self.dilation = ntuple(dilation, self.nd, f"{name}(dilation)")
        if isinstance(padding, str):
            if padding not in ("same", "valid") or self.transposed:
                raise ValueError(f"{name}(padding): expected an int, a tuple, or 'same'/'valid' "
                                 f"(not for transposed convolutions), got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}(padding='same'): not supported for strided "
                                 f"convolutions")
            self.padding: Any = padding
        else:
            self.padding = ntuple(padding, self.nd, f"{name}(padding)")
        self.output_padding = ntuple(output_padding, self.nd, f"{name}(output_padding)")
        self.groups = int(groups)
        self.padding_mode = padding_mode
        if self.transposed and padding_mode != "zeros":
            raise ValueError(f"{name}(padding_mode): only 'zeros' is supported for "
                             f"transposed convolutions, got {padding_mode!r}")
        if not _lazy:
            self._check_groups()
        if self.out_channels % self.groups:
            raise ValueError(f"{name}(out_channels): expected a multiple of groups "
                             f"({self.groups}), got {self.out_channels}")
        if _lazy:
            self.weight = Parameter(initializer=_init.Zeros())
            if bias:
                self.bias = Parameter(initializer=_init.Zeros())
            else:
                self.register_parameter("bias", None)
            self._lazy_where = (xp, device, dtype)
            return
        where = resolve(xp, device, dtype)
        shape = self._weight_shape()
        init = _bound(self._fan_in())
        self.weight = new_param(init, shape, where)
        if bias:
            self.bias = new_param(init, (self.out_channels,), where)
        else:
            self.register_parameter("bias", None)

    def _check_groups(self) -> None:
        if self.in_channels % self.groups:
            raise ValueError(f"{type(self).__name__}(in_channels): expected a multiple of "
                             f"groups ({self.groups}), got {self.in_channels}")

    def _weight_shape(self) -> tuple[int, ...]:
        g = self.groups
        if self.transposed:
            return (self.in_channels, self.out_channels // g, *self.kernel_size)
        return (self.out_channels, self.in_channels // g, *self.kernel_size)

    def _fan_in(self) -> int:
        # torch computes the fan from the weight's axis 1, whichever the layout.
        return self._weight_shape()[1] * math.prod(self.kernel_size)

    def _conv_padding(self) -> tuple[Any, Any]:
        """``(input pad for F.pad or None, padding for the convolution)``."""
        if self.padding_mode == "zeros":
            return None, self.padding
        if self.padding == "valid":
            return None, 0
        if self.padding == "same":
            pairs = []
            for d, k in zip(self.dilation, self.kernel_size):
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
        else:
            pairs = [(p, p) for p in self.padding]
        flat: list[int] = []
        for lo, hi in reversed(pairs):
            flat += [lo, hi]
        return flat, 0

    def forward(self, input: Any, output_size: Any = None) -> Any:
        name = type(self).__name__
        if self.weight.array is None:
            self._materialize(input)
        elif self.in_channels == 0:
            # A lazy form filled by load_state_dict: the sizes are the weight's.
            w = self.weight.shape
            self.in_channels = w[0] if self.transposed else w[1] * self.groups
            self.__class__ = self._becomes
        check_input(self, input, name, self.weight)
        if self.transposed:
            fn = getattr(F, f"conv_transpose{self.nd}d")
            out_pad = self.output_padding
            if output_size is not None:
                out_pad = self._output_padding(input, output_size)
            return fn(input, self.weight, self.bias, self.stride, self.padding, out_pad,
                      self.groups, self.dilation)
        if output_size is not None:
            raise TypeError(f"{name}.forward() got an unexpected argument 'output_size'")
        pad, conv_pad = self._conv_padding()
        if pad is not None:
            input = F.pad(input, pad, mode=_F_MODE[self.padding_mode])
        fn = getattr(F, f"conv{self.nd}d")
        return fn(input, self.weight, self.bias, self.stride, conv_pad, self.dilation,
                  self.groups)

    def _output_padding(self, input: Any, output_size: Any) -> tuple[int, ...]:
        x = var(input, type(self).__name__)
        size = [int(s) for s in output_size][-self.nd:]
        out = []
        for i in range(self.nd):
            n = int(x.shape[x.ndim - self.nd + i])
            smallest = ((n - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            extra = size[i] - smallest
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise ValueError(f"{type(self).__name__}(output_size): requested an output "
                                 f"size of {size}, but valid sizes start at {smallest} on "
                                 f"axis {i} (stride {self.stride[i]})")
            out.append(extra)
        return tuple(out)

    def _materialize(self, input: Any) -> None:
        x = var(input, type(self).__name__)
        if x.ndim not in (self.nd + 1, self.nd + 2):
            from .._errors import ShapeError

            raise ShapeError(f"{type(self).__name__}(input): expected (N, C, {self.nd} "
                             f"spatial axes), got shape {tuple(x.shape)}")
        self.in_channels = int(x.shape[x.ndim - self.nd - 1])
        self._check_groups()
        _materialize(self, x, {"weight": self._weight_shape(), "bias": (self.out_channels,)},
                     self._fan_in())
        self.__class__ = self._becomes

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self.nd:
            s += f", padding={self.padding!r}"
        if self.dilation != (1,) * self.nd:
            s += f", dilation={self.dilation}"
        if self.transposed and self.output_padding != (0,) * self.nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _bound(fan_in: int) -> Any:
    return _init.Uniform(1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0)


_CONV_DOC = """{nd}-d convolution over ``(N, C_in, {axes})`` (or unbatched ``(C_in, {axes})``),
as ``torch.nn.Conv{nd}d``.

Parameters
----------
in_channels, out_channels
    Channels of input and output.
kernel_size, stride, dilation
    An int or {nd} of them.
padding
    An int, {nd} of them, ``"valid"`` (none) or ``"same"`` (output as large as the input,
    stride 1).
groups
    Channel groups (both channel counts divisible by it).
bias
    Whether to learn a bias.
padding_mode
    ``"zeros"``, ``"reflect"``, ``"replicate"`` or ``"circular"``.
device, dtype, xp
    As :class:`Linear`.

``weight`` is ``(out_channels, in_channels // groups, *kernel_size)``; weight and bias are
uniform in ``+-1/sqrt(fan_in)`` as in PyTorch.
"""

_TCONV_DOC = """{nd}-d transposed convolution over ``(N, C_in, {axes})``, as
``torch.nn.ConvTranspose{nd}d``; ``forward(input, output_size=None)``.

Parameters
----------
in_channels, out_channels, kernel_size, stride, padding, groups, bias, dilation
    As :class:`Conv{nd}d` (``padding`` an int or {nd} of them).
output_padding
    Added to one side of each output axis (less than stride or dilation).
padding_mode
    Only ``"zeros"``.
device, dtype, xp
    As :class:`Linear`.

``weight`` is ``(in_channels, out_channels // groups, *kernel_size)``.
"""

_AXES = {1: "L", 2: "H, W", 3: "D, H, W"}


def _conv_class(nd: int, transposed: bool) -> type:
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, *rest: Any, device: Any = None,
                 dtype: Any = None, xp: Any = None, **kw: Any) -> None:
        names = (("output_padding", "groups", "bias", "dilation", "padding_mode")
                 if transposed else ("dilation", "groups", "bias", "padding_mode"))
        if len(rest) > len(names):
            raise TypeError(f"{type(self).__name__}() takes at most {5 + len(names)} "
                            f"positional arguments")
        args = dict(zip(names, rest))
        for k in kw:
            if k in args:
                raise TypeError(f"{type(self).__name__}() got multiple values for {k!r}")
            if k not in names:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword "
                                f"argument {k!r}")
        args.update(kw)
        _ConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding,
                         args.get("dilation", 1), args.get("groups", 1),
                         args.get("bias", True), args.get("padding_mode", "zeros"),
                         device, dtype, args.get("output_padding", 0), xp=xp)

    name = f"ConvTranspose{nd}d" if transposed else f"Conv{nd}d"
    doc = (_TCONV_DOC if transposed else _CONV_DOC).format(nd=nd, axes=_AXES[nd])
    cls = type(name, (_ConvNd,), {"nd": nd, "transposed": transposed, "__init__": __init__,
                                  "__doc__": doc, "__module__": __name__})
    cls._becomes = cls
    return cls


def _lazy_class(base: type) -> type:
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, *rest: Any, device: Any = None, dtype: Any = None,
                 xp: Any = None, **kw: Any) -> None:
        names = (("output_padding", "groups", "bias", "dilation", "padding_mode")
                 if base.transposed else ("dilation", "groups", "bias", "padding_mode"))
        args = dict(zip(names, rest))
        for k in kw:
            if k not in names:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword "
                                f"argument {k!r}")
        args.update(kw)
        _ConvNd.__init__(self, 0, out_channels, kernel_size, stride, padding,
                         args.get("dilation", 1), args.get("groups", 1),
                         args.get("bias", True), args.get("padding_mode", "zeros"),
                         device, dtype, args.get("output_padding", 0), xp=xp, _lazy=True)

    name = "Lazy" + base.__name__
    doc = (f":class:`{base.__name__}` whose ``in_channels`` is inferred from the first "
           f"input (``torch.nn.{name}``); the parameters are created in that input's "
           f"library, device and dtype, and the module becomes a {base.__name__}.\n\n"
           f"Parameters\n----------\nout_channels, kernel_size, stride, padding, ...\n"
           f"    As :class:`{base.__name__}`.\n")
    cls = type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                               "_becomes": base})
    return cls


Conv1d = _conv_class(1, False)
Conv2d = _conv_class(2, False)
Conv3d = _conv_class(3, False)
ConvTranspose1d = _conv_class(1, True)
ConvTranspose2d = _conv_class(2, True)
ConvTranspose3d = _conv_class(3, True)
LazyConv1d = _lazy_class(Conv1d)
LazyConv2d = _lazy_class(Conv2d)
LazyConv3d = _lazy_class(Conv3d)
LazyConvTranspose1d = _lazy_class(ConvTranspose1d)
LazyConvTranspose2d = _lazy_class(ConvTranspose2d)
LazyConvTranspose3d = _lazy_class(ConvTranspose3d)

Conv2d.__doc__ += """
Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> conv = pg.nn.Conv2d(1, 8, 3, padding="same")
>>> conv(np.zeros((2, 1, 5, 5), np.float32)).shape, conv.weight.shape
((2, 8, 5, 5), (8, 1, 3, 3))
>>> pg.nn.LazyConv2d(4, 3)(np.zeros((1, 3, 5, 5), np.float32)).shape
(1, 4, 3, 3)
"""
