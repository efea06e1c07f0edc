"""Data-parallel training of an MLP on the bundled digits, over MPI.

Each rank trains on its shard of the data; gradients are averaged across ranks while
backward runs, so every rank keeps the same model. Validation metrics are averaged over
all ranks' shards; rank 0 prints the log and writes snapshots.

    mpiexec -n 2 python -m mpi4py examples/data_parallel.py --epochs 10
    mpiexec -n 2 python -m mpi4py examples/data_parallel.py --epochs 20 --resume

(``python -m mpi4py`` makes an exception on any rank end the whole job; portagrad's
communicator does the same, so a plain ``python`` also works.)
"""

from __future__ import annotations

import argparse

import portagrad as pg
from portagrad.parallel import (
    DistributedOptimizer,
    MultiNodeSnapshot,
    create_communicator,
    create_multi_node_evaluator,
    resume_trainer,
    scatter_dataset,
)
from portagrad.training import extensions as E


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=64,
                    help="global batch, split evenly over the ranks")
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--mode", choices=["overlap", "packed"], default="overlap",
                    help="gradient buckets overlapped with backward, or one allreduce after")
    ap.add_argument("--out", default="result/data_parallel")
    ap.add_argument("--resume", action="store_true", help="continue from the last snapshot")
    args = ap.parse_args()

    comm = create_communicator()
    pg.random.seed(0)  # the same initial model everywhere (rank 0's is broadcast anyway)

    # Every rank opens the dataset; only the order of indices travels.
    train, test = pg.data.load_digits()
    train = scatter_dataset(train, comm, shuffle=True, seed=0)
    test = scatter_dataset(test, comm)

    model = pg.training.Classifier(pg.nn.Sequential(
        pg.nn.Linear(64, args.units), pg.nn.ReLU(), pg.nn.Linear(args.units, 10)))
    optimizer = DistributedOptimizer(pg.optim.Adam(model, lr=args.lr), comm, mode=args.mode)

    per_rank = max(1, args.batch_size // comm.size)
    updater = pg.training.StandardUpdater(
        pg.data.SerialIterator(train, per_rank, seed=comm.rank), optimizer)
    trainer = pg.training.Trainer(updater, (args.epochs, "epoch"), out=args.out)
    evaluator = E.Evaluator(pg.data.SerialIterator(test, 256, repeat=False, shuffle=False),
                            model)
    trainer.extend(create_multi_node_evaluator(evaluator, comm), trigger=(1, "epoch"))
    trainer.extend(MultiNodeSnapshot(comm), trigger=(1, "epoch"))
    if comm.rank == 0:  # extensions that only write or print: one rank is enough
        trainer.extend(E.LogReport(trigger=(1, "epoch")))
        trainer.extend(E.PrintReport(["epoch", "main/loss", "validation/main/loss",
                                      "validation/main/accuracy", "elapsed_time"]))
    if args.resume:
        it = resume_trainer(trainer, comm)
        if comm.rank == 0:
            print(f"resumed from iteration {it}" if it is not None else "no snapshot yet")
    trainer.run()


if __name__ == "__main__":
    main()
