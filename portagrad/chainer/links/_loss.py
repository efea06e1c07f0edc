"""Chainer's loss links: NegativeSampling, BlackOut, CRF1d and BinaryHierarchicalSoftmax
(the first two draw negatives with ``chainer.utils.WalkerAlias``)."""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from ..._errors import PortagradValueError
from .. import functions as F
from .. import initializers as I
from ..config import get_dtype
from ..link import Link
from ..utils.walker_alias import WalkerAlias
from ..variable import Parameter, Variable
from ._rnn import _argsort_descent, _permutate_list

__all__ = ["NegativeSampling", "BlackOut", "CRF1d", "BinaryHierarchicalSoftmax",
           "WalkerAlias"]


class NegativeSampling(Link):
    """Chainer's ``NegativeSampling(in_size, counts, sample_size, power=0.75, dtype=None)``:
    ``W`` ``(len(counts), in_size)`` (zeros), negatives drawn with probability
    ``counts ** power``.

    Parameters
    ----------
    in_size
        The input size.
    counts
        The frequency of each word.
    sample_size
        Negatives per example.
    power
        The exponent of the sampling distribution.
    dtype
        The dtype of ``W``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> ns = L.NegativeSampling(3, [5, 3, 2], 2)
    >>> float(ns(np.ones((4, 3), np.float32), np.array([0, 1, 2, 0], np.int32)).array)
    8.317766189575195
    """

    def __init__(self, in_size: int, counts: Any, sample_size: int, power: float = 0.75,
                 dtype: Any = None) -> None:
        super().__init__()
        dtype = get_dtype(dtype)
        self.sample_size = sample_size
        p = np.array(counts, dtype)
        np.power(p, dtype.type(power), p)
        self.sampler = WalkerAlias(p)
        with self.init_scope():
            self.W = Parameter(I.Constant(0, dtype), (len(counts), in_size))

    def forward(self, x: Any, t: Any, reduce: str = "sum", **kwargs: Any) -> Any:
        return_samples = bool(kwargs.pop("return_samples", False))
        if kwargs:
            raise TypeError(f"NegativeSampling: unexpected argument(s) {sorted(kwargs)}")
        return F.negative_sampling(x, t, self.W, self._sample, self.sample_size,
                                   reduce=reduce, return_samples=return_samples)

    def _sample(self, shape: Any) -> Any:
        # Drawn on the host from NumPy's generator (as Chainer on the CPU), then moved.
        return self.device.send(self.sampler.sample(shape))


class BlackOut(Link):
    """Chainer's ``BlackOut(in_size, counts, sample_size)``: BlackOut loss with ``W``
    ``(len(counts), in_size)`` (NaN-initialized as Chainer, to be set or loaded) and
    negatives drawn by frequency.

    Parameters
    ----------
    in_size, counts, sample_size
        As :class:`NegativeSampling`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> bo = L.BlackOut(3, [5, 3, 2], 2)
    >>> bo.W.array[...] = 0.1
    >>> bo(np.ones((4, 3), np.float32), np.array([0, 1, 2, 0], np.int32)).shape
    ()
    """

    sample_data = None

    def __init__(self, in_size: int, counts: Any, sample_size: int) -> None:
        super().__init__()
        self.sampler = WalkerAlias(np.array(counts, dtype=np.float32))
        self.sample_size = sample_size
        with self.init_scope():
            self.W = Parameter(shape=(len(counts), in_size))

    def forward(self, x: Any, t: Any) -> Any:
        data = self.sample_data if self.sample_data is not None else self.sampler.sample(
            (x.shape[0], self.sample_size))
        return F.black_out(x, t, self.W, Variable(self.device.send(data), requires_grad=False))


