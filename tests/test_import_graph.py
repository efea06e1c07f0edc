"""The direction of imports inside ``portagrad``, read from the source files.

The graph is built with :mod:`ast`, without importing anything: an edge ``a -> b`` means
module ``a`` names module ``b`` in an ``import`` statement anywhere in its file (at module
level, inside a function, or under ``if TYPE_CHECKING:``), since each of these ties the two
modules together. Relative imports are resolved, and ``from pkg import name`` points at
``pkg.name`` when that is a module and at ``pkg`` otherwise.
"""

from __future__ import annotations

import ast
import importlib.util
from collections import deque
from pathlib import Path

Graph = dict[str, set[str]]


def package_root(name: str = "portagrad") -> Path:
    """The folder of package ``name``, found without importing it."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not a package"
    return Path(next(iter(spec.submodule_search_locations)))


def module_files(root: Path) -> dict[str, Path]:
    """``{dotted module name: source file}`` for every ``.py`` file under ``root``."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    # ``from . import x`` in a package's __init__ means the package itself; in a plain
    # module it means the module's parent.
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str, modules: set[str]) -> str | None:
    # ``import a.b.c`` runs ``a.b.c``; a name below a module (an attribute, or a file we
    # do not have) points at the nearest module above it.
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imported_modules(module: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``module`` (source file ``path``) imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_from(module, _is_package(path), node)
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules
                     else source for alias in node.names]
        else:
            continue
        for name in names:
            target = _known(name, modules)
            if target is not None and target != module:
                found.add(target)
    return found


def build_graph(root: Path | None = None) -> Graph:
    """``{module: modules it imports}`` for the package in folder ``root``.

    Parameters
    ----------
    root
        The package's folder (default: the installed ``portagrad``).

    Examples
    --------
    >>> graph = build_graph()
    >>> "portagrad.training" in graph["portagrad"]
    True
    """
    files = module_files(root if root is not None else package_root())
    names = set(files)
    return {m: imported_modules(m, p, names) for m, p in files.items()}


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def imports_from(graph: Graph, src_prefix: str, dst_prefix: str) -> list[tuple[str, str]]:
    """Edges from a module under ``src_prefix`` to a module under ``dst_prefix``.

    :func:`assert_no_imports` makes a layering rule of it.

    Examples
    --------
    >>> imports_from({"p.a": {"p.b.c"}, "p.b.c": set()}, "p.a", "p.b")
    [('p.a', 'p.b.c')]
    """
    return sorted((src, dst) for src, targets in graph.items() if _under(src, src_prefix)
                  for dst in targets if _under(dst, dst_prefix))


def _strongly_connected(graph: Graph) -> list[list[str]]:
    # Tarjan's algorithm, iterative so that a deep package cannot exhaust the stack.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _shortest_cycle(graph: Graph, start: str) -> list[str]:
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node]):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is on no cycle")


def cycles_within(graph: Graph, prefix: str) -> list[list[str]]:
    """Import circles among the modules under ``prefix``, one per tangle.

    Only modules under ``prefix`` and the edges between them are looked at. Each group of
    modules that reach one another gives one shortest circle through its first module
    (alphabetically), written from that module back to it.

    :func:`assert_no_cycles` makes a rule of it.

    Parameters
    ----------
    graph
        From :func:`build_graph`.
    prefix
        A dotted module name; the modules it names and those below it are kept.

    Examples
    --------
    >>> cycles_within({"p.a": {"p.b"}, "p.b": {"p.a", "q"}, "q": {"p.b"}}, "p")
    [['p.a', 'p.b', 'p.a']]
    >>> cycles_within({"p.a": {"q"}, "q": {"p.a"}}, "p")
    []
    """
    sub = _restricted(graph, prefix)
    return [_shortest_cycle(sub, tangle[0]) for tangle in tangles_within(graph, prefix)]


def _restricted(graph: Graph, prefix: str) -> Graph:
    return {m: {t for t in targets if _under(t, prefix)}
            for m, targets in graph.items() if _under(m, prefix)}


def tangles_within(graph: Graph, prefix: str) -> list[list[str]]:
    """The groups of modules under ``prefix`` that all reach one another by imports.

    Breaking the one circle :func:`cycles_within` shows for a group may leave others in
    it; the group lists every module still to untangle.

    Examples
    --------
    >>> tangles_within({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a", "p.b"}}, "p")
    [['p.a', 'p.b', 'p.c']]
    """
    return [c for c in _strongly_connected(_restricted(graph, prefix)) if len(c) > 1]


