"""The OpenBLAS that NumPy's wheels load, reached through ctypes.

NumPy's wheels bundle OpenBLAS (scipy-openblas: 64-bit integers, symbols prefixed
``scipy_`` and suffixed ``64_``). Opening that file again returns the library NumPy has
loaded already: no second BLAS, no second thread pool.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["library", "corename", "transpose_copy", "gemm"]

_LIB: list[Any] = []  # [the ctypes library] once looked up, [None] when there is none
_CORE: list[str] = []
_OMATCOPY: dict[Any, Any] = {}  # dtype -> ?omatcopy, or None where it is missing
_GEMM: dict[Any, Any] = {}  # dtype -> cblas_?gemm, or None where it is missing


def library() -> Any:
    """NumPy's bundled OpenBLAS as a ``ctypes.CDLL``, or None where NumPy has none (a
    NumPy built against another BLAS).

    Examples
    --------
    >>> from portagrad.xp._openblas import library
    >>> library() is library()
    True
    """
    if not _LIB:
        lib = None
        try:
            import ctypes
            import glob
            import os

            libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
            paths = sorted(glob.glob(os.path.join(libs, "libscipy_openblas64_*.so*")))
            if paths:
                lib = ctypes.CDLL(paths[0])
        except OSError:
            lib = None
        _LIB.append(lib)
    return _LIB[0]


def corename() -> str:
    """The kernels OpenBLAS chose for this CPU (``"SkylakeX"``, ``"Haswell"``, ...; what
    ``OPENBLAS_CORETYPE`` overrides), or ``""`` when unknown.

    Examples
    --------
    >>> from portagrad.xp._openblas import corename
    >>> isinstance(corename(), str)
    True
    """
    if not _CORE:
        name = ""
        lib = library()
        if lib is not None:
            try:
                import ctypes

                fn = lib.scipy_openblas_get_corename64_
                fn.restype = ctypes.c_char_p
                fn.argtypes = []
                name = (fn() or b"").decode("ascii", "replace")
            except AttributeError:
                name = ""
        _CORE.append(name)
    return _CORE[0]


def _function(cache: dict, dtype: Any, stem: str, argtypes: Any) -> Any:
    """``scipy_cblas_{s,d}<stem>64_`` of the library for float32 or float64, its
    ``argtypes`` set from ``argtypes(ctypes, scalar type)``; cached; None where missing."""
    fn = cache.get(dtype, False)
    if fn is False:
        fn = None
        lib = library()
        if lib is not None and dtype in (np.float32, np.float64):
            import ctypes

            single = dtype == np.float32
            fn = getattr(lib, f"scipy_cblas_{'s' if single else 'd'}{stem}64_", None)
            if fn is not None:
                fn.argtypes = argtypes(ctypes, ctypes.c_float if single else ctypes.c_double)
                fn.restype = None
        cache[dtype] = fn
    return fn


def _omatcopy(dtype: Any) -> Any:
    return _function(_OMATCOPY, dtype, "omatcopy", lambda c, scalar: [
        c.c_int, c.c_int, c.c_int64, c.c_int64, scalar, c.c_void_p, c.c_int64, c.c_void_p,
        c.c_int64])


def transpose_copy(a: np.ndarray) -> np.ndarray:
    """``a.T`` as a new row-major array: OpenBLAS's blocked ``?omatcopy`` for a
    row-major float32/float64 matrix (a 1000 x 128 float32 one took 14 us, against 84 us
    for NumPy's element-by-element copy across strides), else NumPy's copy.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._openblas import transpose_copy
    >>> transpose_copy(np.arange(6.0).reshape(2, 3))
    array([[0., 3.],
           [1., 4.],
           [2., 5.]])
    """
    if a.ndim == 2 and a.flags.c_contiguous and a.dtype in (np.float32, np.float64):
        fn = _omatcopy(a.dtype.type)
        if fn is not None:
            rows, cols = a.shape
            out = np.empty((cols, rows), dtype=a.dtype)
            if a.size:
                # CblasRowMajor = 101, CblasTrans = 112
                fn(101, 112, rows, cols, 1.0, a.ctypes.data, max(cols, 1),
                   out.ctypes.data, max(rows, 1))
            return out
    return np.ascontiguousarray(a.T)


def gemm(dtype: Any) -> Any:
    """``cblas_?gemm`` of NumPy's OpenBLAS for float32 or float64, through ctypes:
    ``fn(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`` with
    pointers for the arrays (``CblasRowMajor`` = 101, ``CblasNoTrans`` = 111,
    ``CblasTrans`` = 112); None where there is no such library.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._openblas import gemm
    >>> gemm(np.float32) is None or callable(gemm(np.float32))
    True
    """
    return _function(_GEMM, np.dtype(dtype).type, "gemm", lambda c, scalar: [
        c.c_int, c.c_int, c.c_int, c.c_int64, c.c_int64, c.c_int64, scalar, c.c_void_p,
        c.c_int64, c.c_void_p, c.c_int64, scalar, c.c_void_p, c.c_int64])
