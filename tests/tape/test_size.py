"""The tape stays readable in one sitting: no function of it runs over a screen."""

import ast
from pathlib import Path

import portagrad.tape

MAX_LINES = 80


def test_no_function_of_the_tape_is_longer_than_a_screen():
    long = []
    for path in sorted(Path(portagrad.tape.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "split these into helpers: " + ", ".join(long)
