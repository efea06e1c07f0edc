import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import to_numpy


def test_attributes(backend):
    x = pg.Variable(backend.asarray(np.arange(6.0).reshape(2, 3)), name="x")
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.device == backend.device
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.requires_grad and x.grad is None and x.is_leaf
    assert "x" in repr(x)


def test_integer_variables_never_require_grad(backend):
    x = pg.Variable(backend.asarray(np.arange(3)))
    assert not x.requires_grad
    with pytest.raises(pg.DTypeError):
        x.requires_grad_(True)


def test_operators_and_reflected_operators(backend):
    a_h = np.array([1.5, -2.0, 3.0])
    a = pg.Variable(backend.asarray(a_h))
    cases = {
        "add": (a + 2, a_h + 2), "radd": (2 + a, 2 + a_h), "sub": (a - 1, a_h - 1),
        "rsub": (1 - a, 1 - a_h), "mul": (a * 3, a_h * 3), "rmul": (3 * a, 3 * a_h),
        "div": (a / 2, a_h / 2), "rdiv": (2 / a, 2 / a_h), "pow": (a**2, a_h**2),
        "rpow": (2**a, 2**a_h), "neg": (-a, -a_h), "pos": (+a, a_h), "abs": (abs(a), abs(a_h)),
        "matmul": (a @ a, a_h @ a_h), "getitem": (a[1:], a_h[1:]),
        "mod": (a % 2, a_h % 2), "floordiv": (a // 2, a_h // 2),
    }
    for name, (got, want) in cases.items():
        np.testing.assert_allclose(to_numpy(got.array), want, err_msg=name)
        assert got.dtype == a.dtype
    assert to_numpy((a < 2).array).tolist() == [True, True, False]
    assert to_numpy((a == 3.0).array).tolist() == [False, False, True]


def test_array_namespace_is_portagrad_ops(backend):
    import array_api_compat

    x = pg.Variable(backend.asarray([1.0]))
    assert array_api_compat.array_namespace(x) is pg.ops
    assert x.__array_namespace__() is pg.ops


def test_python_scalars_are_weak(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0], dtype=np.float32))
    assert (x * 2.5).dtype == x.dtype
    assert (x + np.float64(2.0)).dtype == x.dtype  # NumPy scalars are made weak too


def test_integer_with_float_takes_the_float_dtype(backend):
    i = pg.Variable(backend.asarray([1, 2], dtype=np.int32))
    f = pg.Variable(backend.asarray([0.5, 0.5], dtype=np.float32))
    y = i * f
    assert y.dtype == f.dtype
    np.testing.assert_allclose(to_numpy(y.array), [0.5, 1.0])
    assert (i * 0.5).dtype == backend.xp.float64 or (i * 0.5).dtype == backend.xp.float32


def test_float32_with_float64_promotes_and_gradient_keeps_dtypes(backend):
    a = pg.Variable(backend.asarray([1.0, 2.0], dtype=np.float32))
    b = pg.Variable(backend.asarray([3.0, 4.0], dtype=np.float64))
    y = (a * b).sum()
    assert y.dtype == backend.xp.float64
    y.backward()
    assert a.grad.dtype == a.dtype and b.grad.dtype == b.dtype


def test_detach_cleargrad_and_unchain_backward(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0]))
    h = x * 2
    y = (h * h).sum()
    d = y.detach()
    assert d.creator is None and not d.requires_grad
    y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [8.0, 16.0])
    x.cleargrad()
    assert x.grad is None
    z = h + 1
    z.unchain_backward()
    assert z.creator is None and h.creator is None


def test_gradients_accumulate_across_backward_calls(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0]))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [6.0, 6.0])


def test_zero_dim_conversions(backend):
    x = pg.Variable(backend.asarray(2.0))
    assert float(x) == 2.0 and int(x) == 2 and bool(x)
    assert len(pg.Variable(backend.asarray([1.0, 2.0]))) == 2


def test_setitem_is_rejected_with_a_hint(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0]))
    with pytest.raises(pg.GradientError, match="where"):
        x[0] = 3.0


def test_non_array_is_rejected():
    with pytest.raises(TypeError, match="expected an array"):
        pg.Variable([1.0, 2.0])


