"""ChainerMN's links: ``MultiNodeBatchNormalization`` (statistics over every rank's
batch), ``create_mnbn_model``, and ``MultiNodeChainList`` (a model split across ranks)."""

from __future__ import annotations

import copy
from typing import Any

from .. import ops
from ..chainer import ChainList
from ..chainer.config import config
from ..chainer.links import BatchNormalization
from ..chainer.variable import _cast
from ..parallel._batchnorm import multi_node_batch_norm
from .functions import pseudo_connect, recv, send

__all__ = ["MultiNodeBatchNormalization", "create_mnbn_model", "MultiNodeChainList",
           "create_multi_node_n_step_rnn"]


class MultiNodeBatchNormalization(BatchNormalization):
    """Batch normalization whose training statistics cover the batches of every rank
    (equal to one process normalizing the concatenated batch); the running averages
    follow those global statistics.

    Parameters
    ----------
    size
        The channels.
    comm
        A ChainerMN communicator.
    decay, eps, dtype, use_gamma, use_beta, initial_gamma, initial_beta
        As for :class:`~portagrad.chainer.links.BatchNormalization`.
    communication_backend
        ``'auto'`` or ``'mpi'`` (``'nccl'`` needs GPUs).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> bn = chainermn.links.MultiNodeBatchNormalization(2, comm)
    >>> bn(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)).shape
    (2, 2)
    """

    def __init__(self, size: Any, comm: Any, decay: float = 0.9, eps: float = 2e-5,
                 dtype: Any = None, use_gamma: bool = True, use_beta: bool = True,
                 initial_gamma: Any = None, initial_beta: Any = None,
                 communication_backend: str = "auto") -> None:
        if communication_backend not in ("auto", "mpi"):
            raise ValueError(f"MultiNodeBatchNormalization(communication_backend): "
                             f"{communication_backend!r} needs GPUs; use 'auto' or 'mpi'")
        super().__init__(size, decay=decay, eps=eps, dtype=dtype, use_gamma=use_gamma,
                         use_beta=use_beta, initial_gamma=initial_gamma,
                         initial_beta=initial_beta)
        self.comm = comm

    def forward(self, x: Any, finetune: bool = False) -> Any:
        if not config.train:
            return super().forward(x)
        y, mean, var, n = multi_node_batch_norm(x, self.gamma, self.beta,
                                                self.comm.pg_communicator, eps=self.eps,
                                                return_statistics=True)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        adjust = n / max(n - 1.0, 1.0)
        m, v = mean.array, var.array
        self.avg_mean = self.avg_mean * decay + (1 - decay) * ops.astype(
            m, self.avg_mean.dtype).array
        self.avg_var = self.avg_var * decay + (1 - decay) * adjust * ops.astype(
            v, self.avg_var.dtype).array
        return _cast(y)


def create_mnbn_model(link: Any, comm: Any, communication_backend: str = "auto") -> Any:
    """A copy of ``link`` with every ``BatchNormalization`` replaced by a
    :class:`MultiNodeBatchNormalization` of the same state.

    Parameters
    ----------
    link
        The model.
    comm
        A ChainerMN communicator.
    communication_backend
        As for :class:`MultiNodeBatchNormalization`.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> m = chainermn.links.create_mnbn_model(L.BatchNormalization(3), comm)
    >>> type(m).__name__
    'MultiNodeBatchNormalization'
    """
    if isinstance(link, BatchNormalization) and not isinstance(
            link, MultiNodeBatchNormalization):
        mnbn = MultiNodeBatchNormalization(tuple(link.avg_mean.shape), comm,
                                           decay=link.decay, eps=link.eps,
                                           dtype=link.avg_mean.dtype,
                                           use_gamma=link.gamma is not None,
                                           use_beta=link.beta is not None,
                                           communication_backend=communication_backend)
        mnbn.copyparams(link)
        mnbn.avg_mean = link.avg_mean.copy()
        mnbn.avg_var = link.avg_var.copy()
        return mnbn
    new = copy.deepcopy(link)
    for name, child in list(getattr(new, "_children_by_name", {}).items()):
        setattr(new, name, create_mnbn_model(child, comm, communication_backend))
    children = getattr(new, "_children", None)
    if isinstance(children, list):
        for i, child in enumerate(children):
            children[i] = create_mnbn_model(child, comm, communication_backend)
    return new


