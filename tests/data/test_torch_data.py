"""pg.data's PyTorch face against torch.utils.data: datasets, samplers, collation, loader.

Random orders are not compared (the generators differ); structure, lengths, sizes and the
rules of collation and batching are.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import portagrad as pg
from portagrad.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = collections.namedtuple("Point", "x y")


def _plain(v):
    """Batches of either library as nested Python values and (dtype name, shape) leaves."""
    if isinstance(v, torch.Tensor):
        return ("array", str(v.dtype).removeprefix("torch."), tuple(v.shape), v.tolist())
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.name, v.shape, v.tolist())
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (type(v).__name__, [_plain(x) for x in v])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_plain(x) for x in v])
    return v


BATCHES = [
    [(np.zeros(2), 1), (np.ones(2), 0)],
    [1.5, 2.5],
    [True, False],
    [3, 4],
    [np.float32(1), np.float32(2)],
    [np.int32(1), np.int32(7)],
    ["a", "b"],
    [b"a", b"b"],
    [(1, "a"), (2, "b")],
    [[1, 2], [3, 4]],
    [{"a": 1, "b": np.arange(3.0)}, {"a": 2, "b": np.ones(3)}],
    [Point(1, 2.0), Point(3, 4.0)],
    [{"n": (1, [2.0, 3.0])}, {"n": (4, [5.0, 6.0])}],
]


@pytest.mark.parametrize("batch", BATCHES, ids=range(len(BATCHES)))
def test_default_collate_matches_torch(batch):
    assert _plain(default_collate(batch)) == _plain(tdata.default_collate(batch))


def test_default_collate_errors_match_torch():
    for bad, exc in (([[1, 2], [3]], RuntimeError), ([object()], TypeError),
                     ([np.array(["a"])], TypeError)):
        with pytest.raises(exc) as ours:
            default_collate(bad)
        with pytest.raises(exc) as theirs:
            tdata.default_collate(bad)
        assert str(ours.value).split(";")[0] == str(theirs.value).split(";")[0]


def test_default_collate_stacks_in_the_arrays_own_library():
    out = default_collate([torch.zeros(2), torch.ones(2)])
    assert isinstance(out, torch.Tensor) and out.shape == (2, 2)
    v = default_collate([pg.Variable(np.ones(2)), pg.Variable(np.zeros(2))])
    assert isinstance(v, pg.Variable) and v.shape == (2, 2)


def test_default_convert_matches_torch():
    data = [np.int32(1), 2, "s", {"k": np.float64(2.0)}, (np.zeros(1),)]
    ours, theirs = default_convert(data), tdata.default_convert(data)
    assert _plain(ours) == _plain(theirs)


def test_tensor_dataset_subset_concat_stack():
    x, y = np.arange(12.0).reshape(6, 2), np.arange(6)
    ours, theirs = TensorDataset(x, y), tdata.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert len(ours) == len(theirs)
    assert ours[3][0].tolist() == theirs[3][0].tolist()
    with pytest.raises(pg.ShapeError):
        TensorDataset(x, y[:4])
    s, ts = Subset(ours, [5, 0, 2]), tdata.Subset(theirs, [5, 0, 2])
    assert [int(a[1]) for a in s] == [int(a[1]) for a in ts]
    c, tc = ConcatDataset([range(3), range(10, 12)]), tdata.ConcatDataset([range(3),
                                                                           range(10, 12)])
    assert c.cumulative_sizes == tc.cumulative_sizes
    assert [c[i] for i in range(-5, 5)] == [tc[i] for i in range(-5, 5)]
    with pytest.raises(IndexError):
        c[5]
    st = StackDataset(range(2), ["a", "b"])
    assert st[1] == tdata.StackDataset(range(2), ["a", "b"])[1]
    assert (Subset(list("abc"), [0]) + Subset(list("xyz"), [2]))[1] == "z"
    chained = tdata.ChainDataset([TStream(2), TStream(3)])
    assert list(ChainDataset([Stream(2), Stream(3)])) == [int(v) for v in iter(chained)]


@pytest.mark.parametrize("lengths", [[3, 7], [0.5, 0.5], [0.33, 0.33, 0.34], [0.1, 0.9],
                                     [0.25, 0.25, 0.25, 0.25], [10, 0],
                                     [0.01, 0.01, 0.98]])
def test_random_split_sizes_match_torch(lengths):
    n = 10
    warns = lengths == [0.01, 0.01, 0.98]  # a fraction that leaves a split empty
    with pytest.warns(UserWarning, match="index 1 is 0") if warns else _nothing():
        ours = random_split(range(n), lengths, generator=pg.random.Generator(0))
    with pytest.warns(UserWarning, match="index 1 is 0") if warns else _nothing():
        theirs = tdata.random_split(range(n), lengths,
                                    generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))


def test_random_split_fraction_remainder_and_errors():
    sizes = [len(s) for s in random_split(range(11), [0.3, 0.3, 0.4])]
    tsizes = [len(s) for s in tdata.random_split(range(11), [0.3, 0.3, 0.4])]
    assert sizes == tsizes
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(5), [2, 2])
    with pytest.raises(TypeError, match="Generator"):
        random_split(range(5), [2, 3], generator=torch.Generator())


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_seed_repeats_random_split_and_samplers():
    pg.manual_seed(4)
    a = [list(s) for s in random_split(range(20), [5, 15])]
    b = list(RandomSampler(range(20)))
    pg.manual_seed(4)
    assert [list(s) for s in random_split(range(20), [5, 15])] == a
    assert list(RandomSampler(range(20))) == b
    assert sorted(b) == list(range(20))


@pytest.mark.parametrize("replacement,num_samples", [(False, None), (False, 23),
                                                      (True, None), (True, 7)])
def test_random_sampler_lengths_and_values(replacement, num_samples):
    ours = RandomSampler(range(10), replacement=replacement, num_samples=num_samples,
                         generator=pg.random.Generator(0))
    theirs = tdata.RandomSampler(range(10), replacement=replacement, num_samples=num_samples)
    got = list(ours)
    assert len(ours) == len(theirs) == len(got) == len(list(theirs))
    assert all(0 <= i < 10 for i in got)
    if not replacement:
        counts = np.bincount(got, minlength=10)
        assert counts.max() - counts.min() <= 1  # whole permutations, then part of one
    with pytest.raises(ValueError):
        RandomSampler(range(10), num_samples=0)
    with pytest.raises(TypeError):
        RandomSampler(range(10), replacement=1)


def test_subset_and_weighted_samplers():
    assert sorted(SubsetRandomSampler([5, 9, 2])) == [2, 5, 9]
    g = pg.random.Generator(0)
    w = WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=g)
    counts = np.bincount(list(w), minlength=3)
    assert counts[0] == 0 and abs(counts[2] / 4000 - 0.75) < 0.03
    no_rep = list(WeightedRandomSampler([1.0, 0.0, 5.0, 1.0], 3, replacement=False,
                                        generator=g))
    assert sorted(no_rep) == [0, 2, 3]
    with pytest.raises(ValueError, match="at most 2"):
        WeightedRandomSampler([1.0, 0.0, 1.0], 3, replacement=False)
    with pytest.raises(ValueError, match="1-d"):
        WeightedRandomSampler(np.ones((2, 2)), 3)


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True),
                                       (2, 5, False), (2, 5, True)])
def test_batch_sampler_matches_torch(n, bs, drop):
    ours = BatchSampler(SequentialSampler(range(n)), bs, drop)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("n,replicas,drop", [(10, 3, False), (10, 3, True), (5, 2, False)])
def test_distributed_sampler_unshuffled_matches_torch(n, replicas, drop):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop)
        theirs = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                          drop_last=drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    shuffled = [list(DistributedSampler(range(n), replicas, r, seed=3)) for r in
                range(replicas)]
    assert sorted(set(i for s in shuffled for i in s)) == list(range(n))


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=4),
                                    dict(batch_sampler=[[0, 1], [5], [2, 3, 4]])])
def test_loader_batches_match_torch(kwargs):
    x, y = np.arange(14.0).reshape(7, 2), np.arange(7)
    ours = DataLoader(TensorDataset(x, y), **kwargs)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), **kwargs)
    assert len(ours) == len(theirs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


def test_loader_dict_examples_and_custom_collate():
    data = [{"x": np.full(2, i, dtype=np.float32), "name": f"n{i}"} for i in range(5)]
    ours = list(DataLoader(data, batch_size=2))
    theirs = list(tdata.DataLoader(data, batch_size=2))
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert list(DataLoader(range(5), batch_size=2, collate_fn=sum)) == [1, 5, 4]


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = pg.data.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class TStream(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("bs,drop", [(2, False), (2, True), (None, False), (3, False)])
def test_iterable_dataset_matches_torch(bs, drop):
    ours = DataLoader(Stream(7), batch_size=bs, drop_last=drop)
    theirs = tdata.DataLoader(TStream(7), batch_size=bs, drop_last=drop)
    assert len(ours) == len(theirs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


@pytest.mark.parametrize("kwargs", [
    dict(shuffle=True, sampler=[0, 1]),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(num_workers=-1),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
    dict(timeout=-1),
])
def test_loader_argument_errors_like_torch(kwargs):
    with pytest.raises(ValueError):
        tdata.DataLoader(range(4), **kwargs)
    with pytest.raises(ValueError):
        DataLoader(range(4), **kwargs)


def test_loader_refuses_what_it_cannot_honour():
    with pytest.raises(ValueError, match="pin_memory_device"):
        DataLoader(range(4), pin_memory_device="cuda")
    with pytest.raises(ValueError, match="fork"):
        DataLoader(range(4), num_workers=1, multiprocessing_context="spawn")
    with pytest.raises(TypeError, match="Generator"):
        DataLoader(range(4), shuffle=True, generator=torch.Generator())
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(3), shuffle=True)
    assert len(list(DataLoader(range(4), pin_memory=True))) == 4


def test_loader_seed_repeats_and_generator():
    ds = TensorDataset(np.arange(20))
    pg.manual_seed(7)
    a = [b[0].tolist() for b in DataLoader(ds, batch_size=6, shuffle=True)]
    pg.random.seed(7)
    b = [b[0].tolist() for b in DataLoader(ds, batch_size=6, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(20))
    loader = DataLoader(ds, batch_size=20, shuffle=True, generator=pg.random.Generator(1))
    e1, e2 = (next(iter(loader))[0].tolist() for _ in range(2))
    assert e1 != e2  # a new order each epoch
    again = DataLoader(ds, batch_size=20, shuffle=True, generator=pg.random.Generator(1))
    assert next(iter(again))[0].tolist() == e1


def test_dataset_two_faces():
    class TorchStyle(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            if i >= 3:
                raise IndexError(i)
            return i * 10

    class ChainerStyle(Dataset):
        def __len__(self):
            return 3

        def get_example(self, i):
            return i * 10

    for ds in (TorchStyle(), ChainerStyle()):
        assert list(ds) == [0, 10, 20]
        assert [b.tolist() for b in DataLoader(ds, batch_size=2)] == [[0, 10], [20]]
        assert len(ds + ds) == 6


def test_serial_iterator_follows_the_seed():
    pg.manual_seed(3)
    a = [next(pg.data.SerialIterator(list(range(10)), 10)) for _ in range(2)]
    pg.manual_seed(3)
    b = [next(pg.data.SerialIterator(list(range(10)), 10)) for _ in range(2)]
    assert a == b and a[0] != a[1]
    pg.manual_seed(3)
    x = pg.data.split_dataset_random(list(range(10)), 4)
    pg.manual_seed(3)
    assert list(pg.data.split_dataset_random(list(range(10)), 4)[0]) == list(x[0])
