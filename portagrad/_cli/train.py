"""``portagrad train``: train an MLP or a CNN on digits (bundled), MNIST or Fashion-MNIST.

    portagrad train --model mlp --dataset digits --epochs 20 --out result/demo
    portagrad train --model cnn --dataset mnist --data-dir ~/data/mnist --device cuda:0
    portagrad train --backend array_api_strict --epochs 2
    portagrad train --out result/demo --resume        # continue from the newest snapshot
    mpiexec -n 4 portagrad train --distributed       # data-parallel over 4 MPI ranks

The run writes into --out: log.jsonl (one JSON object per epoch), loss.png and
accuracy.png (with matplotlib), snapshot_iter_*.safetensors (the whole training state,
for --resume) and model.safetensors (the trained weights).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

NAME = "train"
HELP = "train an MLP or a CNN on digits (bundled), MNIST or Fashion-MNIST"

OPTIMIZERS = {"sgd": ("SGD", 0.1), "momentum": ("SGD", 0.05),
              "nesterov": ("SGD", 0.05), "adam": ("Adam", 1e-3),
              "adamw": ("AdamW", 1e-3), "rmsprop": ("RMSprop", 1e-3),
              "adagrad": ("Adagrad", 0.05), "adadelta": ("Adadelta", 1.0),
              "lion": ("Lion", 1e-4)}
# Options of the torch.optim rule that the CLI's names stand for.
OPTIMIZER_OPTIONS = {"momentum": {"momentum": 0.9},
                     "nesterov": {"momentum": 0.9, "nesterov": True}}


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to the ``portagrad`` command's subparsers."""
    p = subparsers.add_parser(NAME, help=HELP, description=__doc__.split("\n\n")[0],
                              epilog=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(p)
    return p


def configure(p: argparse.ArgumentParser) -> None:
    from . import nonnegative_int, positive_float, positive_int

    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp",
                   help="network to train (default: %(default)s)")
    p.add_argument("--dataset", choices=("digits", "mnist", "fashion-mnist"),
                   default="digits", help="data set; digits is bundled (default: %(default)s)")
    p.add_argument("--data-dir", help="folder of the MNIST/Fashion-MNIST IDX files "
                   "(default $PORTAGRAD_DATA/<dataset> or ~/.portagrad/datasets/<dataset>)")
    p.add_argument("--epochs", type=positive_int, default=20,
                   help="passes over the training set (default: %(default)s)")
    p.add_argument("--batch-size", type=positive_int, default=32,
                   help="examples per update (default: %(default)s)")
    p.add_argument("--lr", type=positive_float,
                   help="learning rate (default per optimizer: "
                        + ", ".join(f"{k} {v[1]:g}" for k, v in sorted(OPTIMIZERS.items()))
                        + ")")
    p.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adam",
                   help="update rule (default: %(default)s)")
    p.add_argument("--device", default="cpu",
                   help="cpu, cuda:N (CuPy with --backend numpy, or torch), or a device "
                        "name of the backend (default: %(default)s)")
    p.add_argument("--backend", choices=("numpy", "array_api_strict", "torch"),
                   default="numpy", help="array library (default: %(default)s)")
    p.add_argument("--out", default="result", help="output folder (default: %(default)s)")
    p.add_argument("--resume", action="store_true",
                   help="continue from the newest valid snapshot in --out")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the initial weights and the shuffling (default: %(default)s)")
    p.add_argument("--snapshot-every", type=nonnegative_int, default=0, metavar="N",
                   help="snapshot every N iterations (default: every epoch)")
    p.add_argument("--no-prefetch", action="store_true",
                   help="load batches in the main thread")
    p.add_argument("--quiet", action="store_true", help="no table and no progress bar")
    from ._distributed import add_arguments as add_distributed_arguments

    add_distributed_arguments(p)  # --distributed: see _distributed.py


