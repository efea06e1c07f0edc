"""pytest wiring of the conformance suite: namespaces, hypothesis profiles.

``--namespace numpy,torch`` (or ``PORTAGRAD_NAMESPACE``) selects the namespaces;
``HYPOTHESIS_PROFILE`` (dev, ci, full, thorough) selects how many examples each op x check
draws (see ``conformance._runner.PROFILES``; ci is derandomized).
"""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis.errors import InvalidArgument

from conformance._runner import register_profiles

register_profiles()
# The unit tests' profiles of the same names (tests/conftest.py) win when both load.
for _name, _kw in {"dev": {"max_examples": 20},
                   "ci": {"max_examples": 25, "derandomize": True, "print_blob": True},
                   "full": {"max_examples": 25, "derandomize": True, "print_blob": True},
                   "thorough": {"max_examples": 500}}.items():
    try:
        settings.get_profile(_name)
    except InvalidArgument:
        settings.register_profile(_name, deadline=None, **_kw)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):
    parser.addoption("--namespace", action="store", default=None,
                     help="comma-separated namespaces for the conformance suite: numpy, "
                          "array_api_strict, torch, jax, cupy (default: PORTAGRAD_NAMESPACE, "
                          "else numpy,array_api_strict)")
