"""Gradient hooks on Variables (``register_hook``) and retained gradients of non-leaves.

A leaf's hooks live on the leaf; a non-leaf's on the node that created it, keyed by its
output index, as its gradient is summed there. Backward calls them with the complete
gradient of this pass (a Variable: recorded under ``create_graph``), in the order they
were registered; a hook may return a replacement. ``retain_grad`` is a hook of its own
that always runs after the others, so the retained gradient is the one that flows on.
"""

from __future__ import annotations

import weakref
from typing import Any

from .._errors import GradientError, ShapeError, describe
from ._variable import Variable, _leaf

__all__ = ["register_hook", "retain_grad", "apply_hooks", "HOOKED_LEAVES", "HOOKED_NODES"]

# Leaves and nodes with gradient hooks (by id: a WeakSet would compare Variables with ==),
# so that backward pays for hooks only when some exist.
HOOKED_LEAVES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
HOOKED_NODES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class _Retain:
    """The hook ``retain_grad`` installs: sums the gradient into ``var.grad``."""

    __slots__ = ("var",)

    def __init__(self, var: Variable) -> None:
        self.var = weakref.ref(var)


class RemovableHandle:
    """Removes one hook (``handle.remove()``; removing twice does nothing).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.ones(2))
    >>> h = x.register_hook(lambda g: g * 0)
    >>> h.remove()
    >>> (x * 3).sum().backward()
    >>> x.grad
    array([3., 3.])
    """

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        """Unregister the hook."""
        for i, h in enumerate(self._hooks):
            if h is self._hook:
                del self._hooks[i]
                return

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _hook_list(v: Variable) -> list:
    node = v.creator
    if node is None:
        hooks = getattr(v, "_grad_hooks", None)
        if hooks is None:
            hooks = v._grad_hooks = []
        HOOKED_LEAVES[id(v)] = v
        return hooks
    table = getattr(node, "out_hooks", None)
    if table is None:
        table = node.out_hooks = {}
    HOOKED_NODES[id(node)] = node
    return table.setdefault(v.index, [])


def register_hook(v: Variable, hook: Any) -> RemovableHandle:
    """``hook(grad)`` is called with ``v``'s gradient during backward (see Variable)."""
    if not callable(hook):
        raise TypeError(f"register_hook(hook): expected a callable, got {describe(hook)}")
    if not v.requires_grad:
        raise GradientError("register_hook: expected a Variable that requires gradients, "
                            "got one with requires_grad=False (no gradient will reach it)")
    hooks = _hook_list(v)
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def retain_grad(v: Variable) -> None:
    """Keep ``v``'s gradient in ``v.grad`` during backward (a non-leaf; leaves always do)."""
    if not v.requires_grad:
        raise GradientError("retain_grad: expected a Variable that requires gradients, got "
                            "one with requires_grad=False")
    if v.creator is None:
        return
    hooks = _hook_list(v)
    if not any(type(h) is _Retain and h.var() is v for h in hooks):
        hooks.append(_Retain(v))


def retains_grad(v: Variable) -> bool:
    """Whether ``retain_grad`` was called on this non-leaf."""
    if v.creator is None:
        return False
    table = getattr(v.creator, "out_hooks", None) or {}
    return any(type(h) is _Retain and h.var() is v for h in table.get(v.index, ()))


def _as_gradient(result: Any, like: Variable) -> Variable:
    if not isinstance(result, Variable):
        result = _leaf(result, like.xp)
    if tuple(result.shape) != tuple(like.shape):
        raise ShapeError(f"register_hook: a hook returned a gradient of shape "
                         f"{tuple(result.shape)} for a Variable of shape {like.shape}; "
                         f"expected the same shape (or None to keep the gradient)")
    return result


def apply_hooks(hooks: list, g: Variable, symbolic: bool) -> Variable:
    """Run ``hooks`` on the gradient ``g``; retained gradients are stored last."""
    retains = []
    for h in list(hooks):
        if type(h) is _Retain:
            retains.append(h)
            continue
        out = h(g)
        if out is not None:
            g = _as_gradient(out, g)
    for r in retains:
        v = r.var()
        if v is None:
            continue
        old = v.grad_var
        if old is None:
            v.grad_var = g
        elif symbolic:
            v.grad_var = old + g
        else:
            v.grad_var = _leaf(old.array + g.array, g.xp)
    return g
