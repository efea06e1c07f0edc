"""The backward engine: reverse generation order, gradients summed before a node runs.

Iterative (a heap of nodes keyed by generation), so graphs of any depth backpropagate
without recursion. Unless ``retain_graph`` is set, each node drops what it saved as soon
as its vjp has run.

Without ``create_graph``, the gradients of one variable are summed on raw arrays in place:
into the first of them when its vjp made it new for this input alone (a :class:`_Fresh`
gradient), and a primitive whose ``sums_into`` is set (the products) receives, as
``ctx.sum_into``, the gradients its inputs already have that this run owns, and adds its
own into them where it computes them (GEMM with beta = 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush
from typing import Any

from .._errors import GradientError, ShapeError, describe
from ..xp._accumulate import accumulate
from ..xp._namespace import LIBRARY_SCALAR_TYPES, library_scalar_to_array
from ._mode import set_grad_enabled, state
from ._node import Node, check_finite
from ._variable import _HOOKED, Variable, _Fresh, _leaf

__all__ = ["backward", "grad"]


def _seed(y: Variable, g: Any, op: str) -> Variable:
    if g is None:
        if y.array.ndim != 0 and y.size != 1:
            raise GradientError(
                f"{op}: expected a scalar output or a seed gradient, got an output of shape "
                f"{y.shape}. Pass grad= (backward) or grad_outputs= (grad), or reduce the "
                f"output first, e.g. y.sum()."
            )
        return _leaf(y.xp.ones_like(y.array), y.xp)
    if not isinstance(g, Variable):
        g = _leaf(g, y.xp)
    if tuple(g.shape) != tuple(y.shape):
        raise ShapeError(
            f"{op}: expected a seed gradient of shape {y.shape}, got {describe(g.array)}"
        )
    return g


def _run(roots: Sequence[tuple[Variable, Variable]], create_graph: bool,
         retain_graph: bool, targets: dict[int, Variable] | None) -> dict[int, Variable]:
    """Propagate seeds from roots. Returns the gradients of leaves (by id).

    With ``targets`` (``grad``), only paths that reach a target are followed and results
    are collected for the targets only; otherwise every leaf requiring gradients
    accumulates into ``.grad_var``.
    """
    leaf_grads: dict[int, Variable] = {}
    inner: dict[int, tuple[Node, int]] = {}
    needed: set[int] | None = None
    if targets is not None:
        for t in targets.values():
            if t.creator is not None:
                inner[id(t.creator)] = (t.creator, t.index)
        needed = _prune([r for r, _ in roots], targets)

    buffers: dict[Node, list] = {}
    heap: list = []
    counter = 0
    pending = _count_hooked_edges(roots) if targets is None and _HOOKED else None

    # Without create_graph, sums are done on raw arrays, in place into arrays this run
    # allocated itself or that a vjp made fresh for it ("owned": never handed to a vjp or
    # to the user yet). An id is added only while its Variable is stored in a buffer or a
    # leaf's gradient, and dropped when the buffer goes to a vjp.
    owned: set[int] = set()
    # Forward-mode tangents ride on Variables: with a level open, sums go through ops.
    symbolic = create_graph or bool(state.fwd)
    if symbolic:
        def acc(old: Variable, g: Variable) -> Variable:
            return old + g

        def keep(g: Variable) -> Variable:
            if type(g) is _Fresh:
                g.__class__ = Variable
            return g
    else:
        def acc(old: Variable, g: Variable) -> Variable:
            a, b = old.array, g.array
            if id(old) in owned and (a.dtype is b.dtype or a.dtype == b.dtype):
                # (A term of another dtype promotes: summed out of place below.)
                old.array = _sum_into(old.xp, a, b)
                return old
            # old is replaced: its id must not outlive it in the owned set (the id of a
            # later Variable could be the same).
            owned.discard(id(old))
            if type(g) is _Fresh:
                g.__class__ = Variable
                if a.shape == b.shape and a.dtype == b.dtype:
                    # The sum goes into the new term's own array (addition commutes).
                    g.array = _sum_into(g.xp, b, a)
                    owned.add(id(g))
                    return g
            total = a + b
            if type(total) in LIBRARY_SCALAR_TYPES:
                total = library_scalar_to_array(total)  # NumPy sums 0-d arrays to scalars
            new = _leaf(total, old.xp)
            owned.add(id(new))
            return new

        def keep(g: Variable) -> Variable:
            # The first gradient of a variable, as it is stored: a fresh one is this run's
            # to sum the others into.
            if type(g) is _Fresh:
                g.__class__ = Variable
                owned.add(id(g))
            return g

    def add_leaf(v: Variable, g: Variable) -> None:
        if targets is not None:
            if id(v) in targets:
                old = leaf_grads.get(id(v))
                leaf_grads[id(v)] = keep(g) if old is None else acc(old, g)
            return
        old = v.grad_var
        v.grad_var = keep(g) if old is None else acc(old, g)

    def sum_targets(edges: tuple) -> list:
        # Per input, the gradient it has so far when this run owns it (a vjp may add
        # into it), else None.
        out = []
        for e in edges:
            t = None
            if e is not None:
                if type(e) is tuple:
                    pb = buffers.get(e[0])
                    if pb is not None:
                        t = pb[e[1]]
                elif targets is None:
                    t = e.grad_var
                elif id(e) in targets:
                    t = leaf_grads.get(id(e))
                if t is not None and id(t) not in owned:
                    t = None
            out.append(t)
        return out

    for y, g in roots:
        c = y.creator
        if c is None:
            if y.requires_grad:
                add_leaf(y, g)
                if pending is not None:
                    _arrive(pending, y, owned)
            continue
        if needed is not None and id(c) not in needed:
            continue
        buf = buffers.get(c)
        if buf is None:
            buf = buffers[c] = [None] * c.prim.nout
            heappush(heap, (-c.generation, counter, c))
            counter += 1
        i = y.index
        buf[i] = g if buf[i] is None else acc(buf[i], g)

    debug = state.debug
    inner_grads: dict[tuple[int, int], Variable] = {}
    with set_grad_enabled(create_graph):
        while heap:
            node = heappop(heap)[2]
            gys = buffers.pop(node)
            if owned:
                for gy in gys:
                    owned.discard(id(gy))
            if inner and id(node) in inner:
                for idx, gy in enumerate(gys):
                    if gy is not None:
                        inner_grads[(id(node), idx)] = gy
            edges = node.edges
            if not edges:
                node._freed_error("inputs and outputs")
            if needed is not None and not any(
                (id(e[0]) in needed) if type(e) is tuple else (id(e) in targets)
                for e in edges if e is not None
            ):
                continue
            prim = node.prim
            vjp = prim.vjp
            if vjp is None:
                raise GradientError(f"{prim.name}: no vjp is defined for this primitive")
            if prim.nout == 1:
                gy_arg = gys[0]
            else:
                gy_arg = tuple(
                    g if g is not None
                    else _leaf(node.xp.zeros(s, dtype=d, device=dev), node.xp)
                    for g, (s, d, dev) in zip(gys, node.out_meta)  # set for nout > 1
                )
            into = None
            if prim.sums_into and not symbolic:
                into = node.sum_into = sum_targets(edges)
            try:
                if debug:
                    # Ops inside a vjp are checked as the gradient they produce, below, so
                    # the report names this node and where it was created.
                    state.debug = False
                    try:
                        gxs = vjp(node, gy_arg)
                    finally:
                        state.debug = True
                else:
                    gxs = vjp(node, gy_arg)
            finally:
                if into is not None:
                    node.sum_into = None
            if type(gxs) is not tuple and type(gxs) is not list:
                gxs = (gxs,)
            shapes = node.in_shapes if prim.elementwise else None
            i = -1
            for e, gx in zip(edges, gxs):
                i += 1
                if e is None:
                    continue
                if gx is None:
                    if pending is not None and type(e) is not tuple:
                        _arrive(pending, e, owned)
                    continue
                if shapes is not None and gx.array.shape != shapes[i]:
                    gx = _sum_to()(gx, tuple(shapes[i]))
                if debug:
                    check_finite(node.xp, gx.array,
                                 f"{prim.name}: backward gradient of input {i}",
                                 getattr(node, "stack", None))
                if into is not None and gx is into[i]:
                    # The vjp added this gradient into the one the input had: nothing to
                    # sum (the same Variable can reach an input twice otherwise, as from
                    # x + x, and is then summed as usual).
                    if pending is not None and type(e) is not tuple:
                        _arrive(pending, e, owned)
                    continue
                if type(e) is tuple:
                    parent, idx = e
                    if needed is not None and id(parent) not in needed:
                        continue
                    pbuf = buffers.get(parent)
                    if pbuf is None:
                        pbuf = buffers[parent] = [None] * parent.prim.nout
                        heappush(heap, (-parent.generation, counter, parent))
                        counter += 1
                    old = pbuf[idx]
                    if old is not None:
                        pbuf[idx] = acc(old, gx)
                    else:
                        pbuf[idx] = gx if type(gx) is not _Fresh else keep(gx)
                else:
                    if targets is None and not symbolic:
                        # add_leaf and acc spelled out: a leaf such as a weight takes one
                        # gradient per use, so this runs as often as the op loop itself.
                        old = e.grad_var
                        if old is None:
                            e.grad_var = gx if type(gx) is not _Fresh else keep(gx)
                        elif id(old) in owned and old.array.dtype is gx.array.dtype:
                            a = old.array
                            if a.ndim > 1:
                                a = accumulate(old.xp, a, gx.array)
                            else:
                                a += gx.array
                            old.array = a
                        else:
                            e.grad_var = acc(old, gx)
                    else:
                        add_leaf(e, gx)
                    if pending is not None:
                        _arrive(pending, e, owned)
            if not retain_graph:
                # Node.release, inlined (once per node).
                node.saved_inputs = None
                node.saved_outputs = None
                node.out_tangents = None
                node.edges = ()
        if pending:
            # Leaves some of whose edges received no gradient at all.
            for count_var in list(pending.values()):
                _fire(count_var[1])
    if targets is not None:
        for key, t in targets.items():
            if t.creator is not None:
                g = inner_grads.get((id(t.creator), t.index))
                if g is not None:
                    leaf_grads[key] = g
    return leaf_grads


def _sum_into(xp: Any, total: Any, term: Any) -> Any:
    """``total + term`` into ``total``'s memory (an owned running sum)."""
    if total.ndim > 1:  # layouts (and so accumulate's choice) start at 2-d
        return accumulate(xp, total, term)
    total += term  # rebinds for immutable libraries (JAX), in place otherwise
    return total


