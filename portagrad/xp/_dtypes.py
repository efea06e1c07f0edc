"""Dtype rules portagrad applies on top of the standard.

The one rule added to the standard's promotion table: an integer (or boolean) array
combined with a real floating array takes the floating array's dtype, as in PyTorch and
JAX (NumPy would give float64 for int32 with float32; array-api-strict refuses).  Python
scalars are weak: they take the array's dtype.
"""

from __future__ import annotations

from typing import Any

from ._namespace import namespace_name

__all__ = ["is_floating", "is_complex", "is_inexact", "is_integral", "binary_result_dtype",
           "default_float", "index_dtype", "unavailable_dtype", "accumulation_dtype",
           "host_dtype_hash"]


def is_floating(xp: Any, dtype: Any) -> bool:
    """Return whether ``dtype`` is real floating."""
    return xp.isdtype(dtype, "real floating")


def is_complex(xp: Any, dtype: Any) -> bool:
    """Return whether ``dtype`` is complex floating."""
    return xp.isdtype(dtype, "complex floating")


_INEXACT: dict[Any, bool] = {}


def is_inexact(xp: Any, dtype: Any) -> bool:
    """Return whether ``dtype`` is real or complex floating (cached: ops ask per call)."""
    # Keyed with the dtype's class first: dtypes of two libraries may hash alike, and
    # array-api-strict warns when its dtypes are compared with NumPy's.
    key = (dtype.__class__, dtype)
    try:
        return _INEXACT[key]
    except (KeyError, TypeError):
        r = xp.isdtype(dtype, ("real floating", "complex floating"))
        try:
            _INEXACT[key] = r
        except TypeError:
            pass
        return r


def is_integral(xp: Any, dtype: Any) -> bool:
    """Return whether ``dtype`` is an integer or boolean dtype."""
    return xp.isdtype(dtype, ("integral", "bool"))


def binary_result_dtype(xp: Any, a: Any, b: Any) -> Any:
    """Result dtype of combining dtypes ``a`` and ``b`` under portagrad's rule.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import binary_result_dtype
    >>> binary_result_dtype(xp, xp.int32, xp.float32) == xp.float32
    True
    """
    if a == b:
        return a
    a_int = is_integral(xp, a)
    b_int = is_integral(xp, b)
    if a_int and not b_int:
        return b
    if b_int and not a_int:
        return a
    return xp.result_type(a, b)


def default_float(xp: Any, device: Any = None) -> Any:
    """The namespace's default real floating dtype on ``device``."""
    try:
        return xp.__array_namespace_info__().default_dtypes(device=device)["real floating"]
    except Exception:  # noqa: BLE001 - namespaces without the inspection API
        return xp.float64


def index_dtype(xp: Any) -> Any:
    """The integer dtype of the positions ops compute: int64, or the namespace's default
    index dtype where int64 is not available (JAX without ``jax_enable_x64``, which would
    warn and give int32 for an int64 request).

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import index_dtype
    >>> index_dtype(xp) == xp.int64
    True
    """
    if getattr(xp, "__name__", "") == "jax.numpy":
        return xp.__array_namespace_info__().default_dtypes()["indexing"]
    return xp.int64


def accumulation_dtype(xp: Any, array: Any) -> Any:
    """The standard's result dtype of a sum or product of an integer ``array`` given no
    dtype: integers narrower than the default integer widen to its width (unsigned ones
    to the unsigned integer of that width); None (the library's own rule) otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._dtypes import accumulation_dtype
    >>> accumulation_dtype(xp, np.ones(2, dtype=np.int8)) == xp.int64
    True
    """
    dtype = array.dtype
    if not xp.isdtype(dtype, "integral"):
        return None
    info = xp.__array_namespace_info__()
    default = info.default_dtypes(device=array.device)["integral"]
    bits = xp.iinfo(default).bits
    if xp.iinfo(dtype).bits >= bits:
        return None
    if xp.isdtype(dtype, "unsigned integer"):
        return getattr(xp, f"uint{bits}")
    return default


# Unsigned dtypes torch stores but has no sum kernel for.
_TORCH_SUMLESS = frozenset({"torch.uint16", "torch.uint32", "torch.uint64"})


def integer_sum(xp: Any, array: Any, axis: Any, keepdims: bool, dtype: Any = None) -> Any:
    """The standard's ``sum`` of an integer ``array``: in ``dtype``, or without one in
    :func:`accumulation_dtype`'s (``array``'s own where that is None). torch, which widens
    unsigned integers to int64 and has no uint16/32/64 sum, sums those as int64 and casts
    back: addition modulo 2**64 is the same on both, so every bit of the result is kept.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._dtypes import integer_sum
    >>> integer_sum(xp, np.array([200, 100], dtype=np.uint8), None, False).dtype
    dtype('uint64')
    """
    if dtype is None:
        dtype = accumulation_dtype(xp, array) or array.dtype
    if str(dtype) in _TORCH_SUMLESS and namespace_name(xp) == "torch":
        wide = xp.sum(xp.astype(array, xp.int64), axis=axis, keepdims=keepdims)
        return xp.astype(wide, dtype)
    return xp.sum(array, axis=axis, keepdims=keepdims, dtype=dtype)


_WIDE = frozenset({"float64", "complex128", "int64", "uint64"})


def unavailable_dtype(xp: Any, dtype: Any) -> str | None:
    """Why arrays of ``xp`` cannot have ``dtype`` now (JAX without ``jax_enable_x64``
    truncates 64-bit dtypes to 32 bits with a warning), or None when they can.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._dtypes import unavailable_dtype
    >>> unavailable_dtype(xp, xp.float64) is None
    True
    """
    if getattr(xp, "__name__", "") != "jax.numpy":
        return None
    name = getattr(dtype, "__name__", None) or str(dtype)
    if name.rsplit(".", 1)[-1] not in _WIDE:
        return None
    import jax

    if jax.config.jax_enable_x64:
        return None
    return (f"JAX has no {name.rsplit('.', 1)[-1]} unless jax_enable_x64 is set "
            f"(jax.config.update('jax_enable_x64', True) before creating arrays)")


def host_dtype_hash(name: str) -> int:
    """The hash of NumPy's dtype called ``name`` (the hash of CuPy's, JAX's and
    array-api-strict's dtypes too, which are or wrap NumPy's); a hash of the name for
    dtypes NumPy lacks.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._dtypes import host_dtype_hash
    >>> host_dtype_hash("float32") == hash(np.dtype("float32"))
    True
    """
    import numpy as np

    try:
        return hash(np.dtype(name))
    except TypeError:
        return hash(("portagrad.dtype", name))
