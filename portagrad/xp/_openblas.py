"""The OpenBLAS that NumPy's wheels load, reached through ctypes: the one binding to it.

NumPy's wheels bundle OpenBLAS (scipy-openblas: 64-bit integers, symbols prefixed
``scipy_`` and suffixed ``64_``). Opening that file again returns the library NumPy has
loaded already: no second BLAS, no second thread pool. Three kernels are bound, each for
what NumPy has no call for:

- ``cblas_?gemm`` with ``beta = 1``: backward adds a product into a gradient it already
  has (:func:`portagrad.xp._matmul.matmul_into`);
- ``?omatcopy``: a blocked transpose, for products run in transposed form
  (:func:`transpose_copy`, :mod:`portagrad.xp._matmul`);
- ``cblas_?axpy``: ``y += a * x`` in one pass, the optimizers' updates
  (:mod:`portagrad.xp._optim`).

It also reads and sets OpenBLAS's thread count (:func:`blas_threads`,
:func:`one_blas_thread`): the convolutions split a batch over threads of their own and run
each part's products on one BLAS thread (:mod:`portagrad.xp._conv_fast`).

ctypes cannot check a symbol's signature, so the binding checks itself at first use: each
kernel, in every variant the callers use, in float32 and float64, runs on small integer
operands (exact in both) and must give NumPy's result bit for bit. A missing library or
symbol, an exception or a mismatch declines the binding for the rest of the process;
:func:`corename` then answers ``""`` and every kernel ``None``, so every caller takes
NumPy's plain path. ``PORTAGRAD_BUNDLED_BLAS=0`` in the environment (read at import) or
:func:`set_bundled_blas` turns the binding off without the check. What each kernel buys
on the workloads that call it is measured by ``benchmarks/bench_openblas.py`` (numbers in
``benchmarks/README.md``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["library", "corename", "transpose_copy", "gemm", "axpy", "set_bundled_blas",
           "bundled_blas_in_use", "why_declined", "blas_threads", "one_blas_thread",
           "hold_one_thread"]

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CblasRowMajor, CblasNoTrans, CblasTrans
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_LIB: list[Any] = []  # [the ctypes library] once looked up, [None] when there is none


class _Binding:
    """The state of the binding in this process."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("PORTAGRAD_BUNDLED_BLAS", "1").strip() != "0"
        self.checked = False
        # kernel name -> {dtype: ctypes function}; None when the check declined
        self.kernels: dict[str, dict[Any, Any]] | None = None
        self.core = ""
        self.declined = ""
        self.lock = threading.Lock()


_STATE = _Binding()


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

            libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
            paths = sorted(glob.glob(os.path.join(libs, "libscipy_openblas64_*.so*")))
            if paths:
                lib = ctypes.CDLL(paths[0])
        except OSError:
            lib = None
        _LIB.append(lib)
    return _LIB[0]


def _bind(lib: Any) -> tuple[dict[str, dict[Any, Any]], Any]:
    """The kernels of ``lib`` with their argument types set, and its ``get_corename``;
    AttributeError where a symbol is missing."""
    import ctypes as c

    i32, i64, ptr = c.c_int, c.c_int64, c.c_void_p
    kernels: dict[str, dict[Any, Any]] = {"gemm": {}, "omatcopy": {}, "axpy": {},
                                          "threads": {}}
    for dtype, letter, scalar in zip(_DTYPES, "sd", (c.c_float, c.c_double)):
        signatures = {
            "gemm": [i32, i32, i32, i64, i64, i64, scalar, ptr, i64, ptr, i64, scalar, ptr,
                     i64],
            "omatcopy": [i32, i32, i64, i64, scalar, ptr, i64, ptr, i64],
            "axpy": [i64, scalar, ptr, i64, ptr, i64],
        }
        for stem, argtypes in signatures.items():
            fn = getattr(lib, f"scipy_cblas_{letter}{stem}64_")
            fn.argtypes = argtypes
            fn.restype = None
            kernels[stem][dtype] = fn
    get_threads = lib.scipy_openblas_get_num_threads64_
    get_threads.argtypes, get_threads.restype = [], i32
    set_threads = lib.scipy_openblas_set_num_threads64_
    set_threads.argtypes, set_threads.restype = [i32], None
    kernels["threads"].update(get=get_threads, set=set_threads)
    core = lib.scipy_openblas_get_corename64_
    core.argtypes = []
    core.restype = c.c_char_p
    return kernels, core


