"""Random engines, one per array library (and device), behind one seeded generator.

* NumPy and every library without an engine of its own (array-api-strict, JAX, ...): a NumPy
  ``Generator`` (PCG64) draws on the host and the result is moved to the target; so the
  same seed gives the same numbers on all of them.
* torch: a ``torch.Generator`` on the target device.
* CuPy: counter-based: each draw seeds a fresh ``cupy.random.Generator`` from
  ``(seed, engine key, counter)``, so the state is two integers and resuming is exact.

Every engine's state is JSON-able (dicts, lists, ints, strings), so a training run can
save it next to a checkpoint and resume the same stream.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from ._host import from_numpy
from ._namespace import namespace_name

__all__ = ["engine_key", "make_engine", "HostEngine", "TorchEngine", "CupyEngine"]

# Engines with a key of their own; everything else draws on the host.
_NATIVE = {"torch", "cupy"}


def engine_key(xp: Any, device: Any) -> str:
    """The engine a draw for ``(xp, device)`` uses: ``"host"``, ``"torch:<device>"``..."""
    name = namespace_name(xp)
    if name not in _NATIVE:
        return "host"
    if name == "cupy":
        dev_id = getattr(device, "id", None)
        if dev_id is None:
            import cupy

            dev_id = cupy.cuda.Device().id
        return f"cupy:{int(dev_id)}"
    return f"torch:{device}"


def _sub_seed(seed: int, key: str, counter: int = 0) -> int:
    """A 63-bit seed derived from the generator's seed, an engine key and a counter."""
    words = [int(b) for b in key.encode()]
    ss = np.random.SeedSequence(seed, spawn_key=(len(words), *words, counter))
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


class HostEngine:
    """NumPy's PCG64 on the host; results are moved to the target library and device."""

    def __init__(self, seed: int) -> None:
        self.gen = np.random.Generator(np.random.PCG64(seed))

    def _out(self, host: np.ndarray, xp: Any, device: Any, dtype: Any) -> Any:
        host = np.asarray(host)
        # C order for the libraries that need it; np.ascontiguousarray would make a 0-d
        # draw 1-d
        if not host.flags.c_contiguous:
            host = np.copy(host, order="C")
        out = from_numpy(host, xp=xp, device=device)
        if dtype is not None and out.dtype != dtype:
            out = xp.astype(out, dtype)
        return out

    def uniform(self, shape: tuple, low: float, high: float, xp: Any, device: Any,
                dtype: Any) -> Any:
        return self._out(self.gen.uniform(low, high, size=shape), xp, device, dtype)

    def normal(self, shape: tuple, mean: float, std: float, xp: Any, device: Any,
               dtype: Any) -> Any:
        return self._out(self.gen.normal(mean, std, size=shape), xp, device, dtype)

    def bernoulli(self, shape: tuple, p: float, xp: Any, device: Any) -> Any:
        return self._out(self.gen.random(size=shape) < p, xp, device, None)

    def integers(self, shape: tuple, low: int, high: int, xp: Any, device: Any) -> Any:
        return self._out(self.gen.integers(low, high, size=shape, dtype=np.int64), xp,
                         device, None)

    def permutation(self, n: int, xp: Any, device: Any) -> Any:
        return self._out(self.gen.permutation(n).astype(np.int64), xp, device, None)

    def get_state(self) -> dict:
        return {"kind": "host", "state": self.gen.bit_generator.state}

    def set_state(self, state: dict) -> None:
        self.gen.bit_generator.state = state["state"]


class TorchEngine:
    """A ``torch.Generator`` on one device; its state is its byte tensor, base64-encoded."""

    def __init__(self, seed: int, device: Any) -> None:
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)

    def _float(self, dtype: Any) -> Any:
        return dtype if dtype is not None else self.torch.get_default_dtype()

    def uniform(self, shape: tuple, low: float, high: float, xp: Any, device: Any,
                dtype: Any) -> Any:
        out = self.torch.empty(shape, dtype=self._float(dtype), device=self.device)
        return out.uniform_(low, high, generator=self.gen)

    def normal(self, shape: tuple, mean: float, std: float, xp: Any, device: Any,
               dtype: Any) -> Any:
        out = self.torch.empty(shape, dtype=self._float(dtype), device=self.device)
        return out.normal_(mean, std, generator=self.gen)

    def bernoulli(self, shape: tuple, p: float, xp: Any, device: Any) -> Any:
        u = self.torch.rand(shape, generator=self.gen, device=self.device,
                            dtype=self.torch.float64)
        return u < p

    def integers(self, shape: tuple, low: int, high: int, xp: Any, device: Any) -> Any:
        return self.torch.randint(low, high, shape, generator=self.gen, device=self.device,
                                  dtype=self.torch.int64)

    def permutation(self, n: int, xp: Any, device: Any) -> Any:
        return self.torch.randperm(n, generator=self.gen, device=self.device)

    def get_state(self) -> dict:
        raw = bytes(self.gen.get_state().cpu().numpy().tobytes())
        return {"kind": "torch", "state": base64.b64encode(raw).decode("ascii")}

    def set_state(self, state: dict) -> None:
        raw = np.frombuffer(base64.b64decode(state["state"]), dtype=np.uint8).copy()
        self.gen.set_state(self.torch.from_numpy(raw))


class CupyEngine:
    """Counter-based draws on one GPU: draw ``k`` uses a generator seeded by ``(seed, k)``."""

    def __init__(self, seed: int, key: str) -> None:
        self.seed = seed
        self.key = key
        self.counter = 0

    def _gen(self) -> Any:
        import cupy

        s = _sub_seed(self.seed, self.key, self.counter + 1)
        self.counter += 1
        return cupy.random.default_rng(s)

    def uniform(self, shape: tuple, low: float, high: float, xp: Any, device: Any,
                dtype: Any) -> Any:
        import cupy

        u = self._gen().random(size=shape, dtype=cupy.float64)
        out = u * (high - low) + low
        return out.astype(dtype) if dtype is not None else out

    def normal(self, shape: tuple, mean: float, std: float, xp: Any, device: Any,
               dtype: Any) -> Any:
        import cupy

        z = self._gen().standard_normal(size=shape, dtype=cupy.float64)
        out = z * std + mean
        return out.astype(dtype) if dtype is not None else out

    def bernoulli(self, shape: tuple, p: float, xp: Any, device: Any) -> Any:
        import cupy

        return self._gen().random(size=shape, dtype=cupy.float64) < p

    def integers(self, shape: tuple, low: int, high: int, xp: Any, device: Any) -> Any:
        import cupy

        return self._gen().integers(low, high, size=shape, dtype=cupy.int64)

    def permutation(self, n: int, xp: Any, device: Any) -> Any:
        import cupy

        return self._gen().permutation(n).astype(cupy.int64)

    def get_state(self) -> dict:
        return {"kind": "cupy", "seed": self.seed, "counter": self.counter}

    def set_state(self, state: dict) -> None:
        self.seed = int(state["seed"])
        self.counter = int(state["counter"])


def make_engine(seed: int, key: str, device: Any = None) -> Any:
    """A fresh engine for ``key`` (from :func:`engine_key`), seeded from ``seed``."""
    if key == "host":
        return HostEngine(seed)
    if key.startswith("torch:"):
        return TorchEngine(_sub_seed(seed, key), device)
    if key.startswith("cupy:"):
        return CupyEngine(seed, key)
    raise ValueError(f"random: expected an engine key from engine_key(), got {key!r}")
