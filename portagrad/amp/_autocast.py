"""autocast: the ops of torch's autocast lists run in float16/bfloat16 ("lower
precision": matrix products, convolutions...) or in float32 (the losses, ``prod``, the
decompositions...), per device type, as ``torch.autocast``; the parameters stay float32
(the master weights).

The lists name the public ops of :mod:`portagrad.ops` (the outermost one being computed
decides). Matrix products, ``linear`` and convolutions cast their own operands; every
other listed op is cast at its primitives by a hook of the tape, active only inside an
enabled block.
"""

from __future__ import annotations

import threading
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "low_precision",
           "full_precision", "FLOAT32_OPS", "LOWER_PRECISION_OPS"]

# torch's autocast lists (torch 2.13, aten/src/ATen/autocast_mode.cpp), as the names of
# portagrad's ops that compute them. Names ending in "." cover a namespace ("fft.").
_LOSSES = frozenset({
    "softmax_cross_entropy", "nll_loss", "mean_squared_error", "mean_absolute_error",
    "huber_loss", "binary_cross_entropy", "sigmoid_cross_entropy", "kl_divergence",
    "margin_ranking_loss", "soft_margin_loss", "multi_margin_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet", "poisson_nll", "multilabel_margin_loss",
    "connectionist_temporal_classification", "ctc_loss"})
FLOAT32_OPS: dict[str, frozenset[str]] = {
    "cpu": _LOSSES | frozenset({
        "prod", "linalg.trace", "linalg.inv", "linalg.qr", "linalg.svd", "linalg.cholesky",
        "linalg.eigh", "linalg.eigvalsh", "linalg.solve", "linalg.lstsq",
        "max_pool3d", "avg_pool3d", "grid_sample", "fractional_max_pool2d",
        "fractional_max_pool3d", "max_unpool2d", "max_unpool3d"}),
    "cuda": _LOSSES | frozenset({
        "softmax", "log_softmax", "layer_norm", "group_norm", "sum", "prod",
        "cumulative_sum", "exp", "expm1", "log", "log1p", "log2", "log10", "pow",
        "reciprocal", "rsqrt", "acos", "asin", "cosh", "sinh", "tan", "erfinv", "softplus",
        "normalize", "cosine_similarity", "pdist", "linalg.vector_norm", "linalg.norm"}),
}
LOWER_PRECISION_OPS: dict[str, frozenset[str]] = {
    "cpu": frozenset({"matmul", "linear", "conv", "conv1d", "conv2d", "conv3d",
                      "conv_transpose", "conv_transpose1d", "conv_transpose2d",
                      "conv_transpose3d", "prelu", "scaled_dot_product_attention",
                      "einsum"}),
    "cuda": frozenset({"matmul", "linear", "conv", "conv1d", "conv2d", "conv3d",
                       "conv_transpose", "conv_transpose1d", "conv_transpose2d",
                       "conv_transpose3d", "prelu"}),
}

_LOW = ("float16", "bfloat16")
_local = threading.local()


def _stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _dtype_name(dtype: Any) -> str:
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    name = str(name).removeprefix("torch.")
    if name not in _LOW:
        raise PortagradValueError(f"autocast(dtype): expected float16 or bfloat16, got "
                                  f"{dtype!r}")
    return name


class autocast:  # noqa: N801 - torch's name
    """Run the ops of torch's autocast lists in ``dtype`` or in float32 inside the block.

    As ``torch.autocast`` for ``device_type``: float32 inputs of the lower-precision ops
    (:data:`LOWER_PRECISION_OPS`: ``matmul``, ``linear``, convolutions, ``prelu``,
    ``scaled_dot_product_attention``, ``einsum``) are cast to ``dtype`` (their gradients
    flow back cast to float32, so float32 parameters get float32 gradients), and the
    float32 ops (:data:`FLOAT32_OPS`: on CPU the losses, ``prod``, the decompositions,
    3-d pooling, ``grid_sample``...; on CUDA also ``softmax``, ``layer_norm``,
    ``sum``...) run in float32 whatever their input. Other ops run in the dtype of their
    inputs. Nests; ``enabled=False`` turns it off inside.

    Parameters
    ----------
    device_type
        ``"cpu"`` (default dtype bfloat16) or ``"cuda"`` (float16), as torch.
    dtype
        ``"float16"``/``"bfloat16"`` or a dtype of that name (NumPy has no bfloat16).
    enabled
        Whether casting happens inside the block.
    cache_enabled
        Accepted for torch's signature (casts are not cached here).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.nn.Parameter(np.ones((3, 2), np.float32))
    >>> with pg.amp.autocast("cuda", dtype="float16"):
    ...     y = pg.ops.matmul(np.ones((1, 3), np.float32), w)
    ...     p = pg.ops.softmax(y)
    >>> y.dtype, p.dtype
    (dtype('float16'), dtype('float32'))
    >>> p.sum().backward(); w.grad.dtype
    dtype('float32')
    """

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type not in ("cpu", "cuda"):
            raise PortagradValueError(f"autocast(device_type): expected 'cpu' or 'cuda', got "
                                      f"{device_type!r}")
        if not isinstance(enabled, bool):
            raise PortagradTypeError(f"autocast(enabled): expected a bool, got {enabled!r}")
        self.device_type = device_type
        self.fast_dtype = _dtype_name(dtype if dtype is not None else
                                      ("float16" if device_type == "cuda" else "bfloat16"))
        self.enabled = enabled

    def __enter__(self) -> autocast:
        st = _stack()
        st.append((self.fast_dtype, self.device_type) if self.enabled else None)
        _sync_hook(st)
        return self

    def __exit__(self, *exc: Any) -> None:
        st = _stack()
        st.pop()
        _sync_hook(st)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return run


