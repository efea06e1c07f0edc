"""ChainerMN's differentiable communication: ``send``/``recv`` (point to point, for
model parallelism), ``bcast``, ``allgather``, ``alltoall``, ``pseudo_connect``.

Each is a primitive whose gradient is the reverse communication (the gradient of a
``send`` is received from the peer, that of a ``recv`` is sent back), written with these
same primitives, so gradients of any order flow across ranks. Every rank involved must
run its backward too, in matching order, as in ChainerMN.
"""

from __future__ import annotations

from typing import Any

from ..chainer.variable import Variable as _ChainerVariable
from ..chainer.variable import _cast
from ..parallel._batchnorm import allreduce_sum
from ..tape import Variable, primitive
from ..xp import from_numpy

__all__ = ["send", "recv", "bcast", "allgather", "alltoall", "gather", "scatter",
           "pseudo_connect"]


def _var(x: Any) -> Variable:
    return x if isinstance(x, Variable) else _ChainerVariable(x)


@primitive("chainermn_send", saves="none")
def _send(xp: Any, x: Any, comm: Any, peer: int, tag: int) -> Any:
    comm.send(x, peer, tag)
    # The delegate: a scalar whose backward receives the gradient of x from the peer.
    return xp.zeros((), dtype=x.dtype)


@primitive("chainermn_recv", saves="inputs")
def _recv(xp: Any, delegate: Any, comm: Any, peer: int, tag: int) -> Any:
    return from_numpy(comm.recv(peer, tag), like=delegate)


@_send.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    # The peer sends the gradient of what it received; gy (the delegate's) only orders it.
    return (_recv(gy, comm=p["comm"], peer=p["peer"], tag=p["tag"]),)


@_recv.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    return (_send(gy, comm=p["comm"], peer=p["peer"], tag=p["tag"]),)


def send(x: Any, communicator: Any, rank: int, tag: int = 0) -> Any:
    """Send ``x`` to ``rank``; returns the delegate Variable, whose backward receives
    ``x``'s gradient from ``rank``.

    Parameters
    ----------
    x
        A Variable (or array).
    communicator
        A ChainerMN communicator.
    rank
        The destination.
    tag
        The MPI tag.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> callable(chainermn.functions.send)
    True
    """
    if rank == communicator.rank:
        raise ValueError(f"send(rank): rank {rank} is this process; send to another rank")
    return _cast(_send(_var(x), comm=communicator, peer=rank, tag=tag))


def recv(communicator: Any, rank: int, delegate_variable: Any = None, tag: int = 0,
         force_tuple: bool = False) -> Any:
    """Receive a Variable from ``rank``; its backward sends the gradient back.

    Parameters
    ----------
    communicator
        A ChainerMN communicator.
    rank
        The source.
    delegate_variable
        A delegate from an earlier :func:`send` of this rank, which orders the
        backward (the received Variable's backward comes first).
    tag
        The MPI tag.
    force_tuple
        Return a one-element tuple.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> callable(chainermn.functions.recv)
    True
    """
    if rank == communicator.rank:
        raise ValueError(f"recv(rank): rank {rank} is this process")
    if delegate_variable is None:
        import numpy as np

        delegate_variable = _ChainerVariable(np.zeros((), dtype=np.float32))
        delegate_variable.requires_grad = True
    out = _cast(_recv(delegate_variable, comm=communicator, peer=rank, tag=tag))
    return (out,) if force_tuple else out


@primitive("chainermn_bcast", saves="none")
def _bcast(xp: Any, x: Any, comm: Any, root: int) -> Any:
    # Every rank passes an array of the root's layout; the result is in its library.
    return comm.bcast(x, root=root)


@_bcast.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    from .. import ops

    p = ctx.params
    # Collective: every rank takes part; only the root's input gets the sum.
    total = allreduce_sum(gy, p["comm"].pg_communicator)
    return (total if p["comm"].rank == p["root"] else ops.zeros_like(gy),)


def bcast(comm: Any, x: Any, root: int = 0) -> Any:
    """The root's ``x`` on every rank; the root's gradient is the sum of every rank's.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    x
        The root's Variable; on the other ranks any Variable of the same shape and dtype
        (its values are not used), or None (then the root's layout is used).
    root
        The sending rank.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> chainermn.functions.bcast(comm, np.arange(3.0)).shape
    (3,)
    """
    layout = comm.bcast_obj([list(x.shape), str(x.dtype)] if comm.rank == root else None,
                            root=root)
    if x is None:
        import numpy as np

        x = np.zeros(tuple(layout[0]), dtype=np.dtype(layout[1]))
    return _cast(_bcast(_var(x), comm=comm, root=root))


@primitive("chainermn_allgather", saves="none")
def _allgather(xp: Any, x: Any, comm: Any) -> Any:
    return comm.pg_communicator.allgather(x)


