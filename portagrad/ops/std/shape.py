"""The standard's manipulation functions in one place, for modules that build on them.

Each is defined in the module named by what it computes: :mod:`.reshaping` (reshape,
expand_dims, squeeze), :mod:`.joining` (concat, stack, unstack), :mod:`.broadcasting`
(broadcast_to, broadcast_arrays, broadcast_shapes, sum_to), :mod:`.permutation`
(permute_dims, matrix_transpose, moveaxis), :mod:`.rearrange` (flip, roll, repeat, tile)
and :mod:`.casting` (astype); axis arguments are checked by :mod:`._axes`.
"""

from ._axes import _axes_tuple as _axes_tuple
from ._axes import _norm_axis as _norm_axis
from .broadcasting import _broadcast_to as _broadcast_to
from .broadcasting import broadcast_arrays as broadcast_arrays
from .broadcasting import broadcast_shapes as broadcast_shapes
from .broadcasting import broadcast_to as broadcast_to
from .broadcasting import sum_to as sum_to
from .casting import astype as astype
from .joining import concat as concat
from .joining import stack as stack
from .joining import unstack as unstack
from .permutation import _permute_dims as _permute_dims
from .permutation import matrix_transpose as matrix_transpose
from .permutation import moveaxis as moveaxis
from .permutation import permute_dims as permute_dims
from .rearrange import flip as flip
from .rearrange import repeat as repeat
from .rearrange import roll as roll
from .rearrange import tile as tile
from .reshaping import _reshape as _reshape
from .reshaping import expand_dims as expand_dims
from .reshaping import reshape as reshape
from .reshaping import squeeze as squeeze

__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims",
           "flip", "matrix_transpose", "moveaxis", "permute_dims", "repeat", "reshape", "roll",
           "squeeze", "stack", "sum_to", "tile", "unstack"]
