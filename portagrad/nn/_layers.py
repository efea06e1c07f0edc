"""Basic layers: Linear, Embedding, Dropout, Flatten and the activations as modules."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._core import var
from ..tape._variable import Variable
from . import init as _init
from ._module import Module, check_input
from ._parameter import Parameter

__all__ = ["Linear", "Embedding", "Dropout", "Flatten", "Activation", "ReLU", "ReLU6",
           "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
           "Softplus", "Softsign", "HardTanh", "HardSigmoid", "LogSigmoid", "Softmax",
           "LogSoftmax", "make_param", "as_initializer"]


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
    >>> layer = pg.nn.Linear(3)
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
    >>> emb = pg.nn.Embedding(10, 4)
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


class Dropout(Module):
    """Zero elements with probability ``ratio`` while training (``module.train()``);
    identity in evaluation mode.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> d = pg.nn.Dropout(0.5).eval()
    >>> d(np.ones(3)).array
    array([1., 1., 1.])
    """

    def __init__(self, ratio: float = 0.5) -> None:
        self.ratio = float(ratio)

    def forward(self, x: Any) -> Any:
        return ops.dropout(x, self.ratio, train=self.training)

    def extra_repr(self) -> str:
        return f"ratio={self.ratio}"


class Flatten(Module):
    """Reshape ``(N, d1, d2, ...)`` to ``(N, d1 * d2 * ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.Flatten()(np.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def forward(self, x: Any) -> Any:
        x = var(x, "Flatten")
        return ops.reshape(x, (x.shape[0], -1))


class Activation(Module):
    """An activation function of :mod:`portagrad.ops` as a module."""

    fn_name = ""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def forward(self, x: Any) -> Any:
        fn = getattr(ops, self.fn_name, None)
        if fn is None:
            raise NotImplementedError(f"{type(self).__name__}: portagrad.ops.{self.fn_name} "
                                      f"is not available in this version")
        return fn(x, **self.kwargs)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.kwargs.items())


def _activation(name: str, fn_name: str, params: tuple[str, ...] = (),
                defaults: tuple = ()) -> type:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(params):
            raise TypeError(f"{name}() takes at most {len(params)} arguments")
        kw = dict(zip(params, defaults))
        kw.update(zip(params, args))
        kw.update(kwargs)
        Activation.__init__(self, **kw)

    doc = (f"``portagrad.ops.{fn_name}`` as a module"
           + (f" (arguments: {', '.join(params)})." if params else "."))
    return type(name, (Activation,), {"fn_name": fn_name, "__init__": __init__,
                                       "__doc__": doc, "__module__": __name__})


ReLU = _activation("ReLU", "relu")
ReLU6 = _activation("ReLU6", "relu6")
LeakyReLU = _activation("LeakyReLU", "leaky_relu", ("negative_slope",), (0.01,))
ELU = _activation("ELU", "elu", ("alpha",), (1.0,))
SELU = _activation("SELU", "selu")
CELU = _activation("CELU", "celu", ("alpha",), (1.0,))
GELU = _activation("GELU", "gelu")
SiLU = _activation("SiLU", "silu")
Mish = _activation("Mish", "mish")
Sigmoid = _activation("Sigmoid", "sigmoid")
Tanh = _activation("Tanh", "tanh")
Softplus = _activation("Softplus", "softplus", ("beta",), (1.0,))
Softsign = _activation("Softsign", "softsign")
HardTanh = _activation("HardTanh", "hard_tanh", ("min_val", "max_val"), (-1.0, 1.0))
HardSigmoid = _activation("HardSigmoid", "hard_sigmoid")
LogSigmoid = _activation("LogSigmoid", "log_sigmoid")
Softmax = _activation("Softmax", "softmax", ("axis",), (-1,))
LogSoftmax = _activation("LogSoftmax", "log_softmax", ("axis",), (-1,))
