"""Chainer's ``Variable`` and ``Parameter`` over portagrad's tape, and ``chainer.grad``.

:class:`Variable` is portagrad's :class:`portagrad.Variable` with Chainer's spelling on
top: ``data``/``array``, ``grad``/``grad_var``, ``node``, ``label``,
``backward(retain_grad=, enable_double_backprop=, loss_scale=)`` (the graph is kept, as in
Chainer, so backward may run twice), ``unchain_backward``, ``to_device``. The functions
of :mod:`portagrad.chainer.functions` and the operators of a Chainer Variable return
Chainer Variables; ``isinstance(pg_variable, chainer.Variable)`` is False only for
Variables made by :mod:`portagrad.ops` directly, which every function here accepts.

:class:`Parameter` is the Variable a link owns: ``Parameter(initializer=None, shape=None,
name=None)``, uninitialized (``array`` None) until :meth:`Parameter.initialize` gives it a
shape, with ``update_rule`` (None until an optimizer sets one) and
``is_initialized``.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..tape import _variable as _tv
from ..tape import grad as _tape_grad
from ..tape._node import edge_parent
from ..tape._variable import Variable as _TapeVariable
from ..xp._namespace import is_array
from .config import config

__all__ = ["Variable", "Parameter", "as_variable", "as_array", "grad", "VariableNode",
           "FunctionNode", "Function"]


_GRAD_SLOT = _TapeVariable.grad_var  # the slot that holds the gradient


def _cast(out: Any) -> Any:
    """Outputs of portagrad's ops as Chainer Variables (tuples and lists kept)."""
    t = type(out)
    if t is _TapeVariable or t is _tv._Fresh:
        out.__class__ = Variable
        return out
    if t is tuple or t is list:
        return t(_cast(o) for o in out)
    return out


class VariableNode:
    """What Chainer's ``variable.node`` shows of a Variable: its data, creator, name,
    and whether it requires a gradient."""

    def __init__(self, variable: Variable) -> None:
        self._ref = weakref.ref(variable)
        self.name = variable.name
        self.creator = variable.creator
        self.requires_grad = variable.requires_grad
        self.dtype = variable.dtype if variable.array is not None else None
        self.shape = variable.shape if variable.array is not None else None

    @property
    def data(self) -> Any:
        v = self._ref()
        return None if v is None else v.array

    def get_variable(self) -> Variable:
        """The Variable of this node (a fresh one holding the data if it is gone)."""
        v = self._ref()
        return v if v is not None else Variable(self.data, requires_grad=self.requires_grad)

    def get_variable_or_none(self) -> Variable | None:
        return self._ref()


