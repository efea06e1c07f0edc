"""The default collective deadline (API and environment variable) and exit notices, on
one rank; the MPI tests (test_mpi_faults.py) cover what they do in a real job."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("mpi4py")

from portagrad.parallel import (  # noqa: E402
    CollectiveTimeoutError,
    PeerExitedError,
    _faults,  # noqa: E402
    create_communicator,
    default_timeout,
    set_default_timeout,
)


@pytest.fixture(autouse=True)
def _restore_default():
    yield
    set_default_timeout()


def test_the_default_is_300_s_without_environment(monkeypatch):
    monkeypatch.delenv("PORTAGRAD_MPI_TIMEOUT", raising=False)
    assert default_timeout() == 300.0
    assert create_communicator(abort_on_exception=False).timeout == 300.0


@pytest.mark.parametrize("raw, expected", [("2.5", 2.5), ("60", 60.0), ("none", None),
                                           (" None ", None), ("", 300.0)])
def test_the_environment_variable_sets_the_default(monkeypatch, raw, expected):
    monkeypatch.setenv("PORTAGRAD_MPI_TIMEOUT", raw)
    assert default_timeout() == expected
    assert create_communicator(abort_on_exception=False).timeout == expected


@pytest.mark.parametrize("raw", ["soon", "0", "-3", "inf", "nan"])
def test_a_bad_environment_value_is_an_error_naming_it(monkeypatch, raw):
    monkeypatch.setenv("PORTAGRAD_MPI_TIMEOUT", raw)
    with pytest.raises(ValueError, match=f"PORTAGRAD_MPI_TIMEOUT={raw!r}"):
        create_communicator(abort_on_exception=False)


def test_a_communicator_made_directly_takes_the_default_too(monkeypatch):
    from mpi4py import MPI

    from portagrad.parallel import Communicator

    monkeypatch.setenv("PORTAGRAD_MPI_TIMEOUT", "9")
    assert Communicator(MPI.COMM_WORLD).timeout == 9.0
    with pytest.raises(ValueError, match=r"Communicator\(timeout\)"):
        Communicator(MPI.COMM_WORLD, timeout=-2)


def test_the_api_overrides_the_environment_and_an_explicit_timeout_both(monkeypatch):
    monkeypatch.setenv("PORTAGRAD_MPI_TIMEOUT", "7")
    set_default_timeout(11)
    assert create_communicator(abort_on_exception=False).timeout == 11.0
    assert create_communicator(timeout=3, abort_on_exception=False).timeout == 3.0
    set_default_timeout(None)
    assert create_communicator(abort_on_exception=False).timeout is None
    set_default_timeout()
    assert default_timeout() == 7.0


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "10", True])
def test_bad_deadlines_are_refused(bad):
    with pytest.raises(ValueError, match=r"set_default_timeout\(seconds\)"):
        set_default_timeout(bad)
    with pytest.raises(ValueError, match=r"create_communicator\(timeout\)"):
        create_communicator(timeout=bad, abort_on_exception=False)


class _Pending:
    def Test(self):
        return False


class _Done:
    def Test(self):
        return True


class _Watch:
    """An exit watch that saw rank 3 leave."""

    def exited_peer(self):
        return 3


def test_a_wait_gives_up_soon_after_a_peer_exited(monkeypatch):
    monkeypatch.setattr(_faults, "_watch", _Watch())
    monkeypatch.setattr(_faults, "EXIT_GRACE_SECONDS", 0.2)
    start = time.monotonic()
    with pytest.raises(PeerExitedError, match="allreduce: rank 3 exited .* rank 0 of 4 waits "
                                              "for it at step 9"):
        _faults.wait_all([_Pending()], timeout=60, what="allreduce", rank=0, size=4, step=9)
    assert time.monotonic() - start < 5
    # A collective that completes (the peer did its part before leaving) is no error.
    _faults.wait_all([_Done()], timeout=60, what="allreduce", rank=0, size=4)


def test_the_exit_of_a_rank_outside_the_communicator_is_no_error(monkeypatch):
    monkeypatch.setattr(_faults, "_watch", _Watch())
    monkeypatch.setattr(_faults, "EXIT_GRACE_SECONDS", 0.05)
    with pytest.raises(CollectiveTimeoutError) as info:
        _faults.wait_all([_Pending()], timeout=0.3, what="barrier", rank=0, size=2,
                         member=lambda world_rank: world_rank != 3)
    assert type(info.value) is CollectiveTimeoutError  # the deadline, not rank 3's exit
    comm = create_communicator(abort_on_exception=False)
    assert comm._has_world_rank(0)
