"""Chainer 7.8's fifteen gradient methods and their update rules.

The methods PyTorch also has (momentum SGD, NesterovAG, AdaGrad, AdaDelta, RMSprop,
RMSpropGraves, Adam and its variants) run the shared updates of
:mod:`portagrad.optim._updates` with Chainer's options, so float64 trajectories agree
with Chainer's to rounding: Chainer's defaults (``AdaGrad`` lr 0.001, ``Adam`` alpha
0.001), its eps placements (Adam adds eps to ``sqrt(v)`` without bias correction;
RMSpropGraves inside the square root), its velocities that hold the lr, its Nesterov
form, and its decoupled weight decay (``Adam(weight_decay_rate=)`` decays by
``eta * rate``, not by ``alpha * rate``). SMORMS3 and MSVAG are Chainer's alone.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import PortagradValueError
from ...optim import _updates
from ...xp import namespace_of
from ...xp._optim import sgd_update
from ._base import (
    GradientMethod,
    Hyperparameter,
    HyperparameterProxy,
    UpdateRule,
    _array,
    write_data,
)

__all__ = ["SGD", "MomentumSGD", "CorrectedMomentumSGD", "NesterovAG", "AdaGrad",
           "AdaDelta", "RMSprop", "RMSpropGraves", "SMORMS3", "MSVAG", "Adam", "AdamW",
           "AMSGrad", "AdaBound", "AMSBound", "SGDRule", "MomentumSGDRule",
           "CorrectedMomentumSGDRule", "NesterovAGRule", "AdaGradRule", "AdaDeltaRule",
           "RMSpropRule", "RMSpropGravesRule", "SMORMS3Rule", "MSVAGRule", "AdamRule"]


def _defaults(**values: Any) -> Hyperparameter:
    hp = Hyperparameter()
    for k, v in values.items():
        setattr(hp, k, v)
    return hp


def _rule_init(rule: UpdateRule, parent: Any, given: dict[str, Any]) -> None:
    """Follow ``parent`` (an optimizer's hyperparameters) or the rule's own defaults, and
    set the values given."""
    UpdateRule.__init__(rule, parent or type(rule)._defaults)
    for k, v in given.items():
        if v is not None:
            setattr(rule.hyperparam, k, v)


def _zeros(param: Any) -> Any:
    a = _array(param)
    return namespace_of(a).zeros_like(a)


def _store(param: Any, new: Any) -> None:
    """Keep an update made in place; write one that came back as a new array."""
    if new is not _array(param):
        write_data(param, new)


def _method_init(opt: GradientMethod, **values: Any) -> None:
    GradientMethod.__init__(opt)
    for k, v in values.items():
        setattr(opt.hyperparam, k, v)


class _Method(GradientMethod):
    """A gradient method whose rules are ``_rule``: each name of ``_rule._defaults`` is a
    :class:`HyperparameterProxy` of the method, and :meth:`create_update_rule` makes a
    ``_rule`` that follows the method's hyperparameters."""

    _rule: type[UpdateRule]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        rule = cls.__dict__.get("_rule")
        if rule is not None:
            for name in rule._defaults.get_dict():
                if name not in vars(cls):
                    setattr(cls, name, HyperparameterProxy(name))

    def create_update_rule(self) -> UpdateRule:
        return self._rule(self.hyperparam)


# -- SGD family ------------------------------------------------------------------------

_sgd = _defaults(lr=0.01)


class SGDRule(UpdateRule):
    """``param -= lr * grad``."""

    is_elementwise = True
    _defaults = _sgd

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"lr": lr})

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        _store(param, sgd_update(namespace_of(g), _array(param), g, self.hyperparam.lr))


class SGD(_Method):
    """Vanilla stochastic gradient descent.

    Parameters
    ----------
    lr
        Learning rate.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.SGD().lr
    0.01
    """

    _rule = SGDRule

    def __init__(self, lr: float = _sgd.lr) -> None:
        _method_init(self, lr=lr)


