"""Loading the research examples (scripts in examples/) as modules, on every backend."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(name: str):
    """Import ``examples/<name>.py`` (its sibling ``_shared`` module is importable too)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    key = f"portagrad_example_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


# array-api-strict on its second device: any array left on the default device would make
# an op fail, so these runs also check that data and parameters stay where they were put.
BACKENDS = [("numpy", "cpu"), ("array_api_strict", "device1")]


@pytest.fixture(params=BACKENDS, ids=[b for b, _ in BACKENDS])
def backend(request):
    """``(--backend, --device)`` of a shortened run."""
    return request.param


@pytest.fixture
def load_example():
    """``load_example(name)`` imports ``examples/<name>.py`` as a module."""
    return _load


@pytest.fixture
def examples_dir():
    return EXAMPLES
