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

from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from operator import iadd
from typing import Any

from .._errors import GradientError, ShapeError, describe
from ..xp._accumulate import accumulate
from ..xp._namespace import LIBRARY_SCALAR_TYPES, library_scalar_to_array
from ._hooks import HOOKED_LEAVES, HOOKED_NODES, apply_hooks
from ._mode import set_debug, set_grad_enabled, state
from ._node import Node, check_finite, edge_parent
from ._shapes import sum_to
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
    run = _Run(roots, create_graph, targets)
    with set_grad_enabled(create_graph):
        run.backprop(retain_graph)
        if run.pending:
            # Leaves some of whose edges received no gradient at all.
            for count_var in list(run.pending.values()):
                run.complete(count_var[1])
        return run.results()


class _Run:
    """One backward pass: the gradients waiting for each node, and where the results go.

    Without create_graph, sums are done on raw arrays, in place into arrays this run
    allocated itself or that a vjp made fresh for it (``owned``: never handed to a vjp or
    to the user yet). An id is added only while its Variable is stored in a buffer or a
    leaf's gradient, and dropped when the buffer goes to a vjp.
    """

    __slots__ = ("targets", "leaf_grads", "inner", "inner_grads", "needed", "through",
                 "buffers", "heap", "counter", "pending", "owned", "symbolic", "acc", "keep",
                 "intercept", "parts", "real_dtype")

    def __init__(self, roots: Sequence[tuple[Variable, Variable]], create_graph: bool,
                 targets: dict[int, Variable] | None) -> None:
        self.targets = targets
        self.leaf_grads: dict[int, Variable] = {}
        # grad() of a target that is not a leaf: its creator's gradient is the result.
        self.inner: dict[int, tuple[Node, int]] = {}
        self.inner_grads: dict[tuple[int, int], Variable] = {}
        # grad(): the nodes that lead to a target, and those whose vjp does (see _prune).
        self.needed: set[int] | None = None
        self.through: set[int] = set()
        if targets is not None:
            for t in targets.values():
                if t.creator is not None:
                    self.inner[id(t.creator)] = (t.creator, t.index)
            self.needed, self.through = _prune([r for r, _ in roots], targets)
        self.buffers: dict[Node, Any] = {}  # a Variable (one output) or a list
        self.heap: list = []
        self.counter = 0
        # Leaves with gradient hooks: backward sums their gradients apart (``parts``) and
        # hands the total to the hooks before it reaches ``grad``.
        self.intercept = ({k for k, v in list(HOOKED_LEAVES.items()) if v._grad_hooks}
                          if targets is None and HOOKED_LEAVES else None) or None
        self.parts: dict[int, Variable] = {}
        # The last gradient dtype found real (see Primitive.vjp_real).
        self.real_dtype: Any = None
        self.pending = (_count_hooked_edges(roots, self.intercept or ())
                        if targets is None and (_HOOKED or self.intercept) else None)
        self.owned: set[int] = set()
        # Forward-mode tangents ride on Variables: with a level open, sums go through ops.
        self.symbolic = create_graph or bool(state.fwd)
        self.acc, self.keep = _sums_by_ops() if self.symbolic else _sums_in_place(self.owned)
        self._seed(roots)

    def _seed(self, roots: Sequence[tuple[Variable, Variable]]) -> None:
        buffers, needed = self.buffers, self.needed
        for y, g in roots:
            c = y.creator
            if c is None:
                if y.requires_grad:
                    self.add_leaf(y, g)
                    if self.pending is not None:
                        self.arrive(y)
                continue
            if needed is not None and id(c) not in needed:
                continue
            buf = buffers.get(c)
            if buf is None:
                heappush(self.heap, (-c.generation, self.counter, c))
                self.counter += 1
            if c.prim.nout == 1:
                buffers[c] = g if buf is None else self.acc(buf, g)
                continue
            if buf is None:
                buf = buffers[c] = [None] * c.prim.nout
            i = y.index
            buf[i] = g if buf[i] is None else self.acc(buf[i], g)

    def add_leaf(self, v: Variable, g: Variable) -> None:
        """Sum ``g`` into the gradient of the leaf ``v`` (its result, for ``grad``)."""
        targets = self.targets
        if self.intercept is not None and id(v) in self.intercept:
            self.add_part(v, g)
        elif targets is None:
            old = v.grad_var
            v.grad_var = self.keep(g) if old is None else self.acc(old, g)
        elif id(v) in targets:
            leaf_grads = self.leaf_grads
            old = leaf_grads.get(id(v))
            leaf_grads[id(v)] = self.keep(g) if old is None else self.acc(old, g)

    def add_part(self, v: Variable, g: Variable) -> None:
        """Sum ``g`` into this pass's gradient of the hooked leaf ``v``."""
        old = self.parts.get(id(v))
        self.parts[id(v)] = self.keep(g) if old is None else self.acc(old, g)

    def arrive(self, leaf: Variable) -> None:
        """One more edge into a hooked leaf is done; complete it after the last."""
        pending = self.pending
        entry = pending.get(id(leaf))  # type: ignore[union-attr]
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            del pending[id(leaf)]  # type: ignore[union-attr]
            self.complete(leaf)

    def complete(self, leaf: Variable) -> None:
        """Every gradient of ``leaf`` is in: run its gradient hooks on their total, add
        the result to ``grad``, then call its post-accumulate hooks."""
        part = self.parts.pop(id(leaf), None)
        owned = self.owned
        if part is not None:
            owned.discard(id(part))  # handed to user code from here on
            part = apply_hooks(leaf._grad_hooks, part, self.symbolic)
            old = leaf.grad_var
            leaf.grad_var = part if old is None else self.acc(old, part)
        # Complete: nothing more is summed into it, and a hook may replace it (whose id
        # could then come back as another array's).
        g = leaf.grad_var
        if g is not None:
            owned.discard(id(g))
        if leaf._hooks:
            _fire(leaf)

    def backprop(self, retain_graph: bool) -> None:
        """Run every reached node's vjp, latest first, once all its gradients are in."""
        buffers, heap, counter, owned = self.buffers, self.heap, self.counter, self.owned
        acc, keep, pending, needed = self.acc, self.keep, self.pending, self.needed
        inner, through, symbolic = self.inner, self.through, self.symbolic
        # add_leaf and acc spelled out below (no leaf has gradient hooks): a weight takes
        # one gradient per use, so that runs as often as the loop over edges itself.
        leaves_in_place = self.targets is None and not symbolic and self.intercept is None
        debug, hooked_nodes = state.debug, HOOKED_NODES or None
        while heap:
            node = heappop(heap)[2]
            gys = buffers.pop(node)  # see self.buffers
            prim = node.prim
            single = prim.nout == 1
            if owned:  # discard: no tuple made for the one gradient of most nodes
                owned.discard(id(gys)) if single else owned.difference_update(map(id, gys))
            if (hooked_nodes is not None and id(node) in hooked_nodes) or (
                    inner and id(node) in inner):
                gys = self._intercept(node, gys, single, hooked_nodes)
            edges = node.edges
            if not edges:
                node._freed_error("inputs and outputs")
            if needed is not None and id(node) not in through:
                continue  # it only created a target: its gradient is kept, its vjp not run
            vjp = prim.vjp
            gy_arg = gys if single else _zeros_for_missing(node, gys)
            if debug or vjp is None or (prim.sums_into and not symbolic):
                gxs, into = self._call_vjp(node, gy_arg, debug)
            elif (not symbolic and single and vjp is prim.vjp_plain
                  and (gys.array.dtype is self.real_dtype or self._real(gys))):
                gxs, into = prim.vjp_real(node, gys), None
            else:
                gxs, into = vjp(node, gy_arg), None
            if type(gxs) is not tuple and type(gxs) is not list:
                gxs = (gxs,)
            shapes = node.in_shapes if prim.elementwise else None
            i = -1
            for e, gx in zip(edges, gxs):
                i += 1
                if e is None:
                    continue
                if gx is not None:
                    if shapes is not None and gx.array.shape != shapes[i]:
                        gx = sum_to(gx, shape=tuple(shapes[i]))
                    if debug:
                        _check_gradient(node, gx, i)
                    te = type(e)
                    if into is not None and gx is into[i]:
                        pass  # the vjp summed it into the input's gradient (see _call_vjp)
                    elif te is Node or te is tuple:
                        parent = e if te is Node else e[0]
                        if needed is not None and id(parent) not in needed:
                            continue
                        pbuf = buffers.get(parent)
                        if pbuf is None:
                            heappush(heap, (-parent.generation, counter, parent))
                            counter += 1
                        if parent.prim.nout == 1:
                            buffers[parent] = (gx if type(gx) is not _Fresh else keep(gx)) \
                                if pbuf is None else acc(pbuf, gx)
                        else:
                            self._into_output(parent, pbuf, e[1] if te is tuple else 0, gx)
                        continue
                    elif leaves_in_place:
                        old = e.grad_var
                        if old is None:
                            e.grad_var = gx if type(gx) is not _Fresh else keep(gx)
                        elif id(old) in owned and old.array.dtype is gx.array.dtype:
                            a = old.array  # as _sum_into, inlined
                            old.array = (accumulate(old.xp, a, gx.array) if a.ndim > 1
                                         else iadd(a, gx.array))
                        else:
                            e.grad_var = acc(old, gx)
                    else:
                        self.add_leaf(e, gx)
                if pending is not None and type(e) is not tuple and type(e) is not Node:
                    self.arrive(e)
            if not retain_graph:  # Node.release, inlined (once per node)
                node.saved_inputs = node.saved_outputs = node.out_tangents = None
                node.edges = ()

    def _real(self, g: Variable) -> bool:
        """Whether ``g`` is not complex (its dtype then kept as ``real_dtype``)."""
        dt = g.array.dtype
        if g.xp.isdtype(dt, "complex floating"):
            return False
        self.real_dtype = dt
        return True

    def _into_output(self, parent: Node, buf: list | None, idx: int, gx: Variable) -> None:
        """Sum ``gx`` into what output ``idx`` of ``parent``, a node of several outputs, has
        received (``buf``, None before the first)."""
        if buf is None:
            buf = self.buffers[parent] = [None] * parent.prim.nout
        old = buf[idx]
        buf[idx] = self.keep(gx) if old is None else self.acc(old, gx)

    def _intercept(self, node: Node, gys: Any, single: bool, hooked_nodes: Any) -> Any:
        """The gradients of ``node`` (as backprop holds them) after its outputs' gradient
        hooks, kept first where ``grad`` asked for an output of ``node``."""
        listed = [gys] if single else gys
        if hooked_nodes is not None and id(node) in hooked_nodes:
            _node_hooks(node, listed, self.symbolic)
        if self.inner and id(node) in self.inner:
            self._keep_inner(node, listed)
        return listed[0] if single else listed

    def _call_vjp(self, node: Node, gy: Any, debug: bool) -> tuple[Any, list | None]:
        """The vjp's gradients for a node that takes ``ctx.sum_into`` or runs under debug
        checks, and what it was handed to sum into (``None`` if nothing).

        A gradient the vjp returns that is the one it was handed for that input has had
        its own added into it: there is nothing left to sum. (Otherwise the same Variable
        can reach an input twice, as from x + x, and is summed as usual.)
        """
        if node.prim.vjp is None:
            raise GradientError(f"{node.prim.name}: no vjp is defined for this primitive")
        into = None
        if node.prim.sums_into and not self.symbolic:
            into = node.sum_into = self._sum_targets(node.edges)
        try:
            if not debug:
                return node.prim.vjp(node, gy), into
            # Ops inside a vjp are checked as the gradient they produce, by the caller,
            # so the report names this node and where it was created.
            set_debug(False)
            try:
                return node.prim.vjp(node, gy), into
            finally:
                set_debug(True)
        finally:
            if into is not None:
                node.sum_into = None

    def _sum_targets(self, edges: tuple) -> list:
        """Per input, the gradient it has so far when this run owns it (a vjp may add into
        it), else None."""
        buffers, targets, owned = self.buffers, self.targets, self.owned
        out = []
        for e in edges:
            t = None
            if e is not None:
                p = edge_parent(e)
                if p is not None:
                    pb = buffers.get(p[0])
                    if pb is not None:
                        t = pb if p[0].prim.nout == 1 else pb[p[1]]
                elif targets is None:
                    t = e.grad_var
                elif id(e) in targets:
                    t = self.leaf_grads.get(id(e))
                if t is not None and id(t) not in owned:
                    t = None
            out.append(t)
        return out

    def _keep_inner(self, node: Node, gys: list) -> None:
        for idx, gy in enumerate(gys):
            if gy is not None:
                self.inner_grads[(id(node), idx)] = gy

    def results(self) -> dict[int, Variable]:
        """The gradients of the targets (by id), or of every leaf reached."""
        leaf_grads = self.leaf_grads
        if self.targets is not None:
            for key, t in self.targets.items():
                if t.creator is not None:
                    g = self.inner_grads.get((id(t.creator), t.index))
                    if g is not None:
                        leaf_grads[key] = g
                elif key in leaf_grads and getattr(t, "_grad_hooks", None):
                    # A leaf's hooks see its gradient in grad() too, as in PyTorch.
                    self.owned.discard(id(leaf_grads[key]))
                    leaf_grads[key] = apply_hooks(t._grad_hooks, leaf_grads[key],
                                                  self.symbolic)
        return leaf_grads


