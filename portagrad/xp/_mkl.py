"""Intel's oneMKL matrix products for NumPy arrays, where the ``mkl`` wheel is installed
(the ``mkl`` extra): the products of linear layers, attention's projections and the
convolutions' unrolled columns.

PyTorch's CPU wheels run their products on MKL; NumPy's run them on the OpenBLAS they
bundle. At the workloads' shapes on one AVX-512 thread, MKL's ``sgemm`` took 0.83-0.95 of
OpenBLAS's time for the linear layers (1024 x 256 x 5000: 15.7 ms against 16.5) and 0.7-0.85
for the convolutions' column products (64 x 576 x 1024: 0.51 ms against 0.63; the CNN's
fully connected 64 x 9216 x 128: 0.96 ms against 1.40), the same times as PyTorch's.

The library is ``libmkl_rt`` from the wheel's files, opened through ctypes, switched to
its sequential threading layer (no OpenMP runtime of its own beside PyTorch's or
OpenBLAS's) and its 32-bit integer interface before any other call. Several threads
come from splitting a product's rows over the threads of :mod:`portagrad.xp._threads`, as
many as OpenBLAS was set to; OpenBLAS itself is then held at one thread
(:func:`portagrad.xp._openblas.hold_one_thread`).

As the OpenBLAS binding (:mod:`portagrad.xp._openblas`), this one checks itself at first
use: ``cblas_?gemm`` in every transposition, float32 and float64, on integer operands
(exact in both) must give NumPy's result bit for bit. A missing library or symbol, an
error or a mismatch declines it for the rest of the process (:func:`why_declined`) and
every caller takes NumPy's own product. ``PORTAGRAD_MKL=0`` in the environment (read at
import) or :func:`set_mkl` turns it off without the check.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["library", "set_mkl", "mkl_in_use", "why_declined", "gemm", "vector_address",
           "product",
           "product_into", "stacked_product", "vector_math", "vector_function",
           "VECTOR_FUNCTIONS"]

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CblasRowMajor, CblasNoTrans, CblasTrans
_SEQUENTIAL, _LP64 = 1, 0  # MKL_THREADING_SEQUENTIAL, MKL_INTERFACE_LP64
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_INT_MAX = (1 << 31) - 1
# Products below this many multiply-adds stay with NumPy: a call through ctypes and the
# layout checks cost a few microseconds, NumPy's own call less.
MIN_WORK = 1 << 15
# Products split over several threads from this many multiply-adds (about 0.1 ms on one).
SPLIT_WORK = 1 << 23
# The vector math functions bound (VM's vms*/vmd*, each with its accuracy mode per call),
# by the name of the standard's function.
VECTOR_FUNCTIONS = {"exp": "Exp", "erf": "Erf", "tanh": "Tanh", "log": "Ln"}
# High accuracy (about 1 ulp), errors ignored (no errno, no callback): NaN and infinities
# come out as the C library's functions give them.
_VML_MODE = 0x2 | 0x100  # VML_HA | VML_ERRMODE_IGNORE
# Elements from which a vector function splits over threads; below, NumPy's own loop or
# one call.
VECTOR_SPLIT = 1 << 16
_VECTOR_CHUNK = 1 << 30  # elements per call (MKL's sizes are 32-bit here)


class _State:
    def __init__(self) -> None:
        self.enabled = os.environ.get("PORTAGRAD_MKL", "1").strip() != "0"
        self.checked = False
        self.gemm: dict[Any, Any] | None = None
        self.vector: dict[tuple[str, Any], Any] = {}
        self.declined = ""
        self.lock = threading.Lock()


_STATE = _State()
_LIB: list[Any] = []


def _candidates() -> list[str]:
    """Paths of ``libmkl_rt`` from the ``mkl`` distribution's files, then the prefix's lib."""
    paths = []
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            for f in distribution("mkl").files or ():
                if os.path.basename(str(f)).startswith("libmkl_rt.so"):
                    paths.append(str(f.locate()))
        except PackageNotFoundError:
            pass
    except ImportError:  # pragma: no cover - importlib.metadata is in every Python >= 3.8
        pass
    import glob

    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        paths += sorted(glob.glob(os.path.join(prefix, "lib", "libmkl_rt.so*")))
    return [p for p in dict.fromkeys(paths) if os.path.isfile(p)]


def library() -> Any:
    """``libmkl_rt`` as a ``ctypes.CDLL`` in its sequential layer, or None where the ``mkl``
    wheel is not installed.

    Examples
    --------
    >>> from portagrad.xp._mkl import library
    >>> library() is library()
    True
    """
    if not _LIB:
        lib = None
        import ctypes

        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
                # Before any other call: later calls would start the default layer.
                lib.MKL_Set_Threading_Layer.argtypes = [ctypes.c_int]
                lib.MKL_Set_Interface_Layer.argtypes = [ctypes.c_int]
                lib.MKL_Set_Interface_Layer(_LP64)
                lib.MKL_Set_Threading_Layer(_SEQUENTIAL)
                break
            except (OSError, AttributeError):
                lib = None
        _LIB.append(lib)
    return _LIB[0]


def _bind(lib: Any) -> dict[Any, Any]:
    import ctypes as c

    i32, ptr = c.c_int, c.c_void_p
    out = {}
    for dtype, letter, scalar in zip(_DTYPES, "sd", (c.c_float, c.c_double)):
        fn = getattr(lib, f"cblas_{letter}gemm")
        fn.argtypes = [i32] * 6 + [scalar, ptr, i32, ptr, i32, scalar, ptr, i32]
        fn.restype = None
        out[dtype] = fn
    return out


def _bind_vector(lib: Any) -> dict[tuple[str, Any], Any]:
    import ctypes as c

    out = {}
    for dtype, letter in zip(_DTYPES, "sd"):
        for name, stem in VECTOR_FUNCTIONS.items():
            fn = getattr(lib, f"vm{letter}{stem}")
            fn.argtypes = [c.c_int, c.c_void_p, c.c_void_p, c.c_int64]
            fn.restype = None
            out[name, dtype] = fn
    return out


def _vector_reference(name: str, x: np.ndarray) -> np.ndarray:
    if name == "erf":
        import math

        return np.array([math.erf(v) for v in x.astype(np.float64).tolist()]).astype(x.dtype)
    return getattr(np, name)(x)


def _vector_self_test(vector: dict[tuple[str, Any], Any]) -> str:
    """``""`` when every vector function is within a few units in the last place of
    NumPy's (erf: of ``math.erf``) on ordinary and special values, else which one is not."""
    with np.errstate(all="ignore"):
        for dtype in _DTYPES:
            eps = float(np.finfo(dtype).eps)
            base = np.concatenate([np.linspace(-30, 30, 601), np.geomspace(1e-30, 80, 200),
                                   [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40]])
            for name in VECTOR_FUNCTIONS:
                x = base.astype(dtype)
                if name == "log":
                    x = np.concatenate([np.abs(x), [-1.0, 0.0]]).astype(dtype)
                want = _vector_reference(name, x)
                got = np.empty_like(x)
                vector[name, dtype](x.size, x.ctypes.data, got.ctypes.data, _VML_MODE)
                same = (np.isnan(got) == np.isnan(want)) & (
                    np.isnan(want) | (got == want)
                    | (np.abs(got - want) <= 4 * eps * np.maximum(np.abs(want),
                                                                  np.finfo(dtype).tiny)))
                if not same.all():
                    i = int(np.argmin(same))
                    return (f"{dtype} {name}({x[i]!r}) gave {got[i]!r}, NumPy's "
                            f"{want[i]!r}")
    return ""


