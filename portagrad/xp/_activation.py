"""Kernels of activations and their gradients.

The exact GELU and its slope are a handful of elementwise passes each. NumPy's fast paths
run them a block of elements at a time, every pass over a block that stays in the core's
L2 cache, with MKL's vector erf and exp (:mod:`portagrad.xp._mkl`), and the blocks split
over threads when NumPy's BLAS has several: a pass over a 1M-element float32 array that
left the cache cost about 0.6 ms, over a block in it a quarter of that. For float32 the
same operations run in one compiled loop (:mod:`portagrad.xp._native`) on chunks that stay
in L1, and ReLU's gradient in one pass without a mask.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._kernels import kernel
from ._mkl import vector_address, vector_function
from ._native import address, fits_f32, native
from ._special import erf

__all__ = ["relu", "relu_grad", "gelu", "gelu_slope", "sigmoid"]

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Elements per block: a block's float32 buffers (four at most) stay in a 1 MB L2.
GELU_BLOCK = 1 << 16


@kernel
def relu(xp: Any, x: Any) -> Any:
    """``max(x, 0)``, NaN kept (a ``where`` on ``x > 0`` would turn it into 0).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._activation import relu
    >>> with pure_standard():
    ...     relu(xp, np.array([-1.0, 2.0, np.nan])).tolist()
    [0.0, 2.0, nan]
    """
    return xp.maximum(x, xp.zeros((), dtype=x.dtype, device=x.device))


@kernel
def relu_grad(xp: Any, gy: Any, y: Any) -> Any:
    """``gy`` where ``y > 0``, else 0: the gradient of ReLU from its output.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._activation import relu_grad
    >>> with pure_standard():
    ...     relu_grad(xp, np.array([1.0, 2.0]), np.array([0.0, 3.0]))
    array([0., 2.])
    """
    return gy * xp.astype(y > 0, gy.dtype)


# -- fast paths (attached by portagrad.xp._fastpaths) --------------------------------------
def _contiguous_pair(a: Any, b: Any) -> bool:
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape
            and a.flags.c_contiguous and b.flags.c_contiguous)


def _relu_numpy(xp: Any, x: Any) -> Any:
    # On several threads a large array splits into runs, one per thread.
    if (type(x) is not np.ndarray or not x.flags.c_contiguous
            or not np.issubdtype(x.dtype, np.floating)):
        return NotImplemented
    from ._threads import elementwise_in_parts

    zero = np.zeros((), dtype=x.dtype)
    y = np.empty_like(x)
    if not elementwise_in_parts(lambda a, out: np.maximum(a, zero, out=out), y, x):
        np.maximum(x, zero, out=y)
    return y


def _relu_mask(gy: Any, y: Any, out: Any) -> Any:
    # NumPy multiplies by a boolean mask directly: no float copy of the mask. The
    # compiled loop makes one pass without the mask at all.
    lib = native()
    if lib is not None and fits_f32(gy, y, out):
        lib.relu_grad(gy.ctypes.data, y.ctypes.data, out.ctypes.data, out.size)
        return out
    return np.multiply(gy, y > 0, out=out)


def _relu_grad_numpy(xp: Any, gy: Any, y: Any) -> Any:
    if not (_contiguous_pair(gy, y) and gy.dtype == y.dtype):
        return np.multiply(gy, y > 0)
    from ._threads import elementwise_in_parts

    out = np.empty_like(gy)
    if not elementwise_in_parts(_relu_mask, out, gy, y):
        _relu_mask(gy, y, out)
    return out


def _relu_grad_cupy(xp: Any, gy: Any, y: Any) -> Any:
    return gy * (y > 0)


@kernel
def gelu(xp: Any, x: Any) -> Any:
    """The exact GELU ``x Phi(x) = x (1 + erf(x / sqrt 2)) / 2``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._activation import gelu
    >>> with pure_standard():
    ...     gelu(xp, np.array([0.0, 1.0])).round(4)
    array([0.    , 0.8413])
    """
    return x * (erf(xp, x * _SQRT_HALF) + 1.0) * 0.5


@kernel
def gelu_slope(xp: Any, x: Any, gy: Any = None) -> Any:
    """The derivative of the exact GELU, ``Phi(x) + x phi(x)``; times ``gy`` (of ``x``'s
    shape and dtype) when given, the gradient through it.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._activation import gelu_slope
    >>> with pure_standard():
    ...     gelu_slope(xp, np.array([0.0, 1.0]), np.array([2.0, 1.0])).round(4)
    array([1.    , 1.0833])
    """
    cdf = (erf(xp, x * _SQRT_HALF) + 1.0) * 0.5
    s = cdf + x * xp.exp(x * x * -0.5) * _INV_SQRT_2PI
    return s if gy is None else gy * s


@kernel
def sigmoid(xp: Any, x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._activation import sigmoid
    >>> with pure_standard():
    ...     sigmoid(xp, np.array([0.0, 1000.0, -1000.0])).tolist()
    [0.5, 1.0, 0.0]
    """
    # exp(-|x|) never overflows; the two forms agree and each is accurate on its side.
    e = xp.exp(-xp.abs(x))
    r = 1 / (1 + e)
    return xp.where(x >= 0, r, e * r)


