"""Parameter: a Variable that a Module owns and an optimizer updates.

A Parameter may be created before its shape is known (``Linear(10)`` does not know its
input size). It is then *uninitialized* until the module's first call, which creates the
array in the namespace, on the device and in the floating dtype of that first input, so the
same model code runs on any library by being given that library's arrays.
"""

from __future__ import annotations

from typing import Any

from .._errors import GradientError, ShapeError
from ..tape._variable import Variable, _init_variable
from ..xp import default_float, namespace_of

__all__ = ["Parameter", "UNINITIALIZED"]


class _Uninitialized:
    """Stands in a state dict for the array of a parameter not created yet: loading a
    checkpoint accepts any shape there and creates the parameter."""

    __portagrad_lazy__ = True
    shape = None

    def __repr__(self) -> str:
        return "<uninitialized>"


UNINITIALIZED = _Uninitialized()


class Parameter(Variable):
    """A trainable Variable (``requires_grad=True``), possibly created lazily.

    Parameters
    ----------
    array
        The initial value, an array of any Array API library; ``None`` makes an
        uninitialized parameter whose array is drawn by ``initializer`` on first use.
    initializer
        A callable ``initializer(shape, xp=..., device=..., dtype=...) -> array`` (any of
        :mod:`portagrad.nn.init`), used by :meth:`initialize`.
    name
        Optional name, shown in ``repr`` and error messages.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.zeros(3))
    >>> p.requires_grad, p.shape
    (True, (3,))
    >>> lazy = pg.nn.Parameter(initializer=pg.nn.init.Constant(0.5))
    >>> lazy.is_initialized
    False
    >>> lazy.initialize((2,), like=np.zeros(1, dtype=np.float32))
    >>> lazy.array
    array([0.5, 0.5], dtype=float32)
    """

    __slots__ = ("initializer",)

    def __init__(self, array: Any = None, *, initializer: Any = None,
                 name: str | None = None) -> None:
        self.initializer = initializer
        if array is not None:
            super().__init__(array, requires_grad=True, name=name)
            if not self.requires_grad:
                raise GradientError(
                    f"Parameter(array): expected a floating-point array, got dtype "
                    f"{array.dtype}. Keep integer state in a buffer (register_buffer)."
                )
            return
        if initializer is None:
            raise ValueError(
                "Parameter(): expected an array or an initializer, got neither"
            )
        _init_variable(self, None, None, True, name=name)

    @property
    def is_initialized(self) -> bool:
        """Whether the parameter has an array yet."""
        return self.array is not None

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the array (raises if the parameter is not initialized yet)."""
        if self.array is None:
            raise ShapeError(
                f"Parameter {self.name or ''}: not initialized yet; its shape is inferred "
                f"at the module's first call (or call initialize(shape, like=x))"
            )
        return tuple(self.array.shape)

    def initialize(self, shape: tuple[int, ...], *, like: Any = None, xp: Any = None,
                   device: Any = None, dtype: Any = None) -> None:
        """Create the array with ``self.initializer``.

        ``like`` (an array or Variable) gives the namespace, the device and, when it is
        floating, the dtype; otherwise ``xp``/``device``/``dtype`` do, the dtype defaulting
        to the namespace's default floating dtype.
        """
        if like is not None:
            a = like.array if isinstance(like, Variable) else like
            xp = namespace_of(a)
            device = a.device
            if dtype is None and xp.isdtype(a.dtype, "real floating"):
                dtype = a.dtype
        if xp is None:
            from ..xp import default_namespace

            xp = default_namespace()
        if dtype is None:
            dtype = default_float(xp, device)
        init = self.initializer
        if init is None:
            from .init import Zeros

            init = Zeros()
        array = init(tuple(int(s) for s in shape), xp=xp, device=device, dtype=dtype)
        self.array = array
        self.xp = namespace_of(array)
        self.grad_var = None

    def set_array(self, array: Any) -> None:
        """Replace the value (any namespace); the parameter keeps its identity, so
        optimizer state keyed on it stays valid."""
        self.array = array
        self.xp = namespace_of(array)

    def __deepcopy__(self, memo: dict) -> Parameter:
        if self.array is None:
            new = Parameter(initializer=self.initializer, name=self.name)
        else:
            new = Parameter(self.xp.asarray(self.array, copy=True), initializer=self.initializer,
                            name=self.name)
            new.requires_grad = self.requires_grad
        memo[id(self)] = new
        return new

    def __repr__(self) -> str:
        if self.array is None:
            name = f", name={self.name!r}" if self.name else ""
            return f"Parameter(<uninitialized>{name})"
        return f"Parameter({self.array!r})"
