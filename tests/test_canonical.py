"""One implementation per function: every public name of the faces is the canonical
function of ``portagrad.ops`` or a declared adapter of one, and the public lists do not
depend on the order in which modules are imported."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import portagrad as pg
import portagrad.nn.functional as F
from portagrad.ops._adapters import canonical_of, is_adapter
from portagrad.tape import Primitive


def _public(module) -> dict[str, object]:
    return {n: getattr(module, n) for n in module.__all__
            if callable(getattr(module, n)) and not inspect.isclass(getattr(module, n))}


def _defining_module(obj) -> str:
    if isinstance(obj, Primitive):
        obj = obj.forward
    return getattr(obj, "__module__", "") or ""


# Every canonical function: a public callable of pg.ops (and its linalg and fft
# extensions) that is not itself an adapter.
_FACES = {"portagrad.ops": pg.ops, "portagrad.ops.linalg": pg.ops.linalg,
          "portagrad.ops.fft": pg.ops.fft, "portagrad.nn.functional": F}
_CANONICAL = {id(o) for m in (pg.ops, pg.ops.linalg, pg.ops.fft)
              for o in _public(m).values() if not is_adapter(o)}


def _cases():
    return [pytest.param(face, name, id=f"{face}.{name}")
            for face, module in _FACES.items() for name in _public(module)]


@pytest.mark.parametrize(("face", "name"), _cases())
def test_each_public_name_is_canonical_or_a_declared_adapter(face, name):
    obj = getattr(_FACES[face], name)
    if is_adapter(obj):
        target = canonical_of(obj)
        assert id(target) in _CANONICAL, (
            f"{face}.{name} adapts {target!r}, which is not a public canonical function of "
            f"portagrad.ops")
        return
    if face == "portagrad.nn.functional":
        assert id(obj) in _CANONICAL, (
            f"{face}.{name} computes its own result: it must be the pg.ops function itself or "
            f"an @adapts adapter of one")
        return
    where = _defining_module(obj)
    assert where.startswith("portagrad.ops."), (
        f"{face}.{name} is defined in {where!r}, outside portagrad.ops")


def test_adapters_are_thin():
    """An adapter calls its canonical function: its source names it (a sanity check that
    a declaration was not put on a second copy of the maths by mistake)."""
    bad = []
    for face, module in _FACES.items():
        for name, obj in _public(module).items():
            if not is_adapter(obj):
                continue
            target = obj.__dict__["__portagrad_adapts__"]
            tname = getattr(target, "__name__", None) or getattr(target, "name", "")
            src = inspect.getsource(inspect.unwrap(obj))
            if tname.lstrip("_") not in src:
                bad.append(f"{face}.{name} -> {tname}")
    assert not bad, "adapters whose source does not call their canonical function: " + \
        ", ".join(bad)


_DUMP = r"""
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
import portagrad as pg, portagrad.nn.functional as F
out = {}
for label, m in (("ops", pg.ops), ("linalg", pg.ops.linalg), ("fft", pg.ops.fft), ("F", F)):
    for n in m.__all__:
        o = getattr(m, n)
        f = getattr(o, "forward", o)
        out[f"{label}.{n}"] = [getattr(f, "__module__", None), getattr(f, "__qualname__",
                               type(o).__name__)]
print(json.dumps(out, sort_keys=True))
"""


def _submodules() -> list[str]:
    import pkgutil

    import portagrad.ops as ops

    return sorted(i.name for i in pkgutil.walk_packages(ops.__path__, "portagrad.ops."))


def test_public_lists_do_not_depend_on_import_order():
    mods = _submodules()
    orders = [[], mods, list(reversed(mods)), mods[1::2] + mods[::2],
              ["portagrad.nn.functional"] + list(reversed(mods))]
    dumps = []
    for order in orders:
        r = subprocess.run([sys.executable, "-c", _DUMP, *order], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        dumps.append(json.loads(r.stdout))
    for order, d in zip(orders[1:], dumps[1:]):
        diff = sorted(k for k in set(d) | set(dumps[0]) if d.get(k) != dumps[0].get(k))
        assert not diff, f"importing {order[:3]}... first changes {diff[:10]}"


def test_each_public_name_is_defined_once():
    """No public name of pg.ops is bound at the top level of two modules of ops/, so which
    object a name is never depends on which module was imported last."""
    import ast
    import pathlib

    root = pathlib.Path(pg.ops.__file__).parent
    where: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        for node in ast.parse(path.read_text()).body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            for n in names:
                where.setdefault(n, []).append(str(path.relative_to(root)))
    own = {"linalg": set(pg.ops.linalg.__all__), "fft": set(pg.ops.fft.__all__)}
    twice = {}
    for n in pg.ops.__all__:
        places = where.get(n, [])
        # The standard's extensions are namespaces of their own: linalg.diagonal and the
        # array function diagonal may both exist when they are different functions.
        if len(places) == 2 and any(n in s and getattr(getattr(pg.ops, k), n) is not
                                    getattr(pg.ops, n) for k, s in own.items()):
            continue
        if len(places) > 1:
            twice[n] = places
    assert not twice, f"public names bound in more than one module: {twice}"
