"""Sampling by reparameterization: a Gaussian sample differentiable in its mean and
log-variance, and the Gumbel-softmax relaxation of a categorical sample.

Random draws come from a :class:`portagrad.random.Generator` (``generator=``, else the
default one) in the input's library and on its device, and are constants of the graph.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import float_arg, same_library, wrap
from .._core import float_var as _float
from ..std.elementwise import exp
from .activation import softmax
from .config import generator_or_default

__all__ = ["gaussian", "gumbel_softmax"]


def gaussian(mean: Any, ln_var: Any, *, eps: Any = None, return_eps: bool = False,
             generator: Any = None) -> Any:
    """A sample ``mean + exp(ln_var / 2) * eps`` of ``N(mean, exp(ln_var))`` with
    ``eps ~ N(0, 1)`` (drawn, or given to replay a sample); differentiable in ``mean`` and
    ``ln_var``. With ``return_eps`` also ``eps``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.gaussian(np.array([1.0]), np.array([np.log(4.0)]), eps=np.array([0.5])).array
    array([2.])
    """
    op = "gaussian"
    same_library(op, (("mean", mean), ("ln_var", ln_var), ("eps", eps)))
    m, lv = _float(mean, op, "mean"), _float(ln_var, op, "ln_var")
    if tuple(m.array.shape) != tuple(lv.array.shape):
        raise ShapeError(f"{op}(ln_var): expected mean's shape {tuple(m.array.shape)}, got "
                         f"{tuple(lv.array.shape)}")
    xp = m.xp
    a = m.array
    if eps is None:
        ea = generator_or_default(generator).normal(tuple(a.shape), like=a)
    else:
        ea = _float(eps, op, "eps").array
        if tuple(ea.shape) != tuple(a.shape):
            raise ShapeError(f"{op}(eps): expected mean's shape {tuple(a.shape)}, got "
                             f"{tuple(ea.shape)}")
    y = m + exp(lv * 0.5) * wrap(ea, xp)
    return (y, ea) if return_eps else y


def gumbel_softmax(log_pi: Any, tau: float = 0.1, axis: int = 1, *,
                   generator: Any = None) -> Variable:
    """A relaxed one-hot sample ``softmax((log_pi + g) / tau, axis)`` with Gumbel(0, 1)
    noise ``g``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> g = pg.random.Generator(0)
    >>> y = pg.ops.gumbel_softmax(np.log(np.full((2, 3), 1 / 3)), generator=g)
    >>> np.allclose(y.array.sum(axis=1), 1.0)
    True
    """
    op = "gumbel_softmax"
    lp = _float(log_pi, op, "log_pi")
    tau = float_arg(op, "tau", tau)
    xp = lp.xp
    a = lp.array
    if a.ndim < 1:
        return wrap(xp.ones((), dtype=a.dtype, device=a.device), xp)
    tiny = float(xp.finfo(a.dtype).smallest_normal)
    uni = generator_or_default(generator).uniform(tuple(a.shape), tiny, 1.0, like=a)
    g = -xp.log(-xp.log(uni))
    return softmax((lp + wrap(g, xp)) / tau, axis=axis)