def _self_test(kernels: dict[str, dict[Any, Any]]) -> str:
    """``""`` when every kernel gives NumPy's result, else which one differed."""
    rng = np.random.default_rng(0)
    for dtype in _DTYPES:
        # A tiny product and one past the kernels' register blocks, with ragged edges;
        # integer operands keep every sum exact, so NumPy's result is the only answer.
        for m, k, n in ((3, 4, 5), (37, 70, 19)):
            a, b = (rng.integers(-4, 5, s).astype(dtype) for s in ((m, k), (k, n)))
            c0 = rng.integers(-4, 5, (m, n)).astype(dtype)
            want = c0 + a @ b
            for ta in (NO_TRANS, TRANS):
                for tb in (NO_TRANS, TRANS):
                    # A transposed operand is stored as its transpose, row-major.
                    x = a if ta == NO_TRANS else np.ascontiguousarray(a.T)
                    y = b if tb == NO_TRANS else np.ascontiguousarray(b.T)
                    c = c0.copy()
                    kernels["gemm"][dtype](ROW_MAJOR, ta, tb, m, n, k, 1.0, x.ctypes.data,
                                           x.shape[1], y.ctypes.data, y.shape[1], 1.0,
                                           c.ctypes.data, n)
                    if not np.array_equal(c, want):
                        flags = "".join("N" if t == NO_TRANS else "T" for t in (ta, tb))
                        return f"{dtype} gemm ({flags}, {m}x{k}x{n}) differs from NumPy's"
            t = np.empty((k, m), dtype=dtype)
            kernels["omatcopy"][dtype](ROW_MAJOR, TRANS, m, k, 1.0, a.ctypes.data, k,
                                       t.ctypes.data, m)
            if not np.array_equal(t, a.T):
                return f"{dtype} omatcopy differs from NumPy's transpose"
            y = c0.copy()
            x = rng.integers(-4, 5, y.shape).astype(dtype)
            kernels["axpy"][dtype](y.size, -0.5, x.ctypes.data, 1, y.ctypes.data, 1)
            if not np.array_equal(y, c0 + dtype.type(-0.5) * x):
                return f"{dtype} axpy differs from NumPy's"
    return ""


def _check() -> None:
    state = _STATE
    with state.lock:
        if state.checked:
            return
        kernels, core, why = None, "", ""
        lib = library()
        if lib is None:
            why = "NumPy loads no bundled scipy-openblas"
        else:
            try:
                kernels, get_core = _bind(lib)
                why = _self_test(kernels)
                core = (get_core() or b"").decode("ascii", "replace")
            except Exception as e:  # noqa: BLE001 - any failure declines the binding
                why = f"{type(e).__name__}: {e}"
        state.kernels = None if why else kernels
        state.core = "" if why else core
        state.declined = why
        state.checked = True


def _kernels() -> dict[str, dict[Any, Any]] | None:
    state = _STATE
    if not state.enabled:
        return None
    if not state.checked:
        _check()
    return state.kernels


def set_bundled_blas(enabled: bool) -> bool:
    """Use (True) or stop using (False) the kernels of NumPy's bundled OpenBLAS, in the
    whole process; returns the previous setting.

    Off, every fast path that calls them takes NumPy's plain path instead: ``a @ b`` as
    written, ``out += a @ b`` and NumPy's elementwise updates in the optimizers. On, they
    are used where the first use's self-test passed (:func:`bundled_blas_in_use`). The
    environment variable ``PORTAGRAD_BUNDLED_BLAS=0`` starts the process with them off.

    Examples
    --------
    >>> from portagrad.xp import set_bundled_blas
    >>> was = set_bundled_blas(False)
    >>> set_bundled_blas(was)
    False
    """
    was = _STATE.enabled
    _STATE.enabled = bool(enabled)
    return was


def bundled_blas_in_use() -> bool:
    """Whether the kernels of NumPy's bundled OpenBLAS are in use: switched on
    (:func:`set_bundled_blas`), present, and through their self-test (which the first
    call runs).

    Examples
    --------
    >>> from portagrad.xp import bundled_blas_in_use
    >>> isinstance(bundled_blas_in_use(), bool)
    True
    """
    return _kernels() is not None


def why_declined() -> str:
    """Why the self-test declined the binding (``""`` when it passed or has not run)."""
    return _STATE.declined


def corename() -> str:
    """The kernels OpenBLAS chose for this CPU (``"SkylakeX"``, ``"Haswell"``, ...; what
    ``OPENBLAS_CORETYPE`` overrides), or ``""`` when unknown or the binding is off.

    Examples
    --------
    >>> from portagrad.xp._openblas import corename
    >>> isinstance(corename(), str)
    True
    """
    return "" if _kernels() is None else _STATE.core