# Below these the quotient's result would be subnormal (or exp(-x) overflow): the default
# keeps those digits.
_SIGMOID_LOW = {np.dtype(np.float32): -80.0, np.dtype(np.float64): -700.0}


def _sigmoid_numpy(xp: Any, x: Any) -> Any:
    # 1 / (1 + exp(-x)) as written, on MKL's exp: four passes where the default takes
    # eight (16 us against 33 for an LSTM step's (20, 800) float32 gates).
    if (type(x) is not np.ndarray or not (x.dtype == np.float32 or x.dtype == np.float64)
            or not x.flags.c_contiguous or x.size == 0):
        return NotImplemented
    exp_ = vector_function("exp", x.dtype)
    if exp_ is None or not float(x.min()) > _SIGMOID_LOW[x.dtype]:  # NaN declines too
        return NotImplemented
    t = np.negative(x, out=np.empty_like(x))  # an array even for a 0-d x (not a scalar)
    flat = t.reshape(-1)
    exp_(flat, flat)
    t += 1.0
    np.reciprocal(t, out=t)
    return t


def _blocked(x: Any, gy: Any, body: Any) -> Any:
    """``body(x_block, gy_block or None, out_block, scratch, erf, exp)`` over L2-sized blocks of
    contiguous float NumPy arrays, the blocks in parts over threads; NotImplemented where
    the arrays or MKL do not fit."""
    if (type(x) is not np.ndarray or not (x.dtype == np.float32 or x.dtype == np.float64)
            or not x.flags.c_contiguous or x.size == 0
            or (gy is not None and (type(gy) is not np.ndarray or gy.dtype != x.dtype
                                    or gy.shape != x.shape or not gy.flags.c_contiguous))):
        return NotImplemented
    erf_, exp_ = vector_function("erf", x.dtype), vector_function("exp", x.dtype)
    if erf_ is None or exp_ is None:
        return NotImplemented
    from ._threads import in_parts, parts

    flat = x.reshape(-1)
    gflat = None if gy is None else gy.reshape(-1)
    out = np.empty_like(flat)
    n = flat.shape[0]
    blocks = [(s0, min(n, s0 + GELU_BLOCK)) for s0 in range(0, n, GELU_BLOCK)]
    lib = native()
    if lib is not None and x.dtype == np.float32:
        # The same operations in the compiled loop, on chunks that stay in L1.
        (verf, mode), (vexp, _) = (vector_address(f, x.dtype) for f in ("erf", "exp"))
        # Runs of whole blocks in parts on the compiled loops' own threads.
        lib.gelu(flat.ctypes.data, address(gflat), out.ctypes.data, 0, n,
                 int(body is _gelu_slope_block), verf, vexp, mode, _SQRT_HALF, _INV_SQRT_2PI,
                 len(parts(len(blocks))), GELU_BLOCK)
        return out.reshape(x.shape)

    def run(part: slice) -> None:
        scratch = [np.empty(GELU_BLOCK, dtype=x.dtype) for _ in range(2)]
        for s0, s1 in blocks[part]:
            k = s1 - s0
            body(flat[s0:s1], None if gflat is None else gflat[s0:s1], out[s0:s1],
                 [b[:k] for b in scratch], erf_, exp_)

    in_parts(parts(len(blocks)), run)
    return out.reshape(x.shape)


def _gelu_block(x: Any, gy: Any, out: Any, scratch: list, erf_: Any, exp_: Any) -> None:
    t = scratch[0]
    np.multiply(x, _SQRT_HALF, out=t)
    erf_(t, t)
    t += 1.0
    np.multiply(t, x, out=out)
    out *= 0.5


def _gelu_slope_block(x: Any, gy: Any, out: Any, scratch: list, erf_: Any,
                      exp_: Any) -> None:
    a, b = scratch
    np.multiply(x, _SQRT_HALF, out=a)
    erf_(a, a)
    a += 1.0
    a *= 0.5  # Phi(x)
    np.multiply(x, x, out=b)
    b *= -0.5
    exp_(b, b)
    b *= x
    b *= _INV_SQRT_2PI  # x phi(x)
    if gy is None:
        np.add(a, b, out=out)
    else:
        a += b
        np.multiply(a, gy, out=out)


def _gelu_numpy(xp: Any, x: Any) -> Any:
    return _blocked(x, None, _gelu_block)


def _gelu_slope_numpy(xp: Any, x: Any, gy: Any = None) -> Any:
    return _blocked(x, gy, _gelu_slope_block)


# The kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {"relu_grad": relu_grad.default, "gelu": gelu.default,
            "gelu_slope": gelu_slope.default, "sigmoid": sigmoid.default}
