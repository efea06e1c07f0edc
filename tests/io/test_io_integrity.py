"""What a load refuses and what a save cleans up: files that are not regular files, files
that change while read, checksums, state trees that lie, leftovers of killed saves."""

from __future__ import annotations

import io
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import portagrad as pg
from portagrad.io import _checkpoint, _format


def _save_small(path):
    state = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(3),
             "step": 5}
    pg.io.save(path, state)
    return state


def _header(raw: bytes) -> tuple[dict, int]:
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), 8 + n


def _rewrite_header(raw: bytes, header: dict) -> bytes:
    """``raw`` with a new header (same data), its length field updated."""
    _, start = _header(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + raw[start:]


# -- not a regular file ------------------------------------------------------------------

def _load_in_thread(path, timeout=5.0):
    """Load in a thread, so that a load that blocks fails the test instead of hanging it."""
    result: dict = {}

    def run():
        try:
            pg.io.load(path)
        except BaseException as e:  # noqa: BLE001 - handed to the test below
            result["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"load({path}) blocked for {timeout} s"
    return result.get("error")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "snapshot_iter_00000010.safetensors"
    os.mkfifo(fifo)
    err = _load_in_thread(fifo)
    assert isinstance(err, pg.CheckpointError) and "FIFO" in str(err), err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_symlink_to_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    link = tmp_path / "model.safetensors"
    link.symlink_to(tmp_path / "pipe")
    err = _load_in_thread(link)
    assert isinstance(err, pg.CheckpointError) and "FIFO" in str(err), err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(tmp_path,
                                                                       monkeypatch):
    # The race stat() cannot close: O_NONBLOCK and fstat() must.
    path = tmp_path / "m.safetensors"
    _save_small(path)
    real_open = os.open

    def swap_then_open(p, flags, *args):
        if os.fspath(p) == os.fspath(path):
            os.unlink(path)
            os.mkfifo(path)
        return real_open(p, flags, *args)

    monkeypatch.setattr(_format.os, "open", swap_then_open)
    err = _load_in_thread(path)
    assert isinstance(err, pg.CheckpointError) and "replaced while opening" in str(err), err


def test_a_symlink_to_a_regular_file_loads(tmp_path):
    state = _save_small(tmp_path / "real.safetensors")
    (tmp_path / "link.safetensors").symlink_to(tmp_path / "real.safetensors")
    np.testing.assert_array_equal(pg.io.load(tmp_path / "link.safetensors")["w"],
                                  state["w"])


@pytest.mark.parametrize("target, kind", [
    ("dir", "a directory"),
    ("/dev/zero", "a character device"),
    ("missing", "cannot open"),
])
def test_other_non_regular_targets_are_refused(tmp_path, target, kind):
    path = {"dir": tmp_path, "missing": tmp_path / "nothing.safetensors"}.get(target, target)
    if not os.path.exists(path) and target != "missing":
        pytest.skip(f"{target} does not exist here")
    with pytest.raises(pg.CheckpointError, match=kind):
        pg.io.load(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_resume_skips_a_fifo_named_like_a_snapshot(tmp_path):
    train, _ = pg.data.load_digits()
    model = pg.training.Classifier(pg.nn.Linear(64, 10))
    up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 16, seed=0),
                                     pg.optim.SGD(model, lr=0.1))
    trainer = pg.training.Trainer(up, (1, "iteration"), out=tmp_path)
    os.mkfifo(tmp_path / "snapshot_iter_00000010.safetensors")
    result: dict = {}

    def run():
        try:
            trainer.resume(tmp_path, log=io.StringIO())
        except BaseException as e:  # noqa: BLE001 - handed to the test below
            result["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(5.0)
    assert not t.is_alive(), "resume blocked on a FIFO"
    err = result.get("error")
    assert isinstance(err, pg.CheckpointError) and "FIFO" in str(err), err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_resume_from_a_fifo_named_on_its_own_is_an_error(tmp_path):
    # Not a silent fresh start: the path the user named cannot be read.
    train, _ = pg.data.load_digits()
    model = pg.training.Classifier(pg.nn.Linear(64, 10))
    up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 16, seed=0),
                                     pg.optim.SGD(model, lr=0.1))
    trainer = pg.training.Trainer(up, (1, "iteration"), out=tmp_path / "out")
    os.mkfifo(tmp_path / "pipe.safetensors")
    (tmp_path / "dangling.safetensors").symlink_to(tmp_path / "nothing")
    with pytest.raises(pg.CheckpointError, match="FIFO"):
        trainer.resume(tmp_path / "pipe.safetensors")
    with pytest.raises(pg.CheckpointError, match="cannot open"):
        trainer.resume(tmp_path / "dangling.safetensors")