def gemm(dtype: Any) -> Any:
    """``cblas_?gemm`` for a NumPy dtype (float32 or float64, native byte order):
    ``fn(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`` with
    pointers for the arrays (:data:`ROW_MAJOR`, :data:`NO_TRANS`, :data:`TRANS`); None
    for other dtypes or where the binding is off.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._openblas import gemm
    >>> gemm(np.dtype(np.float32)) is None or callable(gemm(np.dtype(np.float32)))
    True
    """
    kernels = _kernels()
    return None if kernels is None else kernels["gemm"].get(dtype)


def axpy(dtype: Any) -> Any:
    """``cblas_?axpy`` for a NumPy dtype (float32 or float64, native byte order):
    ``fn(n, alpha, x, incx, y, incy)`` adds ``alpha * x`` into ``y``, pointers for the
    arrays; None for other dtypes or where the binding is off.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._openblas import axpy
    >>> axpy(np.dtype(np.int64)) is None
    True
    """
    kernels = _kernels()
    return None if kernels is None else kernels["axpy"].get(dtype)


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
    if a.ndim == 2 and a.flags.c_contiguous:
        kernels = _kernels()
        fn = None if kernels is None else kernels["omatcopy"].get(a.dtype)
        if fn is not None:
            rows, cols = a.shape
            out = np.empty((cols, rows), dtype=a.dtype)
            if a.size:
                fn(ROW_MAJOR, TRANS, rows, cols, 1.0, a.ctypes.data, max(cols, 1),
                   out.ctypes.data, max(rows, 1))
            return out
    return np.ascontiguousarray(a.T)


class _ThreadCount:
    """Blocks inside :func:`one_blas_thread` and the count to restore after the last."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved = 1
        self.held = False  # hold_one_thread() keeps one block open for good


_THREADS = _ThreadCount()


def blas_threads() -> int:
    """The threads OpenBLAS's products use now (``OPENBLAS_NUM_THREADS`` or what
    threadpoolctl set); 1 where the binding is off.

    Examples
    --------
    >>> from portagrad.xp._openblas import blas_threads
    >>> blas_threads() >= 1
    True
    """
    kernels = _kernels()
    if kernels is None:
        return 1
    get = kernels["threads"]["get"]
    with _THREADS.lock:
        if _THREADS.held and _THREADS.depth == 1:
            now = int(get())
            if now > 1:  # set since (threadpoolctl, set_num_threads): taken, and held at 1
                _THREADS.saved = now
                kernels["threads"]["set"](1)
        if _THREADS.depth:
            return _THREADS.saved
        return max(1, int(get()))


def hold_one_thread() -> None:
    """OpenBLAS on one thread from now on, in the whole process, the count it had (or is
    set to later, when above one) kept as :func:`blas_threads`' answer: for when another
    library runs the products and our threads split the work, so that OpenBLAS's own
    threads, which spin for a while after each call, never take the cores from them
    (measured: a transformer step on two threads took as long as on one, at twice the
    CPU time, until OpenBLAS stopped spinning). A count of one set later (a threadpoolctl
    limit) cannot be told from the hold's own and is not taken. Nothing where the binding
    is off.

    Examples
    --------
    >>> from portagrad.xp._openblas import hold_one_thread
    >>> callable(hold_one_thread)
    True
    """
    kernels = _kernels()
    if kernels is None:
        return
    get, set_ = kernels["threads"]["get"], kernels["threads"]["set"]
    with _THREADS.lock:
        if _THREADS.held:
            return
        if _THREADS.depth == 0:
            _THREADS.saved = max(1, int(get()))
            if _THREADS.saved != 1:
                set_(1)
        _THREADS.depth += 1
        _THREADS.held = True


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS on one thread inside the block, its count restored when the last of the
    blocks open at once (nested or in other threads) ends; nothing where the binding is
    off.

    A product on one thread runs in the thread that calls it, so several threads of ours
    can each run their own products at once. OpenBLAS's own threads meet at a barrier
    after every product, which costs little for one large product but, on a machine
    whose cores other processes share, made a batch of small ones several times slower
    than on one thread.

    Examples
    --------
    >>> from portagrad.xp._openblas import blas_threads, one_blas_thread
    >>> before = blas_threads()
    >>> with one_blas_thread():
    ...     pass
    >>> blas_threads() == before
    True
    """
    kernels = _kernels()
    if kernels is None:
        yield
        return
    get, set_ = kernels["threads"]["get"], kernels["threads"]["set"]
    with _THREADS.lock:
        if _THREADS.depth == 0:
            _THREADS.saved = max(1, int(get()))
            if _THREADS.saved != 1:
                set_(1)
        _THREADS.depth += 1
    try:
        yield
    finally:
        with _THREADS.lock:
            _THREADS.depth -= 1
            if _THREADS.depth == 0 and _THREADS.saved != 1:
                set_(_THREADS.saved)
