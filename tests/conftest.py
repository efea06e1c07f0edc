"""Shared fixtures: the (namespace, device) pairs every backend-agnostic test runs on."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          print_blob=True)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

HAS_TORCH = importlib.util.find_spec("torch") is not None


class Backend:
    """A namespace and a device to put host arrays on."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "numpy":
            import array_api_compat.numpy as xp

            self.xp, self.device = xp, "cpu"
        elif name == "array_api_strict":
            import array_api_strict as xp

            self.xp, self.device = xp, xp.Device("device1")
        elif name == "torch":
            import array_api_compat.torch as xp
            import torch

            self.xp, self.device = xp, torch.device("cpu")
        else:
            raise ValueError(name)

    def asarray(self, host, dtype=None):
        from portagrad.xp import from_numpy

        a = np.asarray(host)
        if dtype is not None:
            a = a.astype(dtype)
        return from_numpy(a, xp=self.xp, device=self.device)

    def __repr__(self) -> str:
        return self.name


_NAMES = ["numpy", "array_api_strict"] + (["torch"] if HAS_TORCH else [])


@pytest.fixture(params=_NAMES)
def backend(request) -> Backend:
    return Backend(request.param)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
