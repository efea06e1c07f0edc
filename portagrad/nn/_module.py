"""Module: a callable that owns Parameters, buffers and submodules, as ``torch.nn.Module``.

Assigning a :class:`Parameter` or a :class:`Module` to an attribute registers it, so
``parameters()``, ``state_dict()``, ``train()``/``eval()`` and ``to()`` reach every part of
a model without bookkeeping by its author. ``super().__init__()`` is welcome but not
required. ``state_dict()`` names and orders entries as PyTorch does for the same module
tree (each module's parameters, then its persistent buffers, then its children), so a
state dict written by ``torch`` (as NumPy arrays or a safetensors file) loads as it is.
"""

from __future__ import annotations

import contextlib
import copy
import os
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from .._errors import CheckpointError, DTypeError, ShapeError, describe
from ..tape._variable import Variable
from ..xp import from_numpy, namespace_name, namespace_of, to_numpy
from ..xp._namespace import is_array
from ._parameter import UNINITIALIZED, Parameter

__all__ = ["Module", "IncompatibleKeys", "RemovableHandle"]


class IncompatibleKeys(NamedTuple):
    """What :meth:`Module.load_state_dict` did not match: names the module has that the
    state lacks, and names the state has that the module lacks."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods: ``handle.remove()`` unregisters.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> m = pg.nn.Identity()
    >>> h = m.register_forward_hook(lambda mod, args, out: out * 2)
    >>> float(m(np.array(1.0)).array)
    2.0
    >>> h.remove()
    >>> float(m(np.array(1.0)).array)
    1.0
    """

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks = hooks
        self.id = key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


_NEXT_HOOK = [0]