def _sums_by_ops() -> tuple[Callable, Callable]:
    """``acc`` and ``keep`` when sums are recorded (create_graph) or carry tangents."""

    def acc(old: Variable, g: Variable) -> Variable:
        return old + g

    def keep(g: Variable) -> Variable:
        if type(g) is _Fresh:
            g.__class__ = Variable
        return g

    return acc, keep


def _sums_in_place(owned: set[int]) -> tuple[Callable, Callable]:
    """``acc(old, g)``, the sum of two gradients of one variable, into an array of
    ``owned`` where there is one; ``keep(g)``, the first gradient, as it is stored."""

    def acc(old: Variable, g: Variable) -> Variable:
        a, b = old.array, g.array
        if id(old) in owned and (a.dtype is b.dtype or a.dtype == b.dtype):
            # (A term of another dtype promotes: summed out of place below.)
            old.array = _sum_into(old.xp, a, b)
            return old
        # old is replaced: its id must not outlive it in the owned set (the id of a later
        # Variable could be the same).
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
        # A fresh gradient is this run's to sum the others into.
        if type(g) is _Fresh:
            g.__class__ = Variable
            owned.add(id(g))
        return g

    return acc, keep


def _zeros_for_missing(node: Node, gys: list) -> tuple:
    """The upstream gradients of a node of several outputs, zeros where none came."""
    xp = node.xp
    return tuple(g if g is not None else _leaf(xp.zeros(s, dtype=d, device=dev), xp)
                 for g, (s, d, dev) in zip(gys, node.out_meta))  # set for nout > 1