def is_autocast_enabled() -> bool:
    """Whether an enabled :class:`autocast` block is active in this thread."""
    s = _stack()
    return bool(s) and s[-1] is not None


def get_autocast_dtype() -> str | None:
    """The active block's dtype name, or ``None``."""
    s = _stack()
    return s[-1][0] if s and s[-1] is not None else None


def _active() -> tuple[str, str] | None:
    s = _stack()
    return s[-1] if s else None


def _sync_hook(st: list) -> None:
    from ..tape._mode import set_cast

    set_cast(_cast_operands if st and st[-1] is not None else None)


def _listed(name: str | None, names: frozenset[str]) -> bool:
    if name is None:
        return False
    if name in names:
        return True
    dot = name.find(".")
    return dot > 0 and name[:dot + 1] in names


def _public_op() -> str | None:
    from ..ops._core import _public_op_on_stack

    return _public_op_on_stack()


def _cast_operands(prim: Any, args: tuple) -> tuple:
    """The tape's hook inside an enabled block: the Variable operands of a primitive of a
    listed op, cast to the op's precision."""
    from ..tape._mode import CAST, state
    from ..tape._variable import Variable

    active = _active()
    if active is None:
        return args
    name, device = active
    low = [a for a in args if isinstance(a, Variable) and _dtype_str(a) in _LOW]
    f32 = [a for a in args if isinstance(a, Variable) and _dtype_str(a) == "float32"]
    if not low and not f32:
        return args
    op = _public_op()
    if low and _listed(op, FLOAT32_OPS[device]):
        want, pick = "float32", low
    elif f32 and _listed(op, LOWER_PRECISION_OPS[device]):
        want, pick = name, f32
    else:
        return args
    st = state
    st.mode &= ~CAST  # the casts are primitives themselves
    try:
        ids = {id(a) for a in pick}
        return tuple(_to(a, want) if id(a) in ids else a for a in args)
    finally:
        st.mode |= CAST


def _dtype_str(v: Any) -> str:
    dt = v.array.dtype
    return str(getattr(dt, "name", dt)).removeprefix("torch.")


def _to(v: Any, name: str) -> Any:
    dtype = getattr(v.xp, name, None)
    if dtype is None:
        raise PortagradTypeError(f"autocast(dtype={name!r}): the array library of the "
                                 f"inputs has no {name}; use float16 (NumPy has no "
                                 f"bfloat16)")
    return v.astype(dtype)


def _floating32(v: Any) -> bool:
    dt = getattr(v, "dtype", None)
    return dt is not None and getattr(dt, "name", str(dt)).removeprefix("torch.") == "float32"


def _low_like(v: Any, name: str) -> Any:
    xp = v.xp if hasattr(v, "xp") else None
    dtype = getattr(xp, name, None) if xp is not None else None
    if dtype is None:
        raise PortagradTypeError(f"autocast(dtype={name!r}): the array library of the "
                                 f"inputs has no {name}; use float16 (NumPy has no "
                                 f"bfloat16)")
    return v.astype(dtype)


def low_precision(*args: Any) -> tuple:
    """The operands of a matrix product or convolution, float32 ones cast to the active
    block's dtype (unchanged outside a block, and inside an op of the float32 list).
    Called by those ops."""
    active = _active()
    if active is None or _listed(_public_op(), FLOAT32_OPS[active[1]]):
        return args
    name = active[0]
    from ..tape._variable import as_variable

    out = []
    for a in args:
        if a is not None and _floating32(a):
            a = _low_like(as_variable(a) if not hasattr(a, "xp") else a, name)
        out.append(a)
    return tuple(out)


def full_precision(x: Any) -> Any:
    """``x`` in float32 inside an active block when it is float16/bfloat16 and the op
    being computed is in the block's float32 list (softmax and its losses call it)."""
    active = _active()
    if active is None or not _listed(_public_op(), FLOAT32_OPS[active[1]]):
        return x
    dt = getattr(x, "dtype", None)
    name = getattr(dt, "name", str(dt)).removeprefix("torch.") if dt is not None else ""
    if name in _LOW and hasattr(x, "xp"):
        return x.astype(x.xp.float32)
    return x