# -- files that change while they are read -------------------------------------------------

def test_a_file_truncated_after_its_size_was_taken_is_an_error(tmp_path, monkeypatch):
    # The size is read once; a writer truncating the file in place afterwards must give
    # CheckpointError (it gave struct.error from the unchecked 8-byte read).
    path = tmp_path / "m.safetensors"
    _save_small(path)
    size = path.stat().st_size
    for cut in (0, 3, 8, 40, size - 5):
        _save_small(path)

        def stale_size(f, cut=cut):
            os.truncate(path, cut)
            return size

        monkeypatch.setattr(_checkpoint, "file_size", stale_size)
        with pytest.raises(pg.CheckpointError, match="changed while reading|truncated"):
            pg.io.load(path)


def test_concurrent_in_place_rewrites_never_give_other_errors_or_numbers(tmp_path):
    path = tmp_path / "m.safetensors"
    state = _save_small(path)
    raw = path.read_bytes()
    stop = threading.Event()

    def rewrite():
        # Truncate and rewrite in place (not atomically): every state of a torn write.
        i = 0
        while not stop.is_set():
            with open(path, "r+b") as f:
                f.truncate((i * 37) % len(raw))
                f.seek(0)
                f.write(raw[: (i * 53) % (len(raw) + 1)])
            i += 1

    t = threading.Thread(target=rewrite, daemon=True)
    t.start()
    loaded = errors = 0
    try:
        for _ in range(300):
            try:
                got = pg.io.load(path)
            except pg.CheckpointError:
                errors += 1
                continue
            loaded += 1
            np.testing.assert_array_equal(got["w"], state["w"])
            np.testing.assert_array_equal(got["b"], state["b"])
            assert got["step"] == 5
    finally:
        stop.set()
        t.join()
    assert errors > 0


# -- checksums -----------------------------------------------------------------------------

def test_each_tensor_carries_a_crc32_that_other_readers_ignore(tmp_path):
    import zlib

    path = tmp_path / "m.safetensors"
    state = _save_small(path)
    raw = path.read_bytes()
    header, start = _header(raw)
    table = json.loads(header["__metadata__"]["portagrad.crc32"])
    assert set(table) == {"w", "b"}
    b, e = header["w"]["data_offsets"]
    want = zlib.crc32(raw[start + b:start + e], zlib.crc32(b'["F32",[2,3]]'))
    assert table["w"] == f"{want:08x}"
    # The safetensors format asks string-to-string metadata: the checksums keep to it.
    assert all(isinstance(v, str) for v in header["__metadata__"].values())
    np.testing.assert_array_equal(
        np.frombuffer(raw[start + b:start + e], "<f4").reshape(2, 3), state["w"])


def test_the_reference_safetensors_reader_reads_a_checksummed_file(tmp_path):
    safetensors = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "m.safetensors"
    state = _save_small(path)
    np.testing.assert_array_equal(safetensors.load_file(str(path))["w"], state["w"])


def test_a_flipped_data_byte_is_an_error_naming_the_tensor(tmp_path):
    path = tmp_path / "m.safetensors"
    _save_small(path)
    raw = bytearray(path.read_bytes())
    header, start = _header(bytes(raw))
    b, _ = header["w"]["data_offsets"]
    raw[start + b + 5] ^= 0x10
    path.write_bytes(bytes(raw))
    with pytest.raises(pg.CheckpointError, match="tensor 'w'.*checksum"):
        pg.io.load(path)


@pytest.mark.parametrize("change", ["dtype", "shape", "state", "one-checksum-entry",
                                    "table-missing-a-tensor"])