def _count_hooked_edges(roots: Sequence[tuple[Variable, Variable]]) -> dict[int, list]:
    """For each hooked leaf, how many edges into it backward will traverse."""
    pending: dict[int, list] = {}
    seen: set[int] = set()
    stack = []
    for y, _ in roots:
        if y.creator is None:
            if y._hooks:
                pending.setdefault(id(y), [0, y])[0] += 1
        elif id(y.creator) not in seen:
            seen.add(id(y.creator))
            stack.append(y.creator)
    while stack:
        node = stack.pop()
        for e in node.edges:
            if e is None:
                continue
            if type(e) is tuple:
                if id(e[0]) not in seen:
                    seen.add(id(e[0]))
                    stack.append(e[0])
            elif e._hooks:
                pending.setdefault(id(e), [0, e])[0] += 1
    return pending


def _arrive(pending: dict[int, list], leaf: Variable, owned: set[int]) -> None:
    entry = pending.get(id(leaf))
    if entry is None:
        return
    entry[0] -= 1
    if entry[0] == 0:
        del pending[id(leaf)]
        # Complete: nothing more is summed into it, and a hook may replace it (whose id
        # could then come back as another array's).
        g = leaf.grad_var
        if g is not None:
            owned.discard(id(g))
        _fire(leaf)


