"""The README's table of backends and what ``make test`` checks on each, from the suite.

    python -m conformance._backend_table            # print the table
    python -m conformance._backend_table --write    # rewrite it in README.md

tests/conformance_meta/test_backend_table.py fails when README.md's table differs from
what this module computes from the records, the checks, the backends and the ci profile.
"""

from __future__ import annotations

import sys
from pathlib import Path

from portagrad.xp import KERNELS

from ._backends import get_backend
from ._checks import CHECKS, applies
from ._db import all_records
from ._fastpath import fast_path_libraries
from ._runner import NAMESPACE_PROFILES, PROFILES, profile_checks

__all__ = ["TESTED", "backend_table", "readme_table", "BEGIN", "END"]

# The backends ``make test`` runs (the Makefile's BACKENDS), in the table's order.
TESTED = ("numpy", "array_api_strict", "torch", "jax")
BEGIN = "<!-- backend table: python -m conformance._backend_table --write -->"
END = "<!-- end of backend table -->"
README = Path(__file__).resolve().parent.parent / "README.md"


def _examples(profile: str, name: str) -> int:
    kw = dict(PROFILES[profile])
    kw.update(NAMESPACE_PROFILES.get(profile, {}).get(name, {}))
    return int(kw["max_examples"])


def _row(name: str) -> str:
    backend = get_backend(name)
    records = all_records()
    checked = [r for r in records if name not in r.skip]
    ci_checks = profile_checks(name, "ci")
    cases = sum(1 for r in checked for c in ci_checks
                if c != "fastpath" and applies(r, backend, c))
    fast = sorted(k for k, kern in KERNELS.items()
                  if name in kern.overrides and kern.default.__module__.startswith("portagrad."))
    fast_cell = (f"{len(fast)} kernels, on the ops that reach them"
                 if name in fast_path_libraries() else "none registered")
    dtypes = "float32, float64" if backend.supports_float64 else "float32 (host float64)"
    device = backend.device()
    skipped = sorted(r.name for r in records if r not in checked)
    not_checked = ", ".join(f"`{n}`" for n in skipped) or "none"
    left = [c for c in CHECKS if c not in ci_checks]
    checks = "all" if not left else "all but " + ", ".join(left) + " (make test-full)"
    plus = " + fastpath" if name in fast_path_libraries() else ""
    return (f"| {name} | `{device}` | {dtypes} | {len(checked)} of {len(records)} "
            f"| {checks} | {cases}{plus} | {fast_cell} | {_examples('ci', name)} / "
            f"{_examples('full', name)} | {not_checked} |")


def backend_table() -> str:
    """The markdown table: a row per backend ``make test`` runs, plus CuPy's line."""
    head = ("| backend | device | conformance dtypes | ops checked | checks in `make test` "
            "| op x check cases | fast paths compared "
            "| examples: `make test` / `make test-full` | ops not checked there |\n"
            "|---|---|---|---|---|---|---|---|---|")
    rows = [_row(n) for n in TESTED]
    foot = (f"\nChecks: {', '.join(CHECKS)}. Every backend also runs the unit tests "
            f"parametrized over the `backend` fixture (tests/conftest.py; JAX with "
            f"`jax_enable_x64` there, for their float64 references). CuPy needs a CUDA "
            f"device: `make gpu-check`.")
    return "\n".join([head, *rows]) + "\n" + foot


def readme_table(text: str) -> str:
    """The table between the markers of a README's text ('' without the markers)."""
    if BEGIN not in text or END not in text:
        return ""
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def main(argv: list[str]) -> int:
    table = backend_table()
    if "--write" not in argv:
        print(table)
        return 0
    text = README.read_text()
    if BEGIN not in text:
        print(f"{README}: expected the marker {BEGIN!r}, got none", file=sys.stderr)
        return 1
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    README.write_text(f"{before}{BEGIN}\n{table}\n{END}{after}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
