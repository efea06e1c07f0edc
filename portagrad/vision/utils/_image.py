"""Image files (Pillow) <-> CHW arrays, the layout every transform and model uses."""

from __future__ import annotations

import os
from typing import Any, BinaryIO

import numpy as np

from ..._errors import ShapeError, describe
from .._common import host

__all__ = ["read_image", "write_image", "read_label"]


_ALPHA = (None, "ignore", "blend_with_white", "blend_with_black")


def _open(op: str, file: Any) -> Any:
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is a declared extra
        raise ImportError(f"{op}: needs Pillow; install portagrad[vision]") from e
    if not hasattr(file, "read") and not os.path.exists(file):
        raise FileNotFoundError(f"{op}(file): no such file {os.fspath(file)!r}")
    return Image.open(file)


def _drop_alpha(rgba: np.ndarray, alpha: str | None) -> np.ndarray:
    """An ``(H, W, 3)`` image from ``(H, W, 4)`` pixels, as ``alpha`` says."""
    if alpha is None:
        raise ValueError("read_image(alpha): the image is RGBA; pass alpha='ignore', "
                         "'blend_with_white' or 'blend_with_black' to say what to do with "
                         "its alpha channel")
    color = rgba[:, :, :3]
    if alpha == "ignore":
        return color
    weight = rgba[:, :, 3:] / 255
    if alpha == "blend_with_white":
        return color * weight + 255 * np.ones_like(color) * (1 - weight)
    return color * weight


def read_image(file: str | os.PathLike[str] | BinaryIO, dtype: Any = np.float32,
               color: bool = True, alpha: str | None = None) -> np.ndarray:
    """Read an image file into a ``(C, H, W)`` NumPy array with values in ``[0, 255]``.

    Parameters
    ----------
    file
        A path, or a file object opened for reading bytes; any format Pillow reads (PNG,
        JPEG, BMP, ...).
    dtype
        Dtype of the result.
    color
        ``True``: RGB, ``C = 3``. ``False``: luminance, ``C = 1``.
    alpha
        What to do with an RGBA image's alpha channel (read with ``color=True``): None
        raises a ValueError; ``"ignore"`` drops it; ``"blend_with_white"`` /
        ``"blend_with_black"`` blend the colours, weighted by it, over white / black.
        Images without alpha ignore the option (ChainerCV's choices).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from portagrad.vision.utils import read_image, write_image
    >>> img = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    >>> path = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> write_image(img, path)
    >>> back = read_image(path)
    >>> back.shape, bool((back == img).all())
    ((3, 2, 4), True)
    """
    if alpha not in _ALPHA:
        raise ValueError(f"read_image(alpha): expected one of {_ALPHA}, got {alpha!r}")
    with _open("read_image", file) as f:
        if color:
            rgba = f.mode == "RGBA"
            arr = np.array(f.convert("RGBA" if rgba else "RGB"), dtype=dtype)
            if rgba:
                arr = _drop_alpha(arr, alpha).astype(dtype, copy=False)
        else:
            arr = np.array(f.convert("L"), dtype=dtype)[:, :, None]
    return np.ascontiguousarray(arr.transpose(2, 0, 1))


def read_label(file: str | os.PathLike[str] | BinaryIO, dtype: Any = np.int32) -> np.ndarray:
    """Read a label image into an ``(H, W)`` array of its palette indices.

    The file is read as a palette image, as ChainerCV reads it: a palette PNG keeps its
    indices (how Pascal VOC stores class and instance labels), a grey one its values; a
    colour image is mapped onto Pillow's web palette, and 16- or 32-bit values above 255
    become 255.

    Parameters
    ----------
    file
        A path, or a file object opened for reading bytes.
    dtype
        Dtype of the result.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> from portagrad.vision.utils import read_label
    >>> path = os.path.join(tempfile.mkdtemp(), "l.png")
    >>> a = np.array([[0, 1], [255, 2]], dtype=np.uint8)
    >>> Image.fromarray(a).convert("P").save(path)
    >>> read_label(path)
    array([[  0,   1],
           [255,   2]], dtype=int32)
    """
    with _open("read_label", file) as f:
        return np.array(f.convert("P"), dtype=dtype)


def write_image(img: Any, file: str | os.PathLike[str] | BinaryIO,
                format: str | None = None) -> None:
    """Write a ``(C, H, W)`` image with ``C`` in {1, 3, 4} and values in ``[0, 255]``.

    Values are cast to uint8 as ChainerCV casts them: fractions are dropped (``0.9`` is
    written as 0); values outside ``[0, 255]`` are clipped to it first. Arrays of any
    library are copied to the host.

    Parameters
    ----------
    img
        The image.
    file
        A path (the format follows its extension unless ``format`` is given), or a file
        object opened for writing bytes (then ``format`` is needed).
    format
        Pillow's name of the format (``"png"``, ``"jpeg"``, ``"bmp"``, ...).
    """
    from PIL import Image

    arr = host(img)
    if arr.ndim != 3 or arr.shape[0] not in (1, 3, 4):
        raise ShapeError(f"write_image(img): expected a (C, H, W) image with C in (1, 3, 4), "
                         f"got {describe(arr)}")
    if hasattr(file, "write") and format is None:
        raise ValueError("write_image(format): a file object needs the format, e.g. 'png'")
    if arr.dtype != np.uint8:
        arr = (arr if arr.dtype == np.bool_ else np.clip(arr, 0, 255)).astype(np.uint8)
    hwc = arr.transpose(1, 2, 0)
    # uint8 (H, W) / (H, W, 3) / (H, W, 4) arrays map to modes L / RGB / RGBA.
    Image.fromarray(np.ascontiguousarray(hwc[:, :, 0] if arr.shape[0] == 1 else hwc)).save(
        file, format=format)
