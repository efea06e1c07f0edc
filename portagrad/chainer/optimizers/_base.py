"""Chainer's optimizer machinery: hyperparameters, per-parameter update rules, hooks.

An :class:`Optimizer` is set up on a Link; :class:`GradientMethod` gives every Parameter
of the link an :class:`UpdateRule` (``param.update_rule``) whose :class:`Hyperparameter`
falls back to the optimizer's, so ``opt.lr = 0.1`` changes every rule that did not set
its own. Rules update raw arrays in the parameters' own library (read with
:func:`portagrad.xp.namespace_of`), storing results back rather than writing in place,
so immutable libraries work too; the arithmetic follows Chainer 7.8's CPU code term by
term, so trajectories agree with Chainer to rounding.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError
from ...tape._mode import set_grad_enabled
from ...xp import default_namespace, namespace_of

__all__ = ["Hyperparameter", "HyperparameterProxy", "UpdateRule", "Optimizer",
           "GradientMethod"]


class _Hookable:
    """Named hooks called before (``'pre'``) or after (``'post'``) an update."""

    def __init__(self, owner: str, invalid_timing_fallback: bool = False) -> None:
        self.pre: OrderedDict[str, Callable] = OrderedDict()
        self.post: OrderedDict[str, Callable] = OrderedDict()
        self.owner = owner
        self.fallback = invalid_timing_fallback

    def add(self, hook: Any, name: str | None, timing: str) -> None:
        if not callable(hook):
            raise PortagradTypeError(f"{self.owner}.add_hook(hook): expected a callable, "
                                     f"got {type(hook).__name__}")
        if timing not in ("pre", "post", "auto"):
            raise PortagradValueError(f"{self.owner}.add_hook(timing): expected 'pre', "
                                      f"'post' or 'auto', got {timing!r}")
        if timing == "auto":
            timing = getattr(hook, "timing", "pre")
            if timing not in ("pre", "post"):
                if not self.fallback:
                    raise PortagradValueError(
                        f"{self.owner}.add_hook(hook): the hook's timing attribute must "
                        f"be 'pre' or 'post', got {timing!r}")
                warnings.warn("Hook timing attribute not in ('pre', 'post'), defaulting "
                              "timing to 'pre'.", stacklevel=3)
                timing = "pre"
        if name is None:
            name = getattr(hook, "name", getattr(hook, "__name__", None))
            if name is None:
                raise PortagradValueError(f"{self.owner}.add_hook(name): the hook has no "
                                          f"name attribute; pass name=")
        if name in self.pre or name in self.post:
            raise KeyError(f'hook "{name}" already exists')
        (self.pre if timing == "pre" else self.post)[name] = hook

    def remove(self, name: str) -> None:
        if name in self.pre:
            del self.pre[name]
        elif name in self.post:
            del self.post[name]
        else:
            raise KeyError(f"{self.owner}.remove_hook({name!r}): no such hook")

    def hooks(self, timing: str) -> list[Callable]:
        if timing == "pre":
            return list(self.pre.values())
        if timing == "post":
            return list(self.post.values())
        raise PortagradValueError(f"{self.owner}.call_hooks(timing): expected 'pre' or "
                                  f"'post', got {timing!r}")


class Hyperparameter:
    """A set of hyperparameters that falls back to a parent set for missing entries.

    Parameters
    ----------
    parent
        The set consulted for names this one does not hold (an optimizer's, for the
        hyperparameter of each update rule).

    Examples
    --------
    >>> from portagrad.chainer.optimizer import Hyperparameter
    >>> base = Hyperparameter(); base.lr = 0.1; base.momentum = 0.9
    >>> mine = Hyperparameter(base); mine.lr = 0.01
    >>> mine.lr, mine.momentum, sorted(mine.get_dict().items())
    (0.01, 0.9, [('lr', 0.01), ('momentum', 0.9)])
    """

    def __init__(self, parent: Hyperparameter | None = None) -> None:
        self._parent = parent

    def __getattr__(self, name: str) -> Any:
        if "_parent" not in self.__dict__ or self.__dict__["_parent"] is None:
            raise AttributeError(f"hyperparameter {name!r} is not set")
        return getattr(self.__dict__["_parent"], name)

    def __repr__(self) -> str:
        d = self.get_dict()
        inner = ", ".join(f"{k}={d[k]}" for k in sorted(d))
        return f"Hyperparameter({inner})"

    @property
    def parent(self) -> Hyperparameter | None:
        """The parent set."""
        return self._parent

    def get_dict(self) -> dict[str, Any]:
        """Every entry this set can answer, its own over its parent's."""
        d = {} if self._parent is None else self._parent.get_dict()
        d.update({k: v for k, v in self.__dict__.items() if k != "_parent"})
        return d

    def __deepcopy__(self, memo: dict) -> Hyperparameter:
        # The parent is shared (a copied rule still follows its optimizer).
        new = Hyperparameter(self._parent)
        new.__dict__.update({k: copy.deepcopy(v, memo) for k, v in self.__dict__.items()
                             if k != "_parent"})
        return new