class Variable(_TapeVariable):
    """Chainer's ``Variable(data=None, *, name=None, grad=None, requires_grad=True)``.

    Parameters
    ----------
    data
        An array of any Array API library, or None (set it later with ``.array``).
    name
        Shown in ``repr`` and error messages.
    grad
        An initial gradient.
    requires_grad
        Whether gradients are computed for it (floating arrays only, as in Chainer).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> x = chainer.Variable(np.array([1.0, 2.0]))
    >>> y = chainer.functions.sum(x * x)
    >>> y.backward()
    >>> x.grad, type(y).__name__, y.data
    (array([2., 4.]), 'Variable', array(5.))
    """

    __slots__ = ()

    def __init__(self, data: Any = None, *, name: str | None = None, grad: Any = None,
                 requires_grad: bool = True) -> None:
        if isinstance(data, _TapeVariable):
            raise TypeError("Variable(data): expected an array, got a Variable")
        if data is None:
            _tv._init_variable(self, None, None, bool(requires_grad), name=name)
        else:
            if isinstance(data, (np.generic, float, int, bool)) and not is_array(data):
                data = np.asarray(data)
            super().__init__(data, requires_grad=requires_grad, name=name)
        if grad is not None:
            self.grad = grad

    # -- Chainer's names of the array ------------------------------------------------
    @property
    def data(self) -> Any:
        """The array (the same as ``array``)."""
        return self.array

    @data.setter
    def data(self, value: Any) -> None:
        self._set_array(value)

    def _set_array(self, value: Any) -> None:
        if isinstance(value, _TapeVariable):
            value = value.array
        self.array = value
        if value is not None:
            from ..xp import namespace_of

            self.xp = namespace_of(value)
            if self.requires_grad and not self.xp.isdtype(
                    value.dtype, ("real floating", "complex floating")):
                self.requires_grad = False

    @property
    def label(self) -> str:
        """Shape and dtype, as Chainer's computational graphs print them."""
        if self.array is None:
            return "None"
        if self.array.ndim == 0:
            return str(self.array.dtype)
        return f"({', '.join(str(s) for s in self.array.shape)}), {self.array.dtype}"

    @property
    def node(self) -> VariableNode:
        """The node of this Variable in the graph (its data, creator and name)."""
        return VariableNode(self)

    @property
    def creator_node(self) -> Any:
        return self.creator

    def __len__(self) -> int:
        return super().__len__()

    def __repr__(self) -> str:
        if self.array is None:
            return "variable(None)"
        # Chainer prints the values without the dtype, aligned after "variable(".
        return "variable(" + np.array2string(np.asarray(_host(self.array)), separator=", ",
                                              prefix="variable(") + ")"

    def __str__(self) -> str:
        if self.array is None:
            return "variable(None)"
        return f"variable({_host(self.array)})"

    def summary(self) -> str:
        """Name, shape, dtype and the statistics of data and gradient, one a line."""
        lines = [f"name: {self.name}", f"shape: {self.shape}", f"dtype: {self.dtype}"]
        for what, a in (("data", self.array), ("grad", self.grad)):
            if a is not None:
                h = np.asarray(_host(a), dtype=np.float64)
                lines.append(f"{what} mean={h.mean():.8f} std={h.std():.8f}")
            else:
                lines.append(f"{what}: None")
        return "\n".join(lines)

    debug_print = summary

    # -- copies --------------------------------------------------------------------------
    def __copy__(self) -> Variable:
        """A new Variable sharing the array (and the gradient), outside the graph."""
        new = type(self).__new__(type(self))
        _tv._init_variable(new, self.array, self.xp, self.requires_grad, name=self.name)
        new.grad_var = self.grad_var
        d = getattr(self, "__dict__", None)
        if d is not None:
            new.__dict__.update(d)
        return new

    def __deepcopy__(self, memo: dict) -> Variable:
        """A new Variable with copies of the array and the gradient, outside the graph."""
        import copy as _copy

        new = type(self).__new__(type(self))
        memo[id(self)] = new
        array = None if self.array is None else self.xp.asarray(self.array, copy=True)
        _tv._init_variable(new, array, self.xp, self.requires_grad, name=self.name)
        if self.grad_var is not None:
            new.grad = self.xp.asarray(self.grad, copy=True)
        d = getattr(self, "__dict__", None)
        if d is not None:
            for k, v in d.items():
                new.__dict__[k] = _copy.deepcopy(v, memo)
        return new

    # -- gradients -----------------------------------------------------------------------
    @property
    def grad_var(self) -> Any:  # type: ignore[override]
        """The gradient as a Chainer Variable (None before backward)."""
        return _cast(_GRAD_SLOT.__get__(self))

    @grad_var.setter
    def grad_var(self, value: Any) -> None:
        _GRAD_SLOT.__set__(self, value)

    def backward(self, retain_grad: bool = False, enable_double_backprop: bool = False,
                 loss_scale: float | None = None) -> None:
        """Chainer's backward: gradients of this Variable into every leaf's ``grad``.

        Parameters
        ----------
        retain_grad
            Also keep the gradient of every intermediate Variable still referenced.
        enable_double_backprop
            Record the backward computation, so gradients can be differentiated again.
        loss_scale
            Multiply the seed gradient by this factor; parameters remember it
            (``param.loss_scale``) so that an update can divide it out.

        The seed is ``grad`` if it is set, else one (for a single-element Variable). The
        graph is kept, so backward may be called again on it.

        Examples
        --------
        >>> import numpy as np
        >>> from portagrad import chainer
        >>> x = chainer.Variable(np.array([3.0]))
        >>> h = x * x
        >>> y = h * 2
        >>> y.backward(retain_grad=True)
        >>> x.grad, h.grad
        (array([12.]), array([2.]))
        """
        if isinstance(retain_grad, _TapeVariable) or is_array(retain_grad):
            raise TypeError("Variable.backward(retain_grad): expected a bool, got an array; "
                            "set y.grad to the seed gradient before calling backward()")
        seed = self.grad_var
        if seed is None and self.array is not None and self.size != 1:
            from .._errors import GradientError

            raise GradientError(
                f"Variable.backward: expected a single-element Variable or its grad set as "
                f"the seed, got shape {self.shape} with grad None")
        if seed is None:
            seed = self.xp.ones_like(self.array)
        else:
            seed = seed.array if not enable_double_backprop else seed
        if loss_scale is not None:
            seed = seed * loss_scale
        leaves = _leaves(self)
        if loss_scale is not None:
            for leaf in leaves:
                if isinstance(leaf, Parameter):
                    leaf.loss_scale = loss_scale
        if not retain_grad:
            from ..tape._engine import backward as _backward

            _backward([self], [seed], True, bool(enable_double_backprop))
            return
        inter = [v for v in _intermediates(self) if v is not self]
        targets = leaves + inter
        if not targets:
            return
        gs = _tape_grad([self], targets, [seed], create_graph=bool(enable_double_backprop),
                        allow_unused=True, retain_graph=True)
        for v, g in zip(targets, gs):
            if g is None:
                continue
            if v.creator is None and v.grad_var is not None:
                v.grad_var = _cast(v.grad_var + g)
            else:
                v.grad_var = _cast(g)

    def cleargrad(self) -> None:
        """Forget the gradient."""
        self.grad_var = None

    def zerograd(self) -> None:
        """Set the gradient to zeros (Chainer's deprecated spelling of clearing)."""
        if self.array is not None:
            self.grad = self.xp.zeros_like(self.array)

    def addgrad(self, var: Variable) -> None:
        """Add ``var``'s gradient to this one's (moved to this Variable's device)."""
        if var.grad_var is None:
            return
        g = var.grad
        if self.array is not None and type(g) is not type(self.array):
            from ..xp import from_numpy, to_numpy

            g = from_numpy(to_numpy(g), like=self.array)
        self.grad = g if self.grad is None else self.grad + g

    def copydata(self, var: Variable) -> None:
        """Copy ``var``'s data into this Variable (moved to this Variable's device)."""
        src = var.array if isinstance(var, _TapeVariable) else var
        if self.array is None:
            self._set_array(src)
            return
        from ..xp import from_numpy, to_numpy

        self._set_array(from_numpy(to_numpy(src), like=self.array))

    def unchain(self) -> None:
        """Cut the edge to the creator; this Variable becomes a leaf."""
        super().unchain()

    def unchain_backward(self) -> None:
        """Cut every edge behind this Variable (truncated backpropagation)."""
        super().unchain_backward()

    # -- devices -------------------------------------------------------------------------
    def to_device(self, device: Any) -> Variable:  # type: ignore[override]
        """Move the data and the gradient to ``device`` (a Chainer device specifier), in
        place, as Chainer's ``Variable.to_device``; returns ``self``."""
        from .device import get_device

        d = get_device(device)
        if self.array is not None:
            self._set_array(d.send(self.array))
        if self.grad_var is not None:
            self.grad = d.send(self.grad)
        return self

    def to_cpu(self) -> Variable:
        """Move to the CPU (NumPy arrays)."""
        return self.to_device(-1)

    def to_gpu(self, device: Any = None) -> Variable:
        """Move to CuPy's GPU ``device`` (0 when None)."""
        return self.to_device(0 if device is None else device)

    def reshape(self, *shape: Any) -> Variable:  # type: ignore[override]
        from .. import ops

        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return _cast(ops.reshape(self, shape))

    def transpose(self, *axes: Any) -> Variable:
        from .. import ops

        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]
        return _cast(ops.transpose(self, axes or None))

    @property
    def T(self) -> Variable:  # type: ignore[override]
        return self.transpose()

    def __getitem__(self, key: Any) -> Variable:  # type: ignore[override]
        return _cast(_TapeVariable.__getitem__(self, key))


