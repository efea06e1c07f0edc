"""The fuzzer of every public callable: valid calls from the op database, then mutated.

Each case starts from a call that is valid where the op database has a record (its
``sample`` draws host arguments inside the op's domain) and from arguments built from
the signature elsewhere, then changes one thing: an array becomes NaN, infinite, empty,
0-d, of another dtype, big-endian or of another library; an integer becomes negative,
huge, a NumPy integer or a bool; an option becomes None. A call may raise only a
:class:`portagrad.PortagradError`; it must return in time (sizes that cannot fit are
refused up front, so no call here allocates more than a few kilobytes); where a NumPy
reference exists, NaN it propagates must stay NaN.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import portagrad as pg
import portagrad.nn.functional as F
from conformance._db import all_records
from portagrad.xp import from_numpy

# A call slower than this is a hang: every input here is a few elements, so only a loop
# or an allocation sized by a hostile integer can take so long.
HANG_SECONDS = 10.0

# Public names that are not operations on arrays (switches, type queries, classes).
_SKIP = {"set_train_mode", "BatchNormState", "from_dlpack", "__array_namespace_info__"}


@dataclasses.dataclass
class Outcome:
    """What one call did: ``ok``, ``error`` (a portagrad error), ``raw`` (any other
    exception), ``hang`` (slower than :data:`HANG_SECONDS`), ``wrong`` (NaN lost), or
    ``invalid`` (the mutation broke a record's own wrapper, so the op was never called)."""

    kind: str
    target: str
    mutation: str
    detail: str = ""


@dataclasses.dataclass
class Stats:
    calls: int = 0
    outcomes: dict[str, int] = dataclasses.field(default_factory=dict)
    bad: list[Outcome] = dataclasses.field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.calls += 1
        self.outcomes[o.kind] = self.outcomes.get(o.kind, 0) + 1
        if o.kind in ("raw", "hang", "wrong"):
            self.bad.append(o)


STATS = Stats()


def targets() -> list[tuple[str, Callable[..., Any]]]:
    """Every public callable of pg.ops, ops.linalg, ops.fft and nn.functional."""
    out = []
    for prefix, mod in (("ops.", pg.ops), ("ops.linalg.", pg.ops.linalg),
                        ("ops.fft.", pg.ops.fft), ("nn.functional.", F)):
        for name in mod.__all__:
            f = getattr(mod, name)
            if name in _SKIP or inspect.isclass(f) or not callable(f):
                continue
            out.append((prefix + name, f))
    return out


_RECORDS: dict[str, Any] | None = None


def record_for(target: str) -> Any:
    """The op database's record of ``ops.<name>`` (or of its sub-namespace name)."""
    global _RECORDS
    if _RECORDS is None:
        _RECORDS = {}
        for r in all_records():
            _RECORDS.setdefault(r.name, r)
            for c in r.covers:
                _RECORDS.setdefault(c, r)
    if not target.startswith("ops."):
        return None
    return _RECORDS.get(target[4:])


# -- arguments from the signature, where no record exists -------------------------------
_FLOAT_NAMES = {"x", "input", "a", "x1", "x2", "y", "b", "input1", "input2", "anchor",
                "positive", "negative", "weight", "log_probs", "q", "p", "query", "key",
                "value", "xs", "x0", "target_real", "mean", "var", "h", "c", "grid",
                "theta", "offset", "W", "bias", "gamma", "beta", "v", "u", "other"}
_INT_ARRAY_NAMES = {"t", "target", "labels", "indices", "index", "ids", "y_true",
                    "targets", "lengths", "input_lengths", "target_lengths", "perm"}
_BOOL_NAMES = {"mask", "condition", "cond", "where"}
_INT_NAMES = {"axis", "dim", "n", "k", "offset", "num_classes", "kernel_size", "stride",
              "padding", "groups", "num", "size", "upscale_factor", "downscale_factor",
              "ksize", "pyramid_height", "output_size", "ndim", "d", "p_order", "r",
              "repeats", "shift", "diagonal", "start", "stop", "step", "num_samples"}


def _generic_value(name: str, rng: np.random.Generator) -> Any:
    if name in _INT_ARRAY_NAMES:
        return rng.integers(0, 3, size=(2,))
    if name in _BOOL_NAMES:
        return rng.random((2, 3)) < 0.5
    if name in _INT_NAMES:
        return int(rng.integers(1, 3))
    if name in ("shape",):
        return (2, 3)
    if name in ("dtype",):
        return None
    if name in ("arrays", "tensors", "xs_list"):
        return [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))]
    shape = [(2, 3), (2, 3, 4), (1, 2, 4, 4), (3,), ()][int(rng.integers(0, 5))]
    return np.asarray(rng.standard_normal(shape))


