"""Colour augmentation."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Draws
from ._common import check_image, weight_array

__all__ = ["pca_lighting"]

# ChainerCV's defaults, kept as it ships them so seeded results agree: fb.resnet.torch's
# eigenvalues of ImageNet pixels in [0, 1] units (not rescaled to [0, 255], so the shift is
# small), and its eigenvector matrix as ChainerCV writes it (the eigenvectors as rows),
# used as ``vec @ (alpha * lam)``.
_EIGEN_VALUE = np.array([0.2175, 0.0188, 0.0045])
_EIGEN_VECTOR = np.array([[-0.5675, -0.5808, -0.5836],
                          [0.7192, -0.0045, -0.6948],
                          [0.4009, -0.8140, 0.4203]])


def pca_lighting(img: Any, sigma: float, eigen_value: Any = None, eigen_vector: Any = None,
                 return_param: bool = False, rng: np.random.Generator | None = None) -> Any:
    """AlexNet's lighting noise: add ``V @ (alpha * lambda)`` to every pixel, with
    ``alpha ~ N(0, sigma^2)`` per component (``numpy.random.normal(0, sigma, 3)`` when
    ``rng`` is None, as ChainerCV draws it).

    Parameters
    ----------
    img
        ``(3, H, W)`` floating RGB image in ``[0, 255]``.
    sigma
        Standard deviation of ``alpha`` (AlexNet used 0.1); 0 returns ``img`` unchanged.
    eigen_value, eigen_vector
        PCA of the dataset's pixels (columns of ``eigen_vector`` are the components).
        Default: ChainerCV's, ImageNet's eigenvalues for ``[0, 1]`` pixels with the
        eigenvectors as the rows of ``eigen_vector`` (ChainerCV's matrix); pass
        ``255 * lambda`` and the transposed matrix for the original AlexNet noise on
        ``[0, 255]`` images.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import pca_lighting
    >>> out, p = pca_lighting(np.zeros((3, 2, 2)), 0.1, return_param=True,
    ...                       rng=np.random.default_rng(0))
    >>> bool(np.allclose(out[:, 0, 0], p["shift"]))
    True
    """
    xp = check_image("pca_lighting", img)
    if img.shape[0] != 3:
        raise ValueError(f"pca_lighting(img): expected 3 channels (RGB), got {img.shape[0]}")
    if not xp.isdtype(img.dtype, "real floating"):
        raise TypeError(f"pca_lighting(img): expected a floating image, got {img.dtype}")
    lam = _EIGEN_VALUE if eigen_value is None else np.asarray(eigen_value, dtype=np.float64)
    vec = _EIGEN_VECTOR if eigen_vector is None else np.asarray(eigen_vector, dtype=np.float64)
    alpha = Draws(rng).np_normal(0.0, sigma, size=3) if sigma > 0 else np.zeros(3)
    shift = vec @ (alpha * lam)
    out = img + xp.reshape(weight_array(xp, img, shift), (3, 1, 1)) if sigma > 0 else img
    return (out, {"alpha": alpha, "shift": shift}) if return_param else out
