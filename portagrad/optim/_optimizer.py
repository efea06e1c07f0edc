"""The optimizer base class: parameters, hooks, loss scaling and savable state.

Updates run on raw arrays (``param.array``) in the parameters' own library and device,
with no graph recorded. Each rule updates in place where the library allows it
(``a -= u`` mutates NumPy, CuPy, torch and array-api-strict arrays) and stores the result
back, so immutable libraries (JAX) work too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._errors import CheckpointError, describe
from ..tape._mode import set_grad_enabled
from ..xp import from_numpy, namespace_of, to_numpy

__all__ = ["Optimizer", "DynamicLossScaler"]


class DynamicLossScaler:
    """Dynamic loss scaling for float16 training.

    Multiply the loss by :attr:`scale` before backward (:meth:`scale_loss`); the optimizer
    divides the gradients by it, and skips the update and halves the scale when a gradient
    overflowed. After ``growth_interval`` clean steps the scale doubles.

    Examples
    --------
    >>> from portagrad.optim import DynamicLossScaler
    >>> s = DynamicLossScaler(init_scale=8.0, growth_interval=2)
    >>> s.update(False); s.scale
    4.0
    >>> s.update(True); s.update(True); s.scale
    8.0
    """

    def __init__(self, init_scale: float = 2.0**15, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 1000,
                 min_scale: float = 1.0) -> None:
        self.scale = float(init_scale)
        self.growth_factor = float(growth_factor)
        self.backoff_factor = float(backoff_factor)
        self.growth_interval = int(growth_interval)
        self.min_scale = float(min_scale)
        self.good_steps = 0

    def scale_loss(self, loss: Any) -> Any:
        """``loss * scale`` (a Variable, so backward sees the scaled loss)."""
        return loss * self.scale

    def update(self, finite: bool) -> None:
        """Record one step: grow after enough finite steps, back off on overflow."""
        if finite:
            self.good_steps += 1
            if self.good_steps >= self.growth_interval:
                self.scale *= self.growth_factor
                self.good_steps = 0
        else:
            self.scale = max(self.scale * self.backoff_factor, self.min_scale)
            self.good_steps = 0

    def state_dict(self) -> dict[str, Any]:
        return {"scale": self.scale, "good_steps": self.good_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.scale = float(state["scale"])
        self.good_steps = int(state["good_steps"])


class Optimizer:
    """Base class of the update rules.

    Parameters
    ----------
    params
        A :class:`portagrad.nn.Module` (its parameters are listed again at every step, so
        lazily created ones are included), or an iterable of Parameters or of
        ``(name, Parameter)`` pairs; or ``None``, and :meth:`setup` later (Chainer's form).
    lr
        Learning rate; change it any time (schedules do).
    **hyper
        The rule's hyperparameters, kept as attributes and saved in :meth:`state_dict`.

    Subclasses define ``init_state(param) -> dict`` (the per-parameter arrays) and
    ``update_one(param, grad, state)``.
    """

    hyper_names: tuple[str, ...] = ()

    @property
    def state_names(self) -> tuple[str, ...]:
        """Names of the per-parameter state arrays (``("m", "v")`` for Adam)."""
        return ()

    def __init__(self, params: Any, lr: float, **hyper: Any) -> None:
        self._module = None
        self._fixed: list[tuple[str, Any]] = []
        if params is not None:
            self._set_params(params)
        self.lr = float(lr)
        for k, v in hyper.items():
            setattr(self, k, v)
        self.t = 0
        self.hooks: list[Any] = []
        self.loss_scaler: DynamicLossScaler | None = None
        self.state: dict[int, dict[str, Any]] = {}
        self._pending_state: dict[str, dict[str, Any]] = {}

    # -- parameters -------------------------------------------------------------------
    def _set_params(self, params: Any) -> None:
        name = type(self).__name__
        if isinstance(params, (int, float)) and not isinstance(params, bool):
            raise TypeError(f"{name}(params): expected a Module or parameters, got the number "
                            f"{params!r}. Pass the learning rate by keyword: {name}(model, "
                            f"lr={params!r}), or Chainer's {name}(lr={params!r}).setup(model)")
        if hasattr(params, "named_parameters"):
            self._module = params
            self._fixed = []
            return
        items = list(params)
        if not items:
            raise ValueError(f"{name}(params): expected parameters, got an empty list")
        self._module = None
        self._fixed = [(str(item[0]), item[1]) if isinstance(item, tuple) else (str(i), item)
                       for i, item in enumerate(items)]

    def setup(self, params: Any) -> Optimizer:
        """Chainer's form: give the parameters (usually a Module) after construction.

        Examples
        --------
        >>> import portagrad as pg
        >>> model = pg.nn.Linear(3, 2)
        >>> opt = pg.optim.MomentumSGD(lr=0.1).setup(model)
        >>> len(opt.named_parameters())
        2
        """
        self._set_params(params)
        return self

    def named_parameters(self) -> list[tuple[str, Any]]:
        if self._module is not None:
            return list(self._module.named_parameters())
        return self._fixed

    def zero_grad(self) -> None:
        """Forget the gradients of every parameter."""
        for _, p in self.named_parameters():
            p.grad_var = None

    cleargrads = zero_grad

    def add_hook(self, hook: Any) -> Optimizer:
        """Append a gradient hook (``WeightDecay``, ``GradientClipping``...)."""
        if not callable(hook):
            raise TypeError(f"add_hook(hook): expected a callable, got {describe(hook)}")
        self.hooks.append(hook)
        return self

    # -- the update -------------------------------------------------------------------
    def step(self) -> bool:
        """Apply one update from the accumulated ``.grad`` of the parameters.

        Returns ``False`` (and changes no parameter) when loss scaling found a
        non-finite gradient; ``True`` otherwise.
        """
        if self._module is None and not self._fixed:
            raise ValueError(f"{type(self).__name__}.step(): expected parameters, got none. "
                             f"Pass them to the constructor or call setup(model) first")
        with set_grad_enabled(False):
            grads = []
            for name, p in self.named_parameters():
                g = p.grad_var
                if g is None or p.array is None:
                    continue
                grads.append((name, p, g.array))
            scaler = self.loss_scaler
            if scaler is not None:
                inv = 1.0 / scaler.scale
                grads = [(n, p, g * inv) for n, p, g in grads]
                if not _all_finite(grads):
                    scaler.update(False)
                    self.zero_grad()
                    return False
            for hook in self.hooks:
                grads = hook(self, grads)
            self.t += 1
            for name, p, g in grads:
                st = self._state_of(name, p)
                self.update_one(p, g, st)
            if scaler is not None:
                scaler.update(True)
        return True

    def update(self, lossfun: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Chainer's form: with ``lossfun``, zero grads, compute it, backward, step.

        Returns the loss (or ``None`` without ``lossfun``, which only steps).
        """
        if lossfun is None:
            self.step()
            return None
        self.zero_grad()
        loss = lossfun(*args, **kwargs)
        scaled = loss if self.loss_scaler is None else self.loss_scaler.scale_loss(loss)
        scaled.backward()
        self.step()
        return loss

    def _state_of(self, name: str, p: Any) -> dict[str, Any]:
        st = self.state.get(id(p))
        if st:
            first = next(iter(st.values()))
            if namespace_of(first) is not p.xp or first.device != p.array.device:
                # The model moved (to_device): the state follows its parameter.
                st = {k: _like(v, p.array, f"{name}.{k}") for k, v in st.items()}
                self.state[id(p)] = st
        if st is None:
            st = self.init_state(p)
            pending = self._pending_state.pop(name, None)
            if pending is not None:
                for k, v in pending.items():
                    if k not in st:
                        raise CheckpointError(f"{type(self).__name__}.load_state_dict"
                                              f"({name}.{k}): unexpected state entry")
                    st[k] = _like(v, st[k], f"{name}.{k}")
            self.state[id(p)] = st
        return st

    def init_state(self, p: Any) -> dict[str, Any]:
        return {}

    def update_one(self, p: Any, g: Any, state: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- state ------------------------------------------------------------------------
    def hyperparameters(self) -> dict[str, Any]:
        return {"lr": self.lr, **{k: getattr(self, k) for k in self.hyper_names}}

    def state_dict(self) -> dict[str, Any]:
        """Step count, hyperparameters, per-parameter arrays (by name), scaler state.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> p = pg.nn.Parameter(np.ones(2))
        >>> opt = pg.optim.MomentumSGD([("w", p)], lr=0.1)
        >>> p.grad = np.ones(2)
        >>> _ = opt.step()
        >>> sorted(opt.state_dict()["state"]["w"])
        ['v']
        """
        from ..nn._parameter import UNINITIALIZED

        per: dict[str, Any] = {}
        for name, p in self.named_parameters():
            if p.array is None:
                pending = self._pending_state.get(name)
                if pending is not None:
                    per[name] = dict(pending)
                elif self.state_names:
                    per[name] = {k: UNINITIALIZED for k in self.state_names}
                continue
            # State exists for every initialized parameter (zeros before its first
            # update), so a checkpoint's layout does not depend on when it was taken.
            per[name] = dict(self._state_of(name, p))
        out: dict[str, Any] = {"t": self.t, "hyper": self.hyperparameters(), "state": per}
        if self.loss_scaler is not None:
            out["loss_scaler"] = self.loss_scaler.state_dict()
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` (arrays of any library are moved to each
        parameter's library and device)."""
        try:
            t = int(state["t"])
            hyper = dict(state["hyper"])
            per = dict(state["state"])
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"{type(self).__name__}.load_state_dict(state): expected "
                                  f"keys t, hyper, state, got {describe(state)}") from e
        names = {n: p for n, p in self.named_parameters()}
        unknown = [n for n in per if n not in names]
        if unknown:
            raise CheckpointError(f"{type(self).__name__}.load_state_dict(state): state for "
                                  f"unknown parameters {unknown[:5]}")
        new_state: dict[int, dict[str, Any]] = {}
        pending: dict[str, dict[str, Any]] = {}
        for n, entries in per.items():
            p = names[n]
            if p.array is None:
                if any(getattr(v, "__portagrad_lazy__", False) for v in entries.values()):
                    continue
                pending[n] = dict(entries)
                continue
            fresh = self.init_state(p)
            if set(fresh) != set(entries):
                raise CheckpointError(f"{type(self).__name__}.load_state_dict({n}): expected "
                                      f"entries {sorted(fresh)}, got {sorted(entries)}")
            new_state[id(p)] = {k: _like(entries[k], fresh[k], f"{n}.{k}") for k in fresh}
        for k in self.hyper_names:
            if k in hyper:
                setattr(self, k, type(getattr(self, k))(hyper[k]))
        self.lr = float(hyper.get("lr", self.lr))
        self.t = t
        self.state = new_state
        self._pending_state = pending
        if "loss_scaler" in state:
            if self.loss_scaler is None:
                self.loss_scaler = DynamicLossScaler()
            self.loss_scaler.load_state_dict(state["loss_scaler"])

    def __repr__(self) -> str:
        hyper = ", ".join(f"{k}={v}" for k, v in self.hyperparameters().items())
        return f"{type(self).__name__}({hyper})"


def _like(value: Any, like: Any, where: str) -> Any:
    """``value`` as an array of ``like``'s library, device, shape and dtype."""
    value = getattr(value, "array", value)
    if tuple(value.shape) != tuple(like.shape):
        raise CheckpointError(f"optimizer state {where}: expected shape {tuple(like.shape)}, "
                              f"got {tuple(value.shape)}")
    xp = namespace_of(like)
    try:
        same = namespace_of(value) is xp and value.device == like.device
    except TypeError:
        same = False
    if same:
        return xp.astype(value, like.dtype, copy=True)
    out = from_numpy(to_numpy(value), like=like)
    return xp.astype(out, like.dtype) if out.dtype != like.dtype else out


def _all_finite(grads: Iterable[tuple[str, Any, Any]]) -> bool:
    """One host synchronisation: a sum is finite iff every element is (for finite data)."""
    total = 0.0
    for _, _, g in grads:
        xp = namespace_of(g)
        f16 = getattr(xp, "float16", None)
        total += float(xp.sum(xp.astype(g, xp.float32) if g.dtype == f16 else g))
    return math.isfinite(total)

