"""Image transforms against independent references, and boxes/points following images."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import transforms as T
from portagrad.vision.utils import mask_to_bbox
from portagrad.xp import to_numpy


def _blob_image(rng, h=24, w=30):
    """An image that is 0 except for one rectangle of ones, and that rectangle's box."""
    y0, x0 = rng.integers(0, h - 6), rng.integers(0, w - 6)
    y1, x1 = y0 + rng.integers(2, 6), x0 + rng.integers(2, 6)
    img = np.zeros((2, h, w), np.float32)
    img[:, y0:y1, x0:x1] = 1.0
    return img, np.array([[y0, x0, y1, x1]], np.float32)


def _box_of(img):
    return mask_to_bbox(img[:1] > 0.5)


def _bilinear_ref(img, out_h, out_w):
    """Loop-by-loop half-pixel bilinear sampling with edge clamping."""
    c, h, w = img.shape
    out = np.zeros((c, out_h, out_w))
    for i in range(out_h):
        sy = min(max((i + 0.5) * h / out_h - 0.5, 0), h - 1)
        y0 = int(np.floor(sy))
        y1, fy = min(y0 + 1, h - 1), sy - y0
        for j in range(out_w):
            sx = min(max((j + 0.5) * w / out_w - 0.5, 0), w - 1)
            x0 = int(np.floor(sx))
            x1, fx = min(x0 + 1, w - 1), sx - x0
            out[:, i, j] = ((1 - fy) * (1 - fx) * img[:, y0, x0] + (1 - fy) * fx * img[:, y0, x1]
                            + fy * (1 - fx) * img[:, y1, x0] + fy * fx * img[:, y1, x1])
    return out


@pytest.mark.parametrize("size", [(9, 13), (3, 4), (5, 20)])
def test_resize_bilinear_matches_reference(backend, rng, size):
    img = rng.uniform(0, 255, (3, 6, 8))
    got = to_numpy(T.resize(backend.asarray(img), size))
    np.testing.assert_allclose(got, _bilinear_ref(img, *size), rtol=1e-12, atol=1e-10)


def test_resize_matches_scikit_image(rng):
    transform = pytest.importorskip("skimage.transform")
    img = rng.uniform(0, 1, (2, 7, 5))
    for size in [(14, 10), (3, 4)]:
        ref = transform.resize(img.transpose(1, 2, 0), size, order=1, mode="edge",
                               anti_aliasing=False).transpose(2, 0, 1)
        np.testing.assert_allclose(T.resize(img, size), ref, rtol=1e-10, atol=1e-12)


def test_resize_nearest_integer_scale_repeats_pixels(backend, rng):
    img = rng.integers(0, 255, (3, 4, 5)).astype(np.uint8)
    got = to_numpy(T.resize(backend.asarray(img), (8, 15), interpolation="nearest"))
    np.testing.assert_array_equal(got, img.repeat(2, axis=1).repeat(3, axis=2))
    assert got.dtype == np.uint8


def test_resize_integer_dtype_rounds(rng):
    img = np.array([[[0, 3]]], np.uint8)
    np.testing.assert_array_equal(T.resize(img, (1, 4)), [[[0, 1, 2, 3]]])


def test_resize_errors():
    with pytest.raises(pg.ShapeError, match=r"resize\(img\): expected a \(C, H, W\)"):
        T.resize(np.zeros((4, 4)), (2, 2))
    with pytest.raises(ValueError, match="interpolation"):
        T.resize(np.zeros((1, 4, 4)), (2, 2), interpolation="bicubic")


def test_scale_and_resize_contain():
    assert T.scale(np.zeros((1, 20, 40)), 10).shape == (1, 10, 20)
    assert T.scale(np.zeros((1, 20, 40)), 10, fit_short=False).shape == (1, 5, 10)
    img = np.full((3, 10, 20), 7.0)
    out, p = T.resize_contain(img, (20, 20), fill=(1, 2, 3), return_param=True)
    assert p == {"y_offset": 5, "x_offset": 0, "scaled_size": (10, 20)}
    np.testing.assert_array_equal(out[:, 5:15], 7.0)
    np.testing.assert_array_equal(out[:, :5, 0], [[1] * 5, [2] * 5, [3] * 5])


