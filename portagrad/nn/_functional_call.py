"""``functional_call``: a module's forward with parameters and buffers passed in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._errors import describe
from ..xp._namespace import is_array
from ._module import Module

__all__ = ["functional_call"]


def functional_call(module: Module, parameters_and_buffers: Mapping[str, Any],
                    args: Any = (), kwargs: Mapping[str, Any] | None = None, *,
                    strict: bool = False) -> Any:
    """Run ``module(*args, **kwargs)`` with some parameters and buffers replaced.

    The values (Variables or arrays, by the dotted names of ``named_parameters`` and
    ``named_buffers``) stand in for the module's own during the call, which are put back
    afterwards, also on an error. This makes a module a function of its weights, for
    :func:`portagrad.hvp`, :func:`portagrad.jacobian`, forward mode and per-example or
    meta-learned weights (``torch.func.functional_call``).

    Parameters
    ----------
    module
        The module to call.
    parameters_and_buffers
        Replacements by name. An unknown name is an error.
    args, kwargs
        The call's arguments (a single non-tuple ``args`` is one positional argument).
    strict
        Require a value for every parameter and buffer.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lin = pg.nn.Linear(2, 1)
    >>> w = {"weight": np.array([[1.0, 2.0]]), "bias": np.array([0.5])}
    >>> pg.nn.functional_call(lin, w, (np.array([[1.0, 1.0]]),)).array
    array([[3.5]])
    >>> f = lambda W, b: pg.ops.sum(pg.nn.functional_call(
    ...     lin, {"weight": W, "bias": b}, np.ones((1, 2))) ** 2)
    >>> pg.hvp(f, (w["weight"], w["bias"]), (np.ones((1, 2)), np.zeros(1)))[1][0].array
    array([[4., 4.]])
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call(module): expected a portagrad.nn.Module, got "
                        f"{describe(module)}")
    if not isinstance(parameters_and_buffers, Mapping):
        raise TypeError(f"functional_call(parameters_and_buffers): expected a mapping of "
                        f"names to arrays or Variables, got {describe(parameters_and_buffers)}")
    owners: dict[str, tuple[Module, str, bool]] = {}
    for mname, m in module.named_modules():
        params, _, buffers = m._registry()
        for attr in params:
            owners[f"{mname}.{attr}" if mname else attr] = (m, attr, True)
        for attr in buffers:
            owners[f"{mname}.{attr}" if mname else attr] = (m, attr, False)
    unknown = sorted(set(parameters_and_buffers) - set(owners))
    if unknown:
        raise KeyError(f"functional_call(parameters_and_buffers): expected names of "
                       f"{type(module).__name__}'s parameters and buffers, got unknown "
                       f"{unknown}")
    if strict:
        missing = sorted(set(owners) - set(parameters_and_buffers))
        if missing:
            raise KeyError(f"functional_call(parameters_and_buffers): expected every "
                           f"parameter and buffer (strict=True), got none for {missing}")
    from ..tape._variable import Variable

    values = {}
    for name, value in parameters_and_buffers.items():
        is_param = owners[name][2]
        if isinstance(value, Variable):
            ok = is_param
        else:
            ok = is_array(value)
            if ok and is_param:
                value = Variable(value, requires_grad=False)  # a constant, as it was
        if not ok:
            want = "an array or a Variable" if is_param else "an array (a buffer)"
            raise TypeError(f"functional_call(parameters_and_buffers[{name!r}]): expected "
                            f"{want}, got {describe(value)}")
        values[name] = value
    saved = []
    try:
        for name, value in values.items():
            m, attr, _ = owners[name]
            saved.append((m, attr, m.__dict__[attr]))
            # Around __setattr__: the stand-in is not registered in place of the Parameter.
            object.__setattr__(m, attr, value)
        if not isinstance(args, tuple):
            args = (args,)
        return module(*args, **dict(kwargs or {}))
    finally:
        for m, attr, old in reversed(saved):
            object.__setattr__(m, attr, old)
