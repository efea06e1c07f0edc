"""Chainer's names for the mathematics of ``pg.ops``: each is the standard's function
itself, or a declared adapter of one, so the maths exists once."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.ops._adapters import canonical_of, is_adapter
from portagrad.tape import PRIMITIVES

_SAME = {"absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
         "arctan2": "atan2", "arctanh": "atanh", "fix": "trunc"}
_ADAPTS = {"cumsum": ops.cumulative_sum, "cumprod": ops.cumulative_prod, "bias": ops.add,
           "scale": ops.multiply, "batch_matmul": ops.matmul, "det": ops.linalg.det,
           "batch_det": ops.linalg.det, "inv": ops.linalg.inv, "batch_inv": ops.linalg.inv,
           "cholesky": ops.linalg.cholesky, "ifft": ops.fft.ifft}


@pytest.mark.parametrize(("alias", "name"), sorted(_SAME.items()))
def test_numpy_names_are_the_standard_functions(alias, name):
    assert getattr(ops, alias) is getattr(ops, name)
    assert alias in ops.__all__ and name in ops.__all__


@pytest.mark.parametrize(("name", "canonical"), sorted(_ADAPTS.items(), key=lambda kv: kv[0]))
def test_chainer_conventions_are_declared_adapters(name, canonical):
    fn = getattr(ops, name)
    assert is_adapter(fn) and canonical_of(fn) is canonical


def test_one_error_function():
    x = pg.nn.Parameter(np.array([0.3, -1.2]))
    assert ops.erf(x).creator.prim is PRIMITIVES["erf"]
    # gelu's exact form, one primitive of its own, evaluates the same error-function kernel
    from portagrad.ops.nn import activation
    from portagrad.xp._special import erf as erf_kernel

    assert activation._erf_kernel is erf_kernel
    want = x.array * (ops.erf(x.array * activation._SQRT_HALF).array + 1.0) * 0.5
    np.testing.assert_array_equal(ops.gelu(x).array, want)


def test_adapters_keep_their_own_error_messages():
    with pytest.raises(pg.ShapeError, match=r"batch_det\(a\): expected a stack of square"):
        ops.batch_det(np.ones((2, 3)))
    with pytest.raises(pg.ShapeError, match=r"bias\(y\)"):
        ops.bias(np.ones((2, 3)), np.ones(4))
    with pytest.raises(TypeError, match=r"ifft\(x\): expected a pair"):
        ops.ifft(np.ones(3))
