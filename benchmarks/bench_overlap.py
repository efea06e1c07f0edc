"""Backward + gradient synchronisation: buckets overlapped with backward vs one packed
allreduce after it, on 2 ranks, in one run.

An MLP with tens of MB of float32 gradients and a small batch, so that communication is a
visible share of a step. Each round runs every variant once on every rank (a barrier
before each); a variant's time in a round is the slowest rank's. Forward passes are not
timed.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_overlap            # launches 2 ranks
    mpiexec -n 2 python -m mpi4py -m benchmarks.bench_overlap       # or launch it yourself
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def _model(width: int, depth: int):
    import portagrad as pg

    layers: list = [pg.nn.Linear(784, width), pg.nn.ReLU()]
    for _ in range(depth - 1):
        layers += [pg.nn.Linear(width, width), pg.nn.ReLU()]
    layers.append(pg.nn.Linear(width, 10))
    model = pg.nn.Sequential(*layers)
    model(np.zeros((1, 784), dtype=np.float32))  # create parameters before wrapping
    return model


def run(rounds: int, width: int, depth: int, batch: int, caps: list[float]) -> None:
    import portagrad as pg
    from portagrad.parallel import DataParallel, create_communicator

    comm = create_communicator()
    rng = np.random.default_rng(comm.rank)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    t = rng.integers(0, 10, batch)

    variants: dict[str, tuple] = {}
    variants["backward only (no communication)"] = (_model(width, depth), None)
    variants["backward, then one packed allreduce"] = (
        m := _model(width, depth), DataParallel(m, comm, mode="packed"))
    for cap in caps:
        variants[f"backward overlapped with {cap:g} MB buckets"] = (
            m := _model(width, depth),
            DataParallel(m, comm, mode="overlap", bucket_cap_mb=cap))

    def step(model, dp) -> float:
        model.cleargrads()
        loss = pg.ops.softmax_cross_entropy(model(x), t)
        comm.barrier()
        t0 = time.perf_counter()
        loss.backward()
        if dp is not None:
            dp.synchronize()
        return time.perf_counter() - t0

    def sync_only(model, dp) -> float:
        comm.barrier()
        t0 = time.perf_counter()
        dp.synchronize()  # the gradients of the last step are still there
        return time.perf_counter() - t0

    alone = "allreduce alone (no backward)"
    for model, dp in variants.values():  # warm up
        for _ in range(2):
            step(model, dp)
    times: dict[str, list[float]] = {k: [] for k in [*variants, alone]}
    packed = variants["backward, then one packed allreduce"]
    for _ in range(rounds):
        for name, (model, dp) in variants.items():
            local = step(model, dp)
            times[name].append(float(comm.allreduce(np.array([local]), "max")[0]))
        local = sync_only(*packed)
        times[alone].append(float(comm.allreduce(np.array([local]), "max")[0]))

    nbytes = sum(p.array.nbytes for p in next(iter(variants.values()))[0].parameters())
    if comm.rank == 0:
        base = statistics.median(times["backward, then one packed allreduce"])
        print(f"{comm.size} ranks, MLP 784-{width}x{depth}-10 float32, batch {batch} per "
              f"rank, {nbytes / 2**20:.1f} MiB of gradients, {rounds} rounds, "
              f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
        print(f"{'variant':<46}{'median ms':>10}{'min ms':>9}{'vs packed':>11}")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:<46}{med * 1e3:>10.1f}{min(ts) * 1e3:>9.1f}{med / base:>10.2f}x")
        for name, (_, dp) in variants.items():
            if dp is not None:
                sizes = dp.synchronizer.bucket_sizes
                print(f"  {name}: {len(sizes)} bucket(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--caps", type=float, nargs="+", default=[25.0, 4.0])
    ap.add_argument("-n", "--ranks", type=int, default=2, help="ranks to launch")
    args = ap.parse_args()
    in_job = any(v in os.environ for v in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE"))
    if not in_job:
        # Relaunch on K ranks with the mpiexec installed next to this Python.
        mpiexec = Path(sys.executable).parent / "mpiexec"
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        cmd = [str(mpiexec), "-n", str(args.ranks), sys.executable, "-m", "mpi4py", "-m",
               "benchmarks.bench_overlap", *sys.argv[1:]]
        raise SystemExit(subprocess.call(cmd, env=env))
    run(args.rounds, args.width, args.depth, args.batch, args.caps)


if __name__ == "__main__":
    main()