def test_a_consistent_looking_header_edit_is_caught_by_the_checksums(tmp_path, change):
    path = tmp_path / "m.safetensors"
    pg.io.save(path, {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                      "i": np.arange(3, dtype=np.int32), "step": 5})
    raw = path.read_bytes()
    header, _ = _header(raw)
    meta = header["__metadata__"]
    if change == "dtype":  # same size, other meaning: float32 bytes read as int32
        header["i"]["dtype"] = "F32"
    elif change == "shape":
        header["w"]["shape"] = [3, 2]
    elif change == "state":
        meta["portagrad.state"] = meta["portagrad.state"].replace('"step":5', '"step":6')
    elif change == "one-checksum-entry":
        del meta["portagrad.crc32.metadata"]
    else:
        table = json.loads(meta["portagrad.crc32"])
        del table["i"]
        meta["portagrad.crc32"] = json.dumps(table)
    path.write_bytes(_rewrite_header(raw, header))
    with pytest.raises(pg.CheckpointError, match="checksum"):
        pg.io.load(path)


def test_files_written_before_checksums_load_with_the_header_checked(tmp_path):
    # Older portagrad (and other safetensors writers) have no checksum entries: such a
    # file loads, with every structural check.
    path = tmp_path / "m.safetensors"
    state = _save_small(path)
    raw = path.read_bytes()
    header, _ = _header(raw)
    del header["__metadata__"]["portagrad.crc32"]
    del header["__metadata__"]["portagrad.crc32.metadata"]
    path.write_bytes(_rewrite_header(raw, header))
    got = pg.io.load(path)
    np.testing.assert_array_equal(got["w"], state["w"])
    assert got["step"] == 5
    header["w"]["shape"] = [3, 3]
    path.write_bytes(_rewrite_header(raw, header))
    with pytest.raises(pg.CheckpointError, match="needs 36 bytes"):
        pg.io.load(path)


# -- state trees that lie --------------------------------------------------------------------

def _optimizer_target():
    pg.random.seed(0)
    model = pg.nn.Linear(3, 2)
    opt = pg.optim.Adam(model, lr=0.01)
    for p in model.parameters():
        p.grad = np.ones_like(p.array)
    opt.step()
    return opt


def _tamper_optimizer(sd: dict, what: str, value) -> dict:
    """Set the step count (``t``), ``lr`` or ``amsgrad`` in either layout of
    ``Optimizer.state_dict``: portagrad's ``t``/``hyper`` or torch.optim's
    ``state``/``param_groups``."""
    if "hyper" in sd:
        if what == "t":
            sd["t"] = value
        else:
            sd["hyper"][what] = value
    elif what == "t":
        for entries in sd["state"].values():
            entries["step"] = value
    else:
        for g in sd["param_groups"]:
            g[what] = value
    return sd


LIES = [
    ("t", {"__float__": "inf"}), ("t", -5), ("t", 1.5), ("t", 10**400), ("t", "3"),
    ("lr", float("nan")), ("lr", -1.0), ("lr", float("inf")), ("lr", "0.1"),
    ("amsgrad", "yes"), ("amsgrad", 1),
]


@pytest.mark.parametrize("what, value", LIES, ids=[f"{w}={v!r}"[:24] for w, v in LIES])
def test_an_optimizer_state_that_lies_is_an_error(tmp_path, what, value):
    path = tmp_path / "opt.safetensors"
    sd = _tamper_optimizer(_optimizer_target().state_dict(), what, value)
    if value == {"__float__": "inf"}:
        value = sd = _tamper_optimizer(sd, what, float("inf"))  # saved as {"__float__": ...}
    try:
        pg.io.save(path, sd)
    except pg.CheckpointError:
        pytest.skip("this optimizer layout cannot even hold the value")
    target = _optimizer_target()
    before = target.state_dict()
    with pytest.raises(pg.CheckpointError) as info:
        pg.io.load(path, target)
    assert type(info.value) is pg.CheckpointError
    # Refused before the optimizer was touched.
    assert json.dumps(_scalars(target.state_dict())) == json.dumps(_scalars(before))
    # And without a target, the tree itself is refused.
    with pytest.raises(pg.CheckpointError):
        pg.io.load(path)


