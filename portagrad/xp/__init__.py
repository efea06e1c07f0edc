"""The only door to array libraries: namespaces, devices, dtypes, kernels, host moves.

Nothing outside this package imports NumPy, CuPy, torch or JAX for computation; the rest
of portagrad reads the namespace of its inputs from here. Every library's fast path is
listed in :mod:`portagrad.xp._fastpaths`.
"""

from . import _fastpaths as _fastpaths
from . import _malloc as _malloc
from ._default import (
    default_namespace as default_namespace,
)
from ._default import (
    infer_namespace as infer_namespace,
)
from ._default import (
    set_default_namespace as set_default_namespace,
)
from ._dtypes import (
    binary_result_dtype as binary_result_dtype,
)
from ._dtypes import (
    default_float as default_float,
)
from ._dtypes import (
    index_dtype as index_dtype,
)
from ._dtypes import (
    is_complex as is_complex,
)
from ._dtypes import (
    is_floating as is_floating,
)
from ._dtypes import (
    is_integral as is_integral,
)
from ._host import from_numpy as from_numpy
from ._host import to_namespace as to_namespace
from ._host import to_numpy as to_numpy
from ._kernels import (
    KERNELS as KERNELS,
)
from ._kernels import (
    Kernel as Kernel,
)
from ._kernels import (
    fast_paths_enabled as fast_paths_enabled,
)
from ._kernels import (
    kernel as kernel,
)
from ._kernels import (
    pure_standard as pure_standard,
)
from ._mkl import (
    mkl_in_use as mkl_in_use,
)
from ._mkl import (
    set_mkl as set_mkl,
)
from ._namespace import (
    check_same_device as check_same_device,
)
from ._namespace import (
    check_same_namespace as check_same_namespace,
)
from ._namespace import (
    device_of as device_of,
)
from ._namespace import (
    ensure_array as ensure_array,
)
from ._namespace import (
    is_array as is_array,
)
from ._namespace import (
    namespace_name as namespace_name,
)
from ._namespace import (
    namespace_of as namespace_of,
)
from ._native import (
    native_in_use as native_in_use,
)
from ._native import (
    set_native as set_native,
)
from ._openblas import (
    bundled_blas_in_use as bundled_blas_in_use,
)
from ._openblas import (
    set_bundled_blas as set_bundled_blas,
)
from ._scatter import index_add as index_add

# Every library's fast path is attached here, from the one table of them.
_fastpaths.install()

_malloc.tune()
