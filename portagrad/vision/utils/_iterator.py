"""Running a model over a dataset iterator, ChainerCV's way: inputs, outputs and the rest
of each example come back as parallel streams."""

from __future__ import annotations

import collections
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

__all__ = ["unzip", "apply_to_iterator", "ProgressHook"]


class _Stream:
    """One column of an unzipped iterable; reads ahead into the others' buffers."""

    def __init__(self, source: Iterator[Any], buffers: list[Any], index: int) -> None:
        self._source, self._buffers, self._index = source, buffers, index

    def __del__(self) -> None:
        # a dropped column stops being buffered, so it costs no memory
        self._buffers[self._index] = None

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> Any:
        buf = self._buffers[self._index]
        if not buf:
            values = next(self._source)
            for b, v in zip(self._buffers, values):
                if b is not None:
                    b.append(v)
        return self._buffers[self._index].popleft()


def unzip(iterable: Iterable[Any]) -> tuple[Iterator[Any], ...]:
    """The inverse of ``zip``, lazily: ``unzip(zip(a, b))`` gives iterators over ``a`` and
    ``b`` that read the source only as far as needed.

    Parameters
    ----------
    iterable
        An iterable of tuples of one length (it is read to its first item at once).

    Examples
    --------
    >>> from portagrad.vision.utils import unzip
    >>> xs, ys = unzip([(1, "a"), (2, "b")])
    >>> list(xs), list(ys)
    ([1, 2], ['a', 'b'])
    """
    source = iter(iterable)
    first = next(source)
    buffers: list[Any] = [collections.deque((v,)) for v in first]
    return tuple(_Stream(source, buffers, i) for i in range(len(buffers)))


def _flatten(batches: Iterable[Any]) -> Iterator[Any]:
    for batch in batches:
        yield from batch


def _apply(func: Callable[..., Any], iterator: Iterable[Any], n_input: int,
           hook: Callable[..., Any] | None) -> Iterator[tuple[Any, Any, Any]]:
    for batch in iterator:
        ins, rest = [], []
        for sample in batch:
            if isinstance(sample, tuple):
                ins.append(sample[:n_input])
                rest.append(sample[n_input:])
            else:
                ins.append((sample,))
                rest.append(())
        columns = tuple(list(c) for c in zip(*ins))
        outs = func(*columns)
        outs = outs if isinstance(outs, tuple) else (outs,)
        outs = tuple(list(o) for o in outs)
        rest_cols = tuple(list(c) for c in zip(*rest))
        if hook is not None:
            hook(columns, outs, rest_cols)
        yield columns, outs, rest_cols


def apply_to_iterator(func: Callable[..., Any], iterator: Iterable[Any], n_input: int = 1,
                      hook: Callable[..., Any] | None = None, comm: Any = None
                      ) -> tuple[tuple[Iterator[Any], ...], tuple[Iterator[Any], ...],
                                 tuple[Iterator[Any], ...]]:
    """Feed each batch of ``iterator`` to ``func`` and return three tuples of streams:
    the inputs, the outputs and the rest of each example, one item per example.

    Parameters
    ----------
    func
        Called with ``n_input`` lists (one per input column of the batch), e.g. a model's
        ``predict``; returns one list or a tuple of lists, one item per example.
    iterator
        Yields batches (lists) of examples: tuples, whose first ``n_input`` items are the
        inputs, or single values.
    n_input
        How many leading items of an example are inputs.
    hook
        Called as ``hook(in_values, out_values, rest_values)`` with each batch's lists (e.g.
        :class:`ProgressHook`).
    comm
        Not supported: splitting batches over MPI ranks belongs to ``portagrad.parallel``;
        anything but ``None`` is an error.

    Examples
    --------
    >>> from portagrad.vision.utils import apply_to_iterator
    >>> batches = [[(1, "a"), (2, "b")], [(3, "c")]]
    >>> ins, outs, rest = apply_to_iterator(lambda xs: [x * 10 for x in xs], iter(batches))
    >>> list(ins[0]), list(outs[0]), list(rest[0])
    ([1, 2, 3], [10, 20, 30], ['a', 'b', 'c'])
    """
    if comm is not None:
        raise ValueError("apply_to_iterator(comm): expected None; spread the examples over "
                         "ranks with portagrad.parallel.scatter_dataset instead")
    if isinstance(n_input, bool) or not isinstance(n_input, int) or n_input < 1:
        raise ValueError(f"apply_to_iterator(n_input): expected a positive int, got "
                         f"{n_input!r}")
    ins, outs, rest = unzip(_apply(func, iterator, n_input, hook))
    return (tuple(map(_flatten, unzip(ins))), tuple(map(_flatten, unzip(outs))),
            tuple(map(_flatten, unzip(rest))))


class ProgressHook:
    """A ``hook`` for :func:`apply_to_iterator` printing how many examples are done, the
    rate and, when ``n_total`` is known, the time left, in ChainerCV's words::

        \r5 of 10 samples, 1.67 samples/sec, ETA    0:00:03

    Parameters
    ----------
    n_total
        The number of examples, if known.
    stream
        Where to print (default ``sys.stdout``).

    Examples
    --------
    >>> import io
    >>> from portagrad.vision.utils import ProgressHook
    >>> out = io.StringIO()
    >>> hook = ProgressHook(4, stream=out)
    >>> hook(([1, 2],), ([1, 2],), ())
    >>> "2 of 4 samples" in out.getvalue()
    True
    """

    def __init__(self, n_total: int | None = None, stream: TextIO | None = None) -> None:
        self.n_total = n_total
        self.n_processed = 0
        self.start = time.time()
        self.stream = stream

    def __call__(self, in_values: Any, out_values: Any, rest_values: Any) -> None:
        self.n_processed += len(in_values[0])
        fps = self.n_processed / max(time.time() - self.start, 1e-9)
        stream = self.stream if self.stream is not None else sys.stdout
        if self.n_total is not None and fps > 0:
            eta = int((self.n_total - self.n_processed) / fps)
            stream.write(f"\r{self.n_processed:d} of {self.n_total:d} samples, "
                         f"{fps:.2f} samples/sec, "
                         f"ETA {eta // 3600:4d}:{eta // 60 % 60:02d}:{eta % 60:02d}")
        else:
            stream.write(f"\r{self.n_processed:d} samples, {fps:.2f} samples/sec")
        stream.flush()