class MultiNodeChainList(ChainList):
    """A model whose parts run on different ranks: each part gets its input from the
    call (``rank_in=None``) or from another rank, and sends its output to another rank or
    returns it (``rank_out=None``). Backward flows back across the ranks.

    Parameters
    ----------
    comm
        A ChainerMN communicator.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> m = chainermn.MultiNodeChainList(comm)
    >>> m.add_link(L.Linear(3, 2))
    >>> m(__import__("numpy").ones((1, 3), "f")).shape
    (1, 2)
    """

    def __init__(self, comm: Any) -> None:
        super().__init__()
        self._comm = comm
        self._rank_inouts: list[tuple[Any, Any]] = []

    def add_link(self, link: Any, rank_in: int | None = None,
                 rank_out: int | None = None) -> None:
        """Add a part: its input from ``rank_in`` (None: the call's arguments), its
        output to ``rank_out`` (None: returned).

        Parameters
        ----------
        link
            The part.
        rank_in, rank_out
            Ranks (lists of ranks are not supported: one peer each).
        """
        for r, what in ((rank_in, "rank_in"), (rank_out, "rank_out")):
            if isinstance(r, (list, tuple)):
                raise TypeError(f"MultiNodeChainList.add_link({what}): lists of ranks are "
                                f"not supported; give one rank")
        super().add_link(link)
        self._rank_inouts.append((rank_in, rank_out))

    def forward(self, *inputs: Any) -> Any:
        y = None
        delegate = None
        for f, (rank_in, rank_out) in zip(self.children(), self._rank_inouts):
            if rank_in is None:
                x = f(*inputs)
            else:
                x = f(recv(self._comm, rank_in, delegate_variable=delegate))
                delegate = None
            if rank_out is None:
                if y is not None:
                    raise RuntimeError("MultiNodeChainList: two parts return outputs; "
                                       "only one part may have rank_out=None")
                y = x
            else:
                delegate = send(x, self._comm, rank_out)
        if delegate is not None:
            if y is None:
                return delegate
            (y,) = pseudo_connect(delegate, y)
        return y


class _MultiNodeNStepRNN(ChainList):
    """An NStep RNN whose initial states come from ``rank_in`` and whose final states go
    to ``rank_out``; returns the RNN's outputs and a delegate (None without
    ``rank_out``)."""

    def __init__(self, link: Any, communicator: Any, rank_in: int | None,
                 rank_out: int | None) -> None:
        super().__init__()
        n_cells = getattr(link, "n_cells", None)
        if n_cells is None:
            raise ValueError("create_multi_node_n_step_rnn(link): link must be an NStep "
                             "RNN link (NStepLSTM, NStepGRU, NStepRNNTanh...)")
        self.add_link(link)
        self.actual_rnn = link
        self.communicator = communicator
        self.rank_in = rank_in
        self.rank_out = rank_out
        self.n_cells = n_cells

    def forward(self, *inputs: Any) -> tuple:
        cells: list = [None] * self.n_cells
        if self.rank_in is not None:
            cells = [recv(self.communicator, self.rank_in) for _ in range(self.n_cells)]
        outputs = self.actual_rnn(*(tuple(cells) + inputs))
        cells = list(outputs[:-1])
        delegate = None
        if self.rank_out is not None:
            cell = cells[0]
            for i in range(self.n_cells):
                delegate = send(cell, self.communicator, self.rank_out)
                if i < self.n_cells - 1:
                    (cell,) = pseudo_connect(delegate, cells[i + 1])
        return tuple(outputs) + (delegate,)


def create_multi_node_n_step_rnn(actual_link: Any, communicator: Any,
                                 rank_in: int | None = None,
                                 rank_out: int | None = None) -> Any:
    """A stacked RNN for model parallelism: it receives its initial hidden states from
    ``rank_in``, runs ``actual_link``, and sends its final states to ``rank_out``; it
    returns the link's outputs and a delegate Variable (backward starts from it when
    ``rank_out`` is set).

    Parameters
    ----------
    actual_link
        An NStep RNN link (``NStepLSTM``, ``NStepGRU``, ``NStepBiLSTM``...).
    communicator
        A ChainerMN communicator.
    rank_in, rank_out
        The ranks the states come from and go to (None: none).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> rnn = chainermn.links.create_multi_node_n_step_rnn(L.NStepLSTM(1, 3, 4, 0.0), comm)
    >>> hy, cy, ys, delegate = rnn([np.ones((2, 3), np.float32)])
    >>> hy.shape, delegate is None
    ((1, 1, 4), True)
    """
    return _MultiNodeNStepRNN(actual_link, communicator, rank_in, rank_out)
