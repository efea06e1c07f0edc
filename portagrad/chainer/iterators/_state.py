"""The position of an iterator and Chainer's rule for the next batch, shared by the
serial, thread and process iterators."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..._errors import PortagradValueError

__all__ = ["IteratorState", "next_state"]


class IteratorState(NamedTuple):
    current_position: int
    epoch: int
    is_new_epoch: bool
    order: Any


def next_state(state: IteratorState, batch_size: int, repeat: bool, order_sampler: Any,
               dataset_len: int) -> tuple[IteratorState, Any]:
    """The state after one batch and the batch's indices (None when a non-repeating
    iterator is exhausted). A batch that crosses the end of an epoch is completed from
    the next epoch (several, when the batch is larger than the dataset), as in
    Chainer."""
    i, epoch, _, order = state
    if not repeat and epoch > 0:
        return state, None
    parts = []
    n = dataset_len if order is None else len(order)
    if repeat and n == 0:
        raise PortagradValueError("iterator: the epoch size must be positive for an "
                                  "iterator that repeats (the dataset is empty)")
    i_end = i + batch_size
    is_new_epoch = False
    while i_end >= n:
        parts.append(np.arange(i, n, dtype=np.intp) if order is None else order[i:n])
        if order is not None:
            new_order = order_sampler(order, i)
            if len(new_order) != len(order):
                raise PortagradValueError(f"order_sampler: returned an order of "
                                          f"{len(new_order)} for an epoch of {len(order)}")
            order = new_order
        epoch += 1
        is_new_epoch = True
        i = 0
        if repeat:
            i_end -= n
        else:
            i_end = 0
            break
    parts.append(np.arange(i, i_end, dtype=np.intp) if order is None else order[i:i_end])
    return IteratorState(i_end, epoch, is_new_epoch, order), np.concatenate(parts)
