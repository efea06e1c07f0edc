"""Chainer's ``chainer.utils.type_check``: the expressions a function's
``check_type_forward(in_types)`` writes about its inputs, and ``expect`` that tests them.

Before a ``FunctionNode``/``Function`` runs its ``forward``, Chainer calls
``check_type_forward`` twice at most: first in *light mode*, where ``in_types`` holds the
input arrays themselves and every comparison is a plain bool; only when that check fails
does it run again with ``in_types`` a tuple of :class:`Variable` expressions, so
``expect`` can say which condition failed and with which values::

    Invalid operation is performed in: MyFunction (Forward)

    Expect: in_types[0].dtype == <class 'numpy.float32'>
    Actual: float64 != <class 'numpy.float32'>

Set ``chainer.config.type_check = False`` to skip the check.

Examples
--------
>>> from portagrad.chainer.utils import type_check
>>> x = type_check.Variable(3, "x")
>>> str(x * 2 + 1 > 5), (x * 2 + 1 > 5).eval()
('x * 2 + 1 > 5', True)
>>> try:
...     type_check.expect(x < 2)
... except type_check.InvalidType as e:
...     print(e)
Expect: x < 2
Actual: 3 >= 2
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy

__all__ = ["TypeInfo", "TypeInfoTuple", "LightTypeInfoTuple", "get_types",
           "get_light_types", "get_function_check_context", "Expr", "Atom", "Constant",
           "Variable", "GetAttr", "GetItem", "Call", "UnaryOperator", "BinaryOperator",
           "Testable", "BoolBinaryOperator", "InvalidType", "expect", "same_types", "eval",
           "make_variable", "LightMode", "light_mode", "in_light_mode", "prod",
           "expect_broadcast_shapes"]

_thread_local = threading.local()


@contextlib.contextmanager
def get_function_check_context(f: Any) -> Iterator[None]:
    """While inside, an :class:`InvalidType` names ``f.label`` as the function whose
    forward is being checked."""
    previous = getattr(_thread_local, "current_function", None)
    _thread_local.current_function = f
    try:
        yield
    finally:
        _thread_local.current_function = previous


def _numpy_dtype(dtype: Any) -> Any:
    """``dtype`` as NumPy's dtype of the same name (a torch or array-api-strict dtype
    compares with ``numpy.float32`` as Chainer's checks expect); unchanged when NumPy has
    no such dtype."""
    if isinstance(dtype, numpy.dtype):
        return dtype
    try:
        return numpy.dtype(str(dtype).rsplit(".", 1)[-1])
    except TypeError:
        return dtype


class TypeInfo:
    """The shape and dtype of one input array (``ndim`` and ``size`` follow from the
    shape)."""

    def __init__(self, shape: tuple, dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size


class TypeInfoTuple(tuple):
    """The inputs' :class:`Variable` expressions; ``size()`` is an expression of their
    number, named ``<name>.size``."""

    name = "in_types"

    def size(self) -> Variable:
        return Variable(len(self), f"{self.name}.size")


class LightTypeInfoTuple(tuple):
    """The inputs themselves, for light mode; ``size()`` is their number."""

    def size(self) -> int:
        return len(self)


def _get_type(name: str, index: int, array: Any, accept_none: bool,
              shape: tuple | None = None) -> Variable:
    var = f"{name}[{index}]"
    if accept_none and array is None:
        return Variable(TypeInfo((), None), var)
    if not (hasattr(array, "shape") and hasattr(array, "dtype")):
        raise InvalidType(f"isinstance({var}, ndarray)", f"type({var}) == {type(array)}")
    return Variable(TypeInfo(tuple(array.shape if shape is None else shape),
                             _numpy_dtype(array.dtype)), var)


def get_types(data: tuple, name: str, accept_none: bool, *,
              shapes: tuple | None = None) -> TypeInfoTuple:
    """The :class:`Variable` expressions ``name[0]``, ``name[1]``... of the arrays
    ``data`` (``None`` allowed when ``accept_none``)."""
    if shapes is None:
        shapes = tuple(None for _ in data)
    info = TypeInfoTuple(_get_type(name, i, x, accept_none, s)
                         for i, (x, s) in enumerate(zip(data, shapes)))
    info.name = name
    return info


def get_light_types(data: tuple, *, shapes: tuple | None = None) -> LightTypeInfoTuple:
    """The arrays ``data`` for a light-mode check; an array whose dtype is not NumPy's
    (torch, array-api-strict) is stood for by its :class:`TypeInfo`, so that both modes
    see the same dtypes."""
    out = []
    for i, x in enumerate(data):
        shape = None if shapes is None else shapes[i]
        if shape is None and isinstance(getattr(x, "dtype", None), numpy.dtype):
            out.append(x)
        else:
            out.append(TypeInfo(tuple(x.shape if shape is None else shape),
                                _numpy_dtype(x.dtype)))
    return LightTypeInfoTuple(out)


def _eval_expr(v: Any) -> Any:
    if isinstance(v, Expr):
        return v.eval()
    if isinstance(v, list):
        return [_eval_expr(e) for e in v]
    if isinstance(v, tuple):
        return tuple(_eval_expr(e) for e in v)
    return v


def _repr(v: Any) -> str:
    if isinstance(v, Expr):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_repr(e) for e in v) + "]"
    if isinstance(v, tuple):
        if len(v) == 1:
            return f"({_repr(v[0])},)"
        return "(" + ", ".join(_repr(e) for e in v) + ")"
    return repr(v)


def _unary(symbol: str, func: Callable) -> Callable:
    def method(self: Expr) -> UnaryOperator:
        return UnaryOperator(6, self, symbol, func)
    return method


def _binary(symbol: str, priority: int, func: Callable, reflected: bool = False,
            right_associative: bool = False) -> Callable:
    def method(self: Expr, other: Any) -> BinaryOperator:
        lhs, rhs = (other, self) if reflected else (self, other)
        return BinaryOperator(priority, lhs, rhs, symbol, func, right_associative)
    return method


def _comparison(symbol: str, inverse: str, func: Callable) -> Callable:
    def method(self: Expr, other: Any) -> BoolBinaryOperator:
        return BoolBinaryOperator(self, other, symbol, inverse, func)
    return method


class Expr:
    """An expression about the inputs: ``str`` gives its text, ``eval()`` its value.

    Operators, attributes, indexing and calls build larger expressions; comparisons build
    the :class:`Testable` ones that ``expect`` takes. An expression cannot be used as a
    bool (``x == y and y == z`` would test only the second): call :func:`eval`.
    Priorities follow Python's operator precedence, so the text has the parentheses it
    needs and no others. (Chainer 7.8 evaluates ``**`` as ``%``; here it is power.)
    """

    def __init__(self, priority: int) -> None:
        self.priority = priority

    def eval(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.eval is not defined")

    def __getattr__(self, name: str) -> GetAttr:
        if name.startswith("__"):
            raise AttributeError(name)
        return GetAttr(self, name)

    def __getitem__(self, key: Any) -> GetItem:
        return GetItem(self, key)

    def __call__(self, *args: Any) -> Call:
        return Call(self, args)

    def __bool__(self) -> bool:
        raise RuntimeError("An Expr instance cannot be evaluated as bool. Please use "
                           "chainer.utils.type_check.eval() to evaluate an expression.")

    __hash__ = object.__hash__

    __eq__ = _comparison("==", "!=", operator.eq)  # type: ignore[assignment]
    __ne__ = _comparison("!=", "==", operator.ne)  # type: ignore[assignment]
    __lt__ = _comparison("<", ">=", operator.lt)
    __le__ = _comparison("<=", ">", operator.le)
    __gt__ = _comparison(">", "<=", operator.gt)
    __ge__ = _comparison(">=", "<", operator.ge)

    __add__ = _binary("+", 4, operator.add)
    __radd__ = _binary("+", 4, operator.add, reflected=True)
    __sub__ = _binary("-", 4, operator.sub)
    __rsub__ = _binary("-", 4, operator.sub, reflected=True)
    __mul__ = _binary("*", 5, operator.mul)
    __rmul__ = _binary("*", 5, operator.mul, reflected=True)
    __truediv__ = _binary("/", 5, operator.truediv)
    __rtruediv__ = _binary("/", 5, operator.truediv, reflected=True)
    __floordiv__ = _binary("//", 5, operator.floordiv)
    __rfloordiv__ = _binary("//", 5, operator.floordiv, reflected=True)
    __mod__ = _binary("%", 5, operator.mod)
    __rmod__ = _binary("%", 5, operator.mod, reflected=True)
    __pow__ = _binary("**", 7, operator.pow, right_associative=True)
    __lshift__ = _binary("<<", 3, operator.lshift)
    __rlshift__ = _binary("<<", 3, operator.lshift, reflected=True)
    __rshift__ = _binary(">>", 3, operator.rshift)
    __rrshift__ = _binary(">>", 3, operator.rshift, reflected=True)
    __and__ = _binary("&", 2, operator.and_)
    __rand__ = _binary("&", 2, operator.and_, reflected=True)
    __xor__ = _binary("^", 1, operator.xor)
    __rxor__ = _binary("^", 1, operator.xor, reflected=True)
    __or__ = _binary("|", 0, operator.or_)
    __ror__ = _binary("|", 0, operator.or_, reflected=True)

    __neg__ = _unary("-", operator.neg)
    __pos__ = _unary("+", operator.pos)
    __invert__ = _unary("~", operator.invert)


class Atom(Expr):
    """An expression that needs no parentheses."""

    def __init__(self) -> None:
        super().__init__(8)


class Constant(Atom):
    """A fixed value, shown by its ``repr``."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def __str__(self) -> str:
        return _repr(self.value)

    def eval(self) -> Any:
        return self.value


