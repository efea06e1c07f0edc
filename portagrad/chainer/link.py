"""Chainer's ``Link``, ``Chain``, ``ChainList`` and ``Sequential``.

The interface other parts of the Chainer face (optimizers, updaters, extensions,
serializers) rely on:

``Link``
    ``with self.init_scope(): self.W = Parameter(...)`` registers a parameter (and, in a
    ``Chain``, ``self.child = SomeLink()`` a child link); outside the scope an assignment
    is a plain attribute, as in Chainer. ``within_init_scope`` says whether the scope is
    open. ``add_param(name, shape=None, dtype=float32, initializer=None)``,
    ``add_persistent(name, value)`` and ``register_persistent(name)`` register by name.

    Traversal, each sorted by name at every level as in Chainer:
    ``params(include_uninit=True)`` yields the Parameters, ``namedparams(include_uninit=
    True)`` ``(path, Parameter)`` with paths ``'/W'``, ``'/child/W'``;
    ``links(skipself=False)`` and ``namedlinks(skipself=False)`` this link (path ``'/'``)
    and every descendant (``'/child'``, ``'/child/grandchild'``); ``children()`` the
    direct child links. ``name`` is the name a parent registered this link under (None at
    the top).

    Gradients and updates: ``cleargrads()`` sets every ``grad`` to None,
    ``zerograds()`` to zeros, ``addgrads(link)`` adds another link's gradients;
    ``disable_update()``/``enable_update()`` flip ``param.update_rule.enabled`` (rules
    an optimizer set), ``update_enabled``; ``copyparams(link, copy_persistent=True)``,
    ``copy(mode='share'|'copy'|'init')``, ``repeat(n, mode='init')``,
    ``count_params()``.

    Devices: ``to_device(spec)`` moves every parameter (an uninitialized one is created
    there later), persistent array and child, and returns the link; ``to_cpu()``,
    ``to_gpu(device=None)``; ``device`` is the device object
    (:mod:`portagrad.chainer.device`) and ``xp`` its array module (``numpy`` on the CPU).

    ``serialize(serializer)`` calls ``serializer(name, param.array)`` for each parameter
    (initializing an uninitialized one from what a deserializer returns) and
    ``d[name] = serializer(name, value)`` for each persistent value; a ``Chain`` then
    serializes each child with ``serializer[child_name]``, a ``ChainList`` with
    ``serializer[str(index)]``. This is Chainer's protocol and gives Chainer's npz keys.

    Calling a link calls ``forward``; link hooks (``add_hook``) see each call.

``Parameter`` (:mod:`portagrad.chainer.variable`)
    ``.data``/``.array``, ``.grad``/``.grad_var``, ``.update_rule`` (None until an
    optimizer sets one), ``.is_initialized``, ``.initialize(shape)``, ``.name``.
"""

from __future__ import annotations

import contextlib
import copy as _copy
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..tape._variable import Variable as _TapeVariable
from ..xp._namespace import is_array
from .device import CpuDevice, Device, get_device
from .variable import Parameter

__all__ = ["Link", "Chain", "ChainList", "Sequential", "LinkHook"]


class LinkHook:
    """Chainer's link hook: ``forward_preprocess(args)`` and ``forward_postprocess(args)``
    around each call of the links it is added to; ``args.link``, ``args.forward_name``,
    ``args.args``, ``args.kwargs`` and (after) ``args.out``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> class Count(chainer.LinkHook):
    ...     name = "count"
    ...     calls = 0
    ...     def forward_postprocess(self, args):
    ...         self.calls += 1
    >>> hook = Count()
    >>> lin = chainer.links.Linear(2, 1).add_hook(hook)
    >>> _ = lin(np.ones((1, 2), np.float32)); hook.calls
    1
    """

    name = "LinkHook"

    def added(self, link: Link | None) -> None:
        pass

    def deleted(self, link: Link | None) -> None:
        pass

    def forward_preprocess(self, args: Any) -> None:
        pass

    def forward_postprocess(self, args: Any) -> None:
        pass


