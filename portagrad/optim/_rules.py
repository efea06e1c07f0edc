"""Update rules. Each mutates its arrays in place where the library allows and stores them
back (``st["m"] = m``), so immutable arrays work too; temporaries are kept to one or two
per parameter."""

from __future__ import annotations

import math
from typing import Any

from ..xp._optim import adam_update, momentum_update, sgd_update
from ._optimizer import Optimizer

__all__ = ["SGD", "MomentumSGD", "Nesterov", "Adam", "AdamW", "RMSprop", "AdaGrad",
           "AdaDelta", "Lion"]


def _zeros_like(p: Any) -> Any:
    return p.xp.zeros_like(p.array)


class SGD(Optimizer):
    """Plain stochastic gradient descent: ``p -= lr * g``.

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

    def __init__(self, params: Any = None, lr: float = 0.01) -> None:
        super().__init__(params, lr)

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        p.array = sgd_update(p.xp, p.array, g, self.lr)


class MomentumSGD(Optimizer):
    """SGD with momentum (Chainer's form): ``v = momentum * v - lr * g; p += v``."""

    state_names = ("v",)
    hyper_names = ("momentum",)

    def __init__(self, params: Any = None, lr: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__(params, lr, momentum=float(momentum))

    def init_state(self, p: Any) -> dict[str, Any]:
        return {"v": _zeros_like(p)}

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        p.array, st["v"] = momentum_update(p.xp, p.array, g, st["v"], self.lr, self.momentum)


class Nesterov(MomentumSGD):
    """Nesterov accelerated gradient: ``v = mu * v - lr * g; p += mu * v - lr * g``."""

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        v = st["v"]
        v *= self.momentum
        v -= self.lr * g
        st["v"] = v
        a = p.array
        a += self.momentum * v - self.lr * g
        p.array = a


class Adam(Optimizer):
    """Adam (Kingma and Ba), with bias correction folded into the step size.

    ``weight_decay`` here is L2 added to the gradient; :class:`AdamW` decouples it.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([1.0]))
    >>> opt = pg.optim.Adam([p], lr=0.1)
    >>> p.grad = np.array([3.0])
    >>> _ = opt.step()
    >>> p.array  # the first Adam step moves by lr in the gradient's sign
    array([0.9])
    """

    hyper_names = ("beta1", "beta2", "eps", "weight_decay", "amsgrad")

    def __init__(self, params: Any = None, lr: float = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.0,
                 amsgrad: bool = False) -> None:
        super().__init__(params, lr, beta1=float(beta1), beta2=float(beta2), eps=float(eps),
                         weight_decay=float(weight_decay), amsgrad=bool(amsgrad))

    @property
    def state_names(self) -> tuple[str, ...]:
        return ("m", "v", "vhat") if self.amsgrad else ("m", "v")

    def init_state(self, p: Any) -> dict[str, Any]:
        st = {"m": _zeros_like(p), "v": _zeros_like(p)}
        if self.amsgrad:
            st["vhat"] = _zeros_like(p)
        return st

    def _step(self, p: Any, g: Any, st: dict[str, Any], decay: float) -> None:
        t = self.t
        c2 = math.sqrt(1.0 - self.beta2**t)
        step = self.lr * c2 / (1.0 - self.beta1**t)
        # eps is added to sqrt(v) after bias correction, as in the paper.
        p.array, st["m"], st["v"], vhat = adam_update(
            p.xp, p.array, g, st["m"], st["v"], st.get("vhat") if self.amsgrad else None,
            self.beta1, self.beta2, self.eps * c2, step, decay)
        if self.amsgrad:
            st["vhat"] = vhat

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        if self.weight_decay:
            g = g + self.weight_decay * p.array
        self._step(p, g, st, 1.0)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p -= lr * weight_decay * p`` besides Adam."""

    def __init__(self, params: Any = None, lr: float = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01,
                 amsgrad: bool = False) -> None:
        super().__init__(params, lr, beta1, beta2, eps, weight_decay, amsgrad)

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        self._step(p, g, st, 1.0 - self.lr * self.weight_decay)


class RMSprop(Optimizer):
    """RMSprop: ``ms = alpha * ms + (1 - alpha) * g**2; p -= lr * g / (sqrt(ms) + eps)``."""

    state_names = ("ms",)
    hyper_names = ("alpha", "eps")

    def __init__(self, params: Any = None, lr: float = 0.01, alpha: float = 0.99,
                 eps: float = 1e-8) -> None:
        super().__init__(params, lr, alpha=float(alpha), eps=float(eps))

    def init_state(self, p: Any) -> dict[str, Any]:
        return {"ms": _zeros_like(p)}

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        ms = st["ms"]
        ms *= self.alpha
        ms += (1.0 - self.alpha) * (g * g)
        st["ms"] = ms
        a = p.array
        a -= self.lr * g / (p.xp.sqrt(ms) + self.eps)
        p.array = a


class AdaGrad(Optimizer):
    """AdaGrad: ``h += g**2; p -= lr * g / (sqrt(h) + eps)``."""

    state_names = ("h",)
    hyper_names = ("eps",)

    def __init__(self, params: Any = None, lr: float = 0.01, eps: float = 1e-8) -> None:
        super().__init__(params, lr, eps=float(eps))

    def init_state(self, p: Any) -> dict[str, Any]:
        return {"h": _zeros_like(p)}

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        h = st["h"]
        h += g * g
        st["h"] = h
        a = p.array
        a -= self.lr * g / (p.xp.sqrt(h) + self.eps)
        p.array = a


class AdaDelta(Optimizer):
    """AdaDelta (Zeiler): no learning rate needed (``lr`` scales the step, default 1)."""

    state_names = ("msg", "msdx")
    hyper_names = ("rho", "eps")

    def __init__(self, params: Any = None, lr: float = 1.0, rho: float = 0.95,
                 eps: float = 1e-6) -> None:
        super().__init__(params, lr, rho=float(rho), eps=float(eps))

    def init_state(self, p: Any) -> dict[str, Any]:
        return {"msg": _zeros_like(p), "msdx": _zeros_like(p)}

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        xp = p.xp
        msg, msdx = st["msg"], st["msdx"]
        msg *= self.rho
        msg += (1.0 - self.rho) * (g * g)
        dx = xp.sqrt((msdx + self.eps) / (msg + self.eps)) * g
        msdx *= self.rho
        msdx += (1.0 - self.rho) * (dx * dx)
        st["msg"], st["msdx"] = msg, msdx
        a = p.array
        a -= self.lr * dx
        p.array = a


class Lion(Optimizer):
    """Lion (Chen et al. 2023): ``p -= lr * (sign(b1*m + (1-b1)*g) + wd*p)``,
    ``m = b2*m + (1-b2)*g``."""

    state_names = ("m",)
    hyper_names = ("beta1", "beta2", "weight_decay")

    def __init__(self, params: Any = None, lr: float = 1e-4, beta1: float = 0.9,
                 beta2: float = 0.99, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr, beta1=float(beta1), beta2=float(beta2),
                         weight_decay=float(weight_decay))

    def init_state(self, p: Any) -> dict[str, Any]:
        return {"m": _zeros_like(p)}

    def update_one(self, p: Any, g: Any, st: dict[str, Any]) -> None:
        xp = p.xp
        m = st["m"]
        u = xp.sign(self.beta1 * m + (1.0 - self.beta1) * g)
        a = p.array
        if self.weight_decay:
            a *= 1.0 - self.lr * self.weight_decay
        a -= self.lr * u
        p.array = a
        m *= self.beta2
        m += (1.0 - self.beta2) * g
        st["m"] = m