_momentum = _defaults(lr=0.01, momentum=0.9)


def _momentum_step(rule: UpdateRule, param: Any, g: Any, *, grad_scale: float, step: float,
                   nesterov: str | None = None) -> None:
    """Chainer's velocity ``v`` is the shared momentum buffer with ``grad_scale < 0``."""
    new, rule.state["v"] = _updates.momentum_step(
        namespace_of(g), _array(param), g, rule.state["v"], momentum=rule.hyperparam.momentum,
        grad_scale=grad_scale, step=step, nesterov=nesterov)
    _store(param, new)


class MomentumSGDRule(UpdateRule):
    """``v = momentum * v - lr * grad; param += v``."""

    is_elementwise = True
    _defaults = _momentum

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, momentum: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"lr": lr, "momentum": momentum})

    def init_state(self, param: Any) -> None:
        self.state["v"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        _momentum_step(self, param, g, grad_scale=-self.hyperparam.lr, step=-1.0)


class MomentumSGD(_Method):
    """Classical momentum SGD (the lr sits inside the velocity).

    Parameters
    ----------
    lr
        Learning rate.
    momentum
        Decay of the velocity.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> opt = optimizers.MomentumSGD(lr=0.1)
    >>> opt.lr, opt.momentum
    (0.1, 0.9)
    """

    _rule = MomentumSGDRule

    def __init__(self, lr: float = _momentum.lr, momentum: float = _momentum.momentum) -> None:
        _method_init(self, lr=lr, momentum=momentum)


class CorrectedMomentumSGDRule(UpdateRule):
    """``v = momentum * v - grad; param += lr * v`` (Goyal et al.'s correction)."""

    is_elementwise = True
    _defaults = _momentum

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, momentum: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"lr": lr, "momentum": momentum})

    def init_state(self, param: Any) -> None:
        self.state["v"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        _momentum_step(self, param, g, grad_scale=-1.0, step=-self.hyperparam.lr)


class CorrectedMomentumSGD(_Method):
    """Momentum SGD with the velocity outside the lr, so changing lr mid-run is smooth.

    Parameters
    ----------
    lr
        Learning rate.
    momentum
        Decay of the velocity.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.CorrectedMomentumSGD().momentum
    0.9
    """

    _rule = CorrectedMomentumSGDRule

    def __init__(self, lr: float = _momentum.lr, momentum: float = _momentum.momentum) -> None:
        _method_init(self, lr=lr, momentum=momentum)


class NesterovAGRule(UpdateRule):
    """``v = momentum * v - lr * g; param += momentum**2 * v - (1 + momentum) * lr * g``."""

    is_elementwise = True
    _defaults = _momentum

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, momentum: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"lr": lr, "momentum": momentum})

    def init_state(self, param: Any) -> None:
        self.state["v"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        _momentum_step(self, param, g, grad_scale=-self.hyperparam.lr, step=-1.0,
                       nesterov="chainer")


class NesterovAG(_Method):
    """Nesterov's accelerated gradient in Sutskever's form (Chainer's, not PyTorch's).

    Parameters
    ----------
    lr
        Learning rate.
    momentum
        Decay of the velocity.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.NesterovAG(lr=0.1).lr
    0.1
    """

    _rule = NesterovAGRule

    def __init__(self, lr: float = _momentum.lr, momentum: float = _momentum.momentum) -> None:
        _method_init(self, lr=lr, momentum=momentum)


# -- adaptive methods ------------------------------------------------------------------

_adagrad = _defaults(lr=0.001, eps=1e-8)


class AdaGradRule(UpdateRule):
    """``h += g * g; param -= lr * g / (sqrt(h) + eps)``."""

    is_elementwise = True
    _defaults = _adagrad

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, eps: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"lr": lr, "eps": eps})

    def init_state(self, param: Any) -> None:
        self.state["h"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        hp = self.hyperparam
        new, self.state["h"] = _updates.adagrad(namespace_of(g), _array(param), g,
                                                self.state["h"], lr=hp.lr, eps=hp.eps)
        _store(param, new)


class AdaGrad(_Method):
    """AdaGrad (Duchi et al.), Chainer's default lr 0.001.

    Parameters
    ----------
    lr
        Learning rate.
    eps
        Added to ``sqrt(h)``.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.AdaGrad().lr
    0.001
    """

    _rule = AdaGradRule

    def __init__(self, lr: float = _adagrad.lr, eps: float = _adagrad.eps) -> None:
        _method_init(self, lr=lr, eps=eps)


_adadelta = _defaults(rho=0.95, eps=1e-6)


class AdaDeltaRule(UpdateRule):
    """Zeiler's ADADELTA (no learning rate)."""

    is_elementwise = True
    _defaults = _adadelta

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 rho: float | None = None, eps: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"rho": rho, "eps": eps})

    def init_state(self, param: Any) -> None:
        self.state["msg"] = _zeros(param)
        self.state["msdx"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        hp = self.hyperparam
        new, self.state["msg"], self.state["msdx"] = _updates.adadelta(
            namespace_of(g), _array(param), g, self.state["msg"], self.state["msdx"],
            rho=hp.rho, eps=hp.eps)
        _store(param, new)


class AdaDelta(_Method):
    """Zeiler's ADADELTA.

    Parameters
    ----------
    rho
        Decay of the running averages.
    eps
        Added inside both square roots.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.AdaDelta().rho
    0.95
    """

    _rule = AdaDeltaRule

    def __init__(self, rho: float = _adadelta.rho, eps: float = _adadelta.eps) -> None:
        _method_init(self, rho=rho, eps=eps)


_rmsprop = _defaults(lr=0.01, alpha=0.99, eps=1e-8, eps_inside_sqrt=False)


def _eps_in_dtype(eps: float, like: Any, name: str) -> float:
    """Chainer refuses an eps that rounds to zero in the parameter's dtype."""
    xp = namespace_of(like)
    if eps != 0 and float(xp.asarray(eps, dtype=like.dtype)) == 0:
        raise PortagradValueError(f"{name}(eps): {eps} is too small for {like.dtype}; "
                                  f"it rounds to zero")
    return eps


class RMSpropRule(UpdateRule):
    """``ms = alpha * ms + (1 - alpha) * g * g; param -= lr * g / (sqrt(ms) + eps)``."""

    is_elementwise = True
    _defaults = _rmsprop

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, alpha: float | None = None,
                 eps: float | None = None, eps_inside_sqrt: bool | None = None) -> None:
        _rule_init(self, parent_hyperparam,
                   {"lr": lr, "alpha": alpha, "eps": eps, "eps_inside_sqrt": eps_inside_sqrt})

    def init_state(self, param: Any) -> None:
        self.state["ms"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        g = param.grad
        if g is None:
            return
        hp = self.hyperparam
        new, self.state["ms"], _, _ = _updates.rmsprop(
            namespace_of(g), _array(param), g, self.state["ms"], lr=hp.lr, alpha=hp.alpha,
            eps=_eps_in_dtype(hp.eps, g, "RMSprop"), eps_inside_sqrt=hp.eps_inside_sqrt)
        _store(param, new)


class RMSprop(_Method):
    """RMSprop (Tieleman and Hinton); eps outside the root unless ``eps_inside_sqrt``.

    Parameters
    ----------
    lr
        Learning rate.
    alpha
        Decay of the mean square.
    eps
        Added to ``sqrt(ms)`` (or to ``ms`` with ``eps_inside_sqrt``).
    eps_inside_sqrt
        Divide by ``sqrt(ms + eps)``.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.RMSprop().alpha
    0.99
    """

    _rule = RMSpropRule

    def __init__(self, lr: float = _rmsprop.lr, alpha: float = _rmsprop.alpha,
                 eps: float = _rmsprop.eps,
                 eps_inside_sqrt: bool = _rmsprop.eps_inside_sqrt) -> None:
        _method_init(self, lr=lr, alpha=alpha, eps=eps, eps_inside_sqrt=eps_inside_sqrt)


_graves = _defaults(lr=1e-4, alpha=0.95, momentum=0.9, eps=1e-4)


class RMSpropGravesRule(UpdateRule):
    """Graves' RMSprop: centred mean square, eps inside the root, momentum."""

    is_elementwise = True
    _defaults = _graves

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, alpha: float | None = None,
                 momentum: float | None = None, eps: float | None = None) -> None:
        _rule_init(self, parent_hyperparam,
                   {"lr": lr, "alpha": alpha, "momentum": momentum, "eps": eps})

    def init_state(self, param: Any) -> None:
        for k in ("n", "g", "delta"):
            self.state[k] = _zeros(param)

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        hp = self.hyperparam
        st = self.state
        new, st["n"], st["g"], st["delta"] = _updates.rmsprop(
            namespace_of(grad), _array(param), grad, st["n"], lr=hp.lr, alpha=hp.alpha,
            eps=hp.eps, eps_inside_sqrt=True, grad_avg=st["g"], momentum=hp.momentum,
            buf=st["delta"], lr_in_buffer=True)
        _store(param, new)