class HyperparameterProxy:
    """A property of an optimizer that reads and writes ``self.hyperparam.<name>``.

    Parameters
    ----------
    attr_name
        The hyperparameter's name.

    Examples
    --------
    >>> from portagrad.chainer import optimizers
    >>> opt = optimizers.MomentumSGD(lr=0.1)
    >>> opt.lr = 0.5
    >>> opt.hyperparam.lr
    0.5
    """

    def __init__(self, attr_name: str) -> None:
        self._attr_name = attr_name
        self.__doc__ = f"Alias to ``self.hyperparam.{attr_name}``"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.hyperparam, self._attr_name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj.hyperparam, self._attr_name, value)


def _is_deserializer(serializer: Any) -> bool:
    names = {c.__name__ for c in type(serializer).__mro__}
    return "Deserializer" in names or bool(getattr(serializer, "is_deserializer", False))


class _StateProbe:
    """Stands for a parameter when a rule's state keys are needed before its first update
    (loading a snapshot): a one-element float32 host array."""

    def __init__(self) -> None:
        xp = default_namespace()
        self.array = xp.zeros((1,), dtype=xp.float32)
        self.data = self.array
        self.grad = self.array
        self.dtype = self.array.dtype


class UpdateRule:
    """How one parameter is updated from its gradient (Chainer's ``UpdateRule``).

    Parameters
    ----------
    parent_hyperparam
        The hyperparameter set this rule's :attr:`hyperparam` falls back to.

    Subclasses override :meth:`init_state` (fill ``self.state``) and :meth:`update_core`
    (read ``param.data``/``param.grad``, assign ``param.data`` and ``self.state[...]``).
    ``enabled = False`` skips the parameter; :attr:`t` counts this rule's updates.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.optimizer import UpdateRule
    >>> class Halve(UpdateRule):
    ...     def update_core(self, param):
    ...         param.data = param.data - 0.5 * param.grad
    >>> class P:  # anything with data and grad
    ...     data = np.array([1.0]); grad = np.array([1.0])
    >>> p = P(); Halve().update(p); p.data, Halve().t
    (array([0.5]), 0)
    """

    is_elementwise = False

    def __init__(self, parent_hyperparam: Hyperparameter | None = None) -> None:
        self._state: dict[str, Any] | None = None
        self.enabled = True
        self.hyperparam = Hyperparameter(parent_hyperparam)
        self.t = 0
        self._use_fp32_update = False
        self._loss_scale: float | None = None
        self._hookable = _Hookable(type(self).__name__)

    @property
    def state(self) -> dict[str, Any] | None:
        """The rule's arrays (moments...), created at the first update."""
        return self._state

    def add_hook(self, hook: Any, name: str | None = None, timing: str = "auto") -> None:
        """Call ``hook(rule, param)`` before (``'pre'``) or after (``'post'``) each update."""
        self._hookable.add(hook, name, timing)

    def remove_hook(self, name: str) -> None:
        """Remove the hook registered as ``name``."""
        self._hookable.remove(name)

    def update(self, param: Any) -> None:
        """Run the hooks and :meth:`update_core` on ``param`` (nothing when disabled)."""
        if not self.enabled:
            return
        self.t += 1
        with set_grad_enabled(False):
            initialized = _array(param) is not None
            target = param
            if self._use_fp32_update and initialized:
                xp = namespace_of(_array(param))
                if _array(param).dtype == xp.float16:
                    target = _Float32Copy(self, param, xp)
            if initialized:
                if self._state is None:
                    self._state = {}
                    self.init_state(target)
                if self._loss_scale is not None and target.grad is not None:
                    target.grad = target.grad / self._loss_scale
            for hook in self._hookable.hooks("pre"):
                hook(self, target)
            self.update_core(target)
            for hook in self._hookable.hooks("post"):
                hook(self, target)
            if target is not param:
                param.data = xp.astype(target.data, xp.float16)

    def init_state(self, param: Any) -> None:
        """Fill :attr:`state` for ``param`` (called at its first update)."""

    def update_core(self, param: Any) -> None:
        """Update ``param.data`` from ``param.grad``."""
        raise NotImplementedError(f"{type(self).__name__}.update_core: an update rule "
                                  f"must define update_core(param)")

    def use_fp32_update(self, flag: bool = True) -> None:
        """Update float16 parameters through a float32 copy (Chainer's option)."""
        self._use_fp32_update = flag

    def serialize(self, serializer: Any) -> None:
        """Save or load :attr:`t` and the state arrays (not the parameter)."""
        self.t = serializer("t", self.t)
        if self._state is None:
            if not _is_deserializer(serializer):
                return
            probe = copy.copy(self)
            probe._state = {}
            probe.init_state(_StateProbe())
            loaded: dict[str, Any] = {}
            for key in probe._state:
                try:
                    value = serializer(key, None)
                except KeyError:
                    if self.enabled:
                        raise
                    value = None
                if value is None:
                    # Absent from the file: the state is created at the first update.
                    return
                loaded[key] = value
            self._state = loaded
        else:
            for key in list(self._state):
                self._state[key] = serializer(key, self._state[key])


