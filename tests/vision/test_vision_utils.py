"""Box, mask, anchor and image-file utilities against brute-force references."""

import io
import itertools

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import utils as U
from portagrad.xp import to_numpy


def _iou_ref(a, b):
    out = np.zeros((len(a), len(b)))
    for i, j in itertools.product(range(len(a)), range(len(b))):
        ih = max(0.0, min(a[i, 2], b[j, 2]) - max(a[i, 0], b[j, 0]))
        iw = max(0.0, min(a[i, 3], b[j, 3]) - max(a[i, 1], b[j, 1]))
        inter = ih * iw
        area_a = (a[i, 2] - a[i, 0]) * (a[i, 3] - a[i, 1])
        area_b = (b[j, 2] - b[j, 0]) * (b[j, 3] - b[j, 1])
        union = area_a + area_b - inter
        out[i, j] = inter / union if union > 0 else 0.0
    return out


def _nms_ref(bbox, thresh, score=None, limit=None):
    order = list(range(len(bbox))) if score is None else sorted(
        range(len(bbox)), key=lambda i: (-score[i], i))
    keep = []
    for i in order:
        if all(_iou_ref(bbox[i:i + 1], bbox[k:k + 1])[0, 0] < thresh for k in keep):
            keep.append(i)
    return keep[:limit] if limit is not None else keep


def _random_boxes(rng, n, size=50.0):
    y = rng.uniform(0, size, (n, 2))
    x = rng.uniform(0, size, (n, 2))
    return np.stack([y.min(1), x.min(1), y.max(1), x.max(1)], axis=1)


def test_bbox_iou_matches_brute_force(backend, rng):
    a = _random_boxes(rng, 7)
    b = np.concatenate([_random_boxes(rng, 5), a[:2], [[1.0, 1.0, 1.0, 4.0]]])  # + degenerate
    got = to_numpy(U.bbox_iou(backend.asarray(a), backend.asarray(b)))
    np.testing.assert_allclose(got, _iou_ref(a, b), rtol=1e-12, atol=1e-12)
    assert np.all(got[:2, 5:7].diagonal() == 1.0)


def test_bbox_iou_float32_and_shape_errors(rng):
    a = _random_boxes(rng, 4).astype(np.float32)
    assert U.bbox_iou(a, a).dtype == np.float32
    with pytest.raises(pg.ShapeError, match=r"bbox_iou\(bbox_b\): expected boxes of shape"):
        U.bbox_iou(a, np.zeros((3, 5)))


def test_bbox_iou_is_differentiable_on_variables(rng):
    a = _random_boxes(rng, 3)
    b = a + rng.uniform(-2, 2, a.shape)  # overlapping pairs: IoU is smooth there
    pg.gradcheck.check_grads(lambda x, y: U.bbox_iou(x, y), [a, b], order=1)


@pytest.mark.parametrize("thresh", [0.0, 0.3, 0.5, 0.7, 1.0])
def test_nms_matches_brute_force(thresh, backend):
    rng = np.random.default_rng(int(thresh * 10))
    bbox = _random_boxes(rng, 40, size=30.0)
    score = rng.uniform(size=40)
    score[5] = score[9]  # a tie keeps input order
    got = to_numpy(U.non_maximum_suppression(backend.asarray(bbox), thresh,
                                             backend.asarray(score)))
    assert got.dtype == np.int32
    assert got.tolist() == _nms_ref(bbox, thresh, score)
    assert to_numpy(U.non_maximum_suppression(bbox, thresh)).tolist() == _nms_ref(bbox, thresh)
    assert to_numpy(U.non_maximum_suppression(bbox, thresh, score, limit=3)).tolist() == \
        _nms_ref(bbox, thresh, score)[:3]


def test_nms_suppresses_at_exactly_the_threshold():
    # IoU of these two boxes is exactly 0.5: 2x2 boxes offset by 2/3 of a side? Use areas:
    # inter = 1 * 2 = 2, union = 2 + 2*... built directly below.
    a = np.array([[0.0, 0.0, 2.0, 3.0], [0.0, 1.0, 2.0, 4.0]])  # inter 4, union 8
    assert U.bbox_iou(a[:1], a[1:])[0, 0] == 0.5
    assert U.non_maximum_suppression(a, 0.5).tolist() == [0]
    assert U.non_maximum_suppression(a, 0.5 + 1e-9).tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"thresh"):
        U.non_maximum_suppression(a, 1.5)
    with pytest.raises(pg.ShapeError, match=r"score"):
        U.non_maximum_suppression(a, 0.5, np.ones(3))


def test_nms_empty():
    assert U.non_maximum_suppression(np.zeros((0, 4)), 0.5).shape == (0,)