def generic_call(f: Callable[..., Any], rng: np.random.Generator) -> tuple[list, dict]:
    """Positional arguments for the required parameters of ``f``, by their names."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return [np.asarray(rng.standard_normal((2, 3)))], {}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if p.kind == p.VAR_POSITIONAL and not args:
                args.append(np.asarray(rng.standard_normal((2, 3))))
            continue
        if p.default is not p.empty:
            continue
        v = _generic_value(p.name, rng)
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = v
        else:
            args.append(v)
    return args, kwargs


def optional_names(f: Callable[..., Any]) -> list[str]:
    """The parameters of ``f`` with defaults (the options a mutation may set)."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.default is not p.empty and p.kind != p.VAR_KEYWORD]


# -- mutations ----------------------------------------------------------------------------
def _torch(a: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(np.ascontiguousarray(a))


def _strict(a: np.ndarray) -> Any:
    import array_api_strict as xps

    return from_numpy(np.ascontiguousarray(a), xp=xps)


def _with(a: np.ndarray, value: float, where: int) -> np.ndarray:
    b = np.array(a, dtype=a.dtype if a.dtype.kind in "fc" else np.float64, copy=True)
    flat = b.reshape(-1)
    flat[where % flat.size] = value
    return b


ARRAY_MUTATIONS: dict[str, Callable[[np.ndarray, np.random.Generator], Any]] = {
    "nan": lambda a, r: _with(a, math.nan, int(r.integers(0, 1 << 16))) if a.size else a,
    "inf": lambda a, r: _with(a, math.inf, int(r.integers(0, 1 << 16))) if a.size else a,
    "-inf": lambda a, r: _with(a, -math.inf, int(r.integers(0, 1 << 16))) if a.size else a,
    "huge": lambda a, r: (a * 1e300) if a.dtype.kind == "f" else a,
    "empty": lambda a, r: np.zeros((0,) + a.shape[1:], dtype=a.dtype),
    "empty_last": lambda a, r: np.zeros(a.shape[:-1] + (0,), dtype=a.dtype) if a.ndim else a,
    "0-d": lambda a, r: np.asarray(a.reshape(-1)[0] if a.size else 0.0, dtype=a.dtype),
    "1-d": lambda a, r: a.reshape(-1),
    "int": lambda a, r: a.astype(np.int64),
    "bool": lambda a, r: a > 0 if a.dtype.kind != "b" else a,
    "float16": lambda a, r: a.astype(np.float16),
    "float32": lambda a, r: a.astype(np.float32),
    "complex": lambda a, r: a.astype(np.complex128),
    "uint8": lambda a, r: np.abs(a).astype(np.uint8),
    "big-endian": lambda a, r: a.astype(a.dtype.newbyteorder(">")) if a.dtype.itemsize > 1
    else a,
    "torch": lambda a, r: _torch(a),
    "array_api_strict": lambda a, r: _strict(a),
    "None": lambda a, r: None,
    "list": lambda a, r: a.tolist(),
    "python float": lambda a, r: 1.5,
}
INT_MUTATIONS: dict[str, Callable[[int], Any]] = {
    "int -1": lambda v: -1,
    "int 0": lambda v: 0,
    "int -10**9": lambda v: -10 ** 9,
    "int 2**63": lambda v: 2 ** 63,
    "int 10**18": lambda v: 10 ** 18,
    "numpy int": lambda v: np.int64(v),
    "bool": lambda v: True,
    "float": lambda v: float(v) + 0.5,
    "None": lambda v: None,
}
OPTION_MUTATIONS: dict[str, Any] = {
    "None": None, "-1": -1, "2**63": 2 ** 63, "-10**9": -10 ** 9, "nan": math.nan,
    "str": "bogus", "numpy int": np.int64(1), "tuple": (1, 2, 3),
}


def mutate(args: list, kwargs: dict, f: Callable[..., Any], rng: np.random.Generator
           ) -> tuple[list, dict, str]:
    """One mutation of one argument; returns the new arguments and its name."""
    args = list(args)
    kwargs = dict(kwargs)
    slots: list[tuple[str, Any]] = []
    for i, a in enumerate(args):
        slots.append((f"arg{i}", a))
    for k, a in kwargs.items():
        slots.append((k, a))
    opts = optional_names(f)
    choice = rng.random()
    if opts and (choice < 0.2 or not slots):
        name = opts[int(rng.integers(0, len(opts)))]
        mname = list(OPTION_MUTATIONS)[int(rng.integers(0, len(OPTION_MUTATIONS)))]
        kwargs[name] = OPTION_MUTATIONS[mname]
        # An option given by keyword may also have been passed by position; a
        # positional-only one right after the given arguments is passed by position.
        try:
            params = inspect.signature(f).parameters
            pos = list(params).index(name)
            pos_only = params[name].kind == inspect.Parameter.POSITIONAL_ONLY
        except (TypeError, ValueError):
            pos, pos_only = -1, False
        if 0 <= pos < len(args):
            args[pos] = kwargs.pop(name)
        elif pos_only and pos == len(args):
            args.append(kwargs.pop(name))
        return args, kwargs, f"{name}={mname}"
    if not slots:
        return args, kwargs, "none"
    name, value = slots[int(rng.integers(0, len(slots)))]

    def put(v: Any) -> None:
        if name.startswith("arg"):
            args[int(name[3:])] = v
        else:
            kwargs[name] = v

    if isinstance(value, np.ndarray):
        mname = list(ARRAY_MUTATIONS)[int(rng.integers(0, len(ARRAY_MUTATIONS)))]
        put(ARRAY_MUTATIONS[mname](value, rng))
        return args, kwargs, f"{name}:{mname}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        mname = list(INT_MUTATIONS)[int(rng.integers(0, len(INT_MUTATIONS)))]
        put(INT_MUTATIONS[mname](int(value)))
        return args, kwargs, f"{name}:{mname}"
    if isinstance(value, tuple) and value and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        mname = list(INT_MUTATIONS)[int(rng.integers(0, len(INT_MUTATIONS)))]
        j = int(rng.integers(0, len(value)))
        put(value[:j] + (INT_MUTATIONS[mname](value[j]),) + value[j + 1:])
        return args, kwargs, f"{name}[{j}]:{mname}"
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
        j = int(rng.integers(0, len(value)))
        mname = list(ARRAY_MUTATIONS)[int(rng.integers(0, len(ARRAY_MUTATIONS)))]
        seq = list(value)
        seq[j] = ARRAY_MUTATIONS[mname](seq[j], rng)
        put(type(value)(seq))
        return args, kwargs, f"{name}[{j}]:{mname}"
    put(None)
    return args, kwargs, f"{name}:None"


# -- the oracle -----------------------------------------------------------------------------
def _host(out: Any) -> list[np.ndarray]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    arrays = []
    for o in outs:
        a = o.array if isinstance(o, pg.Variable) else o
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            try:
                arrays.append(np.asarray(pg.xp.to_numpy(a)))
            except Exception:  # noqa: BLE001 - a value the host cannot read is not judged
                pass
    return arrays


# References that multiply by a 0/1 mask where the op (rightly) selects: NaN in an entry
# the definition never reads (a log-probability of another class than the target, an
# embedding of a background pixel, a value upsampled to one position of its window, a
# neighbour of zero bilinear weight) makes the reference NaN and leaves the op finite, as
# in PyTorch.
_MASKED_REFERENCES = {"nll_loss", "discriminative_margin_based_clustering_loss",
                      "upsampling_2d", "resize_images"}


def _nan_lost(rec: Any, args: list, out: Any) -> str:
    """Where the NumPy reference of ``rec`` has NaN, the op must have NaN too."""
    if rec is None or rec.ref is None or rec.name in _MASKED_REFERENCES:
        return ""
    if not any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isnan(a).any()
               for a in args):
        return ""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = rec.ref(*args)
    except Exception:  # noqa: BLE001 - no reference for these arguments
        return ""
    refs = [np.asarray(r) for r in (ref if isinstance(ref, (tuple, list)) else (ref,))]
    got = _host(out)
    if len(refs) != len(got):
        return ""
    for i, (r, g) in enumerate(zip(refs, got)):
        if r.shape != g.shape or r.dtype.kind not in "fc" or g.dtype.kind not in "fc":
            continue
        lost = np.isnan(r) & ~np.isnan(g)
        if lost.any():
            return f"output {i}: NaN in the reference, {g[lost].reshape(-1)[:3]} here"
    return ""