class _Float32Copy:
    """The float32 master copy of a float16 parameter (``use_fp32_update``): kept on the
    rule, given the float16 gradient as float32 before each update."""

    def __init__(self, rule: UpdateRule, param: Any, xp: Any) -> None:
        master = getattr(rule, "_fp32_param", None)
        if master is None:
            master = xp.astype(_array(param), xp.float32)
        self.data = master
        g = param.grad
        self.grad = None if g is None else xp.astype(g, xp.float32)
        self.name = getattr(param, "name", None)
        self._rule = rule
        rule._fp32_param = master  # an update in place keeps the same master array

    @property
    def array(self) -> Any:
        return self.data

    @array.setter
    def array(self, value: Any) -> None:
        self.data = value

    def __setattr__(self, key: str, value: Any) -> None:
        object.__setattr__(self, key, value)
        if key == "data" and "_rule" in self.__dict__:
            self._rule._fp32_param = value

    @property
    def dtype(self) -> Any:
        return self.data.dtype


def write_data(param: Any, value: Any) -> None:
    """Store an update into the parameter's own array where the library allows it (as
    Chainer updates in place, so links that share the array, ``link.copy()``, see the
    new values); immutable arrays (JAX) are replaced instead."""
    a = _array(param)
    if a is not None and tuple(a.shape) == tuple(value.shape) and a.dtype == value.dtype \
            and not isinstance(param, _Float32Copy):
        try:
            a[...] = value
            return
        except (TypeError, ValueError, AttributeError, NotImplementedError):
            pass
    param.data = value


def _array(param: Any) -> Any:
    a = getattr(param, "array", None)
    return getattr(param, "data", None) if a is None else a


def _zeros_like(param: Any) -> Any:
    a = _array(param)
    return namespace_of(a).zeros_like(a)


