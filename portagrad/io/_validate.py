"""Checks for the scalars of a loaded state: counters, real hyperparameters, flags.

A checkpoint's state tree is JSON, so a damaged or hostile file can put any JSON value
where a step count or a learning rate belongs: a string, a float where an int was saved,
``{"__float__": "inf"}``, a negative count, an integer of 400 digits. The ``load_state_dict``
methods run each scalar through one of these before using it, so such a file is a
:class:`portagrad.CheckpointError` naming the entry, never an ``OverflowError`` later or a
training run that silently continues from nonsense.
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import CheckpointError

__all__ = ["MAX_COUNT", "check_count", "check_real", "check_flag", "check_kinds",
           "check_state_tree"]

# Counters (steps, iterations, epochs, positions) are int64 on every backend.
MAX_COUNT = 2**63 - 1


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{type(value).__name__} of {len(text)} characters"


def check_count(value: Any, where: str, maximum: int = MAX_COUNT) -> int:
    """``value`` if it is a non-negative ``int`` of at most ``maximum``, else an error.

    Parameters
    ----------
    value
        The stored value.
    where
        What it is, for the message (``"Adam.load_state_dict(t)"``).
    maximum
        The largest value allowed.

    Examples
    --------
    >>> from portagrad.io._validate import check_count
    >>> check_count(7, "t")
    7
    >>> check_count(1.5, "t")
    Traceback (most recent call last):
    ...
    portagrad._errors.CheckpointError: t: expected a non-negative integer, got 1.5
    """
    if type(value) is not int or not 0 <= value <= maximum:
        raise CheckpointError(f"{where}: expected a non-negative integer"
                              f"{'' if maximum == MAX_COUNT else f' up to {maximum}'}, got "
                              f"{_show(value)}")
    return value


def check_real(value: Any, where: str, low: float = 0.0, high: float = math.inf, *,
               low_open: bool = False, high_open: bool = False) -> float:
    """``float(value)`` if it is a finite real number in the interval, else an error.

    ``low``/``high`` bound the interval, closed unless ``low_open``/``high_open``. Bools
    and strings are refused (``True`` is not a learning rate); a 0-d array counts as its
    value.

    Parameters
    ----------
    value
        The stored value.
    where
        What it is, for the message.
    low, high
        The bounds.
    low_open, high_open
        Exclude the bound.

    Examples
    --------
    >>> from portagrad.io._validate import check_real
    >>> check_real(0.9, "beta1", 0.0, 1.0, high_open=True)
    0.9
    >>> check_real(float("nan"), "lr")
    Traceback (most recent call last):
    ...
    portagrad._errors.CheckpointError: lr: expected a finite number in [0, inf), got nan
    """
    if getattr(value, "shape", None) == () and getattr(value, "dtype", None) is not None \
            and value.dtype.kind in "iuf":
        value = value.item()  # torch.optim keeps some hyperparameters as 0-d tensors
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        try:
            x = float(value)
        except OverflowError:
            ok = False
        else:
            ok = (math.isfinite(x) and (x > low if low_open else x >= low)
                  and (x < high if high_open else x <= high))
    if not ok:
        interval = (f"{'(' if low_open else '['}{low:g}, {high:g}"
                    f"{')' if high_open or high == math.inf else ']'}")
        raise CheckpointError(f"{where}: expected a finite number in {interval}, got "
                              f"{_show(value)}")
    return x


def check_flag(value: Any, where: str) -> bool:
    """``value`` if it is a ``bool``, else an error (``"yes"`` and ``1`` are refused).

    Parameters
    ----------
    value
        The stored value.
    where
        What it is, for the message.

    Examples
    --------
    >>> from portagrad.io._validate import check_flag
    >>> check_flag("yes", "amsgrad")
    Traceback (most recent call last):
    ...
    portagrad._errors.CheckpointError: amsgrad: expected True or False, got 'yes'
    """
    if type(value) is not bool:
        raise CheckpointError(f"{where}: expected True or False, got {_show(value)}")
    return value


def check_kinds(stored: Any, live: Any, where: str) -> None:
    """Check that each scalar of ``stored`` has the kind of the live state's scalar there.

    Walks both trees where they overlap: where the live state holds a ``bool``, the file
    must hold a ``bool`` (or ``None``); an ``int``, an ``int``; a ``float``, an ``int`` or
    ``float``. Other live values (``None``, strings, arrays) and entries only one side has
    are left to ``load_state_dict``. This catches, for any object, a state whose types were
    tampered with before the object is touched.

    Parameters
    ----------
    stored
        The state tree read from the file.
    live
        The target's current ``state_dict()``.
    where
        The file, for the message.

    Examples
    --------
    >>> from portagrad.io._validate import check_kinds
    >>> check_kinds({"t": 3, "hyper": {"lr": 1}}, {"t": 0, "hyper": {"lr": 0.1}}, "f")
    >>> check_kinds({"state": {"0": {"step": 2}}}, {"state": {0: {"step": 1}}}, "f")
    >>> check_kinds({"param_groups": [{"step_sizes": [1e-6, 0.05]}]},
    ...             {"param_groups": [{"step_sizes": (1e-6, 50)}]}, "f")
    >>> check_kinds({"t": {"x": 1}}, {"t": 0}, "f")
    Traceback (most recent call last):
    ...
    portagrad._errors.CheckpointError: load(f): t: expected an integer, got {'x': 1}
    """
    stack = [(stored, live, "")]
    while stack:
        s, v, path = stack.pop()
        if isinstance(v, dict):
            if isinstance(s, dict):
                for k in v:
                    # Integer keys (parameter indices) are stored as their decimal strings.
                    key = str(k) if type(k) is int else k
                    if isinstance(key, str) and key in s:
                        stack.append((s[key], v[k], f"{path}/{key}" if path else key))
            continue
        if isinstance(v, (list, tuple)):
            if isinstance(s, list):
                stack.extend((a, b, f"{path}/{i}" if path else str(i))
                             for i, (a, b) in enumerate(zip(s, v)))
            continue
        if s is None:  # an entry not set yet when saved (a best value, a first epoch)
            continue
        if isinstance(v, bool):
            expected, ok = "True or False", type(s) is bool
        elif isinstance(v, int) and "param_groups" not in path.split("/"):
            expected, ok = "an integer", type(s) is int
        elif isinstance(v, int):
            # a hyperparameter may be given as 50 or as 0.05 (Rprop's step sizes); its range
            # is checked by check_state_tree
            expected = "a number"
            ok = isinstance(s, (int, float)) and not isinstance(s, bool)
        elif isinstance(v, float):
            expected = "a number"
            ok = isinstance(s, (int, float)) and not isinstance(s, bool)
        else:
            continue
        if not ok:
            raise CheckpointError(f"load({where}): {path or '<root>'}: expected {expected}, "
                                  f"got {_show(s)}")


# Hyperparameters of the optimizers (portagrad's, and torch.optim's names, whose state
# dicts load too): the interval each must lie in.
_HALF_LINE = (0.0, math.inf, False, False)
_UNIT_OPEN = (0.0, 1.0, False, True)
_UNIT = (0.0, 1.0, False, False)
_HYPER_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "lr": _HALF_LINE, "initial_lr": _HALF_LINE, "eps": _HALF_LINE,
    "weight_decay": _HALF_LINE, "momentum": _HALF_LINE, "dampening": _HALF_LINE,
    "lr_decay": _HALF_LINE, "initial_accumulator_value": _HALF_LINE, "alpha": _HALF_LINE,
    "beta1": _UNIT_OPEN, "beta2": _UNIT_OPEN, "rho": _UNIT,
}
_FLAGS = ("amsgrad", "nesterov", "maximize", "centered", "capturable", "differentiable",
          "decoupled_weight_decay")


def _check_step_value(value: Any, where: str) -> None:
    """A step count stored as an int, or (torch.optim's form) as a 0-d array."""
    if type(value) is int:
        check_count(value, where)
        return
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None or tuple(shape) != () or dtype.kind not in "iuf":
        raise CheckpointError(f"{where}: expected a non-negative integer, got {_show(value)}")
    x = value.item()
    if not (math.isfinite(x) and 0 <= x <= MAX_COUNT and x == int(x)):
        raise CheckpointError(f"{where}: expected a non-negative integer, got {x!r}")


def _check_hyper(group: Any, where: str) -> None:
    if not isinstance(group, dict):
        raise CheckpointError(f"{where}: expected a mapping of hyperparameters, got "
                              f"{_show(group)}")
    for key, value in group.items():
        at = f"{where}/{key}"
        if key == "eps" and isinstance(value, list):
            # Adafactor's (eps1, eps2), where None stands for the dtype's own epsilon
            if len(value) != 2:
                raise CheckpointError(f"{at}: expected a number or a pair, got {_show(value)}")
            for i, e in enumerate(value):
                if e is not None:
                    check_real(e, f"{at}/{i}", 0.0, math.inf)
        elif key in _HYPER_RANGES:
            low, high, low_open, high_open = _HYPER_RANGES[key]
            check_real(value, at, low, high, low_open=low_open, high_open=high_open)
        elif key == "betas":
            if not isinstance(value, list) or len(value) != 2:
                raise CheckpointError(f"{at}: expected two numbers, got {_show(value)}")
            for i, b in enumerate(value):
                check_real(b, f"{at}/{i}", 0.0, 1.0, high_open=True)
        elif key in _FLAGS:
            check_flag(value, at)


def check_state_tree(tree: Any, where: str) -> None:
    """Check the scalars of the states of known layout anywhere in a loaded tree.

    Recognised by their keys, as :meth:`state_dict` writes them: an optimizer's
    (``param_groups`` and ``state``, or portagrad's older ``t``, ``hyper`` and ``state``):
    learning rate and hyperparameters finite and in their range (``betas`` in [0, 1),
    ``eps``, ``weight_decay``, ``momentum`` non-negative...), flags such as ``amsgrad``
    bools, step counts non-negative integers below 2**63; a loss scaler's scale finite
    and positive; an updater's ``iteration``, an iterator's ``epoch`` and
    ``current_position`` counts; a trainer's ``elapsed_time`` finite and non-negative.
    Run on every load, before any object is touched.

    Parameters
    ----------
    tree
        The decoded state tree.
    where
        The file, for the message.

    Examples
    --------
    >>> from portagrad.io._validate import check_state_tree
    >>> from portagrad import CheckpointError
    >>> try:
    ...     check_state_tree({"opt": {"t": 3, "hyper": {"lr": -1.0}, "state": {}}}, "f")
    ... except CheckpointError as e:
    ...     print(e)
    load(f): opt/hyper/lr: expected a finite number in [0, inf), got -1.0
    """
    stack: list[tuple[Any, str]] = [(tree, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, list):
            stack.extend((v, f"{path}/{i}" if path else str(i)) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        at = f"load({where}): {path}/" if path else f"load({where}): "
        keys = set(node)
        if {"param_groups", "state"} <= keys:
            groups = node["param_groups"]
            if not isinstance(groups, list):
                raise CheckpointError(f"{at}param_groups: expected a list, got "
                                      f"{_show(groups)}")
            for i, g in enumerate(groups):
                _check_hyper(g, f"{at}param_groups/{i}")
            _check_param_steps(node["state"], f"{at}state")
        if {"t", "hyper", "state"} <= keys:
            _check_step_value(node["t"], f"{at}t")
            _check_hyper(node["hyper"], f"{at}hyper")
            _check_param_steps(node["state"], f"{at}state")
        if {"scale", "good_steps"} <= keys:
            check_real(node["scale"], f"{at}scale", 0.0, low_open=True)
            check_count(node["good_steps"], f"{at}good_steps")
        if {"iteration", "model", "optimizer", "iterator"} <= keys:
            check_count(node["iteration"], f"{at}iteration")
        if {"current_position", "epoch", "is_new_epoch"} <= keys:
            check_count(node["current_position"], f"{at}current_position")
            check_count(node["epoch"], f"{at}epoch")
            check_flag(node["is_new_epoch"], f"{at}is_new_epoch")
        if {"updater", "random", "extensions", "elapsed_time"} <= keys:
            check_real(node["elapsed_time"], f"{at}elapsed_time")
        stack.extend((v, f"{path}/{k}" if path else str(k)) for k, v in node.items())


def _check_param_steps(state: Any, where: str) -> None:
    if not isinstance(state, dict):
        return  # the optimizer's own load_state_dict names the malformed entry
    for name, entries in state.items():
        if isinstance(entries, dict) and "step" in entries:
            _check_step_value(entries["step"], f"{where}/{name}/step")