def test_flips_keep_boxes_and_points_on_the_same_pixels(backend, rng):
    for _ in range(5):
        img, bbox = _blob_image(rng)
        for yf, xf in [(True, False), (False, True), (True, True)]:
            out = to_numpy(T.flip(backend.asarray(img), yf, xf))
            want = to_numpy(T.flip_bbox(backend.asarray(bbox), img.shape[1:], yf, xf))
            np.testing.assert_array_equal(_box_of(out), want)
            pts = np.stack([rng.integers(0, 24, 6), rng.integers(0, 30, 6)], 1).astype(float)
            # pixel centres, in the continuous coordinates points use
            moved = to_numpy(T.flip_point(backend.asarray(pts + 0.5), img.shape[1:], yf, xf))
            m = np.floor(moved).astype(int)
            img2 = rng.uniform(size=(1, 24, 30))
            np.testing.assert_array_equal(T.flip(img2, yf, xf)[0, m[:, 0], m[:, 1]],
                                          img2[0, pts[:, 0].astype(int), pts[:, 1].astype(int)])


def test_random_crop_keeps_boxes_on_the_same_pixels(rng):
    hits = 0
    for seed in range(30):
        img, bbox = _blob_image(rng)
        out, p = T.random_crop(img, (14, 17), return_param=True,
                               rng=np.random.default_rng(seed))
        cropped, q = T.crop_bbox(bbox, p["y_slice"], p["x_slice"], return_param=True)
        assert out.shape == (2, 14, 17)
        if out.sum() == 0:
            assert cropped.shape == (0, 4) and q["index"].shape == (0,)
        else:
            hits += 1
            np.testing.assert_array_equal(_box_of(out), cropped)
            assert q["index"].tolist() == [0]
    assert hits > 5


def test_crop_bbox_centre_rule_and_strict_backend(backend):
    bbox = np.array([[0.0, 0.0, 4.0, 4.0], [5.0, 5.0, 8.0, 8.0], [10.0, 10, 12, 12]])
    out, p = T.crop_bbox(backend.asarray(bbox), slice(1, 6), slice(2, 7),
                         allow_outside_center=False, return_param=True)
    np.testing.assert_array_equal(to_numpy(out), [[0.0, 0.0, 3.0, 2.0]])
    assert to_numpy(p["index"]).tolist() == [0]


def test_center_and_ten_crop(rng):
    img = rng.uniform(size=(2, 9, 10))
    out, p = T.center_crop(img, (4, 5), return_param=True)
    assert (p["y_slice"], p["x_slice"]) == (slice(2, 6), slice(2, 7))
    crops = T.ten_crop(img, (4, 5))
    ref = [out, img[:, :4, :5], img[:, 5:, :5], img[:, :4, 5:], img[:, 5:, 5:]]
    ref += [c[:, :, ::-1] for c in ref]
    np.testing.assert_array_equal(crops, np.stack(ref))
    with pytest.raises(ValueError, match="no larger than the image"):
        T.center_crop(img, (10, 4))


def test_random_expand_keeps_boxes_on_the_same_pixels(backend, rng):
    for seed in range(5):
        img, bbox = _blob_image(rng)
        out, p = T.random_expand(backend.asarray(img), max_ratio=3, fill=(0, 5),
                                 return_param=True, rng=np.random.default_rng(seed))
        out = to_numpy(out)
        assert out.shape == (2, int(24 * p["ratio"]), int(30 * p["ratio"]))
        np.testing.assert_array_equal(_box_of(out), T.translate_bbox(bbox, p["y_offset"],
                                                                     p["x_offset"]))
        assert out[1].sum() == pytest.approx(img[1].sum() + 5 * (out[1].size - img[1].size))


def test_random_sized_crop_params(rng):
    img = rng.uniform(size=(3, 40, 50))
    for seed in range(10):
        out, p = T.random_sized_crop(img, return_param=True, rng=np.random.default_rng(seed))
        np.testing.assert_array_equal(out, img[:, p["y_slice"], p["x_slice"]])
        assert 0.08 <= p["scale_ratio"] <= 1 and 0.75 <= p["aspect_ratio"] <= 4 / 3


