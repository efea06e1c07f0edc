"""A failing rank ends the whole job promptly, with a message that says what happened."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("mpi4py_runner", [False, True], ids=["python", "python-m-mpi4py"])
def test_a_rank_that_raises_aborts_the_job(mpirun, mpi4py_runner):
    # With plain python, the abort hook that create_communicator installs is what ends it.
    job = mpirun("faults.py", 2, "raise", timeout=40, mpi4py_runner=mpi4py_runner)
    assert job.returncode != 0
    assert job.seconds < 30, job.output
    assert "ValueError: rank 1 failed on purpose" in job.stderr
    assert "reached the end" not in job.stdout


def test_a_killed_rank_ends_the_job_within_the_deadline(mpirun):
    # The survivors' deadline is 20 s; the launcher usually tears the job down sooner.
    job = mpirun("faults.py", 2, "kill", timeout=40)
    assert job.returncode != 0
    assert job.seconds < 25, job.output
    assert "reached the end" not in job.stdout


def test_a_collective_past_its_deadline_names_the_op_the_step_and_the_rank(mpirun):
    job = mpirun("faults.py", 2, "timeout", timeout=40, env={"FAULT_TIMEOUT": "2"})
    assert job.returncode != 0
    assert job.seconds < 25, job.output
    assert "CollectiveTimeoutError: allreduce" in job.stderr, job.output
    assert "on rank 0 of 2 at step 7" in job.stderr


def test_mismatched_buffer_shapes_are_a_clear_error(mpirun):
    job = mpirun("faults.py", 2, "mismatch", timeout=40)
    assert job.returncode != 0
    assert ("LayoutMismatchError: allreduce(x): expected the same shape and dtype on every "
            "rank, got shape (3,) and dtype float64 on rank 0 and shape (4,) and dtype "
            "float64 on rank 1") in job.stderr, job.output


def test_mismatched_gradient_buckets_are_a_clear_error(mpirun):
    job = mpirun("faults.py", 2, "buckets", timeout=40)
    assert job.returncode != 0
    assert ("GradientSynchronizer(params): expected the same parameter sizes and dtypes on "
            "every rank, got parameter 0 with 8 elements of float64 on rank 0 and 12 of "
            "float64 on rank 1") in job.stderr, job.output
