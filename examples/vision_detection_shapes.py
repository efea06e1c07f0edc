"""Train a small SSD-style detector on 64 x 64 synthetic shapes and report its VOC mAP.

The detector is SSD's multibox head, box coder (matching) and loss with hard negative
mining (``portagrad.vision.models.ssd``) on a light convolutional backbone with three
feature maps (16 x 16, 8 x 8, 4 x 4). The data are ``SyntheticShapesDataset`` images drawn
on the fly (rectangles, ellipses, triangles), so nothing is downloaded.

    .venv/bin/python examples/vision_detection_shapes.py                 # full run
    .venv/bin/python examples/vision_detection_shapes.py --iterations 50 # quick look

Prints the loss as it trains, then the VOC mAP (IoU 0.5) on held-out images, writes the
predictions on a few of them to ``<out>/detections.png`` and the trained weights to
``<out>/model.safetensors`` (``build_model(3)`` + ``portagrad.io.load`` restores them).
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
from portagrad.vision.evaluations import eval_detection_voc
from portagrad.vision.models.ssd import SSD, Multibox, MultiboxCoder, multibox_loss

# Default boxes: 16x16 cells of 4 px, 8x8 of 8 px, 4x4 of 16 px; sides 10, 20, 36 px
# (plus the geometric means with the next size, and 1:2 / 2:1 boxes).
GRIDS, STEPS, SIZES = (16, 8, 4), (4, 8, 16), (10, 20, 36, 56)
ASPECT_RATIOS = ((2,), (2,), (2,))
SIZE = 64


def conv_bn(cin: int, cout: int, stride: int = 1) -> pg.nn.Sequential:
    return pg.nn.Sequential(pg.nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                            pg.nn.BatchNorm2d(cout), pg.nn.ReLU())


class LightExtractor(pg.nn.Module):
    """64x64 RGB -> feature maps of 16x16x48, 8x8x64 and 4x4x64."""

    out_channels = (48, 64, 64)

    def __init__(self) -> None:
        self.stem = pg.nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 32, 2), conv_bn(32, 48))
        self.down1 = conv_bn(48, 64, 2)
        self.down2 = conv_bn(64, 64, 2)

    def forward(self, x):
        h1 = self.stem(x / 128.0)
        h2 = self.down1(h1)
        return [h1, h2, self.down2(h2)]


def build_model(n_fg_class: int) -> SSD:
    extractor = LightExtractor()
    multibox = Multibox(n_fg_class + 1, extractor.out_channels, ASPECT_RATIOS)
    coder = MultiboxCoder(GRIDS, ASPECT_RATIOS, STEPS, SIZES)
    return SSD(extractor, multibox, coder, insize=SIZE, mean=(128.0, 128.0, 128.0))


class TrainTransform:
    """Random horizontal flip, mean subtraction and encoding by the model's coder (the
    generated data are plentiful, so SSD's heavier augmentation is not needed here)."""

    def __init__(self, model: SSD, seed: int) -> None:
        self.coder, self.mean = model.coder, model.mean
        self.rng = np.random.default_rng(seed)

    def __call__(self, example):
        img, bbox, label = example
        img, p = T.random_flip(img, x_random=True, return_param=True, rng=self.rng)
        bbox = T.flip_bbox(bbox, img.shape[1:], x_flip=p["x_flip"])
        loc, mb_label = self.coder.encode(bbox, label)
        return (img - self.mean).astype(np.float32), loc, mb_label


def evaluate(model: SSD, data, batch_size: int = 50) -> dict:
    model.use_preset("evaluate")
    preds: tuple[list, list, list] = ([], [], [])
    for s in range(0, len(data), batch_size):
        out = model.predict([data[i][0] for i in range(s, min(s + batch_size, len(data)))])
        for acc, o in zip(preds, out):
            acc.extend(o)
    model.use_preset("visualize")
    return eval_detection_voc(*preds, [data[i][1] for i in range(len(data))],
                              [data[i][2] for i in range(len(data))])


def train(iterations: int = 800, batch_size: int = 32, lr: float = 2e-3, n_val: int = 200,
          seed: int = 0, log_every: int = 50, out: str | None = None) -> dict:
    """Train and evaluate; returns the loss history, the mAP and per-class APs."""
    pg.random.seed(seed)
    train_data = SyntheticShapesDataset(max(iterations * batch_size, 1), size=SIZE, seed=seed)
    val_data = SyntheticShapesDataset(n_val, size=SIZE, seed=seed + 1000)
    model = build_model(len(train_data.label_names))
    opt = pg.optim.Adam(model, lr=lr)
    it = SerialIterator(TransformDataset(train_data, TrainTransform(model, seed)), batch_size,
                        shuffle=False)
    history = []
    start = time.time()
    for i in range(1, iterations + 1):
        if i == int(0.8 * iterations) + 1:
            opt.lr = lr * 0.1
        x, gt_loc, gt_label = concat_examples(next(it))
        locs, confs = model(x)
        loc_loss, conf_loss = multibox_loss(locs, confs, gt_loc, gt_label)
        loss = loc_loss + conf_loss
        model.cleargrads()
        loss.backward()
        opt.step()
        history.append((float(loc_loss.array), float(conf_loss.array)))
        if log_every and (i % log_every == 0 or i == iterations):
            recent = np.mean(history[-log_every:], axis=0)
            print(f"iter {i:5d}  loc {recent[0]:.3f}  conf {recent[1]:.3f}  "
                  f"({time.time() - start:.0f} s)", flush=True)
    result = evaluate(model, val_data)
    result.update(history=history, seconds=time.time() - start, model=model)
    if out is not None:
        result["drawn"] = draw(model, val_data, os.path.join(out, "detections.png"))
        pg.io.save(os.path.join(out, "model.safetensors"), model)
    return result


def draw(model: SSD, data, path: str, n: int = 4) -> int:
    """Draw the predictions on ``n`` held-out images; returns how many boxes were drawn."""
    from matplotlib.figure import Figure

    from portagrad.vision.visualizations import vis_bbox

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig = Figure(figsize=(3 * n, 3))
    imgs = [data[i][0] for i in range(n)]
    drawn = 0
    for k, (img, b, lab, s) in enumerate(zip(imgs, *model.predict(imgs))):
        ax = fig.add_subplot(1, n, k + 1)
        vis_bbox(img, b, lab, s, label_names=data.label_names, linewidth=1.5, ax=ax)
        ax.axis("off")
        drawn += len(b)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    return drawn


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=800)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--val", type=int, default=200, help="held-out images")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/vision_detection")
    args = ap.parse_args(argv)
    r = train(args.iterations, args.batch_size, args.lr, args.val, args.seed, out=args.out)
    names = SyntheticShapesDataset.label_names
    print("AP: " + ", ".join(f"{n} {a:.3f}" for n, a in zip(names, r["ap"])))
    print(f"VOC mAP (IoU 0.5): {r['map']:.3f} after {args.iterations} iterations, "
          f"{r['seconds']:.0f} s")
    if r["drawn"]:
        print(f"{r['drawn']} predicted boxes drawn on 4 held-out images in "
              f"{args.out}/detections.png")
    else:
        print(f"no prediction passed the score threshold (score_thresh="
              f"{r['model'].score_thresh}) on the 4 held-out images, so "
              f"{args.out}/detections.png shows them without boxes; train longer "
              f"(--iterations) or lower model.score_thresh")
    return r


if __name__ == "__main__":
    main()
