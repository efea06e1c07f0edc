"""Module: a callable that owns Parameters, buffers and submodules.

Assigning a :class:`Parameter` or a :class:`Module` to an attribute registers it, so
``parameters()``, ``state_dict()``, ``train()``/``eval()`` and ``to_device()`` reach every
part of a model without bookkeeping by its author. ``super().__init__()`` is welcome but
not required.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._errors import CheckpointError, DTypeError, ShapeError, describe
from ..tape._variable import Variable
from ..xp import from_numpy, namespace_name, namespace_of, to_numpy
from ..xp._namespace import is_array
from ._parameter import UNINITIALIZED, Parameter

__all__ = ["Module"]


class Module:
    """Base class of every layer and model.

    Subclasses set Parameters, submodules and buffers as attributes and define
    ``forward``; calling the module calls ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> class Affine(pg.nn.Module):
    ...     def __init__(self):
    ...         self.w = pg.nn.Parameter(np.ones(2))
    ...         self.b = pg.nn.Parameter(np.zeros(2))
    ...     def forward(self, x):
    ...         return x * self.w + self.b
    >>> m = Affine()
    >>> [name for name, _ in m.named_parameters()]
    ['w', 'b']
    >>> m(np.array([1.0, 2.0])).array
    array([1., 2.])
    """

    training: bool = True

    def __init__(self) -> None:
        self._registry()

    def _registry(self) -> tuple[dict, dict, dict]:
        d = self.__dict__
        reg = d.get("_reg")
        if reg is None:
            # Names in registration order; the objects themselves live in __dict__ so
            # attribute access stays a plain lookup.
            reg = ({}, {}, {})
            d["_reg"] = reg
            d.setdefault("training", True)
        return reg

    def __setattr__(self, name: str, value: Any) -> None:
        params, modules, buffers = self._registry()
        params.pop(name, None)
        modules.pop(name, None)
        if isinstance(value, Parameter):
            if value.name is None:
                value.name = name
            params[name] = None
        elif isinstance(value, Module):
            modules[name] = None
        elif name in buffers and value is not None and not is_array(value):
            raise TypeError(
                f"{type(self).__name__}.{name}: expected an array for this buffer, got "
                f"{describe(value)}"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for reg in self._registry():
            reg.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, array: Any, persistent: bool = True) -> None:
        """Keep a non-trainable array (running statistics...) in ``state_dict`` and moves.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Module()
        >>> m.register_buffer("count", np.zeros(1))
        >>> list(m.state_dict())
        ['count']
        """
        params, modules, buffers = self._registry()
        buffers[name] = persistent
        object.__setattr__(self, name, array)

    # -- calling ----------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- traversal --------------------------------------------------------------------
    def children(self) -> Iterator[Module]:
        """Direct submodules."""
        for name in self._registry()[1]:
            yield getattr(self, name)

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name in self._registry()[1]:
            yield name, getattr(self, name)

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names."""
        yield prefix, self
        for name, child in self.named_children():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Every Parameter with its dotted name (shared ones once)."""
        seen: set[int] = set()
        for mname, m in self.named_modules(prefix):
            for pname in m._registry()[0]:
                p = getattr(m, pname)
                if id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mname}.{pname}" if mname else pname), p

    def parameters(self) -> Iterator[Parameter]:
        for _, p in self.named_parameters():
            yield p

    def named_buffers(self, persistent_only: bool = False) -> Iterator[tuple[str, Any]]:
        for mname, m in self.named_modules():
            for bname, persistent in m._registry()[2].items():
                if persistent or not persistent_only:
                    yield (f"{mname}.{bname}" if mname else bname), getattr(m, bname)

    def namedparams(self) -> Iterator[tuple[str, Parameter]]:
        """Chainer's spelling of :meth:`named_parameters`, with ``/`` paths."""
        for name, p in self.named_parameters():
            yield "/" + name.replace(".", "/"), p

    def params(self) -> Iterator[Parameter]:
        """Chainer's spelling of :meth:`parameters`."""
        return self.parameters()

    @contextlib.contextmanager
    def init_scope(self) -> Iterator[None]:
        """Chainer's registration block, kept so that Chainer models read as they did.

        Assignments register Parameters and Modules wherever they happen, so the block
        changes nothing; it only marks where a model declares its parts.

        Examples
        --------
        >>> import portagrad as pg
        >>> class Net(pg.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         with self.init_scope():
        ...             self.fc = pg.nn.Linear(3, 2)
        >>> [name for name, _ in Net().namedparams()]
        ['/fc/W', '/fc/b']
        """
        yield

    # -- modes ------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch statistics) here and below."""
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (no dropout, running statistics) here and below."""
        return self.train(False)

    def cleargrads(self) -> None:
        """Forget every parameter's gradient."""
        for p in self.parameters():
            p.grad_var = None

    zero_grad = cleargrads

    # -- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name, as raw arrays (not copies).

        An uninitialized parameter appears as ``UNINITIALIZED``; loading a state fills it.
        """
        out: dict[str, Any] = {}
        for name, p in self.named_parameters():
            out[name] = p.array if p.array is not None else UNINITIALIZED
        for name, b in self.named_buffers(persistent_only=True):
            out[name] = b if b is not None else UNINITIALIZED
        return out

    def load_state_dict(self, state: dict[str, Any], strict: bool = True) -> None:
        """Copy arrays of any library into the parameters and buffers, in place of theirs.

        Values are moved into each parameter's namespace and device (uninitialized ones
        take those of the other parameters, else the default namespace). With ``strict``,
        missing or unexpected names, and shape or dtype changes, raise
        :class:`portagrad.CheckpointError` before anything is changed.
        """
        targets: dict[str, tuple[Module, str, Any]] = {}
        for mname, m in self.named_modules():
            params, _, buffers = m._registry()
            for n in params:
                targets[f"{mname}.{n}" if mname else n] = (m, n, getattr(m, n))
            for n, persistent in buffers.items():
                if persistent:
                    targets[f"{mname}.{n}" if mname else n] = (m, n, getattr(m, n))
        if strict:
            missing = [k for k in targets if k not in state]
            unexpected = [k for k in state if k not in targets]
            if missing or unexpected:
                raise CheckpointError(
                    f"load_state_dict(state): expected the names of this "
                    f"{type(self).__name__}, got {len(missing)} missing {missing[:5]} and "
                    f"{len(unexpected)} unexpected {unexpected[:5]}. Pass strict=False to "
                    f"load a subset."
                )
        like = _any_array(self)
        plan = []
        for key, (m, n, cur) in targets.items():
            if key not in state:
                continue
            value = state[key]
            cur_array = cur.array if isinstance(cur, Parameter) else cur
            if value is None or getattr(value, "__portagrad_lazy__", False):
                continue
            if cur_array is not None and strict:
                if tuple(value.shape) != tuple(cur_array.shape):
                    raise CheckpointError(
                        f"load_state_dict({key}): expected shape {tuple(cur_array.shape)}, "
                        f"got {tuple(value.shape)}"
                    )
                if _dtype_name(value.dtype) != _dtype_name(cur_array.dtype):
                    raise CheckpointError(
                        f"load_state_dict({key}): expected dtype {cur_array.dtype}, got "
                        f"{value.dtype}"
                    )
            plan.append((m, n, cur, _to_like(value, cur_array if cur_array is not None
                                             else like)))
        for m, n, cur, array in plan:
            if isinstance(cur, Parameter):
                cur.set_array(array)
                cur.grad_var = None
            else:
                object.__setattr__(m, n, array)

    def to_device(self, device: Any, xp: Any = None) -> Module:
        """Move every parameter and buffer to ``device`` (and library ``xp`` if given).

        ``"cuda:0"`` selects CuPy for NumPy models, ``"cpu"`` NumPy for CuPy models;
        torch models stay torch tensors. Returns ``self``.
        """
        from ..xp import infer_namespace, to_namespace

        def move(a: Any) -> Any:
            if a is None:
                return None
            src = namespace_of(a)
            dst = xp
            if dst is None:
                name = namespace_name(src)
                if isinstance(device, str) and name in ("numpy", "cupy"):
                    dst = infer_namespace(device=device) if device.startswith("cuda") else None
                    if dst is None:
                        import array_api_compat.numpy as dst
                else:
                    dst = src
            dev = device
            if isinstance(dev, str) and namespace_name(dst) == "cupy":
                # CuPy names devices by objects: "cuda:1" is the second of them.
                idx = int(dev.split(":", 1)[1]) if ":" in dev else 0
                dev = dst.__array_namespace_info__().devices()[idx]
            if dst is src:
                import array_api_compat

                return array_api_compat.to_device(a, dev)
            return to_namespace(a, dst, None if namespace_name(dst) == "numpy" else dev)

        for m in self.modules():
            params, _, buffers = m._registry()
            for n in params:
                p = getattr(m, n)
                if p.array is not None:
                    p.set_array(move(p.array))
                    p.grad_var = None
            for n in buffers:
                object.__setattr__(m, n, move(getattr(m, n)))
        return self

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        children = list(self.named_children())
        if not children:
            return lines[0] + ")"
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"

    def extra_repr(self) -> str:
        return ""


def _dtype_name(dtype: Any) -> str:
    # Dtypes of two libraries do not compare equal (and array-api-strict warns when
    # asked), so compare their short names: float32, int64...
    s = str(dtype)
    for prefix in ("torch.", "array_api_strict.", "dtype('", "<dtype '"):
        if s.startswith(prefix):
            s = s[len(prefix):]
    return s.rstrip("')>")


def _any_array(module: Module) -> Any:
    for p in module.parameters():
        if p.array is not None:
            return p.array
    return None


def _to_like(value: Any, like: Any) -> Any:
    """``value`` (any library) as an array of ``like``'s library, device and dtype."""
    if isinstance(value, Variable):
        value = value.array
    if not is_array(value):
        raise DTypeError(f"load_state_dict: expected arrays, got {describe(value)}")
    if like is None:
        from ..xp import default_namespace

        return from_numpy(to_numpy(value), xp=default_namespace())
    xp = namespace_of(like)
    if namespace_of(value) is xp and value.device == like.device:
        return xp.astype(value, like.dtype, copy=True)
    host = to_numpy(value)
    out = from_numpy(host, like=like)
    if _dtype_name(out.dtype) != _dtype_name(like.dtype):
        out = xp.astype(out, like.dtype)
    return out


