"""NumPy fast paths. Each is compared with its kernel's pure-standard default."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._scatter import index_add


@index_add.override("numpy")
def _index_add_numpy(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    shape = list(values.shape)
    shape[axis] = size
    out = np.zeros(shape, dtype=values.dtype)
    if axis == 0:
        np.add.at(out, indices, values)
    else:
        np.add.at(np.moveaxis(out, axis, 0), indices, np.moveaxis(values, axis, 0))
    return out
