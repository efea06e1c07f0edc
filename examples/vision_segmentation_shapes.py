"""Train SegNet-Basic on 64 x 64 synthetic shapes and report its mean IoU.

``SegNetBasic`` (``portagrad.vision.models``) with 16 channels per layer learns to label
each pixel as background, rectangle, ellipse or triangle on ``SyntheticShapesDataset``
images drawn on the fly (nothing is downloaded). The loss is the softmax cross entropy
with class weights ``(median(freq) / freq) ** 0.5``: the SegNet paper's median-frequency
balancing (``--balance 1``) lets the small shapes count, but at full strength it also
makes them bleed into the background.

    .venv/bin/python examples/vision_segmentation_shapes.py                 # full run
    .venv/bin/python examples/vision_segmentation_shapes.py --iterations 50 # quick look

Prints the loss as it trains, then the IoU per class, mean IoU and pixel accuracy on
held-out images, writes label maps of a few of them to ``<out>/segmentation.png`` and the
trained weights to ``<out>/model.safetensors``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import portagrad as pg
from portagrad.data import SerialIterator, TransformDataset, concat_examples
from portagrad.vision import transforms as T
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.evaluations import eval_semantic_segmentation
from portagrad.vision.models import SegNetBasic

SIZE = 64


def class_weights(data, power: float = 1.0, n: int = 200) -> np.ndarray:
    """SegNet's median frequency balancing, ``(median(freq) / freq) ** power`` per class
    (``power`` 0 weighs every class alike, 1 is the paper's balancing)."""
    counts = np.zeros(len(data.semantic_label_names))
    for i in range(min(n, len(data))):
        counts += np.bincount(data[i][1].ravel(), minlength=len(counts))
    freq = counts / counts.sum()
    return ((np.median(freq) / freq) ** power).astype(np.float32)


class TrainTransform:
    """Random horizontal and vertical flips of the image and its label map."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, example):
        img, label = example
        img, p = T.random_flip(img, y_random=True, x_random=True, return_param=True,
                               rng=self.rng)
        label = T.flip(label[None], p["y_flip"], p["x_flip"])[0]
        return np.ascontiguousarray(img), np.ascontiguousarray(label)


def evaluate(model: SegNetBasic, data) -> dict:
    pred = model.predict([data[i][0] for i in range(len(data))])
    return eval_semantic_segmentation(pred, [data[i][1] for i in range(len(data))],
                                      n_class=len(data.semantic_label_names))


def train(iterations: int = 2000, batch_size: int = 8, lr: float = 2e-3, width: int = 16,
          n_val: int = 100, seed: int = 0, log_every: int = 50, out: str | None = None,
          balance: float = 0.5) -> dict:
    """Train and evaluate; returns the loss history and the segmentation metrics."""
    pg.random.seed(seed)
    train_data = SyntheticShapesDataset(max(iterations * batch_size, 1), size=SIZE,
                                        task="semantic", seed=seed)
    val_data = SyntheticShapesDataset(n_val, size=SIZE, task="semantic", seed=seed + 1000)
    weights = class_weights(train_data, balance)
    model = SegNetBasic(len(train_data.semantic_label_names), width=width)
    opt = pg.optim.Adam(model, lr=lr)
    it = SerialIterator(TransformDataset(train_data, TrainTransform(seed)), batch_size,
                        shuffle=False)
    history = []
    start = time.time()
    for i in range(1, iterations + 1):
        if i == int(0.8 * iterations) + 1:
            opt.lr = lr * 0.1
        x, t = concat_examples(next(it))
        loss = pg.ops.softmax_cross_entropy(model(x), t, class_weight=weights)
        model.cleargrads()
        loss.backward()
        opt.step()
        history.append(float(loss.array))
        if log_every and (i % log_every == 0 or i == iterations):
            print(f"iter {i:5d}  loss {np.mean(history[-log_every:]):.3f}  "
                  f"({time.time() - start:.0f} s)", flush=True)
    result = evaluate(model, val_data)
    result.update(history=history, seconds=time.time() - start, model=model)
    if out is not None:
        draw(model, val_data, os.path.join(out, "segmentation.png"))
        pg.io.save(os.path.join(out, "model.safetensors"), model)
    return result


def draw(model: SegNetBasic, data, path: str, n: int = 4) -> None:
    from matplotlib.figure import Figure

    from portagrad.vision.visualizations import vis_image, vis_semantic_segmentation

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig = Figure(figsize=(2.5 * n, 5))
    imgs = [data[i][0] for i in range(n)]
    for k, (img, label) in enumerate(zip(imgs, model.predict(imgs))):
        ax = vis_image(img, fig.add_subplot(2, n, k + 1))
        ax.axis("off")
        ax, handles = vis_semantic_segmentation(None, label, data.semantic_label_names,
                                                all_label_names_in_legend=True,
                                                ax=fig.add_subplot(2, n, n + k + 1))
        ax.axis("off")
    fig.legend(handles=handles, loc="lower center", ncol=len(handles))
    fig.savefig(path, dpi=100, bbox_inches="tight")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--val", type=int, default=100, help="held-out images")
    ap.add_argument("--balance", type=float, default=0.5,
                    help="power of the median-frequency class weights (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/vision_segmentation")
    args = ap.parse_args(argv)
    r = train(args.iterations, args.batch_size, args.lr, args.width, args.val, args.seed,
              out=args.out, balance=args.balance)
    names = SyntheticShapesDataset.semantic_label_names
    print("IoU: " + ", ".join(f"{n} {v:.3f}" for n, v in zip(names, r["iou"])))
    print(f"mean IoU: {r['miou']:.3f}, pixel accuracy: {r['pixel_accuracy']:.3f} after "
          f"{args.iterations} iterations, {r['seconds']:.0f} s; label maps drawn in "
          f"{args.out}/segmentation.png")
    return r


if __name__ == "__main__":
    main()
