"""Arguments and gradients shared by the checks: casting host arguments, moving them,
building the order-k gradient function of a record's op."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import portagrad as pg
from portagrad.xp import from_numpy, to_numpy
from portagrad.xp._namespace import namespace_of

from ._backends import Backend
from ._db import OpRecord

__all__ = ["CheckFailure", "PASS", "NA", "cast_host", "reference_args", "dtypes_for"]

PASS, NA = "pass", "n/a"
DEFAULT_TOL = (1e-2, 1e-2)  # dtypes a record gives no tolerance for (float16, bfloat16)


class CheckFailure(AssertionError):
    """A conformance check found a wrong result; the message says which and how."""


def _map_floats(value: Any, fn: Callable[[np.ndarray], Any]) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_map_floats(v, fn) for v in value)
    if isinstance(value, list):
        return [_map_floats(v, fn) for v in value]
    return value


def cast_host(host: tuple, dtype: str) -> tuple:
    """Host arguments with every floating array cast to ``dtype``."""
    return _map_floats(tuple(host), lambda a: a.astype(dtype))


def reference_args(host: tuple, dtype: str) -> tuple:
    """The float64 values the backend actually sees after the cast to ``dtype``."""
    return _map_floats(tuple(host), lambda a: a.astype(dtype).astype(np.float64))


def dtypes_for(record: OpRecord, backend: Backend) -> list[str]:
    """The record's dtypes that the backend's device has."""
    out = []
    for d in record.dtypes:
        if d == "float64" and not backend.supports_float64:
            continue
        if hasattr(backend.xp, d):
            out.append(d)
    return out


def outputs(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def raw(v: Any) -> Any:
    return v.array if isinstance(v, pg.Variable) else v


def is_float_array(a: Any) -> bool:
    return hasattr(a, "dtype") and hasattr(a, "shape") and namespace_of(a).isdtype(
        a.dtype, "real floating")


def leaves(value: Any) -> list:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in leaves(v)]
    return [value] if hasattr(value, "shape") and hasattr(value, "dtype") else []


def random_like(rng: np.random.Generator, a: Any) -> Any:
    host = rng.standard_normal(tuple(a.shape)).astype(str(to_numpy(a).dtype))
    return from_numpy(host, like=a)


def prepare(record: OpRecord, backend: Backend, host: tuple, dtype: str,
             read_only: bool = False) -> tuple[list, tuple[int, ...]]:
    args = list(backend.put(cast_host(host, dtype), read_only))
    return args, record.diff_positions(host)


# -- gradients as functions ---------------------------------------------------------------
def partial(fn: Callable[..., Any], args: Sequence[Any], pos: Sequence[int]
             ) -> tuple[Callable[..., Any], list]:
    """``fn`` as a function of the arguments at ``pos`` only (the others held fixed)."""

    def f(*diff_args: Any) -> Any:
        full = list(args)
        for p, a in zip(pos, diff_args):
            full[p] = a
        return fn(*full)

    return f, [args[p] for p in pos]


def float_outputs(outs: list) -> list:
    return [o for o in outs if isinstance(o, pg.Variable) and is_float_array(o.array)]


def _vjp_of(f: Callable[..., Any], n_in: int) -> Callable[..., Any]:
    """``(x..., gy...) -> d/dx sum(f(x) * gy)``, differentiable again."""

    def vjp(*args: Any) -> tuple:
        xs, gys = args[:n_in], args[n_in:]
        ys = float_outputs(outputs(f(*xs)))
        pairs = [(y, g) for y, g in zip(ys, gys) if y.requires_grad]
        if not pairs:
            return tuple(pg.ops.zeros_like(x) for x in xs)
        gs = pg.grad([y for y, _ in pairs], list(xs), [g for _, g in pairs],
                     create_graph=True, allow_unused=True)
        return tuple(g if g is not None else pg.ops.zeros_like(x) for x, g in zip(xs, gs))

    return vjp


def lift(f: Callable[..., Any], arrays: list, k: int, seed: int
          ) -> tuple[Callable[..., Any], list]:
    """The order-``k`` function (the vjp of the vjp ...) and its inputs: the arrays plus
    a random cotangent per float output at each level (drawn from ``seed``, so the same
    on every backend)."""
    rng = np.random.default_rng(seed)
    for _ in range(1, k):
        vs = [pg.Variable(a, requires_grad=True) for a in arrays]
        ys = float_outputs(outputs(f(*vs)))
        gys = [random_like(rng, y.array) for y in ys]
        f = _vjp_of(f, len(arrays))
        arrays = [*arrays, *gys]
    return f, arrays


def grads(record: OpRecord, args: list, pos: tuple[int, ...], second: bool, seed: int = 0
           ) -> tuple[list, list, list, list]:
    """Outputs, first-order and (if ``second``) second-order gradients of the record's
    function at ``args`` with respect to the arguments at ``pos``."""
    rng = np.random.default_rng(seed)
    args = list(args)
    targets = []
    for p in pos:
        args[p] = pg.Variable(args[p], requires_grad=True)
        targets.append(args[p])
    outs = outputs(record.fn(*args))
    used = [o for o in float_outputs(outs) if o.requires_grad]
    if not used or not targets:
        return outs, targets, [], []
    cots = [random_like(rng, o.array) for o in used]
    g1 = list(pg.grad(used, targets, cots, create_graph=second, allow_unused=True))
    g2: list = []
    live = [(g, t) for g, t in zip(g1, targets) if g is not None and g.requires_grad]
    if second and live:
        total = None
        for g, _ in live:
            term = pg.ops.sum(g * random_like(rng, g.array))
            total = term if total is None else total + term
        g2 = list(pg.grad(total, targets, allow_unused=True))
    return outs, targets, g1, g2


