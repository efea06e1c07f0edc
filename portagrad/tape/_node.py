"""Primitives and the graph nodes they record.

A primitive is a forward on raw arrays plus a vjp on Variables written with portagrad ops;
since the vjp is itself recorded when ``create_graph=True``, every order of derivative
works. A node points at its parents' *nodes* (not at their Variables), so an intermediate
array is freed as soon as the user drops it, unless a primitive declared that its backward
keeps it.
"""

from __future__ import annotations

import sys
import traceback
import weakref
from collections.abc import Callable, Container
from typing import Any

from .._errors import GradientError, NonFiniteError
from ..xp._dtypes import index_dtype
from ..xp._namespace import LIBRARY_SCALAR_TYPES, library_scalar_to_array
from ._forward import propagate
from ._mode import CAST, DEBUG, FORWARD, RECORD, state
from ._variable import Variable, _init_variable, _leaf, _new, _output, _snapshot

__all__ = ["Primitive", "Node", "primitive", "PRIMITIVES", "edge_parent"]

PRIMITIVES: dict[str, Primitive] = {}

_SAVES = {"none": (False, False), "inputs": (True, False), "outputs": (False, True),
          "both": (True, True)}


class Primitive:
    """A differentiable operation: ``forward(xp, *arrays, **params)`` and its vjp.

    Use :func:`primitive` to declare one. ``saves`` says what the vjp reads (``"inputs"``,
    ``"outputs"``, ``"both"`` or ``"none"``), so the graph holds no array it does not
    need. An ``elementwise`` primitive broadcasts its inputs; its vjp returns gradients in
    the broadcast shape and the framework sums them back to each input's shape.
    """

    __slots__ = ("name", "forward", "vjp", "vjp_recorded", "vjp_unrecorded", "vjp_real",
                 "vjp_plain", "jvp", "linear", "nondiff", "save_in", "save_out", "elementwise",
                 "nout", "binop", "sums_into", "__dict__")

    def __init__(self, name: str, forward: Callable[..., Any], saves: str = "inputs",
                 elementwise: bool = False, nout: int = 1) -> None:
        self.name = name
        self.forward = forward
        # What backward calls: the vjp, or, with a rule for unrecorded backward declared,
        # a dispatch between the two (see defvjp_unrecorded).
        self.vjp: Callable[..., Any] | None = None
        self.vjp_recorded: Callable[..., Any] | None = None
        self.vjp_unrecorded: Callable[..., Any] | None = None
        # The rule ``vjp`` comes to when backward records nothing and the upstream
        # gradient is real, which backward then calls itself (two calls fewer per node),
        # valid while ``vjp`` is still ``vjp_plain``: a wrapper that changes what real
        # gradients get, set on ``vjp`` later, leaves them apart, and ``vjp`` runs.
        self.vjp_real: Callable[..., Any] | None = None
        self.vjp_plain: Callable[..., Any] | None = None
        # Forward mode (see ._forward): an explicit tangent rule, or the positions of the
        # arguments in which the primitive is jointly linear (its derivative in the
        # others being zero), so that the tangent is the primitive of the tangents.
        self.jvp: Callable[..., Any] | None = None
        self.linear: Container[int] | None = None
        # Positions of arguments the output does not depend on differentiably (a mask's
        # source, say): no edge is recorded for them, so a gradient that is always zero is
        # never computed or propagated.
        self.nondiff: Container[int] | None = None
        self.save_in, self.save_out = _SAVES[saves]
        self.elementwise = elementwise
        self.nout = nout
        # For the arithmetic operators: the Python operator that computes ``forward`` on
        # two arrays (or an array and a number) of any library, called without ``xp``.
        self.binop: Callable[[Any, Any], Any] | None = None
        # Whether the vjp can add a gradient into the one its input already has (a
        # product, by GEMM with beta = 1): backward then hands it ``ctx.sum_into``.
        self.sums_into = False
        self.__doc__ = forward.__doc__
        self.__wrapped__ = forward

    def defvjp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn(ctx, gy)``, returning one gradient (or ``None``) per input."""
        self.vjp_recorded = fn
        self._choose_vjp()
        return fn

    def defvjp_unrecorded(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register a second vjp rule, used when backward records nothing.

        ``fn(ctx, gy)`` returns what the vjp returns, but may compute on raw arrays
        (wrapping each result with ``_fresh``), skipping the per-op bookkeeping of the
        primitives a recorded vjp goes through. It runs only when neither
        ``create_graph`` nor a forward-mode level is on; otherwise the vjp runs, so
        higher derivatives always differentiate the vjp. The conformance suite checks
        the two rules against each other on every op that reaches the primitive.
        """
        self.vjp_unrecorded = fn
        self._choose_vjp()
        return fn

    def _choose_vjp(self) -> None:
        recorded, unrecorded = self.vjp_recorded, self.vjp_unrecorded
        self.vjp_real = unrecorded if unrecorded is not None else recorded
        if recorded is None or unrecorded is None:
            self.vjp = self.vjp_plain = recorded
            return

        def vjp(ctx: Any, gy: Any) -> Any:
            if state.mode & (RECORD | FORWARD):
                return recorded(ctx, gy)
            return unrecorded(ctx, gy)

        self.vjp = self.vjp_plain = vjp

    def defjvp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn(ctx, *tangents)``, returning the output tangent(s) ``J t``.

        ``tangents[i]`` is the tangent of input ``i`` (``None`` for none); ``ctx`` is as
        for the vjp. Without a rule, the tangent comes from the vjp (see
        :mod:`portagrad.tape._forward`).
        """
        self.jvp = fn
        return fn

    def __call__(self, *args: Any, **params: Any) -> Any:
        return apply(self, args, params)

    def __repr__(self) -> str:
        return f"<portagrad primitive {self.name}>"


def primitive(name: str | None = None, *, saves: str = "inputs", elementwise: bool = False,
              nout: int = 1) -> Callable[[Callable[..., Any]], Primitive]:
    """Declare a primitive from its forward ``f(xp, *arrays, **params)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.tape import primitive
    >>> @primitive(saves="outputs", elementwise=True)
    ... def my_exp(xp, x):
    ...     return xp.exp(x)
    >>> @my_exp.defvjp
    ... def _(ctx, gy):
    ...     (y,) = ctx.outputs
    ...     return (gy * y,)
    >>> x = pg.Variable(np.zeros(2))
    >>> my_exp(x).sum().backward()
    >>> x.grad
    array([1., 1.])
    """

    def wrap(fn: Callable[..., Any]) -> Primitive:
        prim = Primitive(name or fn.__name__.lstrip("_"), fn, saves, elementwise, nout)
        PRIMITIVES[prim.name] = prim
        return prim

    return wrap


class Node:
    """One application of a primitive in the graph.

    ``edges[i]`` is where the gradient of input ``i`` goes: the parent ``Node`` itself for
    its output 0, a tuple of the parent and output index for a later output, a leaf
    ``Variable``, or ``None`` when input ``i`` needs no gradient (:func:`edge_parent`
    reads one). Output 0, by far the usual one, takes no tuple: a tuple per recorded input
    was one more object for the cyclic garbage collector to track.
    """

    # saved_inputs, saved_outputs, out_meta, out_tangents (forward mode), stack and
    # out_hooks (gradient hooks of the outputs, see ._hooks) are set only when used (the
    # constructor is on every op's path); readers use getattr with a default.
    __slots__ = ("prim", "edges", "generation", "params", "in_shapes", "saved_inputs",
                 "saved_outputs", "out_refs", "out_meta", "out_tangents", "xp", "stack",
                 "sum_into", "out_hooks", "public", "__weakref__")

    def __init__(self, prim: Primitive, edges: tuple, generation: int, params: dict,
                 in_shapes: tuple, xp: Any) -> None:
        _init_node(self, prim, edges, generation, params, in_shapes, xp)

    @property
    def freed(self) -> bool:
        """Whether backward already released this node (every node has an edge)."""
        return not self.edges

    # -- what vjps read -----------------------------------------------------------------
    @property
    def inputs(self) -> tuple:
        """The saved inputs (Variables, or the Python scalars that were passed)."""
        try:  # nearly every vjp reads this: cheaper than getattr with a default
            saved = self.saved_inputs
        except AttributeError:
            saved = None
        if saved is None:
            self._freed_error("inputs")
        return saved  # type: ignore[return-value]

    @property
    def outputs(self) -> tuple:
        """The outputs as Variables connected to this node (recreated if dropped)."""
        saved = getattr(self, "saved_outputs", None)
        if saved is None:
            self._freed_error("outputs")
        refs = self.out_refs
        bare = refs is not None and type(refs) is not list
        if bare:
            refs = [refs]
        outs = []
        for i, arr in enumerate(saved):  # type: ignore[arg-type]
            v = refs[i]() if refs is not None else None
            if v is None:
                v = _output(arr, self.xp, self, i)
                tangents = getattr(self, "out_tangents", None)
                if tangents is not None and tangents[i]:
                    v._tangents = tangents[i]
                if refs is not None:
                    refs[i] = weakref.ref(v)
            outs.append(v)
        if bare:
            self.out_refs = refs[0]  # type: ignore[index]
        return tuple(outs)

    @property
    def needs(self) -> tuple[bool, ...]:
        """For each input, whether its gradient is wanted."""
        return tuple(e is not None for e in self.edges)

    def _freed_error(self, what: str) -> None:
        raise GradientError(
            f"{self.prim.name}.backward: expected its saved {what}, got a freed graph. "
            f"Call backward(retain_graph=True) (or grad(..., retain_graph=True)) the first "
            f"time to differentiate through the same graph twice."
        )

    def parents(self) -> list[Node]:
        """The nodes that created this node's inputs."""
        return [p[0] for p in map(edge_parent, self.edges) if p is not None]

    def release(self) -> None:
        """Drop what backward needed; later backward through this node is an error."""
        self.saved_inputs = None
        self.saved_outputs = None
        self.out_tangents = None
        self.edges = ()

    def unchain_outputs(self) -> None:
        refs = self.out_refs
        if refs is not None:
            for r in (refs if type(refs) is list else (refs,)):
                v = r()
                if v is not None:
                    v.creator = None
                    v.index = 0

    def __repr__(self) -> str:
        return f"<Node {self.prim.name} gen={self.generation}>"