class Variable(Atom):
    """A named value: ``Variable(TypeInfo(...), "in_types[0]")``, ``Variable(2, "n")``."""

    def __init__(self, value: Any, name: str) -> None:
        super().__init__()
        self.value = value
        self.name = name

    def __str__(self) -> str:
        return self.name

    def eval(self) -> Any:
        return self.value


class GetAttr(Atom):
    """``obj.name``."""

    def __init__(self, obj: Any, name: Any) -> None:
        super().__init__()
        self.obj = obj
        self.name = name

    def __str__(self) -> str:
        if isinstance(self.name, str):
            return f"{_repr(self.obj)}.{self.name}"
        if isinstance(self.name, Constant) and isinstance(self.name.value, str):
            return f"{_repr(self.obj)}.{self.name.value}"
        return f"getattr({_repr(self.obj)}, {_repr(self.name)})"

    def eval(self) -> Any:
        return getattr(_eval_expr(self.obj), _eval_expr(self.name))


def _str_subscript(key: Any) -> str:
    if key is Ellipsis:
        return "..."
    if isinstance(key, slice):
        parts = ["" if v is None else _repr(v) for v in (key.start, key.stop)]
        if key.step is not None:
            parts.append(_repr(key.step))
        return ":".join(parts)
    if isinstance(key, tuple):
        return ", ".join(_str_subscript(k) for k in key)
    return _repr(key)