def _fire(leaf: Variable) -> None:
    for hook in list(leaf._hooks or ()):
        hook(leaf)


def _sum_to() -> Any:
    from ..ops.std.shape import sum_to

    return sum_to


def _prune(outputs: list[Variable], targets: dict[int, Variable]) -> set[int]:
    """Ids of nodes from which some target can be reached (iterative post-order DFS)."""
    target_leaves = {k for k, t in targets.items() if t.creator is None}
    target_nodes = {id(t.creator) for t in targets.values() if t.creator is not None}
    reach: dict[int, bool] = {}
    stack: list[tuple[Node, bool]] = []
    for y in outputs:
        if y.creator is not None:
            stack.append((y.creator, False))
    while stack:
        node, expanded = stack.pop()
        nid = id(node)
        if nid in reach and not expanded:
            continue
        if not expanded:
            if not node.edges:
                # Released by an earlier backward: where it led is no longer known.
                node._freed_error("inputs and outputs")
            reach[nid] = False
            stack.append((node, True))
            for e in node.edges:
                if type(e) is tuple and id(e[0]) not in reach:
                    stack.append((e[0], False))
            continue
        ok = nid in target_nodes
        for e in node.edges:
            if e is None:
                continue
            if type(e) is tuple:
                if reach.get(id(e[0]), False):
                    ok = True
            elif id(e) in target_leaves:
                ok = True
        reach[nid] = ok
    return {k for k, v in reach.items() if v}