class RMSpropGraves(_Method):
    """Alex Graves' RMSprop (arXiv:1308.0850).

    Parameters
    ----------
    lr
        Learning rate.
    alpha
        Decay of the first and second moments of the gradient.
    momentum
        Decay of the step.
    eps
        Added inside the square root.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.RMSpropGraves().lr
    0.0001
    """

    _rule = RMSpropGravesRule

    def __init__(self, lr: float = _graves.lr, alpha: float = _graves.alpha,
                 momentum: float = _graves.momentum, eps: float = _graves.eps) -> None:
        _method_init(self, lr=lr, alpha=alpha, momentum=momentum, eps=eps)


_smorms3 = _defaults(lr=0.001, eps=1e-16)


class SMORMS3Rule(UpdateRule):
    """Simon Funk's SMORMS3."""

    is_elementwise = True
    _defaults = _smorms3

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, eps: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {"lr": lr, "eps": eps})

    def init_state(self, param: Any) -> None:
        a = _array(param)
        self.state["mem"] = namespace_of(a).ones_like(a)
        self.state["g"] = _zeros(param)
        self.state["g2"] = _zeros(param)

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        xp = namespace_of(grad)
        hp = self.hyperparam
        mem, g, g2 = self.state["mem"], self.state["g"], self.state["g2"]
        r = 1 / (mem + 1)
        g = (1 - r) * g + r * grad
        g2 = (1 - r) * g2 + r * grad * grad
        x = g * g / (g2 + hp.eps)
        write_data(param, param.data - grad * xp.minimum(x, hp.lr) / (xp.sqrt(g2) + hp.eps))
        mem = 1 + mem * (1 - x)
        self.state["mem"], self.state["g"], self.state["g2"] = mem, g, g2


