"""The testing helpers of portagrad.vision.utils (ChainerCV's chainercv.utils.testing):
each check passes on data and models that follow the conventions, the project's own
datasets and narrow models included, and raises AssertionError on each way to break them."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import models as M
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.models import faster_rcnn as FR
from portagrad.vision.models import fpn as FP
from portagrad.vision.utils import (
    ConstantStubLink,
    assert_is_bbox,
    assert_is_bbox_dataset,
    assert_is_detection_link,
    assert_is_image,
    assert_is_instance_segmentation_dataset,
    assert_is_instance_segmentation_link,
    assert_is_label_dataset,
    assert_is_point,
    assert_is_point_dataset,
    assert_is_semantic_segmentation_dataset,
    assert_is_semantic_segmentation_link,
    generate_random_bbox,
)
from portagrad.xp import to_numpy

F32 = np.float32


def _img(c=3, h=8, w=10, value=5.0):
    return np.full((c, h, w), value, F32)


def _box(*rows):
    return np.array(rows, F32)


# ------------------------------------------------------------------ images, boxes, points
def test_image_bbox_and_point_accept_valid_input():
    assert_is_image(_img())
    assert_is_image(_img(1), color=False)
    assert_is_image(_img(value=300.0), check_range=False)
    assert_is_image(np.zeros((3, 0, 4), F32))
    rng = np.random.default_rng(0)
    assert_is_bbox(generate_random_bbox(20, (32, 48), 2, 16, rng=rng), size=(32, 48))
    assert_is_bbox(np.zeros((0, 4), F32), size=(4, 4))
    assert_is_bbox(_box([-3, -2, 50, 60]))  # no size: anywhere
    pts = [np.array([[1, 2], [8, 10]], F32), np.zeros((0, 2), F32)]
    assert_is_point(pts, size=(8, 10))
    assert_is_point(np.array([[[1, 2], [20, 30]]], F32), np.array([[True, False]]),
                    size=(8, 10), n_point=2)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: assert_is_image(_img().tolist()), "img must be a numpy.ndarray, got list"),
    (lambda: assert_is_image(np.zeros((8, 10), F32)), r"3 dimensions.*\(8, 10\)"),
    (lambda: assert_is_image(_img(1)), r"3 channels \(color=True\), got 1"),
    (lambda: assert_is_image(_img(3), color=False), r"1 channel \(color=False\), got 3"),
    (lambda: assert_is_image(_img(value=256.0)), r"\[0, 255\], got 256.0 to 256.0"),
    (lambda: assert_is_image(_img(value=-1.0)), r"\[0, 255\]"),
    (lambda: assert_is_bbox([[0, 0, 1, 1]]), "bbox must be a numpy.ndarray"),
    (lambda: assert_is_bbox(np.array([[0, 0, 1.5, 1]])), "dtype float32, got float64"),
    (lambda: assert_is_bbox(np.zeros(4, F32)), r"shape \(R, 4\), got \(4,\)"),
    (lambda: assert_is_bbox(np.zeros((2, 5), F32)), r"shape \(R, 4\), got \(2, 5\)"),
    (lambda: assert_is_bbox(_box([0, 0, 1, 1], [3, 0, 3, 1])), r"bbox 1 .*top \(y_min\)"),
    (lambda: assert_is_bbox(_box([0, 2, 1, 1])), r"bbox 0 .*left \(x_min\)"),
    (lambda: assert_is_bbox(_box([0, 0, np.nan, 1])), "top"),
    (lambda: assert_is_bbox(_box([0, 0, 9, 1]), size=(8, 10)), r"leaves the image of size"),
    (lambda: assert_is_bbox(_box([0, 0, 2, 11]), size=(8, 10)), r"leaves"),
    (lambda: assert_is_bbox(_box([-1, 0, 2, 1]), size=(8, 10)), r"leaves"),
    (lambda: assert_is_point([np.zeros((2, 2))]), "point 0 must have dtype float32"),
    (lambda: assert_is_point([[[0, 0]]]), "point 0 must be a numpy.ndarray"),
    (lambda: assert_is_point([np.zeros((2, 3), F32)]), r"point 0 must have shape \(P, 2\)"),
    (lambda: assert_is_point([np.zeros((2, 2), F32)], n_point=3), "n_point = 3 points, got 2"),
    (lambda: assert_is_point([np.zeros((2, 2), F32)], [np.ones(2, bool)] * 2),
     "one entry per object, got 1 and 2"),
    (lambda: assert_is_point([np.zeros((2, 2), F32)], [np.ones(2, np.int32)]),
     "visible 0 must have dtype bool"),
    (lambda: assert_is_point([np.zeros((2, 2), F32)], [np.ones(3, bool)]),
     r"visible 0 must have shape \(2,\)"),
    (lambda: assert_is_point([np.full((1, 2), 9, F32)], size=(8, 10)), r"\[9.0, 9.0\]"),
    (lambda: assert_is_point([np.full((1, 2), -1, F32)], size=(8, 10)), "lie in the image"),
])
def test_image_bbox_and_point_reject_each_bad_input(call, match):
    with pytest.raises(AssertionError, match=match):
        call()


# ------------------------------------------------------------------------------ datasets
def _bbox_example(**change):
    ex = {"img": _img(), "bbox": _box([1, 1, 4, 5], [0, 0, 8, 10]),
          "label": np.array([0, 2], np.int32)}
    ex.update(change)
    return tuple(ex.values())


def _instance_example(**change):
    mask = np.zeros((2, 8, 10), bool)
    mask[0, 1:3, 2:4] = mask[1, 5:, 5:] = True
    ex = {"img": _img(), "mask": mask, "label": np.array([1, 0], np.int32)}
    ex.update(change)
    return tuple(ex.values())


def _semantic_example(**change):
    label = np.zeros((8, 10), np.int32)
    label[0] = -1
    label[3:5, 3:5] = 3
    ex = {"img": _img(), "label": label}
    ex.update(change)
    return tuple(ex.values())


def _point_example(*extra, **change):
    ex = {"img": _img(), "point": np.array([[[1, 2], [7, 9]]], F32)}
    ex.update(change)
    return tuple(ex.values()) + extra


def test_dataset_checks_accept_valid_datasets():
    assert_is_bbox_dataset([_bbox_example(), _bbox_example(bbox=np.zeros((0, 4), F32),
                                                          label=np.zeros(0, np.int32))], 3)
    assert_is_bbox_dataset([_bbox_example() + ("extra",)], 3)  # more elements are fine
    assert_is_instance_segmentation_dataset([_instance_example()], 2)
    assert_is_semantic_segmentation_dataset([_semantic_example()], 4)
    assert_is_label_dataset([(_img(), np.int32(4))], 5)
    assert_is_label_dataset([(_img(1), np.int32(0))], 1, color=False)
    assert_is_point_dataset([_point_example()], n_point=2)
    assert_is_point_dataset([_point_example(np.array([[True, False]]))], n_point=2)
    # a third element that is not visibility, skipped with no_visible
    assert_is_point_dataset([_point_example("not visible")], no_visible=True)
    # n_example draws from NumPy's global generator: seeded, the same examples each time
    seen = []

    class Recording(list):
        def __getitem__(self, i):
            seen.append(i)
            return super().__getitem__(i)

    data = Recording([_bbox_example()] * 50)
    np.random.seed(0)
    assert_is_bbox_dataset(data, 3, n_example=5)
    first, seen[:] = list(seen), []
    np.random.seed(0)
    assert_is_bbox_dataset(data, 3, n_example=5)
    assert len(first) == 5 and seen == first


@pytest.mark.parametrize(("call", "match"), [
    (lambda: assert_is_bbox_dataset([], 3), "must not be empty"),
    (lambda: assert_is_bbox_dataset([_bbox_example()[:2]], 3),
     r"example 0 must have at least 3 elements \(img, bbox, label\), got 2"),
    (lambda: assert_is_bbox_dataset([_bbox_example(img=_img(1))], 3), "example 0: img must"),
    (lambda: assert_is_bbox_dataset([_bbox_example(), _bbox_example(
        bbox=_box([1, 1, 4, 5], [0, 0, 9, 10]))], 3), "example 1: bbox 1 .* leaves the image"),
    (lambda: assert_is_bbox_dataset([_bbox_example(label=[0, 2])], 3), "label must be a numpy"),
    (lambda: assert_is_bbox_dataset([_bbox_example(label=np.array([0, 2]))], 3),
     "label must have dtype int32, got int64"),
    (lambda: assert_is_bbox_dataset([_bbox_example(label=np.zeros((2, 1), np.int32))], 3),
     r"label must have shape \(R,\)"),
    (lambda: assert_is_bbox_dataset([_bbox_example(label=np.zeros(3, np.int32))], 3),
     r"one entry per box \(2\), got 3"),
    (lambda: assert_is_bbox_dataset([_bbox_example()], 2), r"\[0, 1\] \(n_fg_class = 2\)"),
    (lambda: assert_is_bbox_dataset([_bbox_example(label=np.array([-1, 0], np.int32))], 3),
     "got -1 to 0"),
    (lambda: assert_is_instance_segmentation_dataset([_instance_example()[:2]], 2),
     "at least 3 elements"),
    (lambda: assert_is_instance_segmentation_dataset(
        [_instance_example(mask=np.zeros((2, 8, 10), np.uint8))], 2), "mask must have dtype bool"),
    (lambda: assert_is_instance_segmentation_dataset(
        [_instance_example(mask=np.zeros((2, 8, 9), bool))], 2), r"\(R, 8, 10\)"),
    (lambda: assert_is_instance_segmentation_dataset(
        [_instance_example(mask=np.zeros((8, 10), bool))], 2), r"\(R, 8, 10\)"),
    (lambda: assert_is_instance_segmentation_dataset([_instance_example(
        mask=np.zeros((3, 8, 10), bool))], 2), r"one entry per mask \(3\), got 2"),
    (lambda: assert_is_instance_segmentation_dataset([_instance_example()], 1),
     "n_fg_class = 1"),
    (lambda: assert_is_semantic_segmentation_dataset([_semantic_example()[:1]], 4),
     "at least 2 elements"),
    (lambda: assert_is_semantic_segmentation_dataset(
        [_semantic_example(label=np.zeros((8, 10), np.uint8))], 4), "dtype int32, got uint8"),
    (lambda: assert_is_semantic_segmentation_dataset(
        [_semantic_example(label=np.zeros((10, 8), np.int32))], 4), r"\(8, 10\) as the image"),
    (lambda: assert_is_semantic_segmentation_dataset([_semantic_example()], 3),
     r"\[-1, 2\] \(n_class = 3\), got -1 to 3"),
    (lambda: assert_is_semantic_segmentation_dataset(
        [_semantic_example(label=np.full((8, 10), -2, np.int32))], 4), "got -2 to -2"),
    (lambda: assert_is_label_dataset([(_img(),)], 2), "at least 2 elements"),
    (lambda: assert_is_label_dataset([(_img(), 1)], 2), "numpy.int32 scalar, got int"),
    (lambda: assert_is_label_dataset([(_img(), np.int64(1))], 2), "numpy.int32 scalar"),
    (lambda: assert_is_label_dataset([(_img(), np.array([1], np.int32))], 2),
     "numpy.int32 scalar"),
    (lambda: assert_is_label_dataset([(_img(), np.int32(2))], 2), r"\[0, 1\], got 2"),
    (lambda: assert_is_label_dataset([(_img(), np.int32(-1))], 2), "got -1"),
    (lambda: assert_is_label_dataset([(_img(), np.int32(0))], 2, color=False), "1 channel"),
    (lambda: assert_is_point_dataset([_point_example()[:1]]), "at least 2 elements"),
    (lambda: assert_is_point_dataset([_point_example()], n_point=3), "n_point = 3"),
    (lambda: assert_is_point_dataset([_point_example(np.array([[True]]))]),
     r"visible 0 must have shape \(2,\)"),
    (lambda: assert_is_point_dataset(
        [_point_example(point=np.array([[[1, 2], [9, 9]]], F32))]), r"example 0: point 0"),
])
def test_dataset_checks_reject_each_bad_example(call, match):
    with pytest.raises(AssertionError, match=match):
        call()


def test_the_synthetic_shapes_datasets_pass_their_checks():
    assert_is_bbox_dataset(SyntheticShapesDataset(6, size=40, seed=1), 3)
    assert_is_instance_segmentation_dataset(
        SyntheticShapesDataset(6, size=40, task="instance", seed=1), 3)
    assert_is_semantic_segmentation_dataset(
        SyntheticShapesDataset(6, size=40, task="semantic", seed=1), 4)
    all_ = SyntheticShapesDataset(4, size=40, task="all", seed=1)
    assert_is_bbox_dataset(all_, 3)  # (img, bbox, label, mask, label_map): the first three
    with pytest.raises(AssertionError, match="example 0: label values"):
        assert_is_bbox_dataset(all_, 1)


# --------------------------------------------------------------------------------- links
class _Predicting:
    """A link whose ``predict`` returns what ``make(imgs)`` builds."""

    def __init__(self, make):
        self.make = make

    def predict(self, imgs):
        return self.make(imgs)


def _detections(imgs, **change):
    out = {"bboxes": [_box([0, 0, 5, 5], [1, 2, 30, 40])[:k] for k in (2, 0)][:len(imgs)],
           "labels": [np.array([0, 1], np.int32), np.zeros(0, np.int32)][:len(imgs)],
           "scores": [np.array([0.5, 0.25], F32), np.zeros(0, F32)][:len(imgs)]}
    out.update(change)
    return tuple(out.values())


def _instances(imgs, **change):
    out = {"masks": [np.zeros((1,) + i.shape[1:], bool) for i in imgs],
           "labels": [np.array([2], np.int32)] * len(imgs),
           "scores": [np.array([0.5], F32)] * len(imgs)}
    out.update(change)
    return tuple(out.values())


def test_link_checks_accept_valid_links_and_predict_on_two_sizes():
    sizes = []

    def make(imgs):
        sizes.extend(i.shape for i in imgs)
        assert all(i.dtype == F32 and 0 <= i.min() and i.max() <= 255 for i in imgs)
        return _detections(imgs)

    assert_is_detection_link(_Predicting(make), 2)
    assert sizes == [(3, 480, 640), (3, 480, 320)]
    assert_is_instance_segmentation_link(_Predicting(_instances), 3)
    assert_is_semantic_segmentation_link(
        _Predicting(lambda imgs: [np.ones(i.shape[1:], np.int32) for i in imgs]), 2)


@pytest.mark.parametrize(("make", "match"), [
    (lambda imgs: _detections(imgs)[:2],
     r"three lists \(bboxes, labels, scores\), got a tuple of length 2"),
    (lambda imgs: None, "three lists .*, got None"),
    (lambda imgs: _detections(imgs[:1]), r"one of bboxes per image \(2\), got 1"),
    (lambda imgs: _detections(imgs, scores=[np.zeros(2, F32)]), "one of scores per image"),
    (lambda imgs: _detections(imgs, bboxes=[_box([0, 0, 5, 5], [3, 3, 1, 9]), _box()]),
     "image 0: bbox 1"),
    (lambda imgs: _detections(imgs, bboxes=[np.zeros((2, 4)), np.zeros((0, 4))]),
     "image 0: bbox must have dtype float32"),
    (lambda imgs: _detections(imgs, labels=[np.array([0, 1]), np.zeros(0, np.int32)]),
     "image 0: label must have dtype int32"),
    (lambda imgs: _detections(imgs, labels=[np.array([0, 2], np.int32), np.zeros(0, np.int32)]),
     r"image 0: label values must be in \[0, 1\]"),
    (lambda imgs: _detections(imgs, labels=[np.array([0], np.int32), np.zeros(0, np.int32)]),
     r"image 0: label must have one entry per box \(2\), got 1"),
    (lambda imgs: _detections(imgs, scores=[[0.5, 0.25], np.zeros(0, F32)]),
     "image 0: score must be a numpy.ndarray, got list"),
    (lambda imgs: _detections(imgs, scores=[np.zeros(2), np.zeros(0, F32)]),
     "score must have dtype float32, got float64"),
    (lambda imgs: _detections(imgs, scores=[np.zeros(2, F32), np.zeros(1, F32)]),
     r"image 1: score must have one entry per box \(0\), got 1"),
    (lambda imgs: _detections(imgs, scores=[np.zeros((2, 1), F32), np.zeros(0, F32)]),
     r"score must have shape \(R,\)"),
])
def test_detection_link_check_rejects_each_bad_result(make, match):
    with pytest.raises(AssertionError, match=match):
        assert_is_detection_link(_Predicting(make), 2)


@pytest.mark.parametrize(("make", "match"), [
    (lambda imgs: _instances(imgs)[1:], r"\(masks, labels, scores\)"),
    (lambda imgs: _instances(imgs, masks=[np.zeros((1, 480, 640), np.uint8)] * 2),
     "image 0: mask must have dtype bool"),
    (lambda imgs: _instances(imgs, masks=[np.zeros((1, 480, 640), bool)] * 2),
     r"image 1: mask must have shape \(R, 480, 320\)"),
    (lambda imgs: _instances(imgs, labels=[np.array([3], np.int32)] * 2), r"\[0, 2\]"),
    (lambda imgs: _instances(imgs, labels=[np.array([1, 1], np.int32)] * 2),
     r"one entry per mask \(1\), got 2"),
    (lambda imgs: _instances(imgs, scores=[np.array([0.5])] * 2), "score must have dtype"),
    (lambda imgs: _instances(imgs, scores=[np.zeros(0, F32)] * 2), "score must have one entry"),
])
def test_instance_segmentation_link_check_rejects_each_bad_result(make, match):
    with pytest.raises(AssertionError, match=match):
        assert_is_instance_segmentation_link(_Predicting(make), 3)


@pytest.mark.parametrize(("make", "match"), [
    (lambda imgs: [np.zeros(imgs[0].shape[1:], np.int32)], r"one label map per image \(2\)"),
    (lambda imgs: [i[0].astype(np.int32).tolist() for i in imgs], "must be a numpy.ndarray"),
    (lambda imgs: [np.zeros(i.shape[1:], np.int64) for i in imgs], "dtype int32, got int64"),
    (lambda imgs: [np.zeros((480, 640), np.int32)] * 2, r"image 1: label must have shape"),
    (lambda imgs: [np.full(i.shape[1:], 2, np.int32) for i in imgs], r"\[0, 1\].*got 2 to 2"),
    (lambda imgs: [np.full(i.shape[1:], -1, np.int32) for i in imgs], "got -1 to -1"),
])
def test_semantic_segmentation_link_check_rejects_each_bad_result(make, match):
    with pytest.raises(AssertionError, match=match):
        assert_is_semantic_segmentation_link(_Predicting(make), 2)


class _Counting:
    """Passes ``predict`` through and counts the detections, so a test knows the checks
    saw boxes (random weights and a high threshold would give none)."""

    def __init__(self, model):
        self.model = model
        self.counts = []

    def predict(self, imgs):
        out = self.model.predict(imgs)
        self.counts = [len(v) for v in out[1]]
        return out


def _vgg_faster_rcnn():
    rpn = FR.RegionProposalNetwork(512, 512, anchor_scales=(1, 2), feat_stride=16,
                                   proposal_creator_params={"n_test_post_nms": 16,
                                                            "min_size": 4})
    head = FR.VGG16RoIHead(4, 7, 1 / 16, hidden=128)  # FasterRCNNVGG16 with a narrow head
    return FR.FasterRCNN(FR.VGG16Extractor(), rpn, head, FR.VGG16_MEAN, min_size=64,
                         max_size=96)


def _fpn(cls):
    model = cls(n_fg_class=3, min_size=64, max_size=96)
    for k in ("_test_nms_limit_pre", "_test_nms_limit_post"):
        setattr(model.rpn, k, 24)
    return model


DETECTORS = {
    "SSD300": lambda: M.SSD300(n_fg_class=3, width=0.0625),
    "YOLOv2": lambda: M.YOLOv2(n_fg_class=3, insize=64, width=0.0625),
    "YOLOv3": lambda: M.YOLOv3(n_fg_class=3, insize=64, width=0.0625),
    "FasterRCNNVGG16": _vgg_faster_rcnn,
    "FasterRCNNFPNResNet50": lambda: _fpn(FP.FasterRCNNFPNResNet50),
}


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_the_detection_models_pass_the_detection_link_check(name):
    pg.random.seed(0)
    np.random.seed(0)
    model = DETECTORS[name]()
    model.use_preset("evaluate")
    model.score_thresh = 0.01 if name == "SSD300" else 0.0  # keep boxes of random weights
    link = _Counting(model)
    assert_is_detection_link(link, 3)
    assert min(link.counts) > 0, link.counts
    with pytest.raises(AssertionError, match=r"\(n_fg_class = 1\)"):
        assert_is_detection_link(model, 1)  # labels up to 2 are out of range for one class


def test_mask_rcnn_passes_the_instance_segmentation_link_check():
    pg.random.seed(0)
    np.random.seed(0)
    model = _fpn(FP.MaskRCNNFPNResNet50)
    model.score_thresh = 0.0
    link = _Counting(model)
    assert_is_instance_segmentation_link(link, 3)
    assert min(link.counts) > 0, link.counts


SEGMENTERS = {
    "SegNetBasic": lambda: M.SegNetBasic(n_class=4, width=8),
    # narrow, with predict on the image scaled by 0.1 (the models' own ``scales``)
    "PSPNetResNet50": lambda: M.PSPNetResNet50(n_class=4, input_size=(48, 48),
                                               width=0.0625),
    "DeepLabV3plusXception65": lambda: M.DeepLabV3plusXception65(
        n_class=4, min_input_size=(32, 32), width=0.0625, scales=(0.1,)),
}


@pytest.mark.parametrize("name", sorted(SEGMENTERS))
def test_the_segmentation_models_pass_the_semantic_segmentation_link_check(name):
    pg.random.seed(0)
    np.random.seed(0)
    model = SEGMENTERS[name]()
    if name == "PSPNetResNet50":
        model.scales = (0.1,)
    assert_is_semantic_segmentation_link(model, 4)


# ---------------------------------------------------------------------- ConstantStubLink
def test_constant_stub_link_returns_its_outputs_whatever_the_arguments():
    a = np.arange(6, dtype=F32).reshape(2, 3)
    stub = ConstantStubLink(a)
    out = stub(np.zeros(4), "anything", key=1)
    assert isinstance(out, pg.Variable)
    np.testing.assert_array_equal(to_numpy(out.array), a)
    assert list(stub.state_dict()) == [] and list(stub.parameters()) == []
    b = np.ones(2, np.int32)
    pair = ConstantStubLink((a, b))()
    assert isinstance(pair, tuple) and len(pair) == 2
    np.testing.assert_array_equal(to_numpy(pair[1].array), b)
    single = ConstantStubLink((a,))()
    assert isinstance(single, tuple) and len(single) == 1


def test_constant_stub_link_moves_with_the_module():
    xp = pytest.importorskip("array_api_strict")
    stub = ConstantStubLink((np.ones(3, F32), np.zeros(2, F32)))
    stub.to_device(xp.Device("device1"), xp=xp)
    first, second = stub()
    assert type(first.array).__module__.startswith("array_api_strict")
    assert first.array.device == xp.Device("device1")
    np.testing.assert_array_equal(to_numpy(second.array), np.zeros(2))


@pytest.mark.parametrize("outputs", [[np.zeros(2)], 1.5, (np.zeros(2), "x")])
def test_constant_stub_link_rejects_what_is_not_an_array(outputs):
    with pytest.raises(ValueError, match=r"ConstantStubLink\(outputs\): expected an array"):
        ConstantStubLink(outputs)
