"""portagrad: define-by-run automatic differentiation on the Python Array API standard.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> x = pg.Variable(np.array([1.0, 2.0]))
>>> y = pg.ops.sum(pg.ops.tanh(x) ** 2)
>>> (gx,) = pg.grad(y, x)
>>> gx.shape
(2,)
"""

from . import amp as amp
from . import autograd as autograd
from . import data as data
from . import gradcheck as gradcheck  # noqa: E402  (needs ops)
from . import io as io
from . import nn as nn
from . import ops as ops
from . import optim as optim
from . import random as random
from . import reporter as reporter
from . import training as training
from . import xp as xp
from ._errors import (
    AxisError as AxisError,
)
from ._errors import (
    CheckpointError as CheckpointError,
)
from ._errors import (
    DeviceMismatchError as DeviceMismatchError,
)
from ._errors import (
    DTypeError as DTypeError,
)
from ._errors import (
    GradientError as GradientError,
)
from ._errors import (
    IndexOutOfRangeError as IndexOutOfRangeError,
)
from ._errors import (
    LinAlgError as LinAlgError,
)
from ._errors import (
    NamespaceMismatchError as NamespaceMismatchError,
)
from ._errors import (
    NonFiniteError as NonFiniteError,
)
from ._errors import (
    PortagradError as PortagradError,
)
from ._errors import (
    PortagradIndexError as PortagradIndexError,
)
from ._errors import (
    PortagradNotImplementedError as PortagradNotImplementedError,
)
from ._errors import (
    PortagradTypeError as PortagradTypeError,
)
from ._errors import (
    PortagradValueError as PortagradValueError,
)
from ._errors import (
    ShapeError as ShapeError,
)
from ._errors import (
    SizeError as SizeError,
)
from .autograd import hessian as hessian
from .autograd import hvp as hvp
from .autograd import jacobian as jacobian
from .autograd import jvp as jvp
from .autograd import vhp as vhp
from .autograd import vjp as vjp
from .random import manual_seed as manual_seed
from .tape import (
    Variable as Variable,
)
from .tape import (
    as_variable as as_variable,
)
from .tape import (
    backward as backward,
)
from .tape import (
    debug as debug,
)
from .tape import (
    enable_grad as enable_grad,
)
from .tape import (
    grad as grad,
)
from .tape import (
    is_grad_enabled as is_grad_enabled,
)
from .tape import (
    no_grad as no_grad,
)
from .tape import (
    set_grad_enabled as set_grad_enabled,
)

__version__ = "0.1.0"


def __getattr__(name: str):
    # portagrad.vision and portagrad.parallel are imported on first use: most programs
    # need neither (and parallel brings MPI in).
    if name in ("vision", "parallel"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'portagrad' has no attribute {name!r}")
