import array_api_strict
import numpy as np
import pytest

import portagrad as pg


def test_shape_mismatch_names_op_and_shapes():
    with pytest.raises(pg.ShapeError, match=r"add: expected broadcastable shapes, got \(2, 3\)"):
        pg.ops.add(np.ones((2, 3)), np.ones(4))
    with pytest.raises(pg.ShapeError, match=r"matmul\(x1, x2\)"):
        pg.ops.matmul(np.ones((2, 3)), np.ones((2, 3)))


def test_float_only_op_on_integers():
    with pytest.raises(pg.DTypeError, match=r"exp\(x\): expected a floating-point array"):
        pg.ops.exp(np.arange(3))
    assert isinstance(pg.DTypeError("x"), TypeError)


def test_numpy_mixed_with_array_api_strict():
    with pytest.raises(pg.NamespaceMismatchError, match="numpy and array_api_strict"):
        pg.ops.multiply(np.ones(2), array_api_strict.ones(2))
    with pytest.raises(pg.NamespaceMismatchError):
        pg.Variable(np.ones(2)) + pg.Variable(array_api_strict.ones(2))


def test_mixed_devices_are_an_error_not_a_copy():
    a = array_api_strict.ones(2)
    b = array_api_strict.ones(2, device=array_api_strict.Device("device1"))
    with pytest.raises(pg.DeviceMismatchError, match="to_device"):
        pg.ops.add(a, b)


def test_index_out_of_range():
    with pytest.raises(IndexError, match="out of bounds"):
        pg.Variable(np.ones(3))[5]
    with pytest.raises(IndexError, match="expected indices in"):
        pg.ops.take(np.ones(3), np.array([0, 3]))


def test_reshape_to_wrong_size():
    with pytest.raises(pg.ShapeError, match=r"reshape\(shape\): expected a shape with 6"):
        pg.ops.reshape(np.ones((2, 3)), (4,))
