"""The fft extension: values against NumPy, gradients against closed forms (Parseval)
and finite differences, and the complex-gradient convention."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import DTypeError, ShapeError
from portagrad.gradcheck import check_grads
from portagrad.xp import to_numpy

F = pg.ops.fft
o = pg.ops


def _np(v):
    return to_numpy(v.array)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_values_match_numpy(backend, rng, norm):
    x = rng.standard_normal((3, 4))
    z = x + 1j * rng.standard_normal((3, 4))
    X, Z = backend.asarray(x), backend.asarray(z)
    cases = [
        (F.fft(Z, n=5, norm=norm), np.fft.fft(z, n=5, norm=norm)),
        (F.ifft(Z, axis=0, norm=norm), np.fft.ifft(z, axis=0, norm=norm)),
        (F.fftn(Z, s=(2, 6), norm=norm), np.fft.fftn(z, s=(2, 6), axes=(0, 1), norm=norm)),
        (F.ifftn(Z, axes=(0,), norm=norm), np.fft.ifftn(z, axes=(0,), norm=norm)),
        (F.rfft(X, norm=norm), np.fft.rfft(x, norm=norm)),
        (F.irfft(Z, n=7, norm=norm), np.fft.irfft(z, n=7, norm=norm)),
        (F.rfftn(X, s=(3, 5), norm=norm), np.fft.rfftn(x, s=(3, 5), axes=(0, 1), norm=norm)),
        (F.irfftn(Z, norm=norm), np.fft.irfftn(z, norm=norm)),
        (F.hfft(Z, norm=norm), np.fft.hfft(z, norm=norm)),
        (F.ihfft(X, norm=norm), np.fft.ihfft(x, norm=norm)),
        (F.fftshift(X), np.fft.fftshift(x)),
        (F.ifftshift(X, axes=1), np.fft.ifftshift(x, axes=1)),
    ]
    for got, want in cases:
        np.testing.assert_allclose(_np(got), want, atol=1e-12)


def test_frequencies(backend):
    np.testing.assert_allclose(_np(F.fftfreq(5, d=0.5, device=backend.device)),
                               np.fft.fftfreq(5, d=0.5))
    np.testing.assert_allclose(_np(F.rfftfreq(6, device=backend.device)), np.fft.rfftfreq(6))


def test_parseval_gradient(backend, rng):
    # sum |fft(x)|^2 = n sum x^2, so its gradient is 2 n x.
    x = rng.standard_normal(6)
    X = pg.Variable(backend.asarray(x))
    o.sum(o.abs(F.fft(X)) ** 2).backward()
    np.testing.assert_allclose(to_numpy(X.grad), 2 * 6 * x, atol=1e-10)
    # rfft keeps half the spectrum; with the conjugate bins counted twice it is the same.
    X = pg.Variable(backend.asarray(x))
    p = o.abs(F.rfft(X)) ** 2
    w = backend.asarray(np.array([1.0, 2.0, 2.0, 1.0]))
    o.sum(p * w).backward()
    np.testing.assert_allclose(to_numpy(X.grad), 2 * 6 * x, atol=1e-10)


def test_complex_input_gradient_follows_the_convention(rng):
    # L = sum |fft(z)|^2 = n sum |z|^2: the gradient dL/dRe + i dL/dIm is 2 n z.
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    Z = pg.Variable(z)
    o.sum(o.abs(F.fft(Z, norm="ortho")) ** 2 * 4).backward()
    np.testing.assert_allclose(Z.grad, 2 * 4 * z, atol=1e-10)


def test_gradient_descent_on_a_complex_variable_lowers_the_loss(rng):
    target = rng.standard_normal(8)
    z = pg.Variable(rng.standard_normal(5) + 1j * rng.standard_normal(5))

    def loss():
        return o.sum((F.irfft(z, n=8) - target) ** 2)

    before = float(loss().array)
    for _ in range(20):
        z.cleargrad()
        loss().backward()
        z = pg.Variable(z.array - 0.5 * z.grad)
    assert float(loss().array) < 0.1 * before


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "rfftn", "irfftn", "hfft",
                                  "ihfft"])
def test_third_order(backend, rng, name):
    x = rng.standard_normal((2, 3))

    def c(a):
        return o.astype(a, o.complex128) + o.astype(a * a, o.complex128) * 1j

    fns = {
        "fft": lambda a: o.real(F.fft(c(a), n=4) * (1 + 2j)),
        "rfft": lambda a: o.imag(F.rfft(a, n=5, norm="ortho") ** 2),
        "irfft": lambda a: F.irfft(c(a), norm="forward") ** 2,
        "fftn": lambda a: o.abs(F.fftn(c(a), s=(3, 3))),
        "rfftn": lambda a: o.real(F.rfftn(a) * F.rfftn(a)),
        "irfftn": lambda a: F.irfftn(c(a), s=(2, 5)) ** 2,
        "hfft": lambda a: F.hfft(c(a), n=3) ** 3,
        "ihfft": lambda a: o.imag(F.ihfft(a) ** 2),
    }
    check_grads(fns[name], (backend.asarray(x),), order=3, eps=1e-4)


def test_torch_gradients_agree(rng):
    torch = pytest.importorskip("torch")
    z = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    w = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    t = torch.tensor(z, requires_grad=True)
    tw = torch.tensor(w)
    (torch.fft.ifft(t, norm="ortho").abs() ** 3).sum().backward()
    torch.fft.irfft(torch.fft.fft(t)[:3] * tw, n=4).pow(2).sum().backward()
    Z = pg.Variable(z)
    (o.sum(o.abs(F.ifft(Z, norm="ortho")) ** 3)
     + o.sum(F.irfft(F.fft(Z)[:3] * w, n=4) ** 2)).backward()
    np.testing.assert_allclose(Z.grad, t.grad.numpy(), atol=1e-10)


def test_bad_inputs():
    with pytest.raises(DTypeError):
        F.fft(np.arange(4))
    with pytest.raises(DTypeError):
        F.rfft(np.ones(4) + 1j)
    with pytest.raises(ShapeError):
        F.fftn(np.ones(4), s=(2, 2), axes=(0,))
    with pytest.raises(ShapeError):
        F.fft(np.ones(4), axis=1)
    with pytest.raises(ValueError):
        F.fft(np.ones(4), norm="unitary")
    with pytest.raises(ShapeError):
        F.irfft(np.ones(1))