class GetItem(Atom):
    """``obj[key]``."""

    def __init__(self, obj: Any, key: Any) -> None:
        super().__init__()
        self.obj = obj
        self.key = key

    def __str__(self) -> str:
        return f"{_repr(self.obj)}[{_str_subscript(self.key)}]"

    def eval(self) -> Any:
        return _eval_expr(self.obj)[_eval_expr(self.key)]


class Call(Atom):
    """``obj(*args)``."""

    def __init__(self, obj: Any, args: tuple) -> None:
        super().__init__()
        self.obj = obj
        self.args = tuple(args)

    def __str__(self) -> str:
        return f"{_repr(self.obj)}({', '.join(_repr(a) for a in self.args)})"

    def eval(self) -> Any:
        return _eval_expr(self.obj)(*(_eval_expr(a) for a in self.args))


class UnaryOperator(Expr):
    """``-x``, ``+x``, ``~x``."""

    def __init__(self, priority: int, term: Any, exp: str, func: Callable) -> None:
        super().__init__(priority)
        self.term = term
        self.exp = exp
        self.func = func

    def eval(self) -> Any:
        return self.func(_eval_expr(self.term))

    def __str__(self) -> str:
        text = _repr(self.term)
        if isinstance(self.term, Expr) and self.term.priority < self.priority:
            text = f"({text})"
        return self.exp + text


