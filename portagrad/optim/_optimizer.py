"""The optimizer base class, with PyTorch's interface: parameter groups, per-parameter
state, ``state_dict``/``load_state_dict`` in ``torch.optim``'s layout, closures.

Updates run on raw arrays (``param.array``) in the parameters' own library and device,
with no graph recorded. Each rule updates in place where the library allows it
(``a -= u`` mutates NumPy, CuPy, torch and array-api-strict arrays) and stores the result
back, so immutable libraries (JAX) work too. A gradient array is never written: the
engine may hand one array to two parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

from .._errors import CheckpointError, PortagradTypeError, PortagradValueError, describe
from ..tape._mode import set_grad_enabled
from ..xp import from_numpy, namespace_of, to_numpy
from ..xp._namespace import is_array

__all__ = ["Optimizer", "DynamicLossScaler"]


class DynamicLossScaler:
    """Dynamic loss scaling inside :meth:`Optimizer.step` (``optimizer.loss_scaler``).

    Multiply the loss by :attr:`scale` before backward (:meth:`scale_loss`); the optimizer
    divides the gradients by it, and skips the update and halves the scale when a gradient
    overflowed. After ``growth_interval`` clean steps the scale doubles.
    :class:`portagrad.amp.GradScaler` is the same policy with ``torch.amp``'s interface.

    Parameters
    ----------
    init_scale, growth_factor, backoff_factor, growth_interval
        The first scale, its factor after ``growth_interval`` clean steps, its factor
        after an overflow.
    min_scale
        The scale never backs off below this.

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


class _OpenState(dict):
    """The ``state`` entry of a state dict: its arrays depend on the steps taken, so a
    checkpoint reader accepts any arrays under it (``load_state_dict`` checks them)."""

    __portagrad_open__ = True


class _ParamState(MutableMapping):
    """``optimizer.state``: per-parameter dicts keyed by the parameter itself (by
    identity: Variables compare elementwise, so they cannot be dict keys)."""

    def __init__(self) -> None:
        self._d: dict[int, tuple[Any, dict[str, Any]]] = {}

    def __getitem__(self, p: Any) -> dict[str, Any]:
        entry = self._d.get(id(p))
        if entry is None:
            # As torch's defaultdict: reading a parameter's state creates it.
            entry = self._d[id(p)] = (p, {})
        return entry[1]

    def __setitem__(self, p: Any, value: dict[str, Any]) -> None:
        self._d[id(p)] = (p, value)

    def __delitem__(self, p: Any) -> None:
        del self._d[id(p)]

    def __contains__(self, p: object) -> bool:
        entry = self._d.get(id(p))
        return entry is not None and bool(entry[1])

    def __iter__(self) -> Iterator[Any]:
        return (p for p, st in list(self._d.values()) if st)

    def __len__(self) -> int:
        return sum(1 for _, st in self._d.values() if st)

    def __repr__(self) -> str:
        return f"<state of {len(self)} parameters>"


# Options of torch's optimizers that select an implementation (multi-tensor, fused
# kernels, CUDA graphs, autograd through the update). Every value that means "the plain
# update" is accepted; any other cannot be honoured and is refused by name.
_IMPLEMENTATION_OPTIONS = {"foreach": (None, False), "fused": (None, False),
                           "capturable": (False,), "differentiable": (False,)}


# Keys the schedulers write into groups (a group saved with them may be added again).
_SCHEDULER_KEYS = ("initial_lr", "max_lr", "min_lr", "base_momentum", "max_momentum")


def _check_implementation_options(name: str, options: dict[str, Any]) -> None:
    for key, value in options.items():
        if key not in _IMPLEMENTATION_OPTIONS:
            raise PortagradTypeError(f"{name}(): unexpected keyword argument {key!r}")
        if value not in _IMPLEMENTATION_OPTIONS[key]:
            allowed = " or ".join(repr(v) for v in _IMPLEMENTATION_OPTIONS[key])
            raise PortagradValueError(
                f"{name}({key}={value!r}): portagrad runs one update implementation, "
                f"written with the parameters' array library; expected {key}={allowed}")