class Optimizer:
    """Base of Chainer's optimizers: a target link, a step count, an epoch, hooks.

    Use :meth:`setup` to give the link, then :meth:`update` each iteration. Hooks
    (:mod:`portagrad.chainer.optimizer_hooks`) with ``call_for_each_param`` are called as
    ``hook(param.update_rule, param)`` for every parameter, the others as ``hook(opt)``.
    """

    target: Any = None
    t = 0
    epoch = 0
    _loss_scale: float | None = None
    _loss_scale_max = 65504.0
    _loss_scaling_is_dynamic = False
    use_auto_new_epoch = False
    _hookable: _Hookable | None = None

    def setup(self, link: Any) -> Optimizer:
        """Set the target link (anything with ``params()``/``namedparams()``).

        Returns the optimizer, so ``opt = optimizers.Adam().setup(model)`` works.
        """
        if not (hasattr(link, "params") and hasattr(link, "namedparams")):
            raise PortagradTypeError(f"{type(self).__name__}.setup(link): expected a "
                                     f"Link, got {type(link).__name__}")
        self.target = link
        self.t = 0
        self.epoch = 0
        self._hookable = _Hookable(type(self).__name__, invalid_timing_fallback=True)
        return self

    def _check_set_up(self, what: str) -> _Hookable:
        if self._hookable is None:
            raise RuntimeError(f"{type(self).__name__}.{what}: the optimizer is not set "
                               f"up; call setup(link) first")
        return self._hookable

    def update(self, lossfun: Any = None, *args: Any, **kwds: Any) -> None:
        raise NotImplementedError

    def new_epoch(self, auto: bool = False) -> None:
        """Count one more epoch (``auto=True`` from an updater that owns the count)."""
        if auto and not self.use_auto_new_epoch:
            raise RuntimeError("invalid new_epoch call with auto=True. Fix the updater "
                               "to set optimizer.use_auto_new_epoch = True.")
        if not auto and self.use_auto_new_epoch:
            raise RuntimeError("duplicated new_epoch with the updater. Pass "
                               "auto_new_epoch=False to the updater or stop calling "
                               "new_epoch outside the updater.")
        self.epoch += 1

    def add_hook(self, hook: Any, name: str | None = None, timing: str = "auto") -> None:
        """Register a hook (``timing``: ``'pre'``, ``'post'`` or the hook's own)."""
        self._check_set_up("add_hook").add(hook, name, timing)

    def remove_hook(self, name: str) -> None:
        """Remove the hook registered as ``name``."""
        self._check_set_up("remove_hook").remove(name)

    def call_hooks(self, timing: str = "pre") -> None:
        """Call the hooks of ``timing`` in registration order."""
        for hook in self._check_set_up("call_hooks").hooks(timing):
            self.call_hook(hook)

    def call_hook(self, hook: Any) -> None:
        if getattr(hook, "call_for_each_param", False):
            for param in self.target.params():
                hook(param.update_rule, param)
        else:
            hook(self)

    def serialize(self, serializer: Any) -> None:
        """Save or load ``t``, ``epoch`` and every update rule's state (not the link)."""
        self.t = serializer("t", self.t)
        self.epoch = serializer("epoch", self.epoch)
        for name, param in self.target.namedparams():
            rule = getattr(param, "update_rule", None)
            if rule is not None:
                rule.serialize(serializer[name])

    def loss_scaling(self, interval: int = 1000, scale: float | None = None) -> None:
        """Static (``scale``) or dynamic (``scale=None``) loss scaling."""
        if scale is None:
            if interval < 1:
                raise PortagradValueError(f"loss_scaling(interval): expected >= 1, got "
                                          f"{interval}")
            self._loss_scaling_is_dynamic = True
            self._loss_scale = 1.0
            self._loss_scaling_multiplier = math.pow(2.0, 1.0 / interval)
            self._loss_scaling_isnan_ever = False
        else:
            if scale <= 0:
                raise PortagradValueError(f"loss_scaling(scale): expected a positive "
                                          f"number, got {scale}")
            self._loss_scale = scale

    def set_loss_scale(self, loss_scale: float) -> None:
        """Static loss scaling by ``loss_scale``."""
        self.loss_scaling(scale=loss_scale)

    def check_nan_in_grads(self) -> None:
        self._loss_scaling_isnan = False
        if not self._loss_scaling_is_dynamic:
            return
        for name, param in self.target.namedparams():
            g = param.grad
            if g is None:
                continue
            xp = namespace_of(g)
            if not bool(xp.all(xp.isfinite(g))):
                self._loss_scaling_isnan = True
                self._loss_scaling_isnan_ever = True
                warnings.warn(f"Non finite number found in param.grad of {name} "
                              f"(iteration: {self.t}, loss_scale: {self._loss_scale})",
                              stacklevel=3)

    def is_safe_to_update(self) -> bool:
        return not getattr(self, "_loss_scaling_isnan", False)

    def update_loss_scale(self) -> None:
        if not self._loss_scaling_is_dynamic:
            return
        if self._loss_scaling_isnan:
            multiplier = 0.5
        elif self._loss_scaling_isnan_ever:
            multiplier = self._loss_scaling_multiplier
        else:
            multiplier = 2.0
        self._loss_scale = max(1.0, min(self._loss_scale_max,
                                        self._loss_scale * multiplier))