class BinaryOperator(Expr):
    """``lhs <exp> rhs``."""

    def __init__(self, priority: int, lhs: Any, rhs: Any, exp: str, func: Callable,
                 right_associative: bool = False) -> None:
        super().__init__(priority)
        self.lhs = lhs
        self.rhs = rhs
        self.exp = exp
        self.func = func
        self.right_associative = right_associative

    def _eval_left(self) -> Any:
        return _eval_expr(self.lhs)

    def _eval_right(self) -> Any:
        return _eval_expr(self.rhs)

    def eval(self) -> Any:
        return self.func(self._eval_left(), self._eval_right())

    def __str__(self) -> str:
        # A side of equal priority needs parentheses on the side the operator does not
        # associate to: x - (y - z), (x ** y) ** z.
        left, right = _repr(self.lhs), _repr(self.rhs)
        if isinstance(self.lhs, Expr) and (
                self.lhs.priority < self.priority
                or (self.right_associative and self.lhs.priority == self.priority)):
            left = f"({left})"
        if isinstance(self.rhs, Expr) and (
                self.rhs.priority < self.priority
                or (not self.right_associative and self.rhs.priority == self.priority)):
            right = f"({right})"
        return f"{left} {self.exp} {right}"


class Testable:
    """An expression ``expect`` can test."""

    def expect(self) -> None:
        raise NotImplementedError(f"{type(self).__name__}.expect is not defined")


class BoolBinaryOperator(BinaryOperator, Testable):
    """A comparison; ``expect()`` raises :class:`InvalidType` with the expression and
    the values that broke it (``Actual: 3 >= 2`` for ``x < 2``)."""

    def __init__(self, lhs: Any, rhs: Any, exp: str, inv: str, func: Callable) -> None:
        BinaryOperator.__init__(self, -1, lhs, rhs, exp, func)
        self.inv = inv

    def expect(self) -> None:
        left, right = self._eval_left(), self._eval_right()
        if not self.func(left, right):
            raise InvalidType(f"{self.lhs} {self.exp} {self.rhs}",
                              f"{left} {self.inv} {right}")


class InvalidType(Exception):
    """Raised when a function's inputs fail its type check.

    Parameters
    ----------
    expect
        The text of the condition.
    actual
        The text of what was found.
    msg
        The whole message (default: ``Expect: ...\\nActual: ...``, preceded inside a
        function's check by the line naming the function).

    Examples
    --------
    >>> from portagrad.chainer.utils import type_check
    >>> str(type_check.InvalidType("x.ndim == 2", "3 != 2"))
    'Expect: x.ndim == 2\\nActual: 3 != 2'
    """

    def __init__(self, expect: str, actual: str, msg: str | None = None) -> None:
        if msg is None:
            msg = f"Expect: {expect}\nActual: {actual}"
            function = getattr(_thread_local, "current_function", None)
            if function is not None:
                msg = (f"\nInvalid operation is performed in: {function.label} "
                       f"(Forward)\n\n{msg}")
        super().__init__(msg)
        self.expect = expect
        self.actual = actual

    def __reduce__(self) -> tuple:
        return (InvalidType, (self.expect, self.actual, self.args[0]))


