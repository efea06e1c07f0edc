"""Datasets, the bundled digits, IDX readers."""

from __future__ import annotations

import gzip
import importlib.util

import numpy as np
import pytest

import portagrad as pg
from portagrad import data


def test_tuple_dataset_and_indexing():
    ds = data.TupleDataset(np.arange(10).reshape(5, 2), np.arange(5) * 10)
    assert len(ds) == 5
    x, t = ds[-1]
    np.testing.assert_array_equal(x, [8, 9])
    assert t == 40
    assert [int(t) for _, t in ds[1:3]] == [10, 20]
    assert [int(t) for _, t in ds[np.array([4, 0])]] == [40, 0]
    with pytest.raises(IndexError, match="expected an index"):
        ds[5]
    with pytest.raises(pg.ShapeError, match="length 5"):
        data.TupleDataset(np.zeros(5), np.zeros(4))
    xs, ts = ds.get_batch(np.array([3, 1]))
    np.testing.assert_array_equal(ts, [30, 10])


def test_split_subset_transform():
    base = list(range(10))
    a, b = data.split_dataset(base, 6, order=list(range(9, -1, -1)))
    assert list(a) == [9, 8, 7, 6, 5, 4] and list(b) == [3, 2, 1, 0]
    a1, b1 = data.split_dataset_random(base, 4, seed=3)
    a2, _ = data.split_dataset_random(base, 4, seed=3)
    assert list(a1) == list(a2)
    assert sorted(list(a1) + list(b1)) == base
    with pytest.raises(ValueError):
        data.split_dataset(base, 11)
    tr = data.TransformDataset(a, lambda v: -v)
    assert tr[0] == -9 and len(tr) == 6


def test_concat_examples_to_backend(backend):
    batch = [(np.full(3, i, np.float32), np.int64(i)) for i in range(4)]
    x, t = data.concat_examples(batch, xp=backend.xp, device=backend.device)
    assert pg.xp.namespace_of(x) is backend.xp
    assert x.shape == (4, 3) and t.shape == (4,)
    np.testing.assert_array_equal(pg.xp.to_numpy(t), [0, 1, 2, 3])
    d = data.concat_examples([{"a": np.ones(2)}, {"a": np.zeros(2)}])
    assert d["a"].shape == (2, 2)
    with pytest.raises(pg.ShapeError, match="one shape"):
        data.concat_examples([(np.ones(2),), (np.ones(3),)])


def test_digits_contents():
    train, test = data.load_digits()
    assert (len(train), len(test)) == (1438, 359)
    xs = np.stack([x for x, _ in train])
    ys = np.array([t for _, t in train])
    assert xs.dtype == np.float32 and xs.shape == (1438, 64)
    assert xs.min() == 0.0 and xs.max() == 1.0
    # Stratified: every class has 80% of its examples in train (within one).
    _, test_ys = zip(*test)
    counts_tr = np.bincount(ys, minlength=10)
    counts_te = np.bincount(np.array(test_ys), minlength=10)
    assert np.all(np.abs(counts_te - 0.2 * (counts_tr + counts_te)) <= 1)
    img3, _ = data.load_digits(ndim=3)
    assert img3[0][0].shape == (1, 8, 8)
    np.testing.assert_array_equal(img3[0][0].reshape(64), train[0][0])


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="scikit-learn is not installed")
def test_digits_equal_scikit_learn():
    from sklearn.datasets import load_digits as sk_load

    sk = sk_load()
    train, test = data.load_digits(dtype=np.float64)
    ours = np.concatenate([np.stack([x for x, _ in s]) for s in (train, test)]) * 16
    labels = np.concatenate([[t for _, t in s] for s in (train, test)])
    key = lambda x, y: sorted(map(tuple, np.column_stack([x, y]).tolist()))  # noqa: E731
    assert key(ours, labels) == key(sk.data, sk.target)


def _idx(array: np.ndarray, code: int) -> bytes:
    head = bytes([0, 0, code, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    return head + array.tobytes()


def _write_mnist(folder, n_train=6, n_test=3, compress=True):
    rng = np.random.default_rng(0)
    files = {}
    for stem, n in (("train", n_train), ("t10k", n_test)):
        img = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        lab = rng.integers(0, 10, size=n, dtype=np.uint8)
        for kind, arr, code in (("images-idx3", img, 0x08), ("labels-idx1", lab, 0x08)):
            name = f"{stem}-{kind}-ubyte"
            raw = _idx(arr, code)
            if compress:
                (folder / (name + ".gz")).write_bytes(gzip.compress(raw))
            else:
                (folder / name).write_bytes(raw)
        files[stem] = (img, lab)
    return files


@pytest.mark.parametrize("compress", [True, False])
def test_mnist_reader(tmp_path, compress):
    files = _write_mnist(tmp_path, compress=compress)
    train, test = data.load_mnist(tmp_path, ndim=3)
    assert len(train) == 6 and len(test) == 3
    x, t = train[2]
    assert x.shape == (1, 28, 28) and x.dtype == np.float32
    np.testing.assert_allclose(x[0], files["train"][0][2] / 255.0, rtol=1e-6)
    assert t == files["train"][1][2]
    ftrain, _ = data.load_fashion_mnist(tmp_path)
    assert ftrain[0][0].shape == (784,)


def test_mnist_missing_files_say_where(tmp_path, monkeypatch):
    with pytest.raises(data.DatasetNotFoundError) as e:
        data.load_mnist(tmp_path)
    msg = str(e.value)
    assert str(tmp_path) in msg and "train-images-idx3-ubyte" in msg and "--data-dir" in msg
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, pg.PortagradError)
    monkeypatch.setenv("PORTAGRAD_DATA", str(tmp_path))
    assert data.default_data_dir("fashion-mnist") == tmp_path / "fashion-mnist"
    with pytest.raises(data.DatasetNotFoundError, match="fashion-mnist"):
        data.load_fashion_mnist()


def test_idx_reader_rejects_bad_files(tmp_path):
    good = _idx(np.arange(6, dtype=">i4").reshape(2, 3), 0x0C)
    p = tmp_path / "a-idx2"
    p.write_bytes(good)
    np.testing.assert_array_equal(data.read_idx(p), np.arange(6).reshape(2, 3))
    p.write_bytes(good[:-1])
    with pytest.raises(ValueError, match="truncated"):
        data.read_idx(p)
    p.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="magic"):
        data.read_idx(p)
    g = tmp_path / "b.gz"
    g.write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="cannot read"):
        data.read_idx(g)
