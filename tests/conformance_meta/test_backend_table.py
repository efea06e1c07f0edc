"""README.md's table of backends is the one the suite computes (conformance._backend_table)."""

from __future__ import annotations

from conformance._backend_table import README, TESTED, backend_table, readme_table


def test_readme_backend_table_matches_the_suite():
    got = readme_table(README.read_text())
    want = backend_table()
    assert got == want, (
        "README.md's backend table differs from the suite's; regenerate it with\n"
        "    python -m conformance._backend_table --write\n"
        f"expected:\n{want}\ngot:\n{got}")


def test_table_has_a_row_per_tested_backend_and_the_makefile_runs_them():
    table = backend_table()
    for name in TESTED:
        assert f"| {name} |" in table
    makefile = (README.parent / "Makefile").read_text()
    assert f"BACKENDS := {','.join(TESTED)}" in makefile