class SMORMS3(_Method):
    """SMORMS3 (http://sifter.org/~simon/journal/20150420.html).

    Parameters
    ----------
    lr
        Learning rate (the cap of the per-element step factor).
    eps
        Small value for stability.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.SMORMS3().eps
    1e-16
    """

    _rule = SMORMS3Rule

    def __init__(self, lr: float = _smorms3.lr, eps: float = _smorms3.eps) -> None:
        _method_init(self, lr=lr, eps=eps)


_msvag = _defaults(lr=0.1, beta=0.9, eta=1.0, weight_decay_rate=0)


class MSVAGRule(UpdateRule):
    """M-SVAG (Balles and Hennig), with decoupled weight decay."""

    is_elementwise = True
    _defaults = _msvag

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 lr: float | None = None, beta: float | None = None,
                 eta: float | None = None, weight_decay_rate: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {
            "lr": lr, "beta": beta, "eta": eta, "weight_decay_rate": weight_decay_rate})
        self.beta_power = self.hyperparam.beta

    def init_state(self, param: Any) -> None:
        self.state["m"] = _zeros(param)
        self.state["v"] = _zeros(param)

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        # Chainer keeps beta_power outside the state; it is a function of t.
        self.beta_power = self.hyperparam.beta ** (self.t + 1)

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        xp = namespace_of(grad)
        hp = self.hyperparam
        bp = self.beta_power
        rho = (((1.0 - hp.beta) ** 2) * (1.0 - bp ** 2)
               / (((1.0 - bp) ** 2) * (1.0 - hp.beta ** 2)))
        rho = min(rho, 0.9999)
        m = self.state["m"] + (1 - hp.beta) * (grad - self.state["m"])
        v = self.state["v"] + (1 - hp.beta) * (grad * grad - self.state["v"])
        self.state["m"], self.state["v"] = m, v
        mt = m / (1 - bp)
        vt = v / (1 - bp)
        mt2 = mt ** 2
        s = (vt - mt2) / (1 - rho)
        den = mt2 + rho * s
        zero = den == 0
        safe = xp.where(zero, xp.ones_like(den), den)
        # Chainer divides and then maps NaN (0/0) to 0; x/0 with x > 0 clips to 1.
        ratio = xp.where(zero, xp.where(mt2 > 0, xp.ones_like(den), xp.zeros_like(den)),
                         mt2 / safe)
        factor = xp.clip(ratio, 0, 1)
        factor = xp.where(xp.isnan(factor), xp.zeros_like(factor), factor)
        data = param.data
        write_data(param, data - hp.eta * (hp.lr * mt * factor + hp.weight_decay_rate * data))
        self.beta_power = bp * hp.beta


