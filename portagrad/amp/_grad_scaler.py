"""GradScaler: dynamic loss scaling with ``torch.amp.GradScaler``'s interface."""

from __future__ import annotations

import math
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError
from ..xp import namespace_of

__all__ = ["GradScaler"]


class GradScaler:
    """Scale the loss so float16 gradients do not underflow; unscale before the update;
    skip steps whose gradients overflowed and adapt the scale (``torch.amp.GradScaler``).

    ``scaler.scale(loss).backward()``; optionally ``scaler.unscale_(optimizer)`` (then
    clip); ``scaler.step(optimizer)`` (unscales if not done, steps unless a gradient is
    inf/NaN); ``scaler.update()`` (halves the scale after an overflow, doubles it after
    ``growth_interval`` clean steps).

    Parameters
    ----------
    device
        Accepted for torch's signature.
    init_scale, growth_factor, backoff_factor, growth_interval
        As torch.
    enabled
        ``False``: every method passes through (scale 1, plain steps).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.nn.Parameter(np.array([1.0], np.float32))
    >>> opt = pg.optim.SGD([w], lr=0.5)
    >>> s = pg.amp.GradScaler(init_scale=8.0, growth_interval=1)
    >>> s.scale((w * w).sum()).backward()
    >>> w.grad                       # scaled
    array([16.], dtype=float32)
    >>> _ = s.step(opt); s.update()
    >>> w.array, s.get_scale()       # unscaled step; scale grew
    (array([0.], dtype=float32), 16.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise PortagradValueError(f"GradScaler(growth_factor): expected > 1, got "
                                      f"{growth_factor!r}")
        if not 0.0 < backoff_factor < 1.0:
            raise PortagradValueError(f"GradScaler(backoff_factor): expected a value in "
                                      f"(0, 1), got {backoff_factor!r}")
        self.device = device
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._enabled = bool(enabled)
        # Per optimizer (by id) in the current iteration: "unscaled" / "stepped", found_inf.
        self._per_opt: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        """Whether scaling is on."""
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def scale(self, outputs: Any) -> Any:
        """``outputs * scale`` (a Variable, or nested lists/tuples of them).

        Parameters
        ----------
        outputs
            The loss (or losses).
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if not hasattr(outputs, "backward"):
            raise PortagradTypeError("GradScaler.scale(outputs): expected a Variable (the "
                                     "loss)")
        return outputs * self._scale

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place, once per iteration;
        records whether any is inf/NaN.

        Parameters
        ----------
        optimizer
            The optimizer whose parameters' gradients to unscale.
        """
        if not self._enabled:
            return
        st = self._per_opt.setdefault(id(optimizer), {})
        if st.get("stage") == "unscaled":
            raise PortagradValueError("GradScaler.unscale_(optimizer): already called since "
                                      "the last update()")
        if st.get("stage") == "stepped":
            raise PortagradValueError("GradScaler.unscale_(optimizer): called after step()")
        inv = 1.0 / self._scale
        total = 0.0
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad_var
                if g is None:
                    continue
                a = g.array * inv
                p.grad = a
                xp = namespace_of(a)
                # One host number per gradient: a sum is finite iff every element is.
                total += float(xp.sum(xp.astype(a, xp.float32)))
        st["found_inf"] = not math.isfinite(total)
        st["stage"] = "unscaled"

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done), then ``optimizer.step(*args, **kwargs)`` unless a
        gradient overflowed; returns what ``step`` returned (``None`` when skipped).

        Parameters
        ----------
        optimizer
            The optimizer.
        *args, **kwargs
            Passed to ``optimizer.step``.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise PortagradValueError("GradScaler.step: closures are not supported (as "
                                      "torch)")
        st = self._per_opt.setdefault(id(optimizer), {})
        if st.get("stage") == "stepped":
            raise PortagradValueError("GradScaler.step(optimizer): called twice since the "
                                      "last update()")
        if st.get("stage") != "unscaled":
            self.unscale_(optimizer)
        out = None if st["found_inf"] else optimizer.step(*args, **kwargs)
        st["stage"] = "stepped"
        return out

    def update(self, new_scale: float | None = None) -> None:
        """Adapt the scale after this iteration's steps (or set ``new_scale``).

        Parameters
        ----------
        new_scale
            Optional new scale.
        """
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            if not self._per_opt:
                raise PortagradValueError("GradScaler.update(): no step() since the last "
                                          "update()")
            if any(st.get("found_inf") for st in self._per_opt.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_opt = {}

    def state_dict(self) -> dict[str, Any]:
        """torch's keys: ``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval``, ``_growth_tracker`` (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict`.

        Parameters
        ----------
        state_dict
            The saved state.
        """
        if not self._enabled:
            return
        if not state_dict:
            raise PortagradValueError("GradScaler.load_state_dict: the state is empty (saved "
                                      "by a disabled scaler)")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
