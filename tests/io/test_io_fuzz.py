"""Checkpoint fuzzing: every mutant of a real checkpoint is refused or loads the same values.

Mutants are made from small real files with a seeded RNG: byte flips anywhere (tensor
data included), overwritten bytes, truncations, insertions and deletions, lies in the
8-byte header length, edits of the header JSON that keep it valid JSON (dtype, shape,
offsets, names, metadata), and hostile state trees whose checksums are recomputed, so
that only the state checks stand between them and the target. Each load must raise
:class:`portagrad.CheckpointError` or, when the mutation changed nothing that matters
(a byte set to itself, padding made a tab), return exactly the original values; any
other exception, or different values without an error, fails.

``MUTANTS`` is the count of a suite run; ``PORTAGRAD_FUZZ_MUTANTS`` raises it for a
longer run (and ``PORTAGRAD_FUZZ_SEED`` picks other mutants).
"""

from __future__ import annotations

import collections
import json
import os
import random
import struct
import zlib

import numpy as np
import pytest

import portagrad as pg

MUTANTS = int(os.environ.get("PORTAGRAD_FUZZ_MUTANTS", "2400"))
SEED = int(os.environ.get("PORTAGRAD_FUZZ_SEED", "20261201"))


def _model():
    pg.random.seed(0)
    m = pg.nn.Sequential(pg.nn.Linear(3, 4), pg.nn.Linear(4, 2))
    m.register_buffer("count", np.arange(3, dtype=np.int64))
    m.register_buffer("mask", np.array([True, False]))
    return m


def _sources() -> dict[str, tuple[dict, object]]:
    """name -> (state to save, a factory of the target to load into, or None)."""
    model = _model()
    nested = {
        "model": model.state_dict(),
        "optimizer": {"t": 3, "hyper": {"lr": 0.01, "beta1": 0.9, "beta2": 0.999,
                                        "eps": 1e-8, "amsgrad": False},
                      "state": {"0.W": {"m": np.full((4, 3), 0.5, np.float32)}}},
        "iterator": {"current_position": 16, "epoch": 1, "is_new_epoch": False},
        "torch_optimizer": {  # torch.optim's layout, which portagrad's optimizers load
            "state": {"0": {"step": 3, "exp_avg": np.full(2, 0.25, np.float32)}},
            "param_groups": [{"lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8,
                              "weight_decay": 0.0, "amsgrad": False, "foreach": None,
                              "params": [0]}]},
        "step": 5, "name": "run", "ratio": 0.25, "none": None, "inf": float("inf"),
        "half": np.array([1.5, -2.0], dtype=np.float16), "scalar": np.array(7, np.int32),
        "empty": np.zeros((0, 3), np.float64),
    }
    return {"model": (model.state_dict(), _model), "nested": (nested, None)}


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(
            _same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and a.tobytes() == b.tobytes())
    return type(a) is type(b) and repr(a) == repr(b)


def _split(raw: bytes) -> tuple[dict, int]:
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), 8 + n


def _join(header: dict, data: bytes, pad: bool = True) -> bytes:
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def _recompute_checksums(header: dict, data: bytes) -> None:
    """What an attacker who knows the format can do: make the checksums match again."""
    meta = header["__metadata__"]
    table = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        seed = zlib.crc32(json.dumps([info["dtype"], info["shape"]],
                                     separators=(",", ":")).encode())
        table[name] = f"{zlib.crc32(data[b:e], seed):08x}"
    rest = {k: v for k, v in meta.items() if not k.startswith("portagrad.crc32")}
    meta["portagrad.crc32.metadata"] = (
        f"{zlib.crc32(json.dumps(rest, sort_keys=True, separators=(',', ':')).encode()):08x}")
    meta["portagrad.crc32"] = json.dumps(table, separators=(",", ":"))


_EDGE_VALUES = [-1, 0, 1, 2**31, 2**63, 10**400, 1.5, -0.0, "F32", "I64", "O", None, True,
                [], {}, [0, 0], [2**62, 2**62], "x" * 40]
_POKES = [-5, 1.5, 10**400, float("inf"), float("nan"), -1.0, "yes", "3", None, [], {},
          True, 2**63, {"__float__": "inf"}, {"__tensor__": "model/0.W"}]


