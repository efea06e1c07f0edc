"""Options, dtypes, sizes and companion arrays are checked at each public op's boundary:
a bad one raises a PortagradError subclass (and the matching builtin) naming the op and
the argument, never a raw error from Python or the array library (one test per class of
check that the fuzzer of ``tests/fuzz`` found missing)."""

from __future__ import annotations

import math

import array_api_strict as xps
import numpy as np
import pytest

import portagrad as pg
from portagrad._errors import (
    AxisError,
    DTypeError,
    NamespaceMismatchError,
    PortagradTypeError,
    PortagradValueError,
    ShapeError,
    SizeError,
)
from portagrad.xp import from_numpy

ops = pg.ops
F = pg.nn.functional
X = np.array([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.0]])


def _raises(cls, where, fn, *args, **kwargs):
    with pytest.raises(cls) as e:
        fn(*args, **kwargs)
    assert isinstance(e.value, pg.PortagradError)
    assert where in str(e.value), str(e.value)
    return e.value


# -- real and integer options: float_arg / int_arg at the canonical op -------------------
@pytest.mark.parametrize("fn, kwargs, where", [
    (ops.softplus, {"beta": "bogus"}, "softplus(beta)"),
    (ops.softplus, {"threshold": (1, 2)}, "softplus(threshold)"),
    (ops.hardshrink, {"lambd": None}, "hardshrink(lambd)"),
    (ops.leaky_relu, {"negative_slope": "x"}, "leaky_relu(negative_slope)"),
    (ops.clipped_relu, {"z": "x"}, "clipped_relu(z)"),
    (ops.layer_norm, {"eps": (1, 2)}, "layer_norm(eps)"),
    (ops.dropout, {"ratio": "half", "train": True}, "dropout(ratio)"),
    (ops.var, {"correction": None}, "var(correction)"),
    (F.elu, {"alpha": None}, "elu(alpha)"),
    (F.softmax, {"dim": "bogus"}, "softmax(dim)"),
])
def test_a_bad_real_or_integer_option_names_the_op(fn, kwargs, where):
    _raises(PortagradTypeError, where, fn, X, **kwargs)


def test_integer_sizes_and_counts_are_ints():
    _raises(PortagradTypeError, "pixel_shuffle(upscale_factor)", ops.pixel_shuffle,
            np.zeros((1, 4, 2, 2)), None)
    _raises(PortagradTypeError, "diff(n)", ops.diff, np.arange(3.0), n=math.nan)
    _raises(PortagradTypeError, "tril(k)", ops.tril, np.ones((3, 3)), k="1")
    _raises(PortagradTypeError, "linalg.diagonal(offset)", ops.linalg.diagonal,
            np.ones((3, 3)), offset=None)
    _raises(PortagradTypeError, "tensordot(axes)", ops.tensordot, np.ones((2, 2)),
            np.ones((2, 2)), axes=None)
    _raises(PortagradTypeError, "nll_loss(ignore_index)", F.nll_loss,
            np.zeros((2, 3)), np.array([0, 1]), ignore_index=math.nan)
    # NumPy integers are ints, and a huge offset or k is simply past every diagonal.
    assert ops.tril(np.ones((2, 2)), k=np.int64(0)).array.tolist() == [[1, 0], [1, 1]]
    assert ops.linalg.diagonal(np.ones((2, 2)), offset=2 ** 63).shape == (0,)


def test_window_and_shape_tuples_take_ints_and_sequences_only():
    _raises(PortagradValueError, "fold(stride)", F.fold, np.ones((1, 4, 4)), (3, 3), 2,
            stride=None)
    _raises(PortagradValueError, "shift(ksize)", ops.shift, np.ones((1, 9, 3, 3)), ksize=1.5)
    _raises(PortagradTypeError, "transpose(axes)", ops.transpose, X, axes=np.int64(1))
    _raises(PortagradTypeError, "sum_to(shape)", ops.sum_to, X, (2, None))
    _raises(ShapeError, "sum_to", ops.sum_to, X, (4,))
    _raises(ShapeError, "sum_to(shape)", ops.sum_to, X, (1, 2, 3))
    _raises(PortagradTypeError, "broadcast_shapes(shapes)", ops.broadcast_shapes, 1.5, (2,))
    _raises(PortagradTypeError, "fft.fftn(axes)", ops.fft.fftn, X, axes=math.nan)
    assert ops.shift(np.ones((1, 9, 3, 3)), ksize=np.int64(3)).shape == (1, 9, 3, 3)
    assert ops.fft.fftshift(X, axes=np.int64(1)).shape == X.shape


# -- dtypes the op cannot take ------------------------------------------------------------
@pytest.mark.parametrize("fn, args", [
    (ops.floor, (X.astype(complex),)), (ops.signbit, (X.astype(complex),)),
    (ops.negative, (X > 0,)), (ops.sign, (X > 0,)), (ops.logical_not, (X,)),
    (ops.atan2, (X.astype(complex), X)), (ops.remainder, (X, X.astype(complex))),
    (ops.lgamma, (X.astype(complex),)), (ops.diff, (X > 0,)),
])
def test_an_unsupported_dtype_is_a_dtype_error(fn, args):
    with pytest.raises(DTypeError) as e:
        fn(*args)
    assert fn.__name__ in str(e.value)


