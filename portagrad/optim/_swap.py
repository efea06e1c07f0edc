"""``torch.optim.swap_in_optimizer_params_and_state``: run an optimizer on other
parameters and state for the duration of a block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._errors import PortagradValueError
from ._optimizer import Optimizer, _ParamState

__all__ = ["swap_in_optimizer_params_and_state"]


@contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer,
                                       swapin_parameters: dict[str, Any],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the block, ``optimizer`` holds ``swapin_parameters`` (in the order of its
    own parameters) and the per-parameter dicts of ``swapin_optim_state`` (a
    ``state_dict()``-shaped dict); its own are restored on exit.

    The state dicts are used as they are, so what a step writes into them stays there.

    Parameters
    ----------
    optimizer
        The live optimizer.
    swapin_parameters
        ``{name: Parameter}``, one per parameter of the optimizer, in its order.
    swapin_optim_state
        ``{"state": {index: {...}}, "param_groups": [...]}``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.nn.Parameter(np.ones(2))
    >>> opt = pg.optim.SGD([w], lr=0.5)
    >>> other = pg.nn.Parameter(np.zeros(2)); other.grad = np.ones(2)
    >>> with pg.optim.swap_in_optimizer_params_and_state(opt, {"w": other},
    ...                                                   opt.state_dict()):
    ...     _ = opt.step()
    >>> w.array, other.array
    (array([1., 1.]), array([-0.5, -0.5]))
    """
    new = list(swapin_parameters.values())
    count = sum(len(g["params"]) for g in optimizer.param_groups)
    if len(new) != count:
        raise PortagradValueError(f"swap_in_optimizer_params_and_state(swapin_parameters): "
                                  f"expected {count} parameters, got {len(new)}")
    saved_groups = [dict(g) for g in optimizer.param_groups]
    saved_state = optimizer.state
    groups = list(swapin_optim_state.get("param_groups", saved_groups))
    if len(groups) != len(saved_groups):
        raise PortagradValueError("swap_in_optimizer_params_and_state(swapin_optim_state): "
                                  f"expected {len(saved_groups)} parameter groups, got "
                                  f"{len(groups)}")
    state = _ParamState()
    i = 0
    for g, sg in zip(optimizer.param_groups, groups, strict=True):
        n = len(g["params"])
        g.update({k: v for k, v in sg.items() if k != "params"})
        g["params"] = new[i:i + n]
        for j, p in enumerate(g["params"]):
            entry = swapin_optim_state.get("state", {}).get(i + j)
            if entry is not None:
                state[p] = entry
        i += n
    optimizer.state = state
    try:
        yield
    finally:
        optimizer.state = saved_state
        for g, sg in zip(optimizer.param_groups, saved_groups, strict=True):
            g.clear()
            g.update(sg)
