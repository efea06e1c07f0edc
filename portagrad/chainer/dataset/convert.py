"""Chainer's converters: ``concat_examples`` (with padding), ``to_device``, the
``converter`` decorator.

A converter takes ``(batch, device)``; ``device`` is anything
:func:`portagrad.chainer.get_device` accepts (``-1``, ``'@numpy'``, ``'@cupy:0'``, a
device object, an Array API namespace) or None (arrays stay where they are). A
specifier that names no device is an error, never ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError
from ...xp import from_numpy, namespace_of, to_numpy
from ...xp._namespace import is_array
from ..device import Device, get_device

__all__ = ["Converter", "converter", "concat_examples", "to_device",
           "ConcatWithAsyncTransfer"]


class Converter:
    """Base of converters: ``converter(batch, device)`` gets a device object (or None).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import Converter
    >>> class Sum(Converter):
    ...     def __call__(self, batch, device):
    ...         return sum(batch)
    >>> Sum()([1, 2, 3], None)
    6
    """

    def __call__(self, batch: Any, device: Any) -> Any:
        raise NotImplementedError("a Converter must define __call__(batch, device)")


class _CallableConverter(Converter):
    """A plain function made a converter: its ``device`` argument arrives as a device
    object."""

    def __init__(self, base_callable: Callable[..., Any]) -> None:
        if not callable(base_callable):
            raise PortagradTypeError(f"converter(): can only wrap a callable, got "
                                     f"{type(base_callable).__name__}")
        self.base_callable = base_callable
        self.__doc__ = getattr(base_callable, "__doc__", None)
        self.__name__ = getattr(base_callable, "__name__", "converter")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 2:
            args = (args[0], _get_device(args[1]), *args[2:])
        elif "device" in kwargs:
            kwargs["device"] = _get_device(kwargs["device"])
        return self.base_callable(*args, **kwargs)


def converter() -> Callable[[Callable[..., Any]], Converter]:
    """Decorator making ``f(batch, device)`` a :class:`Converter` (its ``device`` is then
    a device object).

    Examples
    --------
    >>> from portagrad.chainer.dataset import converter
    >>> @converter()
    ... def first(batch, device=None):
    ...     return batch[0], device
    >>> first([5, 6], -1)
    (5, <CpuDevice @numpy>)
    """
    return _CallableConverter


def _get_device(device_spec: Any) -> Device | None:
    if device_spec is None:
        return None
    return get_device(device_spec)


def call_converter(conv: Any, batch: Any, device: Device | None) -> Any:
    """Call ``conv`` as Chainer's updaters do: a :class:`Converter` gets the device
    object, a plain function ``-1`` for the CPU or the GPU id."""
    if isinstance(conv, Converter) or device is None:
        return conv(batch, device)
    gid = getattr(device, "device_id", None)
    if getattr(device, "xp", None) is np:
        return conv(batch, -1)
    if gid is not None:
        return conv(batch, gid)
    return conv(batch, device)


def to_device(device: Any, x: Any) -> Any:
    """Send ``x`` (an array, or tuples/lists/dicts of them) to ``device``.

    Parameters
    ----------
    device
        A device specifier, or None to return ``x`` unchanged.
    x
        What to send.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import to_device
    >>> to_device(-1, np.ones(2)).tolist()
    [1.0, 1.0]
    >>> to_device("nonsense", np.ones(2))
    Traceback (most recent call last):
    ...
    ValueError: ...
    """
    device = _get_device(device)
    if device is None:
        return x
    return device.send(x)


def _concat(arrays: list, padding: Any) -> Any:
    first = arrays[0]
    if not is_array(first) or isinstance(first, np.generic):
        # Numbers and lists become one host array, as in Chainer.
        host = np.asarray(arrays)
        if padding is None:
            return host
        arrays = [host[i] for i in range(len(host))]
        first = arrays[0]
    if padding is None:
        xp = namespace_of(first)
        try:
            return xp.stack(arrays)
        except (ValueError, RuntimeError, TypeError) as e:
            shapes = sorted({tuple(a.shape) for a in arrays})
            raise ShapeError(f"concat_examples(batch): examples of different shapes "
                             f"{shapes[:4]} cannot be stacked; pass padding= ({e})") from None
    hosts = [to_numpy(a) for a in arrays]
    ndim = hosts[0].ndim
    if any(h.ndim != ndim for h in hosts):
        raise ShapeError(f"concat_examples(padding): examples of {ndim} and "
                         f"{sorted({h.ndim for h in hosts})} dimensions cannot be padded "
                         f"together")
    shape = tuple(max(h.shape[d] for h in hosts) for d in range(ndim))
    out = np.full((len(hosts), *shape), padding, dtype=hosts[0].dtype)
    for i, h in enumerate(hosts):
        out[(i, *(slice(d) for d in h.shape))] = h
    return out if isinstance(first, np.ndarray) else from_numpy(out, like=first)


@_CallableConverter
def concat_examples(batch: list, device: Any = None, padding: Any = None) -> Any:
    """Stack a list of examples into batch arrays (Chainer's ``concat_examples``).

    Examples that are tuples give a tuple of arrays, dicts a dict, else one array.
    With ``padding``, arrays of different shapes are padded to the largest with that
    value (a tuple or dict of values gives one per field).

    Parameters
    ----------
    batch
        The examples.
    device
        Where to send the arrays (None: where they are).
    padding
        The padding value, or None to require equal shapes.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import concat_examples
    >>> x, t = concat_examples([(np.zeros(2), 1), (np.ones(2), 0)])
    >>> x.shape, t.tolist()
    ((2, 2), [1, 0])
    >>> concat_examples([np.array([1, 2]), np.array([3])], padding=-1).tolist()
    [[1, 2], [3, -1]]
    """
    if len(batch) == 0:
        raise PortagradValueError("concat_examples(batch): batch is empty")
    first = batch[0]
    if isinstance(first, tuple):
        pads = padding if isinstance(padding, tuple) else (padding,) * len(first)
        return tuple(to_device(device, _concat([ex[i] for ex in batch], pads[i]))
                     for i in range(len(first)))
    if isinstance(first, dict):
        pads = padding if isinstance(padding, dict) else {k: padding for k in first}
        return {k: to_device(device, _concat([ex[k] for ex in batch], pads[k]))
                for k in first}
    return to_device(device, _concat(list(batch), padding))


class ConcatWithAsyncTransfer:
    """Chainer's ``ConcatWithAsyncTransfer``: ``concat_examples`` whose host-to-GPU copy
    overlaps computation through CUDA streams. On the CPU (``device`` None or negative)
    it is ``concat_examples``, as in Chainer; a GPU device needs CuPy's streams and pinned
    memory, which portagrad does not drive, and is refused.

    Parameters
    ----------
    stream, compute_stream
        CUDA streams (must be None here).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import ConcatWithAsyncTransfer
    >>> conv = ConcatWithAsyncTransfer()
    >>> x, t = conv([(np.zeros(2), 0), (np.ones(2), 1)], -1)
    >>> x.shape, t.tolist()
    ((2, 2), [0, 1])
    """

    def __init__(self, stream: Any = None, compute_stream: Any = None) -> None:
        if stream is not None or compute_stream is not None:
            raise PortagradValueError("ConcatWithAsyncTransfer(stream, compute_stream): "
                                      "CUDA streams are not driven by portagrad; leave "
                                      "them None")
        self._device: Any = None
        self._first = True

    def __call__(self, batch: list, device: Any = None, padding: Any = None) -> Any:
        dev = _get_device(device) if not isinstance(device, int) or device >= 0 else None
        if dev is not None and getattr(dev, "device_id", None) is not None:
            from ..device import DeviceUnavailableError

            raise DeviceUnavailableError(
                f"ConcatWithAsyncTransfer(device={device!r}): asynchronous GPU transfer "
                f"needs CuPy streams; use concat_examples(batch, device)")
        if self._first:
            self._device, self._first = device, False
        elif device != self._device:
            raise PortagradValueError(f"ConcatWithAsyncTransfer: called with device "
                                      f"{device!r} after {self._device!r} (Chainer: "
                                      f"'device is different')")
        return concat_examples(batch, None if dev is None else dev, padding)