def _site(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    inside = [fr for fr in tb if "/portagrad/" in fr.filename]
    fr = inside[-1] if inside else (tb[-1] if tb else None)
    where = f"{fr.filename.split('/portagrad/')[-1]}:{fr.lineno}" if fr else "?"
    return f"{type(exc).__name__} at {where}: {str(exc)[:160]}"


def call(target: str, f: Callable[..., Any], args: list, kwargs: dict, mutation: str,
         rec: Any = None, record_fn: Callable[..., Any] | None = None) -> Outcome:
    """Run one call and judge it."""
    fn = record_fn if record_fn is not None else f
    start = time.perf_counter()
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args, **kwargs)
    except pg.PortagradError:
        o = Outcome("error", target, mutation)
    except Exception as e:  # noqa: BLE001 - the point: any other exception is a finding
        tb = traceback.extract_tb(e.__traceback__)
        if tb and "/conformance/" in tb[-1].filename:
            # The mutation broke the record's own wrapper before the op was reached.
            o = Outcome("invalid", target, mutation)
        else:
            o = Outcome("raw", target, mutation, _site(e))
    else:
        lost = _nan_lost(rec, args, out) if record_fn is not None else ""
        o = Outcome("wrong", target, mutation, lost) if lost else Outcome("ok", target,
                                                                           mutation)
    took = time.perf_counter() - start
    if took > HANG_SECONDS:
        o = Outcome("hang", target, mutation, f"{took:.1f} s")
    STATS.add(o)
    return o


