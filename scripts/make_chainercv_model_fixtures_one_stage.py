"""Store ChainerCV 0.13.1's outputs of YOLOv2, YOLOv3, SSD300, SSD512,
DeepLabV3plusXception65 and PSPNetResNet50 under weights drawn from a seed, and its
multibox_loss on a stored case.

Each model is built by ChainerCV at a small size its code allows (few classes; YOLO's
``insize``/``grid`` class attributes set to 64; DeepLab's ``min_input_size`` and PSPNet's
``input_size`` small) and one eighth of its width: while it is built, the convolution
links its modules name (``Conv2DBNActiv``, ``SeparableConv2DBNActiv``,
``L.DilatedConvolution2D``,
``L.Convolution2D``, ``Normalize``) are replaced by ones with ``channels // 8`` for every
channel count above 3, so ChainerCV's own layer order, forward and decoding run on a
model the tests build with ``width=0.125``. Its npz names and shapes are read with
``chainer.serializers.DictionarySerializer``, every array is drawn by
``tests/vision/_chainercv_model_params.seeded_array`` and loaded with
``chainer.serializers.load_npz``. The fixture keeps the names and shapes, the input, the
raw outputs and ``predict`` on ``_chainercv_model_params.images()``; the tests draw the
same arrays, write them as an npz file in ChainerCV's layout and load it with
``pretrained_model=``.

Run with ChainerCV importable from its unpacked source (see
scripts/make_chainercv_fixtures.py for the venv; ``pip install .`` of the source tree is
not needed)::

    PYTHONPATH=chainercv-0.13.1 cv/bin/python scripts/make_chainercv_model_fixtures_one_stage.py

It rewrites tests/vision/fixtures/chainercv_0.13.1_one_stage.npz.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent / "tests" / "vision"
sys.path.insert(0, str(HERE))

import _chainercv_model_params as P  # noqa: E402

WIDTH = 8  # the fixtures' models have 1/WIDTH of ChainerCV's channels


def _narrow(c):
    return c if c is None or c <= 3 else max(1, c // WIDTH)


@contextlib.contextmanager
def narrowed(module, names, lazy_first=True):
    """Replace ``module.<name>`` for each name by a version whose channel counts are
    narrowed. A link called as ``(out, ksize, ...)`` (lazy input) narrows ``out``; one
    called as ``(in, out, ksize, ...)`` narrows both."""
    import types

    saved = {}
    for name in names:
        holder, attr = (module, name) if "." not in name else (
            getattr(module, name.split(".")[0]), name.split(".")[1])
        cls = getattr(holder, attr)

        def make(cls=cls, attr=attr):
            def build(*args, **kwargs):
                args = list(args)
                if attr == "Normalize":
                    args[0] = _narrow(args[0])
                elif len(args) >= 3 or (len(args) == 2 and "ksize" in kwargs):
                    args[0], args[1] = _narrow(args[0]), _narrow(args[1])
                else:  # (out_channels, ksize): the input is lazy
                    args[0] = _narrow(args[0])
                return cls(*args, **kwargs)
            return build

        if holder is module:
            saved[name] = (holder, attr, cls)
            setattr(holder, attr, make())
        else:  # a module attribute such as chainer.links as L: swap a copy
            copy = types.SimpleNamespace(**{k: getattr(holder, k) for k in dir(holder)
                                            if not k.startswith("__")})
            setattr(copy, attr, make())
            saved[name] = (module, name.split(".")[0], holder)
            setattr(module, name.split(".")[0], copy)
    try:
        yield
    finally:
        for holder, attr, value in reversed(list(saved.values())):
            setattr(holder, attr, value)


def _load_seeded(chainer, model, x):
    """Initialize lazy links with one forward, then load the seeded arrays."""
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        model.forward(x)
    ser = chainer.serializers.DictionarySerializer()
    ser.save(model)
    shapes = {k: np.shape(v) for k, v in ser.target.items()}
    params = P.seeded_params(shapes)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "w.npz"
        np.savez(path, **params)
        chainer.serializers.load_npz(str(path), model)
    return shapes


def _store(stored, prefix, shapes, outputs, predicted):
    names = sorted(shapes)
    stored[f"{prefix}|names"] = np.array(names)
    stored[f"{prefix}|shapes"] = np.array([",".join(map(str, shapes[n])) for n in names])
    for key, value in outputs.items():
        stored[f"{prefix}|out|{key}"] = np.asarray(value)
    for key, per_image in predicted.items():
        for i, value in enumerate(per_image):
            stored[f"{prefix}|predict|{key}|{i}"] = np.asarray(value)


def yolo(chainer, stored):
    from chainercv.links import YOLOv2, YOLOv3
    from chainercv.links.model.yolo.yolo_v2 import Darknet19Extractor
    from chainercv.links.model.yolo.yolo_v3 import Darknet53Extractor

    Darknet19Extractor.insize, Darknet19Extractor.grid = 64, 2
    Darknet53Extractor.insize, Darknet53Extractor.grids = 64, (2, 4, 8)
    x = P.batch((2, 3, 64, 64))
    for name, cls in (("yolov2", YOLOv2), ("yolov3", YOLOv3)):
        with narrowed(sys.modules[cls.__module__], ["Conv2DBNActiv"]):
            model = cls(n_fg_class=3)
        shapes = _load_seeded(chainer, model, x)
        with chainer.using_config("train", False), chainer.no_backprop_mode():
            locs, objs, confs = model.forward(x)
        model.score_thresh = P.SCORE_THRESH[name]
        bboxes, labels, scores = model.predict(P.images())
        _store(stored, name, shapes, {"locs": locs.array, "objs": objs.array,
                                      "confs": confs.array},
               {"bboxes": bboxes, "labels": labels, "scores": scores})


def ssd(chainer, stored):
    from chainercv.links.model.ssd import multibox_loss, ssd_vgg16

    for name, cls, insize in (("ssd300", ssd_vgg16.SSD300, 300),
                              ("ssd512", ssd_vgg16.SSD512, 512)):
        with narrowed(ssd_vgg16, ["L.Convolution2D", "L.DilatedConvolution2D", "Normalize"]):
            model = cls(n_fg_class=3)
        x = P.batch((1, 3, insize, insize), -120.0, 120.0)
        shapes = _load_seeded(chainer, model, x)
        with chainer.using_config("train", False), chainer.no_backprop_mode():
            mb_locs, mb_confs = model.forward(x)
        model.score_thresh = P.SCORE_THRESH[name]
        bboxes, labels, scores = model.predict(P.images())
        _store(stored, name, shapes, {"mb_locs": mb_locs.array, "mb_confs": mb_confs.array},
               {"bboxes": bboxes, "labels": labels, "scores": scores})
    # the loss with hard negative mining, on P.multibox_case()
    locs, confs, gt_locs, gt_labels, k = P.multibox_case()
    loc_loss, conf_loss = multibox_loss(locs, confs, gt_locs, gt_labels, k)
    stored["multibox_loss|loc_loss"] = np.asarray(loc_loss.array)
    stored["multibox_loss|conf_loss"] = np.asarray(conf_loss.array)


def _segmentation_outputs(chainer, model, x):
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        return model.forward(x).array


def _centre_logits(chainer, model, x, link, prefix, stored):
    """Shift the last bias so every class's mean logit on ``x`` is 0 (so ``predict`` labels
    vary from pixel to pixel); the shifted bias is stored and replaces the seeded one."""
    logits = _segmentation_outputs(chainer, model, x)
    link.b.array[...] -= logits.mean(axis=(0, 2, 3))
    path = [k for k, v in model.namedparams() if v is link.b][0].lstrip("/")
    stored[f"{prefix}|override|{path}"] = link.b.array.copy()


def deeplab(chainer, stored):
    from chainercv.links.model.deeplab import aspp, deeplab_v3_plus, xception

    names = ["Conv2DBNActiv", "SeparableConv2DBNActiv"]
    with narrowed(xception, names), narrowed(aspp, names), \
            narrowed(deeplab_v3_plus, [*names, "L.Convolution2D"]):
        model = deeplab_v3_plus.DeepLabV3plusXception65(n_class=3, min_input_size=(64, 64))
    x = P.batch((2, 3, 65, 65), -1.0, 1.0)
    shapes = _load_seeded(chainer, model, x)
    _centre_logits(chainer, model, x, model.decoder.conv_logits, "deeplab", stored)
    labels = model.predict(P.images())
    model.scales, model.flip = (1.0, 0.75), True
    labels_aug = model.predict(P.images())
    _store(stored, "deeplab", shapes, {"logits": _segmentation_outputs(chainer, model, x)},
           {"labels": labels, "labels_aug": labels_aug})


def pspnet(chainer, stored):
    from chainercv.experimental.links.model.pspnet import pspnet as module
    from chainercv.links.model.resnet import resblock

    with narrowed(module, ["Conv2DBNActiv", "L.Convolution2D"]), \
            narrowed(resblock, ["Conv2DBNActiv"]):
        model = module.PSPNetResNet50(n_class=3, input_size=(64, 64))
    x = P.batch((2, 3, 64, 64), -100.0, 100.0)
    shapes = _load_seeded(chainer, model, x)
    _centre_logits(chainer, model, x, model.head_conv2, "pspnet", stored)
    # one image fits in the input and is padded; the other is larger and tiled
    imgs = [P.images()[0][:, :40, :60], P.images()[1]]
    _store(stored, "pspnet", shapes, {"logits": _segmentation_outputs(chainer, model, x)},
           {"labels": model.predict(imgs)})


def main() -> None:
    import chainer
    import chainercv

    assert chainercv.__version__ == "0.13.1", chainercv.__version__
    if not hasattr(np, "float"):  # Chainer 7's resize_images spells NumPy's float64 so
        np.float = float
    stored: dict[str, np.ndarray] = {}
    for build in (yolo, ssd, deeplab, pspnet):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(chainer, stored)
    out = HERE / "fixtures" / P.FIXTURE
    np.savez_compressed(out, **stored)
    print(f"wrote {len(stored)} arrays to {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