def assert_no_imports(graph: Graph, src_prefix: str, dst_prefix: str, why: str = "") -> None:
    """Fail, listing the edges, when a module under ``src_prefix`` imports ``dst_prefix``.

    A layering rule is one line:

    .. code-block:: python

        def test_tape_does_not_import_ops():
            assert_no_imports(GRAPH, "portagrad.tape", "portagrad.ops")

    Parameters
    ----------
    graph
        From :func:`build_graph`.
    src_prefix, dst_prefix
        Dotted module names, each standing for itself and the modules below it.
    why
        Said first in the failure message: the reason for the rule, or the fix.

    Examples
    --------
    >>> assert_no_imports({"p.a": {"p.b"}, "p.b": set()}, "p.b", "p.a")
    >>> assert_no_imports({"p.a": {"p.b"}, "p.b": set()}, "p.a", "p.b")
    Traceback (most recent call last):
    ...
    AssertionError: p.a imports p.b:
      p.a -> p.b
    """
    edges = imports_from(graph, src_prefix, dst_prefix)
    if edges:
        raise AssertionError(f"{why}{'; ' if why else ''}{src_prefix} imports {dst_prefix}:\n"
                             + "\n".join(f"  {src} -> {dst}" for src, dst in edges))


def assert_no_cycles(graph: Graph, prefix: str, why: str = "") -> None:
    """Fail, listing one circle per tangle, when modules under ``prefix`` import in a circle.

    A rule that a subpackage has no circle is one line:

    .. code-block:: python

        def test_no_circle_in_xp():
            assert_no_cycles(GRAPH, "portagrad.xp")

    Parameters
    ----------
    graph
        From :func:`build_graph`.
    prefix
        A dotted module name, standing for itself and the modules below it.
    why
        Said first in the failure message: the reason for the rule, or the fix.

    Examples
    --------
    >>> assert_no_cycles({"p.a": {"p.b"}, "p.b": set()}, "p")
    >>> assert_no_cycles({"p.a": {"p.b"}, "p.b": {"p.a"}}, "p")
    Traceback (most recent call last):
    ...
    AssertionError: modules under p import one another:
      p.a -> p.b -> p.a
    """
    lines = []
    for cycle, tangle in zip(cycles_within(graph, prefix), tangles_within(graph, prefix)):
        lines.append("  " + " -> ".join(cycle))
        if len(tangle) > len(cycle) - 1:
            lines.append(f"    (one circle among {len(tangle)} modules: {', '.join(tangle)})")
    if lines:
        raise AssertionError(f"{why}{'; ' if why else ''}modules under {prefix} import one "
                             f"another:\n" + "\n".join(lines))


GRAPH = build_graph()


def test_nn_does_not_import_training():
    assert_no_imports(GRAPH, "portagrad.nn", "portagrad.training",
                      why="portagrad.nn sits below portagrad.training")


def test_training_does_not_import_the_chainer_face():
    assert_no_imports(GRAPH, "portagrad.training", "portagrad.chainer",
                      why="portagrad.training holds the one training loop; the Chainer "
                          "face's trainer, triggers and extensions adapt it from above")


def test_no_circle_in_training():
    assert_no_cycles(GRAPH, "portagrad.training",
                     why="the trainer and its extensions must not import each other; what "
                         "they share goes in a module below both")


def test_tape_does_not_import_ops():
    assert_no_imports(GRAPH, "portagrad.tape", "portagrad.ops",
                      why="the tape stands below ops: what the engine and forward mode need "
                          "lives in tape (or xp); ops installs Variable's operators itself")


def test_no_circle_between_tape_and_ops():
    tangled = [c for c in tangles_within(GRAPH, "portagrad")
               if any(_under(m, "portagrad.tape") for m in c)
               and any(_under(m, "portagrad.ops") for m in c)]
    assert not tangled, f"tape and ops import each other through {tangled}"


def test_no_circle_in_xp():
    assert_no_cycles(GRAPH, "portagrad.xp",
                     why="fast paths are attached from one table; no kernel module imports "
                         "back the module that imports it")


def test_graph_reads_every_kind_of_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\nfrom .sub import helper\n")
    (pkg / "a.py").write_text("import pkg.sub.b as b\n\ndef f():\n    from .sub import c\n")
    (pkg / "sub" / "__init__.py").write_text("from .. import a\ndef helper(): pass\n")
    (pkg / "sub" / "b.py").write_text("from ..a import f\nfrom . import c, missing\n")
    (pkg / "sub" / "c.py").write_text("import os\nfrom ... import outside\n")
    graph = build_graph(pkg)
    assert graph == {"pkg": {"pkg.a", "pkg.sub"}, "pkg.a": {"pkg.sub.b", "pkg.sub.c"},
                     "pkg.sub": {"pkg.a"}, "pkg.sub.b": {"pkg.a", "pkg.sub", "pkg.sub.c"},
                     "pkg.sub.c": set()}
    assert cycles_within(graph, "pkg") == [["pkg.a", "pkg.sub.b", "pkg.a"]]
    assert cycles_within(graph, "pkg.sub") == []
    assert imports_from(graph, "pkg.sub", "pkg.a") == [("pkg.sub", "pkg.a"),
                                                       ("pkg.sub.b", "pkg.a")]


def test_helper_examples():
    import doctest
    import sys

    result = doctest.testmod(sys.modules[__name__], optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