class MSVAG(_Method):
    """M-SVAG (arXiv:1705.07774), with AdamW's decoupled weight decay.

    Parameters
    ----------
    lr
        Learning rate.
    beta
        Decay of the first and second moments.
    eta
        Schedule multiplier.
    weight_decay_rate
        Decoupled weight decay (scaled by ``eta``, not ``lr``).

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.MSVAG().lr
    0.1
    """

    _rule = MSVAGRule

    def __init__(self, lr: float = _msvag.lr, beta: float = _msvag.beta,
                 eta: float = _msvag.eta,
                 weight_decay_rate: float = _msvag.weight_decay_rate) -> None:
        _method_init(self, lr=lr, beta=beta, eta=eta, weight_decay_rate=weight_decay_rate)


# -- Adam and its variants -------------------------------------------------------------

_adam = _defaults(alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-8, eta=1.0,
                  weight_decay_rate=0, amsgrad=False, adabound=False, final_lr=0.1,
                  gamma=1e-3)


def _alpha_t(hp: Any, t: int) -> float:
    if t == 0:
        raise RuntimeError("Can't determine the learning rate of Adam optimizer because "
                           "the update steps have not been started.")
    fix1 = 1.0 - math.pow(hp.beta1, t)
    fix2 = 1.0 - math.pow(hp.beta2, t)
    return hp.alpha * math.sqrt(fix2) / fix1


