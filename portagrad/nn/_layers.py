"""Chainer-named bases of the Chainer links: ``Linear`` and ``Embedding`` with ``W``/``b``,
Chainer's signatures and lazy sizes (``Linear(out)``), and the parameter helpers. The
PyTorch-named modules of ``portagrad.nn`` are in ``_torch_*.py``."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._core import var
from ..tape._variable import Variable
from . import init as _init
from ._module import Module, check_input
from ._parameter import Parameter

__all__ = ["Linear", "Embedding", "make_param", "as_initializer"]


class _FromArray(_init.Initializer):
    """A given array (any library, e.g. a NumPy array as Chainer's ``initialW``) copied
    into the parameter's library, device and dtype; its shape must be the parameter's."""

    def __init__(self, array: Any) -> None:
        super().__init__()
        self.array = array

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        from .._errors import ShapeError
        from ..xp import from_numpy, to_numpy

        host = to_numpy(getattr(self.array, "array", self.array))
        if tuple(host.shape) != tuple(shape):
            raise ShapeError(f"initializer: expected an array of shape {tuple(shape)}, got "
                             f"{tuple(host.shape)}")
        out = from_numpy(host, xp=xp, device=device)
        return out if dtype is None else xp.astype(out, dtype)

    def __repr__(self) -> str:
        return f"_FromArray(shape={tuple(self.array.shape)})"


def as_initializer(value: Any, default: Any) -> Any:
    """``value`` as an initializer: ``None`` gives ``default``, a number a constant, an
    array (or Variable) that array, and a callable is used as it is."""
    if value is None:
        return default
    if isinstance(value, _init.Initializer):
        return value
    if isinstance(value, Variable) or (hasattr(value, "shape") and hasattr(value, "dtype")):
        return _FromArray(value)
    if callable(value):
        return value
    return _init.Constant(float(value))


def make_param(initializer: Any, shape: tuple[int, ...] | None, xp: Any, device: Any,
               dtype: Any) -> Parameter:
    """A Parameter, created now if ``shape`` is known, else at the module's first call."""
    if initializer is not None:
        initializer = as_initializer(initializer, None)
    p = Parameter(initializer=initializer)
    if shape is not None:
        p.initialize(shape, xp=xp, device=device, dtype=dtype)
    return p


class Linear(Module):
    """``y = x @ W.T + b`` over the last axis; ``W`` has shape ``(out, in)``.

    ``Linear(out)`` or ``Linear(None, out)`` leaves ``in`` to be inferred from the first
    input, and creates the parameters in that input's library, device and dtype.

    Parameters
    ----------
    in_features, out_features
        Sizes; with one argument it is ``out_features``.
    bias
        Whether to add a bias (initialized by ``initial_bias``, zeros by default).
    initialW, initial_bias
        Initializers of ``W`` (default :class:`~portagrad.nn.init.LeCunNormal`) and ``b``:
        an initializer, a number or an array of the parameter's shape.
    nobias
        Chainer's spelling of ``bias=False`` (keyword only).
    xp, device, dtype
        Where parameters of known shape are created (default: NumPy, float32).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._layers import Linear
    >>> layer = Linear(3)
    >>> layer(np.ones((2, 5), dtype=np.float32)).shape, layer.W.shape
    ((2, 3), (3, 5))
    """

    def __init__(self, in_features: int | None, out_features: int | None = None,
                 bias: bool = True, initialW: Any = None, initial_bias: Any = None, *,
                 nobias: bool = False, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        if nobias:
            bias = False
        if out_features is None:
            in_features, out_features = None, in_features
        if out_features is None or int(out_features) <= 0:
            raise ValueError(f"Linear(out_features): expected a positive int, got "
                             f"{out_features}")
        self.in_features = None if in_features is None else int(in_features)
        self.out_features = int(out_features)
        dtype = _default_dtype(xp, dtype)
        known = self.in_features is not None
        self.W = make_param(as_initializer(initialW, _init.LeCunNormal()),
                            (self.out_features, self.in_features) if known else None,
                            xp, device, dtype)
        self.b = (make_param(as_initializer(initial_bias, _init.Zeros()),
                             (self.out_features,) if known else None, xp, device, dtype)
                  if bias else None)

    def forward(self, x: Any) -> Any:
        x = var(x, "Linear")
        if self.W.array is None:
            self.in_features = int(x.shape[-1]) if x.ndim else 1
            self.W.initialize((self.out_features, self.in_features), like=x)
            if self.b is not None:
                self.b.initialize((self.out_features,), like=x)
        else:
            check_input(self, x, "Linear", self.W)
        return ops.linear(x, self.W, self.b)

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, bias={self.b is not None}"


def _default_dtype(xp: Any, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    if xp is None:
        from ..xp import default_namespace

        xp = default_namespace()
    return xp.float32


class Embedding(Module):
    """Rows of a ``(num_embeddings, dim)`` table looked up by integer ids.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._layers import Embedding
    >>> emb = Embedding(10, 4)
    >>> emb(np.array([[1, 2, 3]])).shape
    (1, 3, 4)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 initialW: Any = None, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_embeddings = int(num_embeddings)
        self.embedding_dim = int(embedding_dim)
        self.padding_idx = padding_idx
        self.W = make_param(as_initializer(initialW, _init.Normal(1.0)),
                            (self.num_embeddings, self.embedding_dim), xp, device,
                            _default_dtype(xp, dtype))

    def forward(self, ids: Any) -> Any:
        check_input(self, ids, "Embedding", self.W)
        a = getattr(ids, "array", ids)
        if hasattr(a, "shape") and a.shape and self.W.xp.isdtype(a.dtype, "integral"):
            xp = self.W.xp
            lo, hi = int(xp.min(a)), int(xp.max(a))
            if lo < 0 or hi >= self.num_embeddings:
                from .._errors import ShapeError

                raise ShapeError(f"Embedding(ids): expected ids in [0, {self.num_embeddings})"
                                 f", got values from {lo} to {hi}")
        return ops.embedding(ids, self.W, padding_idx=self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"

