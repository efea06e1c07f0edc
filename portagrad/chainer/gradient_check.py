"""Chainer's ``chainer.gradient_check``: ``check_backward``, ``check_double_backward``,
``numerical_grad`` with Chainer's signatures, over :mod:`portagrad.gradcheck`.

The checks are directional, as Chainer's: one random direction over all inputs (and
``params``), the analytic directional derivative against central differences. Inputs
are perturbed in their own dtype unless ``dtype`` is given (then in that dtype, as
Chainer recommends float64 for float16/float32 functions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import gradcheck as _gc
from .._errors import PortagradValueError
from ..gradcheck import GradientCheckError
from ..tape import Variable, grad
from ..xp import from_numpy, namespace_of, to_numpy
from .variable import _cast

__all__ = ["check_backward", "check_double_backward", "numerical_grad",
           "GradientCheckError", "NondifferentiableError"]


class NondifferentiableError(GradientCheckError):
    """The function is not differentiable at the point checked (the one-sided
    differences disagree)."""


def _tuple(x: Any) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _raw(a: Any) -> Any:
    return a.array if isinstance(a, Variable) else a


def _is_float(a: Any) -> bool:
    return np.dtype(to_numpy(a).dtype).kind == "f" if hasattr(a, "dtype") else False


def numerical_grad(f: Callable[[], Any], inputs: Sequence[Any], grad_outputs: Sequence[Any],
                   eps: float = 1e-3, detect_nondifferentiable: bool = False,
                   diff_atol: float = 0, diff_rtol: float = 1e-2,
                   center_outputs: Any = None) -> tuple:
    """Gradients of ``sum(f() * grad_outputs)`` w.r.t. each of ``inputs`` by central
    differences; ``f`` takes no arguments and reads the ``inputs`` arrays, which are
    perturbed in place (Chainer's form).

    Parameters
    ----------
    f
        ``f()`` returns the outputs (arrays) from the current values of ``inputs``.
    inputs
        NumPy arrays perturbed in place.
    grad_outputs
        Cotangents of the outputs.
    eps
        Step.
    detect_nondifferentiable
        Raise :class:`NondifferentiableError` where one-sided differences disagree.
    diff_atol, diff_rtol
        Tolerances of that detection.
    center_outputs
        Not used (Chainer's optimisation).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import gradient_check
    >>> x = np.array([3.0])
    >>> g, = gradient_check.numerical_grad(lambda: (x * x,), (x,), (np.ones(1),))
    >>> np.round(g, 6).tolist()
    [6.0]
    """
    gys = [to_numpy(_raw(g)) if g is not None else None for g in grad_outputs]

    def loss() -> float:
        outs = _tuple(f())
        return sum(float(np.sum(to_numpy(_raw(o)).astype(np.float64) * gy))
                   for o, gy in zip(outs, gys) if gy is not None)

    results = []
    for x in inputs:
        flat = x.reshape(-1)
        g = np.zeros(flat.shape, dtype=np.float64)
        for j in range(flat.size):
            orig = flat[j].copy()
            flat[j] = orig + eps
            lp = loss()
            flat[j] = orig - eps
            lm = loss()
            if detect_nondifferentiable:
                flat[j] = orig
                l0 = loss()
                right, left = (lp - l0) / eps, (l0 - lm) / eps
                if abs(right - left) > diff_atol + diff_rtol * max(abs(right), abs(left)):
                    flat[j] = orig
                    raise NondifferentiableError(
                        f"numerical_grad: not differentiable at element {j} of an input "
                        f"of shape {x.shape} (one-sided slopes {left:.6g} and {right:.6g})")
            flat[j] = orig
            g[j] = (lp - lm) / (2 * eps)
        results.append(g.reshape(x.shape).astype(x.dtype))
    return tuple(results)


def check_backward(func: Callable[..., Any], x_data: Any, y_grad: Any, params: Any = (),
                   eps: float = 1e-3, atol: float = 1e-5, rtol: float = 1e-4,
                   no_grads: Sequence[bool] | None = None, dtype: Any = None,
                   detect_nondifferentiable: bool = False) -> None:
    """Check ``func``'s backward at ``x_data`` (Chainer's signature).

    Parameters
    ----------
    func
        ``func(*xs)`` returns a Variable or a tuple of them.
    x_data
        An array or a tuple of arrays.
    y_grad
        The cotangent(s) of the outputs; None for one scalar output.
    params
        Parameters whose gradients are checked too (a link's, typically).
    eps, atol, rtol
        Step and tolerances.
    no_grads
        Per input, True to leave it out of the check (default: non-float inputs).
    dtype
        Compute the check in this dtype (inputs and params are cast).
    detect_nondifferentiable
        Also fail where the one-sided differences along the direction disagree.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import gradient_check
    >>> gradient_check.check_backward(lambda x: x * x, np.array([1.0, 2.0]),
    ...                               np.array([1.0, -1.0]))
    """
    xs = [_raw(x) for x in _tuple(x_data)]
    params = list(_tuple(params))
    if dtype is not None:
        dt = np.dtype(dtype)
        xs = [namespace_of(x).astype(x, dt) if _is_float(x) else x for x in xs]
    if no_grads is None:
        no_grads = [not _is_float(x) for x in xs]
    elif len(no_grads) != len(xs):
        raise PortagradValueError(f"check_backward(no_grads): {len(no_grads)} flags for "
                                  f"{len(xs)} inputs")
    for x, ng in zip(xs, no_grads):
        if not ng and not _is_float(x):
            raise PortagradValueError("check_backward(no_grads): an integer input cannot "
                                      "be differentiated; set its no_grads entry to True")
    if dtype is not None and y_grad is not None:
        y_grad = tuple(None if g is None else namespace_of(_raw(g)).astype(
            _raw(g), np.dtype(dtype)) for g in _tuple(y_grad))
    saved = [p.array for p in params]
    if dtype is not None:
        for p in params:
            p.array = namespace_of(p.array).astype(p.array, np.dtype(dtype))
    try:
        _check(func, xs, y_grad, params, list(no_grads), eps, atol, rtol,
               detect_nondifferentiable)
    finally:
        for p, a in zip(params, saved):
            p.array = a


def _check(func: Callable[..., Any], xs: list, y_grad: Any, params: list, no_grads: list,
           eps: float, atol: float, rtol: float, detect: bool) -> None:
    rng = np.random.default_rng(0)
    vs = [x if ng else _cast(Variable(x, requires_grad=True)) for x, ng in zip(xs, no_grads)]
    ys = _tuple(func(*vs))
    gys = _tuple(y_grad)
    if not gys:
        if any(int(np.prod(y.shape)) != 1 for y in ys):
            raise PortagradValueError("check_backward(y_grad): y_grad may be None only "
                                      "when every output is a scalar")
        gys = tuple(namespace_of(_raw(y)).ones_like(_raw(y)) for y in ys)
    gys = tuple(_raw(g) for g in gys)
    if len(gys) != len(ys):
        raise PortagradValueError(f"check_backward(y_grad): {len(gys)} cotangents for "
                                  f"{len(ys)} outputs")
    targets = [v for v, ng in zip(vs, no_grads) if not ng] + params
    used = [(y, g) for y, g in zip(ys, gys) if g is not None and isinstance(y, Variable)
            and y.requires_grad]
    # Copies, as Chainer passes: a backward may write into its output gradients, and the
    # numerical gradient below needs them as they were.
    seeds = [namespace_of(g).asarray(g, copy=True) for _, g in used]
    grads = grad([y for y, _ in used], targets, seeds, allow_unused=True) \
        if used and targets else (None,) * len(targets)
    arrays = [_raw(t) for t in targets]
    dirs = [from_numpy(rng.standard_normal(tuple(a.shape)).astype(to_numpy(a).dtype),
                       like=a) for a in arrays]
    analytic = 0.0
    for a, g, d in zip(arrays, grads, dirs):
        if g is None:
            continue
        _gc._check_meta("check_backward", a, g.array)
        analytic += _gc._dot(g.array, d)

    def loss(shift: float) -> float:
        k = 0
        args = []
        for x, ng in zip(xs, no_grads):
            if ng:
                args.append(x)
            else:
                # A Variable, as Chainer passes: functions may read ``.array``.
                args.append(_cast(Variable(x + shift * dirs[k], requires_grad=False)))
                k += 1
        n_x = k
        originals = [p.array for p in params]
        try:
            for i, p in enumerate(params):
                p.array = originals[i] + shift * dirs[n_x + i]
            outs = _tuple(func(*args))
        finally:
            for p, a in zip(params, originals):
                p.array = a
        return sum(_gc._dot(_raw(o), g) for o, g in zip(outs, gys) if g is not None)

    lp, lm = loss(eps), loss(-eps)
    numeric = (lp - lm) / (2 * eps)
    if detect:
        l0 = loss(0.0)
        right, left = (lp - l0) / eps, (l0 - lm) / eps
        if abs(right - left) > 1e-2 * max(abs(right), abs(left), 1e-8) + atol:
            raise NondifferentiableError(f"check_backward: the function is not "
                                         f"differentiable at the point (one-sided "
                                         f"directional slopes {left:.6g} and {right:.6g})")
    _gc._compare("check_backward: analytic", analytic, numeric, arrays,
                 "direction seed 0", eps, atol, rtol)


def check_double_backward(func: Callable[..., Any], x_data: Any, y_grad: Any,
                          x_grad_grad: Any, params: Any = (), params_grad_grad: Any = (),
                          eps: float = 1e-3, atol: float = 1e-4, rtol: float = 1e-3,
                          no_grads: Sequence[bool] | None = None, dtype: Any = None,
                          detect_nondifferentiable: bool = False) -> None:
    """Check the second derivative of ``func``: the backward of its backward (Chainer's
    signature).

    Parameters
    ----------
    func, x_data, y_grad, params, eps, atol, rtol, no_grads, dtype
        As for :func:`check_backward`.
    x_grad_grad
        Cotangents of the first gradients of the inputs.
    params_grad_grad
        Cotangents of the first gradients of ``params``.
    detect_nondifferentiable
        As for :func:`check_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import gradient_check
    >>> x = np.array([0.5, 1.5])
    >>> gradient_check.check_double_backward(lambda x: x * x * x, x, np.ones(2),
    ...                                      np.array([1.0, 2.0]))
    """
    xs = [_raw(x) for x in _tuple(x_data)]
    params = list(_tuple(params))
    gys = [_raw(g) for g in _tuple(y_grad)]
    ggx = [_raw(g) for g in _tuple(x_grad_grad)]
    ggp = [_raw(g) for g in _tuple(params_grad_grad)]
    n = len(xs)
    if no_grads is None:
        no_grads = [not _is_float(x) for x in xs]
    no_grads = list(no_grads)

    def first_order(*args: Any) -> tuple:
        ins = [a if ng or (isinstance(a, Variable) and a.requires_grad)
               else _cast(Variable(_raw(a), requires_grad=True))
               for a, ng in zip(args[:n], no_grads)]
        cots = args[n:]
        ys = _tuple(func(*ins))
        targets = [a for a, ng in zip(ins, no_grads) if not ng] + params
        gs = grad(list(ys), targets, list(cots), create_graph=True, allow_unused=True)
        return tuple(g if g is not None else _cast(Variable(
            namespace_of(_raw(t)).zeros_like(_raw(t)), requires_grad=False))
            for g, t in zip(gs, targets))

    if not gys:
        ys = _tuple(func(*xs))
        gys = [namespace_of(_raw(y)).ones_like(_raw(y)) for y in ys]
    check_backward(first_order, tuple(xs) + tuple(gys), tuple(ggx) + tuple(ggp),
                   params=params, eps=eps, atol=atol, rtol=rtol,
                   no_grads=no_grads + [False] * len(gys), dtype=dtype,
                   detect_nondifferentiable=detect_nondifferentiable)
