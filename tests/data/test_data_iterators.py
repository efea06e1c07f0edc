"""SerialIterator semantics and resumption; PrefetchIterator equivalence and overlap."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import portagrad as pg
from portagrad import data


def test_serial_epochs_cover_every_example_once():
    it = data.SerialIterator(list(range(10)), 5, seed=0)
    seen = []
    while it.epoch < 3:
        seen.append(next(it))
    flat = [v for b in seen for v in b]
    for e in range(3):
        assert sorted(flat[10 * e:10 * e + 10]) == list(range(10))
    assert flat[:10] != flat[10:20]  # reshuffled
    assert it.is_new_epoch and it.epoch_detail == 3.0


def test_serial_batches_cross_epochs_like_chainer():
    it = data.SerialIterator(list(range(5)), 3, shuffle=False)
    assert next(it) == [0, 1, 2] and not it.is_new_epoch
    assert next(it) == [3, 4, 0] and it.is_new_epoch and it.epoch == 1
    assert it.current_position == 1 and it.epoch_detail == pytest.approx(1.2)
    assert it.previous_epoch_detail == pytest.approx(0.6)
    big = data.SerialIterator(list(range(2)), 3, shuffle=False)
    assert next(big) == [0, 1, 0]


def test_serial_no_repeat_stops():
    it = data.SerialIterator(list(range(5)), 2, repeat=False, seed=1)
    batches = list(it)
    assert sorted(v for b in batches for v in b) == list(range(5))
    with pytest.raises(StopIteration):
        next(it)
    it.reset()
    assert len(next(it)) == 2


def test_serial_state_resumes_mid_epoch(tmp_path):
    a = data.SerialIterator(list(range(13)), 4, seed=5)
    for _ in range(5):
        next(a)
    pg.io.save(tmp_path / "it.safetensors", a)  # through the checkpoint format
    b = data.SerialIterator(list(range(13)), 4, seed=123)
    pg.io.load(tmp_path / "it.safetensors", b)
    assert [next(a) for _ in range(8)] == [next(b) for _ in range(8)]
    assert (a.epoch, a.current_position) == (b.epoch, b.current_position)


def test_serial_state_validation():
    it = data.SerialIterator(list(range(4)), 2, seed=0)
    good = it.state_dict()
    with pytest.raises(pg.CheckpointError, match="permutation"):
        it.load_state_dict({**good, "order": np.array([0, 0, 1, 2])})
    with pytest.raises(pg.CheckpointError, match="out of range"):
        it.load_state_dict({**good, "current_position": 9})
    with pytest.raises(pg.CheckpointError, match="keys"):
        it.load_state_dict({"epoch": 0})
    with pytest.raises(pg.CheckpointError, match="rng"):
        it.load_state_dict({**good, "rng": {"bit_generator": "nope"}})


def test_prefetch_yields_the_serial_sequence_and_state():
    ref = data.SerialIterator(list(range(11)), 3, seed=2)
    expect = [next(ref) for _ in range(9)]
    base = data.SerialIterator(list(range(11)), 3, seed=2)
    with data.PrefetchIterator(base, converter=lambda b: [v * 10 for v in b],
                               n_prefetch=3) as it:
        got = [next(it) for _ in range(4)]
        state = it.state_dict()
        epoch = it.epoch
    assert got == [[v * 10 for v in b] for b in expect[:4]]
    # The state is that after the 4th batch returned, not after those prefetched.
    again = data.SerialIterator(list(range(11)), 3, seed=0)
    again.load_state_dict(state)
    assert [next(again) for _ in range(5)] == expect[4:]
    assert epoch == 1


def test_prefetch_restarts_after_load_state_dict():
    base = data.SerialIterator(list(range(6)), 2, seed=4)
    it = data.PrefetchIterator(base)
    first = next(it)
    s = it.state_dict()
    nxt = [next(it) for _ in range(3)]
    it.load_state_dict(s)
    assert [next(it) for _ in range(3)] == nxt
    it.close()
    assert first


def test_prefetch_propagates_errors_and_end():
    class Bad(data.Dataset):
        def __len__(self):
            return 4

        def get_example(self, i):
            if i == 3:
                raise KeyError("broken example")
            return i

    it = data.PrefetchIterator(data.SerialIterator(Bad(), 2, shuffle=False))
    assert next(it) == [0, 1]
    with pytest.raises(KeyError, match="broken"):
        next(it)
    it.close()
    done = data.PrefetchIterator(data.SerialIterator([1], 1, repeat=False))
    assert list(done) == [[1]]
    with pytest.raises(StopIteration):
        next(done)
    done.close()


def test_prefetch_loads_while_the_consumer_computes():
    # The consumer takes one batch and then waits, without asking for more; the next
    # batch must be loaded during that wait.
    loaded = threading.Event()

    class Slow(data.Dataset):
        def __len__(self):
            return 8

        def get_example(self, i):
            if i >= 2:
                loaded.set()
            return i

    it = data.PrefetchIterator(data.SerialIterator(Slow(), 2, shuffle=False), n_prefetch=1)
    assert next(it) == [0, 1]
    assert loaded.wait(timeout=10), "the next batch was not loaded in the background"
    assert next(it) == [2, 3]
    it.close()
