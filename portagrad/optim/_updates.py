"""The update maths shared by the two optimizer faces: ``portagrad.optim`` (PyTorch's
names) and ``portagrad.chainer.optimizers`` (Chainer's). Each gradient method that both
libraries have is written once here, with an option for every place where the two
differ; each face maps its own hyperparameters and state names onto these functions.

The functions work on raw arrays of one library (``xp``). They update ``param`` and the
state arrays in place where the library allows it (and rebind on immutable libraries),
return the new arrays, and never write ``grad``.

Where the two libraries differ:

- momentum: PyTorch's buffer sums gradients and the step multiplies it by ``lr``;
  Chainer's ``MomentumSGD``/``NesterovAG`` velocity holds ``-lr * grad`` already, so
  changing ``lr`` mid-run affects only new gradients. Both are :func:`momentum_step`
  with other coefficients (``grad_scale``, ``step``).
- Adam: PyTorch bias-corrects ``eps`` (it is added to ``sqrt(v / (1 - beta2**t))``),
  Chainer adds it to ``sqrt(v)`` (``eps_bias_corrected=False``, also torch's
  ``SparseAdam``); the weight decay factor is the caller's ``decay`` (PyTorch's
  ``1 - lr * weight_decay``, Chainer's ``1 - eta * weight_decay_rate``); Chainer's
  ``eta`` is ``schedule``; AdaBound clips the per-element step into ``bounds``.
- RMSprop: ``eps`` outside or inside the square root, centred or not, with momentum
  in either convention (Chainer's ``RMSpropGraves`` is centred, ``eps`` inside, and
  keeps ``lr`` in its velocity).
- Adagrad: PyTorch's ``lr_decay``; Adadelta: PyTorch's ``lr`` (Chainer's is 1).
"""

from __future__ import annotations

import math
from typing import Any

from ..xp._optim import adam_update, moments, sgd_update

__all__ = ["momentum_step", "adagrad", "adadelta", "rmsprop", "moments", "adam"]


def momentum_step(xp: Any, param: Any, grad: Any, buf: Any, *, momentum: float,
                  grad_scale: float, step: float,
                  nesterov: str | None = None) -> tuple[Any, Any]:
    """Heavy-ball or Nesterov momentum::

        buf = momentum * buf + grad_scale * grad      (buf None: a copy of grad)
        param -= step * buf
        param -= step * (grad_scale * grad + momentum * buf)       (nesterov "torch")
        param -= step * ((1 + momentum) * grad_scale * grad + momentum**2 * buf)
                                                                  (nesterov "chainer")

    PyTorch's SGD: ``grad_scale = 1 - dampening``, ``step = lr`` (its first step takes
    the gradient itself, undampened: ``buf`` None). Chainer's ``MomentumSGD`` and
    ``NesterovAG``: ``grad_scale = -lr``, ``step = -1`` (``buf`` is Chainer's velocity);
    ``CorrectedMomentumSGD``: ``grad_scale = -1``, ``step = -lr``. The two Nesterov
    forms agree for a buffer of the previous step; Chainer's ``NesterovAG`` applies
    Bengio's form to the updated buffer. Returns ``(param, buf)``.

    Parameters
    ----------
    xp
        The arrays' namespace.
    param, grad, buf
        The parameter, its gradient and the momentum buffer (or None).
    momentum, grad_scale, step
        The coefficients above.
    nesterov
        None, ``"torch"`` or ``"chainer"``: the form of the step.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.optim._updates import momentum_step
    >>> momentum_step(xp, np.array([1.0]), np.array([2.0]), np.array([1.0]),
    ...               momentum=0.5, grad_scale=1.0, step=0.1)
    (array([0.75]), array([2.5]))
    """
    if buf is None:
        buf = xp.asarray(grad, copy=True)
    else:
        buf *= momentum
        buf += grad_scale * grad
    if nesterov is None:
        direction = buf
    elif nesterov == "torch":
        direction = grad_scale * grad + momentum * buf
    else:
        direction = ((1.0 + momentum) * grad_scale) * grad + (momentum * momentum) * buf
    return sgd_update(xp, param, direction, step), buf


def adagrad(xp: Any, param: Any, grad: Any, acc: Any, *, lr: float, eps: float,
            lr_decay: float = 0.0, t: int = 1) -> tuple[Any, Any]:
    """AdaGrad: ``acc += grad**2``; ``param -= lr_t * grad / (sqrt(acc) + eps)`` with
    ``lr_t = lr / (1 + (t - 1) * lr_decay)`` (PyTorch's decay; Chainer has none).
    Returns ``(param, acc)``.

    Parameters
    ----------
    xp
        The arrays' namespace.
    param, grad, acc
        The parameter, its gradient and the sum of squared gradients.
    lr, eps, lr_decay, t
        Learning rate, the term added to the root, the decay and the step (from 1).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.optim._updates import adagrad
    >>> adagrad(xp, np.array([1.0]), np.array([4.0]), np.zeros(1), lr=0.5, eps=0.0)
    (array([0.5]), array([16.]))
    """
    acc += grad * grad
    lr_t = lr / (1.0 + (t - 1.0) * lr_decay) if lr_decay else lr
    return sgd_update(xp, param, grad / (xp.sqrt(acc) + eps), lr_t), acc


