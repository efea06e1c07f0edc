"""npz files between Chainer 7.8.1 and portagrad: a model Chainer saved loads here and
computes what it computed in Chainer; a file written here has Chainer's keys, dtypes and
shapes (and, when Chainer's environment is given by ``PORTAGRAD_CHAINER_PYTHON``,
Chainer loads it)."""

from __future__ import annotations

import io
import os
import subprocess

import numpy as np
import pytest
from _serializer_model import build

from portagrad import chainer
from portagrad.chainer import functions as F
from portagrad.chainer import links as L
from portagrad.chainer import serializers

_DIR = os.path.join(os.path.dirname(__file__), "fixtures", "core")
_CHAINER_FILE = os.path.join(_DIR, "chainer_model.npz")
# A Python with Chainer 7.8.1 (scripts/make_chainer_fixtures_core.py says how to make one);
# without it tests/conftest.py deselects the test marked chainer_env, and says so.
_CHAINER_PY = os.environ.get("PORTAGRAD_CHAINER_PYTHON", "")


def _model():
    return build(chainer, L, F)


def test_a_file_chainer_wrote_loads_and_computes_chainers_output():
    expected = np.load(os.path.join(_DIR, "chainer_model_expected.npz"))
    model = _model()  # heads[0] is lazy: the load creates its W
    serializers.load_npz(_CHAINER_FILE, model)
    assert model.block.bn.N == 0 and model.block.bn.avg_mean.dtype == np.float32
    with chainer.using_config("train", False):
        y = model(expected["x"])
    np.testing.assert_allclose(y.array, expected["y"], rtol=1e-5, atol=1e-6)
    with np.load(_CHAINER_FILE) as f:
        for path, p in model.namedparams():
            np.testing.assert_array_equal(p.array, f[path.lstrip("/")])


def test_a_file_written_here_has_chainers_layout():
    model = _model()
    x = np.random.default_rng(1).uniform(-1, 1, (4, 3, 6, 6)).astype(np.float32)
    model(x)
    buf = io.BytesIO()
    serializers.save_npz(buf, model)
    buf.seek(0)
    with np.load(buf) as mine, np.load(_CHAINER_FILE) as theirs:
        assert sorted(mine.files) == sorted(theirs.files)
        for k in theirs.files:
            assert mine[k].dtype == theirs[k].dtype, k
            assert mine[k].shape == theirs[k].shape, k


def test_strict_path_and_ignore_names():
    model = _model()
    serializers.load_npz(_CHAINER_FILE, model)
    other = L.Linear(5, 2)
    serializers.load_npz(_CHAINER_FILE, other, path="heads/1/")
    np.testing.assert_array_equal(other.W.array, model.heads[1].W.array)
    fresh = L.Linear(5, 2)
    before = fresh.W.array.copy()
    serializers.load_npz(_CHAINER_FILE, fresh, path="heads/1/", ignore_names="heads/1/W")
    np.testing.assert_array_equal(fresh.W.array, before)
    with pytest.raises(KeyError, match="expected the key"):
        serializers.load_npz(_CHAINER_FILE, L.Linear(5, 2))
    serializers.load_npz(_CHAINER_FILE, L.Linear(5, 2), strict=False)


def test_chainers_none_entries_are_read_without_unpickling(tmp_path):
    # Chainer writes a parameter that is not initialized as a pickled None object array.
    path = tmp_path / "none.npz"
    np.savez(path, W=np.asarray(None), b=np.zeros(3, np.float32))
    lin = L.Linear(None, 3)
    serializers.load_npz(str(path), lin)
    assert lin.W.array is None and lin.b.array.shape == (3,)


def test_hdf5_needs_h5py_or_roundtrips(tmp_path):
    try:
        import h5py  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="h5py"):
            serializers.save_hdf5(str(tmp_path / "m.h5"), L.Linear(2, 3))
        return
    a, b = L.Linear(2, 3), L.Linear(None, 3)
    serializers.save_hdf5(str(tmp_path / "m.h5"), a)
    serializers.load_hdf5(str(tmp_path / "m.h5"), b)
    np.testing.assert_array_equal(a.W.array, b.W.array)


def test_persistent_scalars_and_arrays_roundtrip():
    bn = L.BatchNormalization(3)
    bn(np.ones((2, 3), np.float32), finetune=True)
    target = serializers.serialize(bn)
    assert sorted(target) == ["N", "avg_mean", "avg_var", "beta", "gamma"]
    assert target["N"].dtype.kind == "i" and target["N"] == 1
    bn2 = L.BatchNormalization(3)
    buf = io.BytesIO()
    serializers.save_npz(buf, bn)
    buf.seek(0)
    serializers.load_npz(buf, bn2)
    assert bn2.N == 1 and isinstance(bn2.N, int)
    np.testing.assert_array_equal(bn2.avg_var, bn.avg_var)


@pytest.mark.chainer_env
def test_chainer_itself_loads_a_file_written_here(tmp_path):
    model = _model()
    x = np.random.default_rng(1).uniform(-1, 1, (4, 3, 6, 6)).astype(np.float32)
    model(x)
    path = tmp_path / "mine.npz"
    serializers.save_npz(str(path), model)
    with chainer.using_config("train", False):
        y = model(x).array
    np.save(tmp_path / "x.npy", x)
    here = os.path.dirname(__file__)
    code = (
        "import sys, numpy as np\n"
        "np.float = float\n"
        f"sys.path.insert(0, {here!r})\n"
        "import chainer, chainer.links as L, chainer.functions as F\n"
        "from _serializer_model import build\n"
        "m = build(chainer, L, F)\n"
        f"chainer.serializers.load_npz({str(path)!r}, m)\n"
        f"x = np.load({str(tmp_path / 'x.npy')!r})\n"
        "with chainer.using_config('train', False):\n"
        f"    np.save({str(tmp_path / 'y.npy')!r}, m(x).array)\n")
    subprocess.run([_CHAINER_PY, "-c", code], check=True, capture_output=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), y, rtol=1e-5, atol=1e-6)


def test_an_hdf5_file_chainer_wrote_loads_when_h5py_is_installed(tmp_path):
    pytest.importorskip("h5py", reason="HDF5 needs h5py, an optional dependency "
                                       "(the npz tests cover the same layout)")
    expected = np.load(os.path.join(_DIR, "chainer_model_expected.npz"))
    model = _model()
    serializers.load_hdf5(os.path.join(_DIR, "chainer_model.h5"), model)
    with chainer.using_config("train", False):
        y = model(expected["x"])
    np.testing.assert_allclose(y.array, expected["y"], rtol=1e-5, atol=1e-6)
    path = str(tmp_path / "mine.h5")
    serializers.save_hdf5(path, model)
    again = _model()
    serializers.load_hdf5(path, again)
    for (name, p), (_, q) in zip(model.namedparams(), again.namedparams()):
        np.testing.assert_array_equal(p.array, q.array, err_msg=name)
    lazy = L.Linear(None, 3)  # None is stored as HDF5's empty dataset, as Chainer does
    serializers.save_hdf5(str(tmp_path / "lazy.h5"), lazy)
    back = L.Linear(None, 3)
    serializers.load_hdf5(str(tmp_path / "lazy.h5"), back)
    assert back.W.array is None
