"""Numerical gradient checks for portagrad's ops and for your own.

The checks compare a vjp (:func:`check_backward`) or a forward-mode tangent
(:func:`check_jvp`) with central differences along one random direction, so their cost
does not grow with the size of the inputs; :func:`check_grads` applies them to the
gradient function itself, for second and higher orders. Everything runs in
the namespace and on the device of the inputs (in float64 by default).

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> pg.gradcheck.check_grads(pg.ops.tanh, (np.array([0.1, -0.4]),), order=3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import ops
from ._errors import DTypeError, PortagradError
from .tape import Variable, grad
from .xp import from_numpy, namespace_of, to_numpy
from .xp._dtypes import unavailable_dtype

__all__ = ["GradientCheckError", "numerical_grad", "check_backward", "check_double_backward",
           "check_jvp", "check_grads"]


class GradientCheckError(PortagradError, AssertionError):
    """An analytic gradient disagrees with finite differences."""


def _raw(a: Any) -> Any:
    return a.array if isinstance(a, Variable) else a


def _is_float(a: Any) -> bool:
    if not hasattr(a, "dtype") or not hasattr(a, "shape"):
        return False  # Python values (axes, shapes, keys) are constants
    xp = namespace_of(a)
    return xp.isdtype(a.dtype, "real floating")


def _as_tuple(y: Any) -> tuple:
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def _cast(a: Any, dtype: str | None, op: str) -> Any:
    if dtype is None or not _is_float(a):
        return a
    xp = namespace_of(a)
    why = unavailable_dtype(xp, getattr(xp, dtype, dtype))
    if why is not None:
        raise DTypeError(f"{op}(dtype): expected a dtype the inputs' library has, got "
                         f"{dtype!r}: {why}; or pass dtype=None to check in the inputs' own "
                         f"dtype, with eps, atol and rtol loose enough for it")
    return xp.astype(a, getattr(xp, dtype))


def _call(f: Callable[..., Any], arrays: Sequence[Any], diff: Sequence[bool]) -> tuple:
    # Gradients stay on: a gradient function (order 2 and up) differentiates inside.
    vs = [Variable(a, requires_grad=True) if d else a for a, d in zip(arrays, diff)]
    return tuple(_raw(o) for o in _as_tuple(f(*vs)))


def numerical_grad(f: Callable[..., Any], inputs: Sequence[Any],
                   grad_outputs: Sequence[Any] | None = None, eps: float = 1e-3) -> list[Any]:
    """Gradients of ``sum(f(*inputs) * grad_outputs)`` by central differences.

    Each element of each floating input is perturbed in turn, so use it on small arrays;
    :func:`check_backward` needs only one direction.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.gradcheck.numerical_grad(lambda x: x * x, [np.array([3.0])])[0].round(6)
    array([6.])
    """
    arrays = [_raw(a) for a in inputs]
    diff = [_is_float(a) for a in arrays]
    ys = _call(f, arrays, diff)
    gys = [_raw(g) for g in grad_outputs] if grad_outputs is not None else [
        namespace_of(y).ones_like(y) for y in ys]
    results = []
    for i, a in enumerate(arrays):
        if not diff[i]:
            results.append(None)
            continue
        host = to_numpy(a).astype(np.float64)
        flat = host.reshape(-1)
        g = np.zeros_like(flat)
        for j in range(flat.size):
            vals = []
            for sign in (1.0, -1.0):
                pert = flat.copy()
                pert[j] += sign * eps
                args = list(arrays)
                args[i] = from_numpy(pert.reshape(host.shape).astype(to_numpy(a).dtype), like=a)
                outs = _call(f, args, diff)
                vals.append(sum(float(np.sum(to_numpy(o) * to_numpy(gy)))
                                for o, gy in zip(outs, gys)))
            g[j] = (vals[0] - vals[1]) / (2 * eps)
        results.append(from_numpy(g.reshape(host.shape).astype(to_numpy(a).dtype), like=a))
    return results


def _random_like(rng: np.random.Generator, a: Any) -> Any:
    return from_numpy(rng.standard_normal(tuple(a.shape)).astype(to_numpy(a).dtype), like=a)


def _dot(a: Any, b: Any) -> float:
    return float(np.sum(to_numpy(a).astype(np.float64) * to_numpy(b).astype(np.float64)))


def check_backward(f: Callable[..., Any], inputs: Sequence[Any],
                   grad_outputs: Sequence[Any] | None = None, *, eps: float = 1e-3,
                   atol: float = 1e-5, rtol: float = 1e-4, dtype: str | None = "float64",
                   seed: int = 0, name: str | None = None) -> None:
    """Check the vjp of ``f`` at ``inputs`` against central differences.

    A random direction ``d`` is drawn for the floating inputs and a random cotangent for
    each output; the analytic ``sum(grad_i * d_i)`` must match
    ``(L(x + eps d) - L(x - eps d)) / (2 eps)`` with ``L = sum(f(x) * cotangent)``. The
    gradients must also have the shape, dtype and device of their inputs.

    Parameters
    ----------
    f
        Function of Variables returning a Variable or a tuple of them.
    inputs
        Arrays (any library); non-floating ones are passed as constants.
    grad_outputs
        Cotangents for the outputs; random if omitted.
    dtype
        Cast floating inputs to this dtype first (``None`` keeps them). A dtype the
        inputs' library lacks (float64 on JAX without ``jax_enable_x64``) is a
        :class:`~portagrad.DTypeError`.

    Raises
    ------
    GradientCheckError
        With the values, the direction's seed and the input shapes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.gradcheck.check_backward(lambda x: x ** 3, [np.array([1.0, 2.0])])
    """
    rng = np.random.default_rng(seed)
    arrays = [_cast(_raw(a), dtype, "check_backward") for a in inputs]
    diff = [_is_float(a) for a in arrays]
    label = name or getattr(f, "__name__", "f")
    vs = [Variable(a, requires_grad=True) if d else a for a, d in zip(arrays, diff)]
    ys = _as_tuple(f(*vs))
    if grad_outputs is None:
        gys = [_random_like(rng, _raw(y)) for y in ys]
    else:
        gys = [_cast(_raw(g), dtype, "check_backward") for g in grad_outputs]
    dirs = [_random_like(rng, a) if d else None for a, d in zip(arrays, diff)]
    targets = [v for v, d in zip(vs, diff) if d]
    used = [(y, g) for y, g in zip(ys, gys) if isinstance(y, Variable) and y.requires_grad]
    if used and targets:
        gxs = grad([y for y, _ in used], targets, [g for _, g in used], allow_unused=True)
    else:
        gxs = tuple(None for _ in targets)
    analytic = 0.0
    it = iter(gxs)
    for a, d, dv in zip(arrays, diff, dirs):
        if not d:
            continue
        g = next(it)
        if g is None:
            continue
        _check_meta(label, a, g.array)
        analytic += _dot(g.array, dv)
    xp_args = []
    for sign in (1.0, -1.0):
        args = [a + sign * eps * dv if d else a for a, d, dv in zip(arrays, diff, dirs)]
        xp_args.append(args)
    lp = sum(_dot(o, g) for o, g in zip(_call(f, xp_args[0], diff), gys))
    lm = sum(_dot(o, g) for o, g in zip(_call(f, xp_args[1], diff), gys))
    numeric = (lp - lm) / (2 * eps)
    _compare(f"{label}: analytic", analytic, numeric, arrays, f"direction seed {seed}", eps,
             atol, rtol)


def _compare(what: str, analytic: float, numeric: float, arrays: list, seed: str,
             eps: float, atol: float, rtol: float) -> None:
    """Raise GradientCheckError unless an analytic directional derivative matches the
    central difference ``numeric``."""
    if not abs(analytic - numeric) <= atol + rtol * abs(numeric) or analytic != analytic:
        shapes = [tuple(a.shape) for a in arrays]
        raise GradientCheckError(
            f"{what} directional derivative {analytic!r} differs from the "
            f"numerical one {numeric!r} (|diff| {abs(analytic - numeric):.3g} > atol {atol} + "
            f"rtol {rtol} * |numerical|). Inputs of shapes {shapes}, {seed}, eps {eps}.")


def _check_meta(label: str, a: Any, g: Any) -> None:
    if tuple(g.shape) != tuple(a.shape):
        raise GradientCheckError(f"{label}: gradient of shape {tuple(g.shape)} for an input of "
                                 f"shape {tuple(a.shape)}")
    if g.dtype != a.dtype:
        raise GradientCheckError(f"{label}: gradient of dtype {g.dtype} for an input of "
                                 f"dtype {a.dtype}")
    if g.device != a.device:
        raise GradientCheckError(f"{label}: gradient on device {g.device} for an input on "
                                 f"device {a.device}")
    if namespace_of(g) is not namespace_of(a):
        raise GradientCheckError(f"{label}: gradient of another array library than its "
                                 f"input ({type(g).__name__} vs {type(a).__name__})")


def _vjp_function(f: Callable[..., Any], n_in: int, diff: Sequence[bool]) -> Callable[..., Any]:
    """The function (x..., gy...) -> gradients of sum(f(x) * gy) w.r.t. the floating x."""

    def vjp(*args: Any) -> tuple:
        xs = args[:n_in]
        gys = args[n_in:]
        ys = _as_tuple(f(*xs))
        targets = [x for x, d in zip(xs, diff) if d]
        pairs = [(y, g) for y, g in zip(ys, gys) if isinstance(y, Variable) and y.requires_grad]
        if pairs:
            gs = grad([y for y, _ in pairs], targets, [g for _, g in pairs],
                      create_graph=True, allow_unused=True)
        else:
            gs = (None,) * len(targets)
        out = []
        for x, g in zip(targets, gs):
            out.append(g if g is not None else ops.zeros_like(x))
        return tuple(out)

    vjp.__name__ = f"vjp({getattr(f, '__name__', 'f')})"
    return vjp


def check_double_backward(f: Callable[..., Any], inputs: Sequence[Any],
                          grad_outputs: Sequence[Any] | None = None,
                          grad_grad_inputs: Sequence[Any] | None = None, *, eps: float = 1e-3,
                          atol: float = 1e-4, rtol: float = 1e-3,
                          dtype: str | None = "float64", seed: int = 0) -> None:
    """Check the second derivative of ``f``: the vjp of its vjp, as Chainer's
    ``check_double_backward``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.gradcheck.check_double_backward(pg.ops.sin, [np.array([0.3, 1.2])])
    """
    rng = np.random.default_rng(seed + 1)
    op = "check_double_backward"
    arrays = [_cast(_raw(a), dtype, op) for a in inputs]
    diff = [_is_float(a) for a in arrays]
    ys = _call(f, arrays, diff)
    gys = ([_cast(_raw(g), dtype, op) for g in grad_outputs] if grad_outputs is not None
           else [_random_like(rng, y) for y in ys])
    g = _vjp_function(f, len(arrays), diff)
    ggs = (None if grad_grad_inputs is None
           else [_cast(_raw(a), dtype, op) for a in grad_grad_inputs])
    check_backward(g, [*arrays, *gys], ggs, eps=eps, atol=atol, rtol=rtol, dtype=None,
                   seed=seed, name=g.__name__)


def check_jvp(f: Callable[..., Any], inputs: Sequence[Any],
              tangents: Sequence[Any] | None = None, *, eps: float = 1e-3,
              atol: float = 1e-5, rtol: float = 1e-4, dtype: str | None = "float64",
              seed: int = 0, name: str | None = None) -> None:
    """Check the forward-mode tangent of ``f`` at ``inputs`` against central differences.

    The floating inputs carry tangents ``t`` (random unless given) through one forward
    pass (:mod:`portagrad.autograd.forward_ad`). With a random cotangent ``u`` per output,
    ``sum <u, J t>`` must match ``(L(x + eps t) - L(x - eps t)) / (2 eps)`` with
    ``L = sum <u, f(x)>`` (the tolerance means what it means in :func:`check_backward`),
    and each tangent must have its output's shape, dtype and device.

    Raises
    ------
    GradientCheckError
        With the values, the seed and the input shapes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.gradcheck.check_jvp(lambda x, y: pg.ops.sin(x) * y,
    ...                        [np.array([1.0, 2.0]), np.array([0.5, 3.0])])
    """
    from .autograd import forward_ad

    rng = np.random.default_rng(seed)
    arrays = [_cast(_raw(a), dtype, "check_jvp") for a in inputs]
    diff = [_is_float(a) for a in arrays]
    label = name or getattr(f, "__name__", "f")
    if tangents is None:
        dirs = [_random_like(rng, a) if d else None for a, d in zip(arrays, diff)]
    else:
        it = iter(tangents)
        dirs = [_cast(_raw(next(it)), dtype, "check_jvp") if d else None
                for a, d in zip(arrays, diff)]
    with forward_ad.dual_level():
        # Inputs require gradients, as in _call: a gradient function differentiates inside.
        args = [forward_ad.make_dual(Variable(a, requires_grad=True), t) if d else a
                for a, d, t in zip(arrays, diff, dirs)]
        ys = _as_tuple(f(*args))
        tans = [forward_ad.unpack_dual(y).tangent if isinstance(y, Variable) else None
                for y in ys]
    cots = [_random_like(rng, _raw(y)) if _is_float(_raw(y)) else None for y in ys]
    analytic = 0.0
    for i, (y, t, u) in enumerate(zip(ys, tans, cots)):
        if t is not None and u is not None:
            _check_meta(f"{label} (tangent of output {i})", _raw(y), t.array)
            analytic += _dot(t.array, u)
    plus = _call(f, [a + eps * t if d else a for a, d, t in zip(arrays, diff, dirs)], diff)
    minus = _call(f, [a - eps * t if d else a for a, d, t in zip(arrays, diff, dirs)], diff)
    numeric = sum(_dot(p, u) - _dot(m, u) for p, m, u in zip(plus, minus, cots)
                  if u is not None) / (2 * eps)
    _compare(f"{label}: forward-mode", analytic, numeric, arrays, f"tangent seed {seed}",
             eps, atol, rtol)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int = 2, *,
                modes: Sequence[str] = ("fwd", "rev"), eps: float = 1e-3,
                atol: float = 1e-5, rtol: float = 1e-4, dtype: str | None = "float64",
                seed: int = 0) -> None:
    """Check derivatives of ``f`` up to ``order`` (as JAX's ``check_grads``).

    Order 1 checks ``f``'s vjp (mode ``"rev"``) and its forward-mode tangent (``"fwd"``);
    order k+1 checks the same of the order-k gradient function, whose inputs are the
    previous inputs plus random cotangents.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.gradcheck.check_grads(lambda x, y: x * pg.ops.exp(y),
    ...                          (np.array([1.0, 2.0]), np.array([0.5, -0.5])), order=3)
    """
    rng = np.random.default_rng(seed + 7)
    arrays = [_cast(_raw(a), dtype, "check_grads") for a in args]
    fn = f
    bad_modes = set(modes) - {"fwd", "rev"}
    if bad_modes or not modes:
        raise ValueError(f"check_grads(modes): expected 'fwd' and/or 'rev', got {modes!r}")
    for k in range(1, order + 1):
        scale = 10.0 ** (k - 1)
        label = f"{getattr(f, '__name__', 'f')} (order {k})"
        if "rev" in modes:
            check_backward(fn, arrays, eps=eps, atol=atol * scale, rtol=rtol * scale,
                           dtype=None, seed=seed + k, name=label)
        if "fwd" in modes:
            check_jvp(fn, arrays, eps=eps, atol=atol * scale, rtol=rtol * scale, dtype=None,
                      seed=seed + k, name=label + " forward mode")
        if k == order:
            break
        diff = [_is_float(a) for a in arrays]
        ys = _call(fn, arrays, diff)
        gys = [_random_like(rng, y) for y in ys]
        fn = _vjp_function(fn, len(arrays), diff)
        arrays = [*arrays, *gys]