def edge_parent(e: Any) -> tuple[Node, int] | None:
    """The node and output index that the edge ``e`` (see :class:`Node`) leads to; None
    for the edge of a leaf, or no edge.

    Parameters
    ----------
    e
        An entry of a node's ``edges``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.tape._node import edge_parent
    >>> x = pg.Variable(np.ones(2))
    >>> h = x * 2
    >>> y = h + 1
    >>> edge_parent(y.creator.edges[0]) == (h.creator, 0), edge_parent(h.creator.edges[0])
    (True, None)
    """
    t = type(e)
    if t is Node:
        return e, 0
    if t is tuple:
        return e
    return None


def _init_node(node: Node, prim: Primitive, edges: tuple, generation: int, params: dict,
               in_shapes: tuple, xp: Any) -> Node:
    """Fill in the fields every node has (see :class:`Node`) and return ``node``.

    The one place that writes them: ``Node(...)`` comes through here, and so does the
    recording path, on ``_new(Node)`` (a class call costs more than a function call).
    """
    node.prim = prim
    node.edges = edges
    node.generation = generation
    node.params = params
    node.in_shapes = in_shapes
    node.xp = xp
    # Weak references to the outputs; one output's is stored bare (a list per op would be
    # one more object for the cyclic garbage collector to track).
    node.out_refs = None
    return node