def _wrap_operator(name: str) -> None:
    base = getattr(_TapeVariable, name)

    def method(self: Any, *args: Any) -> Any:
        return _cast(base(self, *args))

    method.__name__ = name
    setattr(Variable, name, method)


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__neg__", "__pos__", "__abs__", "__iadd__", "__isub__",
              "__imul__", "__itruediv__", "__ipow__", "__mod__", "__rmod__",
              "__floordiv__", "__rfloordiv__", "__lt__", "__le__", "__gt__", "__ge__",
              "sum", "mean", "max", "min", "astype"):
    _wrap_operator(_name)
Variable.__hash__ = object.__hash__  # type: ignore[method-assign]
# Chainer's == and != compare element by element without a graph, as portagrad's.
Variable.__eq__ = _TapeVariable.__eq__  # type: ignore[method-assign]
Variable.__ne__ = _TapeVariable.__ne__  # type: ignore[method-assign]


def _host(a: Any) -> Any:
    from ..xp import to_numpy

    return to_numpy(a)


def _walk(y: _TapeVariable) -> tuple[list, list]:
    """The leaves requiring gradients and the live intermediate Variables behind ``y``."""
    leaves: list = []
    inter: list = [y]
    if y.creator is None:
        return ([y] if y.requires_grad else []), []
    seen_nodes: set[int] = set()
    seen_vars: set[int] = {id(y)}
    stack = [y.creator]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        refs = node.out_refs
        for r in (refs if type(refs) is list else (refs,) if refs is not None else ()):
            v = r()
            if v is not None and id(v) not in seen_vars:
                seen_vars.add(id(v))
                inter.append(v)
        for e in node.edges:
            if e is None:
                continue
            p = edge_parent(e)
            if p is not None:
                stack.append(p[0])
            elif id(e) not in seen_vars:
                seen_vars.add(id(e))
                leaves.append(e)
    return leaves, inter


