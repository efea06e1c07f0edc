"""Variable: an array of any Array API library, plus its place in the graph."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from .._errors import DTypeError, GradientError, ShapeError, describe
from ..xp import namespace_of
from ..xp._namespace import is_array, library_scalar_to_array

if TYPE_CHECKING:
    from ._node import Node

__all__ = ["Variable", "as_variable"]


# Versions of the Array API standard that portagrad.ops serves (it implements 2024.12,
# a superset of the earlier ones).
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


# The namespace of Variables' functions: portagrad.ops, which sits above the tape and
# hands itself over when it is imported (set_array_namespace).
_NAMESPACE: list[Any] = [None]


def set_array_namespace(module: Any) -> None:
    """Make ``module`` what ``Variable.__array_namespace__()`` returns."""
    _NAMESPACE[0] = module


class Variable:
    """An array that records the operations applied to it, for differentiation.

    Parameters
    ----------
    array
        An array of any Array API library (NumPy, CuPy, torch, JAX, array-api-strict...).
        The Variable keeps it as it is: same library, same device, no copy.
    requires_grad
        Whether gradients with respect to this Variable are wanted. As in Chainer it
        defaults to ``True``; integer and boolean arrays never require gradients.
    name
        Optional name, shown in ``repr`` and error messages.

    Operations on Variables go through :mod:`portagrad.ops`, whose functions carry the
    Array API standard's names; ``array_api_compat.array_namespace(v)`` returns it, so
    code written against the standard records a graph when given Variables.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0, 3.0]))
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    array([2., 4., 6.])
    """

    __slots__ = (
        "array",
        "xp",
        "requires_grad",
        "grad_var",
        "name",
        "creator",
        "index",
        "_hooks",
        # Forward-mode tangents by level; set only on Variables that carry some (read
        # with getattr), so that making a Variable costs nothing more.
        "_tangents",
        # True on a leaf that a recorded op kept by reference while it required gradients
        # (read with getattr): assigning into it later would change that op's gradient.
        "_kept",
        # A leaf's gradient hooks (register_hook; read with getattr). A non-leaf's live on
        # its creator node.
        "_grad_hooks",
        "__weakref__",
    )
    # NumPy must hand mixed expressions (``ndarray * Variable``) to the Variable.
    __array_ufunc__ = None
    __array_priority__ = 1000

    array: Any
    xp: Any
    requires_grad: bool
    grad_var: Variable | None
    name: str | None
    creator: Node | None
    index: int
    _hooks: list | None

    def __init__(self, array: Any, requires_grad: bool = True, name: str | None = None) -> None:
        if isinstance(array, Variable):
            raise TypeError(
                "Variable(array): expected an array, got a Variable. Use v.detach() for a "
                "new leaf sharing its data."
            )
        array = library_scalar_to_array(array)
        if not is_array(array):
            raise TypeError(
                f"Variable(array): expected an array of an Array API library, got "
                f"{describe(array)}. Convert with an array library first, e.g. "
                f"numpy.asarray(...)."
            )
        xp = namespace_of(array)
        _init_variable(self, array, xp, bool(requires_grad) and xp.isdtype(
            array.dtype, ("real floating", "complex floating")), name=name)

    # -- array attributes ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the array."""
        return tuple(self.array.shape)

    @property
    def dtype(self) -> Any:
        """Dtype of the array, as its library spells it."""
        return self.array.dtype

    @property
    def device(self) -> Any:
        """Device of the array, as its library reports it."""
        return self.array.device

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self.array.ndim

    @property
    def size(self) -> int:
        """Number of elements, an int; called, PyTorch's ``size()``: the shape, or
        ``size(dim)``, one dimension's size."""
        n = 1
        for d in self.array.shape:
            n *= d
        return _Size(n, tuple(self.array.shape))

    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d Variable")
        return self.array.shape[0]

    # -- gradients ----------------------------------------------------------------------
    @property
    def grad(self) -> Any:
        """The gradient as a raw array (``None`` before backward)."""
        g = self.grad_var
        return None if g is None else g.array

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self.grad_var = None
            return
        if isinstance(value, Variable):
            self.grad_var = value
            return
        if tuple(value.shape) != tuple(self.array.shape):
            from .._errors import ShapeError

            raise ShapeError(
                f"Variable.grad: expected an array of shape {self.shape}, got "
                f"{describe(value)}"
            )
        self.grad_var = _leaf(value, self.xp)

    def cleargrad(self) -> None:
        """Forget the accumulated gradient (``grad`` becomes ``None``)."""
        self.grad_var = None

    zerograd = cleargrad

    def backward(
        self,
        retain_graph: Any = False,
        create_graph: bool = False,
        *,
        grad: Any = None,
        gradient: Any = None,
    ) -> None:
        """Accumulate gradients of this Variable into the ``grad`` of every leaf.

        Parameters
        ----------
        retain_graph
            Keep the graph (and what its nodes saved) for another backward. Defaults to
            ``False``: the graph is freed as backward goes. An array or Variable here is
            taken as the seed gradient, as PyTorch's ``y.backward(g)``.
        create_graph
            Record the backward computation itself, so the gradients can be differentiated
            again (Hessian-vector products, gradient penalties). Implies ``retain_graph``.
        grad, gradient
            The seed gradient (two spellings), needed when this Variable has more than one
            element.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> x = pg.Variable(np.array(3.0))
        >>> (x ** 3).backward()
        >>> float(x.grad)
        27.0
        >>> y = pg.Variable(np.array([1.0, 2.0]))
        >>> (y * 2.0).backward(np.array([1.0, 10.0]))
        >>> y.grad
        array([ 2., 20.])
        """
        from ._engine import backward

        if isinstance(retain_graph, Variable) or is_array(retain_graph):
            if grad is not None or gradient is not None:
                raise TypeError("backward(grad): expected one seed gradient, got two (a "
                                "positional one and a keyword one)")
            grad, retain_graph = retain_graph, False
        if gradient is not None:
            if grad is not None:
                raise TypeError("backward(grad): expected one seed gradient, got both grad= "
                                "and gradient=")
            grad = gradient
        backward([self], None if grad is None else [grad], bool(retain_graph), create_graph)

    def detach(self) -> Variable:
        """A new leaf sharing this array, outside any graph, not requiring gradients."""
        return _leaf(self.array, self.xp)

    def requires_grad_(self, requires_grad: bool = True) -> Variable:
        """Set ``requires_grad`` in place and return ``self`` (a leaf only)."""
        if self.creator is not None and not requires_grad:
            raise GradientError(
                "requires_grad_(False): expected a leaf Variable, got one created by "
                f"{self.creator.prim.name}. Use .detach() instead."
            )
        if requires_grad and not self.xp.isdtype(
            self.array.dtype, ("real floating", "complex floating")
        ):
            raise DTypeError(
                f"requires_grad_(True): expected a floating dtype, got {self.array.dtype}"
            )
        self.requires_grad = requires_grad
        return self

    def unchain(self) -> None:
        """Cut the edge to this Variable's creator; it becomes a leaf."""
        self.creator = None
        self.index = 0

    def unchain_backward(self) -> None:
        """Cut every edge behind this Variable, so the graph below it can be freed.

        The Variable keeps its value and becomes a leaf; Variables created earlier in the
        same graph also lose their creators.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> x = pg.Variable(np.ones(2))
        >>> h = x * 2
        >>> y = h + 1
        >>> y.unchain_backward()
        >>> y.creator is None
        True
        """
        node = self.creator
        self.unchain()
        if node is None:
            return
        stack = [node]
        seen = {id(node)}
        while stack:
            n = stack.pop()
            for parent in n.parents():
                if id(parent) not in seen:
                    seen.add(id(parent))
                    stack.append(parent)
            n.unchain_outputs()
            n.release()

    def register_post_accumulate_grad_hook(self, hook: Any) -> _HookHandle:
        """Call ``hook(self)`` during :meth:`backward` once this leaf's gradient is complete.

        Every gradient that backward will add to this leaf has been added when the hook
        runs, so it can start communicating the gradient (data-parallel training overlaps
        its allreduce with the rest of backward this way). Hooks do not run for
        :func:`portagrad.grad`, which does not accumulate.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> w = pg.Variable(np.ones(2))
        >>> seen = []
        >>> handle = w.register_post_accumulate_grad_hook(lambda v: seen.append(v.grad))
        >>> ((w * 2).sum() + (w * 3).sum()).backward()
        >>> seen
        [array([5., 5.])]
        >>> handle.remove()
        """
        if self.creator is not None:
            raise GradientError(
                "register_post_accumulate_grad_hook: expected a leaf Variable, got one "
                f"created by {self.creator.prim.name}"
            )
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        _HOOKED[id(self)] = self
        return _HookHandle(self, hook)

    @property
    def is_leaf(self) -> bool:
        """Whether this Variable has no creator."""
        return self.creator is None

    # -- conversion ---------------------------------------------------------------------
    def __array_namespace__(self, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(f"Variable.__array_namespace__(api_version): expected one of "
                             f"{', '.join(_API_VERSIONS)} or None, got {api_version!r}")
        return _NAMESPACE[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        # A NumPy function applied to a Variable would drop it from the graph and give a
        # zero gradient without a word, so only Variables outside any graph convert.
        if self.requires_grad:
            raise TypeError(
                "Variable.__array__: this Variable is part of a graph (requires_grad=True), "
                "and converting it to a NumPy array would lose its gradient. Use "
                "portagrad.ops functions on it, or v.array / v.detach() to leave the graph."
            )
        # Only libraries that allow implicit host conversion (NumPy) succeed here; CuPy
        # and others raise, as they would for their own arrays.
        convert = getattr(self.array, "__array__", None)
        if convert is None:
            raise TypeError(
                f"Variable.__array__: the {self.xp.__name__} array does not convert to a "
                f"host array implicitly; use portagrad.xp.to_numpy(v.array)"
            )
        return convert() if dtype is None else convert(dtype)

    def __repr__(self) -> str:
        body = repr(self.array)
        extra = ""
        if self.name is not None:
            extra += f", name={self.name!r}"
        if self.creator is not None:
            extra += f", creator={self.creator.prim.name}"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        tangents = getattr(self, "_tangents", None)
        if tangents:
            from ._mode import state

            t = tangents.get(state.fwd[-1]) if state.fwd else None
            if t is not None:  # the innermost open level's, as PyTorch shows a dual
                extra += f", tangent={t.array!r}"
        return f"Variable({body}{extra})"

    def __bool__(self) -> bool:
        return bool(self.array)

    def __float__(self) -> float:
        return float(self.array)

    def __int__(self) -> int:
        return int(self.array)

    def __index__(self) -> int:
        return self.array.__index__()

    def __complex__(self) -> complex:
        return complex(self.array)

    def item(self) -> bool | int | float | complex:
        """The value of a one-element Variable as a Python number (no gradient).

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> pg.Variable(np.array([[2.5]])).item()
        2.5
        """
        a = self.array
        if self.size != 1:
            raise ShapeError(f"item(): expected a Variable of one element, got shape "
                             f"{tuple(a.shape)}. Index or reduce it first")
        a = self.xp.reshape(a, ())
        xp = self.xp
        if xp.isdtype(a.dtype, "bool"):
            return bool(a)
        if xp.isdtype(a.dtype, "integral"):
            return int(a)
        if xp.isdtype(a.dtype, "complex floating"):
            return complex(a)
        return float(a)

    def numpy(self) -> Any:
        """The values as a NumPy array on the host (no gradient).

        NumPy data is returned as it is (no copy, as ``.array``); data of another library
        or device is copied to the host.

        Examples
        --------
        >>> import array_api_strict as xp
        >>> import portagrad as pg
        >>> pg.Variable(xp.asarray([1.0, 2.0])).numpy()
        array([1., 2.])
        """
        from ..xp import to_numpy

        return to_numpy(self.array)

    def tolist(self) -> Any:
        """The values as nested Python lists of numbers (a number for a 0-d Variable).

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> pg.Variable(np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [[1.0, 2.0], [3.0, 4.0]]
        """
        native = getattr(self.array, "tolist", None)
        if callable(native):  # NumPy, CuPy, torch
            return native()

        def nested(a: Any) -> Any:
            if a.ndim == 0:
                return _leaf(a, self.xp).item()
            return [nested(a[i, ...]) for i in range(a.shape[0])]

        return nested(self.array)

    __hash__ = object.__hash__


class _Size(int):
    """The number of elements (an int, as the standard's ``size``), callable as PyTorch's
    ``size()``/``size(dim)``."""

    _shape: tuple

    def __new__(cls, n: int, shape: tuple) -> _Size:
        out = super().__new__(cls, n)
        out._shape = shape
        return out

    def __call__(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._shape
        k = len(self._shape)
        if not -k <= dim < k:
            raise ShapeError(f"Variable.size(dim): expected a dimension in [-{k}, {k}), got "
                             f"{dim}")
        return self._shape[dim]


class _HookHandle:
    """Removes a hook registered on a Variable."""

    __slots__ = ("_var", "_hook")

    def __init__(self, var: Variable, hook: Any) -> None:
        self._var = weakref.ref(var)
        self._hook = hook

    def remove(self) -> None:
        v = self._var()
        if v is not None and v._hooks and self._hook in v._hooks:
            v._hooks.remove(self._hook)
            if not v._hooks:
                v._hooks = None
                _HOOKED.pop(id(v), None)


# Leaves with hooks, so that backward pays for hook bookkeeping only when some exist.
# Keyed by id: a WeakSet would compare Variables with ==, which is elementwise.
_HOOKED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


_new = object.__new__


def _init_variable(v: Variable, array: Any, xp: Any, requires_grad: bool = False,
                   creator: Node | None = None, index: int = 0,
                   name: str | None = None) -> Variable:
    """Fill in every field of ``v``, a new Variable (of any subclass), and return it.

    The one place that writes a Variable's fields: the validating constructor, a
    Parameter made before its array, and the unvalidated constructors below and in the
    tape's recording path (``_init_variable(_new(Variable), ...)``, one call) all come
    through here.
    """
    v.array = array
    v.xp = xp
    v.requires_grad = requires_grad
    v.grad_var = None
    v.name = name
    v.creator = creator
    v.index = index
    v._hooks = None
    return v


def _leaf(array: Any, xp: Any, requires_grad: bool = False) -> Variable:
    """Make a Variable without validation (arrays that came out of a kernel)."""
    return _init_variable(_new(Variable), array, xp, requires_grad)


def _output(array: Any, xp: Any, creator: Node, index: int = 0) -> Variable:
    """Output ``index`` of the node ``creator``, as a Variable requiring gradients."""
    return _init_variable(_new(Variable), array, xp, True, creator, index)


class _Fresh(Variable):
    """A gradient a vjp computed into a new array that nothing else references, returned
    for one input only: backward may add that input's other gradients into it in place
    instead of allocating their sum. Backward turns it into a plain Variable
    (``__class__``) as it stores it, so none reaches the user."""

    __slots__ = ()


def _fresh(array: Any, xp: Any) -> Variable:
    """Wrap ``array``, a vjp's new gradient array, as a :class:`_Fresh` gradient."""
    return _init_variable(_new(_Fresh), array, xp)


def _snapshot(v: Variable) -> Variable:
    """A constant as something else keeps it (a recorded op, a dual's tangent): its array
    and tangents at this moment, so that assigning into ``v`` later (``v[key] = value``
    rebinds ``v.array`` to a new array) leaves what was kept alone."""
    s = _leaf(v.array, v.xp)
    t = getattr(v, "_tangents", None)
    if t is not None:
        s._tangents = t
    return s


def as_variable(value: Any, requires_grad: bool = False) -> Variable:
    """Return ``value`` if it is a Variable, else wrap the array in a new leaf.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.as_variable(np.zeros(2)).requires_grad
    False
    """
    if isinstance(value, Variable):
        return value
    return Variable(value, requires_grad=requires_grad)