# Nodes' operand shapes, one tuple per combination: a tuple of its own per node is one
# object per operand and one more for the cyclic garbage collector to track, and a
# collection during a long graph of small ops spends its time traversing such objects.
_SHAPES: dict[tuple, tuple] = {}
_SHAPES_MAX = 4096


def _interned(shapes: tuple) -> tuple:
    """The stored tuple equal to ``shapes`` (stored now if there is room)."""
    try:
        found = _SHAPES.get(shapes)
        if found is not None:
            return found
        if len(_SHAPES) < _SHAPES_MAX:
            _SHAPES[shapes] = shapes
    except TypeError:  # a library whose shapes cannot be hashed
        pass
    return shapes


def _record(prim: Primitive, params: dict, xp: Any, out: Any, edges: tuple, generation: int,
            in_shapes: tuple, saved_inputs: tuple | None, debug: bool) -> Any:
    """Record one application of ``prim``: its node, and its output Variable(s) on it.

    ``out`` is what the forward returned (a tuple of arrays for several outputs);
    ``edges``, ``generation`` and ``in_shapes`` are the node's fields (see :class:`Node`),
    ``saved_inputs`` what the vjp reads of the inputs (``None`` when it reads none).
    :func:`apply` and :func:`apply2` both record through here.
    """
    try:  # the usual hit found here, without the call to _interned
        shapes = _SHAPES.get(in_shapes)
    except TypeError:  # a library whose shapes cannot be hashed
        shapes = in_shapes
    node = _init_node(_new(Node), prim, edges, generation, params,
                      shapes if shapes is not None else _interned(in_shapes), xp)
    if saved_inputs is not None:
        node.saved_inputs = saved_inputs
    if prim.nout == 1:
        y = _init_variable(_new(Variable), out, xp, True, node)
        node.out_refs = _ref(y)
        if prim.save_out:
            node.saved_outputs = (out,)
    else:
        y = tuple(_init_variable(_new(Variable), o, xp, True, node, i)
                  for i, o in enumerate(out))
        node.out_refs = [_ref(o) for o in y]
        node.out_meta = tuple((o.shape, o.dtype, o.device) for o in out)
        if prim.save_out:
            node.saved_outputs = tuple(out)
    if debug:
        # From the caller of the op on: this frame, apply's and the two of the op's call
        # (Primitive.__call__ and the op's function, or apply2 and the operator) are left
        # out, and never formatted (each costs a source-line lookup).
        try:
            node.stack = traceback.extract_stack(sys._getframe(4))
        except ValueError:  # fewer frames than that: apply called from the top level
            node.stack = []
        node.public = public_op_name(prim.name)
    return y


