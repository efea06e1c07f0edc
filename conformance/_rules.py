"""The rules a primitive declares for unrecorded backward, checked against its vjp.

A primitive may declare a second vjp rule that computes on raw arrays when backward
records nothing (``Primitive.defvjp_unrecorded``); higher derivatives always go through
the vjp. On one graph, the first-order gradient of an op that reaches such a primitive
is taken twice, once without recording (the declared rule runs) and once with
``create_graph=True`` (the vjp runs), and the two must agree.
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
    """The declared unrecorded rules of the primitives the op reaches give the gradient
    its recorded vjps give."""
    pos = record.diff_positions(host)
    if not pos or record.order < 1:
        return NA
    dtype = "float64" if backend.supports_float64 else "float32"
    f, arrays = partial(record.fn, backend.put(cast_host(host, dtype)), pos)
    vs = [pg.Variable(a, requires_grad=True) for a in arrays]
    ys = [y for y in float_outputs(outputs(f(*vs))) if y.requires_grad]
    rules = declared_rules_reached(ys)
    if not rules:
        return NA
    rng = np.random.default_rng(0)
    cots = [random_like(rng, y.array) for y in ys]
    plain = pg.grad(ys, vs, cots, retain_graph=True, allow_unused=True)
    recorded = pg.grad(ys, vs, cots, create_graph=True, allow_unused=True)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 1e-6)
    for i, (a, b) in enumerate(zip(plain, recorded)):
        if (a is None) != (b is None):
            raise CheckFailure(f"{record.name}: the unrecorded rules of {rules} give "
                               f"{'no' if a is None else 'a'} gradient for argument "
                               f"{pos[i]}, the vjps {'no' if b is None else 'one'}")
        if a is None:
            continue
        x, y = _host(a), _host(b)
        if x.shape != y.shape or not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            raise CheckFailure(
                f"{record.name}: the unrecorded rules of {rules} and the vjps differ in the "
                f"gradient of argument {pos[i]} ({dtype}): max |diff| "
                f"{float(np.max(np.abs(x - y))) if x.shape == y.shape else 'shape'}")
    return PASS


def _host(g: Any) -> np.ndarray:
    return np.asarray(to_numpy(g.array), dtype=np.complex128 if np.iscomplexobj(
        to_numpy(g.array)) else np.float64)