def test_numpy_conversion_refuses_to_drop_a_graph():
    x = pg.Variable(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="lose its gradient"):
        np.asarray(x * 2)
    np.testing.assert_allclose(np.asarray(x.detach()), [1.0, 2.0])


def test_unused_outputs_of_a_multi_output_op_get_zeros_on_the_right_device():
    import array_api_strict as xps

    dev = xps.Device("device1")
    x = pg.Variable(xps.asarray([[2.0, 1.0], [1.0, 3.0]], device=dev))
    _, vectors = pg.ops.linalg.eigh(x)  # eigenvalues unused: their gradient is zeros
    (g,) = pg.grad(pg.ops.sum(vectors[:, 0] ** 2 * 0.5 + vectors[0, :]), x)
    assert g.device == dev


def test_zero_dim_results_stay_arrays():
    # NumPy ufuncs return scalars for 0-d input; scalars would promote strongly later.
    x = pg.Variable(np.asarray(1.0, dtype=np.float32))
    for y in (pg.ops.exp(x), x * 2, x * x, pg.ops.tanh(x) + x):
        assert isinstance(y.array, np.ndarray) and y.dtype == np.float32


def test_subclasses_of_variable_take_every_operator_path():
    class Weight(pg.Variable):
        __slots__ = ()

    w = Weight(np.array([1.0, 2.0]))
    v = pg.Variable(np.array([3.0, 4.0]))
    for y in (w * 2.0, 2.0 * w, w * w, w + v, v - w, w / 2, 1 / w, w**2):
        assert type(y) is pg.Variable and y.requires_grad
    (w * 3.0 + w * v).sum().backward()
    np.testing.assert_allclose(w.grad, [6.0, 7.0])


def test_item_and_tolist_give_python_numbers(backend):
    x = pg.Variable(backend.asarray(np.array([[1.5, -2.0]], dtype=np.float32)))
    assert x.tolist() == [[1.5, -2.0]] and type(x.tolist()[0][0]) is float
    assert x[0, 1].item() == -2.0 and type(x[0, 1].item()) is float
    n = pg.Variable(backend.asarray(np.array([7])))
    assert n.item() == 7 and type(n.item()) is int
    b = pg.Variable(backend.asarray(np.array(True)))
    assert b.item() is True and b.tolist() is True
    with pytest.raises(pg.ShapeError, match=r"item\(\): expected a Variable of one element"):
        x.item()


def test_numpy_copies_to_the_host(backend):
    x = pg.Variable(backend.asarray(np.array([1.0, 2.0])))
    h = x.numpy()
    assert type(h) is np.ndarray
    np.testing.assert_array_equal(h, [1.0, 2.0])


def test_backward_takes_the_seed_positionally_or_by_either_keyword(backend):
    for call in (lambda y, g: y.backward(g), lambda y, g: y.backward(grad=g),
                 lambda y, g: y.backward(gradient=g)):
        x = pg.Variable(backend.asarray(np.array([1.0, 2.0])))
        call(x * 3.0, backend.asarray(np.array([1.0, -1.0])))
        np.testing.assert_allclose(to_numpy(x.grad), [3.0, -3.0])
    x = pg.Variable(backend.asarray(np.array([1.0])))
    with pytest.raises(TypeError, match="one seed gradient"):
        (x * 2.0).backward(backend.asarray(np.array([1.0])), grad=backend.asarray(
            np.array([1.0])))


def test_negative_slice_steps_on_every_library(backend):
    a = np.arange(24.0).reshape(2, 3, 4)
    keys = [(slice(None, None, -1),), (slice(None), slice(None, None, -2)),
            (Ellipsis, slice(None, None, -3)), (None, 1, slice(2, None, -1)),
            (slice(1, None, -1), Ellipsis, 2), (slice(0, 1, -1),)]
    for key in keys:
        x = pg.Variable(backend.asarray(a))
        y = x[key]
        np.testing.assert_array_equal(to_numpy(y.array), a[key])
        g = np.arange(1.0, 1.0 + a[key].size).reshape(a[key].shape)
        (gx,) = pg.grad(y, x, grad_outputs=backend.asarray(g))
        want = np.zeros_like(a)
        want[key] += g
        np.testing.assert_array_equal(to_numpy(gx.array), want)