class GradientMethod(Optimizer):
    """Base of the first-order methods: one :class:`UpdateRule` per parameter.

    Subclasses define :meth:`create_update_rule`; :attr:`hyperparam` is the parent of
    every rule's hyperparameter.
    """

    def __init__(self) -> None:
        self.hyperparam = Hyperparameter()
        self._use_fp32_update = False

    def setup(self, link: Any) -> GradientMethod:
        super().setup(link)
        for param in link.params():
            param.update_rule = self.create_update_rule()
            if self._use_fp32_update:
                param.update_rule.use_fp32_update()
        return self

    def create_update_rule(self) -> UpdateRule:
        raise NotImplementedError(f"{type(self).__name__}.create_update_rule: a gradient "
                                  f"method must define it")

    def reallocate_cleared_grads(self) -> None:
        """Give every created parameter without a gradient a zero gradient."""
        for param in self.target.params():
            a = _array(param)
            if a is not None and param.grad is None:
                param.grad = namespace_of(a).zeros_like(a)

    def call_hook(self, hook: Any) -> None:
        super().call_hook(hook)
        self.reallocate_cleared_grads()

    def update(self, lossfun: Any = None, *args: Any, **kwds: Any) -> None:
        """One step: with ``lossfun``, compute it, clear the gradients, backpropagate;
        then the 'pre' hooks, every parameter's rule, the 'post' hooks.

        Parameters
        ----------
        lossfun
            ``lossfun(*args, **kwds)`` returns the loss Variable; ``None`` uses the
            gradients already accumulated.
        """
        self._check_set_up("update")
        if lossfun is not None:
            loss = lossfun(*args, **kwds)
            if getattr(self, "_use_cleargrads", True):
                self.target.cleargrads()
            else:
                self.target.zerograds()
            if self._loss_scale is None:
                loss.backward()
            else:
                (loss * self._loss_scale).backward()
            del loss
        self.reallocate_cleared_grads()
        self.check_nan_in_grads()
        self.call_hooks("pre")
        self.t += 1
        if self.is_safe_to_update():
            for param in self.target.params():
                rule = getattr(param, "update_rule", None)
                if rule is not None:
                    rule._loss_scale = self._loss_scale
                    rule.update(param)
        self.reallocate_cleared_grads()
        self.call_hooks("post")
        self.update_loss_scale()

    def use_cleargrads(self, use: bool = True) -> None:
        """Clear (``True``) or zero (``False``) the gradients in :meth:`update`."""
        self._use_cleargrads = use

    def use_fp32_update(self, flag: bool = True) -> None:
        """Update float16 parameters through float32 copies."""
        self._use_fp32_update = flag
        if self.target is not None:
            for param in self.target.params():
                param.update_rule.use_fp32_update()
