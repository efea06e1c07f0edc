"""How the tape is built: functions that fit on a screen, switches written in one place."""

import ast
import re
from pathlib import Path

import portagrad
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


def test_the_switches_are_set_only_through_the_mode_setters():
    # state.mode is kept up to date by set_record, set_debug and set_levels (in
    # portagrad/tape/_mode.py): a direct assignment elsewhere would leave it stale.
    root = Path(portagrad.__file__).parent
    assignment = re.compile(r"\bstate\.(grad_enabled|debug|fwd|mode)\s*=(?!=)")
    found = [f"{path.relative_to(root)}:{i}"
             for path in sorted(root.rglob("*.py")) if path.name != "_mode.py"
             for i, line in enumerate(path.read_text().splitlines(), 1)
             if assignment.search(line)]
    assert not found, ("use portagrad.tape._mode.set_record / set_debug / set_levels "
                       "instead of assigning: " + ", ".join(found))
