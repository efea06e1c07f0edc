"""Shared fixtures: the (namespace, device) pairs every backend-agnostic test runs on."""

from __future__ import annotations

import collections
import fcntl
import importlib.util
import os
import re
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          print_blob=True)
# make test-full: ci's examples for the unit tests; the conformance suite's full counts on
# every namespace (conformance._runner).
settings.register_profile("full", max_examples=25, deadline=None, derandomize=True,
                          print_blob=True)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_JAX = importlib.util.find_spec("jax") is not None


class Backend:
    """A namespace and a device to put host arrays on.

    The unit tests compare with float64 references, so JAX runs them with
    ``jax_enable_x64`` on (the ``backend`` fixture turns it on for the test only); JAX as
    its users get it by default (float32 only) is what the conformance suite checks and
    tests/xp/test_jax_float32.py.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "numpy":
            import array_api_compat.numpy as xp

            self.xp, self.device = xp, "cpu"
        elif name == "array_api_strict":
            import array_api_strict as xp

            self.xp, self.device = xp, xp.Device("device1")
        elif name == "torch":
            import array_api_compat.torch as xp
            import torch

            self.xp, self.device = xp, torch.device("cpu")
        elif name == "jax":
            import jax
            import jax.numpy as xp

            self.xp, self.device = xp, jax.devices("cpu")[0]
        else:
            raise ValueError(name)

    def asarray(self, host, dtype=None):
        from portagrad.xp import from_numpy

        a = np.asarray(host)
        if dtype is not None:
            a = a.astype(dtype)
        return from_numpy(a, xp=self.xp, device=self.device)

    def __repr__(self) -> str:
        return self.name


@pytest.fixture
def torch_backend() -> Backend:
    """torch on the CPU, for the tests written for it alone (one conftest module holds
    ``Backend``: under several workers ``from conftest import`` may find another one)."""
    pytest.importorskip("torch")
    return Backend("torch")


_NAMES = (["numpy", "array_api_strict"] + (["torch"] if HAS_TORCH else [])
          + (["jax"] if HAS_JAX else []))


@pytest.fixture(params=_NAMES)
def backend(request) -> Iterator[Backend]:
    if request.param != "jax":
        yield Backend(request.param)
        return
    import jax

    with jax.enable_x64(True):
        yield Backend(request.param)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


# -- the skip policy ------------------------------------------------------------------------
# A test may be skipped only because what it needs cannot be installed on this machine:
# CuPy and a CUDA device. With PORTAGRAD_STRICT_SKIPS=1 (set by `make test`) any other skip
# fails the run; every run ends with the skip count and reasons.
ALLOWED_SKIP = re.compile(r"cupy|cuda|gpu|nccl", re.IGNORECASE)


def _skip_reasons(config) -> collections.Counter:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    reasons: collections.Counter = collections.Counter()
    for report in (reporter.stats.get("skipped", []) if reporter else []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    return reasons


def _disallowed(reasons: collections.Counter) -> list[str]:
    return sorted(r for r in reasons if not ALLOWED_SKIP.search(r))


def pytest_collection_modifyitems(config, items):
    # Running Chainer itself needs its own venv (NumPy < 2), which make test does not
    # build: without PORTAGRAD_CHAINER_PYTHON those tests are left out, by name, not
    # skipped (the stored fixtures made by Chainer cover the same ground).
    python = os.environ.get("PORTAGRAD_CHAINER_PYTHON", "")
    if python and os.path.exists(python):
        return
    left = [i for i in items if i.get_closest_marker("chainer_env") is not None]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [i for i in items if i.get_closest_marker("chainer_env") is None]
        config._portagrad_left_out = [i.nodeid for i in left]


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("PORTAGRAD_STRICT_SKIPS") == "1" and exitstatus == 0:
        if _disallowed(_skip_reasons(session.config)):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reasons = _skip_reasons(config)
    terminalreporter.section("skips")
    terminalreporter.write_line(f"{sum(reasons.values())} skipped")
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"{n:6d}  {reason}")
    for nodeid in getattr(config, "_portagrad_left_out", []):
        terminalreporter.write_line(f"left out, PORTAGRAD_CHAINER_PYTHON not set: {nodeid}")
    bad = _disallowed(reasons)
    if bad and os.environ.get("PORTAGRAD_STRICT_SKIPS") == "1":
        terminalreporter.write_line(
            f"PORTAGRAD_STRICT_SKIPS=1: expected skips only for CuPy or a GPU (what cannot be "
            f"installed here), got {len(bad)} other reason(s): {bad}", red=True)



# -- several workers -----------------------------------------------------------------------
# make test runs on two pytest-xdist workers. The tests that must not run beside one another
# take one lock in turn: the MPI jobs (each starts mpiexec with two ranks, a core each) and
# the tests that hold a wait to a deadline, so that none of them runs beside an MPI job.
_SERIAL_FILES = frozenset({"test_deadlines.py", "test_loader_workers.py",
                           "test_io_integrity.py", "test_training_resume.py"})


@pytest.fixture(autouse=True)
def _one_at_a_time(request, tmp_path_factory):
    serial = (request.node.get_closest_marker("mpi") is not None
              or request.node.path.name in _SERIAL_FILES)
    if not serial or "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    # Every worker's base temporary folder lies in the run's own.
    root = tmp_path_factory.getbasetemp().parent
    with open(root / "one-at-a-time.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