def _scalars(tree):
    if isinstance(tree, dict):
        return {str(k): _scalars(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_scalars(v) for v in tree]
    if isinstance(tree, (bool, int, float, str)) or tree is None:
        return repr(tree)
    return repr(np.asarray(pg.xp.to_numpy(getattr(tree, "array", tree))).tolist())


@pytest.mark.parametrize("tree, match", [
    ({"o": {"t": -5, "hyper": {"lr": 0.1}, "state": {}}}, "o/t: expected a non-negative"),
    ({"o": {"t": 1.5, "hyper": {"lr": 0.1}, "state": {}}}, "o/t"),
    ({"o": {"t": 10**400, "hyper": {"lr": 0.1}, "state": {}}}, "o/t"),
    ({"o": {"t": float("inf"), "hyper": {}, "state": {}}}, "o/t"),
    ({"o": {"t": 1, "hyper": {"lr": float("nan")}, "state": {}}}, "lr: expected a finite"),
    ({"o": {"t": 1, "hyper": {"beta1": 1.0}, "state": {}}}, "beta1"),
    ({"o": {"t": 1, "hyper": {"amsgrad": "yes"}, "state": {}}}, "amsgrad: expected True"),
    ({"o": {"state": {"0": {"step": -1}}, "param_groups": [{"lr": 0.1}]}}, "0/step"),
    ({"o": {"state": {"0": {"step": np.array(2.5)}}, "param_groups": []}}, "0/step"),
    ({"o": {"state": {}, "param_groups": [{"lr": -1.0}]}}, "param_groups/0/lr"),
    ({"o": {"state": {}, "param_groups": [{"lr": np.array(np.nan)}]}}, "0/lr"),
    ({"o": {"state": {}, "param_groups": [{"betas": [0.9, 1.5]}]}}, "betas/1"),
    ({"o": {"state": {}, "param_groups": [{"betas": "x"}]}}, "betas"),
    ({"s": {"scale": 0.0, "good_steps": 1}}, "scale"),
    ({"u": {"iteration": -1, "model": {}, "optimizer": {}, "iterator": {}}}, "iteration"),
    ({"i": {"current_position": 0, "epoch": 1.5, "is_new_epoch": False}}, "epoch"),
    ({"i": {"current_position": 0, "epoch": 1, "is_new_epoch": "no"}}, "is_new_epoch"),
    ({"tr": {"updater": {}, "random": {}, "extensions": {}, "elapsed_time": -1.0}},
     "elapsed_time"),
])
def test_known_layouts_are_checked_anywhere_in_a_tree(tmp_path, tree, match):
    path = tmp_path / "s.safetensors"
    pg.io.save(path, tree)
    with pytest.raises(pg.CheckpointError, match=match):
        pg.io.load(path)


def test_valid_optimizer_and_trainer_states_still_load(tmp_path):
    path = tmp_path / "opt.safetensors"
    src = _optimizer_target()
    pg.io.save(path, src)
    dst = _optimizer_target()
    pg.io.load(path, dst)
    assert json.dumps(_scalars(dst.state_dict())) == json.dumps(_scalars(src.state_dict()))
    pg.io.save(path, {"o": {"t": 0, "hyper": {"lr": 0.0, "beta1": 0.0, "amsgrad": True},
                            "state": {}},
                      "i": {"current_position": 0, "epoch": 0, "is_new_epoch": True},
                      "torch": {"state": {"0": {"step": np.array(3.0, np.float32)}},
                                "param_groups": [{"lr": np.array(0.1), "betas": [0.9, 0.99],
                                                  "foreach": None, "params": [0]}]}})
    got = pg.io.load(path)
    assert got["o"]["hyper"]["amsgrad"] is True
    assert got["torch"]["param_groups"][0]["betas"] == [0.9, 0.99]


def test_a_scalar_of_another_kind_than_the_targets_is_an_error(tmp_path):
    # Caught for any object by comparing with its own state_dict(), before it is touched.
    train, _ = pg.data.load_digits()
    it = pg.data.SerialIterator(train, 16, seed=0)
    sd = it.state_dict()
    sd["is_new_epoch"] = 0
    pg.io.save(tmp_path / "it.safetensors", sd)
    with pytest.raises(pg.CheckpointError, match="is_new_epoch: expected True or False"):
        pg.io.load(tmp_path / "it.safetensors", pg.data.SerialIterator(train, 16, seed=0))


# -- leftovers of killed saves ------------------------------------------------------------

def _leftover(folder, name="model.safetensors", age=3600.0, size=4096):
    p = folder / f".{name}.k1ll3d_x.tmp"
    p.write_bytes(b"\0" * size)
    t = time.time() - age
    os.utime(p, (t, t))
    return p


def test_the_next_save_removes_leftovers_of_killed_saves(tmp_path):
    old = _leftover(tmp_path)
    other = _leftover(tmp_path, "snapshot_iter_00000010.safetensors")
    young = _leftover(tmp_path, "log", age=0.0)  # may be a writer between mkstemp and flock
    keep = [tmp_path / ".hidden.tmp", tmp_path / "notes.k1ll3d_x.tmp",
            tmp_path / ".model.safetensors.SHOUTY12.tmp"]
    for p in keep:
        p.write_bytes(b"mine")
        os.utime(p, (0, 0))
    _save_small(tmp_path / "model.safetensors")
    assert not old.exists() and not other.exists()
    assert young.exists() and all(p.exists() for p in keep)
    assert sorted(os.listdir(tmp_path)) == sorted(
        [young.name, "model.safetensors"] + [p.name for p in keep])


def test_a_symlink_or_fifo_named_like_a_leftover_is_left_alone(tmp_path):
    target = tmp_path / "precious"
    target.write_bytes(b"x")
    link = tmp_path / ".a.abcdefgh.tmp"
    link.symlink_to(target)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / ".b.abcdefgh.tmp")
    assert pg.io.remove_stale_temps(tmp_path) == []
    assert link.is_symlink() and target.exists()