def _argname(in_types: tuple, names: tuple) -> None:
    """Name the input expressions ``names`` (``x``, ``W``...) in the messages; raises
    :class:`InvalidType` when their numbers differ."""
    if len(in_types) != len(names):
        raise InvalidType(f"{len(names)} argument(s)", f"{len(in_types)} argument(s)",
                          "Invalid number of arguments")
    for in_type, name in zip(in_types, names):
        if isinstance(in_type, Variable):
            in_type.name = name


def in_light_mode() -> bool:
    """Whether the check now running is the light one (plain values, no messages)."""
    return getattr(_thread_local, "light_mode", False)


class LightMode:
    """``with light_mode:`` runs a check on plain values."""

    def __enter__(self) -> None:
        _thread_local.light_mode = True

    def __exit__(self, *exc: Any) -> None:
        _thread_local.light_mode = False


light_mode = LightMode()


def expect(*bool_exprs: Any) -> None:
    """Test each condition in order; the first that fails raises :class:`InvalidType`.

    Parameters
    ----------
    bool_exprs
        Comparisons of expressions (plain bools in light mode).

    Examples
    --------
    >>> from portagrad.chainer.utils import type_check
    >>> n = type_check.Variable(2, "in_types.size")
    >>> type_check.expect(n == 2, n >= 1)
    """
    if in_light_mode():
        if not all(bool_exprs):
            raise InvalidType("", "")
        return
    for e in bool_exprs:
        if not isinstance(e, Testable):
            raise TypeError(f"type_check.expect: expected comparisons of type_check "
                            f"expressions, got {type(e).__name__} ({e!r})")
        e.expect()


def same_types(*arrays: Any) -> bool:
    """Whether the arrays are all of one array library (``True`` for none).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.utils import type_check
    >>> type_check.same_types(np.ones(2), np.zeros(3))
    True
    """
    return len({type(a) for a in arrays}) <= 1


def eval(exp: Any) -> Any:  # noqa: A001 - Chainer's name
    """The value of an expression (the value itself in light mode).

    Examples
    --------
    >>> from portagrad.chainer.utils import type_check
    >>> type_check.eval(type_check.Variable((2, 3), "shape")[1])
    3
    """
    return exp if in_light_mode() else exp.eval()


def make_variable(value: Any, name: str) -> Any:
    """``Variable(value, name)``, or the value itself in light mode."""
    return value if in_light_mode() else Variable(value, name)


def _make_variable_from_array(array: Any, name: str) -> Any:
    if not (hasattr(array, "shape") and hasattr(array, "dtype")):
        raise InvalidType(f"isinstance({name}, ndarray)", f"type({name}) == {type(array)}")
    if in_light_mode():
        return array
    return Variable(TypeInfo(tuple(array.shape), _numpy_dtype(array.dtype)), name)


def _prod_impl(xs: Any) -> Any:
    result = 1
    for x in xs:
        result *= x
    return result


_prod = Variable(_prod_impl, "prod")


def prod(xs: Any) -> Any:
    """The product of ``xs`` (an expression ``prod(...)`` outside light mode).

    Examples
    --------
    >>> from portagrad.chainer.utils import type_check
    >>> shape = type_check.Variable((2, 3, 4), "x.shape")
    >>> e = type_check.prod(shape[1:])
    >>> str(e), e.eval()
    ('prod(x.shape[1:])', 12)
    """
    return _prod_impl(xs) if in_light_mode() else _prod(xs)


def expect_broadcast_shapes(*shape_types: Any) -> None:
    """Raise :class:`InvalidType` unless the shapes broadcast together.

    Examples
    --------
    >>> from portagrad.chainer.utils import type_check
    >>> type_check.expect_broadcast_shapes(type_check.Variable((2, 3), "a"),
    ...                                    type_check.Variable((3,), "b"))
    """
    shapes = [tuple(eval(s)) for s in shape_types]
    try:
        numpy.broadcast_shapes(*shapes)
    except ValueError:
        lines = ["cannot broadcast inputs of the following shapes:"]
        lines += [f"{t} = {s}" for t, s in zip(shape_types, shapes)]
        raise InvalidType("", "", msg="\n".join(lines)) from None
