"""Checks that data and models follow the vision conventions, for tests (ChainerCV's
``chainercv.utils.testing``).

Each ``assert_is_*`` function raises :class:`AssertionError` with a message naming what
broke the convention. Examples, annotations and ``predict`` results are NumPy arrays (the
datasets and models of :mod:`portagrad.vision` return NumPy). Where a check draws random
examples or images it uses NumPy's global generator, so ``numpy.random.seed`` repeats it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import nn
from ..._errors import describe
from ...tape import Variable
from ...xp import is_array

__all__ = [
    "ConstantStubLink", "assert_is_bbox", "assert_is_bbox_dataset", "assert_is_detection_link",
    "assert_is_image", "assert_is_instance_segmentation_dataset",
    "assert_is_instance_segmentation_link", "assert_is_label_dataset", "assert_is_point",
    "assert_is_point_dataset", "assert_is_semantic_segmentation_dataset",
    "assert_is_semantic_segmentation_link",
]

# The images the link checks predict on: two sizes, so per-image results must keep apart.
_LINK_IMAGE_SIZES = ((480, 640), (480, 320))


def _got(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"a numpy.ndarray of shape {x.shape} and dtype {x.dtype}"
    return describe(x)


def _ndarray(x: Any, name: str) -> None:
    assert isinstance(x, np.ndarray), f"{name} must be a numpy.ndarray, got {_got(x)}"


def _dtype(x: np.ndarray, dtype: Any, name: str) -> None:
    assert x.dtype == dtype, \
        f"{name} must have dtype {np.dtype(dtype).name}, got {x.dtype.name}"


def _labels_in(label: np.ndarray, low: int, n: int, name: str, what: str) -> None:
    if label.size:
        lo, hi = int(label.min()), int(label.max())
        assert lo >= low and hi < n, \
            f"{name} values must be in [{low}, {n - 1}] ({what} = {n}), got {lo} to {hi}"


def _check_1d(x: Any, name: str, dtype: Any, length: int, of: str) -> None:
    _ndarray(x, name)
    _dtype(x, dtype, name)
    assert x.ndim == 1, f"{name} must have shape (R,), got {x.shape}"
    assert len(x) == length, \
        f"{name} must have one entry per {of} ({length}), got {len(x)}"


def assert_is_image(img: Any, color: bool = True, check_range: bool = True) -> None:
    """Check that ``img`` is a ``(C, H, W)`` NumPy image.

    Parameters
    ----------
    img
        The image.
    color
        Expect 3 channels when True, 1 when False.
    check_range
        Also check that the values lie in ``[0, 255]``.

    Raises
    ------
    AssertionError
        When ``img`` breaks one of these.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_image
    >>> assert_is_image(np.zeros((3, 4, 5), np.float32))
    >>> assert_is_image(np.zeros((3, 4, 5)), color=False)
    Traceback (most recent call last):
    ...
    AssertionError: img must have 1 channel (color=False), got 3
    """
    _ndarray(img, "img")
    assert img.ndim == 3, f"img must have 3 dimensions (C, H, W), got shape {img.shape}"
    n = 3 if color else 1
    assert img.shape[0] == n, \
        f"img must have {n} channel{'s' if n > 1 else ''} (color={color}), got {img.shape[0]}"
    if check_range and img.size:
        lo, hi = img.min(), img.max()
        assert lo >= 0 and hi <= 255, f"img values must be in [0, 255], got {lo} to {hi}"


def assert_is_bbox(bbox: Any, size: Sequence[int] | None = None) -> None:
    """Check that ``bbox`` holds ``(R, 4)`` float32 boxes ``(y_min, x_min, y_max, x_max)``
    with ``y_min < y_max`` and ``x_min < x_max``.

    Parameters
    ----------
    bbox
        The boxes.
    size
        ``(H, W)`` of the image; when given, every box must lie inside ``[0, H] x [0, W]``.

    Raises
    ------
    AssertionError
        When ``bbox`` breaks one of these.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_bbox
    >>> assert_is_bbox(np.array([[0, 0, 2, 3]], np.float32), size=(4, 4))
    >>> assert_is_bbox(np.array([[0, 0, 2, 5]], np.float32), size=(4, 4))
    Traceback (most recent call last):
    ...
    AssertionError: bbox 0 [0.0, 0.0, 2.0, 5.0] leaves the image of size (4, 4)
    """
    _ndarray(bbox, "bbox")
    _dtype(bbox, np.float32, "bbox")
    assert bbox.ndim == 2 and bbox.shape[1] == 4, \
        f"bbox must have shape (R, 4), got {bbox.shape}"
    for axis, (lo, hi) in (("y", ("top", "bottom")), ("x", ("left", "right"))):
        k = 0 if axis == "y" else 1
        bad = np.flatnonzero(~(bbox[:, k] < bbox[:, k + 2]))
        assert not bad.size, \
            f"bbox {bad[0]} {bbox[bad[0]].tolist()}: its {lo} ({axis}_min) must be less " \
            f"than its {hi} ({axis}_max)"
    if size is not None:
        H, W = (int(s) for s in size)
        inside = (bbox[:, :2] >= 0).all(axis=1) & (bbox[:, 2] <= H) & (bbox[:, 3] <= W)
        bad = np.flatnonzero(~inside)
        assert not bad.size, \
            f"bbox {bad[0]} {bbox[bad[0]].tolist()} leaves the image of size {(H, W)}"


def assert_is_point(point: Any, visible: Any = None, size: Sequence[int] | None = None,
                    n_point: int | None = None) -> None:
    """Check per-object key points: each ``point[i]`` a ``(P, 2)`` float32 array of
    ``(y, x)``, with an optional ``(P,)`` bool ``visible[i]``.

    Parameters
    ----------
    point
        A sequence (or an ``(R, P, 2)`` array) of the objects' points.
    visible
        Their visibility; None counts every point as visible.
    size
        ``(H, W)`` of the image; when given, the visible points must lie in
        ``[0, H] x [0, W]``.
    n_point
        When given, the number of points every object must have.

    Raises
    ------
    AssertionError
        When ``point`` or ``visible`` breaks one of these.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_point
    >>> pts = np.array([[[1, 2], [9, 9]]], np.float32)
    >>> assert_is_point(pts, visible=np.array([[True, False]]), size=(4, 4))
    >>> assert_is_point(pts, size=(4, 4))
    Traceback (most recent call last):
    ...
    AssertionError: point 0: its visible points must lie in the image of size (4, 4), got [9.0, 9.0]
    """
    if visible is not None:
        assert len(point) == len(visible), \
            f"point and visible must have one entry per object, got {len(point)} and " \
            f"{len(visible)}"
    for i, pnt in enumerate(point):
        _ndarray(pnt, f"point {i}")
        _dtype(pnt, np.float32, f"point {i}")
        assert pnt.ndim == 2 and pnt.shape[1] == 2, \
            f"point {i} must have shape (P, 2), got {pnt.shape}"
        if n_point is not None:
            assert pnt.shape[0] == n_point, \
                f"point {i} must have n_point = {n_point} points, got {pnt.shape[0]}"
        shown = pnt
        if visible is not None:
            vis = visible[i]
            _ndarray(vis, f"visible {i}")
            _dtype(vis, np.bool_, f"visible {i}")
            assert vis.ndim == 1 and vis.shape[0] == pnt.shape[0], \
                f"visible {i} must have shape ({pnt.shape[0]},) as its points, got {vis.shape}"
            shown = pnt[vis]
        if size is not None:
            H, W = (int(s) for s in size)
            inside = (shown >= 0).all(axis=1) & (shown[:, 0] <= H) & (shown[:, 1] <= W)
            bad = np.flatnonzero(~inside)
            assert not bad.size, \
                f"point {i}: its visible points must lie in the image of size {(H, W)}, " \
                f"got {shown[bad[0]].tolist()}"


# ------------------------------------------------------------------------------ datasets
def _examples(dataset: Any, n_example: int | None) -> Any:
    assert len(dataset) > 0, "the dataset must not be empty"
    if n_example:
        for _ in range(n_example):
            i = int(np.random.randint(0, len(dataset)))
            yield i, dataset[i]
    else:
        for i in range(len(dataset)):
            yield i, dataset[i]


def _unpack(example: Any, i: int, names: tuple[str, ...]) -> tuple:
    n = len(names)
    assert len(example) >= n, \
        f"example {i} must have at least {n} elements ({', '.join(names)}), got {len(example)}"
    return tuple(example[:n])


def _check_labels(label: Any, n: int, n_fg_class: int, name: str, of: str) -> None:
    _check_1d(label, name, np.int32, n, of)
    _labels_in(label, 0, n_fg_class, name, "n_fg_class")


def assert_is_bbox_dataset(dataset: Any, n_fg_class: int, n_example: int | None = None
                           ) -> None:
    """Check that every example (or ``n_example`` random ones) starts with ``img``,
    ``bbox``, ``label``: a color image, boxes inside it and one int32 label per box in
    ``[0, n_fg_class - 1]``.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    n_fg_class
        Number of foreground classes.
    n_example
        Check this many random examples (NumPy's global generator) instead of all.

    Raises
    ------
    AssertionError
        When an example breaks the convention.

    Examples
    --------
    >>> from portagrad.vision.datasets import SyntheticShapesDataset
    >>> from portagrad.vision.utils import assert_is_bbox_dataset
    >>> assert_is_bbox_dataset(SyntheticShapesDataset(4, size=32, seed=0), 3)
    >>> assert_is_bbox_dataset(SyntheticShapesDataset(4, size=32, seed=0), 1)
    Traceback (most recent call last):
    ...
    AssertionError: example 0: label values must be in [0, 0] (n_fg_class = 1), got 2 to 2
    """
    for i, example in _examples(dataset, n_example):
        img, bbox, label = _unpack(example, i, ("img", "bbox", "label"))
        try:
            assert_is_image(img, color=True)
            assert_is_bbox(bbox, size=img.shape[1:])
            _check_labels(label, len(bbox), n_fg_class, "label", "box")
        except AssertionError as e:
            raise AssertionError(f"example {i}: {e}") from None


def assert_is_instance_segmentation_dataset(dataset: Any, n_fg_class: int,
                                            n_example: int | None = None) -> None:
    """Check that every example (or ``n_example`` random ones) starts with ``img``,
    ``mask``, ``label``: a color image, ``(R, H, W)`` bool masks of its size and ``(R,)``
    int32 labels in ``[0, n_fg_class - 1]``.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    n_fg_class
        Number of foreground classes.
    n_example
        Check this many random examples (NumPy's global generator) instead of all.

    Raises
    ------
    AssertionError
        When an example breaks the convention.

    Examples
    --------
    >>> from portagrad.vision.datasets import SyntheticShapesDataset
    >>> from portagrad.vision.utils import assert_is_instance_segmentation_dataset
    >>> ds = SyntheticShapesDataset(4, size=32, task="instance", seed=0)
    >>> assert_is_instance_segmentation_dataset(ds, 3, n_example=2)
    """
    for i, example in _examples(dataset, n_example):
        img, mask, label = _unpack(example, i, ("img", "mask", "label"))
        try:
            assert_is_image(img, color=True)
            _ndarray(mask, "mask")
            _dtype(mask, np.bool_, "mask")
            H, W = img.shape[1:]
            assert mask.ndim == 3 and mask.shape[1:] == (H, W), \
                f"mask must have shape (R, {H}, {W}) as the image, got {mask.shape}"
            _check_labels(label, mask.shape[0], n_fg_class, "label", "mask")
        except AssertionError as e:
            raise AssertionError(f"example {i}: {e}") from None


def assert_is_semantic_segmentation_dataset(dataset: Any, n_class: int,
                                            n_example: int | None = None) -> None:
    """Check that every example (or ``n_example`` random ones) starts with ``img``,
    ``label``: a color image and an ``(H, W)`` int32 label map of its size with values in
    ``[-1, n_class - 1]`` (``-1`` is ignored).

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    n_class
        Number of classes, background included.
    n_example
        Check this many random examples (NumPy's global generator) instead of all.

    Raises
    ------
    AssertionError
        When an example breaks the convention.

    Examples
    --------
    >>> from portagrad.vision.datasets import SyntheticShapesDataset
    >>> from portagrad.vision.utils import assert_is_semantic_segmentation_dataset
    >>> ds = SyntheticShapesDataset(4, size=32, task="semantic", seed=0)
    >>> assert_is_semantic_segmentation_dataset(ds, 4)
    """
    for i, example in _examples(dataset, n_example):
        img, label = _unpack(example, i, ("img", "label"))
        try:
            assert_is_image(img, color=True)
            _ndarray(label, "label")
            _dtype(label, np.int32, "label")
            assert label.shape == img.shape[1:], \
                f"label must have shape (H, W) = {img.shape[1:]} as the image, got {label.shape}"
            _labels_in(label, -1, n_class, "label", "n_class")
        except AssertionError as e:
            raise AssertionError(f"example {i}: {e}") from None


def assert_is_label_dataset(dataset: Any, n_class: int, n_example: int | None = None,
                            color: bool = True) -> None:
    """Check that every example (or ``n_example`` random ones) starts with ``img``,
    ``label``: an image and a ``numpy.int32`` scalar in ``[0, n_class - 1]``.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    n_class
        Number of classes.
    n_example
        Check this many random examples (NumPy's global generator) instead of all.
    color
        Expect 3-channel images when True, 1-channel when False.

    Raises
    ------
    AssertionError
        When an example breaks the convention.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_label_dataset
    >>> data = [(np.zeros((3, 4, 4), np.float32), np.int32(1))]
    >>> assert_is_label_dataset(data, 2)
    >>> assert_is_label_dataset([(data[0][0], 1)], 2)
    Traceback (most recent call last):
    ...
    AssertionError: example 0: label must be a numpy.int32 scalar, got int 1
    """
    for i, example in _examples(dataset, n_example):
        img, label = _unpack(example, i, ("img", "label"))
        try:
            assert_is_image(img, color=color)
            assert isinstance(label, np.int32), \
                f"label must be a numpy.int32 scalar, got {_got(label)}"
            assert 0 <= label < n_class, \
                f"label must be in [0, n_class - 1] = [0, {n_class - 1}], got {label}"
        except AssertionError as e:
            raise AssertionError(f"example {i}: {e}") from None


def assert_is_point_dataset(dataset: Any, n_point: int | None = None,
                            n_example: int | None = None, no_visible: bool = False) -> None:
    """Check that every example (or ``n_example`` random ones) starts with ``img``,
    ``point`` and, when present, ``visible``, as :func:`assert_is_point` wants them.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    n_point
        When given, the number of points every object must have.
    n_example
        Check this many random examples (NumPy's global generator) instead of all.
    no_visible
        The third element, if any, is not ``visible``: check ``(img, point)`` only.

    Raises
    ------
    AssertionError
        When an example breaks the convention.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_point_dataset
    >>> img = np.zeros((3, 8, 8), np.float32)
    >>> pts = np.array([[[1, 2], [3, 4]]], np.float32)
    >>> assert_is_point_dataset([(img, pts, np.array([[True, True]]))], n_point=2)
    """
    for i, example in _examples(dataset, n_example):
        img, point = _unpack(example, i, ("img", "point"))
        visible = None if len(example) == 2 or no_visible else example[2]
        try:
            assert_is_image(img, color=True)
            assert_is_point(point, visible, img.shape[1:], n_point)
        except AssertionError as e:
            raise AssertionError(f"example {i}: {e}") from None


# --------------------------------------------------------------------------------- links
def _link_images() -> list[np.ndarray]:
    return [np.random.randint(0, 256, size=(3, h, w)).astype(np.float32)
            for h, w in _LINK_IMAGE_SIZES]


def _split_result(result: Any, names: tuple[str, str, str], n: int) -> tuple:
    seq = isinstance(result, (tuple, list))
    got = f"a {type(result).__name__} of length {len(result)}" if seq else describe(result)
    assert seq and len(result) == 3, \
        f"predict must return three lists ({', '.join(names)}), got {got}"
    for name, value in zip(names, result):
        assert len(value) == n, f"predict must return one of {name} per image ({n}), got " \
                                f"{len(value)}"
    return tuple(result)


def _check_scores(score: Any, n: int, of: str) -> None:
    _check_1d(score, "score", np.float32, n, of)


def assert_is_detection_link(link: Any, n_fg_class: int) -> None:
    """Check ``link.predict`` on two random images (480 x 640 and 480 x 320): it returns
    ``(bboxes, labels, scores)``, one entry per image, each ``(R, 4)`` float32 boxes,
    ``(R,)`` int32 labels in ``[0, n_fg_class - 1]`` and ``(R,)`` float32 scores.

    Parameters
    ----------
    link
        A model with ``predict(imgs)``.
    n_fg_class
        Number of foreground classes.

    Raises
    ------
    AssertionError
        When the results break the convention.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_detection_link
    >>> class OneBox:
    ...     def predict(self, imgs):
    ...         return ([np.array([[0, 0, 5, 5]], np.float32)] * len(imgs),
    ...                 [np.array([1], np.int32)] * len(imgs),
    ...                 [np.array([0.9], np.float32)] * len(imgs))
    >>> assert_is_detection_link(OneBox(), 2)
    >>> assert_is_detection_link(OneBox(), 1)
    Traceback (most recent call last):
    ...
    AssertionError: image 0: label values must be in [0, 0] (n_fg_class = 1), got 1 to 1
    """
    imgs = _link_images()
    bboxes, labels, scores = _split_result(link.predict(imgs),
                                           ("bboxes", "labels", "scores"), len(imgs))
    for i, (bbox, label, score) in enumerate(zip(bboxes, labels, scores)):
        try:
            assert_is_bbox(bbox)
            _check_labels(label, len(bbox), n_fg_class, "label", "box")
            _check_scores(score, len(bbox), "box")
        except AssertionError as e:
            raise AssertionError(f"image {i}: {e}") from None


def assert_is_instance_segmentation_link(link: Any, n_fg_class: int) -> None:
    """Check ``link.predict`` on two random images (480 x 640 and 480 x 320): it returns
    ``(masks, labels, scores)``, one entry per image, each ``(R, H, W)`` bool masks of the
    image's size, ``(R,)`` int32 labels in ``[0, n_fg_class - 1]`` and ``(R,)`` float32
    scores.

    Parameters
    ----------
    link
        A model with ``predict(imgs)``.
    n_fg_class
        Number of foreground classes.

    Raises
    ------
    AssertionError
        When the results break the convention.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_instance_segmentation_link
    >>> class Nothing:
    ...     def predict(self, imgs):
    ...         return ([np.zeros((0,) + i.shape[1:], bool) for i in imgs],
    ...                 [np.zeros(0, np.int32)] * len(imgs), [np.zeros(0, np.float32)] * len(imgs))
    >>> assert_is_instance_segmentation_link(Nothing(), 3)
    """
    imgs = _link_images()
    masks, labels, scores = _split_result(link.predict(imgs),
                                          ("masks", "labels", "scores"), len(imgs))
    for i, (img, mask, label, score) in enumerate(zip(imgs, masks, labels, scores)):
        try:
            _ndarray(mask, "mask")
            _dtype(mask, np.bool_, "mask")
            H, W = img.shape[1:]
            assert mask.ndim == 3 and mask.shape[1:] == (H, W), \
                f"mask must have shape (R, {H}, {W}) as the image, got {mask.shape}"
            _check_labels(label, len(mask), n_fg_class, "label", "mask")
            _check_scores(score, len(mask), "mask")
        except AssertionError as e:
            raise AssertionError(f"image {i}: {e}") from None


def assert_is_semantic_segmentation_link(link: Any, n_class: int) -> None:
    """Check ``link.predict`` on two random images (480 x 640 and 480 x 320): it returns one
    ``(H, W)`` int32 label map per image, of the image's size, with values in
    ``[0, n_class - 1]``.

    Parameters
    ----------
    link
        A model with ``predict(imgs)``.
    n_class
        Number of classes, background included.

    Raises
    ------
    AssertionError
        When the results break the convention.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import assert_is_semantic_segmentation_link
    >>> class AllBackground:
    ...     def predict(self, imgs):
    ...         return [np.zeros(i.shape[1:], np.int32) for i in imgs]
    >>> assert_is_semantic_segmentation_link(AllBackground(), 2)
    """
    imgs = _link_images()
    labels = link.predict(imgs)
    assert len(labels) == len(imgs), \
        f"predict must return one label map per image ({len(imgs)}), got {len(labels)}"
    for i, (img, label) in enumerate(zip(imgs, labels)):
        try:
            _ndarray(label, "label")
            _dtype(label, np.int32, "label")
            assert label.shape == img.shape[1:], \
                f"label must have shape (H, W) = {img.shape[1:]} as the image, got {label.shape}"
            _labels_in(label, 0, n_class, "label", "n_class")
        except AssertionError as e:
            raise AssertionError(f"image {i}: {e}") from None


class ConstantStubLink(nn.Module):
    """A module whose ``forward`` ignores its arguments and returns fixed values: a
    stand-in for a network when testing the code around it.

    The outputs are kept as non-persistent buffers, so they move with the module
    (``to``, ``to_device``) and stay out of its ``state_dict``.

    Parameters
    ----------
    outputs
        One array, then ``forward`` returns one :class:`~portagrad.Variable`; or a tuple of
        arrays, then it returns a tuple of Variables.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import ConstantStubLink
    >>> stub = ConstantStubLink((np.zeros(2, np.float32), np.ones((1, 3), np.float32)))
    >>> a, b = stub("anything", 3)
    >>> a.array.tolist(), b.shape
    ([0.0, 0.0], (1, 3))
    """

    def __init__(self, outputs: Any) -> None:
        super().__init__()
        self._tuple = isinstance(outputs, tuple)
        values = outputs if self._tuple else (outputs,)
        for k, value in enumerate(values):
            if not is_array(value):
                raise ValueError(f"ConstantStubLink(outputs): expected an array or a tuple of "
                                 f"arrays, got {describe(value)}"
                                 + (f" at position {k}" if self._tuple else ""))
            self.register_buffer(f"output{k}", value, persistent=False)
        self._n = len(values)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs as Variables, whatever the arguments."""
        out = tuple(Variable(getattr(self, f"output{k}")) for k in range(self._n))
        return out if self._tuple else out[0]
