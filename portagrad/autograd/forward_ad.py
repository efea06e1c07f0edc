"""Forward-mode differentiation, in the form of ``torch.autograd.forward_ad``.

Inside a :func:`dual_level` block, :func:`make_dual` attaches a tangent to an array or a
Variable, every op propagates it (``J t``, computed with portagrad ops), and
:func:`unpack_dual` reads the result's tangent. One forward pass gives the derivative
along one direction, whatever the number of outputs. Levels nest (forward-over-forward),
a backward pass inside a level carries tangents (forward-over-reverse: the tangent of a
gradient is a Hessian-vector product), and the tangents themselves can be differentiated
in reverse mode.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> import portagrad.autograd.forward_ad as fwAD
>>> w = np.array([[1.0, 2.0], [3.0, 4.0]])
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(np.array([1.0, 1.0]), np.array([1.0, 0.0]))
...     y = pg.ops.tanh(w @ x)
...     jvp = fwAD.unpack_dual(y).tangent         # d tanh(w x) / dx[0]
>>> np.allclose(jvp.array, (1 - np.tanh(w @ [1.0, 1.0]) ** 2) * w[:, 0])
True
"""

from ..tape._forward import (
    UnpackedDualTensor,
    dual_level,
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level",
           "exit_dual_level"]
