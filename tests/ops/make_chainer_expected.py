"""Record Chainer 7.8.1's answers to the cases of ``_chainer_cases.py``.

Run with a Python that has ``chainer==7.8.1`` and ``numpy<2`` (not the project's
environment)::

    python tests/ops/make_chainer_expected.py > tests/ops/_chainer_expected.py

For each case it stores the outputs and, for the differentiable arguments, the gradient of
``sum(w * y)`` over the outputs ``y`` with fixed weights ``w`` drawn from the case's
generator after its inputs.
"""

from __future__ import annotations

import os
import sys

import numpy as np

if not hasattr(np, "float"):  # Chainer 7 still spells it numpy.float
    np.float = float  # type: ignore[attr-defined]

import chainer  # noqa: E402
import chainer.functions as F  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _chainer_cases import CASES  # noqa: E402


def _outputs(out):
    outs = []
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        outs.extend(o if isinstance(o, (tuple, list)) else [o])  # nested lists: flattened
    return [o if isinstance(o, chainer.Variable) else chainer.Variable(np.asarray(o))
            for o in outs]


def _fmt(a):
    a = np.asarray(a)
    flat = [float(f"{v:.13g}") for v in np.asarray(a, dtype=np.float64).ravel().tolist()]
    return f"({a.dtype.str!r}, {a.shape!r}, {flat!r})"


def main():
    print("# ruff: noqa: E501 - one line per recorded array")
    print('"""Chainer 7.8.1\'s answers to the cases of _chainer_cases.py (written by')
    print('make_chainer_expected.py): case id -> (outputs, gradients); each array is')
    print('(dtype, shape, flat values)."""')
    print()
    print('inf = float("inf")')
    print('nan = float("nan")')
    print()
    print("EXPECTED = {")
    for cid, name, make in CASES:
        rng = np.random.default_rng(_seed(cid))
        args, kwargs, diff = make(rng)
        args = list(args)
        vs = {}
        for i in diff:
            vs[i] = chainer.Variable(np.asarray(args[i]))
            args[i] = vs[i]
        try:
            outs = _outputs(getattr(F, name)(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - reported, the case is left out
            print(f"{cid}: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
            continue
        grads = []
        if diff:
            total = 0
            for o in outs:
                if o.dtype.kind != "f":
                    continue
                w = rng.uniform(-1, 1, size=o.shape).astype(o.dtype)
                ok = np.isfinite(o.array)
                if not ok.all():  # windows wholly in the padding give -inf
                    o = F.where(ok, o, np.zeros_like(o.array))
                total = total + F.sum(o * w)
            gs = chainer.grad([total], [vs[i] for i in diff])
            grads = [np.zeros_like(vs[i].array) if g is None else g.array
                     for i, g in zip(diff, gs)]
        print(f"    {cid!r}: (")
        print("        [" + ", ".join(_fmt(o.array) for o in outs) + "],")
        print("        [" + ", ".join(_fmt(g) for g in grads) + "]),")
    print("}")


def _seed(cid):
    return sum((i + 1) * ord(c) for i, c in enumerate(cid))


if __name__ == "__main__":
    main()