def apply(prim: Primitive, args: tuple, params: dict) -> Any:
    """Run ``prim`` on Variables (and Python scalars) and record it when needed."""
    mode = state.mode
    if mode & CAST:
        args = state.cast(prim, args)
    xp = None
    record = False
    arrays = []
    for a in args:
        if type(a) is Variable or isinstance(a, Variable):
            if xp is None:
                xp = a.xp
            arrays.append(a.array)
            if a.requires_grad:
                record = True
        else:
            arrays.append(a)
    out = prim.forward(xp, *arrays, **params)
    if type(out) in LIBRARY_SCALAR_TYPES:
        out = library_scalar_to_array(out)  # NumPy ufuncs turn 0-d arrays into scalars
    nondiff = prim.nondiff
    if record and nondiff is not None:
        record = any(isinstance(a, Variable) and a.requires_grad
                     for i, a in enumerate(args) if i not in nondiff)
    if mode & DEBUG:
        _check_forward(prim, out, xp, args)
    if not (record and mode & RECORD):
        if prim.nout == 1:
            res = _init_variable(_new(Variable), out, xp)
        else:
            res = tuple(_leaf(o, xp) for o in out)
        if mode & FORWARD:
            propagate(prim, args, params, res, None)
        return res

    edges = []
    shapes = []
    gen = 0
    saved = None
    for i, a in enumerate(args):
        if isinstance(a, Variable) and a.requires_grad and (nondiff is None
                                                             or i not in nondiff):
            c = a.creator
            if c is None:
                edges.append(a)
                if prim.save_in:
                    a._kept = True
            else:
                edges.append(c if a.index == 0 else (c, a.index))
                if c.generation > gen:
                    gen = c.generation
            shapes.append(a.array.shape)
        else:
            edges.append(None)
            shapes.append(None)
            if isinstance(a, Variable) and not a.requires_grad and prim.save_in:
                if saved is None:
                    saved = list(args)
                saved[i] = _snapshot(a)
    if prim.save_in:
        saved = args if saved is None else tuple(saved)
    res = _record(prim, params, xp, out, tuple(edges), gen + 1, tuple(shapes), saved,
                  mode & DEBUG)
    if mode & FORWARD:
        propagate(prim, args, params, res, (res if prim.nout == 1 else res[0]).creator)
    return res


# Set by portagrad.ops: maps the Python stack to the public op being computed, so that
# debug mode names ``rsqrt`` rather than the ``divide`` it is built of.
_PUBLIC_NAMER: list[Callable[[], str | None]] = []


def set_public_namer(namer: Callable[[], str | None]) -> None:
    """Register the function that names the public op on the current call stack."""
    _PUBLIC_NAMER[:] = [namer]


def public_op_name(primitive_name: str) -> str:
    """``"rsqrt (divide)"``: the public op being computed and the primitive of the step,
    or the primitive's name alone when they agree or no public op is on the stack."""
    public = _PUBLIC_NAMER[0]() if _PUBLIC_NAMER else None
    if public is None or public == primitive_name:
        return primitive_name
    return f"{public} ({primitive_name})"


def _kinds(xp: Any, arr: Any) -> set[str]:
    """Which of nan, inf and -inf ``arr`` holds (none for integer arrays)."""
    if isinstance(arr, float):
        return set() if arr == arr and arr not in (float("inf"), float("-inf")) else (
            {"nan"} if arr != arr else ({"inf"} if arr > 0 else {"-inf"}))
    if not hasattr(arr, "dtype") or not xp.isdtype(arr.dtype, "real floating"):
        return set()
    if bool(xp.all(xp.isfinite(arr))):
        return set()
    out = set()
    if bool(xp.any(xp.isnan(arr))):
        out.add("nan")
    if bool(xp.any(arr == float("inf"))):
        out.add("inf")
    if bool(xp.any(arr == float("-inf"))):
        out.add("-inf")
    return out


