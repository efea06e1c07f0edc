"""Torn and hostile checkpoint files: CheckpointError, never code execution, hangs or
unbounded allocation."""

from __future__ import annotations

import json
import os
import pickle
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import portagrad as pg


def _target():
    pg.random.seed(0)
    m = pg.nn.Sequential(pg.nn.Linear(3, 4), pg.nn.Linear(4, 2))
    m.register_buffer("steps", np.zeros(2, dtype=np.int64))
    return m


@pytest.fixture(scope="module")
def real_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("real")
    model = _target()
    opt = pg.optim.Adam(model)
    pg.io.save(d / "model.safetensors", model)
    pg.io.save(d / "nested.safetensors", {"model": model.state_dict(),
                                          "optimizer": opt.state_dict(), "step": 5})
    return {name: (d / name).read_bytes() for name in ("model.safetensors",
                                                       "nested.safetensors")}


def _file(tmp_path, raw: bytes, name="x.safetensors"):
    p = tmp_path / name
    p.write_bytes(raw)
    return p


def _raw(header: dict, data: bytes = b"", length: int | None = None) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h) if length is None else length) + h + data


def test_every_truncation_is_rejected(tmp_path, real_files):
    raw = real_files["model.safetensors"]
    for n in list(range(0, 64)) + list(range(64, len(raw), 7)):
        p = _file(tmp_path, raw[:n])
        with pytest.raises(pg.CheckpointError):
            pg.io.load(p, _target())


def test_trailing_garbage_is_rejected(tmp_path, real_files):
    p = _file(tmp_path, real_files["model.safetensors"] + b"\0" * 8)
    with pytest.raises(pg.CheckpointError, match="trailing"):
        pg.io.load(p)


@pytest.mark.parametrize("raw, match", [
    (_raw({}, length=2**63), "cap"),
    (_raw({}, length=2**20), "past the end"),
    (struct.pack("<Q", 4) + b"[1] ", "JSON object"),
    (struct.pack("<Q", 4) + b"{nan", "not valid JSON"),
    (struct.pack("<Q", 8) + b'{"a":Na}', "not valid JSON"),
    (struct.pack("<Q", 4) + b"\xff\xfe{}", "JSON"),
    (_raw({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
     "needs 12 bytes"),
    (_raw({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4),
     "outside"),
    (_raw({"w": {"dtype": "O", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8), "dtype"),
    (_raw({"w": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}}, b"\0" * 2),
     "dtype"),
    (_raw({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "shape"),
    (_raw({"w": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}}, b"\0" * 4),
     "shape"),
    (_raw({"w": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 4]}},
          b"\0" * 4), "needs"),
    (_raw({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, b"\0" * 4),
     "outside"),
    (_raw({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}}, b"\0" * 4),
     "keys"),
    (_raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     "overlaps"),
    (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8), "gap"),
    (_raw({"__metadata__": {"k": 1}}), "strings"),
    (_raw({"__metadata__": {"portagrad.state": '{"a": {"__tensor__": "zz"}}'}}),
     "absent"),
    (_raw({"__metadata__": {"portagrad.state": "[" * 100000 + "]" * 100000}}), "deep"),
    (_raw({"__metadata__": {"portagrad.state": '{"a": {"__float__": "1e9"}}'}}),
     "malformed"),
])
def test_malformed_headers(tmp_path, raw, match):
    with pytest.raises(pg.CheckpointError, match=match):
        pg.io.load(_file(tmp_path, raw))


def test_duplicate_names(tmp_path):
    entry = '{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    h = ('{"w":' + entry + ',"w":' + entry + "}").encode()
    with pytest.raises(pg.CheckpointError, match="duplicate"):
        pg.io.load(_file(tmp_path, struct.pack("<Q", len(h)) + h + b"\0" * 4))
    tree = json.dumps({"a": {"__tensor__": "w"}, "b": {"__tensor__": "w"}})
    raw = _raw({"__metadata__": {"portagrad.state": tree},
                "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4)
    with pytest.raises(pg.CheckpointError, match="twice"):
        pg.io.load(_file(tmp_path, raw))


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickle_payloads_never_run(tmp_path):
    marker = str(tmp_path / "pwned")
    payload = pickle.dumps(_Payload(marker))
    # A pickle file in place of a checkpoint.
    with pytest.raises(pg.CheckpointError):
        pg.io.load(_file(tmp_path, payload, "a.safetensors"), _target())
    # A pickle hidden in the metadata and in a tensor's bytes.
    raw = _raw({"__metadata__": {"portagrad.state": json.dumps(payload.decode("latin1"))},
                "w": {"dtype": "U8", "shape": [len(payload)],
                      "data_offsets": [0, len(payload)]}}, payload)
    with pytest.raises(pg.CheckpointError):
        pg.io.load(_file(tmp_path, raw, "b.safetensors"), _target())
    with pytest.raises(pg.CheckpointError, match="not referenced"):
        pg.io.load(_file(tmp_path, raw, "b.safetensors"))
    # A torch-style zip/pickle checkpoint.
    import zipfile

    with zipfile.ZipFile(tmp_path / "c.pt", "w") as z:
        z.writestr("archive/data.pkl", payload)
    with pytest.raises(pg.CheckpointError):
        pg.io.load(tmp_path / "c.pt", _target())
    assert not os.path.exists(marker)


_MUTATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.integers(0, 10**6), st.integers(0, 255)),
        st.tuples(st.just("cut"), st.integers(0, 10**6), st.just(0)),
        st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255)),
        st.tuples(st.just("length"), st.integers(0, 2**64 - 1), st.just(0)),
        st.tuples(st.just("text"), st.integers(0, 10**6),
                  st.sampled_from([b"9999999999", b"-1", b"[]", b"{}", b'"O"', b"null",
                                   b"1e400", b"\\u0000", b'"__tensor__"', b","])),
    ),
    min_size=1, max_size=4)


def _mutate(raw: bytes, mutations) -> bytes:
    b = bytearray(raw)
    for kind, pos, val in mutations:
        i = pos % (len(b) + 1)
        if kind == "set" and b:
            b[i % len(b)] = val
        elif kind == "cut":
            del b[i:]
        elif kind == "insert":
            b[i:i] = bytes([val])
        elif kind == "length" and len(b) >= 8:
            b[:8] = struct.pack("<Q", pos)
        elif kind == "text":
            b[i:i + len(val)] = val
    return bytes(b)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["model.safetensors", "nested.safetensors"]),
       mutations=_MUTATIONS)
def test_fuzzed_checkpoints(tmp_path, real_files, which, mutations):
    raw = _mutate(real_files[which], mutations)
    path = _file(tmp_path, raw, "fuzz.safetensors")
    target = _target() if which == "model.safetensors" else None
    tracemalloc.start()
    try:
        pg.io.load(path, target)
    except pg.CheckpointError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # Nothing beyond a few times the file (the header is parsed in memory).
    assert peak < 64 * len(raw) + (1 << 20)
