"""Recomputation instead of memory: ``forget`` keeps only a function's inputs and runs it
again in backward (Chainer's ``forget``, PyTorch's activation checkpointing).

``forget`` is a primitive whose backward reruns the function with recording on, so its
derivatives of every order are the function's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import PortagradTypeError
from ...tape import primitive
from ...tape._variable import Variable
from .._core import var, wrap

__all__ = ["forget"]

_FORGET: dict[int, Any] = {}


def _forget_primitive(nout: int) -> Any:
    prim = _FORGET.get(nout)
    if prim is not None:
        return prim

    @primitive(f"forget{nout}", saves="inputs", nout=nout)
    def _forget(xp: Any, *arrays: Any, func: Callable[..., Any], ready: tuple) -> Any:
        # ``ready`` holds the outputs forget computed without recording: no second run.
        return ready if nout > 1 else ready[0]

    @_forget.defvjp
    def _(ctx: Any, gy: Any) -> tuple:
        from ...tape import enable_grad, grad

        gys = gy if nout > 1 else (gy,)  # one gradient per output (None where unused)

        inputs = list(ctx.inputs)
        wanted = [i for i, e in enumerate(ctx.edges) if e is not None]
        with enable_grad():
            ys = ctx.params["func"](*inputs)
            ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
            pairs = [(y, g) for y, g in zip(ys, gys) if g is not None and y.requires_grad]
            gs = grad([y for y, _ in pairs], [inputs[i] for i in wanted],
                      [g for _, g in pairs], create_graph=True,
                      allow_unused=True) if pairs else [None] * len(wanted)
        out: list[Any] = [None] * len(inputs)
        for i, g in zip(wanted, gs):
            out[i] = g
        return tuple(out)

    _FORGET[nout] = _forget
    return _forget


def forget(func: Callable[..., Any], *xs: Any) -> Any:
    """``func(*xs)`` without keeping its intermediate results: backward runs ``func``
    again. ``func`` takes and returns Variables (one or a tuple).

    Parameters
    ----------
    func : callable
        The function to run; it must compute the same result again in backward (no
        randomness of its own).
    *xs : Variable or array
        Its arguments.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([1.0, 2.0]), requires_grad=True)
    >>> y = pg.ops.forget(lambda v: pg.ops.exp(v) * v, x)
    >>> pg.ops.sum(y).backward()
    >>> np.allclose(x.grad, np.exp([1.0, 2.0]) * [2.0, 3.0])
    True
    """
    vs = [var(x, "forget", f"xs[{i}]") for i, x in enumerate(xs)]
    if not vs:
        raise PortagradTypeError("forget(xs): expected at least one array")
    from ...tape import no_grad

    with no_grad():
        ys = func(*[wrap(v.array, v.xp) for v in vs])
    outs = tuple(ys) if isinstance(ys, (tuple, list)) else (ys,)
    if not all(isinstance(y, Variable) for y in outs):
        raise PortagradTypeError(f"forget(func): expected func to return Variables, got "
                                 f"{[type(y).__name__ for y in outs]}")
    return _forget_primitive(len(outs))(*vs, func=func, ready=tuple(y.array for y in outs))
