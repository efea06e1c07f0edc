"""Launching MPI jobs from tests: each test runs ``mpiexec -n K`` on a script, with a timeout.

pytest itself never runs inside mpiexec (collectives of different tests would pair up).
Ranks are started with this interpreter (``python -m mpi4py``, which aborts the job when a
rank raises) through the mpiexec installed next to it, so the launcher and the MPI library
mpi4py is linked to always match.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "scripts"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
HAS_MPI = importlib.util.find_spec("mpi4py") is not None and MPIEXEC.exists()


@dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def launch(script: str, n: int, *args: str, timeout: float = 60.0,
           env: dict[str, str] | None = None, mpi4py_runner: bool = True) -> Job:
    """Run ``scripts/<script>`` (or the script at an absolute path) on ``n`` ranks; kill
    the whole job at ``timeout``. Without ``mpi4py_runner`` the ranks run the script with
    plain ``python``, so only portagrad's own abort hook stands between an exception and a
    hung job."""
    runner = ["-m", "mpi4py"] if mpi4py_runner else []
    # An absolute ``script`` replaces SCRIPTS.
    return launch_command([sys.executable, *runner, str(SCRIPTS / script), *args], n,
                          timeout=timeout, env=env)


def launch_command(argv: list[str], n: int, *, timeout: float = 60.0,
                   env: dict[str, str] | None = None) -> Job:
    """Run ``mpiexec -n n *argv``; kill the whole job at ``timeout``."""
    cmd = [str(MPIEXEC), "-n", str(n), *argv]
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "PYTHONUNBUFFERED": "1", **(env or {})}
    start = time.monotonic()
    # A session of its own, so that a hung job is killed with every rank it started.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, cwd=str(SCRIPTS), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not end within {timeout} s\n--- stdout ---\n"
                    f"{out}\n--- stderr ---\n{err}")
    return Job(proc.returncode, out, err, time.monotonic() - start)


@pytest.fixture(scope="session")
def mpirun():
    if not HAS_MPI:
        pytest.skip("mpi4py and an mpiexec next to this Python are needed (pip install "
                    "'.[mpi]')")
    return launch


@pytest.fixture(scope="session")
def mpiexec(mpirun):
    """``mpiexec(argv, n, timeout=...)``: run any command line on ``n`` ranks."""
    return launch_command


@pytest.fixture
def mlp():
    """The digits MLP helpers of the scripts, for single-process references."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        import _mlp

        yield _mlp
    finally:
        sys.path.remove(str(SCRIPTS))
