"""Complex numbers: real, imag, conj, casts, and the gradient convention
(dL/dRe + i dL/dIm, so that gradient descent works) through products and transcendental
functions."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import DTypeError
from portagrad.gradcheck import check_grads

o = pg.ops


def _numeric_complex_grad(f, z, eps=1e-6):
    """dL/dRe + i dL/dIm by central differences, elementwise."""
    g = np.zeros_like(z)
    for i in range(z.size):
        for unit in (1.0, 1j):
            d = np.zeros_like(z)
            d.flat[i] = unit * eps
            diff = (f(z + d) - f(z - d)) / (2 * eps)
            g.flat[i] += diff * (1.0 if unit == 1.0 else 1j)
    return g


_W = np.array([[1 + 1j, 2 - 1j, 0.5j], [-1.0, 0.5 + 0.5j, 2.0]])
_B = np.array([0.5 - 1j, 1j])
_X = np.array([[1 - 1j, 0.5, 2j], [1.0, -1j, 1 + 2j]])
_K = np.array([0.5 + 1j, -1.0, 2 - 0.5j]).reshape(1, 1, 1, 3)
_S = np.array([1 + 1j, -0.5j, 2.0, 1 - 2j, 0.5]).reshape(1, 1, 1, 5)


def _corr(x, k):
    """Valid cross-correlation of two complex vectors (what conv computes)."""
    return np.array([np.sum(x[i:i + len(k)] * k) for i in range(len(x) - len(k) + 1)])


CASES = {
    "abs_squared": (lambda z: o.sum(o.real(z * o.conj(z))),
                    lambda z: np.sum(np.abs(z) ** 2)),
    "exp": (lambda z: o.sum(o.real(o.exp(z) * (1 - 2j))),
            lambda z: np.sum(np.real(np.exp(z) * (1 - 2j)))),
    "log_sqrt": (lambda z: o.sum(o.imag(o.log(z) + o.sqrt(z))),
                 lambda z: np.sum(np.imag(np.log(z) + np.sqrt(z)))),
    "trig": (lambda z: o.sum(o.abs(o.sin(z) * o.tanh(z))),
             lambda z: np.sum(np.abs(np.sin(z) * np.tanh(z)))),
    "divide_pow": (lambda z: o.sum(o.real((z ** 3) / (z + 2.0))),
                   lambda z: np.sum(np.real(z ** 3 / (z + 2.0)))),
    "matmul": (lambda z: o.sum(o.abs(z @ np.array([[1 + 1j], [2 - 1j], [0.5j]])) ** 2),
               lambda z: np.sum(np.abs(z @ np.array([[1 + 1j], [2 - 1j], [0.5j]])) ** 2)),
    "mixed_real": (lambda z: o.sum(o.imag(z * np.array([1.0, -2.0, 0.5]))),
                   lambda z: np.sum(np.imag(z * np.array([1.0, -2.0, 0.5])))),
    "prod_mean": (lambda z: o.real(o.prod(z) + o.mean(z * z)),
                  lambda z: np.real(np.prod(z) + np.mean(z * z))),
    "linear_input": (lambda z: o.sum(o.abs(o.linear(o.reshape(z, (1, 3)), _W, _B)) ** 2),
                     lambda z: np.sum(np.abs(z[None] @ _W.T + _B) ** 2)),
    "linear_weight": (lambda z: o.sum(o.abs(o.linear(_X, o.reshape(z, (1, 3)))) ** 2),
                      lambda z: np.sum(np.abs(_X @ z[None].T) ** 2)),
    "conv_input": (lambda z: o.sum(o.abs(o.conv(o.reshape(z, (1, 1, 1, 3)), _K)) ** 2),
                   lambda z: np.sum(np.abs(_corr(z, _K.ravel())) ** 2)),
    "conv_weight": (lambda z: o.sum(o.abs(o.conv(_S, o.reshape(z, (1, 1, 1, 3)))) ** 2),
                    lambda z: np.sum(np.abs(_corr(_S.ravel(), z)) ** 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_is_dl_dre_plus_i_dl_dim(name, rng):
    f, ref = CASES[name]
    z = rng.uniform(0.5, 1.5, 3) + 1j * rng.uniform(0.5, 1.5, 3)
    Z = pg.Variable(z)
    f(Z).backward()
    np.testing.assert_allclose(Z.grad, _numeric_complex_grad(ref, z), atol=1e-6)


def test_real_imag_conj_values_and_gradients(backend):
    z = backend.asarray(np.array([1.0 + 2.0j, -3.0 + 0.5j]))
    Z = pg.Variable(z)
    np.testing.assert_array_equal(pg.xp.to_numpy(o.real(Z).array), [1.0, -3.0])
    np.testing.assert_array_equal(pg.xp.to_numpy(o.imag(Z).array), [2.0, 0.5])
    np.testing.assert_array_equal(pg.xp.to_numpy(o.conj(Z).array), [1.0 - 2.0j, -3.0 - 0.5j])
    (g,) = pg.grad(o.sum(o.real(Z) * 2.0 + o.imag(Z) * 3.0), Z)
    np.testing.assert_array_equal(pg.xp.to_numpy(g.array), [2.0 + 3.0j, 2.0 + 3.0j])
    (g,) = pg.grad(o.sum(o.imag(o.conj(Z))), Z)
    np.testing.assert_array_equal(pg.xp.to_numpy(g.array), [-1j, -1j])


def test_real_inputs_pass_through():
    x = pg.Variable(np.array([1.0, -2.0]))
    assert o.real(x) is x and o.conj(x) is x
    im = o.imag(x)
    np.testing.assert_array_equal(im.array, [0.0, 0.0])
    assert im.creator is None


def test_casts_between_real_and_complex(backend):
    x = pg.Variable(backend.asarray(np.array([1.0, 2.0], dtype=np.float32)))
    c = o.astype(x, o.complex64)
    assert c.dtype == o.complex64
    (g,) = pg.grad(o.sum(o.imag(c * (2 + 3j))), x)
    assert g.dtype == o.float32
    np.testing.assert_allclose(pg.xp.to_numpy(g.array), [3.0, 3.0])
    with pytest.raises(DTypeError, match="real"):
        o.astype(c, o.float32)


def test_real_and_complex_arrays_mix_in_binary_ops():
    x = pg.Variable(np.array([1.0, 2.0]))
    w = pg.Variable(np.array([1.0 + 1.0j, 2.0 - 1.0j]))
    loss = o.sum(o.real(x * w) + o.imag(w * x))
    gx, gw = pg.grad(loss, [x, w])
    assert gx.dtype == np.float64
    np.testing.assert_allclose(gx.array, [2.0, 1.0])  # Re(w) + Im(w)
    np.testing.assert_allclose(gw.array, x.array * (1 + 1j))


def test_second_order_through_complex_intermediates(rng):
    def f(a, b):
        z = o.astype(a, o.complex128) + o.astype(b, o.complex128) * 1j
        return o.abs(o.exp(z) * z - o.conj(z) ** 2)

    check_grads(f, (rng.uniform(0.2, 1, 3), rng.uniform(0.2, 1, 3)), order=3)


def test_torch_agrees(rng):
    torch = pytest.importorskip("torch")
    z = rng.uniform(0.5, 1.5, 4) + 1j * rng.uniform(0.5, 1.5, 4)
    t = torch.tensor(z, requires_grad=True)
    (torch.abs(torch.exp(t) * t.conj() + torch.log(t)) ** 2).sum().backward()
    Z = pg.Variable(z)
    o.sum(o.abs(o.exp(Z) * o.conj(Z) + o.log(Z)) ** 2).backward()
    np.testing.assert_allclose(Z.grad, t.grad.numpy(), atol=1e-10)


INF, NAN = float("inf"), float("nan")
# (input, expected) from the standard's special cases (2024.12); None: sign unspecified.
EXPM1 = [((0.0, 0.0), (0.0, 0.0)), ((-0.0, 0.0), (0.0, 0.0)), ((1.0, INF), (NAN, NAN)),
         ((1.0, NAN), (NAN, NAN)), ((INF, 0.0), (INF, 0.0)), ((INF, -0.0), (INF, -0.0)),
         ((-INF, 2.0), (-1.0, 0.0)), ((-INF, -2.0), (-1.0, -0.0)), ((-INF, 0.0), (-1.0, 0.0)),
         ((-INF, 2.5), (-1.0, 0.0)), ((-INF, -2.5), (-1.0, -0.0)),
         ((-INF, INF), (-1.0, None)), ((INF, INF), (None, NAN)), ((-INF, NAN), (-1.0, None)),
         ((INF, NAN), (None, NAN)), ((NAN, 0.0), (NAN, 0.0)), ((NAN, 1.0), (NAN, NAN)),
         ((NAN, NAN), (NAN, NAN))]
TANH = [((0.0, 0.0), (0.0, 0.0)), ((1.0, INF), (NAN, NAN)), ((1.0, NAN), (NAN, NAN)),
        ((INF, 2.0), (1.0, 0.0)), ((INF, -2.0), (1.0, -0.0)), ((-INF, 2.0), (-1.0, 0.0)),
        ((INF, INF), (1.0, None)), ((INF, NAN), (1.0, None)), ((NAN, 0.0), (NAN, 0.0)),
        ((NAN, 1.0), (NAN, NAN)), ((NAN, NAN), (NAN, NAN))]


def _same(got: float, want: float | None) -> bool:
    if want is None:
        return True
    if np.isnan(want):
        return bool(np.isnan(got))
    return got == want and np.signbit(got) == np.signbit(want)


@pytest.mark.parametrize("name,table", [("expm1", EXPM1), ("tanh", TANH)])
def test_special_values_of_the_standard_on_complex_input(name, table):
    z = np.array([complex(*a) for a, _ in table])
    with np.errstate(invalid="ignore"):
        out = getattr(o, name)(o.asarray(z)).array
        out0 = [getattr(o, name)(o.asarray(v)).array for v in z]  # 0-d arrays too
    for (a, (re, im)), got, got0 in zip(table, out, out0):
        for g in (got, got0):
            assert _same(g.real, re) and _same(g.imag, im), (name, a, g)
    finite = np.array([0.3 - 0.2j, -1.5 + 4.0j])  # elsewhere the library's values
    np.testing.assert_array_equal(getattr(o, name)(o.asarray(finite)).array,
                                  getattr(np, name)(finite))


@pytest.mark.parametrize("name", ["sum", "prod", "cumulative_sum", "cumulative_prod", "trace"])
def test_a_real_dtype_argument_on_complex_input_keeps_the_real_part(name):
    """As array-api-strict and NumPy: the reductions cast their input to ``dtype`` first;
    complex to real keeps the real part (the plain ``astype`` refuses it)."""
    z = np.array([[1.0 + 2.0j, 3.0 - 1.0j], [0.5 + 0.0j, -2.0 + 4.0j]])
    fn = {"trace": o.linalg.trace}.get(name, getattr(o, name, None))
    kwargs = {} if name in ("trace", "sum", "prod") else {"axis": 1}
    ref = {"trace": np.trace, "sum": np.sum, "prod": np.prod,
           "cumulative_sum": lambda a, axis: np.cumsum(a, axis=axis),
           "cumulative_prod": lambda a, axis: np.cumprod(a, axis=axis)}[name]
    v = pg.Variable(z)
    out = fn(v, dtype=o.float64, **kwargs)
    assert out.array.dtype == np.float64
    np.testing.assert_allclose(out.array, ref(z.real, **kwargs))
    (g,) = pg.grad(o.sum(out), [v])  # flows through the real part: dL/dRe + i dL/dIm
    assert np.all(g.array.imag == 0)
    with pytest.raises(DTypeError, match="astype"):
        o.astype(v, o.float64)


def test_asarray_of_a_complex_variable_to_a_real_dtype_is_as_of_an_array():
    z = np.array([1.5 + 2.0j, -3.0 + 0.5j])
    with np.errstate(all="ignore"), pytest.warns(np.exceptions.ComplexWarning):
        expected = o.asarray(z, dtype=o.float32).array  # NumPy's cast, with its warning
    np.testing.assert_array_equal(o.asarray(o.asarray(z), dtype=o.float32).array, expected)