def fuzz_one(target: str, f: Callable[..., Any], seed: int) -> Outcome:
    """One case of ``target``: a valid call (from its record where one exists) with one
    mutation, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    rec = record_for(target)
    if rec is not None and rec.sample is not None and rng.random() < 0.8:
        try:
            host = list(rec.sample(rng))
        except Exception:  # noqa: BLE001 - a record that cannot sample here
            host = None
        if host is not None:
            args, kwargs, m = mutate(host, {}, rec.fn, rng)
            return call(target, f, args, kwargs, "record " + m, rec, rec.fn)
    args, kwargs = generic_call(f, rng)
    if rng.random() < 0.9:
        args, kwargs, m = mutate(args, kwargs, f, rng)
    else:
        m = "unmutated"
    return call(target, f, args, kwargs, m)


def summary(stats: Stats = STATS) -> str:
    """The figures of a run, and the first findings of each kind."""
    kinds = ("ok", "error", "raw", "hang", "wrong", "invalid")
    lines = [f"fuzz: {stats.calls} calls; " + ", ".join(
        f"{k} {stats.outcomes.get(k, 0)}" for k in kinds)]
    seen: set[str] = set()
    for o in stats.bad:
        key = o.kind + o.target + o.detail[:60]
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"  {o.kind} {o.target} [{o.mutation}] {o.detail}")
        if len(seen) >= 400:
            break
    return "\n".join(lines)
