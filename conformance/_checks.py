"""The conformance checks on one drawn example, shared by pytest and ``portagrad conformance``.

Each check takes a record, a backend and *host* arguments (NumPy float64 arrays and Python
values, as the record's strategy draws them), casts and moves them itself, and either
returns ``"pass"``, returns ``"n/a"`` (the check does not apply to this op or these
arguments), or raises :class:`CheckFailure` with a message that names the op, what was
expected and what was found. Any other exception is the op's own failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import portagrad as pg
from portagrad.gradcheck import GradientCheckError, check_backward
from portagrad.xp import from_numpy, to_numpy
from portagrad.xp._namespace import device_of, namespace_name, namespace_of

from ._backends import HOST, Backend
from ._db import OpRecord
from ._fastpath import check_fastpath, fast_path_libraries
from ._gradients import (
    DEFAULT_TOL,
    NA,
    PASS,
    CheckFailure,
    cast_host,
    dtypes_for,
    float_outputs,
    grads,
    is_float_array,
    leaves,
    lift,
    outputs,
    partial,
    prepare,
    raw,
    reference_args,
)
from ._rules import check_unrecorded

__all__ = ["CHECKS", "CheckFailure", "PASS", "NA", "CHECK_FUNCTIONS", "applies",
           "check_errors"]

CHECKS = ("forward", "order1", "order2", "order3", "jvp", "device", "dtype", "errors",
          "fastpath", "mutation", "unrecorded")
# Builtin errors an op may raise instead of a portagrad error: Python's sequence protocol
# (iteration over ``__getitem__``) stops on IndexError.
_PROTOCOL_ERRORS = (IndexError,)


# -- the checks ---------------------------------------------------------------------------
def check_forward(record: OpRecord, backend: Backend, host: tuple) -> str:
    """Values and shapes of the outputs against the float64 NumPy reference, per dtype."""
    if record.ref is None:
        return NA
    for dtype in dtypes_for(record, backend):
        args = backend.put(cast_host(host, dtype))
        got = outputs(record.fn(*args))
        want = outputs(record.ref(*reference_args(host, dtype)))
        if len(got) != len(want):
            raise CheckFailure(f"{record.name} ({dtype}): expected {len(want)} outputs as the "
                               f"reference, got {len(got)}")
        atol, rtol = record.tol.get(dtype, DEFAULT_TOL)
        for i, (g, w) in enumerate(zip(got, want)):
            g = to_numpy(raw(g))
            w = np.asarray(w)
            if g.shape != w.shape:
                raise CheckFailure(f"{record.name} ({dtype}): expected output {i} of shape "
                                   f"{w.shape} (the reference's), got {g.shape}")
            bad = ~np.isclose(g.astype(np.float64), w.astype(np.float64), atol=atol,
                              rtol=rtol, equal_nan=True)
            if np.any(bad):
                j = tuple(int(t[0]) for t in np.nonzero(bad)) if bad.ndim else ()
                raise CheckFailure(
                    f"{record.name} ({dtype}): output {i} differs from the reference at "
                    f"{int(bad.sum())} of {bad.size} positions beyond atol {atol}, rtol "
                    f"{rtol}; first at {j}: got {g[j]!r}, expected {w[j]!r}")
    return PASS


def check_order(record: OpRecord, backend: Backend, host: tuple, k: int) -> str:
    """The order-``k`` derivative along a random direction against central differences."""
    pos = record.diff_positions(host)
    if k > record.order or not pos:
        return NA
    scale = 10.0 ** (k - 1)
    label = f"{record.name} (order {k})"
    if backend.supports_float64:
        args = backend.put(cast_host(host, "float64"))
        f, arrays = lift(*partial(record.fn, args, pos), k, seed=k)
        try:
            check_backward(f, arrays, eps=record.eps, atol=record.grad_tol[0] * scale,
                           rtol=record.grad_tol[1] * scale, dtype=None, seed=k, name=label)
        except GradientCheckError as e:
            raise CheckFailure(str(e)) from None
        return PASS
    _check_against_host(record, backend, host, pos, k, label, scale)
    return PASS


def _check_against_host(record: OpRecord, backend: Backend, host: tuple, pos: tuple,
                        k: int, label: str, scale: float) -> None:
    """Float32 analytic derivative on the device against float64 differences on the host."""
    dev_f, dev_x = lift(*partial(record.fn, backend.put(cast_host(host, "float32")), pos),
                         k, seed=k)
    host_f, host_x = lift(*partial(record.fn, HOST.put(cast_host(host, "float64")), pos),
                           k, seed=k)
    rng = np.random.default_rng(k)
    dirs = [rng.standard_normal(tuple(x.shape)) for x in host_x]
    host_out = float_outputs(outputs(host_f(*[pg.Variable(x) for x in host_x])))
    cots = [rng.standard_normal(tuple(o.shape)) for o in host_out]
    vs = [pg.Variable(x, requires_grad=True) for x in dev_x]
    outs = [o for o in float_outputs(outputs(dev_f(*vs)))]
    pairs = [(o, from_numpy(c.astype(np.float32), like=o.array))
             for o, c in zip(outs, cots) if o.requires_grad]
    analytic = 0.0
    if pairs:
        gs = pg.grad([o for o, _ in pairs], vs, [c for _, c in pairs], allow_unused=True)
        analytic = sum(float(np.sum(to_numpy(g.array).astype(np.float64) * d))
                       for g, d in zip(gs, dirs) if g is not None)

    def loss(sign: float) -> float:
        xs = [from_numpy(to_numpy(x) + sign * record.eps * d, like=x)
              for x, d in zip(host_x, dirs)]
        ys = float_outputs(outputs(host_f(*[pg.Variable(x) for x in xs])))
        return sum(float(np.sum(to_numpy(y.array) * c)) for y, c in zip(ys, cots))

    numeric = (loss(1.0) - loss(-1.0)) / (2 * record.eps)
    atol, rtol = (t * scale for t in record.grad_tol_float32)
    if not abs(analytic - numeric) <= atol + rtol * abs(numeric):
        raise CheckFailure(
            f"{label}: float32 directional derivative on {backend.name} {analytic!r} differs "
            f"from the float64 one of central differences on the host {numeric!r} "
            f"(|diff| {abs(analytic - numeric):.3g} > atol {atol:g} + rtol {rtol:g} * "
            f"|numerical|)")


def _direction(rng: np.random.Generator, a: Any) -> Any:
    host = to_numpy(a)
    d = rng.standard_normal(host.shape)
    if host.dtype.kind == "c":
        d = d + 1j * rng.standard_normal(host.shape)
    return from_numpy(d.astype(host.dtype), like=a)


def _inner(pairs: list) -> float:
    """``sum Re <a, b>`` over pairs of Variables/arrays (``None`` counts as zero)."""
    total = 0.0
    for a, b in pairs:
        if a is None or b is None:
            continue
        total += float(np.real(np.sum(np.conj(to_numpy(raw(a)).astype(np.complex128))
                                      * to_numpy(raw(b)))))
    return total


def _agree(label: str, what: str, lhs: float, rhs: float, tol: tuple) -> None:
    atol, rtol = tol
    if not abs(lhs - rhs) <= atol + rtol * max(abs(lhs), abs(rhs)):
        raise CheckFailure(f"{label}: {what}: {lhs!r} != {rhs!r} (|diff| {abs(lhs - rhs):.3g}"
                           f" > atol {atol:g} + rtol {rtol:g} * max)")


def _dot(a: pg.Variable, b: Any) -> pg.Variable:
    """``Re <b, a>`` as a recorded scalar (``b`` a constant)."""
    if a.xp.isdtype(a.dtype, "complex floating"):
        return pg.ops.sum(pg.ops.real(a * pg.ops.conj(b)))
    return pg.ops.sum(a * b)


def check_jvp(record: OpRecord, backend: Backend, host: tuple) -> str:
    """Forward mode against reverse mode: ``<u, J t> = <J^T u, t>`` for random ``t`` and
    ``u``; with second derivatives, ``<s, d(J^T u) t>`` three ways: the tangent of the
    gradient (forward-over-reverse), the gradient of the gradient (reverse-over-reverse)
    and the gradient of the tangent (reverse-over-forward, what ``pg.hvp`` does)."""
    from portagrad.autograd import forward_ad as fwAD

    pos = record.diff_positions(host)
    if not pos:
        return NA
    dtype = "float64" if backend.supports_float64 else "float32"
    tol = record.grad_tol if dtype == "float64" else record.grad_tol_float32
    label = f"{record.name} (forward mode)"
    f, xs = partial(record.fn, backend.put(cast_host(host, dtype)), pos)
    rng = np.random.default_rng(11)
    tans = [_direction(rng, x) for x in xs]
    second = record.order >= 2
    with fwAD.dual_level():
        vs = [pg.Variable(x, requires_grad=True) for x in xs]
        outs = float_outputs(outputs(f(*[fwAD.make_dual(v, t) for v, t in zip(vs, tans)])))
        if not outs:
            return NA
        jt = [fwAD.unpack_dual(o).tangent for o in outs]
        cots = [_direction(rng, o.array) for o in outs]
        for o, t in zip(outs, jt):
            if t is not None and (tuple(t.shape) != tuple(o.shape) or t.dtype != o.dtype):
                raise CheckFailure(f"{label}: expected a tangent of the output's shape "
                                   f"{tuple(o.shape)} and dtype {o.dtype}, got "
                                   f"{tuple(t.shape)} {t.dtype}")
        pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
        if not pairs:
            return NA
        gs = pg.grad([o for o, _ in pairs], vs, [c for _, c in pairs], allow_unused=True,
                     create_graph=second)
        _agree(label, "<u, J t> (forward) vs <J^T u, t> (reverse)",
               _inner(list(zip(cots, jt))), _inner(list(zip(gs, tans))), tol)
        if not second:
            return PASS
        dirs = [_direction(rng, x) for x in xs]
        for_over_rev = _inner([(s, fwAD.unpack_dual(g).tangent if g is not None else None)
                               for s, g in zip(dirs, gs)])
    second_tol = tuple(t * 10 for t in tol)

    def grad_dot(terms: list, along: list) -> float:
        live = [_dot(a, b) for a, b in terms if a is not None and a.requires_grad]
        if not live:
            return 0.0
        total = live[0]
        for term in live[1:]:
            total = total + term
        return _inner(list(zip(pg.grad(total, vs, allow_unused=True, retain_graph=True),
                               along)))

    rev_over_rev = grad_dot(list(zip(gs, dirs)), tans)
    _agree(label, "tangent of the gradient (forward-over-reverse) vs gradient of the "
           "gradient (reverse-over-reverse)", for_over_rev, rev_over_rev, second_tol)
    rev_over_fwd = grad_dot(list(zip(jt, cots)), dirs)
    _agree(label, "gradient of the tangent (reverse-over-forward) vs gradient of the "
           "gradient (reverse-over-reverse)", rev_over_fwd, rev_over_rev, second_tol)
    return PASS


def check_device(record: OpRecord, backend: Backend, host: tuple) -> str:
    """Outputs and gradients (first and second order) on the device of the inputs."""
    args, pos = prepare(record, backend, host, backend.work_dtype)
    arrays = [a for a in leaves(args) if is_float_array(a)] or leaves(args)
    if not arrays:
        return NA
    want = device_of(arrays[0])
    xp = namespace_of(arrays[0])
    outs, targets, g1, g2 = grads(record, args, pos, second=record.order >= 2)
    for i, o in enumerate(outs):
        if isinstance(o, pg.Variable) and device_of(o.array) != want:
            raise CheckFailure(f"{record.name}: expected output {i} on the inputs' device "
                               f"{want}, got {device_of(o.array)}")
    for what, gs in (("gradient", g1), ("second-order gradient", g2)):
        for t, g, p in zip(targets, gs, pos):
            if g is None:
                continue
            if namespace_of(g.array) is not xp:
                raise CheckFailure(f"{record.name}: expected the {what} of argument {p} in "
                                   f"{namespace_name(xp)}, got {type(g.array).__name__}")
            if device_of(g.array) != device_of(t.array):
                raise CheckFailure(f"{record.name}: expected the {what} of argument {p} on "
                                   f"its input's device {device_of(t.array)}, got "
                                   f"{device_of(g.array)}")
    return PASS


def check_dtype(record: OpRecord, backend: Backend, host: tuple) -> str:
    """Float outputs in the input dtype; gradients in their input's dtype and shape."""
    for dtype in dtypes_for(record, backend):
        args, pos = prepare(record, backend, host, dtype)
        outs, targets, g1, g2 = grads(record, args, pos, second=record.order >= 2)
        for i, o in enumerate(float_outputs(outs)):
            if str(o.array.dtype).split(".")[-1] != dtype:
                raise CheckFailure(f"{record.name}: expected output {i} of dtype {dtype} for "
                                   f"{dtype} inputs, got {o.array.dtype}")
        for what, gs in (("gradient", g1), ("second-order gradient", g2)):
            for t, g, p in zip(targets, gs, pos):
                if g is None:
                    continue
                if g.array.dtype != t.array.dtype:
                    raise CheckFailure(f"{record.name}: expected the {what} of argument {p} "
                                       f"of dtype {t.array.dtype}, got {g.array.dtype}")
                if tuple(g.shape) != tuple(t.shape):
                    raise CheckFailure(f"{record.name}: expected the {what} of argument {p} "
                                       f"of shape {tuple(t.shape)}, got {tuple(g.shape)}")
    return PASS