def test_rot90_matches_numpy_and_moves_boxes_and_points(backend, rng):
    img, bbox = _blob_image(rng)
    for k in range(4):
        out = to_numpy(T.rot90(backend.asarray(img), k))
        np.testing.assert_array_equal(out, np.rot90(img, k, axes=(1, 2)))
        np.testing.assert_array_equal(_box_of(out),
                                      to_numpy(T.rotate_bbox(backend.asarray(bbox), 90 * k,
                                                             img.shape[1:])))
        pts = np.array([[3.0, 7.0], [0.0, 0.0], [23.0, 29.0]])
        q = np.floor(T.rotate_point(pts + 0.5, 90 * k, img.shape[1:])).astype(int)
        np.testing.assert_array_equal(out[0][q[:, 0], q[:, 1]],
                                      img[0][pts[:, 0].astype(int), pts[:, 1].astype(int)])
    out, p = T.random_rotate(img, return_param=True, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(out, np.rot90(img, p["k"], axes=(1, 2)))


def test_rotate_any_angle(backend, rng):
    img = rng.uniform(size=(2, 6, 9))
    np.testing.assert_allclose(to_numpy(T.rotate(backend.asarray(img), 90)),
                               np.rot90(img, 1, axes=(1, 2)), atol=1e-12)
    # A constant image stays constant inside the rotated footprint, and fill is outside.
    flat = np.ones((1, 20, 20))
    out = T.rotate(flat, 30, fill=0.0)
    assert out.shape[1:] == T.rotated_size((20, 20), 30) == (28, 28)
    assert out[0, 14, 14] == pytest.approx(1.0) and out[0, 0, 0] == 0.0
    # The rotated box holds the rotated rectangle.
    blob, bbox = _blob_image(rng, 30, 30)
    out = T.rotate(blob[:1], 30, interpolation="nearest")
    inside = T.rotate_bbox(bbox, 30, (30, 30))[0]
    got = _box_of(out)[0]
    assert (got[:2] >= np.floor(inside[:2])).all() and (got[2:] <= np.ceil(inside[2:])).all()


def test_resize_keeps_boxes_and_points(rng):
    img, bbox = _blob_image(rng)
    out = T.resize(img, (48, 90), interpolation="nearest")
    np.testing.assert_array_equal(_box_of(out), T.resize_bbox(bbox, (24, 30), (48, 90)))
    pts = np.array([[0.0, 0.0], [10.5, 20.5]])
    np.testing.assert_allclose(T.resize_point(pts, (24, 30), (48, 90)),
                               [[0.0, 0.0], [21.0, 61.5]])
    listed = T.resize_point([pts, pts[:1]], (24, 30), (48, 90))
    assert isinstance(listed, list) and [p.shape for p in listed] == [(2, 2), (1, 2)]


def test_pca_lighting(rng):
    img = rng.uniform(0, 255, (3, 4, 5))
    out, p = T.pca_lighting(img, 0.1, return_param=True, rng=np.random.default_rng(0))
    lam = np.array([0.2175, 0.0188, 0.0045])  # ChainerCV's defaults
    vec = np.array([[-0.5675, -0.5808, -0.5836], [0.7192, -0.0045, -0.6948],
                    [0.4009, -0.8140, 0.4203]])
    alpha = np.random.default_rng(0).normal(0, 0.1, 3)
    # the shift is a few thousandths: compare it absolutely, as out - img rounds at 255's ulp
    np.testing.assert_allclose(out - img, np.broadcast_to((vec @ (alpha * lam))[:, None, None],
                                                          img.shape), rtol=0, atol=1e-12)
    assert T.pca_lighting(img, 0.0) is img


def test_random_transforms_are_reproducible_with_rng(rng):
    img = rng.uniform(size=(3, 16, 16))
    for f, kw in [(T.random_flip, {"x_random": True, "y_random": True}),
                  (T.random_crop, {"size": 8}), (T.random_expand, {}),
                  (T.random_sized_crop, {}), (T.random_rotate, {})]:
        a, pa = f(img, return_param=True, rng=np.random.default_rng(5), **kw)
        b, pb = f(img, return_param=True, rng=np.random.default_rng(5), **kw)
        np.testing.assert_array_equal(a, b)
        assert pa == pb


def test_crop_bbox_reports_truncated_boxes_among_the_returned_ones():
    bbox = np.array([[0.0, 0.0, 4.0, 4.0], [5.0, 5.0, 8.0, 8.0], [20.0, 20.0, 30.0, 30.0],
                     [2.0, 3.0, 4.0, 5.0]])
    out, p = T.crop_bbox(bbox, slice(1, 6), slice(2, 7), return_param=True)
    np.testing.assert_array_equal(p["index"], [0, 1, 3])
    np.testing.assert_array_equal(p["truncated_index"], [0, 1])  # positions in `out`
    np.testing.assert_array_equal(out[2], [1.0, 1.0, 3.0, 3.0])
