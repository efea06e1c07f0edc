"""The op x check table that ``portagrad conformance`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._checks import CHECKS

__all__ = ["format_table", "counts"]

_CELL = {"pass": "ok", "fail": "FAIL", "n/a": "-", "skip": "skip"}


def counts(outcomes: Sequence[Any]) -> dict[str, int]:
    """How many outcomes have each status."""
    out = {"pass": 0, "fail": 0, "n/a": 0, "skip": 0}
    for o in outcomes:
        out[o.status] += 1
    return out


def format_table(outcomes: Sequence[Any], checks: Sequence[str] = CHECKS) -> str:
    """One table per namespace: a row per op, a column per check, then pass/fail counts.

    Cells: ``ok`` passed, ``FAIL`` failed, ``-`` does not apply, ``skip`` not supported
    on that namespace.
    """
    blocks = []
    for ns in dict.fromkeys(o.namespace for o in outcomes):
        mine = [o for o in outcomes if o.namespace == ns]
        cols = [c for c in checks if any(o.check == c for o in mine)]
        ops = list(dict.fromkeys(o.op for o in mine))
        cell = {(o.op, o.check): _CELL[o.status] for o in mine}
        width = max([len("op"), len("failed"), *(len(op) for op in ops)])
        widths = [max(len(c), 5) for c in cols]
        lines = [f"namespace: {ns}",
                 "  ".join([f"{'op':<{width}}", *(f"{c:>{w}}" for c, w in zip(cols, widths))])]
        lines.append("-" * len(lines[-1]))
        for op in ops:
            lines.append("  ".join([f"{op:<{width}}", *(f"{cell.get((op, c), ''):>{w}}"
                                                        for c, w in zip(cols, widths))]))
        lines.append("-" * len(lines[1]))
        for status, label in (("pass", "passed"), ("fail", "failed")):
            row = [str(counts([o for o in mine if o.check == c])[status]) for c in cols]
            lines.append("  ".join([f"{label:<{width}}", *(f"{v:>{w}}"
                                                          for v, w in zip(row, widths))]))
        total = counts(mine)
        lines.append(f"{ns}: {total['pass']} passed, {total['fail']} failed, "
                     f"{total['n/a']} not applicable, {total['skip']} skipped")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