def _check_forward(prim: Primitive, out: Any, xp: Any, args: tuple = ()) -> None:
    """Raise on a NaN or infinity the op created: its inputs held none of that kind (an
    infinity passed through, as the -inf of a mask through logsumexp, is no alarm), or
    a constant input holds NaN."""
    present: set[str] = set()
    for a in args:
        arr = a.array if isinstance(a, Variable) else a
        kinds = _kinds(xp, arr)
        if "nan" in kinds and not (isinstance(a, Variable) and a.creator is not None):
            raise NonFiniteError(f"{public_op_name(prim.name)}: input holds NaN")
        present |= kinds
    outs = out if prim.nout > 1 else (out,)
    for o in outs:
        if xp.isdtype(o.dtype, "complex floating") or not present:
            check_finite(xp, o, f"{public_op_name(prim.name)}: forward result")
        elif _kinds(xp, o) - present:
            check_finite(xp, o, f"{public_op_name(prim.name)}: forward result")


def check_finite(xp: Any, arr: Any, what: str, stack: list | None = None) -> None:
    """Raise :class:`NonFiniteError` if ``arr`` holds a NaN or an infinity."""
    if not xp.isdtype(arr.dtype, ("real floating", "complex floating")):
        return
    bad = ~xp.isfinite(arr)
    if bool(xp.any(bad)):
        n_bad = int(xp.sum(xp.astype(bad, index_dtype(xp))))
        kinds = []
        if bool(xp.any(xp.isnan(arr))):
            kinds.append("nan")
        if bool(xp.any(xp.isinf(arr) & (arr > 0))) if not xp.isdtype(
                arr.dtype, "complex floating") else False:
            kinds.append("inf")
        if bool(xp.any(xp.isinf(arr) & (arr < 0))) if not xp.isdtype(
                arr.dtype, "complex floating") else False:
            kinds.append("-inf")
        size = 1
        for d in arr.shape:
            size *= d
        msg = f"{what} has {n_bad} non-finite value(s) out of {size} ({', '.join(kinds)})"
        if stack:
            msg += "\nThe op was called here:\n" + "".join(traceback.format_list(stack[-6:]))
        raise NonFiniteError(msg)


_NO_PARAMS: dict = {}
_ref = weakref.ref


# Debug checks and autocast take the generic path.
_SLOW_PATH = DEBUG | CAST


def apply2(prim: Primitive, a: Any, b: Any) -> Variable:
    """:func:`apply` for a one-output primitive of two operands and no parameters.

    The arithmetic operators call it with Variables (of any subclass) and Python numbers;
    spelling the two operands out saves the generic loop, which is most of the cost of an
    op on small arrays. Under debug checks and autocast it is :func:`apply`.
    """
    mode = state.mode
    if mode & _SLOW_PATH:
        return apply(prim, (a, b), _NO_PARAMS)
    ta = type(a)
    if ta is float or ta is int:
        aa = a
        ra = False
    else:
        xp = a.xp
        aa = a.array
        ra = a.requires_grad
    tb = type(b)
    if tb is float or tb is int:
        bb = b
        rb = False
    else:
        xp = b.xp
        bb = b.array
        rb = b.requires_grad
    op = prim.binop
    out = op(aa, bb) if op is not None else prim.forward(xp, aa, bb)
    if type(out) in LIBRARY_SCALAR_TYPES:
        out = library_scalar_to_array(out)
    if not ((ra or rb) and mode & RECORD):
        y = _init_variable(_new(Variable), out, xp)
        if mode & FORWARD:
            propagate(prim, (a, b), _NO_PARAMS, y, None)
        return y
    gen = 0
    if ra:
        c = a.creator
        if c is None:
            ea = a
        else:
            ea = c if a.index == 0 else (c, a.index)
            gen = c.generation
        sa = aa.shape
    else:
        ea = sa = None
    if rb:
        c = b.creator
        if c is None:
            eb = b
        else:
            eb = c if b.index == 0 else (c, b.index)
            if c.generation > gen:
                gen = c.generation
        sb = bb.shape
    else:
        eb = sb = None
    saved = None
    if prim.save_in:
        if ea is a:  # a leaf that requires gradients, kept by reference
            a._kept = True
        if eb is b:
            b._kept = True
        saved = (a if ra or ta is float or ta is int else _snapshot(a),
                 b if rb or tb is float or tb is int else _snapshot(b))
    y = _record(prim, _NO_PARAMS, xp, out, (ea, eb), gen + 1, (sa, sb), saved, False)
    if mode & FORWARD:
        propagate(prim, (a, b), _NO_PARAMS, y, y.creator)
    return y
