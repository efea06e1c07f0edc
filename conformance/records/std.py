"""Records of the rest of the standard: complex parts, triangles, grids, copysign,
remainder, cumulative_prod, diff; and the standard's names that carry no gradient."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import NON_DIFFERENTIABLE, OpRecord, register
from portagrad import DTypeError, ShapeError

NON_DIFFERENTIABLE.update({
    "from_dlpack", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "bitwise_invert", "floor_divide", "nextafter", "signbit",
    "can_cast", "finfo", "iinfo", "isdtype", "result_type", "count_nonzero", "nonzero",
    "searchsorted", "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "all", "any", "linalg.matrix_rank", "fft.fftfreq", "fft.rfftfreq",
})


def _u(rng, lo, hi, shape):
    return np.asarray(rng.uniform(lo, hi, size=shape))


def _shape(rng, min_dims=1, max_dims=3):
    nd = int(rng.integers(min_dims, max_dims + 1))
    return tuple(int(d) for d in rng.integers(1, 4, size=nd))


def complex_of(a, b):
    """``a + i b`` from two real Variables, through differentiable casts."""
    c = ops.complex64 if a.dtype == ops.float32 else ops.complex128
    return ops.astype(a, c) + ops.astype(b, c) * 1j


def _pair_sample(rng):
    shape = _shape(rng)
    return _u(rng, -2, 2, shape), _u(rng, -2, 2, shape)


# w = 0.5 - 1.5i: multiplying by it checks that products follow the complex convention.
_W = 0.5 - 1.5j


def _complex_record(name, fn, ref):
    register(OpRecord(name, fn, ref, sample=_pair_sample, diff=(0, 1),
                      errors=[(lambda rng: (np.ones((2, 3)), np.ones(4)), ShapeError)]))


_complex_record("real", lambda a, b: ops.real(complex_of(a, b) * _W),
                lambda a, b: np.real((a + 1j * b) * _W))
_complex_record("imag", lambda a, b: ops.imag(complex_of(a, b) * _W),
                lambda a, b: np.imag((a + 1j * b) * _W))
_complex_record("conj", lambda a, b: ops.imag(ops.conj(complex_of(a, b)) * complex_of(b, a)),
                lambda a, b: np.imag(np.conj(a + 1j * b) * (b + 1j * a)))


def _matrix_sample(rng):
    return (_u(rng, -2, 2, (*_shape(rng, 0, 1), *rng.integers(1, 5, size=2))),
            int(rng.integers(-2, 3)))


def _triangle_error(rng):
    return (np.ones(3), 0)


register(OpRecord("tril", lambda x, k: ops.tril(x, k=k), lambda x, k: np.tril(x, k),
                  sample=_matrix_sample, diff=(0,),
                  errors=[(_triangle_error, ShapeError)]))
register(OpRecord("triu", lambda x, k: ops.triu(x, k=k), lambda x, k: np.triu(x, k),
                  sample=_matrix_sample, diff=(0,),
                  errors=[(_triangle_error, ShapeError)]))


def _meshgrid_sample(rng):
    return (_u(rng, -2, 2, (int(rng.integers(1, 4)),)), _u(rng, -2, 2, (int(rng.integers(1, 4)),)),
            _u(rng, -2, 2, (2,)), "xy" if rng.random() < 0.5 else "ij")


register(OpRecord("meshgrid", lambda a, b, c, ix: ops.meshgrid(a, b, c, indexing=ix),
                  lambda a, b, c, ix: np.meshgrid(a, b, c, indexing=ix),
                  sample=_meshgrid_sample, diff=(0, 1, 2),
                  errors=[(lambda rng: (np.ones((2, 2)), np.ones(2), np.ones(2), "xy"),
                           ShapeError)]))


def _copysign_sample(rng):
    shape = _shape(rng)
    x = _u(rng, 0.2, 2, shape) * rng.choice([-1.0, 1.0], size=shape)
    return x, _u(rng, 0.2, 2, shape[-1:]) * rng.choice([-1.0, 1.0], size=shape[-1:])


register(OpRecord("copysign", ops.copysign, np.copysign, sample=_copysign_sample, diff=(0,),
                  errors=[(lambda rng: (np.arange(3), np.ones(3)), DTypeError)]))


def _remainder_sample(rng):
    shape = _shape(rng)
    b = _u(rng, 0.6, 2, shape) * rng.choice([-1.0, 1.0], size=shape)
    # x1 = b * (q + f) with f in [0.2, 0.8]: away from the jumps at multiples of b.
    q = rng.integers(-3, 4, size=shape)
    return b * (q + _u(rng, 0.2, 0.8, shape)), b


register(OpRecord("remainder", ops.remainder, np.remainder, sample=_remainder_sample,
                  errors=[(lambda rng: (np.ones((2, 3)), np.ones((4,))), ShapeError)]))


def _cumprod_sample(rng):
    shape = _shape(rng)
    x = _u(rng, 0.5, 1.5, shape) * rng.choice([-1.0, 1.0], size=shape)
    return x, int(rng.integers(0, len(shape))), bool(rng.integers(0, 2))


def _np_cumprod(x, axis, include_initial):
    out = np.cumprod(x, axis=axis)
    if include_initial:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        out = np.pad(out, pad, constant_values=1.0)
    return out


register(OpRecord("cumulative_prod", lambda x, a, i: ops.cumulative_prod(
    x, axis=a, include_initial=i), _np_cumprod, sample=_cumprod_sample, diff=(0,),
    errors=[(lambda rng: (np.ones((2, 3)), None, False), ShapeError)]))


def _diff_sample(rng):
    shape = (*_shape(rng, 0, 1), int(rng.integers(3, 5)))
    return (_u(rng, -2, 2, shape), _u(rng, -2, 2, (*shape[:-1], 1)), int(rng.integers(0, 3)))


register(OpRecord("diff", lambda x, p, n: ops.diff(x, n=n, prepend=p),
                  lambda x, p, n: np.diff(x, n=n, prepend=p), sample=_diff_sample,
                  diff=(0, 1), errors=[(lambda rng: (np.array(1.0), None, 1), ShapeError)]))
