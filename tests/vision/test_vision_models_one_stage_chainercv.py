"""One-stage detectors and segmentation models against ChainerCV 0.13.1's own outputs.

The fixture (scripts/make_chainercv_model_fixtures_one_stage.py) holds ChainerCV's npz
names and shapes, raw outputs and ``predict`` results under weights drawn from a seed;
here the same weights are written as a ChainerCV-layout npz file and loaded with
``pretrained_model=``.
"""

from pathlib import Path

import _chainercv_model_params as P
import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import models as M
from portagrad.vision.models import chainercv_names

FIXTURE = np.load(Path(__file__).parent / "fixtures" / P.FIXTURE)


def _shapes(prefix):
    names = FIXTURE[f"{prefix}|names"]
    shapes = FIXTURE[f"{prefix}|shapes"]
    return {str(n): tuple(int(v) for v in str(s).split(",") if v) for n, s in zip(names, shapes)}


def _write(prefix, tmp_path):
    path = tmp_path / f"{prefix}.npz"
    params = P.seeded_params(_shapes(prefix))
    for key in FIXTURE.files:
        if key.startswith(f"{prefix}|override|"):
            params[key.split("|")[-1]] = FIXTURE[key]
    np.savez(path, **params)
    return str(path)


def _check_layout(model, prefix):
    ours = {v for k, v in chainercv_names(model).items()}
    theirs = set(_shapes(prefix))
    # ChainerCV stores each batch counter N; ours are optional on load.
    assert ours == theirs, (sorted(ours - theirs)[:5], sorted(theirs - ours)[:5])


def _check_predict(prefix, result, atol):
    for key, per_image in zip(("bboxes", "labels", "scores"), result):
        for i, got in enumerate(per_image):
            want = FIXTURE[f"{prefix}|predict|{key}|{i}"]
            assert got.shape == want.shape and got.dtype == want.dtype, (key, i)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol, err_msg=f"{key} {i}")


@pytest.mark.parametrize("prefix, cls", [("yolov2", "YOLOv2"), ("yolov3", "YOLOv3")])
def test_yolo_matches_chainercv(prefix, cls, tmp_path):
    model = getattr(M, cls)(n_fg_class=3, pretrained_model=_write(prefix, tmp_path), insize=64,
                                width=0.125)
    _check_layout(model, prefix)
    model.eval()
    outs = model(P.batch((2, 3, 64, 64)))
    for key, got in zip(("locs", "objs", "confs"), outs):
        np.testing.assert_allclose(got.array, FIXTURE[f"{prefix}|out|{key}"], rtol=1e-4,
                                   atol=1e-4, err_msg=key)
    model.score_thresh = P.SCORE_THRESH[prefix]
    _check_predict(prefix, model.predict(P.images()), atol=1e-3)


def test_pretrained_model_names_what_is_missing(tmp_path):
    path = tmp_path / "partial.npz"
    params = P.seeded_params(_shapes("yolov2"))
    del params["subnet/W"], params["extractor/3/bn/avg_var"]
    np.savez(path, **params)
    with pytest.raises(pg.CheckpointError,
                       match=r"2 of .* missing.*extractor/3/bn/avg_var.*subnet/W"):
        M.YOLOv2(n_fg_class=3, pretrained_model=str(path), insize=64,
                    width=0.125)
    with pytest.raises(FileNotFoundError, match="no such file"):
        M.YOLOv2(n_fg_class=3, pretrained_model=str(tmp_path / "absent.npz"), insize=64,
                    width=0.125)


def _check_labels(got, want, key):
    assert got.shape == want.shape and got.dtype == want.dtype, key
    # pixels whose two best classes tie to float32 rounding may differ
    assert np.mean(got != want) <= 0.002, (key, np.mean(got != want))


def test_deeplab_v3plus_xception65_matches_chainercv(tmp_path):
    model = M.DeepLabV3plusXception65(n_class=3, pretrained_model=_write("deeplab", tmp_path),
                                      min_input_size=(64, 64), width=0.125)
    _check_layout(model, "deeplab")
    model.eval()
    logits = model(P.batch((2, 3, 65, 65), -1.0, 1.0))
    want = FIXTURE["deeplab|out|logits"]
    np.testing.assert_allclose(logits.array, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    for key, (scales, flip) in (("labels", ((1.0,), False)), ("labels_aug", ((1.0, 0.75), True))):
        model.scales, model.flip = scales, flip
        for i, got in enumerate(model.predict(P.images())):
            _check_labels(got, FIXTURE[f"deeplab|predict|{key}|{i}"], f"{key} {i}")


@pytest.mark.parametrize("prefix, cls, insize", [("ssd300", "SSD300", 300),
                                                  ("ssd512", "SSD512", 512)])
def test_ssd_matches_chainercv(prefix, cls, insize, tmp_path):
    model = getattr(M, cls)(n_fg_class=3, pretrained_model=_write(prefix, tmp_path),
                            width=0.125)
    _check_layout(model, prefix)
    model.eval()
    outs = model(P.batch((1, 3, insize, insize), -120.0, 120.0))
    for key, got in zip(("mb_locs", "mb_confs"), outs):
        want = FIXTURE[f"{prefix}|out|{key}"]
        np.testing.assert_allclose(got.array, want, rtol=1e-4, atol=1e-4 * np.abs(want).max(),
                                   err_msg=key)
    model.score_thresh = P.SCORE_THRESH[prefix]
    _check_predict(prefix, model.predict(P.images()), atol=1e-3)


def test_multibox_loss_matches_chainercv():
    from portagrad.vision.models.ssd import multibox_loss

    locs, confs, gt_locs, gt_labels, k = P.multibox_case()
    loc_loss, conf_loss = multibox_loss(locs, confs, gt_locs, gt_labels, k)
    np.testing.assert_allclose(loc_loss.array, FIXTURE["multibox_loss|loc_loss"], rtol=1e-5)
    np.testing.assert_allclose(conf_loss.array, FIXTURE["multibox_loss|conf_loss"], rtol=1e-5)


def test_pspnet_resnet50_matches_chainercv(tmp_path):
    model = M.PSPNetResNet50(n_class=3, pretrained_model=_write("pspnet", tmp_path),
                             input_size=(64, 64), width=0.125)
    _check_layout(model, "pspnet")
    model.eval()
    logits = model(P.batch((2, 3, 64, 64), -100.0, 100.0))
    want = FIXTURE["pspnet|out|logits"]
    np.testing.assert_allclose(logits.array, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    # one image fits in the input and is padded; the other is larger and tiled
    imgs = [P.images()[0][:, :40, :60], P.images()[1]]
    for i, got in enumerate(model.predict(imgs)):
        _check_labels(got, FIXTURE[f"pspnet|predict|labels|{i}"], f"labels {i}")


def test_pretrained_model_also_reads_portagrad_checkpoints_and_writes_chainercv(tmp_path):
    first = M.YOLOv3(n_fg_class=3, pretrained_model=_write("yolov3", tmp_path), insize=64,
                     width=0.125)
    pg.io.save(tmp_path / "ckpt.pg", first)
    second = M.YOLOv3(n_fg_class=3, pretrained_model=str(tmp_path / "ckpt.pg"), insize=64,
                      width=0.125)
    M.save_chainercv_npz(second, tmp_path / "again.npz")
    with np.load(tmp_path / "again.npz") as again:
        for name, value in P.seeded_params(_shapes("yolov3")).items():
            np.testing.assert_array_equal(again[name], value, err_msg=name)