def _self_test(kernels: dict[Any, Any]) -> str:
    rng = np.random.default_rng(0)
    for dtype in _DTYPES:
        for m, k, n in ((3, 4, 5), (37, 70, 19)):
            a, b = (rng.integers(-4, 5, s).astype(dtype) for s in ((m, k), (k, n)))
            c0 = rng.integers(-4, 5, (m, n)).astype(dtype)
            for beta in (0.0, 1.0):
                want = a @ b + (c0 if beta else 0)
                for ta in (NO_TRANS, TRANS):
                    for tb in (NO_TRANS, TRANS):
                        x = a if ta == NO_TRANS else np.ascontiguousarray(a.T)
                        y = b if tb == NO_TRANS else np.ascontiguousarray(b.T)
                        c = c0.copy()
                        kernels[dtype](ROW_MAJOR, ta, tb, m, n, k, 1.0, x.ctypes.data,
                                       x.shape[1], y.ctypes.data, y.shape[1], beta,
                                       c.ctypes.data, n)
                        if not np.array_equal(c, want):
                            flags = "".join("N" if t == NO_TRANS else "T" for t in (ta, tb))
                            return (f"{dtype} gemm ({flags}, beta {beta}, {m}x{k}x{n}) "
                                    f"differs from NumPy's")
    return ""