class _HookArgs:
    def __init__(self, link: Link, forward_name: str, args: tuple, kwargs: dict) -> None:
        self.link = link
        self.forward_name = forward_name
        self.args = args
        self.kwargs = kwargs
        self.out: Any = None


class Link:
    """Chainer's ``Link``: a block of parameters and persistent values (see the module
    docstring for the whole interface).

    Parameters
    ----------
    params
        Chainer's old style ``Link(W=(3, 2))``: parameters by name and shape.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> class Affine(chainer.Link):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.init_scope():
    ...             self.w = chainer.Parameter(np.ones(2, np.float32))
    ...         self.add_persistent("calls", 0)
    ...     def forward(self, x):
    ...         self.calls += 1
    ...         return x * self.w
    >>> m = Affine()
    >>> m(np.array([1.0, 2.0], np.float32)).array, [n for n, _ in m.namedparams()]
    (array([1., 2.], dtype=float32), ['/w'])
    """

    def __init__(self, **params: Any) -> None:
        d = self.__dict__
        d["_params"] = []
        d["_persistent"] = []
        d["_within_init_scope"] = False
        d["_device"] = CpuDevice()
        d["_local_link_hooks"] = None
        d["name"] = None
        for name, value in params.items():
            shape, dtype = (value, np.float32) if not (
                isinstance(value, tuple) and len(value) == 2 and not isinstance(
                    value[1], (int, np.integer))) else value
            self.add_param(name, shape, dtype=dtype)

    def _ensure(self) -> None:
        # Subclasses that set attributes before calling Link.__init__ still work.
        if "_params" not in self.__dict__:
            Link.__init__(self)

    # -- registration --------------------------------------------------------------------
    @property
    def within_init_scope(self) -> bool:
        """Whether ``init_scope`` is open (assignments register parameters and links)."""
        return bool(self.__dict__.get("_within_init_scope", False))

    @contextlib.contextmanager
    def init_scope(self) -> Iterator[None]:
        """Inside this block, assigning a Parameter registers it (and, in a Chain, a Link
        registers it as a child)."""
        self._ensure()
        old = self._within_init_scope
        self.__dict__["_within_init_scope"] = True
        try:
            yield
        finally:
            self.__dict__["_within_init_scope"] = old

    def __setattr__(self, name: str, value: Any) -> None:
        self._ensure()
        if self.within_init_scope and isinstance(value, Parameter):
            value.name = name
            if not isinstance(self._device, CpuDevice) or value._device is not None:
                value.to_device(self._device)
            if name not in self._params:
                self._params.append(name)
            if name in self._persistent:
                self._persistent.remove(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for reg in ("_params", "_persistent"):
            lst = self.__dict__.get(reg)
            if lst is not None and name in lst:
                lst.remove(name)
        object.__delattr__(self, name)

    def add_param(self, name: str, shape: Any = None, dtype: Any = np.float32,
                  initializer: Any = None) -> None:
        """Register a new Parameter ``name`` (Chainer's older style).

        Parameters
        ----------
        name
            The attribute name.
        shape
            Its shape (None: uninitialized).
        dtype
            Its dtype when ``initializer`` is None (filled with NaN, as Chainer).
        initializer
            An initializer, a number or an array.
        """
        self._ensure()
        if name in self.__dict__:
            raise AttributeError(f"add_param({name!r}): expected a new attribute name, got "
                                 f"one the link already has")
        from . import initializers

        if initializer is None:
            initializer = initializers.NaN(dtype)
        with self.init_scope():
            setattr(self, name, Parameter(initializer, shape))

    def add_persistent(self, name: str, value: Any) -> None:
        """Register a persistent value (an array or a scalar saved by ``serialize``).

        Parameters
        ----------
        name
            The attribute name.
        value
            Its value.
        """
        self._ensure()
        if name in self.__dict__:
            raise AttributeError(f"add_persistent({name!r}): expected a new attribute name, "
                                 f"got one the link already has")
        if is_array(value) and not isinstance(self._device, CpuDevice):
            value = self._device.send(value)
        self._persistent.append(name)
        self._params[:] = [p for p in self._params if p != name]
        object.__setattr__(self, name, value)

    def register_persistent(self, name: str) -> None:
        """Make the existing attribute ``name`` persistent.

        Parameters
        ----------
        name
            The attribute name.
        """
        self._ensure()
        if not hasattr(self, name):
            raise AttributeError(f"register_persistent({name!r}): expected an existing "
                                 f"attribute, got none of that name")
        if name not in self._persistent:
            self._persistent.append(name)
        self._params[:] = [p for p in self._params if p != name]

    # -- calling -------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        hooks = self._all_hooks()
        if not hooks:
            return self.forward(*args, **kwargs)
        info = _HookArgs(self, "forward", args, kwargs)
        for h in hooks:
            h.forward_preprocess(info)
        out = self.forward(*args, **kwargs)
        info.out = out
        for h in hooks:
            h.forward_postprocess(info)
        return out

    def _all_hooks(self) -> list:
        local = self.__dict__.get("_local_link_hooks")
        return list(local.values()) if local else []

    @property
    def local_link_hooks(self) -> dict:
        """The hooks added to this link, by name."""
        self._ensure()
        if self._local_link_hooks is None:
            self.__dict__["_local_link_hooks"] = {}
        return self._local_link_hooks

    def add_hook(self, hook: LinkHook, name: str | None = None) -> Link:
        """Add a :class:`LinkHook` to this link; returns the link."""
        name = hook.name if name is None else name
        if name in self.local_link_hooks:
            raise KeyError(f"add_hook(name): expected a new hook name, got {name!r} again")
        self.local_link_hooks[name] = hook
        hook.added(self)
        return self

    def delete_hook(self, name: str) -> None:
        """Remove the hook ``name``."""
        hook = self.local_link_hooks.pop(name)
        hook.deleted(self)

    # -- traversal -----------------------------------------------------------------------
    def params(self, include_uninit: bool = True) -> Iterator[Parameter]:
        """Every Parameter of this link and its descendants."""
        for _, p in self.namedparams(include_uninit):
            yield p

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(path, Parameter)`` pairs: ``'/W'`` here, ``'/child/W'`` below."""
        self._ensure()
        d = self.__dict__
        for name in sorted(self._params):
            p = d[name]
            if include_uninit or p.array is not None:
                yield "/" + name, p

    def links(self, skipself: bool = False) -> Iterator[Link]:
        """This link (unless ``skipself``) and every descendant."""
        for _, link in self.namedlinks(skipself):
            yield link

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        """``(path, link)`` pairs: ``'/'`` for this link, ``'/child'`` below."""
        if not skipself:
            yield "/", self

    def children(self) -> Iterator[Link]:
        """The direct child links (none for a plain Link)."""
        return iter(())

    # -- gradients and updates -------------------------------------------------------------
    def cleargrads(self) -> None:
        """Set every parameter's gradient to None."""
        for p in self.params():
            p.cleargrad()

    def zerograds(self) -> None:
        """Set every parameter's gradient to zeros (Chainer's older way to clear)."""
        warnings.warn("Link.zerograds is deprecated in Chainer; use cleargrads",
                      DeprecationWarning, stacklevel=2)
        for p in self.params():
            p.zerograd()

    def addgrads(self, link: Link) -> None:
        """Add the gradients of ``link`` (the same structure) to this link's."""
        src = dict(link.namedparams())
        for path, p in self.namedparams():
            p.addgrad(src[path])

    def copyparams(self, link: Link, copy_persistent: bool = True) -> None:
        """Copy the parameter values (and persistent values) of ``link`` into this one."""
        src = dict(link.namedparams())
        for path, p in self.namedparams():
            p.copydata(src[path])
        if copy_persistent:
            others = dict(link.namedlinks())
            for path, mine in self.namedlinks():
                other = others[path]
                for name in mine._persistent:
                    v = other.__dict__[name]
                    object.__setattr__(mine, name, mine._device.send(v) if is_array(v)
                                       else _copy.copy(v))

    def enable_update(self) -> None:
        """Let the optimizer update every parameter (``update_rule.enabled = True``)."""
        for p in self.params():
            if p.update_rule is not None:
                p.update_rule.enabled = True

    def disable_update(self) -> None:
        """Keep the optimizer from updating these parameters."""
        for p in self.params():
            if p.update_rule is not None:
                p.update_rule.enabled = False

    @property
    def update_enabled(self) -> bool:
        """Whether some parameter has an enabled update rule."""
        return any(p.update_rule is not None and p.update_rule.enabled
                   for p in self.params())

    def count_params(self) -> int:
        """The number of scalars in every initialized parameter."""
        n = 0
        for path, p in self.namedparams():
            if p.array is None:
                warnings.warn(f"count_params: parameter {path!r} is not initialized and is "
                              f"not counted", stacklevel=2)
                continue
            n += p.size
        return n

    # -- copies ----------------------------------------------------------------------------
    def copy(self, mode: str = "share") -> Link:
        """A copy of the link: ``'share'`` shares the arrays, ``'copy'`` copies them,
        ``'init'`` copies and draws fresh initial values."""
        if mode == "share":
            ret = _copy.copy(self)
            d = ret.__dict__
            d["_params"] = list(self._params)
            d["_persistent"] = list(self._persistent)
            d["name"] = None
            for name in ret._params:
                p = _copy.copy(d[name])
                p.grad_var = None
                d[name] = p
            ret._copy_children("share")
            return ret
        if mode == "copy":
            return _copy.deepcopy(self)
        if mode == "init":
            ret = _copy.deepcopy(self)
            for p in ret.params(include_uninit=False):
                p.initialize(p.shape)
            return ret
        raise ValueError(f"copy(mode): expected 'init', 'copy' or 'share', got {mode!r}")

    def _copy_children(self, mode: str) -> None:
        pass

    def repeat(self, n_repeat: int, mode: str = "init") -> Sequential:
        """A :class:`Sequential` of ``n_repeat`` copies (see :meth:`copy` for ``mode``)."""
        if mode not in ("init", "copy", "share"):
            raise ValueError(f"repeat(mode): expected 'init', 'copy' or 'share', got "
                             f"{mode!r}")
        ret = Sequential()
        for _ in range(max(int(n_repeat), 0)):
            ret.append(self.copy(mode))
        return ret

    # -- devices ---------------------------------------------------------------------------
    @property
    def device(self) -> Device:
        """The device object of the link's arrays."""
        self._ensure()
        return self._device

    @property
    def xp(self) -> Any:
        """The array module of the link's device (``numpy`` on the CPU)."""
        return self.device.xp

    def to_device(self, device: Any) -> Link:
        """Move every parameter, persistent array and child to ``device``; returns self."""
        d = get_device(device)
        for link in self.links():
            link.__dict__["_device"] = d
            for name in link._params:
                link.__dict__[name].to_device(d)
            for name in link._persistent:
                v = link.__dict__[name]
                if is_array(v) and not isinstance(v, (np.generic,)):
                    object.__setattr__(link, name, d.send(v))
        return self

    def to_cpu(self) -> Link:
        """Move to the CPU (NumPy)."""
        return self.to_device(-1)

    def to_gpu(self, device: Any = None) -> Link:
        """Move to CuPy's GPU ``device`` (the current one, 0, when None)."""
        return self.to_device(0 if device is None else getattr(device, "id", device))

    def to_intel64(self) -> Link:
        from .device import DeviceUnavailableError

        raise DeviceUnavailableError("to_intel64(): expected iDeep, got none in portagrad")

    def to_chx(self) -> Link:
        from .device import DeviceUnavailableError

        raise DeviceUnavailableError("to_chx(): expected ChainerX, got none "
                                     "(chainerx.is_available() is False)")

    def from_chx(self) -> Link:
        return self

    # -- serialization ---------------------------------------------------------------------
    def serialize(self, serializer: Any) -> None:
        """Chainer's serialization protocol (see the module docstring)."""
        d = self.__dict__
        for name in self._params:
            p = d[name]
            data = serializer(name, p.array)
            if data is None:
                continue
            if isinstance(data, _TapeVariable):
                data = data.array
            if p.array is None:
                p.initialize(tuple(data.shape))
            if data is not p.array:
                p._set_array(_into(data, p.array))
        for name in self._persistent:
            object.__setattr__(self, name, serializer(name, d[name]))

    def __str__(self) -> str:
        return repr(self)

    def __repr__(self) -> str:
        specs = self.printable_specs() if hasattr(self, "printable_specs") else None
        inner = ", ".join(f"{k}={v!r}" for k, v in specs) if specs else ""
        return f"{type(self).__name__}({inner})"


def _into(src: Any, like: Any) -> Any:
    """``src`` as an array of ``like``'s library, device and dtype."""
    from ..xp import from_numpy, namespace_of, to_numpy

    if isinstance(like, np.ndarray):
        np.copyto(like, to_numpy(src), casting="same_kind")
        return like
    xp = namespace_of(like)
    out = from_numpy(to_numpy(src), like=like)
    return out if out.dtype == like.dtype else xp.astype(out, like.dtype)


class Chain(Link):
    """Chainer's ``Chain``: a link whose child links are attributes.

    Parameters
    ----------
    links
        Children by name (Chainer's older style ``Chain(l1=L.Linear(2, 3))``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> import portagrad.chainer.links as L
    >>> class MLP(chainer.Chain):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.init_scope():
    ...             self.l1 = L.Linear(None, 3)
    ...             self.l2 = L.Linear(3, 2)
    ...     def forward(self, x):
    ...         return self.l2(chainer.functions.relu(self.l1(x)))
    >>> m = MLP()
    >>> m(np.ones((4, 5), np.float32)).shape
    (4, 2)
    >>> [n for n, _ in m.namedparams()], [n for n, _ in m.namedlinks(skipself=True)]
    (['/l1/W', '/l1/b', '/l2/W', '/l2/b'], ['/l1', '/l2'])
    """

    def __init__(self, **links: Any) -> None:
        super().__init__()
        self.__dict__["_children"] = []
        with self.init_scope():
            for name, link in links.items():
                setattr(self, name, link)

    def _ensure(self) -> None:
        if "_params" not in self.__dict__:
            Link.__init__(self)
        if "_children" not in self.__dict__:
            self.__dict__["_children"] = []

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._ensure()
        if self.within_init_scope and isinstance(value, Link):
            if hasattr(self, name) and name not in self._children:
                raise AttributeError(f"Chain: cannot register a link as {name!r}, an "
                                     f"attribute of that name exists")
            value.__dict__["name"] = name
            if not isinstance(self._device, CpuDevice):
                value.to_device(self._device)
            if name not in self._children:
                self._children.append(name)
        elif name in self.__dict__.get("_children", ()) and not isinstance(value, Link):
            self._children.remove(name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__.get("_children", ()):
            self._children.remove(name)
        super().__delattr__(name)

    def add_link(self, name: str, link: Link) -> None:
        """Register ``link`` as the child ``name`` (Chainer's older style)."""
        if name in self.__dict__:
            raise AttributeError(f"add_link({name!r}): expected a new attribute name, got "
                                 f"one the chain already has")
        if not isinstance(link, Link):
            raise TypeError(f"add_link(link): expected a Link, got {type(link).__name__}")
        with self.init_scope():
            setattr(self, name, link)

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from super().namedparams(include_uninit)
        d = self.__dict__
        for name in sorted(self._children):
            for path, p in d[name].namedparams(include_uninit):
                yield "/" + name + path, p

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self
        d = self.__dict__
        for name in sorted(self._children):
            child = d[name]
            yield "/" + name, child
            for path, link in child.namedlinks(True):
                yield "/" + name + path, link

    def children(self) -> Iterator[Link]:
        d = self.__dict__
        for name in sorted(self._children):
            yield d[name]

    def _copy_children(self, mode: str) -> None:
        d = self.__dict__
        d["_children"] = list(self._children)
        for name in self._children:
            child = d[name].copy(mode)
            child.__dict__["name"] = name
            d[name] = child

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        d = self.__dict__
        for name in self._children:
            d[name].serialize(serializer[name])

    def __repr__(self) -> str:
        d = self.__dict__
        lines = [f"{type(self).__name__}("]
        for name in self._children:
            body = repr(d[name]).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body},")
        return "\n".join(lines) + "\n)" if len(lines) > 1 else f"{type(self).__name__}()"


class ChainList(Link):
    """Chainer's ``ChainList``: child links in a list, named ``'0'``, ``'1'``, ...

    Parameters
    ----------
    links
        The first children.

    Examples
    --------
    >>> from portagrad import chainer
    >>> import portagrad.chainer.links as L
    >>> cl = chainer.ChainList(L.Linear(2, 3), L.Linear(3, 1))
    >>> len(cl), [n for n, _ in cl.namedparams()]
    (2, ['/0/W', '/0/b', '/1/W', '/1/b'])
    """

    def __init__(self, *links: Link) -> None:
        super().__init__()
        self.__dict__["_children"] = []
        for link in links:
            self.add_link(link)

    def _ensure(self) -> None:
        if "_params" not in self.__dict__:
            Link.__init__(self)
        if "_children" not in self.__dict__:
            self.__dict__["_children"] = []

    def __setattr__(self, name: str, value: Any) -> None:
        if self.within_init_scope and isinstance(value, Link):
            raise TypeError("ChainList: cannot register a link as an attribute; use "
                            "append/add_link")
        super().__setattr__(name, value)

    def __getitem__(self, index: Any) -> Any:
        return self._children[index]

    def __setitem__(self, index: int, value: Link) -> None:
        if not isinstance(value, Link):
            raise TypeError(f"ChainList[{index}] = value: expected a Link, got "
                            f"{type(value).__name__}")
        value.__dict__["name"] = str(index % len(self._children))
        if not isinstance(self._device, CpuDevice):
            value.to_device(self._device)
        self._children[index] = value

    def __iter__(self) -> Iterator[Link]:
        return iter(self._children)

    def __len__(self) -> int:
        return len(self._children)

    def add_link(self, link: Link) -> None:
        """Append ``link`` as the next child."""
        self._ensure()
        if not isinstance(link, Link):
            raise TypeError(f"add_link(link): expected a Link, got {type(link).__name__}")
        link.__dict__["name"] = str(len(self._children))
        if not isinstance(self._device, CpuDevice):
            link.to_device(self._device)
        self._children.append(link)

    append = add_link

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from super().namedparams(include_uninit)
        for i, child in enumerate(self._children):
            for path, p in child.namedparams(include_uninit):
                yield f"/{i}{path}", p

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self
        for i, child in enumerate(self._children):
            yield f"/{i}", child
            for path, link in child.namedlinks(True):
                yield f"/{i}{path}", link

    def children(self) -> Iterator[Link]:
        return iter(list(self._children))

    def _copy_children(self, mode: str) -> None:
        kids = [c.copy(mode) for c in self._children]
        for i, c in enumerate(kids):
            c.__dict__["name"] = str(i)
        self.__dict__["_children"] = kids

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        for i, child in enumerate(self._children):
            child.serialize(serializer[str(i)])

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        for i, c in enumerate(self._children):
            lines.append(f"  ({i}): " + repr(c).replace("\n", "\n  ") + ",")
        return "\n".join(lines) + "\n)" if len(lines) > 1 else f"{type(self).__name__}()"


class Sequential(ChainList):
    """Chainer's ``Sequential``: links and functions called one after another.

    Parameters
    ----------
    layers
        Links or callables (``F.relu``...). Links are the children, named by their
        position among the links.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> import portagrad.chainer.functions as F
    >>> import portagrad.chainer.links as L
    >>> model = chainer.Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2))
    >>> model(np.ones((1, 3), np.float32)).shape, len(model)
    ((1, 2), 3)
    """

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        self.__dict__["_layers"] = []
        for layer in layers:
            self.append(layer)

    def _relink(self) -> None:
        kids = [layer for layer in self._layers if isinstance(layer, Link)]
        for i, c in enumerate(kids):
            c.__dict__["name"] = str(i)
            if not isinstance(self._device, CpuDevice):
                c.to_device(self._device)
        self.__dict__["_children"] = kids

    def append(self, layer: Any) -> None:  # type: ignore[override]
        """Add a link or a callable at the end."""
        self.insert(len(self._layers), layer)

    add_link = append  # type: ignore[assignment]

    def insert(self, i: int, layer: Any) -> None:
        """Insert a link or a callable before position ``i``."""
        if not callable(layer):
            raise TypeError(f"Sequential.insert(layer): expected a link or a callable, got "
                            f"{type(layer).__name__}")
        self._layers.insert(i, layer)
        self._relink()

    def extend(self, layers: Any) -> None:
        """Append each of ``layers``."""
        for layer in layers:
            self.append(layer)

    def pop(self, i: int = -1) -> Any:
        layer = self._layers.pop(i)
        self._relink()
        return layer

    def remove(self, layer: Any) -> None:
        self._layers.remove(layer)
        self._relink()

    def remove_by_layer_type(self, type_name: str) -> None:
        """Remove every layer whose class (or function) is named ``type_name``."""
        self.__dict__["_layers"] = [
            layer for layer in self._layers
            if getattr(type(layer), "__name__", None) != type_name
            and getattr(layer, "__name__", None) != type_name]
        self._relink()

    def index(self, layer: Any) -> int:
        return self._layers.index(layer)

    def count(self, layer: Any) -> int:
        return self._layers.count(layer)

    def count_by_layer_type(self, type_name: str) -> int:
        return sum(1 for layer in self._layers
                   if getattr(type(layer), "__name__", None) == type_name
                   or getattr(layer, "__name__", None) == type_name)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return Sequential(*self._layers[i])
        return self._layers[i]

    def __setitem__(self, i: int, layer: Any) -> None:
        self._layers[i] = layer
        self._relink()

    def __delitem__(self, i: Any) -> None:
        del self._layers[i]
        self._relink()

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._layers))

    def __len__(self) -> int:
        return len(self._layers)

    def __add__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise TypeError(f"Sequential + other: expected a Sequential, got "
                            f"{type(other).__name__}")
        return Sequential(*self._layers, *other._layers)

    def flatten(self) -> Sequential:
        """A Sequential of the layers of nested Sequentials, unnested."""
        out = Sequential()
        for layer in self._layers:
            if isinstance(layer, Sequential):
                out.extend(layer.flatten())
            else:
                out.append(layer)
        return out

    def _copy_children(self, mode: str) -> None:
        self.__dict__["_layers"] = [layer.copy(mode) if isinstance(layer, Link) else layer
                                    for layer in self._layers]
        self._relink()

    def forward(self, *x: Any) -> Any:
        if not self._layers:
            raise RuntimeError("Sequential: expected at least one layer, got none")
        for layer in self._layers:
            x = layer(*x) if isinstance(x, tuple) else layer(x)
        return x

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        for i, layer in enumerate(self._layers):
            text = repr(layer) if isinstance(layer, Link) else getattr(
                layer, "__name__", repr(layer))
            lines.append(f"  ({i}): " + text.replace("\n", "\n  ") + ",")
        return "\n".join(lines) + "\n)" if len(lines) > 1 else f"{type(self).__name__}()"
