"""The methods of :class:`Variable` that PyTorch code calls on tensors.

Hooks (``register_hook``, ``retain_grad``) come from :mod:`._hooks`; the others are
spellings of portagrad ops (the namespace ops hands to the tape on import), so each is
differentiable to any order exactly as the op is. PyTorch's ``dim=``/``keepdim=`` and the
standard's ``axis=``/``keepdims=`` are both accepted.
"""

from __future__ import annotations

from typing import Any

from .._errors import ShapeError
from . import _hooks
from ._variable import _NAMESPACE, Variable

__all__ = ["install"]


def _ops() -> Any:
    return _NAMESPACE[0]


def _axis(dim: Any, axis: Any, where: str) -> Any:
    if dim is not None and axis is not None:
        raise TypeError(f"Variable.{where}: expected dim= or axis=, got both")
    return dim if dim is not None else axis


def _keep(keepdim: Any, keepdims: Any) -> bool:
    return bool(keepdim if keepdim is not None else keepdims if keepdims is not None
                else False)


def _shape_args(shape: tuple, where: str) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"Variable.{where}: expected ints, got {shape!r}") from None


def register_hook(self: Variable, hook: Any) -> _hooks.RemovableHandle:
    """Call ``hook(grad)`` with this Variable's gradient each time backward computes it.

    ``grad`` is the Variable's complete gradient of that pass (for a leaf, before it is
    added to ``.grad``); a hook returning a Variable or an array of the same shape
    replaces it for the rest of backward. Hooks run in the order registered, under
    ``create_graph`` as recorded computations (so they may be differentiated), and in
    :func:`portagrad.grad` as in backward.

    Parameters
    ----------
    hook
        ``hook(grad: Variable) -> Variable | array | None``.

    Returns
    -------
    RemovableHandle
        ``handle.remove()`` unregisters the hook.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0]))
    >>> h = x * 3
    >>> handle = h.register_hook(lambda g: g * 10)
    >>> (h * h).sum().backward()
    >>> x.grad
    array([180., 360.])
    >>> handle.remove()
    """
    return _hooks.register_hook(self, hook)


def retain_grad(self: Variable) -> None:
    """Keep this non-leaf's gradient in ``.grad`` (summed over backward passes).

    The retained gradient is the one that flows on, after this Variable's other hooks.
    On a leaf it does nothing: leaves keep their gradient anyway.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0]))
    >>> h = x * 2
    >>> h.retain_grad()
    >>> (h * h).sum().backward()
    >>> h.grad, h.retains_grad
    (array([4., 8.]), True)
    """
    _hooks.retain_grad(self)


def _retains_grad(self: Variable) -> bool:
    return _hooks.retains_grad(self)


def clone(self: Variable) -> Variable:
    """A copy of the array that gradients flow through (the identity op, recorded).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0]))
    >>> y = x.clone()
    >>> y.array is x.array, y.creator is not None
    (False, True)
    """
    return _ops().asarray(self, copy=True)


def argmax(self: Variable, dim: int | None = None, keepdim: bool | None = None, *,
           axis: int | None = None, keepdims: bool | None = None) -> Variable:
    """Index of the largest value along ``dim`` (of the flattened array for ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.array([[1.0, 5.0], [7.0, 2.0]])).argmax(1).tolist()
    [1, 0]
    """
    return _ops().argmax(self, axis=_axis(dim, axis, "argmax"),
                         keepdims=_keep(keepdim, keepdims))


def argmin(self: Variable, dim: int | None = None, keepdim: bool | None = None, *,
           axis: int | None = None, keepdims: bool | None = None) -> Variable:
    """Index of the smallest value along ``dim`` (of the flattened array for ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.array([[1.0, 5.0], [7.0, 2.0]])).argmin(dim=0).tolist()
    [0, 1]
    """
    return _ops().argmin(self, axis=_axis(dim, axis, "argmin"),
                         keepdims=_keep(keepdim, keepdims))


def numel(self: Variable) -> int:
    """Number of elements (as the ``size`` attribute).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> v = pg.Variable(np.zeros((2, 3)))
    >>> v.numel(), v.dim(), v.size, v.size(), v.size(-1)
    (6, 2, 6, (2, 3), 3)
    """
    n = 1
    for d in self.array.shape:
        n *= d
    return n


def dim(self: Variable) -> int:
    """Number of dimensions (``ndim``)."""
    return self.ndim


def view(self: Variable, *shape: Any) -> Variable:
    """The same values in ``shape`` (``-1`` once for the size that fits): ``reshape``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.zeros((2, 3, 4))).view(2, -1).shape
    (2, 12)
    """
    return _ops().reshape(self, _shape_args(shape, "view"))


def flatten(self: Variable, start_dim: int = 0, end_dim: int = -1) -> Variable:
    """Merge dimensions ``start_dim .. end_dim`` into one.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.zeros((2, 3, 4))).flatten(1).shape
    (2, 12)
    """
    shape = self.shape
    n = len(shape)
    if n == 0:
        return _ops().reshape(self, (1,))
    s, e = start_dim % n, end_dim % n
    if s > e:
        raise ShapeError(f"Variable.flatten: expected start_dim <= end_dim, got {start_dim} "
                         f"and {end_dim} for {n} dimensions")
    merged = 1
    for d in shape[s:e + 1]:
        merged *= d
    return _ops().reshape(self, (*shape[:s], merged, *shape[e + 1:]))


