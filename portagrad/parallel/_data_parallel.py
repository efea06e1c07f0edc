"""Data-parallel training: identical replicas, averaged gradients.

:class:`DataParallel` wraps a model (or a list of parameters); :class:`DistributedOptimizer`
wraps an optimizer. Both broadcast rank 0's initial values, so every rank starts from the
same point, and average gradients before each update, so every rank stays identical.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._buckets import GradientSynchronizer
from ._comm import Communicator, create_communicator

__all__ = [
    "DataParallel",
    "DistributedOptimizer",
    "create_multi_node_optimizer",
    "broadcast_parameters",
    "broadcast_optimizer_state",
    "broadcast_state",
]


def _params_of(target: Any, op: str) -> list:
    if hasattr(target, "named_parameters"):
        named = list(target.named_parameters())
    else:
        named = [(str(i), p) for i, p in enumerate(target)]
    for name, p in named:
        if getattr(p, "array", None) is None:
            raise ValueError(
                f"{op}(params): expected initialized parameters, got {name!r} without an "
                f"array. Call the model once on a sample batch (or give its input sizes) "
                f"before wrapping it, so that every rank can start from rank 0's values."
            )
    return [p for _, p in named]


def broadcast_parameters(target: Any, comm: Communicator, root: int = 0) -> None:
    """Give every rank the root's parameter values (and a Module's persistent buffers).

    Parameters
    ----------
    target
        A :class:`portagrad.nn.Module` or an iterable of Variables, built identically on
        every rank.
    comm
        The communicator.
    root
        The rank whose values win.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.parallel import broadcast_parameters, create_communicator
    >>> comm = create_communicator()
    >>> w = pg.Variable(np.full(2, float(comm.rank)))
    >>> broadcast_parameters([w], comm)
    >>> w.array
    array([0., 0.])
    """
    if comm.size == 1:
        return
    if hasattr(target, "state_dict") and hasattr(target, "load_state_dict"):
        _params_of(target, "broadcast_parameters")
        state = target.state_dict()
        target.load_state_dict({k: comm.bcast(v, root=root) for k, v in state.items()})
        return
    for p in _params_of(target, "broadcast_parameters"):
        value = comm.bcast(p.array, root=root)
        if hasattr(p, "set_array"):
            p.set_array(value)
        else:
            p.array = value


def broadcast_state(obj: Any, comm: Communicator, root: int = 0) -> None:
    """Give every rank the root's ``obj.state_dict()`` (through ``load_state_dict``).

    Works for optimizers (step count, hyperparameters, per-parameter arrays), iterators,
    modules... The structure (names and scalars) travels as a small JSON message; every
    array travels as a buffer.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn import Parameter
    >>> from portagrad.optim import SGD
    >>> from portagrad.parallel import broadcast_state, create_communicator
    >>> opt = SGD([Parameter(np.ones(2))], lr=0.1, momentum=0.9)
    >>> broadcast_state(opt, create_communicator())
    >>> opt.t
    0
    """
    if comm.size == 1:
        return
    state = obj.state_dict() if comm.rank == root else None
    arrays: list = []
    skeleton = _skeleton(state, arrays) if state is not None else None
    skeleton = json.loads(comm_bcast_text(comm, json.dumps(skeleton), root))
    if comm.rank != root:
        arrays = [None] * _count_arrays(skeleton)
    received = [comm.bcast(a, root=root) for a in arrays]
    if comm.rank != root:
        obj.load_state_dict(_fill(skeleton, iter(received)))


def broadcast_optimizer_state(optimizer: Any, comm: Communicator, root: int = 0) -> None:
    """Give every rank the root optimizer's state (see :func:`broadcast_state`)."""
    broadcast_state(optimizer, comm, root)


def comm_bcast_text(comm: Communicator, text: str, root: int = 0) -> str:
    """Broadcast a short string as a byte buffer (with the communicator's deadline)."""
    data = np.frombuffer(text.encode(), dtype=np.uint8) if comm.rank == root else None
    return bytes(comm.bcast(data, root=root)).decode()