class CRF1d(Link):
    """Chainer's ``CRF1d(n_label, initial_cost=None)``: a linear-chain CRF with transition
    costs ``cost`` ``(n_label, n_label)`` (zeros).

    Parameters
    ----------
    n_label
        The number of labels.
    initial_cost
        Initializer of ``cost``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> crf = L.CRF1d(3)
    >>> xs = [np.zeros((2, 3), np.float32)] * 2
    >>> ys = [np.array([0, 1], np.int32)] * 2
    >>> round(float(crf(xs, ys).array), 4)
    2.1972
    """

    def __init__(self, n_label: int, initial_cost: Any = None) -> None:
        super().__init__()
        with self.init_scope():
            self.cost = Parameter(I.Zero() if initial_cost is None else initial_cost,
                                  (n_label, n_label))

    def forward(self, xs: Any, ys: Any, reduce: str = "mean", transpose: bool = False) -> Any:
        if transpose:
            idx = _argsort_descent(xs)
            xs = F.transpose_sequence(_permutate_list(list(xs), idx, inv=False))
            ys = F.transpose_sequence(_permutate_list(list(ys), idx, inv=False))
        return F.crf1d(self.cost, xs, ys, reduce)

    def argmax(self, xs: Any, transpose: bool = False) -> Any:
        """The best label paths and their scores."""
        if not transpose:
            return F.argmax_crf1d(self.cost, xs)
        idx = _argsort_descent(xs)
        trans = F.transpose_sequence(_permutate_list(list(xs), idx, inv=False))
        score, path = F.argmax_crf1d(self.cost, trans)
        path = [getattr(p, "array", p) for p in F.transpose_sequence(path)]
        return score, _permutate_list(path, idx, inv=True)


def _tree_paths(tree: Any) -> tuple[dict, dict, int]:
    paths: dict = {}
    codes: dict = {}
    counter = [0]

    def walk(node: Any, path: list, code: list) -> None:
        if isinstance(node, tuple):
            if len(node) != 2:
                raise PortagradValueError(f"BinaryHierarchicalSoftmax(tree): expected pairs, "
                                          f"got a node of {len(node)} children")
            nid = counter[0]
            counter[0] += 1
            walk(node[0], path + [nid], code + [1.0])
            walk(node[1], path + [nid], code + [-1.0])
        else:
            paths[node] = path
            codes[node] = code

    walk(tree, [], [])
    return paths, codes, counter[0]


class BinaryHierarchicalSoftmax(Link):
    """Chainer's ``BinaryHierarchicalSoftmax(in_size, tree, dtype=None)``: the loss
    ``sum_n sum_k log(1 + exp(-code_k W[node_k] . x_n))`` over the path of ``t_n`` in a
    binary tree (nested pairs of word ids); ``W`` is ``Uniform(1)``.

    Parameters
    ----------
    in_size
        The input size.
    tree
        Nested pairs, e.g. from :meth:`create_huffman_tree`.
    dtype
        The dtype of ``W``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({0: 3, 1: 2, 2: 1})
    >>> hs = L.BinaryHierarchicalSoftmax(2, tree)
    >>> hs.W.shape, hs(np.ones((2, 2), np.float32), np.array([0, 2], np.int32)).shape
    ((2, 2), ())
    """

    def __init__(self, in_size: int, tree: Any, dtype: Any = None) -> None:
        super().__init__()
        dtype = get_dtype(dtype)
        paths, codes, n_nodes = _tree_paths(tree)
        self._paths = paths
        self._codes = {k: np.asarray(v, dtype) for k, v in codes.items()}
        self._n_nodes = n_nodes
        with self.init_scope():
            self.W = Parameter(I.Uniform(1, dtype), (n_nodes, in_size))

    @staticmethod
    def create_huffman_tree(word_counts: dict) -> Any:
        """The Huffman tree (nested pairs) of ``{word: count}``.

        Parameters
        ----------
        word_counts
            The counts.
        """
        if not word_counts:
            raise PortagradValueError("create_huffman_tree(word_counts): expected at least "
                                      "one word, got none")
        q = [(c, uid, w) for uid, (w, c) in enumerate(word_counts.items())]
        heapq.heapify(q)
        while len(q) >= 2:
            c1, id1, w1 = heapq.heappop(q)
            c2, id2, w2 = heapq.heappop(q)
            heapq.heappush(q, (c1 + c2, min(id1, id2), (w1, w2)))
        return q[0][2]

    def forward(self, x: Any, t: Any) -> Any:
        from ...xp import to_numpy

        labels = to_numpy(getattr(t, "array", t)).astype(np.int64)
        rows, nodes, codes = [], [], []
        for n, label in enumerate(labels.tolist()):
            if label not in self._paths:
                raise PortagradValueError(f"BinaryHierarchicalSoftmax(t): expected labels of "
                                          f"the tree, got {label}")
            path = self._paths[label]
            rows += [n] * len(path)
            nodes += path
            codes.append(self._codes[label])
        dev = self.device
        w = F.embed_id(dev.send(np.asarray(nodes, np.int32)), self.W)
        xs = F.get_item(x, dev.send(np.asarray(rows, np.int64)))
        code = dev.send(np.concatenate(codes) if codes else np.zeros(0, x.dtype))
        wxy = F.sum(w * xs, axis=1) * code
        return F.sum(F.softplus(-wxy))