def _check_gradient(node: Node, gx: Variable, i: int) -> None:
    check_finite(node.xp, gx.array,
                 f"{getattr(node, 'public', node.prim.name)}: backward gradient of input {i}",
                 getattr(node, "stack", None))


def _sum_into(xp: Any, total: Any, term: Any) -> Any:
    """``total + term`` into ``total``'s memory (an owned running sum)."""
    if total.ndim > 1:  # layouts (and so accumulate's choice) start at 2-d
        return accumulate(xp, total, term)
    total += term  # rebinds for immutable libraries (JAX), in place otherwise
    return total


def _node_hooks(node: Node, gys: list, symbolic: bool) -> None:
    """Run the gradient hooks of ``node``'s outputs on their summed gradients (in place
    in ``gys``)."""
    for idx, hooks in node.out_hooks.items():
        if hooks and gys[idx] is not None:
            gys[idx] = apply_hooks(hooks, gys[idx], symbolic)


def _count_hooked_edges(roots: Sequence[tuple[Variable, Variable]],
                        intercept: Any) -> dict[int, list]:
    """For each hooked leaf (post-accumulate hooks, or gradient hooks when its id is in
    ``intercept``), how many edges into it backward will traverse."""
    pending: dict[int, list] = {}
    seen: set[int] = set()
    stack = []
    for y, _ in roots:
        if y.creator is None:
            if y._hooks or id(y) in intercept:
                pending.setdefault(id(y), [0, y])[0] += 1
        elif id(y.creator) not in seen:
            seen.add(id(y.creator))
            stack.append(y.creator)
    while stack:
        node = stack.pop()
        for e in node.edges:
            if e is None:
                continue
            p = edge_parent(e)
            if p is not None:
                if id(p[0]) not in seen:
                    seen.add(id(p[0]))
                    stack.append(p[0])
            elif e._hooks or id(e) in intercept:
                pending.setdefault(id(e), [0, e])[0] += 1
    return pending


def _fire(leaf: Variable) -> None:
    for hook in list(leaf._hooks or ()):
        hook(leaf)


def _prune(outputs: list[Variable], targets: dict[int, Variable]) -> tuple[set[int], set[int]]:
    """Ids of the nodes from which some target can be reached, and of those of them
    through whose inputs one can (not only by having created a target): iterative
    post-order DFS."""
    target_leaves = {k for k, t in targets.items() if t.creator is None}
    target_nodes = {id(t.creator) for t in targets.values() if t.creator is not None}
    reach: dict[int, bool] = {}
    through: set[int] = set()
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
                p = edge_parent(e)
                if p is not None and id(p[0]) not in reach:
                    stack.append((p[0], False))
            continue
        via = False
        for e in node.edges:
            if e is None:
                continue
            p = edge_parent(e)
            if p is not None:
                if reach.get(id(p[0]), False):
                    via = True
            elif id(e) in target_leaves:
                via = True
        if via:
            through.add(nid)
        reach[nid] = via or nid in target_nodes
    return {k for k, v in reach.items() if v}, through


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
