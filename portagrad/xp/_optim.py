"""Kernels of the optimizers' parameter updates.

An update reads the gradient and never writes it (``param.grad`` stays what backward
left). The defaults are pure standard: they update the parameter in place with the
standard's in-place operators (which rebind on immutable libraries) and return it.

The fast paths make fewer passes over memory, which is what an update costs:
torch's ``add_`` with ``alpha`` is one pass; NumPy has no fused multiply-add, so its fast
path calls BLAS ``axpy`` (``y += a * x``, one pass) in the OpenBLAS that NumPy's wheels
already load (no second BLAS library, no extra memory; bound and checked by
:mod:`portagrad.xp._openblas`), and declines where that binding is off or declined. A scratch
array kept across steps for ``lr * grad`` was measured slower than a fresh one: the fresh
one reuses memory that backward just freed and that is still in cache.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernels import Kernel
from ._native import fits_f32, native
from ._openblas import axpy

__all__ = ["sgd_update", "momentum_update", "adam_update", "moments"]


def _update_kernel(fn: Any) -> Kernel:
    """A kernel kept out of the op registry (``KERNELS``): the conformance suite reaches
    the kernels of that registry through ops, and no op reaches an update. Their fast
    paths are compared with these defaults by ``tests/xp/test_optim_kernels.py``."""
    return Kernel(fn.__name__, fn)


@_update_kernel
def sgd_update(xp: Any, param: Any, grad: Any, lr: float) -> Any:
    """``param -= lr * grad``; returns ``param``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._optim import sgd_update
    >>> with pure_standard():
    ...     sgd_update(xp, np.array([1.0, 2.0]), np.array([1.0, -1.0]), 0.5)
    array([0.5, 2.5])
    """
    param -= lr * grad
    return param


@_update_kernel
def momentum_update(xp: Any, param: Any, grad: Any, v: Any, lr: float,
                    momentum: float) -> tuple[Any, Any]:
    """Chainer's momentum SGD: ``v = momentum * v - lr * grad; param += v``; returns
    ``(param, v)``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._optim import momentum_update
    >>> with pure_standard():
    ...     momentum_update(xp, np.array([1.0]), np.array([2.0]), np.array([1.0]), 0.5, 0.9)
    (array([0.9]), array([-0.1]))
    """
    v *= momentum
    v -= lr * grad
    param += v
    return param, v


def moments(xp: Any, grad: Any, m: Any, v: Any, vhat: Any, beta1: float,
            beta2: float) -> tuple[Any, Any, Any]:
    """The running moments of Adam and its relatives (NAdam, RAdam, AdaBound)::

        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        vhat = maximum(vhat, v)                                  (vhat None: stays None)

    The default of ``adam_update`` runs these first; the optimizers whose step is not
    Adam's (NAdam, RAdam, AdaBound) call them on their own. Returns
    ``(m, v, vhat)``.

    Parameters
    ----------
    xp
        The arrays' namespace.
    grad, m, v, vhat
        The gradient, the two moments and their running maximum (or None).
    beta1, beta2
        The moments' decays.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._optim import moments
    >>> moments(xp, np.array([2.0]), np.zeros(1), np.zeros(1), None, 0.5, 0.75)
    (array([1.]), array([1.]), None)
    """
    m *= beta1
    m += (1.0 - beta1) * grad
    v *= beta2
    v += (1.0 - beta2) * (grad * grad)
    if vhat is not None:
        vhat = xp.maximum(vhat, v)
    return m, v, vhat


@_update_kernel
def adam_update(xp: Any, param: Any, grad: Any, m: Any, v: Any, vhat: Any, beta1: float,
                beta2: float, eps: float, step: float, decay: float) -> tuple[Any, Any, Any, Any]:
    """One Adam step with the bias correction folded into ``step`` and ``eps``::

        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        vhat = maximum(vhat, v)                       (AMSGrad; vhat None: v itself)
        param = decay * param - step * m / (sqrt(vhat) + eps)

    ``decay`` is AdamW's ``1 - lr * weight_decay`` (1.0 for Adam). Returns
    ``(param, m, v, vhat)``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._optim import adam_update
    >>> z = np.zeros(1)
    >>> with pure_standard():
    ...     p, m, v, _ = adam_update(xp, np.array([1.0]), np.array([2.0]), z.copy(), z.copy(),
    ...                              None, 0.5, 0.75, 0.0, 0.1, 1.0)
    >>> p, m, v
    (array([0.9]), array([1.]), array([1.]))
    """
    m, v, vhat = moments(xp, grad, m, v, vhat, beta1, beta2)
    if decay != 1.0:
        param *= decay
    param -= m / (xp.sqrt(v if vhat is None else vhat) + eps) * step
    return param, m, v, vhat


# -- fast paths (attached by portagrad.xp._fastpaths) ---------------------------------------
# NumPy: BLAS axpy of the OpenBLAS NumPy loaded (portagrad.xp._openblas).
def _axpy_for(y: Any, x: Any) -> Any:
    """BLAS ``?axpy`` for updating ``y`` in place with ``x``, or None when it does not
    apply (binding off or declined, dtypes other than float32/float64 or not equal, shapes
    not equal, layouts not C-contiguous, ``y`` read-only)."""
    if (type(y) is not np.ndarray or type(x) is not np.ndarray or y.dtype != x.dtype
            or y.shape != x.shape or not y.flags.c_contiguous or not x.flags.c_contiguous
            or not y.flags.writeable):
        return None
    return axpy(y.dtype)


def _axpy(fn: Any, a: float, x: Any, y: Any) -> None:
    """``y += a * x`` in place (``y``, ``x`` as accepted by :func:`_axpy_for`)."""
    fn(y.size, a, x.ctypes.data, 1, y.ctypes.data, 1)


def _sgd_numpy(xp: Any, param: Any, grad: Any, lr: float) -> Any:
    fn = _axpy_for(param, grad)
    if fn is None:
        return NotImplemented
    _axpy(fn, -lr, grad, param)
    return param


def _momentum_numpy(xp: Any, param: Any, grad: Any, v: Any, lr: float,
                    momentum: float) -> Any:
    fn = _axpy_for(param, grad)
    if fn is None or _axpy_for(v, grad) is None:
        return NotImplemented
    v *= momentum
    _axpy(fn, -lr, grad, v)
    _axpy(fn, 1.0, v, param)
    return param, v


# Elements per block of the blocked Adam step: a block of the parameter, its gradient, two
# moments and a scratch buffer (float32: 1.3 MB) stays in L2 across the step's passes.
ADAM_BLOCK = 1 << 16


def _adam_numpy(xp: Any, param: Any, grad: Any, m: Any, v: Any, vhat: Any, beta1: float,
                beta2: float, eps: float, step: float, decay: float) -> Any:
    lib = native()
    if (lib is not None and vhat is None and fits_f32(param, grad, m, v)
            and param.flags.writeable and grad.shape == param.shape == m.shape == v.shape):
        return _adam_native(lib, param, grad, m, v, beta1, beta2, eps, step, decay)
    fn = _axpy_for(param, grad)
    if fn is None or _axpy_for(m, grad) is None or _axpy_for(v, grad) is None or (
            vhat is not None and _axpy_for(vhat, grad) is None):
        return NotImplemented
    if param.size > ADAM_BLOCK:
        return _adam_blocked(param, grad, m, v, vhat, beta1, beta2, eps, step, decay)
    # One temporary instead of seven.
    tmp = np.multiply(grad, grad)
    m *= beta1
    _axpy(fn, 1.0 - beta1, grad, m)
    v *= beta2
    _axpy(fn, 1.0 - beta2, tmp, v)
    if vhat is not None:
        np.maximum(vhat, v, out=vhat)
    np.sqrt(v if vhat is None else vhat, out=tmp)
    tmp += eps
    np.divide(m, tmp, out=tmp)
    if decay != 1.0:
        param *= decay
    _axpy(fn, -step, tmp, param)
    return param, m, v, vhat


def _adam_native(lib: Any, param: Any, grad: Any, m: Any, v: Any, beta1: float, beta2: float,
                 eps: float, step: float, decay: float) -> Any:
    """The default's float32 operations in its order in one compiled pass (each element
    read and written once), bit for bit the default's; runs of blocks split over threads."""
    from ._threads import parts

    n = param.size
    n_blocks = -(-n // ADAM_BLOCK)
    # Runs of whole blocks in parts on the compiled loops' own threads.
    lib.adam(param.ctypes.data, grad.ctypes.data, m.ctypes.data, v.ctypes.data, 0, n, beta1,
             1.0 - beta1, beta2, 1.0 - beta2, eps, step, decay, len(parts(n_blocks)),
             ADAM_BLOCK)
    return param, m, v, None


def _adam_blocked(param: Any, grad: Any, m: Any, v: Any, vhat: Any, beta1: float,
                  beta2: float, eps: float, step: float, decay: float) -> Any:
    """The default's operations in its order, a block at a time: every pass after the
    first over a block finds it in L2 (a step over 4M float32 parameters reads and writes
    each array once instead of three to five times), the blocks in parts over threads."""
    from ._threads import in_parts, parts

    arrays = [a.reshape(-1) for a in (param, grad, m, v)]
    hat = None if vhat is None else vhat.reshape(-1)
    n = arrays[0].shape[0]
    n_blocks = -(-n // ADAM_BLOCK)
    c1, c2 = 1.0 - beta1, 1.0 - beta2

    def run(part: slice) -> None:
        scratch = np.empty(min(n, ADAM_BLOCK), dtype=param.dtype)
        for b in range(part.start, part.stop):
            s = slice(b * ADAM_BLOCK, min(n, (b + 1) * ADAM_BLOCK))
            p, g, mb, vb = (a[s] for a in arrays)
            t = scratch[:p.shape[0]]
            mb *= beta1
            np.multiply(g, c1, out=t)
            mb += t
            vb *= beta2
            np.multiply(g, g, out=t)
            t *= c2
            vb += t
            if hat is not None:
                np.maximum(hat[s], vb, out=hat[s])
            np.sqrt(vb if hat is None else hat[s], out=t)
            t += eps
            np.divide(mb, t, out=t)
            if decay != 1.0:
                p *= decay
            t *= step
            p -= t

    in_parts(parts(n_blocks), run)
    return param, m, v, vhat


# -- torch ----------------------------------------------------------------------------------
def _sgd_torch(xp: Any, param: Any, grad: Any, lr: float) -> Any:
    param.add_(grad, alpha=-lr)
    return param


def _momentum_torch(xp: Any, param: Any, grad: Any, v: Any, lr: float,
                    momentum: float) -> Any:
    v.mul_(momentum).add_(grad, alpha=-lr)
    param.add_(v)
    return param, v


def _adam_torch(xp: Any, param: Any, grad: Any, m: Any, v: Any, vhat: Any, beta1: float,
                beta2: float, eps: float, step: float, decay: float) -> Any:
    import torch

    m.mul_(beta1).add_(grad, alpha=1.0 - beta1)
    v.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
    if vhat is not None:
        torch.maximum(vhat, v, out=vhat)
    denom = (v if vhat is None else vhat).sqrt().add_(eps)
    if decay != 1.0:
        param.mul_(decay)
    param.addcdiv_(m, denom, value=-step)
    return param, m, v, vhat


# Kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {k.name: k.default for k in (sgd_update, momentum_update, adam_update)}