def _byte_mutant(rng: random.Random, raw: bytes, data_start: int) -> tuple[str, bytes]:
    b = bytearray(raw)
    kind = rng.choice(["flip", "flip-data", "flip-data", "set", "truncate", "insert",
                       "delete", "length", "swap"])
    if kind == "flip":
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    elif kind == "flip-data":
        i = rng.randrange(data_start, len(b))
        b[i] ^= 1 << rng.randrange(8)
    elif kind == "set":
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == "truncate":
        del b[rng.randrange(len(b)):]
    elif kind == "insert":
        i = rng.randrange(len(b) + 1)
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 9)))
    elif kind == "delete":
        i = rng.randrange(len(b))
        del b[i:i + rng.randint(1, 9)]
    elif kind == "length":
        (n,) = struct.unpack("<Q", raw[:8])
        lie = rng.choice([n + rng.randint(-9, 9), rng.randrange(2**64), 2**63,
                          len(raw), len(raw) - 8, 0])
        b[:8] = struct.pack("<Q", lie % 2**64)
    else:  # two spans of tensor data exchanged
        i, j = sorted(rng.randrange(data_start, len(b)) for _ in range(2))
        k = rng.randint(1, 8)
        b[i:i + k], b[j:j + k] = b[j:j + k], b[i:i + k]
    return kind, bytes(b)


def _header_mutant(rng: random.Random, raw: bytes) -> tuple[str, bytes]:
    """A mutant whose header is still valid JSON (its length field right)."""
    header, start = _split(raw)
    data = raw[start:]
    names = [k for k in header if k != "__metadata__"]
    name = rng.choice(names)
    info = header[name]
    kind = rng.choice(["dtype", "shape", "offsets", "rename", "drop", "add-key", "meta",
                       "state-value", "checksum", "unpadded"])
    if kind == "dtype":
        info["dtype"] = rng.choice(["F32", "I32", "U32", "F64", "I64", "F16", "I16", "U8",
                                    "BOOL", "BF16", "f32", ""])
    elif kind == "shape":
        shape = list(info["shape"])
        if shape and rng.random() < 0.5:
            shape.reverse()
        else:
            shape.append(rng.choice([1, 0, 2]))
        info["shape"] = rng.choice([shape, shape[:-1], _edge(rng)])
    elif kind == "offsets":
        b, e = info["data_offsets"]
        info["data_offsets"] = rng.choice([[b + 1, e + 1], [b, e - 1], [e, b], [0, e - b],
                                           _edge(rng), [b, e, 0]])
    elif kind == "rename":
        header[name + rng.choice(["x", "/", " "])] = header.pop(name)
    elif kind == "drop":
        del info[rng.choice(list(info))]
    elif kind == "add-key":
        info[rng.choice(["x", "dtype2", "__tensor__"])] = _edge(rng)
    elif kind == "meta":
        meta = header["__metadata__"]
        key = rng.choice(list(meta))
        if rng.random() < 0.5:
            del meta[key]
        else:
            meta[key] = rng.choice(["", "{}", meta[key][:-1], meta[key] + " ", "pt"])
    elif kind == "state-value":
        meta = header["__metadata__"]
        tree = json.loads(meta["portagrad.state"])
        _poke(rng, tree)
        meta["portagrad.state"] = json.dumps(tree)
    elif kind == "checksum":
        meta = header["__metadata__"]
        table = json.loads(meta["portagrad.crc32"])
        other = rng.choice(names)
        table[name], table[other] = table[other], table[name]
        if table[name] == table[other]:
            table[name] = f"{(int(table[name], 16) ^ 1):08x}"
        meta["portagrad.crc32"] = json.dumps(table)
    return kind, _join(header, data, pad=kind != "unpadded")


def _edge(rng: random.Random):
    return rng.choice(_EDGE_VALUES)


def _poke(rng: random.Random, tree) -> bool:
    """Replace one scalar leaf of ``tree`` (in place) by an edge value."""
    leaves = []

    def walk(node):
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if isinstance(v, (dict, list)) and not (isinstance(v, dict) and
                                                   ("__tensor__" in v or "__float__" in v)):
                walk(v)
            else:
                leaves.append((node, k))

    walk(tree)
    if not leaves:
        return False
    node, k = rng.choice(leaves)
    node[k] = rng.choice(_POKES)
    return True


_BAD_COUNTS = [-5, 1.5, 10**400, 2**63, float("inf"), float("nan"), "3", None, [], {},
               True]
_BAD_REALS = [-1.0, float("inf"), float("nan"), -float("inf"), 10**400, "0.1", None, True,
              [], {}]
