"""JAX as its users get it by default (``jax_enable_x64`` unset): float32 and int32 only.

The unit tests' ``backend`` fixture turns x64 on for each JAX test (they compare with float64
references); these tests turn it off, as a user's process has it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import portagrad as pg

jax = pytest.importorskip("jax")


@pytest.fixture
def jnp():
    with jax.enable_x64(False):
        import jax.numpy as jnp

        yield jnp


def _arrays(tree, where="state"):
    """(path, array) for every JAX array inside ``tree`` (dicts, lists, tuples)."""
    if isinstance(tree, jax.Array):
        yield where, tree
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _arrays(v, f"{where}[{k!r}]")
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from _arrays(v, f"{where}[{i}]")


def _assert_32_bit(named):
    wide = {name: str(a.dtype) for name, a in named if a.dtype.itemsize > 4}
    assert not wide, f"expected 32-bit arrays only on JAX without x64, got {wide}"


def test_a_model_trains_in_32_bits_without_x64(jnp):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((16, 4)).astype(np.float32))
    t = jnp.asarray(rng.integers(0, 3, 16).astype(np.int32))
    model = pg.nn.Sequential(pg.nn.Linear(4, 8), pg.nn.BatchNorm1d(8), pg.nn.ReLU(),
                             pg.nn.Linear(8, 3)).to(xp=jnp)
    opt = pg.optim.Adam(model.parameters(), lr=0.05)
    with warnings.catch_warnings():
        # JAX truncates a 64-bit request to 32 bits with a warning: none may be made.
        warnings.simplefilter("error")
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = pg.nn.functional.cross_entropy(model(x), t)
            loss.backward()
            opt.step()
            losses.append(float(loss.array))
        model.eval()
        acc = pg.ops.accuracy(model(x), t)
        int_acc = pg.ops.accuracy(jnp.asarray(rng.integers(0, 3, (16, 3)), dtype=jnp.int32), t)
    assert losses[-1] < losses[0]
    named = [(f"parameter {n}", p.array) for n, p in model.named_parameters()]
    named += [(f"gradient of {n}", getattr(p.grad, "array", p.grad))
              for n, p in model.named_parameters()]
    named += [(f"buffer {n}", b) for n, b in model.named_buffers()]
    named += list(_arrays(opt.state_dict()))
    named += [("loss", loss.array), ("accuracy", acc.array),
              ("accuracy of integer scores", int_acc.array)]
    assert all(isinstance(a, jax.Array) for _, a in named[:-3])
    _assert_32_bit(named)
    assert dict(model.named_buffers())["1.num_batches_tracked"].dtype == jnp.int32
    assert int(dict(model.named_buffers())["1.num_batches_tracked"]) == 3


def test_gradcheck_float64_without_x64_is_a_clear_error(jnp):
    x = jnp.asarray([0.1, -0.4], dtype=jnp.float32)
    with pytest.raises(pg.DTypeError, match=r"check_grads\(dtype\).*'float64'.*jax_enable_x64"):
        pg.gradcheck.check_grads(pg.ops.tanh, (x,), order=1)
    pg.gradcheck.check_grads(pg.ops.tanh, (x,), order=2, dtype=None, eps=1e-2, atol=1e-3,
                             rtol=1e-2)


def test_weight_averaging_counts_in_32_bits_without_x64(jnp):
    from portagrad.optim.swa_utils import AveragedModel

    model = pg.nn.Linear(3, 2).to(xp=jnp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        swa = AveragedModel(model)
        swa.update_parameters(model)
        swa.update_parameters(model)
    assert int(swa.n_averaged) == 2
    _assert_32_bit(_arrays(dict(swa.state_dict())))
