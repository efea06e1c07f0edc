"""One implementation of one workload, in a process of its own, driven over its pipes.

The coordinator (``._procs``) starts one worker per implementation, variant and thread
count, with the thread variables set before anything is imported. The worker loads the
problem file the coordinator wrote, builds its unit, runs the check and answers one line
of JSON per command read from stdin:

* at start: ``{"check": [...]}`` -- the values the implementations must agree on;
* ``t``: one timed call with the collector on (as a training loop runs), then, when
  ``--gc-off`` is given, one more with it off: ``{"wall": s, "cpu": s, ...}``;
* ``q``: ``{"peak_mb": ...}`` (the process's peak resident size) and exit.

Anything a library prints goes to stderr: stdout carries the protocol alone. The file
imports only the standard library and NumPy at the top, so Chainer's interpreter can run
it by path (``python .../_worker.py --impl chainer ...``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback
from typing import Any


def _peak_mb() -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _build(args: argparse.Namespace) -> Any:
    if __package__:
        from . import _ipc
    else:  # run by path (Chainer's interpreter): the modules beside this file
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import _ipc  # type: ignore[no-redef]
    stored = _ipc.load_problem(args.problem)
    problem = stored["problem"]
    if args.impl == "chainer":
        import _chainer_impls  # type: ignore[import-not-found]

        cfg = argparse.Namespace(seed=args.seed, check_steps=args.check_steps,
                                 problem=problem, settings=stored["settings"])
        return _chainer_impls.SPECS[args.workload][args.variant](cfg)
    import importlib

    from ._common import Config

    if args.impl == "torch":
        import torch

        torch.set_num_threads(args.threads)
    module = importlib.import_module(f"portagrad._bench.{args.workload}")
    cfg = Config(seed=args.seed, check_steps=args.check_steps, backend=args.backend,
                 problem=problem)
    return module.SPECS[args.variant].build(cfg)


def _timed(fn: Any) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="portagrad._bench._worker")
    p.add_argument("--workload", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--impl", required=True)
    p.add_argument("--problem", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-steps", type=int, default=3)
    p.add_argument("--backend", default="numpy")
    p.add_argument("--gc-off", action="store_true")
    args = p.parse_args(argv)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # library output goes to stderr

    def say(obj: dict) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        check, timed = _build(args)
        values = check()
        say({"check": [float(v) for v in getattr(values, "ravel", lambda: values)()]})
    except Exception:
        say({"error": traceback.format_exc()})
        return 1
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "q":
            break
        try:
            wall, cpu = _timed(timed)
            reply = {"wall": wall, "cpu": cpu}
            if args.gc_off:
                gc.disable()
                try:
                    reply["wall_gc_off"], reply["cpu_gc_off"] = _timed(timed)
                finally:
                    gc.enable()
            say(reply)
        except Exception:
            say({"error": traceback.format_exc()})
            return 1
    say({"peak_mb": _peak_mb()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