class AdamRule(UpdateRule):
    """Adam's update with Chainer's options: AMSGrad, AdaBound, decoupled weight decay.

    ``param = (1 - eta * weight_decay_rate) * param - eta * step * m`` with
    ``step = alpha_t / (sqrt(v) + eps)`` (clipped to AdaBound's bounds).
    """

    is_elementwise = True
    _defaults = _adam

    def __init__(self, parent_hyperparam: Hyperparameter | None = None,
                 alpha: float | None = None, beta1: float | None = None,
                 beta2: float | None = None, eps: float | None = None,
                 eta: float | None = None, weight_decay_rate: float | None = None,
                 amsgrad: bool | None = None, adabound: bool | None = None,
                 final_lr: float | None = None, gamma: float | None = None) -> None:
        _rule_init(self, parent_hyperparam, {
            "alpha": alpha, "beta1": beta1, "beta2": beta2, "eps": eps, "eta": eta,
            "weight_decay_rate": weight_decay_rate, "amsgrad": amsgrad,
            "adabound": adabound, "final_lr": final_lr, "gamma": gamma})
        if self.hyperparam.adabound:
            self.initial_alpha = self.hyperparam.alpha

    def init_state(self, param: Any) -> None:
        self.state["m"] = _zeros(param)
        self.state["v"] = _zeros(param)
        if self.hyperparam.amsgrad:
            self.state["vhat"] = _zeros(param)

    @property
    def alpha_t(self) -> float:
        """The bias-corrected step size at this rule's step ``t``."""
        return _alpha_t(self.hyperparam, self.t)

    @property
    def lr(self) -> float:
        """Chainer's old name of :attr:`alpha_t`."""
        return self.alpha_t

    @property
    def bounds(self) -> tuple[float, float]:
        """AdaBound's ``(lower, upper)`` step bounds at step ``t``."""
        if self.t == 0:
            raise RuntimeError("Can't determine the bounds of AdaBound optimizer because "
                               "the update steps have not been started.")
        hp = self.hyperparam
        final_lr = hp.final_lr * hp.alpha / self.initial_alpha
        lower = final_lr * (1.0 - 1.0 / (hp.gamma * self.t + 1))
        upper = final_lr * (1.0 + 1.0 / (hp.gamma * self.t))
        return lower, upper

    def update_core(self, param: Any) -> None:
        grad = param.grad
        if grad is None:
            return
        xp = namespace_of(grad)
        hp = self.hyperparam
        dtype = param.data.dtype
        interm = xp.float32 if dtype == getattr(xp, "float16", None) else dtype
        _eps_in_dtype(hp.eps, xp.zeros((), dtype=interm), "Adam")
        st = self.state

        def cast(a: Any, to: Any) -> Any:
            return a if a is None or a.dtype == to else xp.astype(a, to)

        new, m, v, vhat = _updates.adam(
            xp, cast(_array(param), interm), cast(grad, interm), cast(st["m"], interm),
            cast(st["v"], interm), cast(st.get("vhat"), interm), lr=hp.alpha,
            beta1=hp.beta1, beta2=hp.beta2, eps=hp.eps, t=self.t,
            decay=1.0 - hp.eta * hp.weight_decay_rate, eps_bias_corrected=False, schedule=hp.eta,
            bounds=self.bounds if hp.adabound else None)
        st["m"], st["v"] = cast(m, dtype), cast(v, dtype)
        if hp.amsgrad:
            st["vhat"] = cast(vhat, dtype)
        _store(param, cast(new, dtype))


