"""Every example in the vision package's docstrings runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import portagrad.vision

_MODULES = sorted(m.name for m in pkgutil.walk_packages(portagrad.vision.__path__,
                                                         "portagrad.vision."))


def _importable(name):
    try:
        return importlib.import_module(name)
    except ImportError as e:  # optional dependency of that module missing
        pytest.skip(f"{name}: {e}")


@pytest.mark.parametrize("name", _MODULES)
def test_docstring_examples(name):
    module = _importable(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
