"""Chainer's optimizer hooks (``chainer.optimizer_hooks``), numerically Chainer's.

Hooks with ``call_for_each_param = True`` are called as ``hook(rule, param)`` for every
parameter (register them on the optimizer or on one parameter's update rule); the
others as ``hook(optimizer)``. Each changes ``param.grad`` before the update
(``timing = 'pre'``). Gradients are assigned, not changed in place, so immutable arrays
work and a gradient array shared by two parameters is never changed twice.

Examples
--------
>>> import numpy as np
>>> import portagrad.chainer as chainer
>>> from portagrad.chainer import optimizers, optimizer_hooks
>>> class Model(chainer.Link):
...     def __init__(self):
...         super().__init__()
...         with self.init_scope():
...             self.W = chainer.Parameter(np.ones((1, 2)))
>>> model = Model()
>>> opt = optimizers.SGD(lr=1.0).setup(model)
>>> opt.add_hook(optimizer_hooks.WeightDecay(0.5))
>>> model.W.grad = np.zeros((1, 2))
>>> opt.update()
>>> model.W.array
array([[0.5, 0.5]])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import random as _random
from .._errors import PortagradValueError
from ..xp import namespace_of

__all__ = ["WeightDecay", "Lasso", "GradientClipping", "GradientHardClipping",
           "GradientNoise", "GradientLARS", "exponential_decay_noise"]


class WeightDecay:
    """L2 regularisation: ``grad += rate * param`` (times the loss scale, if any).

    Parameters
    ----------
    rate
        Coefficient of the decay.

    Examples
    --------
    >>> from portagrad.chainer.optimizer_hooks import WeightDecay
    >>> WeightDecay(1e-4).rate
    0.0001
    """

    name = "WeightDecay"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, rule: Any, param: Any) -> None:
        p, g = param.data, param.grad
        if p is None or g is None:
            return
        rate = self.rate
        scale = getattr(rule, "_loss_scale", None)
        if scale is not None:
            rate *= scale
        param.grad = g + rate * p


class Lasso:
    """L1 regularisation: ``grad += rate * sign(param)``.

    Parameters
    ----------
    rate
        Coefficient of the decay.

    Examples
    --------
    >>> from portagrad.chainer.optimizer_hooks import Lasso
    >>> Lasso(1e-3).name
    'Lasso'
    """

    name = "Lasso"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, rule: Any, param: Any) -> None:
        p, g = param.data, param.grad
        if p is None or g is None:
            return
        param.grad = g + self.rate * namespace_of(p).sign(p)


class GradientClipping:
    """Scale all gradients together so that their global L2 norm is at most
    ``threshold``.

    Parameters
    ----------
    threshold
        The largest norm allowed.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import optimizers, optimizer_hooks
    >>> class Model(chainer.Link):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.init_scope():
    ...             self.W = chainer.Parameter(np.zeros((1, 2)))
    >>> model = Model()
    >>> opt = optimizers.SGD(lr=1.0).setup(model)
    >>> opt.add_hook(optimizer_hooks.GradientClipping(1.0))
    >>> model.W.grad = np.array([[3.0, 4.0]])
    >>> opt.update()
    >>> model.W.array
    array([[-0.6, -0.8]])
    """

    name = "GradientClipping"
    timing = "pre"

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def __call__(self, opt: Any) -> None:
        params = [p for p in opt.target.params() if p.grad is not None]
        if not params:
            return
        sqnorm = 0.0
        for p in params:
            g = p.grad
            xp = namespace_of(g)
            flat = xp.reshape(g, (-1,))
            sqnorm += float(xp.sum(flat * flat))
        norm = math.sqrt(sqnorm)
        rate = self.threshold / norm if norm else math.inf
        if rate >= 1:
            return
        for p in params:
            p.grad = p.grad * rate


class GradientHardClipping:
    """Clip every gradient element into ``[lower_bound, upper_bound]``.

    Parameters
    ----------
    lower_bound, upper_bound
        The bounds (``None`` leaves that side open).

    Examples
    --------
    >>> from portagrad.chainer.optimizer_hooks import GradientHardClipping
    >>> GradientHardClipping(-1, 1).upper_bound
    1
    """

    name = "GradientHardClipping"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, lower_bound: float | None, upper_bound: float | None) -> None:
        if lower_bound is not None and upper_bound is not None and lower_bound > upper_bound:
            raise PortagradValueError(f"GradientHardClipping(lower_bound, upper_bound): "
                                      f"expected lower <= upper, got {lower_bound} > "
                                      f"{upper_bound}")
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def __call__(self, rule: Any, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        param.grad = namespace_of(g).clip(g, self.lower_bound, self.upper_bound)


def exponential_decay_noise(xp: Any, shape: tuple, dtype: Any, hook: Any, opt: Any) -> Any:
    """Gaussian noise of variance ``eta / (1 + t) ** 0.55`` (Neelakantan et al.).

    ``t`` is the update count of ``opt`` (the update rule, for per-parameter hooks).
    NumPy arrays draw from NumPy's global generator (as Chainer), other libraries from
    portagrad's default generator.

    Parameters
    ----------
    xp
        The gradient's array namespace.
    shape, dtype
        Of the gradient.
    hook
        The :class:`GradientNoise` hook (its ``eta``).
    opt
        The update rule (or optimizer) whose ``t`` decays the noise.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.optimizer_hooks import GradientNoise, exponential_decay_noise
    >>> class Rule: t = 0
    >>> exponential_decay_noise(np, (3,), np.float64, GradientNoise(0.0), Rule()).tolist()
    [0.0, 0.0, 0.0]
    """
    std = math.sqrt(hook.eta / math.pow(1 + opt.t, 0.55))
    if xp.__name__.split(".")[-1] == "numpy":
        # NumPy's global generator, as Chainer draws it: numpy.random.seed reproduces
        # Chainer's noise.
        import numpy as np

        return xp.asarray(np.random.normal(0, std, shape).astype(dtype))
    return _random.default_generator().normal(shape, 0.0, std, xp=xp, dtype=dtype)


class GradientNoise:
    """Add noise from ``noise_func(xp, shape, dtype, hook, rule)`` to every gradient.

    Parameters
    ----------
    eta
        Scale of the noise's variance (0.01, 0.3 or 1.0 in the paper).
    noise_func
        The noise; default :func:`exponential_decay_noise`.

    Examples
    --------
    >>> from portagrad.chainer.optimizer_hooks import GradientNoise
    >>> GradientNoise(0.01).eta
    0.01
    """

    name = "GradientNoise"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, eta: float,
                 noise_func: Callable[..., Any] = exponential_decay_noise) -> None:
        self.eta = eta
        self.noise_func = noise_func

    def __call__(self, rule: Any, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        xp = namespace_of(g)
        param.grad = g + self.noise_func(xp, tuple(g.shape), g.dtype, self, rule)


class GradientLARS:
    """Layer-wise adaptive rate scaling (You et al.):
    ``grad = (grad + weight_decay * param) * rate`` with
    ``rate = |param| / (eps + |grad| + weight_decay * |param|)`` where ``|param| >
    threshold`` (else 1).

    Parameters
    ----------
    threshold
        Below this weight norm the rate is 1.
    weight_decay
        L2 coefficient.
    eps
        Small value for stability.

    Examples
    --------
    >>> from portagrad.chainer.optimizer_hooks import GradientLARS
    >>> GradientLARS().threshold
    0.01
    """

    name = "GradientLARS"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, threshold: float = 1e-2, weight_decay: float = 0.0,
                 eps: float = 1e-9) -> None:
        self.threshold = threshold
        self.weight_decay = weight_decay
        self.eps = eps

    def __call__(self, rule: Any, param: Any) -> None:
        p, g = param.data, param.grad
        if p is None or g is None:
            return
        xp = namespace_of(p)
        p_norm = xp.sqrt(xp.sum(p * p))
        g_norm = xp.sqrt(xp.sum(g * g))
        local_rate = p_norm / (self.eps + g_norm + self.weight_decay * p_norm)
        rate = xp.where(p_norm > self.threshold, local_rate, xp.ones_like(local_rate))
        param.grad = (g + self.weight_decay * p) * rate