def _leaves(y: _TapeVariable) -> list:
    return _walk(y)[0]


def _intermediates(y: _TapeVariable) -> list:
    return _walk(y)[1]


class Parameter(Variable):
    """Chainer's ``Parameter(initializer=None, shape=None, name=None)``: the Variable a link
    owns and an optimizer updates.

    Parameters
    ----------
    initializer
        An array (the value), a number (a constant), an initializer of
        :mod:`portagrad.chainer.initializers`, or None (NaN until initialized, as Chainer).
    shape
        Create the array now with this shape; without it the parameter stays
        uninitialized (``array`` None) until :meth:`initialize` is called.
    name
        The attribute name, set when a link registers it.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> p = chainer.Parameter(chainer.initializers.Constant(0.5))
    >>> p.is_initialized, p.update_rule
    (False, None)
    >>> p.initialize((2,))
    >>> p.array, p.grad
    (array([0.5, 0.5], dtype=float32), None)
    """

    def __init__(self, initializer: Any = None, shape: Any = None,
                 name: str | None = None) -> None:
        self.update_rule: Any = None
        self.loss_scale: float | None = None
        self._device: Any = None
        if isinstance(initializer, _TapeVariable):
            initializer = initializer.array
        if is_array(initializer) and not isinstance(initializer, (int, float)):
            super().__init__(initializer, name=name)
            self.initializer: Any = _ArrayInit(initializer)
            return
        from . import initializers as _inits

        if initializer is None:
            initializer = _inits.NaN()
        elif np.isscalar(initializer):
            initializer = _inits.Constant(initializer)
        self.initializer = initializer
        super().__init__(None, name=name)
        if shape is not None:
            self.initialize(shape)

    @property
    def is_initialized(self) -> bool:
        """Whether the parameter has an array yet."""
        return self.array is not None

    @property
    def dtype(self) -> Any:  # type: ignore[override]
        if self.array is not None:
            return self.array.dtype
        return getattr(self.initializer, "dtype", None) or np.dtype(np.float32)

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        if self.array is None:
            from .._errors import ShapeError

            raise ShapeError(f"Parameter {self.name or ''}: not initialized yet; call "
                             f"initialize(shape) or run the link once")
        return tuple(self.array.shape)

    def initialize(self, shape: Any) -> None:
        """Create the array of ``shape`` with the initializer, on the parameter's device
        (the one ``to_device`` chose, else the CPU), in the initializer's dtype (else
        ``chainer.config.dtype``)."""
        from .device import CpuDevice, get_device
        from .initializers import generate_array

        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(
            int(s) for s in shape)
        device = get_device(self._device) if self._device is not None else CpuDevice()
        array = generate_array(self.initializer, shape, device.xp,
                               dtype=getattr(self.initializer, "dtype", None), device=device)
        self._set_array(array)
        self.requires_grad = True
        self.grad_var = None

    def to_device(self, device: Any) -> Parameter:  # type: ignore[override]
        """Move to ``device``; an uninitialized parameter is created there later."""
        from .device import get_device

        self._device = get_device(device)
        return super().to_device(device)  # type: ignore[return-value]

    def zerograd(self) -> None:
        if self.array is not None:
            self.grad = self.xp.zeros_like(self.array)

    def update(self) -> None:
        """Apply the optimizer's rule to this parameter (nothing without a rule)."""
        if self.update_rule is not None:
            self.update_rule.update(self)

    def __repr__(self) -> str:
        if self.array is None:
            return "variable(None)"  # Chainer's spelling of an uninitialized parameter
        return Variable.__repr__(self)


