"""``portagrad conformance``: check every registered op's values and gradients.

    portagrad conformance --namespace array_api_strict
    portagrad conformance --namespace numpy --ops tanh,matmul --order 2 --max-examples 50
    portagrad conformance --list                 # the op names, with their families
    portagrad conformance --json > results.json  # one JSON document, for machines

Prints one table per namespace (a row per op, a column per check: forward, order1-3,
device, dtype, errors, fastpath, mutation), the pass/fail counts, and for each failure its
message and a copy-pasteable reproduction. Progress goes to stderr: a counter on a
terminal, otherwise a line every 25 ops (``--progress-every``) or 10 seconds, and a last
line when the run ends. Exits 1 when a check fails, 2 on bad
usage.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from typing import Any, TextIO

NAME = "conformance"
HELP = "run the gradient conformance checks and print an op x check table"
# Off a terminal, a progress line at least this often, however many ops are done.
PROGRESS_SECONDS = 10.0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``conformance`` subcommand."""
    from . import positive_int

    p = subparsers.add_parser(NAME, help=HELP, description=__doc__.split("\n\n")[0],
                              epilog=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--namespace", default=None,
                   help="comma-separated: numpy, array_api_strict, torch, jax, cupy "
                        "(default: PORTAGRAD_NAMESPACE, else numpy,array_api_strict)")
    p.add_argument("--ops", default=None,
                   help="comma-separated op names, as --list prints them (default: all)")
    p.add_argument("--list", action="store_true",
                   help="print the op names with their families and exit")
    p.add_argument("--checks", default=None,
                   help="comma-separated checks (default: all): forward, order1, order2, "
                        "order3, jvp, device, dtype, errors, fastpath, mutation, unrecorded")
    p.add_argument("--order", type=positive_int, default=3,
                   help="highest order of derivative to check (default 3)")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="hypothesis examples per op and check, 1 or more (default: the "
                        "HYPOTHESIS_PROFILE's, 10 for dev)")
    p.add_argument("--seed", type=int, default=0,
                   help="hypothesis seed, so a run reproduces (default 0)")
    p.add_argument("--progress-every", type=positive_int, default=25, metavar="N",
                   help="off a terminal, a progress line on stderr every N ops (and every "
                        f"{PROGRESS_SECONDS:g} s) (default 25)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (outcomes and counts) instead of the table")
    return p


def _fail_usage(msg: str) -> int:
    print(f"portagrad conformance: {msg}", file=sys.stderr)
    return 2


def family(name: str) -> str:
    """Where the op ``name`` is defined, as a module path under ``portagrad.ops``
    (``"std.elementwise.exponential"`` for ``exp``); ``""`` when it is not found there.

    Examples
    --------
    >>> family("exp")
    'std.elementwise.exponential'
    """
    import portagrad as pg

    obj: Any = pg.ops
    for part in name.split("."):
        obj = getattr(obj, part, None)
    module = getattr(obj, "__module__", None) or ""
    prefix = "portagrad.ops."
    return module[len(prefix):] if module.startswith(prefix) else ""


def _print_list(records: list, out: TextIO) -> None:
    rows = sorted((family(r.name) or "(not in portagrad.ops)", r.name) for r in records)
    width = max(len(n) for _, n in rows)
    for fam, name in rows:
        print(f"{name:<{width}}  {fam}", file=out)


class _Progress:
    """The counter on stderr: rewritten in place on a terminal; elsewhere (CI, a pipe) a
    line every ``every`` ops or PROGRESS_SECONDS seconds, so a long run is seen alive."""

    def __init__(self, stream: TextIO, total: int, every: int,
                 clock: Any = time.monotonic) -> None:
        self.stream, self.total, self.every, self.clock = stream, total, every, clock
        self.tty = stream.isatty()
        self.start = self.last_time = clock()
        self.last_done = 0

    def update(self, done: int, namespace: str, op: str, failed: int) -> None:
        if self.tty:
            print(f"\r{namespace}: {done}/{self.total} {op:<30}", end="", file=self.stream,
                  flush=True)
            return
        now = self.clock()
        if done - self.last_done < self.every and now - self.last_time < PROGRESS_SECONDS:
            return
        self.last_done, self.last_time = done, now
        self._line(f"{done}/{self.total} ops ({namespace}, {op})", failed, now)

    def _line(self, where: str, failed: int, now: float) -> None:
        print(f"conformance: {where}, {failed} failed, {now - self.start:.0f} s",
              file=self.stream, flush=True)

    def close(self, failed: int) -> None:
        if self.tty:
            print("\r" + " " * 60 + "\r", end="", file=self.stream, flush=True)
        else:
            self._line(f"done, {self.total}/{self.total} ops", failed, self.clock())