_SLOW_WRITER = """
import sys, time
from portagrad.io import atomic_write

def write(f):
    f.write(b"\\0" * 65536)
    f.flush()
    print("writing", flush=True)
    time.sleep(60)

atomic_write(sys.argv[1], write)
"""


def test_a_live_writers_temp_file_is_kept_and_a_sigkilled_ones_removed(tmp_path):
    # A real writer, killed with SIGKILL mid-save, as a crash or the OOM killer would.
    target = tmp_path / "model.safetensors"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        (temp,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        os.utime(temp, (0, 0))  # old enough: only its lock protects it now
        _save_small(tmp_path / "other.safetensors")
        assert temp.exists(), "a save removed the temporary file of a live writer"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    assert temp.exists() and not target.exists()  # the kill left it, as it would
    os.utime(temp, (0, 0))
    _save_small(tmp_path / "other.safetensors")
    assert not temp.exists()
    assert sorted(os.listdir(tmp_path)) == ["other.safetensors"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_train_resume_refuses_a_fifo_snapshot_without_blocking(tmp_path, capsys):
    # It blocked forever in open(); now the only "snapshot" is refused and train says so.
    from portagrad.cli import main

    os.mkfifo(tmp_path / "snapshot_iter_00000012.safetensors")
    result: dict = {}
    argv = ["train", "--quiet", "--epochs", "1", "--out", str(tmp_path), "--resume"]
    t = threading.Thread(target=lambda: result.update(rc=main(argv)), daemon=True)
    t.start()
    t.join(60.0)
    assert not t.is_alive(), "train --resume blocked on a FIFO"
    err = capsys.readouterr().err
    assert result["rc"] == 2, err
    assert "--resume: no snapshot in" in err


def test_hyperparameters_may_change_between_int_and_float_and_eps_may_be_a_pair(tmp_path):
    # Rprop's step sizes default to (1e-6, 50); a saved run may hold 0.05 there, and
    # Adafactor's eps is (None, 1e-3): both are hyperparameters, not counters.
    p = pg.nn.Parameter(np.ones(3))
    saved = pg.optim.Rprop([p], step_sizes=(1e-6, 0.05))
    p.grad = np.ones(3)
    saved.step()
    pg.io.save(tmp_path / "r.safetensors", saved)
    fresh = pg.optim.Rprop([pg.nn.Parameter(np.ones(3))])
    pg.io.load(tmp_path / "r.safetensors", fresh)
    assert tuple(fresh.param_groups[0]["step_sizes"]) == (1e-6, 0.05)
    ada = pg.optim.Adafactor([pg.nn.Parameter(np.ones((2, 2)))], lr=0.05)
    pg.io.save(tmp_path / "a.safetensors", ada)
    pg.io.load(tmp_path / "a.safetensors", ada)
    assert list(ada.param_groups[0]["eps"]) == [None, 1e-3]
