"""``torch.nn.utils.rnn``: padded batches of sequences, and packed ones.

A :class:`PackedSequence` holds the time steps of a batch one after the other, each step
holding only the sequences still running (longest first): ``data`` is ``(sum of lengths,
*)``, ``batch_sizes[t]`` how many sequences have a step ``t``. :class:`portagrad.nn.LSTM`,
``GRU`` and ``RNN`` take one as input and return one. Every function is differentiable
(``data`` is gathered from and scattered back to the padded values with ops), and index
arrays are of the data's own library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ... import ops
from ..._errors import PortagradTypeError, PortagradValueError, ShapeError, describe
from ...ops._core import var
from ...tape import Variable
from ...xp._dtypes import index_dtype

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


def _ints(values: Any, where: str) -> list[int]:
    if isinstance(values, (list, tuple)):
        return [int(v) for v in values]
    arr = values.array if isinstance(values, Variable) else values
    if not hasattr(arr, "shape") or len(arr.shape) != 1:
        raise PortagradTypeError(f"{where}(lengths): expected a 1-d sequence of ints, got "
                                 f"{describe(values)}")
    return [int(arr[i]) for i in range(int(arr.shape[0]))]


def _index(xp: Any, values: list[int], device: Any) -> Any:
    return xp.asarray(values, dtype=index_dtype(xp), device=device)


class PackedSequence(NamedTuple):
    """A batch of sequences packed step by step (see the module's description).

    Parameters
    ----------
    data
        ``(sum of lengths, *)``: step 0 of every sequence, then step 1 of those that have
        one, and so on, in order of decreasing length.
    batch_sizes
        int64, one per step: how many sequences have it.
    sorted_indices
        The batch position of each packed sequence (``None`` when the batch was sorted).
    unsorted_indices
        Its inverse: the packed position of each batch entry.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([np.array([1.0, 2.0, 3.0]), np.array([4.0])])
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 3.0], [2, 1, 1])
    """

    data: Any
    batch_sizes: Any
    sorted_indices: Any = None
    unsorted_indices: Any = None

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` lives on a CUDA device."""
        return "cuda" in str(self.data.device).lower()

    def is_pinned(self) -> bool:
        """Always ``False``: portagrad pins no memory."""
        return False


