"""The define-by-run tape: Variable, primitives, the backward engine and its modes."""

from ._engine import backward as backward
from ._engine import grad as grad
from ._hooks import RemovableHandle as RemovableHandle
from ._mode import (
    debug as debug,
)
from ._mode import (
    enable_grad as enable_grad,
)
from ._mode import (
    is_debug as is_debug,
)
from ._mode import (
    is_grad_enabled as is_grad_enabled,
)
from ._mode import (
    no_grad as no_grad,
)
from ._mode import (
    set_grad_enabled as set_grad_enabled,
)
from ._node import PRIMITIVES as PRIMITIVES
from ._node import Node as Node
from ._node import Primitive as Primitive
from ._node import primitive as primitive
from ._tensor import install as _install_tensor_methods
from ._variable import Variable as Variable
from ._variable import as_variable as as_variable

_install_tensor_methods()