@_allgather.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    comm = ctx.params["comm"]
    return (allreduce_sum(gy, comm.pg_communicator)[comm.rank],)


def allgather(comm: Any, x: Any) -> tuple:
    """Every rank's ``x``, as a tuple by rank; the gradient of ``x`` sums every rank's
    gradient of its copy.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    x
        This rank's Variable (one shape and dtype on every rank).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> len(chainermn.functions.allgather(comm, np.ones(2))) == comm.size
    True
    """
    stacked = _cast(_allgather(_var(x), comm=comm))
    return tuple(stacked[i] for i in range(comm.size))


@primitive("chainermn_alltoall", saves="none")
def _alltoall(xp: Any, xs: Any, comm: Any) -> Any:
    parts = comm.alltoall([xs[i] for i in range(xs.shape[0])])
    return xp.stack(list(parts))


@_alltoall.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_alltoall(gy, comm=ctx.params["comm"]),)


def alltoall(comm: Any, xs: Any) -> tuple:
    """``xs[j]`` of this rank goes to rank ``j``; returns what each rank sent here, by
    rank. The gradient goes back the same way.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    xs
        One Variable per rank (one shape and dtype).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> out = chainermn.functions.alltoall(comm, [np.ones(2)] * comm.size)
    >>> len(out) == comm.size
    True
    """
    from .. import ops

    if len(xs) != comm.size:
        raise ValueError(f"alltoall(xs): expected {comm.size} Variables (one per rank), "
                         f"got {len(xs)}")
    stacked = ops.stack([_var(x) for x in xs])
    out = _cast(_alltoall(stacked, comm=comm))
    return tuple(out[i] for i in range(comm.size))


def pseudo_connect(delegate_variable: Any, *actual_variables: Any) -> tuple:
    """``actual_variables`` unchanged (as a tuple, even of one), with
    ``delegate_variable`` joined to their graph (its backward runs when theirs does), as
    ChainerMN's.

    Parameters
    ----------
    delegate_variable
        A delegate from :func:`send` (or None: the Variables are returned as they are).
    *actual_variables
        The Variables to pass on.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> y, = chainermn.functions.pseudo_connect(None, np.ones(2))
    >>> y.shape
    (2,)
    """
    outs = []
    for v in actual_variables:
        v = _var(v)
        if delegate_variable is not None:
            v = _cast(v + delegate_variable * 0.0)
        outs.append(v)
    return tuple(outs)


def gather(comm: Any, x: Any, root: int = 0) -> Any:
    """Every rank's ``x`` as a tuple on the root; elsewhere a delegate Variable whose
    backward (which every rank must run) passes the root's gradients back.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    x
        This rank's Variable (one shape and dtype on every rank).
    root
        The receiving rank.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> out = chainermn.functions.gather(comm, np.ones(2))
    >>> len(out) == comm.size if comm.rank == 0 else True
    True
    """
    stacked = _cast(_allgather(_var(x), comm=comm))
    if comm.rank == root:
        return tuple(stacked[i] for i in range(comm.size))
    # The delegate: its gradient is zero, so only the root's gradients reach the inputs.
    return _cast((stacked * 0.0).sum())


@primitive("chainermn_scatter", saves="none")
def _scatter(xp: Any, xs: Any, comm: Any, root: int) -> Any:
    return comm.pg_communicator.scatter(xs if comm.rank == root else None, root=root)


@_scatter.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    from .. import ops

    comm, root = ctx.params["comm"], ctx.params["root"]
    grads = _allgather(gy, comm=comm)
    if comm.rank == root:
        return (grads,)
    return (ops.zeros(tuple(ctx.in_shapes[0]), dtype=gy.dtype),)


def scatter(comm: Any, xs: Any, root: int = 0) -> Any:
    """Row ``rank`` of the root's ``xs`` on each rank; the root's gradient gathers every
    rank's.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    xs
        On the root, one Variable per rank (one shape and dtype); on the others, Variables
        of that layout (values unused) or None.
    root
        The sending rank.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> chainermn.functions.scatter(comm, [np.full(2, float(r)) for r in range(comm.size)]
    ...                             ).array.tolist() == [float(comm.rank)] * 2
    True
    """
    from .. import ops

    layout = comm.bcast_obj([[int(s) for s in xs[0].shape], str(xs[0].dtype)]
                            if comm.rank == root else None, root=root)
    if comm.rank == root:
        if len(xs) != comm.size:
            raise ValueError(f"scatter(xs): expected {comm.size} Variables (one per rank), "
                             f"got {len(xs)}")
        stacked = ops.stack([_var(x) for x in xs])
    else:
        import numpy as np

        stacked = _ChainerVariable(np.zeros((comm.size, *layout[0]),
                                            dtype=np.dtype(layout[1])))
    return _cast(_scatter(stacked, comm=comm, root=root))
