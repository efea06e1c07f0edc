"""``portagrad bench``: the ratio benchmarks, printed as one table.

    portagrad bench                           # a process per implementation, 1 and 2 threads
    portagrad bench --workloads resnet,transformer --steps 10 --threads 1
    portagrad bench --chainer /path/to/chainer-venv --gc-off --json bench.json
    portagrad bench --in-process --workloads mlp,dispatch --steps 20
    portagrad bench --backend cupy            # portagrad on the GPU (needs CuPy)
    portagrad bench --workloads lstm --profile

The workloads live in ``portagrad._bench`` (so an installed portagrad can run them); the
scripts in the repository's ``benchmarks/`` folder call the same code.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

NAME = "bench"
HELP = "benchmark portagrad against hand-written NumPy and PyTorch"
DESCRIPTION = ("Run the benchmark workloads as portagrad, hand-written NumPy and PyTorch (when "
               "installed), check that they agree, time them interleaved and print the "
               "ratios.")
EXAMPLES = __doc__.split("\n\n")[1]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``bench`` subcommand to the ``portagrad`` command's subparsers."""
    from .._bench import WORKLOADS

    p = subparsers.add_parser(NAME, help=HELP, description=DESCRIPTION, epilog=EXAMPLES,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(p, list(WORKLOADS))
    return p


def configure(p: argparse.ArgumentParser, workloads: list[str]) -> None:
    p.add_argument("--workloads", default="all",
                   help=f"comma-separated subset of {','.join(workloads)} (default: all)")
    p.add_argument("--steps", type=int, default=50,
                   help="timed rounds; each implementation runs once per round (default 50)")
    p.add_argument("--warmup", type=int, default=3, help="untimed rounds first (default 3)")
    p.add_argument("--backend", choices=("numpy", "cupy"), default="numpy",
                   help="array library of the portagrad side (default numpy)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    p.add_argument("--profile", action="store_true",
                   help="after the table, profile the portagrad and NumPy variants of each "
                        "workload (py-spy when installed, else cProfile)")
    p.add_argument("--profile-steps", type=int, default=None,
                   help="steps profiled (default: a few seconds' worth per workload)")
    p.add_argument("--seed", type=int, default=0, help="seed of weights and batches")
    p.add_argument("--threads", default="1,2",
                   help="comma-separated thread counts, each implementation in a process "
                        "per count (default 1,2)")
    p.add_argument("--chainer", metavar="VENV",
                   help="a virtual environment with Chainer: its Chainer implementations "
                        "take part")
    p.add_argument("--gc-off", action="store_true",
                   help="also time a step with the garbage collector off after each one "
                        "with it on")
    p.add_argument("--in-process", action="store_true",
                   help="every implementation in this one process, the collector paused "
                        "while timing (quick; --threads and --chainer do not apply)")


def run(args: argparse.Namespace) -> int:
    """Run the selected workloads, print the table; 0 when every check passed."""
    from .._bench import WORKLOADS, Config, run_benchmarks
    from .._bench._report import (
        environment,
        format_environment,
        format_process_results,
        format_results,
        to_json,
    )

    if args.workloads == "all":
        names = list(WORKLOADS)
    else:
        names = [n.strip() for n in args.workloads.split(",") if n.strip()]
        unknown = [n for n in names if n not in WORKLOADS]
        if unknown or not names:
            print(f"portagrad bench(--workloads): expected names from "
                  f"{', '.join(WORKLOADS)}, got {args.workloads!r}", file=sys.stderr)
            return 2
    if args.steps < 1 or args.warmup < 0:
        print(f"portagrad bench(--steps, --warmup): expected steps >= 1 and warmup >= 0, "
              f"got {args.steps} and {args.warmup}", file=sys.stderr)
        return 2
    if args.backend == "cupy" and importlib.util.find_spec("cupy") is None:
        print("portagrad bench(--backend): expected CuPy to be installed for "
              "--backend cupy, got an ImportError. pip install cupy-cuda12x",
              file=sys.stderr)
        return 2
    try:
        threads = tuple(int(t) for t in args.threads.split(","))
        if not threads or min(threads) < 1:
            raise ValueError
    except ValueError:
        print(f"portagrad bench(--threads): expected positive integers separated by commas, "
              f"got {args.threads!r}", file=sys.stderr)
        return 2
    if args.chainer and not os.path.exists(os.path.join(args.chainer, "bin", "python")):
        print(f"portagrad bench(--chainer): expected a virtual environment with bin/python, "
              f"got {args.chainer!r}", file=sys.stderr)
        return 2
    cfg = Config(steps=args.steps, warmup=args.warmup, backend=args.backend,
                 seed=args.seed, torch=not args.no_torch, threads=threads,
                 chainer=args.chainer, gc_off=args.gc_off)
    env = environment(cfg)
    print(format_environment(env, cfg, in_process=args.in_process), flush=True)
    progress = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if args.in_process:
        results, ok = run_benchmarks(names, cfg, progress=progress)
        print()
        print(format_results(results), flush=True)
    else:
        from .._bench._procs import PROCESS_WORKLOADS

        separate = [n for n in names if n in PROCESS_WORKLOADS]
        results, ok = run_benchmarks(separate, cfg, progress=progress, processes=True)
        print()
        print(format_process_results(results), flush=True)
        rest = [n for n in names if n not in PROCESS_WORKLOADS]
        if rest:
            more, ok_rest = run_benchmarks(rest, cfg, progress=progress)
            ok = ok and ok_rest
            print()
            print(format_results(more), flush=True)
            results += more
    if args.json:
        with open(args.json, "w") as f:
            f.write(to_json(results, env, cfg))
    if args.profile:
        from .._bench.profile import PROFILED, profile_text

        for name in names:
            if name in PROFILED:
                print()
                print(profile_text(name, cfg, steps=args.profile_steps), flush=True)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m portagrad._cli.bench``: the same command without the ``portagrad`` entry."""
    from .._bench import WORKLOADS

    parser = argparse.ArgumentParser(prog="portagrad bench", description=DESCRIPTION,
                                     epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser, list(WORKLOADS))
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