def test_dtype_arguments_are_dtypes_of_the_library():
    _raises(DTypeError, "asarray(dtype)", ops.asarray, [1.0], dtype="bogus")
    _raises(DTypeError, "asarray(dtype)", ops.asarray, [1.0], dtype=-1)
    _raises(DTypeError, "fft.fftfreq(dtype)", ops.fft.fftfreq, 4, dtype=2 ** 63)
    assert ops.asarray([1.0], dtype="float32").array.dtype == np.float32


def test_a_device_the_library_does_not_know_names_the_op():
    _raises(PortagradValueError, "asarray", ops.asarray, [1.0], device="bogus")
    _raises(PortagradTypeError, "to_device(device)", ops.to_device, X, None)


# -- arrays of another library among the arguments ---------------------------------------
def test_companion_arrays_of_another_library_are_refused():
    idx = from_numpy(np.array([1, 0]), xp=xps)
    _raises(NamespaceMismatchError, "permutate", ops.permutate, np.array([1.0, 2.0]), idx)
    grid = np.zeros((1, 2, 2, 2))
    _raises(NamespaceMismatchError, "grid_sample", ops.grid_sample,
            from_numpy(np.ones((1, 1, 2, 2)), xp=xps), grid)
    _raises(NamespaceMismatchError, "polygamma", ops.polygamma, idx, np.array([1.0, 2.0]))


def test_an_array_argument_given_a_python_number_is_a_type_error():
    _raises(PortagradTypeError, "tensordot(x1)", ops.tensordot, 1.5, np.ones((2, 2)))
    _raises(PortagradTypeError, "swish(beta)", ops.swish, X, 1.5)
    _raises(PortagradTypeError, "zeta(q)", ops.zeta, np.array([2.0]), 1.5)
    _raises(PortagradTypeError, "cast", ops.cast, None, np.float32)


# -- sizes refused before any allocation, empty inputs the op cannot reduce ---------------
def test_sizes_that_cannot_fit_are_refused_up_front():
    _raises(SizeError, "fft.fft(s)", ops.fft.fft, np.ones(4), n=10 ** 18)
    _raises(SizeError, "local_response_norm(size)", ops.local_response_norm,
            np.ones((1, 2, 2, 2)), 10 ** 18)
    _raises(SizeError, "as_strided(shape)", ops.as_strided, np.ones(4), (10 ** 10, 10 ** 10),
            (0, 0))


def test_empty_inputs_give_shape_errors_or_the_empty_answer():
    _raises(ShapeError, "argmax(x)", ops.argmax, np.zeros((0,)))
    _raises(ShapeError, "fft.fft(x)", ops.fft.fft, np.zeros((0,)))
    _raises(ShapeError, "adaptive_max_pool(x)", ops.adaptive_max_pool, np.zeros((1, 1, 0)), 2)
    _raises(AxisError, "argmin(axis)", ops.argmin, X, axis=5)
    assert int(ops.linalg.matrix_rank(np.zeros((0, 3))).array) == 0
    y = ops.conv_transpose(np.zeros((0, 1, 2)), np.ones((1, 1, 2)))
    assert y.shape == (0, 1, 3)


# -- generators, states and callables -------------------------------------------------------
def test_generators_states_and_functions_are_checked():
    _raises(PortagradTypeError, "dropout(generator)", ops.dropout, X, train=True,
            generator="seed")
    _raises(PortagradTypeError, "batch_norm(state)", ops.batch_norm, X, state="s", train=True)
    _raises(PortagradTypeError, "triplet(distance)", ops.triplet, X, X, X, distance=3)
    _raises(ShapeError, "batch_norm(running_mean)", F.batch_norm, X, np.zeros(2), np.ones(3),
            training=True)


# -- NaN where the op places it ---------------------------------------------------------------
def test_upsampling_keeps_a_nan_at_the_position_it_is_placed():
    x = np.array([[[[1.0, math.nan], [3.0, 2.0]]]])
    y = ops.upsampling_2d(x, np.array([[[[0, 0], [1, 2]]]]), 2, 2, 0).array
    assert math.isnan(y[0, 0, 0, 2]) and np.isnan(y).sum() == 1
    assert math.isnan(float(ops.softplus(np.array([math.nan])).array[0]))


def test_bilinear_resize_reads_no_neighbour_of_zero_weight():
    # As PyTorch's interpolate: at exact grid points the NaN next door is not read.
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    x[0, 0, 1, 2] = math.nan
    y = ops.resize_images(x, (3, 1), mode="bilinear", align_corners=True).array
    assert y.ravel().tolist() == [0.0, 4.0, 8.0]
    y = ops.resize_images(x, (5, 7), mode="bilinear", align_corners=True).array
    assert np.isnan(y).sum() == 16  # as PyTorch: the 4 x 4 outputs that read it


def test_labels_and_lengths_options_are_checked():
    _raises(PortagradTypeError, "softmax_cross_entropy(ignore_label)", ops.softmax_cross_entropy,
            X, np.array([0, 1]), ignore_label="x")
    _raises(PortagradTypeError, "embedding(ignore_index)", ops.embedding, np.array([0]),
            np.ones((2, 2)), ignore_index=(1, 2))
    _raises(DTypeError, "precision(t)", ops.precision, X, np.array([0.0, math.nan]))
    _raises(ShapeError, "cumulative_prod(x)", ops.cumulative_prod, np.array(2.0), axis=0)