class _ArrayInit:
    """The initializer of a parameter given as an array: that array's values."""

    def __init__(self, array: Any) -> None:
        self.array = array
        self.dtype = getattr(array, "dtype", None)

    def __call__(self, array: Any) -> None:
        from ..xp import to_numpy

        np.copyto(array, to_numpy(self.array))


def as_variable(obj: Any) -> Variable:
    """``obj`` if it is a Variable, else a Variable of it that requires no gradient.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> chainer.as_variable(np.ones(2)).requires_grad
    False
    """
    if isinstance(obj, Variable):
        return obj
    if isinstance(obj, _TapeVariable):
        return _cast(obj)
    return Variable(obj, requires_grad=False)


def as_array(obj: Any) -> Any:
    """The array of a Variable, or ``obj`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> chainer.as_array(chainer.Variable(np.ones(1)))
    array([1.])
    """
    return obj.array if isinstance(obj, _TapeVariable) else obj


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, grad_inputs: Any = None,
         set_grad: bool = False, retain_grad: bool = False,
         enable_double_backprop: bool = False, loss_scale: float | None = None) -> list:
    """Chainer's ``grad``: gradients of ``outputs`` with respect to ``inputs``, returned.

    Parameters
    ----------
    outputs, inputs
        Sequences of Variables.
    grad_outputs
        Seed gradients (None entries: ones for single-element outputs).
    grad_inputs
        Gradients added to the results (None entries add nothing).
    set_grad
        Also store each result as the input's ``grad_var``.
    retain_grad
        Accepted for Chainer's signature only with False: intermediate gradients are not
        kept by ``grad``.
    enable_double_backprop
        Record the computation, so the results can be differentiated again.
    loss_scale
        Multiply the seeds by this factor.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> x = chainer.Variable(np.array(2.0))
    >>> (gx,) = chainer.grad([x ** 3], [x], enable_double_backprop=True)
    >>> (ggx,) = chainer.grad([gx], [x])
    >>> float(gx.array), float(ggx.array)
    (12.0, 12.0)
    """
    if retain_grad:
        raise ValueError("grad(retain_grad): expected False, got True; use "
                         "Variable.backward(retain_grad=True) to keep intermediate gradients")
    outputs = [outputs] if isinstance(outputs, _TapeVariable) else list(outputs)
    inputs = [inputs] if isinstance(inputs, _TapeVariable) else list(inputs)
    seeds = []
    for i, y in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            g = y.xp.ones_like(y.array)
        g = g if isinstance(g, _TapeVariable) else g
        if loss_scale is not None:
            g = g * loss_scale
        seeds.append(g)
    gs = _tape_grad(outputs, inputs, seeds, create_graph=bool(enable_double_backprop),
                    allow_unused=True, retain_graph=True)
    out = []
    for i, g in enumerate(gs):
        if grad_inputs is not None and grad_inputs[i] is not None:
            extra = grad_inputs[i]
            g = extra if g is None else g + extra
            if not isinstance(g, _TapeVariable):
                g = Variable(g, requires_grad=False)
        g = _cast(g)
        if set_grad:
            inputs[i].grad_var = g
        out.append(g)
    return out


