"""``portagrad conformance``: check every registered op's values and gradients.

    portagrad conformance --namespace array_api_strict
    portagrad conformance --namespace numpy --ops tanh,matmul --order 2 --max-examples 50

Prints one table per namespace (a row per op, a column per check: forward, order1-3,
device, dtype, errors, fastpath, mutation), the pass/fail counts, and for each failure its
message and a copy-pasteable reproduction. Exits 1 when a check fails, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import difflib
import sys

NAME = "conformance"
HELP = "run the gradient conformance checks and print an op x check table"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``conformance`` subcommand."""
    p = subparsers.add_parser(NAME, help=HELP, description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--namespace", default=None,
                   help="comma-separated: numpy, array_api_strict, torch, jax, cupy "
                        "(default: PORTAGRAD_NAMESPACE, else numpy,array_api_strict)")
    p.add_argument("--ops", default=None, help="comma-separated op names (default: all)")
    p.add_argument("--checks", default=None,
                   help="comma-separated checks (default: all): forward, order1, order2, "
                        "order3, jvp, device, dtype, errors, fastpath, mutation")
    p.add_argument("--order", type=int, default=3,
                   help="highest order of derivative to check (default 3)")
    p.add_argument("--max-examples", type=int, default=None,
                   help="hypothesis examples per op and check (default: the "
                        "HYPOTHESIS_PROFILE's, 10 for dev)")
    p.add_argument("--seed", type=int, default=0,
                   help="hypothesis seed, so a run reproduces (default 0)")
    return p


def _fail_usage(msg: str) -> int:
    print(f"portagrad conformance: {msg}", file=sys.stderr)
    return 2


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

    try:
        namespaces = selected_backends(args.namespace)
    except ValueError as e:
        return _fail_usage(str(e))
    missing_libs = [n for n in namespaces if not available(n)]
    if missing_libs:
        return _fail_usage(f"expected installed namespaces, got {missing_libs} missing (or, "
                           f"for cupy, no GPU)")
    records = conformance.all_records()
    by_name = {r.name: r for r in records}
    if args.ops:
        wanted = [n.strip() for n in args.ops.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            hints = {n: difflib.get_close_matches(n, list(by_name), n=3) for n in unknown}
            return _fail_usage(f"expected registered op names, got unknown {unknown}; "
                               f"close matches: {hints}")
        records = [by_name[n] for n in wanted]
    checks = list(conformance.CHECKS)
    if args.checks:
        checks = [c.strip() for c in args.checks.split(",") if c.strip()]
        bad = [c for c in checks if c not in conformance.CHECKS]
        if bad:
            return _fail_usage(f"expected checks among {list(conformance.CHECKS)}, got {bad}")
    checks = [c for c in checks if not c.startswith("order") or int(c[5:]) <= args.order]

    outcomes = []
    progress = sys.stderr.isatty()
    for ns in namespaces:
        for i, record in enumerate(records):
            if progress:
                print(f"\r{ns}: {i + 1}/{len(records)} {record.name:<30}", end="",
                      file=sys.stderr, flush=True)
            for check in checks:
                outcomes.append(conformance.run_check(
                    record, ns, check, max_examples=args.max_examples, seed=args.seed))
    if progress:
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr, flush=True)

    print(format_table(outcomes, checks))
    failures = [o for o in outcomes if o.failed]
    for o in failures:
        print(f"\nFAIL {o.describe()}")
    uncovered = [] if args.ops else missing_records(public_ops(), records,
                                                    conformance.NON_DIFFERENTIABLE)
    if uncovered:
        print(f"\nFAIL public ops of portagrad.ops without a conformance record: {uncovered}")
    total = counts(outcomes)
    print(f"\n{total['pass']} passed, {total['fail'] + bool(uncovered)} failed")
    return 1 if failures or uncovered else 0
