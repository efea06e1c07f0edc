"""Fuzz every public callable of pg.ops, ops.linalg, ops.fft and nn.functional.

Each test draws seeds with hypothesis; a seed picks a valid call (from the op database
where the op has a record) and one mutation of it (see ``_harness``). A call may raise
only a :class:`portagrad.PortagradError`, must finish within ``HANG_SECONDS`` and must keep
the NaN its NumPy reference propagates. The suite runs ``FUZZ_EXAMPLES`` cases per
callable (2 by default, well under a minute in all); ``make fuzz`` runs 150 and prints
the counts. ``FUZZ_ONLY`` (comma-separated names such as ``ops.fmod`` or
``nn.functional.*``, a trailing ``*`` taking every name it starts) fuzzes just those.
"""

from __future__ import annotations

import faulthandler
import os

import _harness as H
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "2"))
ALL_TARGETS = H.targets()


def _selected(name: str, only: str) -> bool:
    pats = [p.strip() for p in only.split(",") if p.strip()]
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in pats)


_ONLY = os.environ.get("FUZZ_ONLY", "")
TARGETS = [t for t in ALL_TARGETS if _selected(t[0], _ONLY)] if _ONLY else ALL_TARGETS
_BY_NAME = dict(TARGETS)


def test_every_public_callable_is_fuzzed():
    names = {n for n, _ in ALL_TARGETS}
    for must in ("ops.fmod", "ops.linalg.svd", "ops.fft.fft", "nn.functional.conv2d",
                 "ops.roi_average_align_2d", "nn.functional.interpolate"):
        assert must in names
    assert len(names) > 450


def test_the_selection_takes_names_and_prefixes():
    assert _selected("ops.fmod", "ops.fft.*, ops.fmod")
    assert _selected("ops.fft.rfft", "ops.fft.*")
    assert not _selected("ops.fft", "ops.fft.*") and not _selected("ops.fmax", "ops.fmod")


@pytest.mark.parametrize("name", [n for n, _ in TARGETS])
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          phases=(Phase.explicit, Phase.generate),
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_bad_input_gives_a_portagrad_error_never_a_raw_one(name, seed):
    # A hang ends the run with every thread's traceback (a watchdog thread, no signal).
    faulthandler.dump_traceback_later(H.HANG_SECONDS * 6, exit=True)
    try:
        o = H.fuzz_one(name, _BY_NAME[name], seed)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert o.kind not in ("raw", "hang", "wrong"), f"{o.kind} [{o.mutation}] {o.detail}"
