"""Drawings land on the right pixels of the saved PNG."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure  # noqa: E402

import portagrad as pg  # noqa: E402
from portagrad.vision import visualizations as V  # noqa: E402
from portagrad.vision.utils import read_image  # noqa: E402


def _pixel_axes(h, w):
    fig = Figure(figsize=(w / 100, h / 100), dpi=100)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.axis("off")
    return ax


def test_vis_bbox_draws_on_the_box_edges(tmp_path):
    img = np.zeros((3, 100, 120))
    bbox = np.array([[20.0, 30.0, 70.0, 100.0]])
    ax = V.vis_bbox(img, bbox, instance_colors=[[255, 0, 0]], linewidth=2,
                    ax=_pixel_axes(100, 120))
    ax.figure.savefig(tmp_path / "b.png", dpi=100)
    out = read_image(tmp_path / "b.png", alpha="ignore")  # Matplotlib writes RGBA
    assert out.shape == (3, 100, 120)
    red = (out[0] > 150) & (out[1] < 100) & (out[2] < 100)
    ys, xs = np.nonzero(red)
    assert abs(ys.min() - 20) <= 2 and abs(ys.max() - 70) <= 2
    assert abs(xs.min() - 30) <= 2 and abs(xs.max() - 100) <= 2
    assert not red[30:60, 40:90].any()  # the inside stays the image


def test_vis_bbox_captions_and_order():
    ax = V.vis_bbox(None, np.array([[0.0, 0, 5, 5], [1, 1, 6, 6]]), np.array([1, 0]),
                    np.array([0.2, 0.8]), label_names=("a", "b"))
    assert [t.get_text() for t in ax.texts] == ["b: 0.20", "a: 0.80"]  # best drawn last
    with pytest.raises(pg.ShapeError, match=r"vis_bbox\(score\)"):
        V.vis_bbox(None, np.zeros((2, 4)), score=np.zeros(3))


def test_vis_semantic_segmentation_colours(tmp_path):
    label = np.zeros((40, 60), np.int64)
    label[10:30, 20:50] = 15  # VOC's person colour (192, 128, 128)
    ax, handles = V.vis_semantic_segmentation(np.zeros((3, 40, 60)), label,
                                              ax=_pixel_axes(40, 60))
    assert [h.get_label() for h in handles] == ["0", "15"]
    ax.figure.savefig(tmp_path / "s.png", dpi=100)
    out = read_image(tmp_path / "s.png", alpha="ignore")
    np.testing.assert_allclose(out[:, 20, 35], [192, 128, 128], atol=2)
    np.testing.assert_allclose(out[:, 2, 2], [0, 0, 0], atol=2)


def test_vis_instance_segmentation_and_save(tmp_path):
    mask = np.zeros((2, 30, 30), bool)
    mask[0, 2:10, 2:10] = True
    mask[1, 15:25, 15:25] = True
    ax = V.vis_instance_segmentation(np.full((3, 30, 30), 255.0), mask, np.array([0, 1]),
                                     label_names=("x", "y"))
    assert [t.get_text() for t in ax.texts] == ["x", "y"]
    V.save_figure(ax, tmp_path / "i.png")
    assert read_image(tmp_path / "i.png", alpha="ignore").shape[0] == 3
    with pytest.raises(pg.ShapeError, match="vis_image"):
        V.vis_image(np.zeros((2, 4, 4)))