class Optimizer:
    """Base class of the optimizers (``torch.optim.Optimizer``'s interface).

    Parameters
    ----------
    params
        An iterable of Parameters, of ``(name, Parameter)`` pairs (``named_parameters()``),
        or of parameter-group dicts (``{"params": [...], "lr": 0.1, ...}``: options missing
        from a group take the defaults). A :class:`portagrad.nn.Module` is taken as its
        ``parameters()`` and kept as :attr:`module` (the model a
        :class:`portagrad.training.StandardUpdater` trains).
    defaults
        Every hyperparameter of the rule with its default value.

    Attributes
    ----------
    param_groups
        List of dicts: ``params`` and every hyperparameter (change ``lr`` here).
    state
        Per-parameter dicts (``optimizer.state[p]["exp_avg"]``).
    hooks
        Gradient hooks (:meth:`add_hook`); ``loss_scaler`` an optional
        :class:`DynamicLossScaler`.

    Subclasses define ``_update(p, grad, state, group)`` (one parameter; ``state`` empty
    before its first update) or override :meth:`step`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> a, b = pg.nn.Parameter(np.ones(2)), pg.nn.Parameter(np.ones(3))
    >>> opt = pg.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    >>> opt.state_dict()["param_groups"][1]["params"]
    [1]
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.module = None
        self.state: _ParamState = _ParamState()
        self.param_groups: list[dict[str, Any]] = []
        self.hooks: list[Any] = []
        self.loss_scaler: DynamicLossScaler | None = None
        self._step_pre_hooks: dict[int, Callable] = {}
        self._step_post_hooks: dict[int, Callable] = {}
        self._steps_taken = 0
        name = type(self).__name__
        if isinstance(params, (int, float)) and not isinstance(params, bool):
            raise PortagradTypeError(
                f"{name}(params): expected an iterable of parameters or of parameter "
                f"groups, got the number {params!r}. Pass the learning rate by keyword: "
                f"{name}(model.parameters(), lr={params!r})")
        if hasattr(params, "named_parameters") and hasattr(params, "parameters"):
            self.module = params
            params = list(params.parameters())
        elif is_array(params) or hasattr(params, "grad_var"):
            raise PortagradTypeError(
                f"{name}(params): expected an iterable of parameters or of parameter "
                f"groups, got one {describe(params)}; wrap it in a list")
        else:
            try:
                params = list(params)
            except TypeError:
                raise PortagradTypeError(
                    f"{name}(params): expected an iterable of parameters or of parameter "
                    f"groups, got {describe(params)}") from None
        if not params:
            raise PortagradValueError(f"{name}(params): expected parameters, got an "
                                      f"empty list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for g in groups:
            self.add_param_group(g)

    # -- parameters -----------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones take the defaults).

        Parameters
        ----------
        param_group
            ``{"params": parameters, option: value, ...}``.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> opt = pg.optim.Adam([pg.nn.Parameter(np.ones(2))], lr=0.1)
        >>> opt.add_param_group({"params": [pg.nn.Parameter(np.ones(1))], "lr": 0.01})
        >>> [(g["lr"], g["betas"]) for g in opt.param_groups]
        [(0.1, (0.9, 0.999)), (0.01, (0.9, 0.999))]
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise PortagradTypeError(f"{name}.add_param_group(param_group): expected a "
                                     f"dict, got {describe(param_group)}")
        group = dict(param_group)
        params = group.get("params")
        if params is None:
            raise PortagradValueError(f"{name}.add_param_group(param_group): expected a "
                                      f"'params' entry")
        if hasattr(params, "grad_var") or is_array(params):
            params = [params]
        elif isinstance(params, set):
            raise PortagradTypeError(f"{name}(params): expected an ordered iterable, got "
                                     f"a set (its order changes between runs)")
        elif hasattr(params, "parameters") and hasattr(params, "named_parameters"):
            params = list(params.parameters())
        params = list(params)
        names: list[str] = []
        plain = []
        for i, item in enumerate(params):
            if isinstance(item, tuple):
                if len(item) != 2 or not isinstance(item[0], str):
                    raise PortagradTypeError(f"{name}(params): expected (name, Parameter) "
                                             f"pairs, got {describe(item)}")
                names.append(item[0])
                item = item[1]
            if not hasattr(item, "grad_var") or not getattr(item, "requires_grad", True):
                what = (describe(item) if not hasattr(item, "grad_var")
                        else "a Variable that does not require gradients")
                raise PortagradTypeError(f"{name}(params): entry {i}: expected a Parameter "
                                         f"(a Variable requiring gradients), got {what}")
            plain.append(item)
        if names and len(names) != len(plain):
            raise PortagradValueError(f"{name}(params): either every parameter of a group "
                                      f"is named or none is")
        group["params"] = plain
        if names:
            group["param_names"] = names
        for key, default in self.defaults.items():
            group.setdefault(key, default)
        unknown = [k for k in group if k not in self.defaults
                   and k not in ("params", "param_names") + _SCHEDULER_KEYS]
        _check_implementation_options(name, {k: group.pop(k) for k in list(unknown)
                                             if k in _IMPLEMENTATION_OPTIONS})
        unknown = [k for k in unknown if k not in _IMPLEMENTATION_OPTIONS]
        if unknown:
            raise PortagradValueError(f"{name}.add_param_group: unknown options {unknown}; "
                                      f"expected some of {sorted(self.defaults)}")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in plain) or len({id(p) for p in plain}) != len(plain):
            raise PortagradValueError(f"{name}.add_param_group: some parameters appear in "
                                      f"more than one group")
        if self.param_groups and (("param_names" in group)
                                  != ("param_names" in self.param_groups[0])):
            raise PortagradValueError(f"{name}.add_param_group: all groups must be named "
                                      f"or none")
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Validate a group's hyperparameters (subclasses)."""

    @property
    def _module(self) -> Any:
        # The model, under the name the training and parallel wrappers read.
        return self.module

    @property
    def lr(self) -> float:
        """The first group's learning rate; setting it sets every group's."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        for g in self.param_groups:
            g["lr"] = float(value)

    @property
    def t(self) -> int:
        """Number of :meth:`step` calls that updated the parameters (restored by
        :meth:`load_state_dict` from the largest per-parameter ``step``)."""
        return self._steps_taken

    def named_parameters(self) -> list[tuple[str, Any]]:
        """``(name, parameter)`` of every group, in order; names from ``param_names`` or
        the module, else the parameter's index."""
        out = []
        mod_names = ({id(p): n for n, p in self.module.named_parameters()}
                     if self.module is not None else {})
        i = 0
        for g in self.param_groups:
            names = g.get("param_names")
            for j, p in enumerate(g["params"]):
                out.append((names[j] if names else mod_names.get(id(p), str(i)), p))
                i += 1
        return out

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget (``set_to_none``) or zero the gradients of every parameter.

        Parameters
        ----------
        set_to_none
            ``True``: ``p.grad`` becomes ``None``; ``False``: an array of zeros.
        """
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad_var is None:
                    continue
                if set_to_none:
                    p.grad_var = None
                else:
                    ga = p.grad_var.array
                    p.grad = namespace_of(ga).zeros_like(ga)

    def add_hook(self, hook: Any) -> Optimizer:
        """Append a gradient hook: ``hook(optimizer, [(name, param, grad), ...])`` returns
        the gradients the update uses (``WeightDecay``, ``GradientClipping``...).

        Parameters
        ----------
        hook
            The callable.
        """
        if not callable(hook):
            raise PortagradTypeError(f"add_hook(hook): expected a callable, got "
                                     f"{describe(hook)}")
        self.hooks.append(hook)
        return self

    def register_step_pre_hook(self, hook: Callable) -> Any:
        """``hook(optimizer, args, kwargs)`` before every :meth:`step`; returns a handle
        with ``remove()``.

        Parameters
        ----------
        hook
            The callable.
        """
        return _Handle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> Any:
        """``hook(optimizer, args, kwargs)`` after every :meth:`step`; returns a handle.

        Parameters
        ----------
        hook
            The callable.
        """
        return _Handle(self._step_post_hooks, hook)

    # -- the update -----------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()``'s loss.

        Parameters
        ----------
        closure
            Optional callable that recomputes the loss (zeroing the gradients and calling
            backward); run with gradients enabled before the update.

        Without ``closure`` returns ``None``. With a ``loss_scaler`` that found a
        non-finite gradient, no parameter changes.
        """
        for h in list(self._step_pre_hooks.values()):
            h(self, (closure,), {})
        loss = None
        if closure is not None:
            with set_grad_enabled(True):
                loss = closure()
        with set_grad_enabled(False):
            self._apply()
        for h in list(self._step_post_hooks.values()):
            h(self, (closure,), {})
        return loss

    def _gradients(self) -> list[tuple[str, Any, Any]] | None:
        """``(name, param, grad array)`` of the parameters to update, after loss scaling
        and hooks; ``None`` when the update is skipped (overflow)."""
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
                return None
            scaler.update(True)
        for hook in self.hooks:
            grads = hook(self, grads)
        return grads

    def _apply(self) -> None:
        grads = self._gradients()
        if grads is None:
            return
        by_id = {id(p): g for _, p, g in grads}
        for group in self.param_groups:
            for p in group["params"]:
                g = by_id.get(id(p))
                if g is None:
                    continue
                if group.get("maximize", False):
                    g = -g
                self._update(p, g, self._state_for(p), group)
        self._steps_taken += 1

    def _state_for(self, p: Any) -> dict[str, Any]:
        st = self.state[p]
        for k, v in st.items():
            if is_array(v) and not _same_place(v, p.array):
                # The model moved (to_device): the state follows its parameter.
                st[k] = _cast_like(v, p.array, keep_dtype=k == "step")
        return st

    def _update(self, p: Any, g: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} defines no update")

    # -- state ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``, as
        ``torch.optim``: parameters are numbered in group order; state exists for the
        parameters updated at least once.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> p = pg.nn.Parameter(np.ones(2))
        >>> opt = pg.optim.SGD([p], lr=0.1, momentum=0.9)
        >>> p.grad = np.ones(2)
        >>> _ = opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"][0]["momentum_buffer"], sd["param_groups"][0]["params"]
        (array([1., 1.]), [0])
        """
        index = 0
        groups = []
        state = _OpenState()
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                if p in self.state:
                    state[index] = dict(self.state[p])
                ids.append(index)
                index += 1
            packed["params"] = ids
            groups.append(packed)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` (or from ``torch.optim``'s, arrays converted to
        NumPy): group options replace the current ones; arrays move to each parameter's
        library, device and floating dtype.

        Parameters
        ----------
        state_dict
            The saved state.
        """
        name = type(self).__name__
        try:
            saved_groups = list(state_dict["param_groups"])
            saved_state = dict(state_dict["state"])
        except (KeyError, TypeError) as e:
            raise CheckpointError(f"{name}.load_state_dict(state_dict): expected the keys "
                                  f"'state' and 'param_groups', got {describe(state_dict)}"
                                  ) from e
        if len(saved_groups) != len(self.param_groups):
            raise CheckpointError(f"{name}.load_state_dict: expected {len(self.param_groups)}"
                                  f" parameter groups, got {len(saved_groups)}")
        index: dict[int, Any] = {}
        new_groups = []
        for cur, saved in zip(self.param_groups, saved_groups, strict=True):
            ids = list(saved.get("params", ()))
            if len(ids) != len(cur["params"]):
                raise CheckpointError(f"{name}.load_state_dict: a group has "
                                      f"{len(cur['params'])} parameters, the saved one "
                                      f"{len(ids)}")
            for i, p in zip(ids, cur["params"], strict=True):
                index[int(i)] = p
            group = {}
            for k, v in saved.items():
                if k == "params":
                    continue
                old = cur.get(k)
                group[k] = tuple(v) if isinstance(old, tuple) and isinstance(v, list) else v
            if "param_names" in cur and "param_names" not in saved:
                group["param_names"] = cur["param_names"]
            group["params"] = cur["params"]
            new_groups.append(group)
        new_state = _ParamState()
        steps = 0
        for k, entries in saved_state.items():
            try:
                p = index[int(k)]
            except (KeyError, ValueError):
                raise CheckpointError(f"{name}.load_state_dict: state for unknown parameter "
                                      f"index {k!r}") from None
            if p.array is None:
                raise CheckpointError(f"{name}.load_state_dict: parameter {k} is not "
                                      f"initialized yet; run the model once before loading")
            st = {key: _restore(key, v, p.array) for key, v in dict(entries).items()}
            self._check_loaded_state(p, st, k)
            new_state[p] = st
            if "step" in st and not is_array(st["step"]):
                steps = max(steps, int(st["step"]))
        self.param_groups = new_groups
        self.state = new_state
        self._steps_taken = steps

    def _check_loaded_state(self, p: Any, st: dict[str, Any], index: Any) -> None:
        for key, v in st.items():
            if is_array(v) and tuple(v.shape) != tuple(p.array.shape) and key in (
                    self._param_shaped_state()):
                raise CheckpointError(f"{type(self).__name__}.load_state_dict: state "
                                      f"{index}.{key}: expected shape {tuple(p.array.shape)}"
                                      f", got {tuple(v.shape)}")

    def _param_shaped_state(self) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "sum",
                "square_avg", "acc_delta", "grad_avg", "exp_inf", "prev", "step_size",
                "ax", "variance")

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k not in ("params", "param_names"):
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)


