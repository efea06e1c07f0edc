"""``torch.nn``'s Linear, LazyLinear, Bilinear, Embedding and EmbeddingBag: torch's
arguments, parameter names (``weight``, ``bias``), layouts and default initialization."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._adapters import adapts
from ..ops._core import var
from . import functional as F
from . import init as _init
from ._module import Module, check_input
from ._parameter import Parameter
from ._torch_common import new_param, resolve, uniform_bound

__all__ = ["Linear", "LazyLinear", "Bilinear", "Embedding", "EmbeddingBag"]


class Linear(Module):
    """``y = x @ weight.T + bias`` over the last axis (``torch.nn.Linear``).

    Parameters
    ----------
    in_features, out_features
        Sizes of the last axis of input and output (:class:`LazyLinear` infers the first).
    bias
        Whether to learn an additive bias.
    device, dtype
        Where and in which floating dtype the parameters are created (default float32).
    xp
        The array library (default: the default namespace, NumPy).

    ``weight`` is ``(out_features, in_features)``, ``bias`` ``(out_features,)``, both
    uniform in ``+-1/sqrt(in_features)`` as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> fc = pg.nn.Linear(5, 3)
    >>> fc(np.ones((2, 5), np.float32)).shape, fc.weight.shape, fc.bias.shape
    ((2, 3), (3, 5), (3,))
    >>> fc
    Linear(in_features=5, out_features=3, bias=True)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        if isinstance(out_features, bool) or int(out_features) < 0:
            raise ValueError(f"Linear(out_features): expected a non-negative int, got "
                             f"{out_features!r}")
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        where = resolve(xp, device, dtype)
        init = uniform_bound(self.in_features)
        self.weight = new_param(init, (self.out_features, self.in_features), where)
        if bias:
            self.bias = new_param(init, (self.out_features,), where)
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Any) -> Any:
        check_input(self, input, "Linear", self.weight)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class LazyLinear(Linear):
    """:class:`Linear` whose ``in_features`` is inferred at the first call, where the
    parameters are created in the library, on the device and in the dtype of that input
    (``torch.nn.LazyLinear``); then it becomes a :class:`Linear`.

    Parameters
    ----------
    out_features
        Size of the output's last axis.
    bias, device, dtype, xp
        As :class:`Linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> fc = pg.nn.LazyLinear(3)
    >>> fc(np.ones((2, 7))).shape, fc.weight.shape, type(fc).__name__
    ((2, 3), (3, 7), 'Linear')
    """

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = int(out_features)
        self.weight = Parameter(initializer=_init.Zeros())
        if bias:
            self.bias = Parameter(initializer=_init.Zeros())
        else:
            self.register_parameter("bias", None)
        self._lazy_where = (xp, device, dtype)

    def forward(self, input: Any) -> Any:
        if self.weight.array is None:
            x = var(input, "LazyLinear")
            self.in_features = int(x.shape[-1]) if x.ndim else 1
            _materialize(self, x, {"weight": (self.out_features, self.in_features),
                                   "bias": (self.out_features,)}, self.in_features)
        elif self.in_features == 0:
            self.in_features = int(self.weight.shape[1])
        self.__class__ = Linear
        return Linear.forward(self, input)


def _materialize(module: Module, x: Any, shapes: dict[str, tuple[int, ...]],
                 fan_in: int) -> None:
    """Create a lazy module's parameters from the first input ``x`` with torch's default
    bound, in ``x``'s library and device (and dtype unless one was given)."""
    xp, device, dtype = module.__dict__.get("_lazy_where", (None, None, None))
    init = uniform_bound(fan_in)
    for name, shape in shapes.items():
        p = getattr(module, name)
        if p is None or p.array is not None:
            continue
        p.initializer = init
        if dtype is None and xp is None and device is None:
            p.initialize(shape, like=x)
        else:
            a = x.array
            from ..xp import namespace_of

            p.initialize(shape, xp=xp or namespace_of(a), device=device or a.device,
                         dtype=resolve(xp or namespace_of(a), None, dtype)[2]
                         if dtype is not None else None)


