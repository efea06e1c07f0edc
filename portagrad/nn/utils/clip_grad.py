"""Gradient clipping: by the norm of all gradients together, or by value.

The gradients are read and replaced as arrays of their own library, outside any graph
(PyTorch clips under ``no_grad`` too); each parameter gets a new gradient array, so an
array handed out earlier (a retained or hooked gradient) is never changed behind it.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import NonFiniteError, PortagradTypeError, PortagradValueError, describe
from ...tape import Variable
from ...xp import default_namespace, namespace_of
from ...xp._dtypes import index_dtype

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

_EPS = 1e-6  # added to the norm before dividing, as PyTorch does


def _params(parameters: Any, where: str) -> list[Variable]:
    if isinstance(parameters, Variable):
        return [parameters]
    try:
        params = list(parameters)
    except TypeError:
        raise PortagradTypeError(f"{where}(parameters): expected a Variable or an iterable of "
                                 f"them, got {describe(parameters)}") from None
    for i, p in enumerate(params):
        if not isinstance(p, Variable):
            raise PortagradTypeError(f"{where}(parameters[{i}]): expected a Variable, got "
                                     f"{describe(p)}")
    return params


def _raw(g: Any) -> Any:
    return g.array if isinstance(g, Variable) else g


def _norm_type(norm_type: Any, where: str) -> float:
    try:
        p = float(norm_type)
    except (TypeError, ValueError):
        raise PortagradTypeError(f"{where}(norm_type): expected a number or 'inf', got "
                                 f"{describe(norm_type)}") from None
    if math.isnan(p):
        raise PortagradValueError(f"{where}(norm_type): expected a number, got nan")
    return p


def _vector_norm(xp: Any, a: Any, p: float) -> Any:
    """The ``p``-norm of all elements of ``a``, as a 0-d array of ``xp``."""
    a = xp.abs(xp.reshape(a, (-1,)))
    if p == math.inf:
        return xp.max(a) if a.shape[0] else xp.asarray(0, dtype=a.dtype)
    if p == -math.inf:
        return xp.min(a) if a.shape[0] else xp.asarray(math.inf, dtype=a.dtype)
    if p == 0:
        return xp.astype(xp.sum(xp.astype(a != 0, index_dtype(xp))), a.dtype)
    if p == 1:
        return xp.sum(a)
    if p == 2:
        return xp.sqrt(xp.sum(a * a))
    return xp.sum(a ** p) ** (1.0 / p)


def get_total_norm(tensors: Any, norm_type: float | str = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Variable:
    """The ``norm_type``-norm of all the given arrays together, as if concatenated.

    Parameters
    ----------
    tensors
        An array or Variable, or an iterable of them (``None`` entries are skipped).
    norm_type
        The order: a positive number, ``inf`` (``float("inf")`` or ``"inf"``) for the
        largest absolute value.
    error_if_nonfinite
        Raise :class:`portagrad.NonFiniteError` when the norm is NaN or infinite.
    foreach
        Accepted for PyTorch code; the result does not depend on it.

    Returns
    -------
    Variable
        A 0-d Variable (no gradient) of the arrays' library and dtype; 0 for no arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils import get_total_norm
    >>> float(get_total_norm([np.array([3.0]), np.array([4.0])]))
    5.0
    >>> float(get_total_norm([np.array([3.0]), np.array([-4.0])], "inf"))
    4.0
    """
    p = _norm_type(norm_type, "get_total_norm")
    if isinstance(tensors, Variable) or hasattr(tensors, "__array_namespace__") or (
            hasattr(tensors, "shape") and hasattr(tensors, "dtype")):
        tensors = [tensors]
    arrays = [_raw(t) for t in tensors if t is not None]
    if not arrays:
        # No array to take the library from: the default one's zero, as PyTorch's.
        return Variable(default_namespace().asarray(0.0), requires_grad=False)
    groups: dict[tuple, list] = {}
    for a in arrays:
        xp = namespace_of(a)
        groups.setdefault((id(xp), str(a.device)), [xp, a.device, []])[2].append(a)
    first_xp, first_dev, _ = next(iter(groups.values()))
    partial = []
    for xp, dev, group in groups.values():
        norms = xp.stack([_vector_norm(xp, a, p) for a in group])
        total = _vector_norm(xp, norms, p)
        if xp is not first_xp or str(dev) != str(first_dev):
            # Another library or device: its norm joins the first group's as a number.
            total = first_xp.asarray(float(total), dtype=arrays[0].dtype, device=first_dev)
        partial.append(total)
    total = partial[0] if len(partial) == 1 else _vector_norm(first_xp,
                                                              first_xp.stack(partial), p)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise NonFiniteError(
            f"get_total_norm: the total norm of order {norm_type} for gradients from "
            f"`parameters` is non-finite ({float(total)}), so it cannot be clipped. To "
            f"disable this error and scale the gradients by the non-finite norm anyway, set "
            f"`error_if_nonfinite=False`")
    return Variable(total, requires_grad=False)


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Any,
                          foreach: bool | None = None) -> None:
    """Scale the gradients by ``max_norm / (total_norm + 1e-6)`` where that is below 1.

    Parameters
    ----------
    parameters
        A Variable or an iterable of them; those without a gradient are skipped.
    max_norm
        The largest total norm left.
    total_norm
        The norm to scale by (from :func:`get_total_norm`).
    foreach
        Accepted for PyTorch code; the result does not depend on it.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn.utils import clip_grads_with_norm_, get_total_norm
    >>> w = pg.nn.Parameter(np.zeros(2))
    >>> w.grad = np.array([6.0, 8.0])
    >>> clip_grads_with_norm_([w], 5.0, get_total_norm([w.grad]))
    >>> np.round(w.grad, 4).tolist()
    [3.0, 4.0]
    """
    params = [q for q in _params(parameters, "clip_grads_with_norm_") if q.grad_var is not None]
    if not params:
        return
    total = _raw(total_norm)
    for q in params:
        g = q.grad
        xp = namespace_of(g)
        t = total if namespace_of(total) is xp else xp.asarray(float(total), device=g.device)
        coef = xp.astype(xp.asarray(float(max_norm), device=g.device), t.dtype) / (t + _EPS)
        coef = xp.minimum(coef, xp.asarray(1.0, dtype=coef.dtype, device=g.device))
        q.grad = g * xp.astype(coef, g.dtype)


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float | str = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Variable:
    """Scale all gradients together so that their total norm is at most ``max_norm``.

    The total norm is taken over all gradients as if concatenated into one vector;
    every gradient is multiplied by ``min(1, max_norm / (total + 1e-6))``.

    Parameters
    ----------
    parameters
        A Variable or an iterable of them (e.g. ``model.parameters()``); those without
        a gradient are skipped.
    max_norm
        The largest total norm left.
    norm_type
        The order of the norm (``inf`` for the largest absolute value).
    error_if_nonfinite
        Raise :class:`portagrad.NonFiniteError` when the total norm is NaN or infinite
        (otherwise the gradients are scaled by it anyway, as in PyTorch).
    foreach
        Accepted for PyTorch code; the result does not depend on it.

    Returns
    -------
    Variable
        The total norm before clipping (0-d, no gradient).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn.utils import clip_grad_norm_
    >>> w = pg.nn.Parameter(np.zeros(2))
    >>> w.grad = np.array([6.0, 8.0])
    >>> float(clip_grad_norm_([w], 1.0))
    10.0
    >>> np.round(w.grad, 4).tolist()
    [0.6, 0.8]
    """
    params = _params(parameters, "clip_grad_norm_")
    grads = [q.grad for q in params if q.grad_var is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters: Any, clip_value: float, foreach: bool | None = None) -> None:
    """Clip every gradient element into ``[-clip_value, clip_value]``.

    Parameters
    ----------
    parameters
        A Variable or an iterable of them; those without a gradient are skipped.
    clip_value
        The largest absolute value left.
    foreach
        Accepted for PyTorch code; the result does not depend on it.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn.utils import clip_grad_value_
    >>> w = pg.nn.Parameter(np.zeros(3))
    >>> w.grad = np.array([-5.0, 0.5, 2.0])
    >>> clip_grad_value_(w, 1.0)
    >>> w.grad.tolist()
    [-1.0, 0.5, 1.0]
    """
    c = float(clip_value)
    for q in _params(parameters, "clip_grad_value_"):
        if q.grad_var is None:
            continue
        g = q.grad
        xp = namespace_of(g)
        q.grad = xp.clip(g, -c, c)
