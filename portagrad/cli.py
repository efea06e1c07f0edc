"""The ``portagrad`` command.

    portagrad info                        versions, backends, devices, BLAS
    portagrad conformance --namespace X   the gradient conformance table
    portagrad train ... / portagrad bench ...

Each subcommand lives in ``portagrad/_cli/<name>.py``; a subcommand whose module is not
there is not offered.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from ._cli import discover

__all__ = ["main", "build_parser"]


def _unavailable(error: ImportError):  # noqa: ANN202 - a run(args) function
    def run(args: argparse.Namespace) -> int:
        print(f"portagrad {args.command}: unavailable here: {error}. Install what it needs "
              f"(e.g. pip install 'portagrad[test]').", file=sys.stderr)
        return 2

    return run


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The argument parser and, per subcommand name, its ``run(args)``."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="portagrad", description="portagrad: define-by-run automatic differentiation "
        "on the Python Array API standard.")
    parser.add_argument("--version", action="version", version=f"portagrad {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners = {}
    for name, module in discover().items():
        if isinstance(module, ModuleType):
            module.add_parser(subparsers)
            runners[name] = module.run
        else:
            subparsers.add_parser(name, help=f"(unavailable: {module})")
            runners[name] = _unavailable(module)
    return parser, runners


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``portagrad`` command with ``argv`` (default: ``sys.argv[1:]``).

    Examples
    --------
    >>> from portagrad.cli import main
    >>> main(["info", "--json"]) == 0  # doctest: +ELLIPSIS
    {...}
    True
    """
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(runners[args.command](args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `portagrad conformance | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