class _Handle:
    _next = 0

    def __init__(self, table: dict[int, Callable], hook: Callable) -> None:
        if not callable(hook):
            raise PortagradTypeError(f"register hook: expected a callable, got "
                                     f"{describe(hook)}")
        _Handle._next += 1
        self.id = _Handle._next
        self._table = table
        table[self.id] = hook

    def remove(self) -> None:
        self._table.pop(self.id, None)


def _same_place(a: Any, b: Any) -> bool:
    try:
        return namespace_of(a) is namespace_of(b) and a.device == b.device
    except TypeError:
        return False


def _cast_like(value: Any, like: Any, keep_dtype: bool = False) -> Any:
    """``value`` as an array of ``like``'s library and device, and dtype when it is
    floating (torch's rule for loaded optimizer state)."""
    value = getattr(value, "array", value)
    xp = namespace_of(like)
    if not _same_place(value, like):
        value = from_numpy(to_numpy(value), like=like)
    else:
        value = xp.asarray(value, copy=True)
    floating = xp.isdtype(value.dtype, ("real floating", "complex floating"))
    if floating and not keep_dtype and value.dtype != like.dtype:
        value = xp.astype(value, like.dtype)
    return value


def _restore(key: str, value: Any, like: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_restore(key, v, like) for v in value]
    arr = getattr(value, "array", value)
    if is_array(arr) or hasattr(arr, "__array__") and not isinstance(arr, (int, float)):
        shape = tuple(getattr(arr, "shape", ()))
        if key == "step" or (shape == () and key in ("mu_product", "eta", "mu", "t",
                                                     "H_diag", "prev_loss")):
            # Scalars torch keeps as 0-d tensors are plain numbers here (steps: ints).
            x = float(to_numpy(arr)) if is_array(arr) else float(arr)
            return int(x) if key == "step" else x
        return _cast_like(arr, like)
    return value


def _all_finite(grads: Iterable[tuple[str, Any, Any]]) -> bool:
    """One host synchronisation: a sum is finite iff every element is (for finite data)."""
    total = 0.0
    for _, _, g in grads:
        xp = namespace_of(g)
        f16 = getattr(xp, "float16", None)
        total += float(xp.sum(xp.astype(g, xp.float32) if g.dtype == f16 else g))
    return math.isfinite(total)