def invert_permutation(permutation: Any) -> Any:
    """The inverse of a permutation (``out[permutation[i]] = i``); ``None`` stays ``None``.

    Parameters
    ----------
    permutation
        A 1-d integer array, or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import invert_permutation
    >>> invert_permutation(np.array([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    arr = permutation.array if isinstance(permutation, Variable) else permutation
    xp = var(arr, "invert_permutation").xp
    return xp.astype(xp.argsort(arr), index_dtype(xp))


def pad_sequence(sequences: Sequence[Any], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Variable:
    """Stack sequences of shapes ``(L_i, *)`` into ``(L, B, *)`` (or ``(B, L, *)``).

    Parameters
    ----------
    sequences
        Variables or arrays of one library, equal in their trailing dimensions.
    batch_first
        Put the batch first.
    padding_value
        The fill value of the missing steps.
    padding_side
        ``"right"`` (after each sequence) or ``"left"`` (before it).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([np.array([1.0, 2.0]), np.array([3.0])], batch_first=True).tolist()
    [[1.0, 2.0], [3.0, 0.0]]
    """
    if padding_side not in ("right", "left"):
        raise PortagradValueError(f"pad_sequence(padding_side): expected 'left' or 'right', "
                                  f"got {padding_side!r}")
    seqs = list(sequences)
    if not seqs:
        raise ShapeError("pad_sequence(sequences): expected at least one sequence, got none")
    seqs = [var(s, "pad_sequence") for s in seqs]
    if padding_side == "left":
        seqs = [ops.flip(s, axis=0) for s in seqs]
    out = ops.pad_sequence(seqs, padding=padding_value)  # (B, L, *)
    if padding_side == "left":
        out = ops.flip(out, axis=1)
    if batch_first:
        return out
    return ops.permute_dims(out, (1, 0, *range(2, out.ndim)))


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(L, B, *)`` (``(B, L, *)`` with ``batch_first``).

    Parameters
    ----------
    input
        The padded batch (a Variable or array).
    lengths
        The length of each sequence (a list or a 1-d integer array), each at least 1.
    batch_first
        ``input`` is ``(B, L, *)``.
    enforce_sorted
        Require ``lengths`` in decreasing order; with ``False`` the batch is sorted here
        and the permutation kept in the result.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import pack_padded_sequence
    >>> x = np.array([[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]])  # (L=3, B=2)
    >>> p = pack_padded_sequence(x, [3, 1])
    >>> p.data.tolist(), p.batch_sizes.tolist(), p.sorted_indices
    ([1.0, 4.0, 2.0, 3.0], [2, 1, 1], None)
    """
    x = var(input, "pack_padded_sequence")
    lens = _ints(lengths, "pack_padded_sequence")
    if x.ndim < 2:
        raise ShapeError(f"pack_padded_sequence(input): expected at least 2 dimensions (steps "
                         f"and batch), got shape {x.shape}")
    if batch_first:
        x = ops.permute_dims(x, (1, 0, *range(2, x.ndim)))
    steps, batch = int(x.shape[0]), int(x.shape[1])
    if len(lens) != batch:
        raise ShapeError(f"pack_padded_sequence(lengths): expected {batch} lengths (the batch "
                         f"size), got {len(lens)}")
    if any(n <= 0 for n in lens):
        raise PortagradValueError("pack_padded_sequence(lengths): Length of all samples has "
                                  "to be greater than 0")
    if max(lens) > steps:
        raise ShapeError(f"pack_padded_sequence(lengths): a length of {max(lens)} exceeds "
                         f"the {steps} padded steps")
    xp, dev = x.xp, x.array.device
    sorted_indices = None
    order = list(range(batch))
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise PortagradValueError(
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order "
                "when `enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                "you do not need ONNX exportability.")
    else:
        order = sorted(range(batch), key=lambda b: -lens[b])  # stable: ties keep their order
        sorted_indices = _index(xp, order, dev)
        x = ops.take(x, sorted_indices, axis=1)
    lens = [lens[b] for b in order]
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    # Row t * batch + b of the flattened (L * B, *) input is step t of sequence b.
    rows = [t * batch + b for t, bs in enumerate(batch_sizes) for b in range(bs)]
    flat = ops.reshape(x, (steps * batch, *x.shape[2:]))
    data = ops.take(flat, _index(xp, rows, dev), axis=0)
    return PackedSequence(data, _index(xp, batch_sizes, dev), sorted_indices,
                          invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Variable, Any]:
    """Unpack into a padded batch and the lengths, in the batch's original order.

    Parameters
    ----------
    sequence
        A :class:`PackedSequence`.
    batch_first
        Return ``(B, L, *)`` instead of ``(L, B, *)``.
    padding_value
        The fill value of the missing steps.
    total_length
        Pad to this many steps (at least the longest sequence's length).

    Returns
    -------
    tuple
        The padded Variable and an int64 array of the lengths.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([np.array([1.0]), np.array([2.0, 3.0])], enforce_sorted=False)
    >>> padded, lengths = pad_packed_sequence(p, batch_first=True)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 0.0], [2.0, 3.0]], [1, 2])
    """
    if not isinstance(sequence, PackedSequence):
        raise PortagradTypeError(f"pad_packed_sequence(sequence): expected a PackedSequence, "
                                 f"got {describe(sequence)}")
    data = var(sequence.data, "pad_packed_sequence")
    sizes = _ints(sequence.batch_sizes, "pad_packed_sequence")
    steps, batch = len(sizes), sizes[0]
    if total_length is not None:
        if int(total_length) < steps:
            raise PortagradValueError(
                f"pad_packed_sequence: Expected total_length to be at least the length of the "
                f"longest sequence in the input, but got total_length={total_length} and max "
                f"sequence length being {steps}")
        steps_out = int(total_length)
    else:
        steps_out = steps
    xp, dev = data.xp, data.array.device
    trailing = tuple(data.shape[1:])
    # Row t * batch + b of the (steps_out * batch, *) result takes packed row k, or the
    # padding (an extra row appended after the data).
    pad_row = int(data.shape[0])
    source = [pad_row] * (steps_out * batch)
    k = 0
    for t, bs in enumerate(sizes):
        for b in range(bs):
            source[t * batch + b] = k
            k += 1
    fill = ops.full((1, *trailing), padding_value, dtype=data.dtype, device=dev)
    rows = ops.take(ops.concat([data, fill], axis=0), _index(xp, source, dev), axis=0)
    out = ops.reshape(rows, (steps_out, batch, *trailing))
    lengths = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        out = ops.take(out, unsorted, axis=1)
        perm = _ints(unsorted, "pad_packed_sequence")
        lengths = [lengths[i] for i in perm]
    if batch_first:
        out = ops.permute_dims(out, (1, 0, *range(2, out.ndim)))
    return out, _index(xp, lengths, dev)


def pack_sequence(sequences: Sequence[Any], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shapes ``(L_i, *)``.

    Parameters
    ----------
    sequences
        Variables or arrays; with ``enforce_sorted``, longest first.
    enforce_sorted
        As :func:`pack_padded_sequence`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import pack_sequence
    >>> pack_sequence([np.array([1.0]), np.array([2.0, 3.0])],
    ...               enforce_sorted=False).sorted_indices.tolist()
    [1, 0]
    """
    seqs = [var(s, "pack_sequence") for s in sequences]
    lengths = [int(s.shape[0]) for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Any, lengths: Any,
                   batch_first: bool = False) -> list[Variable]:
    """The sequences of a padded batch, each cut to its length.

    Parameters
    ----------
    padded_sequences
        ``(L, B, *)`` (or ``(B, L, *)`` with ``batch_first``).
    lengths
        The length of each sequence.
    batch_first
        The batch comes first.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import unpad_sequence
    >>> [s.tolist() for s in unpad_sequence(np.array([[1.0, 2.0], [3.0, 0.0]]), [2, 1],
    ...                                     batch_first=True)]
    [[1.0, 2.0], [3.0]]
    """
    x = var(padded_sequences, "unpad_sequence")
    if not batch_first:
        x = ops.permute_dims(x, (1, 0, *range(2, x.ndim)))
    lens = _ints(lengths, "unpad_sequence")
    return [x[b, :n] for b, n in enumerate(lens)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Variable]:
    """The sequences of a :class:`PackedSequence`, in the batch's original order.

    Parameters
    ----------
    packed_sequences
        A :class:`PackedSequence`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> p = pack_sequence([np.array([1.0]), np.array([2.0, 3.0])], enforce_sorted=False)
    >>> [s.tolist() for s in unpack_sequence(p)]
    [[1.0], [2.0, 3.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
