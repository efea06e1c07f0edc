"""ChainerMN's ``global_except_hook``: an unhandled exception on one rank aborts the
whole MPI job (portagrad's abort hook, which ``create_communicator`` installs already)."""

from __future__ import annotations

from ..parallel import install_abort_hook as _install
from ..parallel import uninstall_abort_hook as _uninstall

__all__ = ["add_hook", "remove_hook"]


def add_hook() -> None:
    """Install the hook (``sys.excepthook`` calling ``MPI.COMM_WORLD.Abort``).

    Examples
    --------
    >>> from portagrad.chainermn import global_except_hook
    >>> global_except_hook.add_hook(); global_except_hook.remove_hook()
    """
    _install()


def remove_hook() -> None:
    """Restore the previous ``sys.excepthook``."""
    _uninstall()
