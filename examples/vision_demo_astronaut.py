"""Draw a detector's predictions on a real photograph and on an augmented copy of it.

The photograph is scikit-image's ``astronaut`` sample (it ships with the package, so
nothing is downloaded). The detector is one of:

* ``--ssd300 PATH``: an SSD300 portagrad checkpoint trained on Pascal VOC (20 classes);
* otherwise the shapes detector of ``vision_detection_shapes.py``, read from
  ``--checkpoint`` (that example writes ``result/vision_detection/model.safetensors``), or
  trained here for ``--train-iterations`` if the file is absent. It knows only
  rectangles, ellipses and triangles, so on a photograph it marks shape-like regions.

The right panel is a random crop + flip of the photograph, with the predicted boxes moved
by ``crop_bbox``/``flip_bbox`` from the parameters the transforms returned: they land on
the same pixels.

    .venv/bin/python examples/vision_demo_astronaut.py --out result/vision_demo
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import portagrad as pg
from portagrad.vision import transforms as T
from portagrad.vision.visualizations import vis_bbox


def load_photo() -> np.ndarray:
    from skimage import data

    return np.ascontiguousarray(data.astronaut().transpose(2, 0, 1)).astype(np.float32)


def load_detector(args: argparse.Namespace):
    if args.ssd300:
        from portagrad.vision.datasets import voc_bbox_label_names
        from portagrad.vision.models import SSD300

        return SSD300(20, pretrained_model=args.ssd300), voc_bbox_label_names
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import vision_detection_shapes as shapes

    if os.path.exists(args.checkpoint):
        model = shapes.build_model(3)
        pg.io.load(args.checkpoint, model)
    else:
        print(f"{args.checkpoint} not found: training the shapes detector for "
              f"{args.train_iterations} iterations", flush=True)
        model = shapes.train(args.train_iterations, n_val=20, log_every=50)["model"]
    return model, shapes.SyntheticShapesDataset.label_names


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ssd300", help="SSD300 (VOC) portagrad checkpoint")
    ap.add_argument("--checkpoint", default="result/vision_detection/model.safetensors")
    ap.add_argument("--train-iterations", type=int, default=150)
    ap.add_argument("--score-thresh", type=float, default=0.3)
    ap.add_argument("--max-boxes", type=int, default=20, help="draw the best boxes only")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/vision_demo")
    args = ap.parse_args(argv)

    from matplotlib.figure import Figure

    img = load_photo()
    model, names = load_detector(args)
    model.score_thresh = args.score_thresh
    (bbox,), (label,), (score,) = model.predict([img])
    best = np.argsort(-score, kind="stable")[:args.max_boxes]
    bbox, label, score = bbox[best], label[best], score[best]

    rng = np.random.default_rng(args.seed)
    aug, crop = T.random_sized_crop(img, (0.3, 0.8), return_param=True, rng=rng)
    aug, flip = T.random_flip(aug, x_random=True, return_param=True, rng=rng)
    moved, kept = T.crop_bbox(bbox, crop["y_slice"], crop["x_slice"], return_param=True)
    moved = T.flip_bbox(moved, aug.shape[1:], x_flip=flip["x_flip"])

    fig = Figure(figsize=(12, 6))
    vis_bbox(img, bbox, label, score, label_names=names, ax=fig.add_subplot(1, 2, 1))
    vis_bbox(aug, moved, label[kept["index"]], score[kept["index"]], label_names=names,
             ax=fig.add_subplot(1, 2, 2))
    for ax in fig.axes:
        ax.axis("off")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "astronaut.png")
    fig.savefig(path, dpi=80, bbox_inches="tight")
    print(f"{len(bbox)} detections drawn in {path}")
    return path


if __name__ == "__main__":
    main()
