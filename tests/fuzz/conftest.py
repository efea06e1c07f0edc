"""Print the fuzz run's counts at the end of the session (``make fuzz`` reports them)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import sys

    harness = sys.modules.get("_harness")
    if harness is not None and harness.STATS.calls:
        terminalreporter.write_line(harness.summary())
