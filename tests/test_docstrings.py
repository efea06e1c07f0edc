"""Every ``Examples`` section under ``portagrad/`` runs and prints what it shows (doctest).

One test per module that has examples; a module whose optional dependency is missing
(mpi4py, matplotlib, torch...) is skipped with the reason.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import portagrad

_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = ["portagrad"]
    for info in pkgutil.walk_packages(portagrad.__path__, "portagrad.", onerror=lambda n: None):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(set(names))


def _cases() -> list:
    cases = []
    finder = doctest.DocTestFinder(exclude_empty=True)
    for name in _module_names():
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            cases.append(pytest.param(name, None, id=name, marks=pytest.mark.skip(
                reason=f"optional dependency missing: {e}")))
            continue
        tests = [t for t in finder.find(module, name) if t.examples]
        if tests:
            cases.append(pytest.param(name, tests, id=name))
    return cases


@pytest.mark.parametrize(("name", "tests"), _cases())
def test_docstring_examples(name, tests):
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    for t in tests:
        runner.run(t, out=out.write)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {name}:\n" \
                                 f"{out.getvalue()}"


def test_every_module_was_collected():
    # A package that fails to import for another reason than a missing optional
    # dependency must not silently drop its examples.
    broken = []
    for name in _module_names():
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        except Exception as e:  # noqa: BLE001 - reported below
            broken.append(f"{name}: {type(e).__name__}: {e}")
    assert not broken, "modules that fail to import:\n" + "\n".join(broken)


def test_subpackages_load_on_first_attribute_access():
    import subprocess
    import sys

    code = ("import sys, portagrad as pg; assert 'portagrad.parallel' not in sys.modules; "
            "pg.parallel.create_communicator; pg.vision.utils; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "ok"
