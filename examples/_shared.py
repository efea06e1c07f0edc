"""What the research examples share: choosing the array library and device, and PNG output.

The models in the examples never name a library: they take arrays of the one chosen here
(``--backend``/``--device``) and portagrad follows their namespace and device. Data are
made on the host with NumPy and moved once with :func:`asarray`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from portagrad.xp import from_numpy, to_numpy

BACKENDS = ("numpy", "array_api_strict", "torch")


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, default="numpy",
                        help="array library (default numpy)")
    parser.add_argument("--device", default="cpu",
                        help="cpu; cuda:N (CuPy with --backend numpy, or torch); for "
                             "array_api_strict a device name such as device1 (default cpu)")


def backend(name: str, device: str = "cpu") -> tuple[Any, Any]:
    """``(xp, device)`` for a ``--backend`` name and a ``--device`` string."""
    if name == "numpy":
        if device.startswith("cuda"):
            try:
                import array_api_compat.cupy as xp
                import cupy
            except ImportError:
                raise SystemExit("--device cuda needs CuPy (pip install 'portagrad[gpu]')"
                                 ) from None
            idx = int(device.split(":", 1)[1]) if ":" in device else 0
            return xp, cupy.cuda.Device(idx)
        if device != "cpu":
            raise SystemExit(f"--device for numpy: expected cpu or cuda:N, got {device}")
        import array_api_compat.numpy as xp

        return xp, "cpu"
    if name == "torch":
        try:
            import array_api_compat.torch as xp
            import torch
        except ImportError:
            raise SystemExit("--backend torch needs torch (pip install 'portagrad[torch]')"
                             ) from None
        return xp, torch.device(device)
    if name == "array_api_strict":
        import array_api_strict as xp

        return xp, xp.Device("CPU_DEVICE" if device == "cpu" else device)
    raise SystemExit(f"--backend: expected one of {BACKENDS}, got {name}")


def asarray(host: Any, xp: Any, device: Any, dtype: Any = None) -> Any:
    """A host (NumPy) array as an array of ``xp`` on ``device``."""
    a = np.asarray(host)
    if dtype is not None:
        a = a.astype(dtype)
    return from_numpy(a, xp=xp, device=device)


def host(a: Any) -> np.ndarray:
    """A NumPy copy of an array or Variable of any library and device."""
    return to_numpy(getattr(a, "array", a))


def save_png(path: str | Path, image: np.ndarray) -> Path:
    """Write an ``(H, W)`` or ``(H, W, 3)`` image with values in [0, 1] as a PNG (Pillow,
    which matplotlib also depends on)."""
    try:
        from PIL import Image
    except ImportError:
        raise SystemExit("writing a PNG needs Pillow: pip install 'portagrad[examples]'"
                         ) from None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray((np.clip(image, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)).save(path)
    return path


def tile(images: np.ndarray, cols: int, pad: int = 1, scale: int = 4) -> np.ndarray:
    """``(N, h, w)`` images in a grid of ``cols`` columns, each pixel ``scale`` wide."""
    n, h, w = images.shape
    rows = -(-n // cols)
    grid = np.ones((rows * (h + pad) + pad, cols * (w + pad) + pad), dtype=np.float32)
    for i in range(n):
        r, c = divmod(i, cols)
        y, x = pad + r * (h + pad), pad + c * (w + pad)
        grid[y:y + h, x:x + w] = images[i]
    return np.kron(grid, np.ones((scale, scale), dtype=np.float32))


class Timer:
    """Seconds since creation (``float(timer)``)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def __float__(self) -> float:
        return time.perf_counter() - self.start