_NODE_PRIMITIVES: dict[int, Any] = {}


def _node_primitive(nout: int) -> Any:
    """The tape primitive behind a Chainer function node with ``nout`` outputs: its
    forward hands back what the node's ``forward`` computed, its vjp calls the node's
    ``backward`` on Variables (so a backward written with ``F`` is differentiable)."""
    prim = _NODE_PRIMITIVES.get(nout)
    if prim is not None:
        return prim
    from ..tape import primitive

    @primitive(f"chainer_function_node{nout}", saves="both", nout=nout)
    def _apply(xp: Any, *arrays: Any, node: Any, ready: tuple) -> Any:
        return ready if nout > 1 else ready[0]

    @_apply.defvjp
    def _(ctx: Any, gy: Any) -> tuple:
        node = ctx.params["node"]
        gys = tuple(_cast(g) if g is not None else None
                    for g in (gy if nout > 1 else (gy,)))
        wanted = tuple(i for i, e in enumerate(ctx.edges) if e is not None)
        node._retained = (tuple(_cast(v) for v in ctx.inputs),
                          tuple(_cast(v) for v in ctx.outputs))
        got = node.backward(wanted, gys)
        got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
        if len(got) == len(ctx.inputs) and len(wanted) != len(ctx.inputs):
            got = tuple(got[i] for i in wanted)  # Chainer lets backward return them all
        if len(got) != len(wanted):
            from .._errors import GradientError

            raise GradientError(f"{type(node).__name__}.backward: expected {len(wanted)} "
                                f"gradient(s) (for inputs {wanted}), got {len(got)}")
        out: list[Any] = [None] * len(ctx.inputs)
        for i, g in zip(wanted, got):
            if g is not None and not isinstance(g, _TapeVariable):
                g = Variable(g, requires_grad=False)
            out[i] = g
        return tuple(out)

    _NODE_PRIMITIVES[nout] = _apply
    return _apply


