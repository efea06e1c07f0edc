"""Every example in the parallel package's docstrings runs (on one rank) and prints what
it shows."""

import doctest
import importlib
import pkgutil

import pytest

pytest.importorskip("mpi4py")

import portagrad.parallel  # noqa: E402

_MODULES = sorted(m.name for m in pkgutil.walk_packages(portagrad.parallel.__path__,
                                                         "portagrad.parallel.")) + [
    "portagrad._cli._distributed"]


@pytest.mark.parametrize("name", _MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
