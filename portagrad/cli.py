"""The ``portagrad`` command.

    portagrad info                        versions, backends, devices, BLAS
    portagrad conformance --namespace X   the gradient conformance table
    portagrad train ... / portagrad bench ...

An error prints one line, naming the option and the fix, and exits 2 (bad usage) or 1
(the run failed); ``--debug`` shows the traceback instead.

Each subcommand lives in ``portagrad/_cli/<name>.py``; a subcommand whose module is not
there is not offered.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from ._cli import discover

__all__ = ["main", "build_parser", "print_error", "OneLineParser"]


def _unavailable(error: ImportError):  # noqa: ANN202 - a run(args) function
    def run(args: argparse.Namespace) -> int:
        print(f"portagrad {args.command}: unavailable here: {error}. Install what it needs "
              f"(e.g. pip install 'portagrad[test]').", file=sys.stderr)
        return 2

    return run


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line: the problem and where to look."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message}; see {self.prog} --help\n")


def _add_debug(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument("--debug", action="store_true", default=default,
                        help="show the traceback of an error instead of one line")


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The argument parser and, per subcommand name, its ``run(args)``."""
    from . import __version__

    parser = OneLineParser(
        prog="portagrad", description="portagrad: define-by-run automatic differentiation "
        "on the Python Array API standard.")
    parser.add_argument("--version", action="version", version=f"portagrad {__version__}")
    _add_debug(parser, False)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND",
                                       parser_class=OneLineParser)
    runners = {}
    for name, module in discover().items():
        if isinstance(module, ModuleType):
            sub = module.add_parser(subparsers)
            runners[name] = module.run
        else:
            sub = subparsers.add_parser(name, help=f"(unavailable: {module})")
            runners[name] = _unavailable(module)
        # SUPPRESS: `portagrad --debug train` must stay on when the subcommand omits it.
        _add_debug(sub, argparse.SUPPRESS)
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
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error already printed
        return e.code if isinstance(e.code, int) else 2
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
    except Exception as e:
        if args.debug:
            raise
        # A bug or an unforeseen state of the machine: one line, and the way to see more.
        print(f"portagrad {args.command}: {type(e).__name__}: {_first_line(e)} (rerun with "
              f"--debug for the traceback)", file=sys.stderr)
        return 1


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or repr(error)
    return text.splitlines()[0]


def print_error(command: str, message: str, args: argparse.Namespace) -> None:
    """Print ``portagrad <command>: <message>`` on one line; under ``--debug`` the
    traceback of the exception being handled comes first.

    Parameters
    ----------
    command
        The subcommand, as the user typed it.
    message
        One line: the option at fault, what is wrong, and the fix.
    args
        The parsed arguments; ``args.debug`` asks for the traceback.

    Examples
    --------
    >>> import argparse, contextlib, sys
    >>> with contextlib.redirect_stderr(sys.stdout):
    ...     print_error("train", "--out x: not a folder; pass a writable folder",
    ...                 argparse.Namespace(debug=False))
    portagrad train: --out x: not a folder; pass a writable folder
    """
    if getattr(args, "debug", False) and sys.exc_info()[0] is not None:
        traceback.print_exc()
    print(f"portagrad {command}: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
