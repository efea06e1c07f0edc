"""The conformance strategies draw what records rely on: every rank, size 0, broadcasting,
valid axes and indices, separated values, well-behaved matrices."""

from __future__ import annotations

import array_api_compat.numpy as npx
import array_api_strict
import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from conformance import Strategies

S_STRICT = Strategies(array_api_strict)
S_NUMPY = Strategies(npx)
_FIND = settings(max_examples=2000, database=None, deadline=None)


@pytest.mark.parametrize("S", [S_NUMPY, S_STRICT], ids=["numpy", "array_api_strict"])
def test_shapes_reach_0d_and_size_0(S):
    arrays = S.floats(S.shapes(0, 3, 0, 3), -1.0, 1.0)
    assert find(arrays, lambda a: a.ndim == 0, settings=_FIND).shape == ()
    assert find(arrays, lambda a: a.size == 0 and a.ndim >= 2, settings=_FIND).size == 0
    assert find(arrays, lambda a: a.ndim == 3 and a.size > 1, settings=_FIND).ndim == 3


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_floats_stay_in_their_domain(data):
    lo, hi = 0.3, 1.7
    a = data.draw(S_STRICT.floats(S_STRICT.shapes(), lo, hi))
    assert isinstance(a, np.ndarray) and a.dtype == np.float64
    assert np.all((a >= lo) & (a <= hi))
    b = data.draw(S_NUMPY.floats((4,), lo, hi, away=True))
    assert np.all((np.abs(b) >= lo) & (np.abs(b) <= hi))
    c = data.draw(S_NUMPY.floats(S_NUMPY.shapes(1, 3), -2, 2, distinct=True))
    flat = np.sort(c.ravel())
    assert np.all(np.diff(flat) >= 0.1 - 1e-12)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_broadcastable_shapes_and_axes(data):
    s1, s2, s3 = data.draw(S_NUMPY.broadcastable_shapes(3, min_side=0))
    np.broadcast_shapes(s1, s2, s3)  # raises if they do not broadcast
    shape = data.draw(S_STRICT.shapes(0, 3))
    axis = data.draw(S_STRICT.axes(len(shape)))
    np.sum(np.zeros(shape), axis=axis)  # raises on an invalid axis
    key = data.draw(S_STRICT.indices(shape))
    np.zeros(shape)[key]  # raises on an invalid index


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_matrices_have_the_promised_structure(data):
    spd = data.draw(S_NUMPY.matrices("spd"))
    assert np.allclose(spd, np.swapaxes(spd, -1, -2))
    assert np.all(np.linalg.eigvalsh(spd) >= 0.5 - 1e-9)
    well = data.draw(S_NUMPY.matrices("well_conditioned"))
    assert np.all(np.linalg.cond(well) < 10)
    sym = data.draw(S_STRICT.matrices("symmetric", batch=()))
    eig = np.linalg.eigvalsh(sym)
    assert np.all(np.diff(eig) > 0.5)
    rect = data.draw(S_NUMPY.matrices("general", batch=(2,), m=4))
    assert rect.shape[0] == 2 and rect.shape[-1] == 4


def test_unknown_matrix_kind_is_an_error():
    with pytest.raises(ValueError, match="expected general, spd"):
        find(S_NUMPY.matrices("triangular"), lambda m: True, settings=_FIND)