def adadelta(xp: Any, param: Any, grad: Any, sq: Any, acc: Any, *, rho: float, eps: float,
             lr: float = 1.0) -> tuple[Any, Any, Any]:
    """Zeiler's ADADELTA::

        sq = rho * sq + (1 - rho) * grad**2
        delta = sqrt(acc + eps) / sqrt(sq + eps) * grad
        acc = rho * acc + (1 - rho) * delta**2
        param -= lr * delta                 (Chainer: lr 1)

    Returns ``(param, sq, acc)``.

    Parameters
    ----------
    xp
        The arrays' namespace.
    param, grad, sq, acc
        The parameter, its gradient, the running mean squares of gradients and steps.
    rho, eps, lr
        Decay, the term added inside both roots, and PyTorch's learning rate.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.optim._updates import adadelta
    >>> p, sq, acc = adadelta(xp, np.array([1.0]), np.array([1.0]), np.zeros(1), np.zeros(1),
    ...                       rho=0.0, eps=1.0)
    >>> p.round(4), sq
    (array([0.2929]), array([1.]))
    """
    sq *= rho
    sq += (1.0 - rho) * (grad * grad)
    delta = xp.sqrt(acc + eps) / xp.sqrt(sq + eps) * grad
    acc *= rho
    acc += (1.0 - rho) * (delta * delta)
    return sgd_update(xp, param, delta, lr), sq, acc


def rmsprop(xp: Any, param: Any, grad: Any, sq: Any, *, lr: float, alpha: float, eps: float,
            eps_inside_sqrt: bool = False, grad_avg: Any = None, momentum: float = 0.0,
            buf: Any = None, lr_in_buffer: bool = False) -> tuple[Any, Any, Any, Any]:
    """RMSprop, plain or centred, with or without momentum::

        sq = alpha * sq + (1 - alpha) * grad**2
        grad_avg = alpha * grad_avg + (1 - alpha) * grad        (centred: grad_avg given)
        var = sq - grad_avg**2 (centred) or sq
        u = grad / (sqrt(var) + eps)       (eps_inside_sqrt: grad / sqrt(var + eps))
        param -= lr * u                     (buf None)

    With ``buf`` the step goes through :func:`momentum_step`: PyTorch's
    ``buf = momentum * buf + u; param -= lr * buf``, or with ``lr_in_buffer``
    (Chainer's ``RMSpropGraves``) ``buf = momentum * buf - lr * u; param += buf``.
    Returns ``(param, sq, grad_avg, buf)``.

    Parameters
    ----------
    xp
        The arrays' namespace.
    param, grad, sq
        The parameter, its gradient and the running mean square.
    lr, alpha, eps, eps_inside_sqrt
        Learning rate, decay and the term added to the root (or inside it).
    grad_avg, momentum, buf, lr_in_buffer
        The running mean gradient (centred), the momentum and its buffer.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.optim._updates import rmsprop
    >>> p, sq, _, _ = rmsprop(xp, np.array([1.0]), np.array([1.0]), np.zeros(1), lr=0.01,
    ...                       alpha=0.75, eps=0.0)
    >>> p, sq
    (array([0.98]), array([0.25]))
    """
    sq *= alpha
    sq += (1.0 - alpha) * (grad * grad)
    var = sq
    if grad_avg is not None:
        grad_avg += (1.0 - alpha) * (grad - grad_avg)
        var = sq - grad_avg * grad_avg
    u = grad / (xp.sqrt(var + eps) if eps_inside_sqrt else xp.sqrt(var) + eps)
    if buf is None:
        return sgd_update(xp, param, u, lr), sq, grad_avg, None
    param, buf = momentum_step(xp, param, u, buf, momentum=momentum,
                               grad_scale=-lr if lr_in_buffer else 1.0,
                               step=-1.0 if lr_in_buffer else lr)
    return param, sq, grad_avg, buf


def adam(xp: Any, param: Any, grad: Any, m: Any, v: Any, vhat: Any, *, lr: float,
         beta1: float, beta2: float, eps: float, t: int, decay: float = 1.0,
         eps_bias_corrected: bool = True, schedule: float = 1.0,
         bounds: tuple[float, float] | None = None) -> tuple[Any, Any, Any, Any]:
    """Adam with its variants::

        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        vhat = maximum(vhat, v)                                  (AMSGrad: vhat given)
        lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)
        s = lr_t / (sqrt(vhat) + eps * sqrt(1 - beta2**t))       (PyTorch's Adam)
        s = lr_t / (sqrt(vhat) + eps)          (eps_bias_corrected False: Chainer, SparseAdam)
        s = clip(s, *bounds)                                     (AdaBound)
        param = decay * param - schedule * s * m

    ``decay`` is the decoupled weight decay factor (AdamW), ``schedule`` Chainer's
    ``eta``. Returns ``(param, m, v, vhat)``.

    Parameters
    ----------
    xp
        The arrays' namespace.
    param, grad, m, v, vhat
        The parameter, its gradient, the two moments and their running maximum (or None).
    lr, beta1, beta2, eps, t
        Step size, the moments' decays, the term added to the root, the step (from 1).
    decay, eps_bias_corrected, schedule, bounds
        The options above.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.optim._updates import adam
    >>> p, m, v, _ = adam(xp, np.array([1.0]), np.array([3.0]), np.zeros(1), np.zeros(1),
    ...                   None, lr=0.1, beta1=0.9, beta2=0.999, eps=0.0, t=1)
    >>> p.round(6)
    array([0.9])
    """
    c2 = math.sqrt(1.0 - beta2**t)
    lr_t = lr * c2 / (1.0 - beta1**t)
    e = eps * c2 if eps_bias_corrected else eps
    if bounds is None:
        return adam_update(xp, param, grad, m, v, vhat, beta1, beta2, e, schedule * lr_t, decay)
    # AdaBound clips the per-element step, so the step cannot be the kernel's scalar.
    m, v, vhat = moments(xp, grad, m, v, vhat, beta1, beta2)
    s = xp.clip(lr_t / (xp.sqrt(v if vhat is None else vhat) + e), bounds[0], bounds[1])
    if decay != 1.0:
        param *= decay
    param -= schedule * (s * m)
    return param, m, v, vhat