def test_mask_to_bbox_and_mask_iou(backend, rng):
    mask = rng.uniform(size=(4, 9, 11)) > 0.93
    mask[3] = False
    want = np.zeros((4, 4), np.float32)
    for i, m in enumerate(mask):
        ys, xs = np.nonzero(m)
        if len(ys):
            want[i] = (ys.min(), xs.min(), ys.max() + 1, xs.max() + 1)
    got = to_numpy(U.mask_to_bbox(backend.asarray(mask)))
    np.testing.assert_array_equal(got, want)
    other = rng.uniform(size=(3, 9, 11)) > 0.5
    ref = np.array([[(m & o).sum() / (m | o).sum() if (m | o).any() else 0.0 for o in other]
                    for m in mask])
    np.testing.assert_allclose(to_numpy(U.mask_iou(backend.asarray(mask),
                                                   backend.asarray(other))), ref, rtol=1e-12)
    with pytest.raises(pg.ShapeError, match="mask_iou"):
        U.mask_iou(mask, other[:, :5])


def test_mask_iou_of_an_empty_set(backend):
    none, two = np.zeros((0, 3, 4), bool), np.ones((2, 3, 4), bool)
    assert to_numpy(U.mask_iou(backend.asarray(none), backend.asarray(two))).shape == (0, 2)
    assert to_numpy(U.mask_iou(backend.asarray(two), backend.asarray(none))).shape == (2, 0)


@pytest.mark.parametrize("src,dst", list(itertools.permutations(U.BBOX_FORMATS, 2)))
def test_convert_bbox_format_round_trip(src, dst, rng):
    b = _random_boxes(rng, 5)
    there = U.convert_bbox_format(U.convert_bbox_format(b, "yxyx", src), src, dst)
    back = U.convert_bbox_format(U.convert_bbox_format(there, dst, src), src, "yxyx")
    np.testing.assert_allclose(back, b, rtol=1e-12, atol=1e-12)


def test_convert_bbox_format_values():
    b = np.array([[1.0, 2.0, 5.0, 10.0]])
    expect = {"xyxy": [2, 1, 10, 5], "yxhw": [1, 2, 4, 8], "xywh": [2, 1, 8, 4],
              "cycxhw": [3, 6, 4, 8], "cxcywh": [6, 3, 8, 4]}
    for fmt, want in expect.items():
        np.testing.assert_array_equal(U.convert_bbox_format(b, "yxyx", fmt)[0], want)
    with pytest.raises(ValueError, match="dst"):
        U.convert_bbox_format(b, "yxyx", "ltrb")


def test_bbox2loc_inverts_loc2bbox(backend, rng):
    src = _random_boxes(rng, 6) + np.array([0, 0, 1, 1])
    dst = _random_boxes(rng, 6) + np.array([0, 0, 1, 1])
    loc = U.bbox2loc(backend.asarray(src), backend.asarray(dst))
    np.testing.assert_allclose(to_numpy(U.loc2bbox(backend.asarray(src), loc)), dst,
                               rtol=1e-10, atol=1e-10)
    # The coding by hand for one pair.
    s, d = src[0], dst[0]
    h, w, dh, dw = s[2] - s[0], s[3] - s[1], d[2] - d[0], d[3] - d[1]
    ref = [((d[0] + d[2]) - (s[0] + s[2])) / 2 / h, ((d[1] + d[3]) - (s[1] + s[3])) / 2 / w,
           np.log(dh / h), np.log(dw / w)]
    np.testing.assert_allclose(to_numpy(loc)[0], ref, rtol=1e-12)


def test_anchors():
    base = U.generate_anchor_base()
    assert base.shape == (9, 4)
    np.testing.assert_allclose((base[:, :2] + base[:, 2:]) / 2, 8.0)
    h, w = base[:, 2] - base[:, 0], base[:, 3] - base[:, 1]
    np.testing.assert_allclose(h / w, np.repeat([0.5, 1, 2], 3), rtol=1e-6)
    shifted = U.enumerate_shifted_anchor(base, 16, 3, 4)
    ref = np.array([base[a] + [16 * y, 16 * x, 16 * y, 16 * x]
                    for y in range(3) for x in range(4) for a in range(9)])
    np.testing.assert_allclose(shifted, ref)
    # The SSD300 configuration has 8732 default boxes.
    boxes = U.generate_default_bbox((38, 19, 10, 5, 3, 1), ((2,), (2, 3), (2, 3), (2, 3), (2,),
                                    (2,)), (8, 16, 32, 64, 100, 300),
                                    (30, 60, 111, 162, 213, 264, 315))
    assert boxes.shape == (8732, 4)
    with pytest.raises(ValueError, match="sizes"):
        U.generate_default_bbox((2,), ((2,),), (8,), (30,))


def test_generate_random_bbox(rng):
    b = U.generate_random_bbox(200, (40, 60), 5, 20, rng=rng)
    h, w = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    assert b.dtype == np.float32 and b.shape == (200, 4)
    assert (b[:, :2] >= 0).all() and (b[:, 2] <= 40).all() and (b[:, 3] <= 60).all()
    assert (h >= 5 - 1e-4).all() and (h <= 20 + 1e-4).all() and (w >= 5 - 1e-4).all()
    with pytest.raises(ValueError, match="max_length"):
        U.generate_random_bbox(1, (10, 10), 5, 20)


