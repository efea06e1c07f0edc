"""Chainer's ``DumpGraph`` (``dump_graph``): the graph behind an observed Variable as a
Graphviz DOT file (and a PNG when Graphviz's ``dot`` is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from ...._errors import PortagradTypeError
from ....tape._node import edge_parent
from ....tape._variable import Variable as _TapeVariable
from ...config import config
from ..extension import Extension

__all__ = ["DumpGraph", "dump_dot"]

_var_style = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
_func_style = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}


def _attrs(style: dict[str, str], label: str) -> str:
    items = {**style, "label": label}
    return ",".join(f'{k}="{v}"' for k, v in items.items())


def _var_label(v: Any) -> str:
    name = getattr(v, "name", None)
    shape = tuple(getattr(v, "shape", ()))
    dtype = getattr(getattr(v, "array", None), "dtype", "")
    return f"{name + ': ' if name else ''}{shape}, {dtype}"


def dump_dot(root: Any, variable_style: dict | None = None,
             function_style: dict | None = None) -> str:
    """The DOT text of the graph that computed ``root``.

    Parameters
    ----------
    root
        A Variable.
    variable_style, function_style
        Graphviz attributes of the Variable and function nodes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.chainer.training.extensions.computational_graph import dump_dot
    >>> x = pg.Variable(np.ones(2))
    >>> dot = dump_dot((x * x).sum())
    >>> dot.startswith("digraph graphname{") and "mul" in dot
    True
    """
    vstyle = variable_style or _var_style
    fstyle = function_style or _func_style
    lines = ["digraph graphname{rankdir=TB;"]
    seen_nodes: set[int] = set()
    seen_vars: set[int] = set()

    def add_var(v: Any) -> None:
        if id(v) not in seen_vars:
            seen_vars.add(id(v))
            lines.append(f"{id(v)} [{_attrs(vstyle, _var_label(v))}];")

    add_var(root)
    stack = [(root.creator, root)] if getattr(root, "creator", None) is not None else []
    while stack:
        node, out = stack.pop()
        nid = id(node)
        if nid not in seen_nodes:
            seen_nodes.add(nid)
            name = getattr(getattr(node, "prim", None), "name", type(node).__name__)
            lines.append(f"{nid} [{_attrs(fstyle, name)}];")
            for e in node.edges:
                if e is None:
                    continue
                p = edge_parent(e)
                if p is not None:
                    parent = p[0]
                    lines.append(f"{id(parent)} -> {nid};")
                    stack.append((parent, None))
                else:
                    add_var(e)
                    lines.append(f"{id(e)} -> {nid};")
        if out is not None:
            lines.append(f"{nid} -> {id(out)};")
    lines.append("}")
    return "\n".join(lines)


class DumpGraph(Extension):
    """Write the graph behind ``trainer.observation[root_name]`` once, at the first
    iteration, to ``out/<filename>`` (``cg.dot``).

    Parameters
    ----------
    root_name
        The observed key of the root Variable (``'main/loss'``).
    filename
        The DOT file (``out_name`` is Chainer's older name).
    variable_style, function_style
        Graphviz attributes.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.DumpGraph("main/loss")._filename
    'cg.dot'
    """

    default_name = "dump_graph"  # type: ignore[assignment]

    def __init__(self, root_name: str, filename: str | None = None,
                 variable_style: dict | None = None, function_style: dict | None = None,
                 **kwargs: Any) -> None:
        out_name = kwargs.pop("out_name", "cg.dot")
        if kwargs:
            raise PortagradTypeError(f"DumpGraph(): unexpected arguments {sorted(kwargs)}")
        self._root_name = root_name
        self._filename = out_name if filename is None else filename
        self._variable_style = variable_style or _var_style
        self._function_style = function_style or _func_style
        self._original_flag: Any = None
        self._flag_called = False

    def initialize(self, trainer: Any) -> None:
        if not self._flag_called:
            self._original_flag = getattr(config, "keep_graph_on_report", False)
            config.keep_graph_on_report = True

    def trigger(self, trainer: Any) -> bool:  # type: ignore[override]
        if self._flag_called:
            return False
        self._flag_called = True
        return True

    def __call__(self, trainer: Any) -> None:
        try:
            var = trainer.observation[self._root_name]
            if not isinstance(var, _TapeVariable):
                raise PortagradTypeError(f"DumpGraph: the observed {self._root_name!r} is "
                                         f"not a Variable but {type(var).__name__}")
            dot = dump_dot(var, self._variable_style, self._function_style)
            filename = os.path.join(trainer.out, self._filename)
            with open(filename, "w") as f:
                f.write(dot)
            if shutil.which("dot"):
                png = os.path.join(trainer.out, os.path.splitext(self._filename)[0] + ".png")
                subprocess.run(["dot", "-Tpng", filename, "-o", png], check=True)
        finally:
            config.keep_graph_on_report = self._original_flag

    def serialize(self, serializer: Any) -> None:
        self._original_flag = serializer("_original_flag", self._original_flag)
        self._flag_called = bool(serializer("_flag_called", self._flag_called))