def _check() -> None:
    state = _STATE
    with state.lock:
        if state.checked:
            return
        kernels, why = None, ""
        lib = library()
        if lib is None:
            why = "the mkl wheel is not installed (pip install portagrad[mkl])"
        else:
            try:
                kernels = _bind(lib)
                why = _self_test(kernels)
                if not why:
                    vector = _bind_vector(lib)
                    why = _vector_self_test(vector)
            except Exception as e:  # noqa: BLE001 - any failure declines the binding
                why = f"{type(e).__name__}: {e}"
        if not why:
            state.vector = vector
            from ._openblas import hold_one_thread

            # MKL runs the products and our threads split them: OpenBLAS's threads,
            # left to spin after its remaining calls, would take the cores from ours.
            hold_one_thread()
        state.gemm = None if why else kernels
        state.declined = why
        state.checked = True


def _kernels() -> dict[Any, Any] | None:
    state = _STATE
    if not state.enabled:
        return None
    if not state.checked:
        _check()
    return state.gemm


def set_mkl(enabled: bool) -> bool:
    """Run NumPy's matrix products on oneMKL (True) or on NumPy's own BLAS (False), in the
    whole process; returns the previous setting.

    On, MKL is used where it is installed and its first use's self-test passed
    (:func:`mkl_in_use`). ``PORTAGRAD_MKL=0`` in the environment starts the process with
    it off.

    Parameters
    ----------
    enabled : bool
        The new setting.

    Examples
    --------
    >>> from portagrad.xp import set_mkl
    >>> was = set_mkl(False)
    >>> set_mkl(was)
    False
    """
    was = _STATE.enabled
    _STATE.enabled = bool(enabled)
    return was


def mkl_in_use() -> bool:
    """Whether NumPy's products run on oneMKL: switched on (:func:`set_mkl`), installed,
    and through its self-test (which the first call runs).

    Examples
    --------
    >>> from portagrad.xp import mkl_in_use
    >>> isinstance(mkl_in_use(), bool)
    True
    """
    return _kernels() is not None


def why_declined() -> str:
    """Why MKL is not in use (``""`` when it is, or has not been tried yet).

    Examples
    --------
    >>> from portagrad.xp._mkl import why_declined
    >>> isinstance(why_declined(), str)
    True
    """
    return _STATE.declined


def gemm(dtype: Any) -> Any:
    """MKL's ``cblas_?gemm`` for float32 or float64 (32-bit integer sizes), None for other
    dtypes or where MKL is not in use.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import gemm
    >>> gemm(np.dtype(np.int64)) is None
    True
    """
    kernels = _kernels()
    return None if kernels is None else kernels.get(dtype)


def _operand(x: np.ndarray) -> tuple[int, int] | None:
    """BLAS transpose flag and leading dimension of a 2-d array whose rows or columns are
    contiguous; None for other layouts."""
    return _layout(x.shape[0], x.shape[1], x.strides[0], x.strides[1], x.itemsize)


