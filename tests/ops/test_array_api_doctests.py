"""The executable examples in the docstrings of the standard's namespace modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["portagrad.ops._dtypes", "portagrad.ops._info", "portagrad.ops._complex",
           "portagrad.ops._bitwise", "portagrad.ops._std_extra", "portagrad.ops._search",
           "portagrad.ops._sets", "portagrad.ops._creation", "portagrad.ops._nondiff",
           "portagrad.ops._linalg_solve", "portagrad.ops._linalg_decomp",
           "portagrad.ops._linalg_ext", "portagrad.ops._fft"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
