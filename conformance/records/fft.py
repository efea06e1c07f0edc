"""Records of the fft extension.

The suite differentiates real arguments, so complex inputs are built from two real arrays
(``a + i b``) and complex outputs are returned as their real and imaginary parts; this
checks the transforms' gradients under portagrad's complex convention end to end.
"""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.std import complex_of
from portagrad import DTypeError, ShapeError

F = ops.fft
_NORMS = ("backward", "ortho", "forward")
_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-9)}


def _parts(z):
    return ops.real(z), ops.imag(z)


def _np_parts(z):
    return np.real(z), np.imag(z)


def _shape(rng):
    nd = int(rng.integers(1, 3))
    return tuple(int(d) for d in rng.integers(1, 5, size=nd))


def _norm(rng):
    return _NORMS[int(rng.integers(0, 3))]


def _rec(name, fn, ref, sample, **kw):
    kw.setdefault("tol", _TOL)
    kw.setdefault("order", 3)
    register(OpRecord(f"fft.{name}", fn, ref, sample=sample, **kw))


def _c2c_1d_sample(rng):
    shape = _shape(rng)
    n = None if rng.random() < 0.5 else int(rng.integers(1, 6))
    return (rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape), n,
            int(rng.integers(-len(shape), len(shape))), _norm(rng))


_BAD_AXIS = [(lambda rng: (np.ones(3), np.ones(3), None, 1, "backward"), ShapeError)]

for _name, _np_fn in (("fft", np.fft.fft), ("ifft", np.fft.ifft)):
    _rec(_name,
         (lambda f: lambda a, b, n, ax, nm: _parts(f(complex_of(a, b), n=n, axis=ax, norm=nm)))(
             getattr(F, _name)),
         (lambda f: lambda a, b, n, ax, nm: _np_parts(f(a + 1j * b, n=n, axis=ax, norm=nm)))(
             _np_fn),
         _c2c_1d_sample, diff=(0, 1), errors=_BAD_AXIS)


def _c2c_nd_sample(rng):
    shape = (*_shape(rng), int(rng.integers(1, 4)))
    nd = len(shape)
    k = int(rng.integers(1, nd + 1))
    axes = tuple(int(a) for a in rng.permutation(nd)[:k])
    s = None if rng.random() < 0.5 else tuple(int(d) for d in rng.integers(1, 5, size=k))
    return rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape), s, axes, _norm(rng)


for _name, _np_fn in (("fftn", np.fft.fftn), ("ifftn", np.fft.ifftn)):
    _rec(_name,
         (lambda f: lambda a, b, s, ax, nm: _parts(f(complex_of(a, b), s=s, axes=ax, norm=nm)))(
             getattr(F, _name)),
         (lambda f: lambda a, b, s, ax, nm: _np_parts(f(a + 1j * b, s=s, axes=ax, norm=nm)))(
             _np_fn),
         _c2c_nd_sample, diff=(0, 1),
         errors=[(lambda rng: (np.ones(2), np.ones(2), (2, 2), (0,), "backward"), ShapeError)])


def _r2c_sample(rng):
    shape = _shape(rng)
    n = None if rng.random() < 0.5 else int(rng.integers(1, 7))
    return rng.uniform(-1, 1, shape), n, int(rng.integers(-len(shape), len(shape))), _norm(rng)


_rec("rfft", lambda x, n, ax, nm: _parts(F.rfft(x, n=n, axis=ax, norm=nm)),
     lambda x, n, ax, nm: _np_parts(np.fft.rfft(x, n=n, axis=ax, norm=nm)), _r2c_sample,
     diff=(0,), errors=[(lambda rng: (np.arange(3), None, -1, "backward"), DTypeError)])
_rec("ihfft", lambda x, n, ax, nm: _parts(F.ihfft(x, n=n, axis=ax, norm=nm)),
     lambda x, n, ax, nm: _np_parts(np.fft.ihfft(x, n=n, axis=ax, norm=nm)), _r2c_sample,
     diff=(0,), errors=[(lambda rng: (np.arange(3), None, -1, "backward"), DTypeError)])


def _rnd_sample(rng):
    shape = (*_shape(rng), int(rng.integers(1, 5)))
    nd = len(shape)
    k = int(rng.integers(1, nd + 1))
    axes = tuple(int(a) for a in rng.permutation(nd)[:k])
    s = None if rng.random() < 0.5 else tuple(int(d) for d in rng.integers(1, 6, size=k))
    return rng.uniform(-1, 1, shape), s, axes, _norm(rng)


_rec("rfftn", lambda x, s, ax, nm: _parts(F.rfftn(x, s=s, axes=ax, norm=nm)),
     lambda x, s, ax, nm: _np_parts(np.fft.rfftn(x, s=s, axes=ax, norm=nm)), _rnd_sample,
     diff=(0,), errors=[(lambda rng: (np.ones(2) + 0j, None, None, "backward"), DTypeError)])


def _c2r_sample(rng):
    shape = _shape(rng)
    shape = (*shape[:-1], shape[-1] + 1)
    n = None if rng.random() < 0.5 else int(rng.integers(1, 7))
    return (rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape), n, -1, _norm(rng))


for _name, _np_fn in (("irfft", np.fft.irfft), ("hfft", np.fft.hfft)):
    _rec(_name,
         (lambda f: lambda a, b, n, ax, nm: f(complex_of(a, b), n=n, axis=ax, norm=nm))(
             getattr(F, _name)),
         (lambda f: lambda a, b, n, ax, nm: f(a + 1j * b, n=n, axis=ax, norm=nm))(_np_fn),
         _c2r_sample, diff=(0, 1),
         errors=[(lambda rng: (np.ones(1), np.ones(1), None, -1, "backward"), ShapeError)])


def _c2r_nd_sample(rng):
    # Every axis of length 2 or more: without s, the output length is 2 * (m - 1).
    shape = tuple(int(d) for d in rng.integers(2, 4, size=int(rng.integers(1, 4))))
    nd = len(shape)
    k = int(rng.integers(1, nd + 1))
    axes = tuple(sorted(int(a) for a in rng.permutation(nd)[:k]))
    s = None if rng.random() < 0.5 else tuple(int(d) for d in rng.integers(1, 6, size=k))
    return rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape), s, axes, _norm(rng)


_rec("irfftn", lambda a, b, s, ax, nm: F.irfftn(complex_of(a, b), s=s, axes=ax, norm=nm),
     lambda a, b, s, ax, nm: np.fft.irfftn(a + 1j * b, s=s, axes=ax, norm=nm), _c2r_nd_sample,
     diff=(0, 1),
     errors=[(lambda rng: (np.ones(2), np.ones(2), (2, 2), (0,), "backward"), ShapeError)])


def _shift_sample(rng):
    shape = _shape(rng)
    axes = None if rng.random() < 0.5 else int(rng.integers(0, len(shape)))
    return rng.uniform(-1, 1, shape), axes


_rec("fftshift", lambda x, ax: F.fftshift(x, axes=ax),
     lambda x, ax: np.fft.fftshift(x, axes=ax), _shift_sample, diff=(0,))
_rec("ifftshift", lambda x, ax: F.ifftshift(x, axes=ax),
     lambda x, ax: np.fft.ifftshift(x, axes=ax), _shift_sample, diff=(0,))
