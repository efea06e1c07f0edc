"""The primitives behind the elementwise functions: which functions share one, which are
products, and that those give the values and derivatives of the functions they replace."""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
from portagrad import ops
from portagrad.gradcheck import check_grads
from portagrad.ops.std.elementwise import arithmetic, exponential, trigonometric
from portagrad.tape import PRIMITIVES


def _creator(y):
    return y.creator.prim.name


def test_logarithms_share_one_primitive():
    x = pg.nn.Parameter(np.array([2.0, 8.0]))
    assert {_creator(f(x)) for f in (ops.log, ops.log2, ops.log10)} == {"log"}
    assert "log2" not in PRIMITIVES and "log10" not in PRIMITIVES


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log2_is_exact_at_powers_of_two(dtype):
    info = np.finfo(dtype)
    e = np.arange(info.minexp - info.nmant, info.maxexp)
    x = np.ldexp(np.ones(e.size, dtype), e.astype(np.int32))
    np.testing.assert_array_equal(ops.log2(x).array, e.astype(dtype))


def test_log10_is_exact_at_powers_of_ten():
    k = np.arange(-307, 309)
    x = np.array([float(f"1e{i}") for i in k])
    np.testing.assert_array_equal(ops.log10(x).array, k.astype(np.float64))


@pytest.mark.parametrize("f", [ops.log2, ops.log10])
def test_log_to_a_base_differentiates_to_third_order(f):
    check_grads(f, [np.array([0.7, 1.5, 3.0])], order=3)


def test_square_is_a_product():
    x = pg.nn.Parameter(np.array([0.5, -2.0]))
    assert _creator(ops.square(x)) == "multiply"
    assert "square" not in PRIMITIVES


@pytest.mark.parametrize("f", [ops.square, ops.reciprocal, lambda x: x * x])
def test_square_and_reciprocal_differentiate_to_third_order(f):
    check_grads(f, [np.array([0.7, -1.5, 3.0])], order=3)


def test_a_product_of_one_operand_gives_twice_the_product_once():
    # x * x: 2 x gy, bitwise what the two products and their sum gave.
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(5).astype(np.float32)
    gy = rng.standard_normal(5).astype(np.float32)
    for create_graph in (False, True):
        x = pg.nn.Parameter(x0.copy())
        (g,) = pg.grad(x * x, [x], grad_outputs=[gy], create_graph=create_graph)
        np.testing.assert_array_equal(g.array, gy * x0 + gy * x0)
    x = pg.nn.Parameter(x0.copy())
    (g,) = pg.grad(ops.sum(ops.square(x)), [x], create_graph=True)
    (h,) = pg.grad(ops.sum(g), [x])
    np.testing.assert_array_equal(h.array, np.full(5, 2.0, np.float32))


def test_a_product_of_one_operand_in_forward_mode_and_with_hooks():
    fwd = pg.autograd.forward_ad
    with fwd.dual_level():
        x = fwd.make_dual(np.array([1.5, -2.0]), np.array([1.0, 3.0]))
        t = fwd.unpack_dual(x * x).tangent
    np.testing.assert_array_equal(t.array, [3.0, -12.0])
    w = pg.nn.Parameter(np.array([1.5, -2.0]))
    seen = []
    w.register_post_accumulate_grad_hook(lambda v: seen.append(v.grad.copy()))
    ops.sum(w * w).backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [3.0, -4.0])


def test_complex_square_and_reciprocal_follow_the_convention():
    z = np.array([0.5 - 1.5j, 2.0 + 0.25j])
    for f, df in ((ops.square, lambda z: 2 * z), (ops.reciprocal, lambda z: -1 / z**2)):
        x = pg.nn.Parameter(z.copy())
        gy = np.array([1.0 + 2.0j, -0.5j])
        (g,) = pg.grad(f(x), [x], grad_outputs=[gy])
        np.testing.assert_allclose(g.array, gy * np.conj(df(z)), rtol=1e-14)


def test_integer_square_and_negative_keep_the_dtype():
    u = np.array([1, 250], dtype=np.uint8)
    np.testing.assert_array_equal(ops.negative(u).array, np.negative(u))
    np.testing.assert_array_equal(ops.square(u).array, u * u)


def test_kept_primitives_say_why():
    # A primitive a composite could replace keeps one only for a reason it states.
    for prim in (arithmetic._subtract, arithmetic._negative, arithmetic._reciprocal,
                 exponential._logaddexp, trigonometric._sinh, trigonometric._cosh):
        assert prim.__doc__ and "primitive" in prim.__doc__.lower()
    assert math.isfinite(float(ops.sinh(np.array([710.0])).array[0]))


def test_dtype_table_names_every_standard_dtype():
    from portagrad.ops.std import dtypes

    assert tuple(dtypes.BY_NAME) == dtypes._STANDARD
    assert all(dtypes.BY_NAME[n] is getattr(pg.ops, n) for n in dtypes._STANDARD)


def test_operators_on_parameters_take_the_short_path_only_when_it_applies():
    a = pg.nn.Parameter(np.array([1.0, 2.0], dtype=np.float32))
    b = pg.nn.Parameter(np.array([3.0, 4.0], dtype=np.float32))
    assert _creator(a * b) == "multiply" and (a - b).dtype == np.float32
    # other dtypes and shapes still promote and broadcast through the checked path
    c = pg.nn.Parameter(np.array([[1.0], [2.0]]))
    y = a / c
    assert y.dtype == np.float64 and y.shape == (2, 2)
    with pytest.raises(pg.ShapeError):
        a + pg.nn.Parameter(np.ones(3, dtype=np.float32))
