"""DataLoader with worker processes: same batches as in the main process, seeding like
PyTorch's, errors and deaths reported instead of hangs."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import portagrad as pg
from portagrad.data import (
    DataLoader,
    DataLoaderError,
    Dataset,
    IterableDataset,
    TensorDataset,
    get_worker_info,
)

# JAX, when another test has started it, warns at every fork that forking a multithreaded
# process is unsafe for JAX; these workers never touch JAX.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")


def _tree(batches):
    return [[a.tolist() if hasattr(a, "tolist") else a for a in b] for b in batches]


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("drop_last", [False, True])
def test_workers_give_the_main_process_batches(workers, drop_last):
    ds = TensorDataset(np.arange(46.0).reshape(23, 2).astype(np.float32), np.arange(23))
    pg.manual_seed(11)
    ref = _tree(DataLoader(ds, batch_size=4, shuffle=True, drop_last=drop_last))
    pg.manual_seed(11)
    got = list(DataLoader(ds, batch_size=4, shuffle=True, drop_last=drop_last,
                          num_workers=workers, prefetch_factor=1))
    assert _tree(got) == ref
    assert got[0][0].dtype == np.float32 and got[0][0].flags.writeable


def test_worker_batches_of_every_structure():
    data = [{"s": f"n{i}", "v": np.float32(i), "t": (i, [b"z", 2.5]), "c": 1j * i,
             "u": np.array(["ab", "c"])} for i in range(5)]
    out = list(DataLoader(data, batch_size=2, num_workers=2,
                          collate_fn=lambda b: [(e["s"], e["v"], e["t"], e["c"], e["u"])
                                                for e in b]))
    ((name, v, t, c, u),) = out[2]
    assert (name, v, t, c) == ("n4", np.float32(4), (4, [b"z", 2.5]), 4j)
    assert u.dtype == np.dtype("<U2") and u.tolist() == ["ab", "c"]
    assert isinstance(out[0][0][1], np.float32)


def test_worker_batches_keep_the_arrays_library():
    torch = pytest.importorskip("torch")
    ds = TensorDataset(torch.arange(6.0).reshape(3, 2))
    (b,) = next(iter(DataLoader(ds, batch_size=3, num_workers=1)))
    assert isinstance(b, torch.Tensor) and b.tolist() == [[0, 1], [2, 3], [4, 5]]


class _Seeds(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        draw = float(pg.random.default_generator().uniform((1,))[0])
        return info.id, info.num_workers, info.seed, draw, float(np.random.random())


def test_worker_seeds_are_base_seed_plus_id_and_repeat():
    def run():
        pg.manual_seed(5)
        return [tuple(x.item() for x in b) for b in DataLoader(_Seeds(), num_workers=2)]

    a, b = run(), run()
    assert a == b
    by_worker = {row[0]: row for row in a}
    assert by_worker[1][2] == by_worker[0][2] + 1
    assert all(row[1] == 2 for row in a)
    first = [r for r in a if r[0] == 0][0]
    second = [r for r in a if r[0] == 1][0]
    assert first[3] != second[3] and first[4] != second[4]
    # A loader with its own generator is independent of the default one.
    pg.manual_seed(0)
    g1 = [next(iter(DataLoader(_Seeds(), num_workers=1,
                               generator=pg.random.Generator(9))))[2].item()]
    pg.manual_seed(1)
    g2 = [next(iter(DataLoader(_Seeds(), num_workers=1,
                               generator=pg.random.Generator(9))))[2].item()]
    assert g1 == g2


def test_worker_init_fn_and_worker_info():
    seen = []

    class Info(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return get_worker_info().id, os.environ.get("PG_TEST_WORKER", "")

    def init(worker_id):
        os.environ["PG_TEST_WORKER"] = f"w{worker_id}"
        seen.append(worker_id)  # in the worker's memory, not ours

    out = list(DataLoader(Info(), batch_size=None, num_workers=2, worker_init_fn=init))
    assert sorted((int(w), s) for w, s in out) == [(0, "w0"), (0, "w0"), (1, "w1"),
                                                   (1, "w1")]
    assert seen == [] and get_worker_info() is None


class _Shards(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, 11, step))


def test_iterable_dataset_with_workers():
    out = [b.tolist() for b in DataLoader(_Shards(), batch_size=2, num_workers=2)]
    assert sorted(sum(out, [])) == list(range(11))
    assert out[:2] == [[0, 2], [1, 3]]
    dropped = [b.tolist() for b in DataLoader(_Shards(), batch_size=2, num_workers=2,
                                              drop_last=True)]
    assert all(len(b) == 2 for b in dropped) and len(dropped) == 5


class _Fails(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"no example {i}")
        return i


def test_worker_error_is_reraised_with_its_traceback():
    with pytest.raises(KeyError) as err:
        list(DataLoader(_Fails(), batch_size=2, num_workers=2))
    text = str(err.value)
    assert "Caught KeyError in DataLoader worker process 0" in text
    assert "no example 5" in text and "__getitem__" in text


def test_unsendable_batch_is_a_clear_error():
    with pytest.raises(TypeError, match="cannot be sent from a DataLoader worker"):
        list(DataLoader(range(2), num_workers=1, collate_fn=lambda b: object()))


class _Dies(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            os._exit(7)
        return i


def test_dead_worker_raises_instead_of_hanging():
    start = time.monotonic()
    with pytest.raises(DataLoaderError, match="exited unexpectedly"):
        list(DataLoader(_Dies(), num_workers=2))
    assert time.monotonic() - start < 20


class _Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(5)
        return i


def test_timeout():
    with pytest.raises(DataLoaderError, match="timed out after 0.2 seconds"):
        list(DataLoader(_Slow(), num_workers=1, timeout=0.2))


def test_persistent_workers_across_epochs_and_early_break():
    ds = TensorDataset(np.arange(10))
    loader = DataLoader(ds, batch_size=3, num_workers=2, persistent_workers=True)
    first = _tree(loader)
    pids = [p.pid for p in loader._workers.procs]
    for _ in loader:  # leave an epoch early: its prefetched batches are dropped
        break
    assert _tree(loader) == first == [[[0, 1, 2]], [[3, 4, 5]], [[6, 7, 8]], [[9]]]
    assert [p.pid for p in loader._workers.procs] == pids
    it_loader = DataLoader(_Shards(), batch_size=4, num_workers=2, persistent_workers=True)
    assert _tree(it_loader) == _tree(it_loader)
    procs = loader._workers.procs
    del loader
    time.sleep(0.1)
    assert not any(p.is_alive() for p in procs)
