"""Backward without recording against backward with ``create_graph``.

A primitive may declare a second vjp rule that computes on raw arrays when backward
records nothing (``Primitive.defvjp_unrecorded``), and the engine then sums gradients in
place; higher derivatives always go through the vjps and recorded sums. On one graph,
the first-order gradient of the op is taken twice, once without recording and once with
``create_graph=True``, and the two must agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import portagrad as pg
from portagrad.xp import to_numpy

from ._backends import Backend
from ._db import OpRecord
from ._gradients import (
    NA,
    PASS,
    CheckFailure,
    cast_host,
    float_outputs,
    outputs,
    partial,
    random_like,
)

__all__ = ["check_unrecorded", "declared_rules_reached"]


def declared_rules_reached(ys: list) -> list[str]:
    """Names of the primitives with an unrecorded rule in the graphs of ``ys``."""
    seen: set[int] = set()
    names: set[str] = set()
    stack = [y.creator for y in ys if y.creator is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.prim.vjp_unrecorded is not None:
            names.add(node.prim.name)
        stack.extend(node.parents())
    return sorted(names)


def check_unrecorded(record: OpRecord, backend: Backend, host: tuple) -> str:
    """The gradient of unrecorded backward (declared unrecorded rules, in-place sums)
    equals the one of recorded backward (the vjps)."""
    pos = record.diff_positions(host)
    if not pos or record.order < 1:
        return NA
    dtype = "float64" if backend.supports_float64 else "float32"
    f, arrays = partial(record.fn, backend.put(cast_host(host, dtype)), pos)
    vs = [pg.Variable(a, requires_grad=True) for a in arrays]
    ys = [y for y in float_outputs(outputs(f(*vs))) if y.requires_grad]
    if not ys:
        return NA
    what = "unrecorded backward"
    rules = declared_rules_reached(ys)
    if rules:
        what += f" (the unrecorded rules of {rules})"
    rng = np.random.default_rng(0)
    cots = [random_like(rng, y.array) for y in ys]
    plain = pg.grad(ys, vs, cots, retain_graph=True, allow_unused=True)
    recorded = pg.grad(ys, vs, cots, create_graph=True, allow_unused=True)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 1e-6)
    for i, (a, b) in enumerate(zip(plain, recorded)):
        if (a is None) != (b is None):
            raise CheckFailure(f"{record.name}: {what} gives "
                               f"{'no' if a is None else 'a'} gradient for argument "
                               f"{pos[i]}, recorded backward {'no' if b is None else 'one'}")
        if a is None:
            continue
        x, y = _host(a), _host(b)
        if x.shape != y.shape or not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            raise CheckFailure(
                f"{record.name}: {what} and recorded backward differ in the gradient of "
                f"argument {pos[i]} ({dtype}): max |diff| "
                f"{float(np.max(np.abs(x - y))) if x.shape == y.shape else 'shape'}")
    return PASS


def _host(g: Any) -> np.ndarray:
    return np.asarray(to_numpy(g.array), dtype=np.complex128 if np.iscomplexobj(
        to_numpy(g.array)) else np.float64)