def backward(outputs: Sequence[Variable], grad_outputs: Sequence[Any] | None = None,
             retain_graph: bool = False, create_graph: bool = False) -> None:
    """Accumulate d(outputs)/d(leaf) into every leaf's ``grad_var``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0]))
    >>> pg.backward([(x * x).sum()])
    >>> x.grad
    array([2., 4.])
    """
    roots = []
    for i, y in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        roots.append((y, _seed(y, g, "backward")))
    _run(roots, create_graph, retain_graph or create_graph, None)


def grad(outputs: Variable | Sequence[Variable], inputs: Variable | Sequence[Variable],
         grad_outputs: Any = None, create_graph: bool = False,
         allow_unused: bool = False, retain_graph: bool | None = None) -> tuple[Variable, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    Only the part of the graph between the two is traversed. With ``create_graph=True`` the
    results are themselves differentiable, for Hessian-vector products, gradient penalties
    and meta-learning.

    Parameters
    ----------
    outputs, inputs
        A Variable or a sequence of Variables.
    grad_outputs
        Seed gradients for non-scalar outputs (arrays or Variables), one per output.
    create_graph
        Record the computation of the gradients.
    allow_unused
        Return ``None`` for inputs the outputs do not depend on instead of raising.
    retain_graph
        Keep the graph for another backward; defaults to ``create_graph``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array(2.0))
    >>> (gx,) = pg.grad(x ** 3, x, create_graph=True)
    >>> (ggx,) = pg.grad(gx, x)
    >>> float(gx.array), float(ggx.array)
    (12.0, 12.0)
    """
    outs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    ins = [inputs] if isinstance(inputs, Variable) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Variable) or hasattr(
            grad_outputs, "shape"):
        gos = [grad_outputs] * len(outs) if grad_outputs is None else [grad_outputs]
    else:
        gos = list(grad_outputs)
    if len(gos) != len(outs):
        raise ShapeError(
            f"grad(grad_outputs): expected {len(outs)} seed gradient(s), got {len(gos)}"
        )
    for i, x in enumerate(ins):
        if not isinstance(x, Variable):
            raise TypeError(f"grad(inputs[{i}]): expected a Variable, got {describe(x)}")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [(y, _seed(y, g, "grad")) for y, g in zip(outs, gos)]
    targets = {id(x): x for x in ins}
    found = _run(roots, create_graph, retain_graph, targets)
    result = []
    for i, x in enumerate(ins):
        g = found.get(id(x))
        if g is None:
            if not allow_unused:
                raise GradientError(
                    f"grad(inputs[{i}]): expected an input the outputs depend on, got one "
                    f"that is not in their graph{_why_unused(x)}. Pass allow_unused=True to "
                    f"get None for it."
                )
        elif not create_graph and g.creator is not None:
            tangents = getattr(g, "_tangents", None)
            g = g.detach()
            if tangents:
                g._tangents = tangents
        result.append(g)
    return tuple(result)


def _why_unused(x: Variable) -> str:
    if not x.requires_grad:
        return " (it does not require gradients)"
    return ""