def unsqueeze(self: Variable, dim: int) -> Variable:
    """A new axis of size one at ``dim``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.zeros(3)).unsqueeze(0).shape
    (1, 3)
    """
    return _ops().expand_dims(self, axis=dim)


def squeeze(self: Variable, dim: int | tuple[int, ...] | None = None) -> Variable:
    """Drop axes of size one (all of them, or ``dim``'s when it has size one).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> v = pg.Variable(np.zeros((1, 3, 1)))
    >>> v.squeeze().shape, v.squeeze(0).shape, v.squeeze(1).shape
    ((3,), (3, 1), (1, 3, 1))
    """
    shape = self.shape
    n = len(shape)
    dims = range(n) if dim is None else (dim,) if isinstance(dim, int) else dim
    axes = tuple(sorted({d % n for d in dims if shape[d % n] == 1})) if n else ()
    if not axes:
        return self
    return _ops().squeeze(self, axis=axes)


def permute(self: Variable, *dims: Any) -> Variable:
    """The axes in the order ``dims``: ``permute_dims``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.zeros((2, 3, 4))).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    return _ops().permute_dims(self, _shape_args(dims, "permute"))


def t(self: Variable) -> Variable:
    """The transpose of a matrix (a 0-d or 1-d Variable as it is).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.zeros((2, 3))).t().shape
    (3, 2)
    """
    if self.ndim > 2:
        raise ShapeError(f"Variable.t(): expected at most 2 dimensions, got shape "
                         f"{self.shape}; use permute or mT")
    return self if self.ndim < 2 else _ops().permute_dims(self, (1, 0))


def _cast(name: str) -> Any:
    def cast(self: Variable) -> Variable:
        return _ops().astype(self, getattr(self.xp, name))

    cast.__name__ = cast.__qualname__ = {"float32": "float", "float64": "double",
                                         "float16": "half", "int64": "long",
                                         "int32": "int", "bool": "bool"}[name]
    cast.__doc__ = (f"This Variable as {name} of its own library (differentiable for "
                    f"floating dtypes).\n\n        Examples\n        --------\n"
                    f"        >>> import numpy as np\n        >>> import portagrad as pg\n"
                    f"        >>> str(pg.Variable(np.zeros(2)).{cast.__name__}().dtype)\n"
                    f"        '{name}'\n        ")
    return cast


def _unary(name: str) -> Any:
    def method(self: Variable) -> Variable:
        return getattr(_ops(), name)(self)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"``portagrad.ops.{name}`` of this Variable.\n\n        Examples\n"
                      f"        --------\n        >>> import numpy as np\n"
                      f"        >>> import portagrad as pg\n"
                      f"        >>> pg.Variable(np.ones(2)).{name}().shape\n        (2,)\n"
                      f"        ")
    return method


def softmax(self: Variable, dim: int | None = None, *, axis: int | None = None) -> Variable:
    """Softmax along ``dim``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.zeros((1, 2))).softmax(1).tolist()
    [[0.5, 0.5]]
    """
    a = _axis(dim, axis, "softmax")
    return _ops().softmax(self, axis=-1 if a is None else a)


def log_softmax(self: Variable, dim: int | None = None, *,
                axis: int | None = None) -> Variable:
    """Log of the softmax along ``dim``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.Variable(np.zeros(2)).log_softmax(0).array[0]), 4)
    -0.6931
    """
    a = _axis(dim, axis, "log_softmax")
    return _ops().log_softmax(self, axis=-1 if a is None else a)


def clamp(self: Variable, min: Any = None, max: Any = None) -> Variable:  # noqa: A002
    """Values clipped to ``[min, max]`` (either may be ``None``): ``clip``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.Variable(np.array([-2.0, 0.5, 3.0])).clamp(0.0, 1.0).tolist()
    [0.0, 0.5, 1.0]
    """
    return _ops().clip(self, min=min, max=max)


def norm(self: Variable, p: float = 2, dim: Any = None, keepdim: bool = False) -> Variable:
    """The ``p``-norm of all values, or along ``dim``: ``linalg.vector_norm``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.Variable(np.array([3.0, 4.0])).norm())
    5.0
    """
    return _ops().linalg.vector_norm(self, axis=dim, keepdims=keepdim, ord=p)


_METHODS = {
    "register_hook": register_hook, "retain_grad": retain_grad, "clone": clone,
    "argmax": argmax, "argmin": argmin, "numel": numel, "dim": dim,
    "view": view, "flatten": flatten, "unsqueeze": unsqueeze, "squeeze": squeeze,
    "permute": permute, "t": t, "softmax": softmax, "log_softmax": log_softmax,
    "clamp": clamp, "norm": norm,
}


def install() -> None:
    """Attach the methods to :class:`Variable`."""
    for name, fn in _METHODS.items():
        setattr(Variable, name, fn)
    Variable.retains_grad = property(_retains_grad)  # type: ignore[attr-defined]
    for dtype in ("float32", "float64", "float16", "int64", "int32", "bool"):
        cast = _cast(dtype)
        setattr(Variable, cast.__name__, cast)
    for name in ("exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "sigmoid", "relu"):
        setattr(Variable, name, _unary(name))
