"""Every fenced ``python`` block of README.md and docs/*.md runs alone and prints.

Each block is run by itself in a fresh interpreter, in an empty directory, so a block
that leans on a name from an earlier one, or on files of the checkout, fails here. A block
that cannot run on a plain CPU machine is preceded by ``<!-- no-run: reason -->`` and
is reported as skipped with that reason.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_BLOCK = re.compile(r"(?:<!--\s*no-run:\s*(?P<why>.*?)\s*-->\s*\n)?^```python\n(?P<code>.*?)^```",
                    flags=re.S | re.M)


def blocks(text: str) -> list[tuple[int, str, str | None]]:
    """(line, code, reason it must not run or None) of each ``python`` block of ``text``."""
    return [(text.count("\n", 0, m.start("code")), m.group("code"), m.group("why"))
            for m in _BLOCK.finditer(text)]


def _cases() -> list:
    cases = []
    for path in DOCS:
        for line, code, why in blocks(path.read_text()):
            name = f"{path.relative_to(ROOT)}:{line}"
            marks = [pytest.mark.skip(reason=why)] if why else []
            cases.append(pytest.param(name, code, id=name, marks=marks))
    return cases


def test_blocks_are_found():
    text = "a\n```python\nprint(1)\n```\n<!-- no-run: needs CuPy -->\n```python\nx\n```\n"
    assert blocks(text) == [(2, "print(1)\n", None), (6, "x\n", "needs CuPy")]
    found = _cases()
    assert len(found) >= 8
    assert any(p.values[0].startswith("docs/") for p in found)
    # Skipped blocks are the exception: most of what the documents show is checked.
    assert sum(bool(p.marks) for p in found) <= 2


@pytest.mark.parametrize(("where", "code"), _cases())
def test_block_runs_alone_and_prints(where, code, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{where} fails when run alone:\n{r.stderr[-3000:]}"
    assert r.stdout.strip(), f"{where} prints nothing: show what it computes"
