"""All parameters as one vector, and back."""

from __future__ import annotations

from typing import Any

from ... import ops
from ..._errors import PortagradTypeError, ShapeError, describe
from ...tape import Variable

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _param_list(parameters: Any, where: str) -> list[Variable]:
    if isinstance(parameters, Variable):
        raise PortagradTypeError(f"{where}(parameters): expected an iterable of Variables "
                                 f"(e.g. model.parameters()), got a single Variable")
    params = list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Variable):
            raise PortagradTypeError(f"{where}(parameters[{i}]): expected a Variable, got "
                                     f"{describe(p)}")
    return params


def parameters_to_vector(parameters: Any) -> Variable:
    """Flatten and concatenate the parameters into one 1-d Variable (differentiable).

    Parameters
    ----------
    parameters
        An iterable of Variables (e.g. ``model.parameters()``), of one library and device.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn.utils import parameters_to_vector
    >>> lin = pg.nn.Linear(3, 2)
    >>> parameters_to_vector(lin.parameters()).shape
    (8,)
    """
    params = _param_list(parameters, "parameters_to_vector")
    if not params:
        raise ShapeError("parameters_to_vector(parameters): expected at least one parameter, "
                         "got none")
    return ops.concat([ops.reshape(p, (-1,)) for p in params], axis=0)


def vector_to_parameters(vec: Any, parameters: Any) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into the parameters' values.

    Each parameter gets a new array of its own shape, library and dtype; its gradient and
    its place in the optimizer are kept.

    Parameters
    ----------
    vec
        A 1-d Variable or array with as many elements as all parameters together.
    parameters
        An iterable of Variables.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn.utils import parameters_to_vector, vector_to_parameters
    >>> lin = pg.nn.Linear(2, 1)
    >>> vector_to_parameters(np.array([1.0, 2.0, 3.0]), lin.parameters())
    >>> parameters_to_vector(lin.parameters()).tolist()
    [1.0, 2.0, 3.0]
    """
    arr = vec.array if isinstance(vec, Variable) else vec
    if not hasattr(arr, "shape") or len(arr.shape) != 1:
        raise PortagradTypeError(f"vector_to_parameters(vec): expected a 1-d Variable or "
                                 f"array, got {describe(vec)}")
    params = _param_list(parameters, "vector_to_parameters")
    total = sum(p.size for p in params)
    if int(arr.shape[0]) != total:
        raise ShapeError(f"vector_to_parameters(vec): expected {total} elements (the "
                         f"parameters' sizes together), got {int(arr.shape[0])}")
    offset = 0
    for p in params:
        n = p.size
        piece = arr[offset:offset + n]
        offset += n
        xp = p.xp
        value = xp.reshape(xp.asarray(piece, dtype=p.dtype, copy=True), p.shape)
        p.array = value