def check_mutation(record: OpRecord, backend: Backend, host: tuple) -> str:
    """Forward, backward and double backward leave every input as it was."""
    dtype = backend.work_dtype
    before = [np.array(a, copy=True) for a in leaves(cast_host(host, dtype))]
    args, pos = prepare(record, backend, host, dtype, read_only=True)
    try:
        grads(record, args, pos, second=record.order >= 2)
    except ValueError as e:
        if "read-only" in str(e):
            raise CheckFailure(f"{record.name}: expected its inputs left untouched, got a "
                               f"write into an input (a read-only NumPy array): {e}") from None
        raise
    for i, (b, a) in enumerate(zip(before, leaves(args))):
        now = to_numpy(raw(a))
        if now.shape != b.shape or not np.array_equal(now, b, equal_nan=b.dtype.kind == "f"):
            raise CheckFailure(f"{record.name}: expected its inputs left untouched, got input "
                               f"array {i} changed by forward or backward (was {b!r}, now "
                               f"{now!r})")
    return PASS


def check_errors(record: OpRecord, backend: Backend, seed: int = 0) -> str:
    """Every error input raises its documented portagrad error with a clear message."""
    if not record.errors:
        return NA
    rng = np.random.default_rng(seed)
    for make, err in record.errors:
        args = backend.put(tuple(make(rng)))
        names = err.__name__ if isinstance(err, type) else "/".join(e.__name__ for e in err)
        try:
            record.fn(*args)
        except err as e:
            if not isinstance(e, (pg.PortagradError, *_PROTOCOL_ERRORS)):
                raise CheckFailure(f"{record.name}: expected a portagrad error, got "
                                   f"{type(e).__name__}: {e}") from None
            msg = str(e).lower()
            if "expected" not in msg or "got" not in msg:
                raise CheckFailure(f"{record.name}: expected an error message saying what "
                                   f"was expected and what was got, got {type(e).__name__}: "
                                   f"{e}") from None
        except Exception as e:  # noqa: BLE001 - any other error is the failure reported
            raise CheckFailure(f"{record.name}: expected {names}, got {type(e).__name__}: "
                               f"{e}") from None
        else:
            shapes = [tuple(a.shape) if hasattr(a, "shape") else a for a in args]
            raise CheckFailure(f"{record.name}: expected {names} for arguments {shapes}, got "
                               f"a result")
    return PASS


CHECK_FUNCTIONS: dict[str, Callable[[OpRecord, Backend, tuple], str]] = {
    "forward": check_forward,
    "order1": lambda r, b, h: check_order(r, b, h, 1),
    "order2": lambda r, b, h: check_order(r, b, h, 2),
    "order3": lambda r, b, h: check_order(r, b, h, 3),
    "jvp": check_jvp,
    "device": check_device,
    "dtype": check_dtype,
    "fastpath": check_fastpath,
    "mutation": check_mutation,
    "unrecorded": check_unrecorded,
}


def applies(record: OpRecord, backend: Backend, check: str) -> bool:
    """Whether ``check`` can apply to ``record`` at all (before drawing arguments)."""
    if check == "forward":
        return record.ref is not None
    if check.startswith("order"):
        return int(check[5:]) <= record.order and record.diff != ()
    if check == "jvp":
        return record.order >= 1 and record.diff != ()
    if check == "errors":
        return bool(record.errors)
    if check == "fastpath":
        return namespace_name(backend.xp) in fast_path_libraries()
    return True
