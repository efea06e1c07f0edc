"""A failing rank ends the whole job promptly, with a message that says what happened.

Each fault runs on two ranks and must end the job with a non-zero status within 30 s
(startup included); the deadlines are short so that the tests are quick.
"""

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


def test_a_job_of_four_ranks_that_all_finish_exits_cleanly(mpirun):
    # Every rank's exit notice reaches three others; none may be left unreceived at
    # MPI_Finalize (that got a rank killed in about one run of three): three runs.
    for _ in range(3):
        job = mpirun("faults.py", 4, "end", timeout=40)
        assert job.returncode == 0, job.output
        assert job.stdout.count("reached the end") == 4, job.output


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


@pytest.mark.parametrize("code", [3, 0])
def test_a_rank_that_calls_sys_exit_ends_the_job(mpirun, code):
    # sys.exit runs no exception hook; rank 1's exit notice makes rank 0 give up on the
    # collective it waits in, long before its 20 s deadline. Even sys.exit(0) is an error
    # while another rank still needs this one.
    job = mpirun("faults.py", 2, "exit", str(code), timeout=40, mpi4py_runner=False)
    assert job.returncode != 0, job.output
    assert job.seconds < 15, job.output
    assert "PeerExitedError: allreduce" in job.stderr, job.output
    assert "rank 1 exited" in job.stderr
    assert "reached the end" not in job.stdout


def test_a_terminated_rank_ends_the_job(mpirun):
    job = mpirun("faults.py", 2, "terminate", timeout=40, mpi4py_runner=False)
    assert job.returncode != 0, job.output
    assert job.seconds < 15, job.output
    assert "rank 1 received SIGTERM; aborting the MPI job" in job.stderr, job.output
    assert "reached the end" not in job.stdout


def test_the_default_deadline_comes_from_the_environment(mpirun):
    # Rank 1 never enters the collective; rank 0's deadline is PORTAGRAD_MPI_TIMEOUT's.
    job = mpirun("faults.py", 2, "default-deadline", timeout=40,
                 env={"PORTAGRAD_MPI_TIMEOUT": "2"})
    assert job.returncode != 0, job.output
    assert job.seconds < 25, job.output
    assert "expected every rank to take part within 2 s" in job.stderr, job.output


def test_os_exit_on_one_rank_ends_the_job_with_its_status(mpirun):
    # os._exit runs no Python code; MPICH's launcher kills the other ranks at once and
    # reports the exiting rank's status, or 9 when it counts the ranks it killed first: a
    # race, so an os._exit(0) job may be reported successful (as the documentation says).
    for code in (5, 0):
        job = mpirun("faults.py", 2, "os-exit", str(code), timeout=40)
        assert job.seconds < 15, job.output
        assert job.returncode in (code, 9), job.output
        assert "reached the end" not in job.stdout