@pytest.mark.parametrize("channels,color", [(3, True), (1, False)])
def test_image_round_trip(tmp_path, rng, channels, color):
    img = rng.integers(0, 256, (channels, 5, 7)).astype(np.float32)
    path = tmp_path / "img.png"
    U.write_image(img, path)
    back = U.read_image(path, color=color)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, img)
    assert U.read_image(path, dtype=np.uint8).shape == (3, 5, 7)
    buf = io.BytesIO()
    U.write_image(img, buf, "png")
    buf.seek(0)
    np.testing.assert_array_equal(U.read_image(buf, color=color), img)


def test_read_image_alpha(tmp_path, rng):
    img = rng.integers(0, 256, (4, 5, 7)).astype(np.float32)
    path = tmp_path / "rgba.png"
    U.write_image(img, path)
    with pytest.raises(ValueError, match="alpha"):
        U.read_image(path)
    np.testing.assert_array_equal(U.read_image(path, alpha="ignore"), img[:3])
    a = img[3:] / 255
    np.testing.assert_allclose(U.read_image(path, alpha="blend_with_black"), img[:3] * a,
                               rtol=1e-6)
    np.testing.assert_allclose(U.read_image(path, alpha="blend_with_white"),
                               img[:3] * a + 255 * (1 - a), rtol=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        U.read_image(path, alpha=True)


def test_image_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="read_image"):
        U.read_image(tmp_path / "missing.jpg")
    with pytest.raises(pg.ShapeError, match=r"write_image\(img\)"):
        U.write_image(np.zeros((5, 7, 3)), tmp_path / "x.png")
    with pytest.raises(ValueError, match="format"):
        U.write_image(np.zeros((3, 2, 2)), io.BytesIO())


def test_write_image_clips_and_drops_fractions(tmp_path):
    img = np.array([[[-3.0, 0.4, 0.6, 1.9, 300.0]]])
    U.write_image(img, tmp_path / "g.png")
    np.testing.assert_array_equal(U.read_image(tmp_path / "g.png", color=False),
                                  [[[0, 0, 0, 1, 255]]])


def test_loc2bbox_class_wise_offsets_match_chainercv():
    # ChainerCV decodes (R, 4K) offsets group by group against the same source box.
    src = np.array([[0.0, 0.0, 10.0, 10.0], [2.0, 4.0, 6.0, 12.0]])
    loc = np.array([[0.0, 0.0, 0.0, 0.0, 0.1, -0.2, np.log(2.0), 0.0],
                    [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, np.log(0.5)]])
    out = U.loc2bbox(src, loc)
    assert out.shape == (2, 8)
    for k in range(2):
        group = slice(4 * k, 4 * k + 4)
        np.testing.assert_allclose(out[:, group], U.loc2bbox(src, loc[:, group]))
    np.testing.assert_allclose(out[0, 4:], [-4.0, -2.0, 16.0, 8.0])
    assert U.loc2bbox(np.zeros((0, 4)), np.zeros((0, 8), np.float32)).shape == (0, 4)
    with pytest.raises(pg.ShapeError, match="loc2bbox"):
        U.loc2bbox(src, np.zeros((2, 6)))


def test_apply_to_iterator_streams_inputs_outputs_and_the_rest():
    batches = [[(np.zeros((3, 2, 2)), np.array([[0.0, 0, 1, 1]]), np.array([0]))] * 2,
               [(np.ones((3, 2, 2)), np.array([[1.0, 1, 2, 2]]), np.array([1]))]]
    seen = []

    def predict(imgs):
        return [float(i.sum()) for i in imgs], [len(i) for i in imgs]

    ins, outs, rest = U.apply_to_iterator(predict, iter(batches),
                                          hook=lambda i, o, r: seen.append(len(i[0])))
    assert len(ins) == 1 and len(outs) == 2 and len(rest) == 2
    assert list(outs[0]) == [0.0, 0.0, 12.0] and list(outs[1]) == [3, 3, 3]
    assert [int(lab[0]) for lab in rest[1]] == [0, 0, 1]
    assert seen == [2, 1]
    with pytest.raises(ValueError, match="comm"):
        U.apply_to_iterator(predict, iter(batches), comm=object())
    xs, ys = U.unzip(iter([(1, 2), (3, 4), (5, 6)]))
    del ys  # a dropped stream is no longer buffered
    assert list(xs) == [1, 3, 5]


def test_tile_images_and_scale_mask_keep_the_library(backend):
    tiles = U.tile_images(backend.asarray(np.ones((3, 2, 4, 4))), 2, fill=0.5)
    assert to_numpy(tiles).shape == (2, 12, 12) and to_numpy(tiles)[0, 0, 0] == 0.5
    m = np.zeros((1, 4, 6), bool)
    m[0, 1:3, 2:5] = True
    out = U.scale_mask(backend.asarray(m), backend.asarray(np.array([[1.0, 2, 3, 5]])), 8)
    assert to_numpy(out).shape == (1, 8, 12) and to_numpy(out).sum() == 4 * 6
    with pytest.raises(pg.ShapeError, match="scale_mask"):
        U.scale_mask(m, np.zeros((2, 4)), 8)
