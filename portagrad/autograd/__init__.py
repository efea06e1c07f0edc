"""Functional derivatives: vjp, jvp, hvp, vhp, jacobian and hessian of a Python function.

The forms are those of ``torch.autograd.functional``: each takes a function of arrays (or
Variables) and the point, and returns the outputs with the derivative. They are built on
:func:`portagrad.grad`, so they run on every library and compose to any order:

* ``vjp`` is one backward pass;
* ``jvp`` is one forward pass carrying tangents (forward mode, :mod:`.forward_ad`);
* ``hvp`` is reverse-over-forward: the gradient of the directional derivative ``<grad f,
  v>`` that one forward pass in forward mode records;
* ``vhp`` differentiates ``grad(f) . v`` (forward, backward, and one backward through
  both);
* ``jacobian`` and ``hessian`` take one backward pass per output element.

With ``create_graph=False`` (the default) the results carry no graph; with ``True`` they
are differentiable again, with respect to the inputs when those were Variables that
require gradients.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._errors import DTypeError, GradientError, ShapeError, describe
from ..ops._core import size_of
from ..tape._engine import grad
from ..tape._mode import enable_grad
from ..tape._variable import Variable
from ..xp._namespace import is_array
from . import forward_ad

__all__ = ["vjp", "jvp", "hvp", "vhp", "jacobian", "hessian", "forward_ad"]


def _as_tuple(value: Any) -> tuple[bool, tuple]:
    if isinstance(value, (tuple, list)):
        return True, tuple(value)
    return False, (value,)


def _prepare(inputs: Any, create_graph: bool, op: str) -> tuple[bool, tuple[Variable, ...]]:
    """Inputs as Variables that require gradients.

    A Variable already in a graph is kept (with ``create_graph``) so that the result can be
    differentiated again with respect to it; otherwise a new leaf shares its data.
    """
    is_tuple, items = _as_tuple(inputs)
    if not items:
        raise ShapeError(f"{op}(inputs): expected at least one input, got none")
    out = []
    for i, x in enumerate(items):
        if isinstance(x, Variable):
            arr = x.array
            if create_graph and x.requires_grad:
                out.append(x)
                continue
        elif is_array(x):
            arr = x
        else:
            raise TypeError(f"{op}(inputs[{i}]): expected an array or a Variable, got "
                            f"{describe(x)}")
        v = Variable(arr, requires_grad=True)
        if not v.requires_grad:
            raise DTypeError(f"{op}(inputs[{i}]): expected a floating-point array, got dtype "
                             f"{arr.dtype}")
        out.append(v)
    return is_tuple, tuple(out)


def _outputs(value: Any, op: str) -> tuple[bool, tuple[Variable, ...]]:
    is_tuple, items = _as_tuple(value)
    for i, o in enumerate(items):
        if not isinstance(o, Variable):
            where = f"func's output {i}" if is_tuple else "func's output"
            raise TypeError(f"{op}: expected {where} to be a Variable (computed from the "
                            f"inputs with portagrad ops), got {describe(o)}")
    return is_tuple, items


def _vectors(v: Any, like: tuple[Variable, ...], op: str, what: str) -> tuple[Variable, ...]:
    """``v`` as one Variable per entry of ``like`` (the ``what``), each of the same shape."""
    if v is None:
        if len(like) == 1 and size_of(like[0]) == 1:
            x = like[0]
            return (_ones(x),)
        raise ShapeError(f"{op}(v): expected one vector per {what}, got None; v may be "
                         f"omitted only for a single one-element {what}")
    _, items = _as_tuple(v)
    if len(items) != len(like):
        raise ShapeError(f"{op}(v): expected {len(like)} vector(s), one per {what}, got "
                         f"{len(items)}")
    out = []
    for i, (vi, x) in enumerate(zip(items, like)):
        vv = vi if isinstance(vi, Variable) else Variable(vi, requires_grad=False)
        if tuple(vv.shape) != tuple(x.shape):
            raise ShapeError(f"{op}(v[{i}]): expected shape {tuple(x.shape)}, got "
                             f"{tuple(vv.shape)}")
        out.append(vv)
    return tuple(out)


def _zeros(x: Variable) -> Variable:
    return Variable(x.xp.zeros_like(x.array), requires_grad=False)


def _ones(x: Variable) -> Variable:
    return Variable(x.xp.ones_like(x.array), requires_grad=False)


def _check_strategy(value: str, op: str, arg: str) -> None:
    if value not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"{op}({arg}): expected 'reverse-mode' or 'forward-mode', got "
                         f"{value!r}")


def _fill(gs: Sequence[Variable | None], like: Sequence[Variable], strict: bool,
          op: str) -> tuple[Variable, ...]:
    out = []
    for i, (g, x) in enumerate(zip(gs, like)):
        if g is None:
            if strict:
                raise GradientError(f"{op}: expected the outputs to depend on input {i} "
                                    f"(strict=True), got no path from it")
            g = _zeros(x)
        out.append(g)
    return tuple(out)


def _grad(outs: Sequence[Variable], ins: Sequence[Variable], seeds: Sequence[Variable],
          create_graph: bool, retain_graph: bool | None = None) -> list[Variable | None]:
    """``grad`` that tolerates outputs that are ``None`` or have no graph (their gradient
    is zero)."""
    pairs = [(o, s) for o, s in zip(outs, seeds) if o is not None and o.requires_grad]
    if not pairs:
        return [None] * len(ins)
    return list(grad([o for o, _ in pairs], list(ins), grad_outputs=[s for _, s in pairs],
                     create_graph=create_graph, allow_unused=True, retain_graph=retain_graph))


def _result(is_tuple: bool, values: Sequence[Any], create_graph: bool) -> Any:
    vals = tuple(v if create_graph or v.creator is None else v.detach() for v in values)
    return vals if is_tuple else vals[0]


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Outputs of ``func(*inputs)`` and the vector-Jacobian product ``v^T J``.

    Parameters
    ----------
    func
        A function of the inputs returning a Variable or a tuple of Variables.
    inputs
        An array/Variable or a tuple of them (floating point).
    v
        One cotangent per output, of the output's shape; may be omitted for a single
        one-element output.
    create_graph
        Make the results differentiable again.
    strict
        Raise :class:`GradientError` when an input does not affect the outputs, instead of
        returning zeros for it.

    Returns
    -------
    (outputs, vjp)
        Structured as ``func``'s outputs and as ``inputs`` respectively.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> out, g = pg.autograd.vjp(lambda x: x ** 2, np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    >>> g.array
    array([2., 4.])
    """
    with enable_grad():
        in_tuple, xs = _prepare(inputs, create_graph, "vjp")
        out_tuple, outs = _outputs(func(*xs), "vjp")
        vs = _vectors(v, outs, "vjp", "output")
        gs = _fill(_grad(outs, xs, vs, create_graph), xs, strict, "vjp")
    return _result(out_tuple, outs, create_graph), _result(in_tuple, gs, create_graph)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Outputs of ``func(*inputs)`` and the Jacobian-vector product ``J v``.

    One forward pass in forward mode: the inputs carry ``v`` as their tangents
    (:mod:`portagrad.autograd.forward_ad`). Arguments as in :func:`vjp`; ``v`` has one
    tangent per input, and may be omitted for a single one-element input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> f = lambda x: pg.ops.stack([x[0] * x[1], x[0] + x[1]])
    >>> out, t = pg.autograd.jvp(f, np.array([2.0, 3.0]), np.array([1.0, 0.0]))
    >>> t.array
    array([3., 1.])
    """
    with enable_grad():
        in_tuple, xs = _prepare(inputs, create_graph, "jvp")
        vs = _vectors(v, xs, "jvp", "input")
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(x, t) for x, t in zip(xs, vs))
            out_tuple, outs = _outputs(func(*duals), "jvp")
            ts = [forward_ad.unpack_dual(o).tangent for o in outs]
            outs = tuple(_plain(o) for o in outs)
        if strict:
            _require_dependence(outs, xs, "jvp")
        ts = _fill(ts, outs, False, "jvp")
    return _result(out_tuple, outs, create_graph), _result(out_tuple, ts, create_graph)


def _require_dependence(outs: Sequence[Variable], xs: Sequence[Variable], op: str) -> None:
    """``strict=True`` in forward mode: one backward pass finds the inputs that no output
    depends on."""
    _fill(_grad(outs, xs, [_ones(o) for o in outs], False, retain_graph=True), xs, True, op)


def _plain(o: Variable) -> Variable:
    """``o`` without the tangents of a level that is closing (same graph)."""
    if getattr(o, "_tangents", None) is None:
        return o
    return forward_ad.unpack_dual(o).primal


def _scalar_output(func: Callable[..., Any], xs: tuple, op: str) -> Variable:
    out = func(*xs)
    if not isinstance(out, Variable):
        raise TypeError(f"{op}: expected func to return a Variable, got {describe(out)}")
    if size_of(out) != 1:
        raise ShapeError(f"{op}: expected func to return a single element, got shape "
                         f"{tuple(out.shape)}")
    return out


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Output of a scalar ``func(*inputs)`` and ``v^T H``, ``H`` its Hessian.

    Computed as the gradient of ``grad(func) . v``: forward, backward, and one backward
    through both. ``v`` has one entry per input (shapes of the inputs).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> f = lambda x: pg.ops.sum(x ** 3)
    >>> out, hv = pg.autograd.vhp(f, np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    >>> hv.array
    array([ 6., 12.])
    """
    with enable_grad():
        in_tuple, xs = _prepare(inputs, create_graph, "vhp")
        vs = _vectors(v, xs, "vhp", "input")
        out = _scalar_output(func, xs, "vhp")
        gs = _grad([out], xs, [_ones(out)], create_graph=True, retain_graph=True)
        res = _fill(_grad(gs, xs, vs, create_graph), xs, strict, "vhp")
    return _result(False, [out], create_graph), _result(in_tuple, res, create_graph)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Output of a scalar ``func(*inputs)`` and ``H v``, ``H`` its Hessian.

    Reverse-over-forward: one forward pass in forward mode gives the directional
    derivative ``<grad f, v>`` as a recorded scalar, and one backward pass gives its
    gradient, ``H v``. This skips the products of ``grad f`` itself, which a second
    backward through the gradient (:func:`vhp`) pays for: on the benchmark's MLP, 2.05
    instead of 2.66 times the multiply-adds of a plain forward and backward. For
    functions with continuous second derivatives ``H`` is symmetric and ``H v`` equals
    :func:`vhp`'s ``v^T H``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> f = lambda x: x[0] ** 2 * x[1]
    >>> out, hv = pg.autograd.hvp(f, np.array([1.0, 3.0]), np.array([1.0, 0.0]))
    >>> hv.array
    array([6., 2.])
    """
    with enable_grad():
        in_tuple, xs = _prepare(inputs, create_graph, "hvp")
        vs = _vectors(v, xs, "hvp", "input")
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(x, t) for x, t in zip(xs, vs))
            out = _scalar_output(func, duals, "hvp")
            slope = forward_ad.unpack_dual(out).tangent
            out = _plain(out)
        if strict:
            _require_dependence([out], xs, "hvp")
        if slope is None:
            res = _fill([None] * len(xs), xs, False, "hvp")
        else:
            res = _fill(_grad([slope], xs, [_ones(slope)], create_graph), xs, False, "hvp")
    return _result(False, [out], create_graph), _result(in_tuple, res, create_graph)


def _one_hot_seeds(o: Variable) -> list[Variable]:
    xp = o.xp
    n = size_of(o)
    shape = tuple(o.shape)
    return [Variable(xp.reshape(xp.eye(1, n, k=k, dtype=o.dtype, device=o.device), shape),
                     requires_grad=False) for k in range(n)]


def _jacobian_rows(outs: tuple[Variable, ...], xs: tuple[Variable, ...], create_graph: bool,
                   strict: bool, op: str) -> list[list[Variable]]:
    """``J[i][j]``: derivative of output ``i`` in input ``j``, shape ``out_i + in_j``."""
    from .. import ops

    table = []
    for o in outs:
        rows: list[list[Variable]] = [[] for _ in xs]
        for seed in _one_hot_seeds(o):
            gs = _fill(_grad([o], xs, [seed], create_graph, retain_graph=True), xs, strict,
                       op)
            for j, g in enumerate(gs):
                rows[j].append(g)
        entry = []
        for j, x in enumerate(xs):
            shape = tuple(o.shape) + tuple(x.shape)
            if rows[j]:
                entry.append(ops.reshape(ops.stack(rows[j], axis=0), shape))
            else:  # an output with no element
                entry.append(Variable(x.xp.zeros(shape, dtype=x.dtype, device=x.device),
                                      requires_grad=False))
        table.append(entry)
    return table


def _nest(table: list[list[Variable]], out_tuple: bool, in_tuple: bool,
          create_graph: bool) -> Any:
    rows = [_result(in_tuple, r, create_graph) for r in table]
    return tuple(rows) if out_tuple else rows[0]


def _jacobian_columns(func: Callable[..., Any], xs: tuple[Variable, ...], op: str
                      ) -> tuple[bool, tuple[Variable, ...], list[list[Variable]]]:
    """Forward mode: one pass per input element, ``J[i][j]`` of shape ``out_i + in_j``."""
    from .. import ops

    cols: list[list[list[Variable]]] = []
    outs: tuple[Variable, ...] = ()
    out_tuple = False
    for j, x in enumerate(xs):
        n = size_of(x)
        per_out: list[list[Variable]] = []
        for k in range(n):
            seed = Variable(x.xp.reshape(x.xp.eye(1, n, k=k, dtype=x.dtype,
                                                  device=x.device), tuple(x.shape)),
                            requires_grad=False)
            with forward_ad.dual_level():
                args = tuple(forward_ad.make_dual(xi, seed) if i == j else xi
                             for i, xi in enumerate(xs))
                out_tuple, res = _outputs(func(*args), op)
                ts = [forward_ad.unpack_dual(o).tangent for o in res]
                outs = tuple(_plain(o) for o in res)
            if not per_out:
                per_out = [[] for _ in ts]
            for i, (t, o) in enumerate(zip(ts, outs)):
                per_out[i].append(t if t is not None else _zeros(o))
        cols.append(per_out)
    if not outs:  # every input is empty: evaluate once for the outputs' shapes
        out_tuple, outs = _outputs(func(*xs), op)
    table = []
    for i, o in enumerate(outs):
        entry = []
        for j, x in enumerate(xs):
            shape = tuple(o.shape) + tuple(x.shape)
            if cols[j] and cols[j][i]:
                entry.append(ops.reshape(ops.stack(cols[j][i], axis=-1), shape))
            else:
                entry.append(Variable(x.xp.zeros(shape, dtype=o.dtype, device=x.device),
                                      requires_grad=False))
        table.append(entry)
    return out_tuple, outs, table


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``.

    For one input and one output the result has shape ``output.shape + input.shape``;
    with tuples it is nested as in PyTorch: ``J[i][j]`` for output ``i`` and input ``j``
    (a tuple over inputs for one output, over outputs for one input).

    Parameters
    ----------
    strategy
        ``"reverse-mode"`` (one backward pass per output element) or ``"forward-mode"``
        (one forward pass per input element: cheaper when inputs are fewer than outputs).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.autograd.jacobian(lambda x: x ** 2, np.array([1.0, 3.0])).array
    array([[2., 0.],
           [0., 6.]])
    >>> pg.autograd.jacobian(lambda x: x ** 2, np.array([1.0, 3.0]),
    ...                      strategy="forward-mode").array
    array([[2., 0.],
           [0., 6.]])
    """
    _check_strategy(strategy, "jacobian", "strategy")
    with enable_grad():
        in_tuple, xs = _prepare(inputs, create_graph, "jacobian")
        if strategy == "forward-mode":
            out_tuple, outs, table = _jacobian_columns(func, xs, "jacobian")
            if strict:
                _require_dependence(outs, xs, "jacobian")
        else:
            out_tuple, outs = _outputs(func(*xs), "jacobian")
            table = _jacobian_rows(outs, xs, create_graph, strict, "jacobian")
    return _nest(table, out_tuple, in_tuple, create_graph)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: the Jacobian of its gradient.

    For one input the result has shape ``input.shape + input.shape``; for a tuple of
    inputs, ``H[i][j]`` is the block of inputs ``i`` and ``j``.

    Parameters
    ----------
    outer_jacobian_strategy
        How the gradient is differentiated: ``"reverse-mode"`` (the gradient once, then one
        backward pass through it per element) or ``"forward-mode"`` (one forward and
        backward pass per element carrying a tangent: forward-over-reverse).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.autograd.hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 3.0])).array
    array([[6., 2.],
           [2., 0.]])
    >>> pg.autograd.hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 3.0]),
    ...                     outer_jacobian_strategy="forward-mode").array
    array([[6., 2.],
           [2., 0.]])
    """
    _check_strategy(outer_jacobian_strategy, "hessian", "outer_jacobian_strategy")
    forward = outer_jacobian_strategy == "forward-mode"

    def gradient(*zs: Variable) -> tuple[Variable, ...]:
        # Reverse-mode rows differentiate this gradient's graph again; forward-mode columns
        # carry tangents through it and need a graph only for create_graph.
        out = _scalar_output(func, zs, "hessian")
        if forward:
            gs = _grad([out], zs, [_ones(out)], create_graph)
        else:
            gs = _grad([out], zs, [_ones(out)], create_graph=True, retain_graph=True)
        return _fill(gs, zs, strict, "hessian")

    with enable_grad():
        in_tuple, xs = _prepare(inputs, create_graph, "hessian")
        if forward:
            _, _, table = _jacobian_columns(gradient, xs, "hessian")
        else:
            table = _jacobian_rows(gradient(*xs), xs, create_graph, strict, "hessian")
    return _nest(table, in_tuple, in_tuple, create_graph)