class FunctionNode:
    """Chainer's ``FunctionNode``: a function written as ``forward(inputs)`` on arrays and
    ``backward(target_input_indexes, grad_outputs)`` on Variables, applied with
    ``node.apply(inputs)``; a backward written with Chainer's functions has derivatives of
    every order. ``retain_inputs``/``retain_outputs`` and ``get_retained_inputs``/
    ``get_retained_outputs`` work as in Chainer (portagrad keeps inputs and outputs).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> import portagrad.chainer.functions as F
    >>> class Square(chainer.FunctionNode):
    ...     def forward(self, inputs):
    ...         self.retain_inputs((0,))
    ...         (x,) = inputs
    ...         return x * x,
    ...     def backward(self, indexes, grad_outputs):
    ...         (x,) = self.get_retained_inputs()
    ...         return 2 * x * grad_outputs[0],
    >>> x = chainer.Variable(np.array([3.0]))
    >>> (y,) = Square().apply((x,))
    >>> (g,) = chainer.grad([y], [x], enable_double_backprop=True)
    >>> (gg,) = chainer.grad([g], [x])
    >>> y.array, g.array, gg.array
    (array([9.]), array([6.]), array([2.]))
    """

    _retained: tuple = ((), ())
    inputs: tuple = ()
    outputs: tuple = ()

    @property
    def label(self) -> str:
        return type(self).__name__

    def forward(self, inputs: tuple) -> tuple:
        """The outputs (a tuple of arrays) of the input arrays."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def backward(self, target_input_indexes: tuple, grad_outputs: tuple) -> tuple:
        """The gradients (Variables or None) of the inputs ``target_input_indexes``."""
        raise NotImplementedError(f"{type(self).__name__}.backward is not defined")

    def check_type_forward(self, in_types: Any) -> None:
        """Check the inputs' types before ``forward`` with
        :mod:`~portagrad.chainer.utils.type_check` (``type_check.expect(...)``); the
        default checks nothing. Skipped when ``chainer.config.type_check`` is False."""

    def _check_data_type_forward(self, in_data: tuple) -> None:
        # As Chainer: a light check on the arrays themselves first, and only when it
        # fails the check again on expressions, for a message naming what failed.
        from .utils import type_check

        try:
            with type_check.light_mode:
                self.check_type_forward(type_check.get_light_types(in_data))
            return
        except type_check.InvalidType:
            pass
        in_types = type_check.get_types(in_data, "in_types", False)
        with type_check.get_function_check_context(self):
            self.check_type_forward(in_types)

    def retain_inputs(self, indexes: tuple) -> None:
        self._retain_in = tuple(indexes)

    def retain_outputs(self, indexes: tuple) -> None:
        self._retain_out = tuple(indexes)

    def get_retained_inputs(self) -> tuple:
        inputs = self._retained[0]
        return tuple(inputs[i] for i in getattr(self, "_retain_in", range(len(inputs))))

    def get_retained_outputs(self) -> tuple:
        outputs = self._retained[1]
        return tuple(outputs[i] for i in getattr(self, "_retain_out", range(len(outputs))))

    def _checks_nothing(self) -> bool:
        return type(self).check_type_forward is FunctionNode.check_type_forward

    def apply(self, inputs: Any) -> tuple:
        """Check the inputs' types (``check_type_forward``), run ``forward`` and record
        this node; returns the output Variables."""
        from ..ops._core import var

        vs = [var(x, type(self).__name__, f"inputs[{i}]") for i, x in enumerate(inputs)]
        self.inputs = tuple(vs)
        in_data = tuple(v.array for v in vs)
        if config.type_check and not self._checks_nothing():
            self._check_data_type_forward(in_data)
        outs = self.forward(in_data)
        if not isinstance(outs, tuple):
            raise TypeError(f"{type(self).__name__}.forward: expected a tuple of arrays, got "
                            f"{type(outs).__name__}")
        if not outs:
            raise TypeError(f"{type(self).__name__}.forward: expected at least one output")
        ys = _node_primitive(len(outs))(*vs, node=self, ready=tuple(outs))
        ys = ys if isinstance(ys, tuple) else (ys,)
        return tuple(_cast(y) for y in ys)


class Function:
    """Chainer's old-style ``Function``: ``forward(inputs)`` and ``backward(inputs,
    grad_outputs)`` on arrays, called as ``MyFunction()(x)``; it is differentiable once
    (as in Chainer).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> class Double(chainer.Function):
    ...     def forward(self, inputs):
    ...         return inputs[0] * 2,
    ...     def backward(self, inputs, grad_outputs):
    ...         return grad_outputs[0] * 2,
    >>> x = chainer.Variable(np.array([1.0, 2.0]))
    >>> y = Double()(x)
    >>> y.grad = np.ones(2); y.backward()
    >>> x.grad
    array([2., 2.])
    """

    def forward(self, inputs: tuple) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def backward(self, inputs: tuple, grad_outputs: tuple) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}.backward is not defined")

    @property
    def label(self) -> str:
        """The name an :class:`~portagrad.chainer.utils.type_check.InvalidType` message
        gives the function (its class name)."""
        return type(self).__name__

    def check_type_forward(self, in_types: Any) -> None:
        """Check the inputs' types before ``forward`` (see
        :meth:`FunctionNode.check_type_forward`); the default checks nothing."""

    def __call__(self, *inputs: Any) -> Any:
        outs = _OldStyle(self).apply(inputs)
        return outs[0] if len(outs) == 1 else outs


class _OldStyle(FunctionNode):
    def __init__(self, function: Function) -> None:
        self.function = function

    @property
    def label(self) -> str:
        return self.function.label

    def _checks_nothing(self) -> bool:
        return type(self.function).check_type_forward is Function.check_type_forward

    def check_type_forward(self, in_types: Any) -> None:
        self.function.check_type_forward(in_types)

    def forward(self, inputs: tuple) -> tuple:
        return tuple(self.function.forward(inputs))

    def backward(self, indexes: tuple, grad_outputs: tuple) -> tuple:
        inputs = tuple(v.array for v in self._retained[0])
        outs = self._retained[1]
        gys = tuple(g.array if g is not None else outs[i].xp.zeros_like(outs[i].array)
                    for i, g in enumerate(grad_outputs))
        gxs = self.function.backward(inputs, gys)
        return tuple(None if gxs[i] is None else Variable(gxs[i], requires_grad=False)
                     for i in indexes)