def _backend(name: str, device: str) -> tuple[Any, Any]:
    """(namespace, device object) for --backend/--device."""
    from ..xp import default_namespace

    if name == "numpy":
        if device.startswith("cuda"):
            from ..xp import infer_namespace

            try:
                xp = infer_namespace(device=device)
                idx = int(device.split(":", 1)[1]) if ":" in device else 0
                return xp, xp.__array_namespace_info__().devices()[idx]
            except ImportError:
                raise SystemExit("portagrad train: --device cuda needs CuPy "
                                 "(pip install 'portagrad[gpu]')") from None
        if device != "cpu":
            raise ValueError(f"--device {device}: expected cpu or cuda:N with --backend "
                             f"numpy; pass one of those, or another --backend")
        return default_namespace(), "cpu"
    if name == "torch":
        try:
            import array_api_compat.torch as xp
        except ImportError:
            raise SystemExit("portagrad train: --backend torch needs torch "
                             "(pip install 'portagrad[torch]')") from None
        return xp, device
    import array_api_strict as xp

    return xp, xp.Device("CPU_DEVICE" if device == "cpu" else device)


def build_model(kind: str, n_classes: int = 10) -> Any:
    """The network of ``--model``; sizes of inputs are inferred at the first call."""
    from .. import nn

    if kind == "mlp":
        return nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.Dropout(0.1),
                             nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(n_classes))
    return nn.Sequential(
        nn.LazyConv2d(32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.LazyConv2d(64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.LazyLinear(128), nn.ReLU(), nn.Dropout(0.25), nn.LazyLinear(n_classes))


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    from .. import data

    ndim = 3 if args.model == "cnn" else 1
    if args.dataset == "digits":
        return data.load_digits(ndim=ndim)
    loader = data.load_mnist if args.dataset == "mnist" else data.load_fashion_mnist
    return loader(args.data_dir, ndim=ndim)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def run(args: argparse.Namespace) -> int:
    import portagrad as pg
    from portagrad.cli import print_error
    from portagrad.training import extensions as E

    from ._distributed import Distributed

    # Checked before the data loads, so a bad --out fails in a second, not after a run.
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print_error(NAME, f"--out {args.out}: cannot create the folder ({e.strerror}); pass "
                    f"a writable folder with --out", args)
        return 2
    dist = Distributed.from_args(args)  # each dist.* call is a no-op without --distributed
    try:
        xp, device = _backend(args.backend, args.device)
    except ValueError as e:
        print_error(NAME, str(e), args)
        return 2
    try:
        train, test = _load(args)
    except pg.data.DatasetNotFoundError as e:
        print_error(NAME, str(e), args)
        return 2
    except ValueError as e:  # unreadable or corrupt IDX files; the message names the file
        print_error(NAME, f"--data-dir {args.data_dir}: {e}; replace the file with an intact "
                    f"copy", args)
        return 1
    train, test = dist.shard(train, shuffle=True, seed=args.seed), dist.shard(test)
    t0 = time.perf_counter()
    pg.random.seed(args.seed)
    model = pg.training.Classifier(build_model(args.model))
    # One forward pass creates the (lazily shaped) parameters in the chosen library and
    # on the chosen device, before the optimizer and a resumed snapshot need them.
    sample = pg.data.concat_examples(train[0:2], xp=xp, device=device)
    model.eval()
    with pg.no_grad():
        model.predictor(sample[0])
    model.train()

    cls, default_lr = OPTIMIZERS[args.optimizer]
    optimizer = dist.optimizer(
        getattr(pg.optim, cls)(model, lr=args.lr if args.lr else default_lr,
                               **OPTIMIZER_OPTIONS.get(args.optimizer, {})))
    train_iter: Any = pg.data.SerialIterator(train, args.batch_size, seed=args.seed)
    convert = None
    if not args.no_prefetch:
        from functools import partial

        convert = partial(pg.data.concat_examples, xp=xp, device=device)
        train_iter = pg.data.PrefetchIterator(train_iter, converter=convert)
    updater = pg.training.StandardUpdater(train_iter, optimizer, xp=xp, device=device)
    trainer = pg.training.Trainer(updater, (args.epochs, "epoch"), out=out)
    test_iter = pg.data.SerialIterator(test, 256, repeat=False, shuffle=False)
    trainer.extend(dist.evaluator(E.Evaluator(test_iter, model, xp=xp, device=device)))
    trainer.extend(E.FailOnNonNumber())
    if dist.is_root:  # logs and plots: one writer
        trainer.extend(E.LogReport())
        # Drawing costs more than an epoch of the digits demo: every 5 epochs and at the end.
        plot_every = (5, "epoch")
        trainer.extend(E.PlotReport(["main/loss", "validation/main/loss"],
                                    filename="loss.png", ylabel="loss", trigger=plot_every))
        trainer.extend(E.PlotReport(["main/accuracy", "validation/main/accuracy"],
                                    filename="accuracy.png", ylabel="accuracy",
                                    trigger=plot_every))
    snap_trigger = (args.snapshot_every, "iteration") if args.snapshot_every > 0 \
        else (1, "epoch")
    trainer.extend(dist.snapshot(n_retains=2), trigger=snap_trigger)
    if not args.quiet and dist.is_root:
        trainer.extend(E.PrintReport(["epoch", "main/loss", "main/accuracy",
                                      "validation/main/loss", "validation/main/accuracy",
                                      "elapsed_time"]))
        trainer.extend(E.ProgressBar())
    if args.resume:
        import io

        # The loader explains each skipped snapshot with its key lists; the CLI names it.
        skipped = io.StringIO()
        try:
            loaded = dist.resume(trainer, log=skipped)
        except pg.CheckpointError:
            # The loader's own message speaks of load_state_dict; the CLI user can only
            # change the options or the folder.
            print_error(NAME, f"--resume: no snapshot in {out} loads into --model "
                        f"{args.model} (damaged, or written for another --model); pass the "
                        f"--model and --dataset it was trained with, or another --out to "
                        f"start fresh", args)
            return 2
        marker = "skipping broken snapshot "
        for line in skipped.getvalue().splitlines() if dist.is_root else ():
            if marker in line:
                name = line.split(marker, 1)[1].split(":", 1)[0]
                print(f"portagrad train: --resume: {marker}{name} (damaged, or written for "
                      f"another --model)", file=sys.stderr)
        if dist.is_root and loaded:
            print(f"portagrad train: resume from {loaded} (iteration "
                  f"{updater.iteration})", file=sys.stderr)
        elif dist.is_root:
            print(f"portagrad train: --resume: no snapshot in {out} yet; starting fresh",
                  file=sys.stderr)
    try:
        trainer.run()
    finally:
        if isinstance(train_iter, pg.data.PrefetchIterator):
            train_iter.close()
    result = trainer.get_extension("validation").evaluate()
    if not dist.is_root:
        return 0
    pg.io.save(out / "model.safetensors", model.predictor,
               metadata={"model": args.model, "dataset": args.dataset})
    acc = result.get("main/accuracy", float("nan"))
    epochs = _plural(args.epochs, "epoch")
    print(f"test accuracy: {acc:.4f} ({args.model} on {args.dataset}, {epochs}, "
          f"{pg.xp.namespace_name(xp)} on {device}{dist.describe()}, "
          f"{time.perf_counter() - t0:.1f} s)")
    print(f"log:        {out / 'log.jsonl'}")
    if E.PlotReport.available():
        print(f"plots:      {out / 'loss.png'}, {out / 'accuracy.png'}")
    else:
        print("plots:      not written (matplotlib is not installed)")
    print(f"checkpoint: {out / 'model.safetensors'} (weights); snapshots for --resume: "
          f"{out}/snapshot_iter_*.safetensors")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m portagrad._cli.train``: the subcommand on its own."""
    p = argparse.ArgumentParser(prog="portagrad train", description=__doc__.split("\n\n")[0])
    configure(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
