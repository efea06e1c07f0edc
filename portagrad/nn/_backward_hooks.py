"""Full backward hooks of :class:`portagrad.nn.Module`: two pass-through nodes around a
call, one on the outputs (which sees ``grad_output``) and one on the inputs (which sees
``grad_input`` and may replace it), so a hook runs once per backward with both."""

from __future__ import annotations

from typing import Any

from ..ops.extend import Variable, primitive

__all__ = ["wrap_inputs", "wrap_outputs"]

_GATES: dict[int, Any] = {}


class _State:
    __slots__ = ("module", "positions", "nargs", "grad_output", "hooks", "done")

    def __init__(self, module: Any, positions: list[int], nargs: int) -> None:
        self.module = module
        self.positions = positions
        self.nargs = nargs
        self.grad_output: tuple = ()
        self.hooks: list = []
        self.done = False


def _run_hooks(state: _State, grads: tuple) -> tuple:
    grad_input = [None] * state.nargs
    for pos, g in zip(state.positions, grads):
        grad_input[pos] = g
    gin = tuple(grad_input)
    for hook in state.hooks:
        res = hook(state.module, gin, state.grad_output)
        if res is not None:
            res = tuple(res)
            if len(res) != len(gin):
                raise ValueError(f"backward hook of {type(state.module).__name__}: expected "
                                 f"{len(gin)} gradients, got {len(res)}")
            gin = res
    state.done = True
    return tuple(gin[p] for p in state.positions)


def _gate(n: int) -> Any:
    prim = _GATES.get(n)
    if prim is not None:
        return prim

    @primitive(f"module_backward_hook_{n}", saves="none", nout=n)
    def _pass(xp: Any, *arrays: Any, state: Any, side: str) -> Any:
        return arrays if n > 1 else arrays[0]

    @_pass.defvjp
    def _(ctx: Any, gy: Any) -> tuple:
        gys = tuple(gy) if n > 1 else (gy,)
        state, side = ctx.params["state"], ctx.params["side"]
        if side == "out":
            state.grad_output = gys
            if not state.positions and not state.done:
                _run_hooks(state, ())
            return gys
        return _run_hooks(state, gys)

    _GATES[n] = _pass
    return _pass


def wrap_inputs(module: Any, args: tuple) -> tuple[tuple, _State]:
    """``args`` with their differentiable Variables passed through the input gate."""
    positions = [i for i, a in enumerate(args)
                 if isinstance(a, Variable) and a.requires_grad]
    state = _State(module, positions, len(args))
    if not positions:
        return args, state
    out = _gate(len(positions))(*(args[i] for i in positions), state=state, side="in")
    outs = out if len(positions) > 1 else (out,)
    new = list(args)
    for i, v in zip(positions, outs):
        new[i] = v
    return tuple(new), state


def wrap_outputs(module: Any, out: Any, state: _State, hooks: list) -> Any:
    """``out`` (a Variable or a tuple of them) passed through the output gate."""
    state.hooks = hooks
    single = isinstance(out, Variable)
    items = (out,) if single else tuple(out) if isinstance(out, (tuple, list)) else None
    if items is None:
        return out
    pos = [i for i, v in enumerate(items) if isinstance(v, Variable) and v.requires_grad]
    if not pos:
        return out
    res = _gate(len(pos))(*(items[i] for i in pos), state=state, side="out")
    res = res if len(pos) > 1 else (res,)
    new = list(items)
    for i, v in zip(pos, res):
        new[i] = v
    return new[0] if single else type(out)(new) if isinstance(out, tuple) else new