class Bilinear(Module):
    """``y[..., k] = x1 @ weight[k] @ x2 + bias[k]`` (``torch.nn.Bilinear``).

    Parameters
    ----------
    in1_features, in2_features, out_features
        Sizes of the two inputs' and of the output's last axis.
    bias, device, dtype, xp
        As :class:`Linear`. ``weight`` is ``(out, in1, in2)``; both parameters are uniform
        in ``+-1/sqrt(in1_features)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> bl = pg.nn.Bilinear(2, 3, 4)
    >>> bl(np.ones((5, 2), np.float32), np.ones((5, 3), np.float32)).shape
    (5, 4)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None, *,
                 xp: Any = None) -> None:
        super().__init__()
        self.in1_features = int(in1_features)
        self.in2_features = int(in2_features)
        self.out_features = int(out_features)
        where = resolve(xp, device, dtype)
        init = uniform_bound(self.in1_features)
        self.weight = new_param(init, (self.out_features, self.in1_features,
                                       self.in2_features), where)
        if bias:
            self.bias = new_param(init, (self.out_features,), where)
        else:
            self.register_parameter("bias", None)

    def forward(self, input1: Any, input2: Any) -> Any:
        check_input(self, input1, "Bilinear", self.weight)
        a, b = var(input1, "Bilinear", "input1"), var(input2, "Bilinear", "input2")
        if a.ndim == 2 and b.ndim == 2:
            return F.bilinear(a, b, self.weight, self.bias)
        if a.ndim < 1 or tuple(a.shape[:-1]) != tuple(b.shape[:-1]):
            raise ShapeError(f"Bilinear(input1, input2): expected shapes (..., in1) and "
                             f"(..., in2) with equal leading axes, got {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
        lead = tuple(int(d) for d in a.shape[:-1])
        y = F.bilinear(ops.reshape(a, (-1, int(a.shape[-1]))),
                       ops.reshape(b, (-1, int(b.shape[-1]))), self.weight, self.bias)
        return ops.reshape(y, lead + (self.out_features,))

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def _padding_index(padding_idx: int | None, num: int, op: str) -> int | None:
    if padding_idx is None:
        return None
    p = int(padding_idx)
    if not -num <= p < num:
        raise ValueError(f"{op}(padding_idx): expected an index within num_embeddings "
                         f"({num}), got {padding_idx}")
    return p + num if p < 0 else p


def _check_ids(ids: Any, num: int, op: str) -> None:
    """Ids must lie in ``[0, num)``: a negative id would silently wrap around."""
    a = getattr(ids, "array", ids)
    shape = getattr(a, "shape", None)
    if not shape or 0 in shape:
        return
    from ..xp import namespace_of

    xp = namespace_of(a)
    if not xp.isdtype(a.dtype, "integral"):
        return
    lo, hi = int(xp.min(a)), int(xp.max(a))
    if lo < 0 or hi >= num:
        raise ShapeError(f"{op}(input): expected ids in [0, {num}), got values from {lo} to "
                         f"{hi}")


def _zero_row(w: Parameter, row: int | None) -> None:
    if row is None:
        return
    a = w.array
    xp = w.xp
    rows = xp.arange(a.shape[0], device=a.device)
    mask = xp.reshape(rows == row, (-1, 1))
    w.set_array(xp.where(mask, xp.zeros_like(a), a))


class Embedding(Module):
    """Rows of ``weight`` ``(num_embeddings, embedding_dim)`` looked up by integer ids
    (``torch.nn.Embedding``).

    Parameters
    ----------
    num_embeddings, embedding_dim
        Size of the table.
    padding_idx
        A row that starts at zero and gets no gradient (negative counts from the end).
    max_norm, norm_type
        Rows looked up whose ``norm_type``-norm exceeds ``max_norm`` are first rescaled in
        place to that norm.
    scale_grad_by_freq
        Divide each row's gradient by the count of its id in the batch.
    sparse
        Accepted; gradients are dense.
    _weight, _freeze
        An initial table (copied) and whether it is frozen (``requires_grad=False``).
    device, dtype, xp
        As :class:`Linear`. The default table is drawn from ``N(0, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> emb = pg.nn.Embedding(10, 4, padding_idx=0)
    >>> emb(np.array([[0, 2, 3]])).shape, float(abs(emb.weight.array[0]).sum())
    ((1, 3, 4), 0.0)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Any = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        self.num_embeddings = int(num_embeddings)
        self.embedding_dim = int(embedding_dim)
        self.padding_idx = _padding_index(padding_idx, self.num_embeddings, "Embedding")
        self.max_norm = max_norm
        self.norm_type = float(norm_type)
        self.scale_grad_by_freq = bool(scale_grad_by_freq)
        self.sparse = bool(sparse)
        where = resolve(xp, device, dtype)
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is None:
            self.weight = new_param(_init.Normal(1.0), shape, where)
            _zero_row(self.weight, self.padding_idx)
        else:
            from ._layers import _FromArray

            self.weight = new_param(_FromArray(_weight), shape, where)
        if _freeze:
            self.weight.requires_grad = False

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding holding ``embeddings`` (2-d, any library; kept in its library and
        dtype), frozen unless ``freeze=False``.

        Parameters
        ----------
        embeddings
            The ``(num_embeddings, embedding_dim)`` table.
        freeze, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse
            As the constructor (``freeze`` is its ``_freeze``).

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> emb = pg.nn.Embedding.from_pretrained(np.eye(3))
        >>> emb(np.array([1])).array, emb.weight.requires_grad
        (array([[0., 1., 0.]]), False)
        """
        a = getattr(embeddings, "array", embeddings)
        if len(a.shape) != 2:
            raise ShapeError(f"Embedding.from_pretrained(embeddings): expected a 2-d table, "
                             f"got shape {tuple(a.shape)}")
        from ..xp import namespace_of

        xp = namespace_of(a)
        m = cls(int(a.shape[0]), int(a.shape[1]), padding_idx, max_norm, norm_type,
                scale_grad_by_freq, sparse, _weight=a, _freeze=freeze, device=a.device,
                dtype=a.dtype, xp=xp)
        return m

    def forward(self, input: Any) -> Any:
        check_input(self, input, "Embedding", self.weight)
        _check_ids(input, self.num_embeddings, "Embedding")
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s


_BAG_MODES = ("sum", "mean", "max")


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``torch.nn.EmbeddingBag``), without
    building the per-id embeddings in the caller.

    Parameters
    ----------
    num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, sparse
        As :class:`Embedding`.
    mode
        ``"sum"``, ``"mean"`` (default) or ``"max"``.
    include_last_offset
        ``offsets`` has one more entry, the end of the last bag (CSR layout).
    padding_idx
        Ids left out of every bag (and of the mean's count).
    _weight, device, dtype, xp
        As :class:`Embedding`.

    ``forward(input, offsets=None, per_sample_weights=None)``: ``input`` is ``(B, N)``
    (one bag per row) or 1-d with ``offsets`` giving each bag's start; an empty bag gives
    zeros. ``per_sample_weights`` (same shape as ``input``) weights each id (``"sum"``
    only).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> bag = pg.nn.EmbeddingBag.from_pretrained(np.arange(6.0).reshape(3, 2), mode="sum")
    >>> bag(np.array([0, 1, 2, 2]), np.array([0, 2])).array
    array([[ 2.,  4.],
           [ 8., 10.]])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Any = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None, *,
                 xp: Any = None) -> None:
        super().__init__()
        if mode not in _BAG_MODES:
            raise ValueError(f"EmbeddingBag(mode): expected one of {_BAG_MODES}, got "
                             f"{mode!r}")
        self.num_embeddings = int(num_embeddings)
        self.embedding_dim = int(embedding_dim)
        self.max_norm = max_norm
        self.norm_type = float(norm_type)
        self.scale_grad_by_freq = bool(scale_grad_by_freq)
        self.mode = mode
        self.sparse = bool(sparse)
        self.include_last_offset = bool(include_last_offset)
        self.padding_idx = _padding_index(padding_idx, self.num_embeddings, "EmbeddingBag")
        where = resolve(xp, device, dtype)
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is None:
            self.weight = new_param(_init.Normal(1.0), shape, where)
            _zero_row(self.weight, self.padding_idx)
        else:
            from ._layers import _FromArray

            self.weight = new_param(_FromArray(_weight), shape, where)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag holding ``embeddings``, frozen unless ``freeze=False``.

        Parameters
        ----------
        embeddings
            The ``(num_embeddings, embedding_dim)`` table (kept in its library and dtype).
        freeze, max_norm, norm_type, scale_grad_by_freq, mode
            As the constructor.
        sparse, include_last_offset, padding_idx
            As the constructor.
        """
        from ..xp import namespace_of

        a = getattr(embeddings, "array", embeddings)
        m = cls(int(a.shape[0]), int(a.shape[1]), max_norm, norm_type, scale_grad_by_freq,
                mode, sparse, a, include_last_offset, padding_idx, device=a.device,
                dtype=a.dtype, xp=namespace_of(a))
        m.weight.requires_grad = not freeze
        return m

    @adapts(ops.embedding_bag)
    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Any = None) -> Any:
        check_input(self, input, "EmbeddingBag", self.weight)
        _check_ids(input, self.num_embeddings, "EmbeddingBag")
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