def _fits(a: np.ndarray, b: np.ndarray, out: np.ndarray | None) -> Any:
    """The gemm for ``a @ b`` of these NumPy arrays, or None where MKL does not take it."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2
            or a.dtype != b.dtype or a.shape[1] != b.shape[0]):
        return None
    m, k = a.shape
    n = b.shape[1]
    if m * n * k < MIN_WORK or max(m, n, k) > _INT_MAX // 2:
        return None
    if out is not None and (type(out) is not np.ndarray or out.dtype != a.dtype
                            or out.shape != (m, n) or not out.flags.writeable
                            or np.may_share_memory(out, a) or np.may_share_memory(out, b)):
        return None
    return gemm(a.dtype)


def _call(fn: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray, beta: float) -> bool:
    """``c = a @ b + beta * c`` for a ``c`` whose rows or columns are contiguous; False
    where a layout is not one BLAS takes."""
    fc = _operand(c)
    if fc is None:
        return False
    if fc[0] == TRANS:
        a, b, c = b.T, a.T, c.T  # c.T = b.T @ a.T, its rows contiguous
        fc = (NO_TRANS, fc[1])
    fa, fb = _operand(a), _operand(b)
    if fa is None or fb is None:
        return False
    m, k = a.shape
    n = b.shape[1]
    if m and n:
        fn(ROW_MAJOR, fa[0], fb[0], m, n, k, 1.0, a.ctypes.data, fa[1], b.ctypes.data,
           fb[1], beta, c.ctypes.data, fc[1])
    return True


def _split(fn: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray, beta: float,
           bias: np.ndarray | None = None) -> bool:
    """``_call`` over parts of the output, one per thread; with ``bias`` (1-d, one per
    column of ``c``), each part first writes it into its own rows and adds its product
    there, so the bias costs no pass of its own over the output."""
    from ._threads import in_parts, parts, threads

    m, k = a.shape
    n = b.shape[1]
    t = threads()
    if t < 2 or m * n * k < SPLIT_WORK:
        if bias is not None:
            c[...] = bias
        return _call(fn, a, b, c, 1.0 if bias is not None else beta)
    fa, fb, fc = _operand(a), _operand(b), _operand(c)
    if fa is None or fb is None or fc is None:
        return False
    if fc[0] == NO_TRANS and _pooled(fn, a, b, c, fa, fb, fc, beta, bias, t):
        return True
    if bias is not None:
        beta = 1.0
    # Along the longer of the output's two axes: each part keeps a long product.
    if m >= n:
        def rows(s: slice) -> bool:
            if bias is not None:
                c[s] = bias
            return _call(fn, a[s], b, c[s], beta)

        done = in_parts(parts(m, t), rows)
    else:
        def cols(s: slice) -> bool:
            if bias is not None:
                c[:, s] = bias[s]
            return _call(fn, a, b[:, s], c[:, s], beta)

        done = in_parts(parts(n, t), cols)
    return all(done)


def _pooled(fn: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray, fa: tuple, fb: tuple,
            fc: tuple, beta: float, bias: np.ndarray | None, t: int) -> bool:
    """The split product on the compiled loops' own threads (``gemm_parts``, which hand a
    part over in about a microsecond where the pool of :mod:`portagrad.xp._threads` takes
    tens), ``fa``, ``fb``, ``fc`` the operands' layouts (``c``'s rows contiguous); False
    where the loops are not built."""
    from ._native import address, native

    lib = native()
    if lib is None:
        return False
    import ctypes

    m, k = a.shape
    n = b.shape[1]
    lib.gemm_parts(ctypes.cast(fn, ctypes.c_void_p).value, int(a.dtype.itemsize == 8),
                   fa[0], fb[0], m, n, k, a.ctypes.data, fa[1], b.ctypes.data, fb[1],
                   float(beta), c.ctypes.data, fc[1], address(bias), t)
    return True


def product(a: Any, b: Any, bias: Any = None) -> Any:
    """``a @ b`` (``+ bias``) of two 2-d NumPy float arrays of one dtype, on MKL (several
    threads when NumPy's BLAS has several: the rows or columns split among them); None
    where MKL is not in use or does not take these operands (NumPy's product then runs).

    Parameters
    ----------
    a, b : numpy.ndarray
        2-d, float32 or float64, each with contiguous rows or columns.
    bias : numpy.ndarray, optional
        ``(b.shape[1],)`` of the operands' dtype, added to every row: written into the
        output first, and the product added onto it (GEMM with beta = 1).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import product
    >>> a = np.ones((64, 64), np.float32)
    >>> p = product(a, a, np.full(64, 0.5, np.float32))
    >>> p is None or float(p[0, 0]) == 64.5
    True
    """
    fn = _fits(a, b, None)
    if fn is None:
        return None
    if bias is not None and (type(bias) is not np.ndarray or bias.dtype != a.dtype
                             or bias.shape != (b.shape[1],)):
        return None
    out = np.empty((a.shape[0], b.shape[1]), dtype=a.dtype)
    return out if _split(fn, a, b, out, 0.0, bias) else None


def product_into(a: Any, b: Any, out: Any, accumulate: bool = False) -> bool:
    """``out[...] = a @ b`` (``out += a @ b`` with ``accumulate``) on MKL for 2-d NumPy
    float arrays of one dtype; False, with ``out`` untouched, where MKL does not take them.

    Parameters
    ----------
    a, b : numpy.ndarray
        2-d operands.
    out : numpy.ndarray
        ``(a.shape[0], b.shape[1])``, row- or column-major, not overlapping ``a`` or ``b``.
    accumulate : bool
        Add the product to ``out`` instead of overwriting it.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import product_into
    >>> a, out = np.ones((64, 64)), np.ones((64, 64))
    >>> product_into(a, a, out, accumulate=True) is False or float(out[0, 0]) == 65.0
    True
    """
    fn = _fits(a, b, out)
    if fn is None:
        return False
    return _split(fn, a, b, out, 1.0 if accumulate else 0.0)


def stacked_product(a: Any, b: Any, out: Any, accumulate: bool = False) -> bool:
    """``out[...] = a @ b`` (or ``out += a @ b``) for stacks of matrices whose leading axes
    broadcast to ``out``'s, one MKL call per matrix of ``out`` on this thread; False, with
    ``out`` untouched, where MKL does not take them.

    Parameters
    ----------
    a, b : numpy.ndarray
        ``(..., m, k)`` and ``(..., k, n)``.
    out : numpy.ndarray
        ``(..., m, n)``: the broadcast leading axes; every matrix row- or column-major.
    accumulate : bool
        Add the products to ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import stacked_product
    >>> a, b = np.ones((2, 32, 32)), np.ones((32, 32))
    >>> out = np.zeros((2, 32, 32))
    >>> stacked_product(a, b, out) is False or float(out[1, 0, 0]) == 32.0
    True
    """
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or type(out) is not np.ndarray
            or a.ndim < 2 or b.ndim < 2 or out.ndim < 2 or a.dtype != b.dtype
            or out.dtype != a.dtype or not out.flags.writeable
            or np.may_share_memory(out, a) or np.may_share_memory(out, b)):
        return False
    m, k = a.shape[-2:]
    n = b.shape[-1]
    lead = out.shape[:-2]
    if (b.shape[-2] != k or out.shape[-2:] != (m, n) or m * n * k < MIN_WORK
            or max(m, n, k) > _INT_MAX // 2):
        return False
    fn = gemm(a.dtype)
    sa, sb = _lead_strides(a, lead), _lead_strides(b, lead)
    item = a.itemsize
    fa = _layout(m, k, a.strides[-2], a.strides[-1], item)
    fb = _layout(k, n, b.strides[-2], b.strides[-1], item)
    fc = _layout(m, n, out.strides[-2], out.strides[-1], item)
    if fn is None or sa is None or sb is None or fa is None or fb is None or fc is None:
        return False
    pa, pb, pc = a.ctypes.data, b.ctypes.data, out.ctypes.data
    if fc[0] == TRANS:
        # out.T = b.T @ a.T, its rows contiguous; a transposed operand flips its flag.
        flip = {NO_TRANS: TRANS, TRANS: NO_TRANS}
        m, n = n, m
        fa, fb = (flip[fb[0]], fb[1]), (flip[fa[0]], fa[1])
        pa, pb, sa, sb = pb, pa, sb, sa
    beta = 1.0 if accumulate else 0.0
    so = out.strides[:-2]
    for idx in itertools.product(*(range(d) for d in lead)):
        oa = ob = oc = 0
        for i, x, y, z in zip(idx, sa, sb, so):
            oa += i * x
            ob += i * y
            oc += i * z
        if m and n:
            fn(ROW_MAJOR, fa[0], fb[0], m, n, k, 1.0, pa + oa, fa[1], pb + ob, fb[1], beta,
               pc + oc, fc[1])
    return True


def _layout(rows: int, cols: int, s0: int, s1: int, item: int) -> tuple[int, int] | None:
    """BLAS transpose flag and leading dimension of a ``rows x cols`` matrix of these
    strides, where its rows or its columns are contiguous; None otherwise."""
    if (cols <= 1 or s1 == item) and (rows <= 1 or (s0 % item == 0 and s0 // item >= cols)):
        return NO_TRANS, max(s0 // item if rows > 1 else cols, cols, 1)
    if (rows <= 1 or s0 == item) and (cols <= 1 or (s1 % item == 0 and s1 // item >= rows)):
        return TRANS, max(s1 // item if cols > 1 else rows, rows, 1)
    return None


def _lead_strides(x: np.ndarray, lead: tuple) -> list[int] | None:
    """Byte strides of ``x``'s leading axes broadcast to ``lead`` (0 along a broadcast
    axis); None where they do not broadcast."""
    pad = len(lead) - (x.ndim - 2)
    if pad < 0:
        return None
    out = []
    for i, d in enumerate(lead):
        j = i - pad
        if j < 0 or x.shape[j] == 1:
            out.append(0)
        elif x.shape[j] == d:
            out.append(x.strides[j])
        else:
            return None
    return out


def vector_function(name: str, dtype: Any) -> Any:
    """MKL's vector function ``name`` for ``dtype`` as ``fn(x, out)`` on contiguous 1-d
    NumPy arrays of that dtype and one length (``out`` may be ``x``), unchecked, for
    loops over blocks; None where MKL is not in use.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import vector_function
    >>> fn = vector_function("exp", np.dtype(np.float64))
    >>> x = np.zeros(2)
    >>> fn is None or (fn(x, x), x.tolist())[1] == [1.0, 1.0]
    True
    """
    if _kernels() is None:
        return None
    fn = _STATE.vector.get((name, np.dtype(dtype)))
    if fn is None:
        return None

    def call(x: np.ndarray, out: np.ndarray) -> None:
        _vector_call(fn, x, out)

    return call


def vector_address(name: str, dtype: Any) -> tuple[int, int]:
    """The address of MKL's vector function ``name`` for ``dtype`` (C signature
    ``(int n, const T *a, T *y, int64 mode)``) and the mode to pass it, for compiled loops;
    ``(0, 0)`` where MKL is not in use.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import vector_address
    >>> address, mode = vector_address("exp", np.dtype(np.float32))
    >>> address == 0 or mode != 0
    True
    """
    if _kernels() is None:
        return 0, 0
    fn = _STATE.vector.get((name, np.dtype(dtype)))
    if fn is None:
        return 0, 0
    import ctypes

    return ctypes.cast(fn, ctypes.c_void_p).value or 0, _VML_MODE


def _vector_call(fn: Any, x: np.ndarray, out: np.ndarray) -> None:
    for s0 in range(0, x.shape[0], _VECTOR_CHUNK):
        n = min(_VECTOR_CHUNK, x.shape[0] - s0)
        fn(n, x[s0:].ctypes.data, out[s0:].ctypes.data, _VML_MODE)


def vector_math(name: str, x: Any, out: Any = None) -> Any:
    """``name(x)`` elementwise (``name``: a key of :data:`VECTOR_FUNCTIONS`) on MKL's
    vector math for a float32/float64 NumPy array, written into ``out`` (``x`` itself
    allowed) or a new array, split over threads when NumPy's BLAS has several; None where
    MKL is not in use or does not take the arrays.

    Parameters
    ----------
    name : str
        ``"exp"``, ``"erf"``, ``"tanh"`` or ``"log"``.
    x : numpy.ndarray
        Contiguous (row-major), float32 or float64.
    out : numpy.ndarray, optional
        Of ``x``'s shape and dtype, contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._mkl import vector_math
    >>> y = vector_math("exp", np.zeros(3))
    >>> y is None or y.tolist() == [1.0, 1.0, 1.0]
    True
    """
    if (type(x) is not np.ndarray or not x.flags.c_contiguous
            or (out is not None and (type(out) is not np.ndarray or out.shape != x.shape
                                     or out.dtype != x.dtype or not out.flags.c_contiguous
                                     or not out.flags.writeable
                                     or (out is not x and np.may_share_memory(out, x))))):
        return None
    fn = vector_function(name, x.dtype)
    if fn is None:
        return None
    if out is None:
        out = np.empty_like(x)
    flat, dest = x.reshape(-1), out.reshape(-1)
    if flat.shape[0] == 0:
        return out
    from ._threads import in_parts, parts, threads

    t = threads()
    if t > 1 and flat.shape[0] >= VECTOR_SPLIT:
        in_parts(parts(flat.shape[0], t), lambda s: fn(flat[s], dest[s]))
    else:
        fn(flat, dest)
    return out