def run(args: argparse.Namespace) -> int:
    """Run the checks, print the table and failures; 0 when everything passed."""
    try:
        import conformance
        from conformance._backends import available, selected_backends
        from conformance._coverage import missing_records, public_ops
        from conformance._table import counts, format_table
    except ImportError as e:
        return _fail_usage(f"needs the test dependencies ({e}); install them with "
                           f"pip install 'portagrad[test]'")

    records = conformance.all_records()
    if args.list:
        _print_list(records, sys.stdout)
        return 0
    try:
        namespaces = selected_backends(args.namespace)
    except ValueError as e:
        from conformance._backends import BACKENDS

        given = [n.strip() for n in (args.namespace or "").split(",") if n.strip()]
        hints = sorted({m for n in given for m in difflib.get_close_matches(n, BACKENDS)
                        if n not in BACKENDS})
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        return _fail_usage(f"--namespace: {str(e).removeprefix('conformance: ')}{hint}")
    missing_libs = [n for n in namespaces if not available(n)]
    if missing_libs:
        return _fail_usage(f"--namespace: {', '.join(missing_libs)} not installed (or, for "
                           f"cupy, no GPU); install it or pick among those "
                           f"`portagrad info` lists")
    by_name = {r.name: r for r in records}
    if args.ops is not None:
        wanted = [n.strip() for n in args.ops.split(",") if n.strip()]
        if not wanted:
            return _fail_usage("--ops: expected one or more op names, got none; leave "
                               "--ops out to check every op")
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            hints = sorted({m for n in unknown
                            for m in difflib.get_close_matches(n, list(by_name), n=3)})
            hint = f"did you mean {', '.join(hints)}? " if hints else ""
            return _fail_usage(f"--ops: no op named {', '.join(unknown)}; {hint}"
                               f"`portagrad conformance --list` prints the names")
        records = [by_name[n] for n in wanted]
    checks = list(conformance.CHECKS)
    if args.checks:
        checks = [c.strip() for c in args.checks.split(",") if c.strip()]
        bad = [c for c in checks if c not in conformance.CHECKS]
        if bad:
            return _fail_usage(f"--checks: expected checks among "
                               f"{', '.join(conformance.CHECKS)}, got {', '.join(bad)}")
    checks = [c for c in checks if not c.startswith("order") or int(c[5:]) <= args.order]

    outcomes = []
    progress = _Progress(sys.stderr, len(records) * len(namespaces), args.progress_every)
    n_failed = 0
    for ns in namespaces:
        for i, record in enumerate(records):
            for check in checks:
                outcome = conformance.run_check(record, ns, check,
                                                max_examples=args.max_examples, seed=args.seed)
                outcomes.append(outcome)
                n_failed += outcome.failed
            progress.update(len(records) * namespaces.index(ns) + i + 1, ns, record.name,
                            n_failed)
    progress.close(n_failed)
    elapsed = time.monotonic() - progress.start

    failures = [o for o in outcomes if o.failed]
    uncovered = [] if args.ops else missing_records(public_ops(), records,
                                                    conformance.NON_DIFFERENTIABLE)
    total = counts(outcomes)
    n_fail = total["fail"] + bool(uncovered)
    if args.json:
        json.dump({"namespaces": namespaces, "checks": checks, "seed": args.seed,
                   "max_examples": args.max_examples,
                   "counts": {**total, "fail": n_fail}, "without_record": uncovered,
                   "seconds": round(elapsed, 1),
                   "outcomes": [_outcome_json(o) for o in outcomes]},
                  sys.stdout, indent=1)
        print()
        return 1 if failures or uncovered else 0
    print(format_table(outcomes, checks))
    for o in failures:
        print(f"\nFAIL {o.describe()}")
    if uncovered:
        print(f"\nFAIL public ops of portagrad.ops without a conformance record: {uncovered}")
    print(f"\n{len(records)} ops on {', '.join(namespaces)} in {elapsed:.0f} s: "
          f"{total['pass']} passed, {n_fail} failed")
    return 1 if failures or uncovered else 0


def _outcome_json(o: Any) -> dict[str, Any]:
    out = {"op": o.op, "check": o.check, "namespace": o.namespace, "status": o.status,
           "examples": o.examples}
    if o.failed:
        out["message"] = o.message
        out["reproduction"] = o.reproduction()
    return out