def _skeleton(obj: Any, arrays: list) -> Any:
    if isinstance(obj, dict):
        return {"d": {str(k): _skeleton(v, arrays) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {"l": [_skeleton(v, arrays) for v in obj]}
    if hasattr(obj, "shape") and hasattr(obj, "dtype"):
        arrays.append(getattr(obj, "array", obj))
        return {"a": len(arrays) - 1}
    return {"v": obj}


def _count_arrays(sk: Any) -> int:
    if "d" in sk:
        return sum(_count_arrays(v) for v in sk["d"].values())
    if "l" in sk:
        return sum(_count_arrays(v) for v in sk["l"])
    return 1 if "a" in sk else 0


def _fill(sk: Any, arrays: Iterator) -> Any:
    if "d" in sk:
        return {k: _fill(v, arrays) for k, v in sk["d"].items()}
    if "l" in sk:
        return [_fill(v, arrays) for v in sk["l"]]
    if "a" in sk:
        return next(arrays)
    return sk["v"]


class DataParallel:
    """A model replicated on every rank, whose gradients are averaged across ranks.

    Parameters
    ----------
    model
        A :class:`portagrad.nn.Module` (called through this wrapper) or a list of
        parameters; built identically, with initialized parameters, on every rank.
    comm
        A :class:`~portagrad.parallel.Communicator` (default: a new one over
        ``COMM_WORLD``).
    mode
        ``"overlap"`` (buckets reduced during backward) or ``"packed"`` (one allreduce
        after backward).
    bucket_cap_mb
        Bucket size for ``"overlap"``.
    broadcast
        Copy rank 0's parameters to every rank first.

    Call :meth:`synchronize` between ``loss.backward()`` and the optimizer step (or use
    :class:`DistributedOptimizer`, which does it in ``step``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.parallel import DataParallel
    >>> w = pg.Variable(np.array([1.0, -1.0]))
    >>> dp = DataParallel([w], mode="packed")
    >>> (w * w).sum().backward()
    >>> dp.synchronize()
    >>> w.grad
    array([ 2., -2.])
    """

    def __init__(self, model: Any, comm: Communicator | None = None, *, mode: str = "overlap",
                 bucket_cap_mb: float = 25.0, broadcast: bool = True) -> None:
        self.comm = comm if comm is not None else create_communicator()
        self.model = model
        params = _params_of(model, "DataParallel")
        if broadcast:
            broadcast_parameters(model, self.comm)
        self.synchronizer = GradientSynchronizer(params, self.comm, mode=mode,
                                                 bucket_cap_mb=bucket_cap_mb)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.model(*args, **kwargs)

    def parameters(self) -> list:
        return list(self.synchronizer.params)

    def synchronize(self) -> None:
        """Wait for (and finish) the averaging of every parameter's gradient."""
        self.synchronizer.synchronize()

    def no_sync(self) -> contextlib.AbstractContextManager:
        """Accumulate gradients locally inside the block (no communication)."""
        return self.synchronizer.no_sync()

    def close(self) -> None:
        """Remove the gradient hooks."""
        self.synchronizer.close()


class DistributedOptimizer:
    """An optimizer whose every step uses gradients averaged over all ranks.

    Wraps any :mod:`portagrad.optim` optimizer: broadcasts rank 0's parameters and
    optimizer state at construction, hooks the parameters so that gradient buckets are
    reduced while backward runs (``mode="overlap"``) or packs them into one allreduce
    (``mode="packed"``), and waits for the reduction in :meth:`step`. Other attributes
    (``lr``, ``t``, ``hooks``...) are the wrapped optimizer's.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn import Parameter
    >>> from portagrad.optim import SGD
    >>> from portagrad.parallel import DistributedOptimizer
    >>> w = Parameter(np.array([2.0]))
    >>> opt = DistributedOptimizer(SGD([w], lr=0.25))
    >>> opt.zero_grad(); (w * w).sum().backward(); _ = opt.step()
    >>> w.array
    array([1.])
    """

    def __init__(self, optimizer: Any, comm: Communicator | None = None, *,
                 mode: str = "overlap", bucket_cap_mb: float = 25.0,
                 broadcast: bool = True) -> None:
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "comm", comm if comm is not None else create_communicator())
        owner = getattr(optimizer, "_module", None)
        target = owner if owner is not None else [p for _, p in optimizer.named_parameters()]
        params = _params_of(target, "DistributedOptimizer")
        if broadcast:
            broadcast_parameters(target, self.comm)
            broadcast_optimizer_state(optimizer, self.comm)
        object.__setattr__(self, "synchronizer", GradientSynchronizer(
            params, self.comm, mode=mode, bucket_cap_mb=bucket_cap_mb))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.optimizer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.optimizer, name, value)

    def step(self) -> bool:
        """Wait for the averaged gradients, then apply the wrapped optimizer's update."""
        self.comm.step = int(getattr(self.optimizer, "t", 0)) + 1
        self.synchronizer.synchronize()
        return self.optimizer.step()

    def update(self, lossfun: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Chainer's form: zero grads, ``loss = lossfun(...)``, backward, averaged step."""
        if lossfun is None:
            self.step()
            return None
        self.optimizer.zero_grad()
        loss = lossfun(*args, **kwargs)
        scaler = getattr(self.optimizer, "loss_scaler", None)
        (loss if scaler is None else scaler.scale_loss(loss)).backward()
        self.step()
        return loss

    def zero_grad(self) -> None:
        self.optimizer.zero_grad()

    cleargrads = zero_grad

    def no_sync(self) -> contextlib.AbstractContextManager:
        """Accumulate gradients locally inside the block (no communication)."""
        return self.synchronizer.no_sync()

    def state_dict(self) -> dict[str, Any]:
        return self.optimizer.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state)

    def close(self) -> None:
        """Remove the gradient hooks."""
        self.synchronizer.close()

    def __repr__(self) -> str:
        return f"DistributedOptimizer({self.optimizer!r}, {self.comm!r})"


def create_multi_node_optimizer(optimizer: Any, comm: Communicator | None = None,
                                **kwargs: Any) -> DistributedOptimizer:
    """ChainerMN's name for :class:`DistributedOptimizer`."""
    return DistributedOptimizer(optimizer, comm, **kwargs)
