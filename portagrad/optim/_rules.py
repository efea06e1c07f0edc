"""The update rules of ``torch.optim``, with its names, defaults and maths, written with
the array library of the parameters; plus Lion.

Each ``_update`` gets one parameter, its gradient array (negated already under
``maximize``), its state dict (empty before the first update) and its group. State
names and layouts are torch's, so ``state_dict()`` has the same entries.
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import PortagradValueError
from ..xp._optim import sgd_update
from . import _updates
from ._optimizer import Optimizer, _check_implementation_options

__all__ = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta",
           "RMSprop", "Rprop", "ASGD", "SparseAdam", "Adafactor", "Muon", "Lion"]


def _zeros(p: Any) -> Any:
    return p.xp.zeros_like(p.array)


def _copy(xp: Any, a: Any) -> Any:
    return xp.asarray(a, copy=True)


def _set(p: Any, a: Any) -> None:
    p.array = a


def _check(name: str, cond: bool, what: str) -> None:
    if not cond:
        raise PortagradValueError(f"{name}: invalid {what}")


def _betas(name: str, betas: Any) -> tuple[float, float]:
    b = tuple(betas)
    _check(name, len(b) == 2 and 0.0 <= b[0] < 1.0 and 0.0 <= b[1] < 1.0,
           f"betas {betas!r} (expected two values in [0, 1))")
    return b  # type: ignore[return-value]


def _lr(name: str, lr: float) -> float:
    _check(name, lr >= 0.0, f"learning rate {lr!r} (expected >= 0)")
    return lr


def _counted(p: Any, st: dict[str, Any], *arrays: str, **values: Any) -> int:
    """Count the step in ``st``; at the first one create ``st`` with the step count, a
    zero array like ``p`` for each name in ``arrays`` and the given ``values``."""
    if not st:
        st["step"] = 0
        st.update({k: _zeros(p) for k in arrays})
        st.update(values)
    st["step"] += 1
    return st["step"]


def _weight_decay(p: Any, g: Any, group: dict[str, Any]) -> tuple[Any, Any]:
    """torch's two weight decays: decoupled (``p *= 1 - lr * wd``, AdamW's) or L2 (added
    to the gradient). Returns ``(param array, gradient)``."""
    a, wd = p.array, group["weight_decay"]
    if wd != 0 and group["decoupled_weight_decay"]:
        a *= 1.0 - group["lr"] * wd
        return a, g
    return a, _decayed(p, g, wd)


def _decayed(p: Any, g: Any, wd: float) -> Any:
    """L2 weight decay added to the gradient (a new array: ``g`` is not ours)."""
    return g + wd * p.array if wd != 0 else g


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov momentum and L2
    weight decay (``torch.optim.SGD``).

    ``d = g + weight_decay * p``; with momentum ``b = momentum * b + (1 - dampening) * d``
    (``b = d`` at the first step) and ``d = d + momentum * b`` (Nesterov) or ``d = b``;
    ``p -= lr * d``.

    Parameters
    ----------
    params
        Parameters or parameter groups (see :class:`Optimizer`).
    lr, momentum, dampening, weight_decay, nesterov, maximize
        As ``torch.optim.SGD``.
    foreach, differentiable, fused
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0, 2.0]))
    >>> p.grad = np.array([1.0, -1.0])
    >>> _ = pg.optim.SGD([p], lr=0.5).step()
    >>> p.array
    array([0.5, 2.5])
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_implementation_options("SGD", {"foreach": foreach, "fused": fused,
                                              "differentiable": differentiable})
        _lr("SGD", lr)
        _check("SGD", momentum >= 0.0, f"momentum {momentum!r}")
        _check("SGD", weight_decay >= 0.0, f"weight_decay {weight_decay!r}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise PortagradValueError("SGD(nesterov=True): requires a momentum and zero "
                                      "dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        d = _decayed(p, g, group["weight_decay"])
        mu = group["momentum"]
        if mu == 0:
            _set(p, sgd_update(xp, p.array, d, group["lr"]))
            return
        a, st["momentum_buffer"] = _updates.momentum_step(
            xp, p.array, d, st.get("momentum_buffer"), momentum=mu,
            grad_scale=1.0 - group["dampening"], step=group["lr"],
            nesterov="torch" if group["nesterov"] else None)
        _set(p, a)


class Adam(Optimizer):
    """Adam (Kingma and Ba) with torch's bias correction, AMSGrad, L2 ``weight_decay``
    (``torch.optim.Adam``; ``decoupled_weight_decay=True`` is AdamW).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay
        As ``torch.optim.Adam``.
    foreach, capturable, differentiable, fused
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> opt = pg.optim.Adam([p], lr=0.1)
    >>> p.grad = np.array([3.0])
    >>> _ = opt.step()
    >>> p.array.round(6)  # the first step moves by lr in the gradient's sign
    array([0.9])
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        name = type(self).__name__
        _check_implementation_options(name, {"foreach": foreach, "fused": fused,
                                             "capturable": capturable,
                                             "differentiable": differentiable})
        _lr(name, lr)
        _check(name, eps >= 0.0, f"eps {eps!r}")
        _check(name, weight_decay >= 0.0, f"weight_decay {weight_decay!r}")
        super().__init__(params, dict(lr=lr, betas=_betas(name, betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        t = _counted(p, st, "exp_avg", "exp_avg_sq",
                     *(("max_exp_avg_sq",) if group["amsgrad"] else ()))
        lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
        decoupled = group["decoupled_weight_decay"]
        decay = 1.0 - lr * wd if decoupled else 1.0
        if not decoupled:
            g = _decayed(p, g, wd)
        vhat = st.get("max_exp_avg_sq") if group["amsgrad"] else None
        a, st["exp_avg"], st["exp_avg_sq"], vhat = _updates.adam(
            xp, p.array, g, st["exp_avg"], st["exp_avg_sq"], vhat, lr=lr, beta1=b1, beta2=b2,
            eps=group["eps"], t=t, decay=decay)
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = vhat
        _set(p, a)


class AdamW(Adam):
    """Adam with decoupled weight decay, ``p *= 1 - lr * weight_decay``
    (``torch.optim.AdamW``; default ``weight_decay`` 0.01).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, eps, weight_decay, amsgrad, maximize
        As ``torch.optim.AdamW``.
    foreach, capturable, differentiable, fused
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([0.0])
    >>> _ = pg.optim.AdamW([p], lr=0.1, weight_decay=0.5).step()
    >>> p.array
    array([0.95])
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    """Adamax, Adam with the infinity norm (``torch.optim.Adamax``).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, eps, weight_decay, maximize
        As ``torch.optim.Adamax``.
    foreach, capturable, differentiable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([2.0])
    >>> _ = pg.optim.Adamax([p], lr=0.1).step()
    >>> p.array.round(6)
    array([0.9])
    """

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_implementation_options("Adamax", {"foreach": foreach, "capturable": capturable,
                                                 "differentiable": differentiable})
        _lr("Adamax", lr)
        _check("Adamax", eps >= 0.0, f"eps {eps!r}")
        super().__init__(params, dict(lr=lr, betas=_betas("Adamax", betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        t = _counted(p, st, "exp_avg", "exp_inf")
        b1, b2 = group["betas"]
        g = _decayed(p, g, group["weight_decay"])
        m = st["exp_avg"]
        m += (1.0 - b1) * (g - m)
        st["exp_avg"] = m
        st["exp_inf"] = xp.maximum(st["exp_inf"] * b2, xp.abs(g) + group["eps"])
        clr = group["lr"] / (1.0 - b1**t)
        a = p.array
        a -= clr * (m / st["exp_inf"])
        _set(p, a)


class NAdam(Optimizer):
    """Adam with Nesterov momentum and momentum decay (``torch.optim.NAdam``).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, eps, weight_decay, momentum_decay, decoupled_weight_decay, maximize
        As ``torch.optim.NAdam``.
    foreach, capturable, differentiable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([1.0])
    >>> _ = pg.optim.NAdam([p], lr=0.1).step()
    >>> bool(p.array[0] < 0.9)
    True
    """

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_implementation_options("NAdam", {"foreach": foreach, "capturable": capturable,
                                                "differentiable": differentiable})
        _lr("NAdam", lr)
        _check("NAdam", momentum_decay >= 0.0, f"momentum_decay {momentum_decay!r}")
        super().__init__(params, dict(lr=lr, betas=_betas("NAdam", betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        t = _counted(p, st, "exp_avg", "exp_avg_sq", mu_product=1.0)
        lr, (b1, b2), psi = group["lr"], group["betas"], group["momentum_decay"]
        bc2 = 1.0 - b2**t
        a, g = _weight_decay(p, g, group)
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        st["mu_product"] *= mu
        mp = st["mu_product"]
        m, v, _ = _updates.moments(xp, g, st["exp_avg"], st["exp_avg_sq"], None, b1, b2)
        st["exp_avg"], st["exp_avg_sq"] = m, v
        denom = xp.sqrt(v / bc2) + group["eps"]
        a -= (lr * (1.0 - mu) / (1.0 - mp)) * (g / denom)
        a -= (lr * mu_next / (1.0 - mp * mu_next)) * (m / denom)
        _set(p, a)


class RAdam(Optimizer):
    """Rectified Adam (``torch.optim.RAdam``): plain momentum steps until the variance of
    the adaptive rate is tractable (``rho_t > 5``).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, eps, weight_decay, decoupled_weight_decay, maximize
        As ``torch.optim.RAdam``.
    foreach, capturable, differentiable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([2.0])
    >>> _ = pg.optim.RAdam([p], lr=0.1).step()
    >>> p.array  # first steps: lr times the bias-corrected momentum
    array([0.8])
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_implementation_options("RAdam", {"foreach": foreach, "capturable": capturable,
                                                "differentiable": differentiable})
        _lr("RAdam", lr)
        super().__init__(params, dict(lr=lr, betas=_betas("RAdam", betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        t = _counted(p, st, "exp_avg", "exp_avg_sq")
        lr, (b1, b2) = group["lr"], group["betas"]
        a, g = _weight_decay(p, g, group)
        m, v, _ = _updates.moments(xp, g, st["exp_avg"], st["exp_avg_sq"], None, b1, b2)
        st["exp_avg"], st["exp_avg_sq"] = m, v
        bc1, bc2 = 1.0 - b1**t, 1.0 - b2**t
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * t * b2**t / bc2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(bc2) / (xp.sqrt(v) + group["eps"])
            a -= (m / bc1) * lr * adaptive * rect
        else:
            a -= (m / bc1) * lr
        _set(p, a)


class Adagrad(Optimizer):
    """Adagrad with learning-rate decay and an initial accumulator
    (``torch.optim.Adagrad``).

    A group's own ``initial_accumulator_value`` fills its accumulators (torch fills every
    group's with the constructor's value and ignores the group's); with one value for all
    groups the numbers are torch's.

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize
        As ``torch.optim.Adagrad``.
    foreach, differentiable, fused
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([4.0])
    >>> _ = pg.optim.Adagrad([p], lr=0.5).step()
    >>> p.array.round(6)
    array([0.5])
    """

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_implementation_options("Adagrad", {"foreach": foreach, "fused": fused,
                                                  "differentiable": differentiable})
        _lr("Adagrad", lr)
        _check("Adagrad", lr_decay >= 0.0, f"lr_decay {lr_decay!r}")
        _check("Adagrad", initial_accumulator_value >= 0.0,
               f"initial_accumulator_value {initial_accumulator_value!r}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      maximize=maximize))
        # torch creates the accumulators at construction (they hold the initial value).
        for group in self.param_groups:
            for p in group["params"]:
                if p.array is not None:
                    self._init(p, self.state[p], group)

    def _init(self, p: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        st["step"] = 0
        st["sum"] = p.xp.full_like(p.array, group["initial_accumulator_value"])

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        if not st:
            self._init(p, st, group)
        st["step"] += 1
        g = _decayed(p, g, group["weight_decay"])
        a, st["sum"] = _updates.adagrad(xp, p.array, g, st["sum"], lr=group["lr"],
                                        eps=group["eps"], lr_decay=group["lr_decay"],
                                        t=st["step"])
        _set(p, a)


class Adadelta(Optimizer):
    """Adadelta (Zeiler) with torch's defaults (``lr=1``, ``rho=0.9``)
    (``torch.optim.Adadelta``).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, rho, eps, weight_decay, maximize
        As ``torch.optim.Adadelta``.
    foreach, capturable, differentiable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([1.0])
    >>> _ = pg.optim.Adadelta([p]).step()
    >>> float(p.array[0]) < 1.0
    True
    """

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_implementation_options("Adadelta", {"foreach": foreach, "capturable": capturable,
                                                   "differentiable": differentiable})
        _lr("Adadelta", lr)
        _check("Adadelta", 0.0 <= rho <= 1.0, f"rho {rho!r}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        _counted(p, st, "square_avg", "acc_delta")
        g = _decayed(p, g, group["weight_decay"])
        a, st["square_avg"], st["acc_delta"] = _updates.adadelta(
            xp, p.array, g, st["square_avg"], st["acc_delta"], rho=group["rho"],
            eps=group["eps"], lr=group["lr"])
        _set(p, a)


class RMSprop(Optimizer):
    """RMSprop, optionally centered and with momentum (``torch.optim.RMSprop``).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, alpha, eps, weight_decay, momentum, centered, maximize
        As ``torch.optim.RMSprop``.
    foreach, capturable, differentiable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([1.0])
    >>> _ = pg.optim.RMSprop([p], lr=0.01, alpha=0.75).step()
    >>> p.array.round(6)
    array([0.98])
    """

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_implementation_options("RMSprop", {"foreach": foreach, "capturable": capturable,
                                                  "differentiable": differentiable})
        _lr("RMSprop", lr)
        _check("RMSprop", alpha >= 0.0, f"alpha {alpha!r}")
        _check("RMSprop", momentum >= 0.0, f"momentum {momentum!r}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered,
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        if not st:
            st["step"] = 0
            st["square_avg"] = _zeros(p)
            if group["momentum"] > 0:
                st["momentum_buffer"] = _zeros(p)
            if group["centered"]:
                st["grad_avg"] = _zeros(p)
        st["step"] += 1
        g = _decayed(p, g, group["weight_decay"])
        a, st["square_avg"], ga, buf = _updates.rmsprop(
            xp, p.array, g, st["square_avg"], lr=group["lr"], alpha=group["alpha"],
            eps=group["eps"], grad_avg=st.get("grad_avg"), momentum=group["momentum"],
            buf=st.get("momentum_buffer"))
        if ga is not None:
            st["grad_avg"] = ga
        if buf is not None:
            st["momentum_buffer"] = buf
        _set(p, a)


class Rprop(Optimizer):
    """Resilient backpropagation: per-element step sizes grown or shrunk by the sign of
    successive gradients (``torch.optim.Rprop``).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, etas, step_sizes, maximize
        As ``torch.optim.Rprop`` (``lr`` is the initial step size).
    capturable, foreach, differentiable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0, 1.0]))
    >>> p.grad = np.array([5.0, -0.1])
    >>> _ = pg.optim.Rprop([p], lr=0.25).step()
    >>> p.array
    array([0.75, 1.25])
    """

    def __init__(self, params: Any, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_implementation_options("Rprop", {"foreach": foreach, "capturable": capturable,
                                                "differentiable": differentiable})
        _lr("Rprop", lr)
        etas = tuple(etas)
        _check("Rprop", 0.0 < etas[0] < 1.0 < etas[1], f"etas {etas!r}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=tuple(step_sizes),
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        if not st:
            st["step"] = 0
            st["prev"] = _zeros(p)
            st["step_size"] = xp.full_like(p.array, group["lr"])
        st["step"] += 1
        eminus, eplus = group["etas"]
        smin, smax = group["step_sizes"]
        s = xp.sign(g * st["prev"])
        one = xp.ones_like(s)
        factor = xp.where(s > 0, eplus * one, xp.where(s < 0, eminus * one, one))
        st["step_size"] = xp.clip(st["step_size"] * factor, smin, smax)
        # After a sign change the step is skipped and the gradient forgotten.
        g = xp.where(s < 0, xp.zeros_like(g), g)
        a = p.array
        a -= xp.sign(g) * st["step_size"]
        _set(p, a)
        st["prev"] = _copy(xp, g)


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (``torch.optim.ASGD``); the average is
    ``state["ax"]``.

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, lambd, alpha, t0, weight_decay, maximize
        As ``torch.optim.ASGD``.
    foreach, differentiable, capturable
        Accepted with their default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([1.0])
    >>> opt = pg.optim.ASGD([p], lr=0.1, lambd=0.0)
    >>> _ = opt.step()
    >>> p.array, opt.state[p]["ax"]
    (array([0.9]), array([0.9]))
    """

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_implementation_options("ASGD", {"foreach": foreach, "capturable": capturable,
                                               "differentiable": differentiable})
        _lr("ASGD", lr)
        _check("ASGD", weight_decay >= 0.0, f"weight_decay {weight_decay!r}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        t = _counted(p, st, "ax", eta=float(group["lr"]), mu=1.0)
        lr, lambd = group["lr"], group["lambd"]
        g = _decayed(p, g, group["weight_decay"])
        eta = st["eta"]
        a = p.array
        a *= 1.0 - lambd * eta
        a -= eta * g
        _set(p, a)
        if st["mu"] != 1:
            ax = st["ax"]
            ax += (a - ax) * st["mu"]
            st["ax"] = ax
        else:
            st["ax"] = _copy(xp, a)
        st["eta"] = lr / ((1.0 + lambd * lr * t) ** group["alpha"])
        st["mu"] = 1.0 / max(1.0, t - group["t0"])


class SparseAdam(Optimizer):
    """``torch.optim.SparseAdam`` for dense gradients.

    portagrad has no sparse gradients: an embedding's gradient is a dense array. torch's
    SparseAdam updates only the moments and parameters of the entries present in the
    sparse gradient; here every entry is present: the numbers are torch's SparseAdam's
    for a sparse gradient that holds every entry (its ``eps`` is added before the bias
    correction, so they differ slightly from Adam's).

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, eps, maximize
        As ``torch.optim.SparseAdam``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([3.0])
    >>> _ = pg.optim.SparseAdam([p], lr=0.1).step()
    >>> p.array.round(6)
    array([0.9])
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        _check("SparseAdam", lr > 0.0, f"learning rate {lr!r}")
        _check("SparseAdam", eps > 0.0, f"eps {eps!r}")
        super().__init__(params, dict(lr=lr, betas=_betas("SparseAdam", betas), eps=eps,
                                      maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        t = _counted(p, st, "exp_avg", "exp_avg_sq")
        b1, b2 = group["betas"]
        # SparseAdam adds eps to sqrt(v) before the bias correction (unlike Adam).
        a, st["exp_avg"], st["exp_avg_sq"], _ = _updates.adam(
            p.xp, p.array, g, st["exp_avg"], st["exp_avg_sq"], None, lr=group["lr"], beta1=b1,
            beta2=b2, eps=group["eps"], t=t, eps_bias_corrected=False)
        _set(p, a)


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern) as ``torch.optim.Adafactor``: factored second
    moments for matrices (rows and columns of the last two axes), relative step sizes.

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, beta2_decay, eps, d, weight_decay, maximize
        As ``torch.optim.Adafactor`` (``eps[0]`` ``None``: the machine epsilon of the
        parameter's dtype).
    foreach
        Accepted with its default meaning only.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.ones((2, 3)))
    >>> p.grad = np.ones((2, 3))
    >>> opt = pg.optim.Adafactor([p])
    >>> _ = opt.step()
    >>> opt.state[p]["row_var"].shape, opt.state[p]["col_var"].shape
    ((2, 1), (1, 3))
    """

    def __init__(self, params: Any, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        _check_implementation_options("Adafactor", {"foreach": foreach})
        _lr("Adafactor", lr)
        _check("Adafactor", beta2_decay <= 0.0, f"beta2_decay {beta2_decay!r} (<= 0)")
        _check("Adafactor", d >= 1.0, f"d {d!r} (>= 1)")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        if not st:
            st["step"] = 0
            if g.ndim > 1:
                st["row_var"] = xp.zeros((*g.shape[:-1], 1), dtype=g.dtype, device=g.device)
                st["col_var"] = xp.zeros((*g.shape[:-2], 1, g.shape[-1]), dtype=g.dtype,
                                         device=g.device)
            else:
                st["variance"] = xp.zeros_like(g)
        st["step"] += 1
        t = st["step"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(xp.finfo(p.array.dtype).eps)
        lr = group["lr"]
        beta_t = t ** group["beta2_decay"]
        rho = min(lr, 1.0 / math.sqrt(t))
        a = p.array
        n = math.prod(a.shape)
        alpha = max(eps2, float(xp.sqrt(xp.sum(a * a))) / math.sqrt(n)) * rho
        if group["weight_decay"] != 0:
            a *= 1.0 - lr * group["weight_decay"]
        g2 = g * g
        if g.ndim > 1:
            row, col = st["row_var"], st["col_var"]
            row += beta_t * (xp.sum(g2, axis=-1, keepdims=True) / g.shape[-1] - row)
            col += beta_t * (xp.sum(g2, axis=-2, keepdims=True) / g.shape[-2] - col)
            st["row_var"], st["col_var"] = row, col
            var = (row @ col) / xp.clip(xp.mean(row, axis=-2, keepdims=True), min=eps1)
        else:
            var = st["variance"]
            var += beta_t * (g2 - var)
            st["variance"] = var
            var = _copy(xp, var)
        update = g / xp.sqrt(xp.clip(var, min=eps1 * eps1))
        denom = max(1.0, float(xp.sqrt(xp.sum(update * update))) / (math.sqrt(n) * group["d"]))
        a -= (alpha / denom) * update
        _set(p, a)


class Muon(Optimizer):
    """Muon (``torch.optim.Muon``): momentum, then the update orthogonalised by a
    Newton-Schulz iteration, for 2-D parameters.

    The Newton-Schulz iteration runs in the parameter's dtype; torch runs it in
    bfloat16, so the two agree to bfloat16's precision only.

    Parameters
    ----------
    params
        Parameters or parameter groups (2-D each).
    lr, weight_decay, momentum, nesterov, ns_coefficients, eps, ns_steps, adjust_lr_fn
        As ``torch.optim.Muon``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.zeros((2, 2)))
    >>> p.grad = np.eye(2)
    >>> _ = pg.optim.Muon([p], lr=0.1, weight_decay=0.0).step()
    >>> bool(np.all(np.diag(p.array) < 0))
    True
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        _lr("Muon", lr)
        _check("Muon", momentum >= 0.0, f"momentum {momentum!r}")
        _check("Muon", weight_decay >= 0.0, f"weight_decay {weight_decay!r}")
        _check("Muon", adjust_lr_fn in (None, "original", "match_rms_adamw"),
               f"adjust_lr_fn {adjust_lr_fn!r} (None, 'original' or 'match_rms_adamw')")
        _check("Muon", 0 < ns_steps < 100, f"ns_steps {ns_steps!r} (1 to 99)")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=tuple(ns_coefficients),
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.array is not None and p.array.ndim != 2:
                    raise PortagradValueError(f"Muon(params): expected 2-D parameters, got "
                                              f"shape {tuple(p.array.shape)}")

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        if g.ndim != 2:
            raise PortagradValueError(f"Muon.step: expected 2-D gradients, got shape "
                                      f"{tuple(g.shape)}")
        if not st:
            st["momentum_buffer"] = _zeros(p)
        mu = group["momentum"]
        buf = st["momentum_buffer"]
        buf += (1.0 - mu) * (g - buf)
        st["momentum_buffer"] = buf
        u = g + mu * (buf - g) if group["nesterov"] else buf
        a_, b_, c_ = group["ns_coefficients"]
        tall = u.shape[0] > u.shape[1]
        x = u.T if tall else u
        x = x / max(float(xp.sqrt(xp.sum(x * x))), group["eps"])
        for _ in range(group["ns_steps"]):
            gram = x @ x.T
            x = a_ * x + (b_ * gram + c_ * (gram @ gram)) @ x
        if tall:
            x = x.T
        rows, cols = p.array.shape[:2]
        fn = group["adjust_lr_fn"]
        ratio = (math.sqrt(max(1.0, rows / cols)) if fn in (None, "original")
                 else 0.2 * math.sqrt(max(rows, cols)))
        a = p.array
        a *= 1.0 - group["lr"] * group["weight_decay"]
        a -= (group["lr"] * ratio) * x
        _set(p, a)


class Lion(Optimizer):
    """Lion (Chen et al. 2023), not in ``torch.optim``:
    ``p -= lr * (sign(b1*m + (1-b1)*g) + wd*p)``, ``m = b2*m + (1-b2)*g``.

    Parameters
    ----------
    params
        Parameters or parameter groups.
    lr, betas, weight_decay, maximize
        Step size, the two interpolation factors, decoupled weight decay, ascent.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> p.grad = np.array([5.0])
    >>> _ = pg.optim.Lion([p], lr=0.1).step()
    >>> p.array
    array([0.9])
    """

    def __init__(self, params: Any, lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        _lr("Lion", lr)
        super().__init__(params, dict(lr=lr, betas=_betas("Lion", betas),
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, p: Any, g: Any, st: dict[str, Any], group: dict[str, Any]) -> None:
        xp = p.xp
        if not st:
            st["exp_avg"] = _zeros(p)
        b1, b2 = group["betas"]
        m = st["exp_avg"]
        u = xp.sign(b1 * m + (1.0 - b1) * g)
        a = p.array
        if group["weight_decay"]:
            a *= 1.0 - group["lr"] * group["weight_decay"]
        a -= group["lr"] * u
        _set(p, a)
        m *= b2
        m += (1.0 - b2) * g
        st["exp_avg"] = m