_BAD_FLAGS = ["yes", 1, 0, 1.5, None, [], "False"]
_SPOTS = [(("optimizer", "t"), _BAD_COUNTS), (("optimizer", "hyper", "lr"), _BAD_REALS),
          (("optimizer", "hyper", "beta1"), _BAD_REALS + [1.0, 1.5]),
          (("optimizer", "hyper", "eps"), _BAD_REALS),
          (("optimizer", "hyper", "amsgrad"), _BAD_FLAGS),
          (("iterator", "epoch"), _BAD_COUNTS), (("iterator", "current_position"),
                                                 _BAD_COUNTS),
          (("iterator", "is_new_epoch"), _BAD_FLAGS),
          (("torch_optimizer", "state", "0", "step"), _BAD_COUNTS),
          (("torch_optimizer", "param_groups", 0, "lr"), _BAD_REALS),
          (("torch_optimizer", "param_groups", 0, "betas", 1), _BAD_REALS + [1.0]),
          (("torch_optimizer", "param_groups", 0, "amsgrad"), _BAD_FLAGS)]


def _hostile_mutant(rng: random.Random, raw: bytes) -> tuple[str, bytes]:
    """A state tree with a lie where the rules forbid one, checksums recomputed (what
    an attacker who knows the format can do): only the state checks can refuse it."""
    header, start = _split(raw)
    data = raw[start:]
    meta = header["__metadata__"]
    tree = json.loads(meta["portagrad.state"])
    if "optimizer" not in tree:
        return "hostile tensor references", _hostile_references(rng, header, data)
    spot, values = rng.choice(_SPOTS)
    value = rng.choice(values)
    node = tree
    for k in spot[:-1]:
        node = node[k]
    encoded = value
    if isinstance(value, float) and not np.isfinite(value):
        encoded = {"__float__": repr(value)}
    node[spot[-1]] = encoded
    meta["portagrad.state"] = json.dumps(tree)
    _recompute_checksums(header, data)
    return f"hostile {'/'.join(map(str, spot))}={value!r}"[:60], _join(header, data)


def _hostile_references(rng: random.Random, header: dict, data: bytes) -> bytes:
    # A module file's tree is implicit; give it one where a tensor is referenced twice,
    # or where a tensor's reference was replaced by some other value.
    names = [k for k in header if k != "__metadata__"]
    tree = {n: {"__tensor__": n} for n in names}
    a, b = rng.sample(names, 2)
    if rng.random() < 0.5:
        tree[a] = {"__tensor__": b}
    else:
        tree[a] = rng.choice(_BAD_COUNTS + _BAD_FLAGS)
    header["__metadata__"]["portagrad.state"] = json.dumps(tree)
    _recompute_checksums(header, data)
    return _join(header, data)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz-sources")
    out = {}
    for name, (state, target) in _sources().items():
        path = d / f"{name}.safetensors"
        pg.io.save(path, state)
        out[name] = (path.read_bytes(), pg.io.load(path), target)
    return out


def test_every_mutant_is_refused_or_loads_the_same_values(tmp_path, sources):
    rng = random.Random(SEED)
    outcomes: collections.Counter = collections.Counter()
    failures = []
    for i in range(MUTANTS):
        which = rng.choice(sorted(sources))
        raw, original, target = sources[which]
        family = rng.choices(["bytes", "header", "hostile"], weights=[6, 3, 1])[0]
        if family == "bytes":
            kind, mutant = _byte_mutant(rng, raw, _split(raw)[1])
        elif family == "header":
            kind, mutant = _header_mutant(rng, raw)
        else:
            kind, mutant = _hostile_mutant(rng, raw)
        # A fresh name each time: ext4 flushes a file truncated over data (4 ms a write).
        path = tmp_path / f"mutant{i}.safetensors"
        path.write_bytes(mutant)
        into = target() if target is not None and rng.random() < 0.5 else None
        try:
            got = pg.io.load(path, into)
        except pg.CheckpointError:
            outcomes["refused"] += 1
            continue
        except BaseException as e:  # noqa: BLE001 - every other exception is the bug
            failures.append(f"mutant {i} ({which}, {kind}): {type(e).__name__}: {e}"[:300])
            continue
        finally:
            path.unlink()
        if family == "hostile" or not _same(got, original):
            failures.append(f"mutant {i} ({which}, {kind}): loaded without an error and "
                            f"{'accepted a hostile state' if family == 'hostile' else 'gave different values'}")  # noqa: E501
            continue
        outcomes["same values" if mutant != raw else "unchanged file"] += 1
    assert not failures, f"{len(failures)} of {MUTANTS} mutants:\n" + "\n".join(failures[:20])
    assert sum(outcomes.values()) == MUTANTS
    # The RNG must reach the refusals at all: a fuzzer that never breaks a file is broken.
    assert outcomes["refused"] > MUTANTS * 0.9, outcomes
    print(f"{MUTANTS} mutants: {dict(outcomes)}")
