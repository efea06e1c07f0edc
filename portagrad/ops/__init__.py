"""portagrad.ops: the differentiable Array API namespace.

Every function takes Variables or arrays of any Array API library and returns Variables;
``array_api_compat.array_namespace(variable)`` is this module, so code written against
the standard records a graph when it is given Variables.
"""

from . import _fastops as _fastops  # Variable's operators, with short paths for + - * /
from ._creation import (
    arange as arange,
)
from ._creation import (
    asarray as asarray,
)
from ._creation import (
    empty as empty,
)
from ._creation import (
    empty_like as empty_like,
)
from ._creation import (
    eye as eye,
)
from ._creation import (
    full as full,
)
from ._creation import (
    full_like as full_like,
)
from ._creation import (
    linspace as linspace,
)
from ._creation import (
    ones as ones,
)
from ._creation import (
    ones_like as ones_like,
)
from ._creation import (
    to_device as to_device,
)
from ._creation import (
    zeros as zeros,
)
from ._creation import (
    zeros_like as zeros_like,
)
from ._elementwise import (
    abs as abs,
)
from ._elementwise import (
    acos as acos,
)
from ._elementwise import (
    acosh as acosh,
)
from ._elementwise import (
    add as add,
)
from ._elementwise import (
    asin as asin,
)
from ._elementwise import (
    asinh as asinh,
)
from ._elementwise import (
    atan as atan,
)
from ._elementwise import (
    atan2 as atan2,
)
from ._elementwise import (
    atanh as atanh,
)
from ._elementwise import (
    clip as clip,
)
from ._elementwise import (
    cos as cos,
)
from ._elementwise import (
    cosh as cosh,
)
from ._elementwise import (
    divide as divide,
)
from ._elementwise import (
    exp as exp,
)
from ._elementwise import (
    expm1 as expm1,
)
from ._elementwise import (
    hypot as hypot,
)
from ._elementwise import (
    log as log,
)
from ._elementwise import (
    log1p as log1p,
)
from ._elementwise import (
    log2 as log2,
)
from ._elementwise import (
    log10 as log10,
)
from ._elementwise import (
    logaddexp as logaddexp,
)
from ._elementwise import (
    maximum as maximum,
)
from ._elementwise import (
    minimum as minimum,
)
from ._elementwise import (
    multiply as multiply,
)
from ._elementwise import (
    negative as negative,
)
from ._elementwise import (
    positive as positive,
)
from ._elementwise import (
    pow as pow,
)
from ._elementwise import (
    reciprocal as reciprocal,
)
from ._elementwise import (
    sin as sin,
)
from ._elementwise import (
    sinh as sinh,
)
from ._elementwise import (
    sqrt as sqrt,
)
from ._elementwise import (
    square as square,
)
from ._elementwise import (
    subtract as subtract,
)
from ._elementwise import (
    tan as tan,
)
from ._elementwise import (
    tanh as tanh,
)
from ._elementwise import (
    where as where,
)
from ._indexing import getitem as getitem
from ._indexing import take as take
from ._indexing import take_along_axis as take_along_axis
from ._linalg import matmul as matmul
from ._linalg import tensordot as tensordot
from ._linalg import vecdot as vecdot
from ._nondiff import (
    argmax as argmax,
)
from ._nondiff import (
    argmin as argmin,
)
from ._nondiff import (
    argsort as argsort,
)
from ._nondiff import (
    ceil as ceil,
)
from ._nondiff import (
    equal as equal,
)
from ._nondiff import (
    floor as floor,
)
from ._nondiff import (
    greater as greater,
)
from ._nondiff import (
    greater_equal as greater_equal,
)
from ._nondiff import (
    isfinite as isfinite,
)
from ._nondiff import (
    isinf as isinf,
)
from ._nondiff import (
    isnan as isnan,
)
from ._nondiff import (
    less as less,
)
from ._nondiff import (
    less_equal as less_equal,
)
from ._nondiff import (
    logical_and as logical_and,
)
from ._nondiff import (
    logical_not as logical_not,
)
from ._nondiff import (
    logical_or as logical_or,
)
from ._nondiff import (
    logical_xor as logical_xor,
)
from ._nondiff import (
    not_equal as not_equal,
)
from ._nondiff import (
    round as round,
)
from ._nondiff import (
    sign as sign,
)
from ._nondiff import (
    sort as sort,
)
from ._nondiff import (
    trunc as trunc,
)
from ._reduction import (
    cumulative_sum as cumulative_sum,
)
from ._reduction import (
    logsumexp as logsumexp,
)
from ._reduction import (
    max as max,
)
from ._reduction import (
    mean as mean,
)
from ._reduction import (
    min as min,
)
from ._reduction import (
    prod as prod,
)
from ._reduction import (
    std as std,
)
from ._reduction import (
    sum as sum,
)
from ._reduction import (
    var as var,
)
from ._shape import (
    astype as astype,
)
from ._shape import (
    broadcast_arrays as broadcast_arrays,
)
from ._shape import (
    broadcast_shapes as broadcast_shapes,
)
from ._shape import (
    broadcast_to as broadcast_to,
)
from ._shape import (
    concat as concat,
)
from ._shape import (
    expand_dims as expand_dims,
)
from ._shape import (
    flip as flip,
)
from ._shape import (
    matrix_transpose as matrix_transpose,
)
from ._shape import (
    moveaxis as moveaxis,
)
from ._shape import (
    permute_dims as permute_dims,
)
from ._shape import (
    repeat as repeat,
)
from ._shape import (
    reshape as reshape,
)
from ._shape import (
    roll as roll,
)
from ._shape import (
    squeeze as squeeze,
)
from ._shape import (
    stack as stack,
)
from ._shape import (
    sum_to as sum_to,
)
from ._shape import (
    tile as tile,
)
from ._shape import (
    unstack as unstack,
)

__array_api_version__ = "2024.12"
from ._api_chainer import *  # noqa: E402,F403
from ._api_nn import *  # noqa: E402,F403 - the list is __all__ of that module
from ._api_std import *  # noqa: E402,F403
from ._complex import _install_convention  # noqa: E402

# Primitives of the families imported after _complex (linear, conv) follow the complex
# convention too.
_install_convention()
del _install_convention