def check_input(module: Module, x: Any, op: str, param: Parameter) -> None:
    """Raise a clear error when ``x`` and ``param`` live in different libraries or devices.

    Ops would raise too; this names the module and says how to move the model.
    """
    a = x.array if isinstance(x, Variable) else x
    pa = param.array
    if pa is None or not is_array(a):
        return
    xa, xw = namespace_of(a), namespace_of(pa)
    if xa is not xw:
        from .._errors import NamespaceMismatchError

        raise NamespaceMismatchError(
            f"{op}(x): expected an array of {namespace_name(xw)} like the parameters, got "
            f"{namespace_name(xa)}. Move the input, or the model with "
            f"model.to_device(device, xp=...)."
        )
    if a.device != pa.device:
        from .._errors import DeviceMismatchError

        raise DeviceMismatchError(
            f"{op}(x): expected an array on {pa.device} like the parameters, got "
            f"{a.device}. Move the input, or the model with model.to_device({a.device!r})."
        )


def check_features(op: str, x: Any, axis: int, expected: int) -> None:
    """Raise :class:`ShapeError` when ``x.shape[axis]`` is not ``expected``."""
    shape = tuple(x.shape)
    if len(shape) <= abs(axis) - (axis < 0) or shape[axis] != expected:
        raise ShapeError(
            f"{op}(x): expected {expected} features on axis {axis}, got an input of shape "
            f"{shape}. The layer's size was fixed at construction or by its first input."
        )
