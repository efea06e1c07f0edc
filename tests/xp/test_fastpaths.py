"""One table attaches every fast path, and portagrad.xp imports without a circle."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import portagrad
import portagrad.xp as pxp
from portagrad.xp import Kernel
from portagrad.xp._fastpaths import FAST_PATHS, install

XP_DIR = Path(pxp.__file__).parent
PACKAGE_DIR = Path(portagrad.__file__).parent


def _xp_kernels() -> list[Kernel]:
    """Every kernel object defined or imported at module level in portagrad.xp."""
    found: dict[int, Kernel] = {}
    for info in pkgutil.iter_modules(pxp.__path__):
        module = importlib.import_module(f"portagrad.xp.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Kernel) and value.default.__module__.startswith(
                    "portagrad.xp."):
                found[id(value)] = value
    return list(found.values())


def test_every_override_is_a_row_of_the_table():
    rows = [(k.name, lib) for k, lib, _ in FAST_PATHS]
    assert len(rows) == len(set(rows)), "a (kernel, library) pair is listed twice"
    table = {(id(k), lib): fn for k, lib, fn in FAST_PATHS}
    kernels = _xp_kernels()
    attached = {(id(k), lib): fn for k in kernels for lib, fn in k.overrides.items()}
    missing = {(k.name, lib) for k in kernels for lib in k.overrides
               if (id(k), lib) not in table}
    assert not missing, f"fast paths attached outside portagrad.xp._fastpaths: {missing}"
    assert attached.keys() == table.keys()
    assert all(attached[key] is table[key] for key in table)
    # The optimizers' update kernels, kept out of KERNELS, are in the table too.
    assert {"sgd_update", "momentum_update", "adam_update"} <= {k.name for k in kernels}


def test_install_again_changes_nothing():
    before = {id(k): dict(k.overrides) for k in _xp_kernels()}
    install()
    assert {id(k): dict(k.overrides) for k in _xp_kernels()} == before


def test_every_fast_path_names_a_library_the_registry_dispatches_on():
    assert {lib for _, lib, _ in FAST_PATHS} <= {"numpy", "cupy", "torch", "jax"}
    assert all(callable(fn) for _, _, fn in FAST_PATHS)


def _attaching_calls(path: Path) -> list[int]:
    """Lines of ``path`` that call ``.override(...)`` or assign into ``.overrides``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "override"):
            lines.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Attribute) and sub.attr == "overrides":
                        lines.append(node.lineno)
    return lines


def test_no_module_but_the_table_attaches_a_fast_path():
    allowed = {XP_DIR / "_fastpaths.py", XP_DIR / "_kernels.py"}
    offenders = {str(path.relative_to(PACKAGE_DIR)): lines
                 for path in sorted(PACKAGE_DIR.rglob("*.py")) if path not in allowed
                 for lines in [_attaching_calls(path)] if lines}
    assert not offenders, f"fast paths attached outside portagrad/xp/_fastpaths.py: {offenders}"


def _xp_import_graph() -> dict[str, set[str]]:
    """``{module: modules of portagrad.xp it imports}`` from the source, imports inside
    functions included (``__init__`` stands for the package)."""
    names = {p.stem for p in XP_DIR.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(XP_DIR.glob("*.py")):
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    if node.module is None:  # from . import a, b
                        targets = [a.name if a.name in names else "__init__"
                                   for a in node.names]
                    else:
                        targets = [node.module.split(".")[0]]
                elif node.level == 0 and (node.module or "").startswith("portagrad.xp"):
                    rest = node.module.split(".")[2:]
                    if rest:
                        targets = [rest[0]]
                    else:
                        targets = [a.name if a.name in names else "__init__"
                                   for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name.split(".")[2] if a.name.count(".") >= 2 else "__init__"
                           for a in node.names if a.name.startswith("portagrad.xp")]
            edges.update(t for t in targets if t in names and t != path.stem)
        graph[path.stem] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_circle_inside_portagrad_xp():
    graph = _xp_import_graph()
    assert "_fastpaths" in graph["__init__"]
    assert "_conv" in graph["_conv_fast"]  # the graph sees imports at all
    cycle = _cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