class Adam(_Method):
    """Adam (Kingma and Ba) with Chainer's AMSGrad/AdaBound flags and AdamW decay.

    Parameters
    ----------
    alpha
        Step size (the lr; :attr:`alpha_t` is the bias-corrected one).
    beta1, beta2
        Decays of the first and second moments.
    eps
        Added to ``sqrt(v)`` (not bias-corrected, as in Chainer).
    eta
        Schedule multiplier of the whole step and of the weight decay.
    weight_decay_rate
        Decoupled weight decay: ``param *= 1 - eta * weight_decay_rate``.
    amsgrad
        Use the running maximum of ``v`` (AMSGrad).
    adabound
        Clip the step to AdaBound's bounds.
    final_lr, gamma
        AdaBound's final SGD lr and bound speed.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> opt = optimizers.Adam(alpha=0.01)
    >>> opt.alpha, opt.eps, opt.amsgrad
    (0.01, 1e-08, False)
    """

    _rule = AdamRule

    def __init__(self, alpha: float = _adam.alpha, beta1: float = _adam.beta1,
                 beta2: float = _adam.beta2, eps: float = _adam.eps, eta: float = _adam.eta,
                 weight_decay_rate: float = _adam.weight_decay_rate,
                 amsgrad: bool = _adam.amsgrad, adabound: bool = _adam.adabound,
                 final_lr: float = _adam.final_lr, gamma: float = _adam.gamma) -> None:
        _method_init(self, alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                     weight_decay_rate=weight_decay_rate, amsgrad=amsgrad,
                     adabound=adabound, final_lr=final_lr, gamma=gamma)

    @property
    def alpha_t(self) -> float:
        """The bias-corrected step size at the optimizer's step ``t``."""
        return _alpha_t(self.hyperparam, self.t)

    @property
    def lr(self) -> float:
        """Chainer's old name of :attr:`alpha_t`."""
        return self.alpha_t


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): Chainer's ``Adam`` with
    ``weight_decay_rate``.

    Parameters
    ----------
    alpha, beta1, beta2, eps, eta
        As for :class:`Adam`.
    weight_decay_rate
        ``param *= 1 - eta * weight_decay_rate`` each step (not scaled by ``alpha``).

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.AdamW(weight_decay_rate=0.01).weight_decay_rate
    0.01
    """

    def __init__(self, alpha: float = _adam.alpha, beta1: float = _adam.beta1,
                 beta2: float = _adam.beta2, eps: float = _adam.eps, eta: float = _adam.eta,
                 weight_decay_rate: float = _adam.weight_decay_rate) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         weight_decay_rate=weight_decay_rate)


class AMSGrad(Adam):
    """Adam with the running maximum of the second moment (Reddi et al.).

    Parameters
    ----------
    alpha, beta1, beta2, eps, eta
        As for :class:`Adam`.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> optimizers.AMSGrad().amsgrad
    True
    """

    def __init__(self, alpha: float = _adam.alpha, beta1: float = _adam.beta1,
                 beta2: float = _adam.beta2, eps: float = _adam.eps,
                 eta: float = _adam.eta) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         amsgrad=True)


class AdaBound(Adam):
    """Adam with the step clipped into bounds that tighten to ``final_lr`` (Luo et al.).

    Parameters
    ----------
    alpha, beta1, beta2
        As for :class:`Adam`.
    final_lr
        The SGD lr the bounds converge to.
    gamma
        Speed of the bounds.
    eps, eta
        As for :class:`Adam`.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> opt = optimizers.AdaBound()
    >>> opt.adabound, opt.amsgrad, opt.final_lr
    (True, False, 0.1)
    """

    def __init__(self, alpha: float = _adam.alpha, beta1: float = _adam.beta1,
                 beta2: float = _adam.beta2, final_lr: float = _adam.final_lr,
                 gamma: float = _adam.gamma, eps: float = _adam.eps,
                 eta: float = _adam.eta) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         amsgrad=False, adabound=True, final_lr=final_lr, gamma=gamma)


class AMSBound(Adam):
    """AdaBound with AMSGrad's running maximum.

    Parameters
    ----------
    alpha, beta1, beta2, final_lr, gamma, eps, eta
        As for :class:`AdaBound`.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> opt = optimizers.AMSBound()
    >>> opt.adabound, opt.amsgrad
    (True, True)
    """

    def __init__(self, alpha: float = _adam.alpha, beta1: float = _adam.beta1,
                 beta2: float = _adam.beta2, final_lr: float = _adam.final_lr,
                 gamma: float = _adam.gamma, eps: float = _adam.eps,
                 eta: float = _adam.eta) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         amsgrad=True, adabound=True, final_lr=final_lr, gamma=gamma)
