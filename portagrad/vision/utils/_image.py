"""Image files (Pillow) <-> CHW arrays, the layout every transform and model uses."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..._errors import ShapeError, describe
from .._common import host

__all__ = ["read_image", "write_image", "read_label"]


def _open(op: str, path: str | os.PathLike[str]) -> Any:
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is a declared extra
        raise ImportError(f"{op}: needs Pillow; install portagrad[vision]") from e
    if not os.path.exists(path):
        raise FileNotFoundError(f"{op}(path): no such file {os.fspath(path)!r}")
    return Image.open(path)


def read_image(path: str | os.PathLike[str], dtype: Any = np.float32, color: bool = True,
               alpha: bool = False) -> np.ndarray:
    """Read an image file into a ``(C, H, W)`` NumPy array.

    Parameters
    ----------
    path
        Any format Pillow reads (PNG, JPEG, BMP, ...).
    dtype
        Dtype of the result; values stay in ``[0, 255]``.
    color
        ``True``: RGB, ``C = 3``. ``False``: luminance, ``C = 1``.
    alpha
        With ``color=True``, keep the alpha channel (``C = 4``, RGBA).

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
    with _open("read_image", path) as f:
        mode = ("RGBA" if alpha else "RGB") if color else "L"
        arr = np.asarray(f.convert(mode), dtype=dtype)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return np.ascontiguousarray(arr.transpose(2, 0, 1))


def read_label(path: str | os.PathLike[str], dtype: Any = np.int32) -> np.ndarray:
    """Read a label image (a palette or grey PNG) into an ``(H, W)`` array of its indices.

    The palette indices are kept as they are (no colour conversion), which is how Pascal
    VOC stores class and instance labels.

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
    with _open("read_label", path) as f:
        if f.mode not in ("P", "L", "I", "I;16"):
            f = f.convert("L")
        return np.asarray(f, dtype=dtype)


def write_image(img: Any, path: str | os.PathLike[str]) -> None:
    """Write a ``(C, H, W)`` image with ``C`` in {1, 3, 4} and values in ``[0, 255]``.

    Floating values are rounded to the nearest integer and clipped to ``[0, 255]``; the
    format follows the file extension. Arrays of any library are copied to the host.
    """
    from PIL import Image

    arr = host(img)
    if arr.ndim != 3 or arr.shape[0] not in (1, 3, 4):
        raise ShapeError(f"write_image(img): expected a (C, H, W) image with C in (1, 3, 4), "
                         f"got {describe(arr)}")
    if arr.dtype != np.uint8:
        arr = np.clip(np.rint(arr), 0, 255).astype(np.uint8)
    hwc = arr.transpose(1, 2, 0)
    # uint8 (H, W) / (H, W, 3) / (H, W, 4) arrays map to modes L / RGB / RGBA.
    Image.fromarray(np.ascontiguousarray(hwc[:, :, 0] if arr.shape[0] == 1 else hwc)).save(path)
