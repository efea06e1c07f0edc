"""Train a small Mask R-CNN on 64 x 64 synthetic shapes and report its mask mAP.

The model is ChainerCV's FPN Mask R-CNN (``portagrad.vision.models.fpn``: ``FPN``,
``RPN``, ``BboxHead``, ``MaskHead``, trained with ``FPNTrainChain``, i.e. ``rpn_loss``,
``bbox_head_loss_pre/post`` and ``mask_head_loss_pre/post``) with a light convolutional
backbone instead of ResNet-50, 64 channels instead of 256, and anchors of 8 to 128 pixels
instead of 32 to 512, so that it trains on two CPU cores in minutes. The data are
``SyntheticShapesDataset`` images drawn on the fly; nothing is downloaded.

    OMP_NUM_THREADS=1 .venv/bin/python examples/vision_instance_segmentation_shapes.py
    OMP_NUM_THREADS=1 .venv/bin/python examples/vision_instance_segmentation_shapes.py \
        --iterations 30  # quick look

Measured (default run, 1200 iterations of 4 images, one thread on a shared 2-core machine):
388 s wall and CPU (6.5 minutes), mask mAP 0.996 (VOC, IoU 0.5), 0.711 (COCO, IoU
0.50:0.95), box mAP 0.996 (VOC, IoU 0.5) on 50 held-out images. More BLAS threads only slow
it down (small matrices).

Prints the losses as it trains, then the mask mAP on held-out images (VOC, IoU 0.5; and
COCO's mAP at IoU 0.50:0.95 when pycocotools is installed) and writes the weights to
``<out>/model.safetensors`` (``build_model(3)`` + ``portagrad.io.load`` restores them).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import portagrad as pg
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.evaluations import eval_detection_voc, eval_instance_segmentation_voc
from portagrad.vision.models.fpn import FPN, RPN, BboxHead, FasterRCNN, FPNTrainChain, MaskHead

SIZE = 64
SCALES = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64)


def conv(cin: int, cout: int, stride: int = 1) -> pg.nn.Sequential:
    return pg.nn.Sequential(pg.nn.Conv2d(cin, cout, 3, stride, 1), pg.nn.ReLU())


class LightBackbone(pg.nn.Module):
    """64x64 RGB -> feature maps at strides 4, 8, 16 and 32 (the FPN's four inputs)."""

    out_channels = (32, 48, 64, 64)
    mean = np.full((3, 1, 1), 128.0, np.float32)

    def __init__(self) -> None:
        self.stem = pg.nn.Sequential(conv(3, 16, 2), conv(16, 32, 2), conv(32, 32))
        self.down = pg.nn.ModuleList([conv(32, 48, 2), conv(48, 64, 2), conv(64, 64, 2)])

    def forward(self, x):
        hs = [self.stem(x / 128.0)]
        for layer in self.down:
            hs.append(layer(hs[-1]))
        return hs


def build_model(n_fg_class: int, width: int = 64) -> FasterRCNN:
    extractor = FPN(LightBackbone(), 4, SCALES, n_channels=width)
    rpn = RPN(SCALES, n_channels=width)
    rpn._anchor_size = 8  # 8 px at stride 4 ... 128 px at stride 64
    rpn._train_nms_limit_pre = rpn._train_nms_limit_post = 64
    rpn._test_nms_limit_pre, rpn._test_nms_limit_post = 200, 50
    model = FasterRCNN(extractor, rpn,
                       BboxHead(n_fg_class + 1, SCALES, n_channels=width, fc_size=256),
                       MaskHead(n_fg_class + 1, SCALES, n_channels=width),
                       return_values=("bboxes", "masks", "labels", "scores"),
                       min_size=SIZE, max_size=SIZE)
    return model


def evaluate(model: FasterRCNN, data) -> dict:
    """Mask mAP (VOC at IoU 0.5 and, with pycocotools, COCO's at 0.50:0.95) and box mAP
    (VOC, IoU 0.5) on ``data``, with the ``"evaluate"`` preset (score >= 0.05)."""
    model.use_preset("evaluate")
    bboxes, masks, labels, scores = model.predict([data[i][0] for i in range(len(data))])
    model.use_preset("visualize")
    gt_bboxes = [data[i][1] for i in range(len(data))]
    gt_masks = [data[i][3] for i in range(len(data))]
    gt_labels = [data[i][2] for i in range(len(data))]
    result = eval_instance_segmentation_voc(masks, labels, scores, gt_masks, gt_labels)
    result["box_map"] = float(eval_detection_voc(bboxes, labels, scores, gt_bboxes,
                                                 gt_labels)["map"])
    try:
        from portagrad.vision.evaluations import eval_instance_segmentation_coco

        coco = eval_instance_segmentation_coco(masks, labels, scores, gt_masks, gt_labels)
        result["coco_map"] = float(coco["map/iou=0.50:0.95/area=all/max_dets=100"])
    except ImportError:
        pass
    result["n_predicted"] = int(sum(len(m) for m in masks))
    return result


def train(iterations: int = 1200, batch_size: int = 4, lr: float = 1e-3, n_val: int = 50,
          seed: int = 0, width: int = 64, log_every: int = 10, out: str | None = None) -> dict:
    """Train and evaluate; returns the loss history, the mAPs and the wall and CPU
    seconds of training (``seconds``, ``cpu_seconds``) and of the evaluation."""
    pg.random.seed(seed)
    np.random.seed(seed)  # the RPN's and heads' samplers draw from numpy.random
    data = SyntheticShapesDataset(iterations * batch_size, size=SIZE, task="all", seed=seed)
    val = SyntheticShapesDataset(n_val, size=SIZE, task="all", seed=seed + 1000)
    model = build_model(len(data.label_names), width)
    chain = FPNTrainChain(model)
    opt = pg.optim.Adam(model, lr=lr)
    history = []
    start, cpu_start = time.time(), time.process_time()
    mean = model.extractor.mean
    for i in range(iterations):
        batch = [data[i * batch_size + k] for k in range(batch_size)]
        if i == int(0.8 * iterations):
            opt.lr = lr * 0.1
        obs: dict = {}
        with pg.reporter.report_scope(obs):
            loss = chain([b[0] - mean for b in batch], [b[1] for b in batch],
                         [b[2] for b in batch], [b[3] for b in batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append({k[len("main/"):]: float(v) for k, v in obs.items()})
        if log_every and ((i + 1) % log_every == 0 or i + 1 == iterations):
            recent = {k: np.mean([h[k] for h in history[-log_every:]]) for k in history[-1]}
            print(f"iter {i + 1:5d}  " + "  ".join(f"{k} {v:.3f}" for k, v in recent.items())
                  + f"  ({time.time() - start:.0f} s)", flush=True)
    seconds, cpu_seconds = time.time() - start, time.process_time() - cpu_start
    result = evaluate(model, val)
    result.update(history=history, seconds=seconds, cpu_seconds=cpu_seconds, model=model,
                  eval_seconds=time.time() - start - seconds,
                  eval_cpu_seconds=time.process_time() - cpu_start - cpu_seconds)
    if out is not None:
        os.makedirs(out, exist_ok=True)
        pg.io.save(os.path.join(out, "model.safetensors"), model)
    return result


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=1200)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--width", type=int, default=64, help="channels of the pyramid and heads")
    ap.add_argument("--val", type=int, default=50, help="held-out images")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/vision_instance_segmentation")
    args = ap.parse_args(argv)
    r = train(args.iterations, args.batch_size, args.lr, args.val, args.seed, args.width,
              out=args.out)
    names = SyntheticShapesDataset.label_names
    print("mask AP (IoU 0.5): " + ", ".join(f"{n} {a:.3f}" for n, a in zip(names, r["ap"])))
    line = f"mask mAP: VOC (IoU 0.5) {r['map']:.3f}"
    if "coco_map" in r:
        line += f", COCO (IoU 0.50:0.95) {r['coco_map']:.3f}"
    print(f"{line}; box mAP (VOC, IoU 0.5) {r['box_map']:.3f}; {r['n_predicted']} masks "
          f"predicted on {args.val} held-out images")
    print(f"trained {args.iterations} iterations of {args.batch_size} images in "
          f"{r['seconds']:.0f} s wall, {r['cpu_seconds']:.0f} s CPU; evaluated in "
          f"{r['eval_seconds']:.0f} s wall, {r['eval_cpu_seconds']:.0f} s CPU")
    return r


if __name__ == "__main__":
    main()
