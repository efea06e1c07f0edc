"""portagrad.ops.extend: what you need to write an op of your own.

The argument checks every built-in op starts with, public so that a new op accepts the
same inputs and fails with the same messages as the built-in ones, and
:func:`portagrad.tape.primitive` for its forward and vjp (see ``docs/adding-an-op.md``).

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> from portagrad.ops.extend import float_variable, primitive
>>> @primitive(saves="inputs", elementwise=True)
... def _square(xp, x):
...     return x * x
>>> @_square.defvjp
... def _(ctx, gy):
...     (x,) = ctx.inputs
...     return (2.0 * gy * x,)
>>> def square(x):
...     return _square(float_variable(x, "square"))
>>> x = pg.Variable(np.array([1.0, 3.0]))
>>> (g,) = pg.grad(pg.ops.sum(square(x)), x)
>>> g.array.tolist()
[2.0, 6.0]
"""

from __future__ import annotations

from typing import Any

from .._errors import DTypeError, PortagradTypeError, describe
from ..tape import primitive
from ..tape._variable import Variable, _leaf
from ..xp._dtypes import is_inexact as _is_floating_dtype
from ..xp._namespace import is_array, namespace_of

__all__ = ["input_variable", "require_float", "float_variable", "primitive"]


def input_variable(x: Any, op: str, arg: str = "x") -> Variable:
    """Return ``x`` as a Variable: Variables pass through, arrays become constant leaves.

    Parameters
    ----------
    x
        A :class:`~portagrad.Variable` or an array of any Array API library.
    op, arg
        The op's and the argument's names, used in the error message.

    Returns
    -------
    Variable
        ``x`` itself, or a leaf holding the array (no gradient is taken for it).

    Raises
    ------
    PortagradTypeError
        For anything else (lists, Python numbers), saying how to make an array.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.ops.extend import input_variable
    >>> input_variable(np.ones(2), "my_op").requires_grad
    False
    >>> input_variable([1.0], "my_op")
    Traceback (most recent call last):
    ...
    portagrad._errors.PortagradTypeError: my_op(x): expected a Variable or an array, ...
    """
    if type(x) is Variable or isinstance(x, Variable):
        return x
    if is_array(x):
        if not getattr(getattr(x, "dtype", None), "isnative", True):
            # Kernels (and the libraries' ufunc casting rules) take native byte order only.
            raise DTypeError(
                f"{op}({arg}): expected an array in the machine's byte order, got dtype "
                f"{x.dtype.str}. Convert first, e.g. x.astype(x.dtype.newbyteorder('='))")
        return _leaf(x, namespace_of(x))
    raise PortagradTypeError(
        f"{op}({arg}): expected a Variable or an array, got {describe(x)}. Wrap Python "
        f"values with portagrad.ops.asarray(...) or an array library first."
    )


def require_float(x: Variable, op: str, arg: str = "x") -> None:
    """Raise :class:`~portagrad.DTypeError` unless ``x`` has a floating dtype.

    Ops with a derivative need one: an integer input would otherwise be silently promoted
    or truncated depending on the library.

    Parameters
    ----------
    x
        The Variable to check (see :func:`input_variable`).
    op, arg
        The op's and the argument's names, used in the error message.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.extend import require_float
    >>> require_float(pg.Variable(np.ones(2)), "my_op")
    >>> require_float(pg.Variable(np.arange(2)), "my_op")
    Traceback (most recent call last):
    ...
    portagrad._errors.DTypeError: my_op(x): expected a floating-point array, got dtype int64. ...
    """
    if not _is_floating_dtype(x.xp, x.array.dtype):
        raise DTypeError(
            f"{op}({arg}): expected a floating-point array, got dtype {x.array.dtype}. "
            f"Cast first, e.g. portagrad.ops.astype(x, float32)."
        )


def float_variable(x: Any, op: str, arg: str = "x") -> Variable:
    """``x`` as a Variable of a floating dtype: :func:`input_variable`, then
    :func:`require_float`.

    Parameters
    ----------
    x
        A Variable or an array.
    op, arg
        The op's and the argument's names, used in error messages.

    Returns
    -------
    Variable

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.ops.extend import float_variable
    >>> float_variable(np.zeros(3, dtype=np.float32), "my_op").shape
    (3,)
    """
    v = input_variable(x, op, arg)
    require_float(v, op, arg)
    return v
