"""Classification from a folder with one sub-folder of images per label."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...data import Dataset
from ..utils import read_image
from ._common import require

__all__ = ["DirectoryParsingLabelDataset", "directory_parsing_label_names"]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".ppm", ".tif", ".tiff", ".webp")
_LAYOUT = """  {root}/
    <label name>/<image>.png|.jpg|...
    <another label name>/..."""


def directory_parsing_label_names(root: str | Path) -> list[str]:
    """The label names of :class:`DirectoryParsingLabelDataset`: sub-folder names, sorted.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from portagrad.vision.datasets import directory_parsing_label_names
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("dog", "cat"):
    ...     (root / name).mkdir()
    >>> directory_parsing_label_names(root)
    ['cat', 'dog']
    """
    root = require(Path(root), "DirectoryParsingLabelDataset", _LAYOUT.format(root=root))
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


class DirectoryParsingLabelDataset(Dataset):
    """Images in ``root/<label name>/``; example ``i`` is ``(img, label)``.

    Labels are positions in the sorted list of sub-folder names (``label_names``); images
    are found recursively and ordered by label, then path.

    Parameters
    ----------
    root
        The folder holding one sub-folder per label.
    color
        RGB ``(3, H, W)`` images, else grey ``(1, H, W)``.
    dtype
        Image dtype (values in ``[0, 255]``).
    """

    def __init__(self, root: str | Path, color: bool = True, dtype: type = np.float32) -> None:
        self.root = Path(root)
        self.label_names = directory_parsing_label_names(self.root)
        self.paths: list[Path] = []
        labels = []
        for k, name in enumerate(self.label_names):
            files = sorted(p for p in (self.root / name).rglob("*")
                           if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
            self.paths += files
            labels += [k] * len(files)
        if not self.paths:
            raise FileNotFoundError(
                f"DirectoryParsingLabelDataset(root): expected images under the label "
                f"folders of {self.root}, found none. Layout:\n{_LAYOUT.format(root=root)}")
        self.labels = np.asarray(labels, dtype=np.int32)
        self.color = color
        self.dtype = dtype

    def __len__(self) -> int:
        return len(self.paths)

    def get_example(self, i: int) -> tuple:
        return read_image(self.paths[i], dtype=self.dtype, color=self.color), self.labels[i]