def _add_hook(hooks: dict, entry: Any, prepend: bool) -> RemovableHandle:
    _NEXT_HOOK[0] += 1
    key = _NEXT_HOOK[0]
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[key] = entry
        hooks.update(items)
    else:
        hooks[key] = entry
    return RemovableHandle(hooks, key)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class Module:
    """Base class of every layer and model.

    Subclasses set Parameters, submodules and buffers as attributes and define
    ``forward``; calling the module runs the forward pre-hooks, ``forward`` and the
    forward hooks.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> class Affine(pg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = pg.nn.Parameter(np.ones(2))
    ...         self.bias = pg.nn.Parameter(np.zeros(2))
    ...     def forward(self, x):
    ...         return x * self.weight + self.bias
    >>> m = Affine()
    >>> [name for name, _ in m.named_parameters()]
    ['weight', 'bias']
    >>> m(np.array([1.0, 2.0])).array
    array([1., 2.])
    """

    training: bool = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments "
                            f"{args or ''}{kwargs or ''}")
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

    def _hooks(self) -> dict[str, dict]:
        d = self.__dict__
        hooks = d.get("_hook_tables")
        if hooks is None:
            hooks = {"pre": {}, "post": {}, "backward": {}}
            d["_hook_tables"] = hooks
        return hooks

    def __setattr__(self, name: str, value: Any) -> None:
        params, modules, buffers = self._registry()
        if isinstance(value, Parameter):
            modules.pop(name, None)
            buffers.pop(name, None)
            if value.name is None:
                value.name = name
            params[name] = None
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = None
        elif name in params:
            if value is not None:
                raise TypeError(f"cannot assign {describe(value)} as parameter {name!r} of "
                                f"{type(self).__name__} (expected a Parameter or None)")
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign {describe(value)} as child module {name!r} "
                                f"of {type(self).__name__} (expected a Module or None)")
        elif name in buffers and value is not None and not is_array(value):
            if isinstance(value, Variable):
                value = value.array
            else:
                raise TypeError(
                    f"{type(self).__name__}.{name}: expected an array for this buffer, got "
                    f"{describe(value)}"
                )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for reg in self._registry():
            reg.pop(name, None)
        object.__delattr__(self, name)

    # -- registration -----------------------------------------------------------------
    def _check_name(self, kind: str, name: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name or not name:
            raise KeyError(f'{kind} name can\'t contain ".", nor be empty, got {name!r}')
        known = any(name in reg for reg in self._registry())
        if not known and (hasattr(type(self), name) or
                          (name in self.__dict__ and name != "training")):
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """Keep a non-trainable array (running statistics...) in moves and, when
        ``persistent``, in ``state_dict``.

        Parameters
        ----------
        name
            Attribute name.
        tensor
            An array of any library, or ``None`` (created later, e.g. at the first call).
        persistent
            Whether ``state_dict`` includes it.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Module()
        >>> m.register_buffer("count", np.zeros(1))
        >>> m.register_buffer("scratch", np.zeros(1), persistent=False)
        >>> list(m.state_dict()), [n for n, _ in m.named_buffers()]
        (['count'], ['count', 'scratch'])
        """
        self._check_name("buffer", name)
        if isinstance(tensor, Variable):
            tensor = tensor.array
        if tensor is not None and not is_array(tensor):
            raise TypeError(f"cannot assign {describe(tensor)} as buffer {name!r} (an array "
                            f"or None is required)")
        params, modules, buffers = self._registry()
        params.pop(name, None)
        modules.pop(name, None)
        buffers[name] = bool(persistent)
        object.__setattr__(self, name, tensor)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or ``None``: a parameter slot left empty, as ``bias=False``)
        under ``name``.

        Parameters
        ----------
        name
            Attribute name.
        param
            A :class:`Parameter` or ``None``.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Module()
        >>> m.register_parameter("bias", None)
        >>> m.register_parameter("weight", pg.nn.Parameter(np.ones(2)))
        >>> m.bias, list(m.state_dict())
        (None, ['weight'])
        """
        self._check_name("parameter", name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign {describe(param)} as parameter {name!r} "
                            f"(portagrad.nn.Parameter or None required)")
        params, modules, buffers = self._registry()
        modules.pop(name, None)
        buffers.pop(name, None)
        params[name] = None
        if param is not None and param.name is None:
            param.name = name
        object.__setattr__(self, name, param)

    def register_module(self, name: str, module: Module | None) -> None:
        """Register a child module (or ``None``) under ``name``.

        Parameters
        ----------
        name
            Attribute name.
        module
            A :class:`Module` or ``None``.

        Examples
        --------
        >>> import portagrad as pg
        >>> m = pg.nn.Module()
        >>> m.register_module("fc", pg.nn.Linear(2, 1))
        >>> list(m.state_dict())
        ['fc.weight', 'fc.bias']
        """
        self._check_name("module", name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{describe(module)} is not a Module subclass")
        params, modules, buffers = self._registry()
        params.pop(name, None)
        buffers.pop(name, None)
        modules[name] = None
        object.__setattr__(self, name, module)

    add_module = register_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is this module).

        Parameters
        ----------
        target
            A dotted name as in :meth:`named_modules`.

        Examples
        --------
        >>> import portagrad as pg
        >>> net = pg.nn.Sequential(pg.nn.Linear(2, 3), pg.nn.ReLU())
        >>> net.get_submodule("1")
        ReLU()
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if item not in mod._registry()[1] or getattr(mod, item) is None:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``.

        Parameters
        ----------
        target
            A name as in :meth:`named_parameters`.

        Examples
        --------
        >>> import portagrad as pg
        >>> pg.nn.Sequential(pg.nn.Linear(2, 3)).get_parameter("0.bias").shape
        (3,)
        """
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._registry()[0]:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return getattr(mod, name)

    def get_buffer(self, target: str) -> Any:
        """The buffer at dotted path ``target``.

        Parameters
        ----------
        target
            A name as in :meth:`named_buffers`.

        Examples
        --------
        >>> import portagrad as pg
        >>> pg.nn.BatchNorm1d(2).get_buffer("running_var")
        array([1., 1.], dtype=float32)
        """
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._registry()[2]:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return getattr(mod, name)

    # -- calling ----------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        hooks = self.__dict__.get("_hook_tables")
        if hooks is None or not (hooks["pre"] or hooks["post"] or hooks["backward"]):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(hooks, args, kwargs)

    def _call_with_hooks(self, hooks: dict, args: tuple, kwargs: dict) -> Any:
        called: set[int] = set()
        out = None
        try:
            for hook, with_kwargs in list(hooks["pre"].values()):
                if with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            if hooks["backward"]:
                from ._backward_hooks import wrap_inputs

                args, state = wrap_inputs(self, args)
            out = self.forward(*args, **kwargs)
            for key, (hook, with_kwargs, *always) in list(hooks["post"].items()):
                if always and always[0]:
                    called.add(key)
                res = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
                if res is not None:
                    out = res
        except Exception:
            # As torch: the always-called forward hooks not yet run see the output so far
            # (None when forward raised); their own errors become warnings, and the first
            # error is raised again.
            for key, (hook, with_kwargs, *always) in list(hooks["post"].items()):
                if not (always and always[0]) or key in called:
                    continue
                try:
                    res = (hook(self, args, kwargs, out) if with_kwargs else
                           hook(self, args, out))
                    if res is not None:
                        out = res
                except Exception as err:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised "
                                  f"in forward: {err}", stacklevel=2)
            raise
        if hooks["backward"]:
            from ._backward_hooks import wrap_outputs

            out = wrap_outputs(self, out, state, list(hooks["backward"].values()))
        return out

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each ``forward``; a value it returns other
        than ``None`` replaces ``args`` (with ``with_kwargs``: ``hook(module, args,
        kwargs)`` returning ``(args, kwargs)``).

        Parameters
        ----------
        hook
            The callable.
        prepend
            Run it before the hooks already registered.
        with_kwargs
            Pass and take the keyword arguments too.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Identity()
        >>> _ = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
        >>> m(np.array([1.0])).array
        array([2.])
        """
        return _add_hook(self._hooks()["pre"], (hook, bool(with_kwargs)), prepend)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each ``forward``; a value it returns
        other than ``None`` replaces the output.

        Parameters
        ----------
        hook
            The callable (with ``with_kwargs``: ``hook(module, args, kwargs, output)``).
        prepend
            Run it before the hooks already registered.
        with_kwargs
            Pass the keyword arguments too.
        always_call
            Also run the hook when ``forward`` (or a hook) raised, with the output so far
            (``None`` when ``forward`` raised); the error is then raised again, and an
            error of the hook itself becomes a warning.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> seen = []
        >>> m = pg.nn.ReLU()
        >>> _ = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
        >>> _ = m(np.ones((2, 3)))
        >>> seen
        [(2, 3)]
        """
        return _add_hook(self._hooks()["post"], (hook, bool(with_kwargs), bool(always_call)),
                         prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` during backward, once the
        gradients with respect to the module's Variable inputs are known; a tuple it
        returns replaces ``grad_input``.

        ``grad_input`` has one entry per positional input (``None`` for inputs that are
        not floating Variables or arrays), ``grad_output`` one per output Variable.

        Parameters
        ----------
        hook
            The callable.
        prepend
            Run it before the hooks already registered.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Linear(2, 1)
        >>> seen = []
        >>> _ = m.register_full_backward_hook(
        ...     lambda mod, gin, gout: seen.append((gin[0].shape, gout[0].shape)))
        >>> x = pg.Variable(np.ones((3, 2), np.float32))
        >>> m(x).sum().backward()
        >>> seen
        [((3, 2), (3, 1))]
        """
        return _add_hook(self._hooks()["backward"], hook, prepend)

    # -- traversal --------------------------------------------------------------------
    def children(self) -> Iterator[Module]:
        """Direct submodules."""
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Direct submodules with their names (``None`` slots and repeats skipped)."""
        seen: set[int] = set()
        for name in self._registry()[1]:
            m = getattr(self, name)
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name in self._registry()[1]:
            child = getattr(self, name)
            if child is None:
                continue
            yield from child.named_modules(memo, _join(prefix, name), remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def _named_members(self, kind: int, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for mname, m in mods:
            for name in m._registry()[kind]:
                v = getattr(m, name)
                if v is None:
                    continue
                if remove_duplicate:
                    if id(v) in seen:
                        continue
                    seen.add(id(v))
                yield _join(mname, name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every Parameter with its dotted name (shared ones once)."""
        return self._named_members(0, prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True, *,
                      persistent_only: bool = False) -> Iterator[tuple[str, Any]]:
        """Every buffer with its dotted name (``persistent_only``: those in
        ``state_dict``)."""
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mname, m in mods:
            for bname, persistent in m._registry()[2].items():
                b = getattr(m, bname)
                if b is None or (persistent_only and not persistent):
                    continue
                if remove_duplicate:
                    if id(b) in seen:
                        continue
                    seen.add(id(b))
                yield _join(mname, bname), b

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

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
        ['/fc/weight', '/fc/bias']
        """
        yield

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first) and on this module; return self.

        Parameters
        ----------
        fn
            Called with each module.

        Examples
        --------
        >>> import portagrad as pg
        >>> names = []
        >>> _ = pg.nn.Sequential(pg.nn.Linear(2, 2)).apply(lambda m: names.append(
        ...     type(m).__name__))
        >>> names
        ['Linear', 'Sequential']
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter (freezing with ``False``); return self.

        Parameters
        ----------
        requires_grad
            The new value.

        Examples
        --------
        >>> import portagrad as pg
        >>> m = pg.nn.Linear(2, 2).requires_grad_(False)
        >>> [p.requires_grad for p in m.parameters()]
        [False, False]
        """
        for p in self.parameters():
            p.requires_grad = bool(requires_grad)
        return self

    # -- modes ------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch statistics) here and below."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (no dropout, running statistics) here and below."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: forget it (``set_to_none``, the default) or
        fill it with zeros.

        Parameters
        ----------
        set_to_none
            ``True``: ``grad`` becomes ``None``; ``False``: existing gradients become 0.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Linear(2, 1)
        >>> m(np.ones((1, 2), np.float32)).sum().backward()
        >>> m.zero_grad(set_to_none=False)
        >>> m.bias.grad
        array([0.], dtype=float32)
        >>> m.zero_grad()
        >>> m.bias.grad is None
        True
        """
        for p in self.parameters():
            if set_to_none or p.grad_var is None:
                p.grad_var = None
            else:
                g = p.grad_var.array
                p.grad = namespace_of(g).zeros_like(g)

    def cleargrads(self) -> None:
        """Forget every parameter's gradient (Chainer's spelling)."""
        self.zero_grad(set_to_none=True)

    # -- state ------------------------------------------------------------------------
    def _state_items(self, prefix: str, keep_vars: bool) -> Iterator[tuple[str, Any]]:
        params, _, buffers = self._registry()
        for n in params:
            p = getattr(self, n)
            if p is None:
                continue
            if keep_vars:
                yield prefix + n, p
            else:
                yield prefix + n, p.array if p.array is not None else UNINITIALIZED
        # A buffer left None is absent (torch's rule), except in a module still waiting for
        # its first input: there it stands for an array of a size not known yet.
        lazy = any(getattr(self, n) is not None and getattr(self, n).array is None
                   for n in params)
        for n, persistent in buffers.items():
            if persistent:
                b = getattr(self, n)
                if b is not None:
                    yield prefix + n, b
                elif lazy:
                    yield prefix + n, UNINITIALIZED

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name, as raw arrays (not copies),
        in PyTorch's order: each module's parameters, its buffers, then its children.

        An uninitialized parameter appears as ``UNINITIALIZED``; loading a state fills it.

        Parameters
        ----------
        destination
            A mapping to fill (a new ordered dict by default).
        prefix
            Prepended to every name.
        keep_vars
            Give the Parameters themselves instead of their arrays.

        Examples
        --------
        >>> import portagrad as pg
        >>> net = pg.nn.Sequential(pg.nn.Linear(2, 3), pg.nn.BatchNorm1d(3))
        >>> list(net.state_dict())  # doctest: +NORMALIZE_WHITESPACE
        ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var',
         '1.num_batches_tracked']
        """
        if args:
            raise TypeError("state_dict() takes keyword arguments only (destination=, "
                            "prefix=, keep_vars=)")
        out: dict[str, Any] = OrderedDict() if destination is None else destination
        seen: set[int] = set()

        def visit(m: Module, pre: str) -> None:
            if id(m) in seen:
                return
            seen.add(id(m))
            for k, v in m._state_items(pre, keep_vars):
                out[k] = v
            for name in m._registry()[1]:
                child = getattr(m, name)
                if child is not None:
                    visit(child, pre + name + ".")

        visit(self, prefix)
        return out

    def _load_targets(self) -> dict[str, tuple[Module, str, Any]]:
        targets: dict[str, tuple[Module, str, Any]] = {}
        seen: set[int] = set()

        def visit(m: Module, pre: str) -> None:
            if id(m) in seen:
                return
            seen.add(id(m))
            params, modules, buffers = m._registry()
            for n in params:
                if getattr(m, n) is not None:
                    targets[pre + n] = (m, n, getattr(m, n))
            for n, persistent in buffers.items():
                if persistent:
                    targets[pre + n] = (m, n, getattr(m, n))
            for n in modules:
                child = getattr(m, n)
                if child is not None:
                    visit(child, pre + n + ".")

        visit(self, "")
        return targets

    def load_state_dict(self, state_dict: Any, strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy the arrays of ``state_dict`` into the parameters and buffers, as PyTorch.

        Values may be arrays of any library (NumPy arrays of a ``torch`` state dict
        converted with ``{k: v.numpy() for k, v in sd.items()}``, Variables, torch
        tensors...); each is moved into its parameter's library and device and cast to
        its dtype. ``state_dict`` may also be the path of a safetensors file (as written
        by ``safetensors.torch.save_file(model.state_dict(), path)``).

        Parameters
        ----------
        state_dict
            A mapping of names to arrays, or a path to a ``.safetensors`` file.
        strict
            Raise :class:`portagrad.CheckpointError` (nothing changed) when names are
            missing or unexpected; otherwise they are returned. A shape that differs
            raises either way, as in PyTorch; an uninitialized (lazy) parameter takes
            any shape.
        assign
            Keep the given arrays instead of copying them into the current ones, as
            PyTorch: each parameter and buffer becomes the state dict's array, with its
            library, device and dtype (a :class:`Parameter` given is kept as it is); a
            parameter keeps its module's ``requires_grad``. Parameters are then new
            objects: build the optimizer after loading.

        Returns
        -------
        IncompatibleKeys
            ``(missing_keys, unexpected_keys)``.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> m = pg.nn.Linear(2, 1)
        >>> m.load_state_dict({"weight": np.ones((1, 2)), "extra": np.zeros(1)},
        ...                   strict=False)
        IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])
        >>> m.weight.array
        array([[1., 1.]], dtype=float32)
        """
        if isinstance(state_dict, (str, os.PathLike)):
            state_dict = _read_state_file(state_dict)
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got "
                            f"{type(state_dict).__name__}.")
        targets = self._load_targets()
        # A buffer that is None (not created yet) loads a value given, and is not missing
        # without one (torch leaves None buffers out of state dicts).
        missing = [k for k, (_, _, cur) in targets.items()
                   if k not in state_dict and cur is not None]
        unexpected = [k for k in state_dict if k not in targets]
        errors: list[str] = []
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.append("Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        like = _any_array(self)
        plan = []
        for key, (m, n, cur) in targets.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if isinstance(cur, Module):
                continue
            cur_array = cur.array if isinstance(cur, Parameter) else cur
            if value is None or getattr(value, "__portagrad_lazy__", False):
                continue
            given = value
            value = _host_value(value, key)
            if cur_array is not None and tuple(value.shape) != tuple(cur_array.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{tuple(value.shape)} from checkpoint, the shape in current "
                              f"model is {tuple(cur_array.shape)}.")
                continue
            plan.append((m, n, cur, given if assign else value, cur_array))
        if errors:
            raise CheckpointError(f"Error(s) in loading state_dict for {type(self).__name__}:"
                                  "\n\t" + "\n\t".join(errors))
        if assign:
            for m, n, cur, given, _ in plan:
                _assign(m, n, cur, given)
            return IncompatibleKeys(missing, unexpected)
        for m, n, cur, value, cur_array in plan:
            array = _to_like(value, cur_array if cur_array is not None else like,
                             keep_dtype=cur_array is None)
            if isinstance(cur, Parameter):
                cur.set_array(array)
                cur.grad_var = None
            else:
                object.__setattr__(m, n, array)
        return IncompatibleKeys(missing, unexpected)

    def _cast(self, convert: Callable[[Any, bool], Any]) -> Module:
        for m in self.modules():
            params, _, buffers = m._registry()
            for n in params:
                p = getattr(m, n)
                if p is not None and p.array is not None:
                    p.set_array(convert(p.array, True))
                    p.grad_var = None
            for n in buffers:
                b = getattr(m, n)
                if b is not None:
                    object.__setattr__(m, n, convert(b, False))
        return self

    def to(self, *args: Any, device: Any = None, dtype: Any = None, xp: Any = None,
           non_blocking: bool = False) -> Module:
        """Move and/or cast every parameter and buffer, in place; return self.

        ``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or keywords, as PyTorch;
        ``xp`` also changes the array library (see :meth:`to_device`). A dtype casts the
        floating parameters and buffers only (integer counters keep theirs). The dtype
        may be given as a name (``"float64"``) or a dtype of any library.

        Parameters
        ----------
        device
            A device of the arrays' library, or ``"cpu"``/``"cuda:0"``.
        dtype
            The new floating dtype.
        xp
            Array library to move to.
        non_blocking
            Accepted, as PyTorch's option; moves are synchronous.

        Examples
        --------
        >>> import portagrad as pg
        >>> m = pg.nn.Linear(2, 1).to("float64")
        >>> m.weight.dtype
        dtype('float64')
        """
        for a in args:
            if _is_dtype(a):
                dtype = a
            elif isinstance(a, Module):
                raise TypeError("Module.to(other): expected a device or a dtype, got a Module")
            elif is_array(a) or isinstance(a, Variable):
                arr = a.array if isinstance(a, Variable) else a
                dtype, device = arr.dtype, arr.device
                xp = namespace_of(arr)
            else:
                device = a
        if device is not None or xp is not None:
            self.to_device(device, xp=xp)
        if dtype is not None:
            name = dtype if isinstance(dtype, str) else _dtype_name(dtype)

            def convert(a: Any, is_param: bool) -> Any:
                ns = namespace_of(a)
                if not ns.isdtype(a.dtype, ("real floating", "complex floating")):
                    return a
                target = getattr(ns, name, None)
                if target is None:
                    raise DTypeError(f"Module.to(dtype): {namespace_name(ns)} has no dtype "
                                     f"{name!r}")
                return ns.astype(a, target)

            self._cast(convert)
        return self

    def half(self) -> Module:
        """Cast floating parameters and buffers to float16; return self."""
        return self.to(dtype="float16")

    def float(self) -> Module:
        """Cast floating parameters and buffers to float32; return self."""
        return self.to(dtype="float32")

    def double(self) -> Module:
        """Cast floating parameters and buffers to float64; return self."""
        return self.to(dtype="float64")

    def bfloat16(self) -> Module:
        """Cast floating parameters and buffers to bfloat16 (libraries that have it)."""
        return self.to(dtype="bfloat16")

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU (NumPy for CuPy models)."""
        return self.to_device("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """Move every parameter and buffer to GPU ``device`` (CuPy for NumPy models)."""
        return self.to_device(f"cuda:{0 if device is None else int(device)}")

    def to_device(self, device: Any, xp: Any = None) -> Module:
        """Move every parameter and buffer to ``device`` (and library ``xp`` if given).

        ``"cuda:0"`` selects CuPy for NumPy models, ``"cpu"`` NumPy for CuPy models;
        torch models stay torch tensors. Returns ``self``.
        """
        from ..xp import infer_namespace, to_namespace

        def move(a: Any, is_param: bool = False) -> Any:
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
            if dev is None:
                return to_namespace(a, dst, None) if dst is not src else a
            if isinstance(dev, str) and namespace_name(dst) == "cupy":
                # CuPy names devices by objects: "cuda:1" is the second of them.
                idx = int(dev.split(":", 1)[1]) if ":" in dev else 0
                dev = dst.__array_namespace_info__().devices()[idx]
            if dst is src:
                import array_api_compat

                return array_api_compat.to_device(a, dev)
            return to_namespace(a, dst, None if namespace_name(dst) == "numpy" else dev)

        return self._cast(move)

    def __deepcopy__(self, memo: dict) -> Module:
        # Array libraries (modules) held for lazy creation are shared, not copied.
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            new.__dict__[k] = v if isinstance(v, types.ModuleType) else copy.deepcopy(v, memo)
        return new

    # -- display ----------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = []
        for name in self._registry()[1]:
            child = getattr(self, name)
            body = repr(child).replace("\n", "\n  ")
            child_lines.append(f"({name}): {body}")
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def extra_repr(self) -> str:
        """The text inside this module's ``repr`` parentheses (its arguments)."""
        return ""


def _is_dtype(a: Any) -> bool:
    if isinstance(a, str):
        return a in ("float16", "float32", "float64", "bfloat16", "complex64", "complex128")
    mod = type(a).__module__
    return (type(a).__name__ in ("dtype", "DType") or "dtype" in type(a).__name__.lower()
            or (isinstance(a, type) and mod == "numpy"))


def _read_state_file(path: Any) -> dict[str, Any]:
    p = os.fspath(path)
    low = p.lower()
    if low.endswith((".pt", ".pth", ".bin", ".ckpt", ".pkl")):
        raise CheckpointError(
            f"load_state_dict({p!r}): a pickled PyTorch file is never loaded (unpickling "
            f"runs code). Convert it once where torch is installed: "
            f"import torch, safetensors.torch; "
            f"safetensors.torch.save_file(model.state_dict(), 'x.safetensors') "
            f"(or torch.load(...) of the dict first), then load 'x.safetensors'.")
    from ..io import read_state

    state = read_state(p)
    if not isinstance(state, dict):
        raise CheckpointError(f"load_state_dict({p!r}): expected a file of named arrays")
    return state


def _dtype_name(dtype: Any) -> str:
    # Dtypes of two libraries do not compare equal (and array-api-strict warns when
    # asked), so compare their short names: float32, int64...
    s = str(dtype)
    for prefix in ("torch.", "array_api_strict.", "dtype('", "<dtype '", "jax.numpy."):
        if s.startswith(prefix):
            s = s[len(prefix):]
    return s.rstrip("')>")


def _any_array(module: Module) -> Any:
    for p in module.parameters():
        if p.array is not None:
            return p.array
    return None


def _assign(m: Module, n: str, cur: Any, given: Any) -> None:
    """``load_state_dict(assign=True)`` of one entry: ``given`` itself becomes the
    parameter (keeping ``cur``'s ``requires_grad``) or the buffer."""
    if isinstance(cur, Parameter):
        if isinstance(given, Parameter):
            param = given
        else:
            param = Parameter(_host_value(given, n))
        if param.requires_grad != cur.requires_grad:
            param.requires_grad_(cur.requires_grad)
        setattr(m, n, param)
    else:
        object.__setattr__(m, n, _host_value(given, n))


def _host_value(value: Any, key: str) -> Any:
    if isinstance(value, Variable):
        value = value.array
    if is_array(value):
        return value
    # A torch tensor that requires grad, or another array-like with a shape.
    detach = getattr(value, "detach", None)
    if callable(detach):
        value = detach()
        if is_array(value):
            return value
    raise DTypeError(f"load_state_dict({key}): expected an array, got {describe(value)}")


def _to_like(value: Any, like: Any, keep_dtype: bool = False) -> Any:
    """``value`` (any library) as an array of ``like``'s library, device and dtype."""
    if isinstance(value, Variable):
        value = value.array
    if not is_array(value):
        raise DTypeError(f"load_state_dict: expected arrays, got {describe(value)}")
    if like is None:
        from ..xp import default_namespace

        return from_numpy(to_numpy(value), xp=default_namespace())
    xp = namespace_of(like)
    floating = xp.isdtype(like.dtype, ("real floating", "complex floating"))
    if namespace_of(value) is xp and value.device == like.device:
        if keep_dtype and not floating:
            return xp.asarray(value, copy=True)
        if keep_dtype:
            vx = namespace_of(value)
            if not vx.isdtype(value.dtype, ("real floating", "complex floating")):
                return xp.asarray(value, copy=True)
        return xp.astype(value, like.dtype, copy=True)
    host = to_numpy(value)
    out = from_numpy(host, like=like)
    if keep_dtype and host.dtype.kind != "f":
        return out
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
            f"model.to(device, xp=...)."
        )
    if a.device != pa.device:
        from .._errors import DeviceMismatchError

        raise DeviceMismatchError(
            f"{op}(x): expected an array on {pa.device} like the parameters, got "
            f"{a.device}. Move the input, or the model with model.to({a.device!r})."
        )


def check_features(op: str, x: Any, axis: int, expected: int) -> None:
    """Raise :class:`ShapeError` when ``x.shape[axis]`` is not ``expected``."""
    shape = tuple(x.shape)
    if len(shape) <= abs(axis) - (axis < 0) or shape[axis] != expected:
        raise ShapeError(
            f"{op}(x): expected {expected} features on axis {axis}, got an input of shape "
            f"{shape}. The layer's size was fixed at construction or by its first input."
        )
